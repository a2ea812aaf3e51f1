"""The estimator and whole-body controllers give the nodes' outputs for the same inputs (docs/controllers.md).

The quadruped on mock hardware (urdf/quadruped.urdf, GenericSystem) with the joint state and IMU broadcasters,
``LeggedStateEstimator`` and ``WholeBodyController`` chained as in config/quadruped_rt.yaml. The test writes
the joint and IMU states of each cycle (the standing posture with small deterministic wobbles) and runs the
manager's cycle; the reference is the two nodes' cores (``EstimatorPipeline``, ``WbcCore`` over
``LeggedController``) fed, as in the separate-node graph, with the messages the broadcasters published and the
schedule the wbc answered the previous cycle with, and the command applied by JointPDController's law. The
base state each cycle, the effort of every joint and the exported stance must be the same numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.locomotion import LocomotionParameters
from kinodyn.sim.collision import collision_spheres
from kinodyn_common.input_bounds import JointBounds
from kinodyn_common.problem_log import DistinctProblemLog
from kinodyn_common.stamps import NS
from kinodyn_control.controllers.legged_state_estimator import LeggedStateEstimator, base_state_values
from kinodyn_control.controllers.limits import JointLimitArrays
from kinodyn_control.estimation.pipeline import EstimatorParameters, EstimatorPipeline
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, FakeContext, Harness
from kinodyn_control.wbc.core import WbcCore, WbcParameters
from kinodyn_control.wbc.legged import LeggedController, LeggedSettings
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.parameter import Parameter as RosParameter
from rclpy.serialization import deserialize_message

from kinodyn import Model
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:

    from kinodyn_control.controllers.whole_body_controller import WholeBodyController
    from kinodyn_control.hardware.description import RobotDescription
    from kinodyn_control.hardware.types import InterfaceTable
    from rcl_interfaces.msg import SetParametersResult
    from rclpy.context import Context

URDF = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]
DT = 0.002
ESTIMATOR = {"sensor_name": "imu_sensor", "contact_source": "schedule", "contact_controller": "wbc",
             "feet": FEET, "foot_random_walk": 0.02, "foot_radius": 0.0}
WBC = {"feet": FEET, "posture": QUADRUPED_STANCE, "locomotion_mode": "stand"}


class NodeContext(FakeContext):
    """A FakeContext that also hosts controller nodes (on a test context) and gives the URDF text."""

    def __init__(self, name: str, description: RobotDescription, records: list[tuple[str, str]], urdf: str,
                 ros: Context) -> None:
        super().__init__(name, description, records)
        self.urdf, self._ros = urdf, ros

    def create_node(self, name: str) -> Node:
        return Node(name, context=self._ros, use_global_arguments=False)

    def destroy_node(self, node: Node) -> None:
        node.destroy_node()


def wobble(k: int, scale: float) -> np.ndarray:
    """Small deterministic variations (no randomness: the run is reproducible)."""
    return scale * np.sin(0.37 * k + np.arange(12))


def chained_quadruped(ros_context: Context, estimator: dict | None = None) -> Harness:
    """The mock quadruped with the broadcasters and the two controllers active, chained (``estimator``: the
    estimator controller's parameters, default ESTIMATOR)."""
    urdf = URDF.read_text()
    h = Harness(urdf)
    h.manager.make_context = lambda name: NodeContext(name, h.description, h.records, urdf, ros_context)
    h.activate_hardware()
    h.manager.enter_wall_clock_loop(DT)
    h.contexts = {}
    for name, kind, params in (
        ("joint_state_broadcaster", "JointStateBroadcaster", {}),
        ("imu_sensor_broadcaster", "ImuSensorBroadcaster", {"sensor_name": "imu_sensor"}),
        ("state_estimator", "LeggedStateEstimator", estimator or ESTIMATOR),
        ("wbc", "WholeBodyController", WBC),
    ):
        h.manager.load(name, f"kinodyn_control/{kind}", params)
    for name in h.manager.controllers:
        h.manager.configure(name)
    ok, message = h.manager.switch(list(h.manager.controllers), [], strictness=2)
    assert ok, message
    return h


class Recorder:
    """Stands in for a controller's publisher: keeps what it is given, a message published as its bytes
    deserialized as ``msg_type`` (what a subscriber receives)."""

    def __init__(self, topic_name: str, msg_type: type | None = None) -> None:
        self.topic_name = topic_name
        self.msg_type = msg_type
        self.messages: list[object] = []

    def publish(self, msg: object) -> None:
        if isinstance(msg, bytes):
            assert self.msg_type is not None, f"{self.topic_name}: bytes published, no type to read them"
            msg = deserialize_message(msg, self.msg_type)
        self.messages.append(msg)


def _write_sensors(states: InterfaceTable, k: int) -> None:
    """Tick ``k``'s joint and IMU readings: the stance and gravity, wobbling."""
    for j, name in enumerate(QUADRUPED_JOINTS):
        states.values[states.index[f"{name}/position"]] = QUADRUPED_STANCE[j] + wobble(k, 1e-4)[j]
        states.values[states.index[f"{name}/velocity"]] = wobble(k + 5, 1e-3)[j]
    for i, axis in enumerate("xyz"):
        states.values[states.index[f"imu_sensor/angular_velocity.{axis}"]] = wobble(k, 1e-4)[i]
        states.values[states.index[f"imu_sensor/linear_acceleration.{axis}"]] = (
            (9.81 if axis == "z" else 0.0) + wobble(k + 3, 1e-3)[i])


@pytest.mark.parametrize("publish_rate", [0.0, 50.0])
def test_the_controllers_answer_as_the_nodes_do(ros_context: Context, publish_rate: float) -> None:
    """... and the estimator controller publishes the node's odometry and TF: every estimate (publish_rate
    0), or the first estimate and then those at each multiple of 1 / publish_rate of stamp time."""
    urdf = URDF.read_text()
    h = chained_quadruped(ros_context, {**ESTIMATOR, "publish_rate": publish_rate})
    entries = h.manager.controllers
    estimator = entries["state_estimator"].controller
    estimator._odometry, estimator._tf = Recorder("odometry/filtered", Odometry), Recorder("/tf", TFMessage)  # noqa: SLF001  (the publishers replaced by recorders)
    published: list = []  # the node's odometry and TF of each estimate the controller should publish
    joint_states = entries["joint_state_broadcaster"].controller.publisher.messages
    imu = entries["imu_sensor_broadcaster"].controller.publisher.messages
    exported_base = entries["state_estimator"].exported
    exported_stance = entries["wbc"].exported

    # the reference: the nodes' cores, fed as the node graph feeds them
    model = Model.from_urdf(urdf, floating_base=True)
    log = h.logger
    pipeline = EstimatorPipeline(model, EstimatorParameters.from_flat(
        {k: v for k, v in ESTIMATOR.items() if k not in ("sensor_name", "contact_controller")}), log,
        spheres=collision_spheres(urdf))
    legged = LeggedSettings(feet=tuple(FEET), posture=tuple(QUADRUPED_STANCE), locomotion_mode="stand")
    now = [0]
    core = WbcCore(model, LeggedController(model, legged, LocomotionParameters()), WbcParameters(),
                   JointBounds.from_model(model, 0.1, 1e6), DistinctProblemLog(log), log.info, 0.0,
                   clock=lambda: now[0])
    limits = JointLimitArrays(h.description, QUADRUPED_JOINTS)
    schedule = None
    states = h.resources.states
    estimates = controlled = 0
    for k in range(450):  # 0.9 s: the estimator initialises in 0.5 s, the wbc then stands on the QP
        t = k * DT
        now[0] = round(t * NS)
        _write_sensors(states, k)
        h.manager.cycle(t, DT)
        js, im = joint_states[-1], imu[-1]
        assert js.header.stamp == im.header.stamp

        pipeline.on_imu(im)
        if schedule is not None:
            pipeline.on_contacts(schedule)
        pipeline.on_joint_state(js)
        outputs = pipeline.drain()
        odometry = [o.message for o in outputs if o.kind == "odometry"]
        if odometry:
            stamp_ns = odometry[-1].header.stamp.sec * NS + odometry[-1].header.stamp.nanosec
            if not published or publish_rate == 0.0 or stamp_ns % round(NS / publish_rate) == 0:
                published.append((odometry[-1], [o.message for o in outputs if o.kind == "tf"][-1]))
            estimates += 1
            assert base_state_values(odometry[-1]) == exported_base.values.tolist()
            core.on_base_state(odometry[-1])
        else:
            assert np.isnan(exported_base.values).all()
        (answer,) = core.on_joint_state(js, 0)
        command = answer.command
        q, qdot = np.array(js.position), np.array(js.velocity)
        effort = (np.asarray(command.effort) + np.asarray(command.kp) * (np.asarray(command.position) - q)
                  + np.asarray(command.kd) * (np.asarray(command.velocity) - qdot))
        expected = limits.saturate_effort(effort, q, qdot)
        applied = np.array([h.command(f"{name}/effort") for name in QUADRUPED_JOINTS])
        assert applied.tolist() == expected.tolist(), k
        schedule = answer.contacts
        assert schedule is not None
        assert exported_stance.values.tolist() == [1.0 if c else 0.0 for c in schedule.in_contact]
        controlled += core.controlled_ticks > 0
    assert estimator._odometry.messages == [odometry for odometry, _ in published]  # noqa: SLF001  (its recorder)
    assert estimator._tf.messages == [tf for _, tf in published]  # noqa: SLF001  (its recorder)
    assert len(published) == (estimates if publish_rate == 0.0 else pytest.approx(estimates / 10, abs=2))
    assert estimates > 150  # the estimator ran (initialised after its 0.5 s standing window)
    assert controlled > 100  # and the wbc controlled on its estimate (not only held)
    assert h.messages("error") == []


def test_live_parameters_are_validated_as_the_nodes_do(ros_context: Context) -> None:
    """``ros2 param set`` on a controller's node: the node's validation, a refusal changes nothing."""
    h = chained_quadruped(ros_context)
    estimator = h.manager.controllers["state_estimator"].controller
    wbc = h.manager.controllers["wbc"].controller

    def set_(controller: LeggedStateEstimator | WholeBodyController, name: str, value: object
             ) -> SetParametersResult:
        (result,) = controller.ros.node.set_parameters([RosParameter(name, value=value)])
        return result

    refused = set_(estimator, "filter", "ukf")
    assert not refused.successful
    assert "filter must be one of eskf, invariant" in refused.reason
    assert estimator.pipeline.params.filter == "eskf"
    assert estimator.ros.node.get_parameter("filter").value == "eskf"
    refused = set_(estimator, "feet", ["LF_FOOT"])
    assert not refused.successful
    assert "apply at configuration only" in refused.reason
    assert not set_(estimator, "publish_rate", -1.0).successful
    assert set_(estimator, "filter", "invariant").successful
    assert estimator.pipeline.params.filter == "invariant"
    assert set_(estimator, "publish_rate", 50.0).successful
    assert estimator.publishing.rate == 50.0

    refused = set_(wbc, "joint_kp", -1.0)
    assert not refused.successful
    assert "joint_kp must be a finite number >= 0" in refused.reason
    assert wbc.controller.settings.joint_kp == 0.0
    assert not set_(wbc, "posture", [0.0] * 12).successful
    assert set_(wbc, "locomotion_mode", "trot").successful
    assert wbc.controller.settings.locomotion_mode == "trot"
    assert set_(wbc, "damping_kd", 3.0).successful
    assert wbc.core.params.damping_kd == 3.0


def test_tf_at_its_own_rate(ros_context: Context) -> None:
    """``tf_rate`` 50 Hz with odometry/filtered at every estimate: /tf at the first estimate and then at each
    multiple of 20 ms of stamp time, each the odometry message's pose of the same stamp; ``tf_rate`` is
    validated live as ``publish_rate`` is."""
    h = chained_quadruped(ros_context, {**ESTIMATOR, "tf_rate": 50.0})
    estimator = h.manager.controllers["state_estimator"].controller
    assert isinstance(estimator, LeggedStateEstimator)
    odometry_out, tf_out = Recorder("odometry/filtered", Odometry), Recorder("/tf", TFMessage)
    estimator._odometry, estimator._tf = odometry_out, tf_out  # noqa: SLF001  (the publishers replaced by recorders)
    states = h.resources.states
    for k in range(400):
        for j, name in enumerate(QUADRUPED_JOINTS):
            states.values[states.index[f"{name}/position"]] = QUADRUPED_STANCE[j] + wobble(k, 1e-4)[j]
        states.values[states.index["imu_sensor/linear_acceleration.z"]] = 9.81 + wobble(k, 1e-3)[0]
        h.manager.cycle(k * DT, DT)
    odometry = {m.header.stamp.sec * NS + m.header.stamp.nanosec: m for m in odometry_out.messages}
    tf = [m.transforms[0] for m in tf_out.messages]
    stamps = [t.header.stamp.sec * NS + t.header.stamp.nanosec for t in tf]
    assert len(odometry) > 100
    assert stamps[0] == min(odometry)
    assert stamps[1] % (NS // 50) == 0
    assert np.all(np.diff(stamps[1:]) == NS // 50)
    for stamp, transform in zip(stamps, tf, strict=True):
        pose = odometry[stamp].pose.pose
        t = transform.transform.translation
        assert transform.header.frame_id == "odom"
        assert transform.child_frame_id == "base_link"
        assert (t.x, t.y, t.z) == (pose.position.x, pose.position.y, pose.position.z)
        assert transform.transform.rotation == pose.orientation
    (refused,) = estimator.ros.node.set_parameters([RosParameter("tf_rate", value=-1.0)])
    assert not refused.successful
    assert "tf_rate must be a finite number >= 0" in refused.reason
    assert estimator.tf_publishing.rate == 50.0
