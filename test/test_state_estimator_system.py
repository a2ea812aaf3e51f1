"""state_estimator as a process over DDS, fed by test/fixtures/estimator_stream.py.

The stream is the quadruped standing still (exact data) with a NaN and a 15 g accelerometer spike, a NaN
joint, a duplicated and an out-of-order message, a 60 ms IMU dropout, then the start again with its original
stamps (time jumps back). The node's odometry must equal, field by field, what EstimatorPipeline computes from
the same messages in this process (the estimate depends on the messages, not on their arrival), be the origin
at rest, carry the frames odom -> base_link, and the jump back must reset the filter with one log line.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import re
import subprocess
from typing import TYPE_CHECKING

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from kinodyn.sim.collision import collision_spheres
from kinodyn_common.finite import non_finite_field
from kinodyn_control.estimation.pipeline import EstimatorParameters, EstimatorPipeline
from kinodyn_ros.nodes.state_estimator import output_qos
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters

from kinodyn import Model
from test.conftest import PYTHON, REPO, wait_for  # pytest --import-mode=importlib names it so
from test.ros_listener import Listener
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from sensor_msgs.msg import Imu, JointState

    from kinodyn_interfaces.msg import ContactStates
    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

BIN = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros"
QUADRUPED = REPO / "urdf" / "quadruped.urdf"
STREAM = REPO / "test" / "fixtures" / "estimator_stream.py"
_spec = importlib.util.spec_from_file_location("estimator_stream", STREAM)
stream = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stream)


@pytest.fixture
def listener() -> Iterator[Listener]:
    node = Listener("state_estimator_test")
    try:
        yield node
    finally:
        node.close()


def start_estimator(spawn: ProcessSpawner, *params: str) -> subprocess.Popen[bytes]:
    args = [str(BIN / "state_estimator"), "--ros-args", "-p", f"robot_description_file:={QUADRUPED}",
            "-p", "qos_reliable:=true", "-p", "qos_depth:=2000",
            "-p", "use_sim_time:=true",  # the stream publishes /clock: its stamps are simulated time
            # a stalled test machine must not make a topic look silent (wall clock): the streams' own gaps
            # (a 60 ms IMU dropout) are far below both this and the default 0.25 s the offline run uses
            "-p", "stream_timeout:=5.0"]
    for param in params:
        args += ["-p", param]
    proc = spawn(args, "state_estimator")
    assert wait_for(lambda: "URDF from" in proc.log_path.read_text(), 120), proc.log_path.read_text()
    return proc


def offline_odometry(
    model: Model,
    messages: Sequence[tuple[str, Imu | JointState | ContactStates]],
    clocks: list[int] | None = None,
) -> list[Odometry]:
    """What the node publishes for ``messages`` received at ``clocks`` (simulated time, ns; None: the stamps
    are not bounded)."""
    pipeline = EstimatorPipeline(model, EstimatorParameters(), logging.getLogger("offline"),
                                 spheres=collision_spheres(QUADRUPED))  # as the node reads its URDF
    take = {
        "imu/data": pipeline.on_imu, "joint_states": pipeline.on_joint_state, "contacts": pipeline.on_contacts
    }
    for k, (topic, msg) in enumerate(messages):
        take[topic](msg, clock_ns=None if clocks is None else clocks[k])
    # no flush: like the live node, the last IMU messages wait for a contacts message past their stamp
    return [o.message for o in pipeline.drain() if o.kind == "odometry"]


def test_the_node_estimates_through_faults_like_the_pipeline_and_resets_once_on_a_jump_back(
    spawn: ProcessSpawner, listener: Listener
) -> None:
    model = Model.from_urdf(QUADRUPED, floating_base=True)
    expected = offline_odometry(model, stream.faulty(model) + stream.looped(model))
    # the loop's /clock jumps back 2 s: a node still catching up on the first pass when it takes the new clock
    # would find those last messages up to 2 s ahead of it; this test is about ordering, not stamp bounds
    node = start_estimator(spawn, "max_stamp_lead:=5.0")
    odometry: list[Odometry] = []
    tf: list[TFMessage] = []
    diagnostics: list[DiagnosticArray] = []
    # as deep as the node's outputs at qos_depth 2000: a node catching up after a stall publishes in a burst,
    # and a reliable KEEP_LAST history overwrites what a slow reader has not taken yet
    deep = output_qos(2000)
    readers = [listener.node.create_subscription(Odometry, "odometry/filtered", odometry.append, deep),
               listener.node.create_subscription(TFMessage, "/tf", tf.append, deep),
               listener.node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, deep)]
    # the node builds odometry and /tf only for a matched subscriber, and the stream starts once the node's
    # inputs are matched: these readers first
    assert listener.spin_until(lambda: all(r.get_publisher_count() > 0 for r in readers), 60), \
        node.log_path.read_text()
    publisher = spawn([PYTHON, str(STREAM), str(QUADRUPED)], "estimator_stream")
    # /tf too (one per estimate, compared with the odometry below) and the diagnostics
    done = listener.spin_until(
        lambda: len(odometry) >= len(expected) and len(tf) >= len(expected) and bool(diagnostics), 90)
    listener.spin_for(0.5)  # nothing more may come
    log = node.log_path.read_text()
    assert done, f"{len(odometry)} of {len(expected)} odometry\n{log}\n{publisher.log_path.read_text()}"
    assert node.poll() is None, log

    assert len(odometry) == len(expected)
    assert odometry == expected  # field by field, exactly
    assert all(non_finite_field(o) is None for o in odometry)
    assert {(o.header.frame_id, o.child_frame_id) for o in odometry} == {("odom", "base_link")}
    pose = np.array([[o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z,
                      o.twist.twist.linear.x, o.twist.twist.angular.z, o.pose.pose.orientation.w - 1.0]
                     for o in odometry])
    assert np.abs(pose).max() < 1e-9  # standing still at the odom origin through the spike and the NaNs
    assert [t.transforms[0].header for t in tf] == [o.header for o in odometry]
    assert [t.transforms[0].child_frame_id for t in tf] == ["base_link"] * len(tf)

    resets = [line for line in log.splitlines() if "estimator reset" in line]
    assert len(resets) == 1, log
    assert "time jumped back on imu from 101.997500000 s to 100.000000000 s" in resets[0]
    assert "Traceback" not in log, log
    assert "[ERROR]" not in log, log
    statuses = [d.status[0] for d in diagnostics]
    assert statuses
    assert all(s.name == "state_estimator: base state estimate" for s in statuses)
    levels = [s.level for s in statuses]
    assert DiagnosticStatus.OK in levels  # running; initialising
    assert DiagnosticStatus.WARN in levels
    values = [{kv.key: kv.value for kv in s.values} for s in statuses]
    assert values[-1]["resets"] == "1"
    assert values[-1]["filter"] == "eskf"
    assert any(math.isfinite(float(v["nis_per_dof_mean"])) for v in values)  # NIS of the stance updates


def set_parameter(listener: Listener, name: str, value: ParameterValue) -> tuple[bool, str]:
    client = listener.node.create_client(SetParameters, "/state_estimator/set_parameters")
    assert client.wait_for_service(timeout_sec=20)
    future = client.call_async(SetParameters.Request(parameters=[Parameter(name=name, value=value)]))
    assert listener.spin_until(future.done, 20)
    result = future.result().results[0]
    return result.successful, result.reason


def test_live_parameter_changes_are_validated_and_a_filter_change_resets_once(
    spawn: ProcessSpawner, listener: Listener,
) -> None:
    node = start_estimator(spawn)
    string = ParameterType.PARAMETER_STRING
    assert set_parameter(listener, "filter", ParameterValue(type=string, string_value="ukf")) == (
        False, "parameter filter must be one of eskf, invariant, got 'ukf'"
    )
    ok, reason = set_parameter(listener, "qos_depth", ParameterValue(type=ParameterType.PARAMETER_INTEGER,
                                                                    integer_value=5))
    assert not ok
    assert "start-up only" in reason
    ok, _ = set_parameter(listener, "use_sim_time", ParameterValue(type=ParameterType.PARAMETER_BOOL,
                                                                   bool_value=False))
    assert ok  # rclpy's own parameter is not the estimator's business
    assert set_parameter(listener, "filter", ParameterValue(type=string, string_value="invariant"))[0]
    assert set_parameter(listener, "odom_frame", ParameterValue(type=string, string_value="world"))[0]
    assert wait_for(lambda: "parameter(s) filter changed" in node.log_path.read_text(), 10)
    log = node.log_path.read_text()
    assert len([line for line in log.splitlines() if "estimator reset" in line]) == 1, log  # odom_frame: none
    assert node.poll() is None


@pytest.mark.parametrize(
    ("param", "message"),
    [("filter:=ukf", "parameter filter must be one of eskf, invariant, got 'ukf'"),
     ("imu_frame:=camera", "parameter imu_frame 'camera' is not a link of the URDF"),
     ("contact_source:=detection", "contact_source detection needs parameter feet")],
)
def test_a_bad_configuration_is_one_error_line_and_exit_code_1(
    spawn: ProcessSpawner, param: str, message: str,
) -> None:
    proc = spawn([str(BIN / "state_estimator"), "--ros-args", "-p", f"robot_description_file:={QUADRUPED}",
                  "-p", param], "state_estimator_bad")
    try:
        code = proc.wait(timeout=120)  # a Python node's start-up on a loaded machine included
    except subprocess.TimeoutExpired:
        pytest.fail(f"state_estimator kept running with {param}")
    log = proc.log_path.read_text()
    errors = [line for line in log.splitlines() if "[ERROR]" in line]
    assert code == 1, log
    assert len(errors) == 1, log
    assert message in errors[0], log
    assert "Traceback" not in log


def test_an_imu_message_stamped_ahead_is_refused_with_one_line_and_the_estimate_goes_on(
    spawn: ProcessSpawner, listener: Listener
) -> None:
    """2 s of standing on simulated time, one IMU message stamped 10 s ahead of the /clock it is published
    with: the node refuses it with one line naming topic, stamp and clock and publishes, field by field, what
    the pipeline computes from the stream with that message refused (every other IMU message estimated, no
    topic taken for silent, nothing held back until the clock reaches the bad stamp)."""
    model = Model.from_urdf(QUADRUPED, floating_base=True)
    messages = stream.ahead(model)
    expected = offline_odometry(model, messages, stream.clock_ns(messages))
    assert len(expected) == len(offline_odometry(model, stream.standing(model, 800))) - 1
    node = start_estimator(spawn)
    odometry: list[Odometry] = []
    diagnostics: list[DiagnosticArray] = []
    deep = output_qos(2000)
    readers = [listener.node.create_subscription(Odometry, "odometry/filtered", odometry.append, deep),
               listener.node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, deep)]
    # the node builds odometry only for a matched subscriber, and the stream starts once the node's inputs
    # are matched: these readers first
    assert listener.spin_until(lambda: all(r.get_publisher_count() > 0 for r in readers), 60), \
        node.log_path.read_text()
    publisher = spawn([PYTHON, str(STREAM), str(QUADRUPED), "ahead"], "estimator_stream")
    done = listener.spin_until(lambda: len(odometry) >= len(expected) and bool(diagnostics), 90)
    listener.spin_for(0.5)  # nothing more may come
    log = node.log_path.read_text()
    assert done, f"{len(odometry)} of {len(expected)} odometry\n{log}\n{publisher.log_path.read_text()}"
    assert node.poll() is None, log
    assert odometry == expected  # field by field, exactly
    refusals = [line for line in log.splitlines() if "refusing" in line]
    assert len(refusals) == 1, log
    # the node's clock: the /clock published with the message or later (a node behind the stream takes its
    # queued messages while its clock, keep-last 1, is the newest), plus the steady time since that clock last
    # moved (ClockReading: the stream ends at 102 s); the message is 10 s ahead of the one it replaces
    pattern = (r"refusing imu/data message stamped 111\.300000000 s: the node's clock reads "
               r"10[1-9]\.\d{9} s, the stamp is \d+\.\d{3} s ahead of it \(more than max_stamp_lead 0\.5 s\)")
    assert "[WARN]" in refusals[0], refusals
    assert re.search(pattern, refusals[0]), refusals
    assert "silent" not in log, log
    assert "Traceback" not in log, log
    assert "[ERROR]" not in log, log
    values = {kv.key: kv.value for kv in diagnostics[-1].status[0].values}
    assert values["dropped_ahead"] == "1"
    assert values["silent_streams"] == ""
