"""control_node faults over DDS: unsafe controller output, physics failure, bad
parameters.

- kp = kd = 1.7e308 in a finite, in-limit JointPDCommand (the controller's max_kp/max_kd raised to let it
  through) makes the PD law compute -inf + inf: the manager deactivates leg_pd_controller with one error line,
  its joints get effort 0, and no joint_states message ever carries a non-finite effort (GenericSystem
  mirrors the commanded effort into the effort state, so joint_states shows what was commanded).
- A 1e8 N push (SimulatedSystem with max_push_force raised to 1e9, the default refuses it) breaks the physics:
  the component goes through on_error and the process exits with code 1 within a second of the failure (the
  failure's log stamp to the exit the test observes).
- A misspelled parameter (update_ratee) or an inactive_controllers name without a controller is one error
  line and exit code 1.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import Wrench
from kinodyn_control.testing import GENERIC_SYSTEM, QUADRUPED_JOINTS, QUADRUPED_STANCE, pd_command
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

from kinodyn_interfaces.msg import JointPDCommand
from kinodyn_interfaces.srv import ListControllers, Push
from test.conftest import REPO
from test.ros_listener import Listener

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable
    from pathlib import Path

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"
JOINTS = QUADRUPED_JOINTS
N = len(JOINTS)
HUGE = 1.7e308
VELOCITY_LIMIT = 8.0  # urdf/README.md: every joint of the quadruped
LOWER = [-0.8, -2.0, -2.6, -0.8, -2.0, 0.0] * 2  # position lower limits, LF LH RF RH x HAA HFE KFE


def start(
    spawn: ProcessSpawner, tmp_path: Path, urdf_text: str, name: str = "control_node", **params: object
) -> subprocess.Popen[bytes]:
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(urdf_text)
    node_params = {"update_rate": 500, "robot_description_file": str(urdf),
                   "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"}, **params}
    param_file = tmp_path / f"{name}.yaml"
    param_file.write_text(yaml.safe_dump({"controller_manager": {"ros__parameters": node_params}}))
    return spawn([str(CONTROL_NODE), "--ros-args", "--params-file", str(param_file)], name)


def log(proc: subprocess.Popen[bytes]) -> str:
    return proc.log_path.read_text()


def pd_controller(**extra: object) -> dict[str, object]:
    return {"type": "kinodyn_control/JointPDController", "joints": list(JOINTS), "watchdog_timeout": 5.0,
            **extra}


def test_pd_overflow_deactivates_the_controller_and_no_nan_effort_is_published(
    spawn: ProcessSpawner, tmp_path: Path,
) -> None:
    text = (REPO / "urdf" / "quadruped.urdf").read_text()
    assert f"<plugin>{GENERIC_SYSTEM}</plugin>" in text
    proc = start(spawn, tmp_path, text, leg_pd_controller=pd_controller(max_kp=1.79e308, max_kd=1.79e308))
    client = Listener("pd_overflow_test")
    try:
        states: list[JointState] = []
        client.node.create_subscription(JointState, "/joint_states", states.append, QoSProfile(depth=100))
        pub = client.node.create_publisher(JointPDCommand, "/leg_pd_controller/commands",
                                           QoSProfile(depth=10))
        zeros = [0.0] * N
        good = pd_command(JOINTS, QUADRUPED_STANCE, zeros, [3.0] * N, zeros, zeros)

        def send_until(msg: JointPDCommand, predicate: Callable[[], bool], timeout: float = 20.0) -> bool:
            def step() -> bool:
                pub.publish(msg)
                return predicate()
            return client.spin_until(step, timeout)

        # the node's start-up and discovery included (a loaded machine)
        assert send_until(good, lambda: states and list(states[-1].effort) == [3.0] * N, 120.0), log(proc)
        # finite and within the URDF limits; kp (lower - q) and kd (8 - 0) overflow to -inf and +inf
        overflow = pd_command(JOINTS, LOWER, [VELOCITY_LIMIT] * N, zeros, [HUGE] * N, [HUGE] * N)
        unsafe = "controller 'leg_pd_controller' wrote an unsafe command"
        assert send_until(overflow, lambda: unsafe in log(proc)), log(proc)
        start_zero = len(states)
        assert client.spin_until(lambda: any(list(m.effort) == zeros for m in states[start_zero:]), 10.0)
        first_zero = next(k for k in range(start_zero, len(states)) if list(states[k].effort) == zeros)
        client.spin_for(0.3)  # more messages after the switch to safe mode
        assert all(list(m.effort) == zeros for m in states[first_zero:])  # and it stays there
        assert all(np.isfinite(m.effort).all() and np.isfinite(m.position).all() for m in states)

        errors = [line for line in log(proc).splitlines() if "[ERROR]" in line]
        assert len(errors) == 1, errors
        assert unsafe in errors[0], errors
        assert "(non-finite)" in errors[0], errors
        assert "safe mode: effort, velocity and acceleration 0" in errors[0]
        assert "RuntimeWarning" not in log(proc)
        cli = client.node.create_client(ListControllers, "/controller_manager/list_controllers")
        assert cli.wait_for_service(timeout_sec=10.0)
        future = cli.call_async(ListControllers.Request())
        assert client.spin_until(future.done, 10.0)
        by_name = {c.name: c.state for c in future.result().controller}
        assert by_name == {"joint_state_broadcaster": "active", "leg_pd_controller": "inactive"}
        assert proc.poll() is None
    finally:
        client.close()


def test_physics_failure_ends_the_node_with_code_1_within_a_second(
    spawn: ProcessSpawner, tmp_path: Path,
) -> None:
    text = (REPO / "urdf" / "quadruped_sim.urdf").read_text()
    plugin = "<plugin>kinodyn_control/SimulatedSystem</plugin>"
    assert text.count(plugin) == 1
    text = text.replace(plugin, f'{plugin}<param name="max_push_force">1e9</param>')
    proc = start(spawn, tmp_path, text, leg_pd_controller=pd_controller())
    client = Listener("physics_failure_test")
    try:
        cli = client.node.create_client(Push, "/quadruped_system/push")
        assert cli.wait_for_service(timeout_sec=120.0), log(proc)  # the node's start-up included

        def push(force: float) -> Push.Response:
            request = Push.Request(link="base_link", wrench=Wrench(), duration=0.1)
            request.wrench.force.x = force
            future = cli.call_async(request)
            assert client.spin_until(future.done, 10.0)
            return future.result()

        refused = push(1e10)
        assert not refused.success
        assert "above max_push_force = 1e+09 N" in refused.message
        assert proc.poll() is None
        assert push(1e8).success
        proc.wait(timeout=30.0)
        exited = time.time()
        assert proc.returncode == 1, log(proc)
        text = log(proc)
        errors = [line for line in text.splitlines() if "[ERROR]" in line]
        assert len(errors) == 1, text  # one line: what failed, what was stopped, the exit
        failure = re.match(r"\[ERROR\] \[([0-9.]+)\] \[controller_manager\]: component 'quadruped_system' "
                           r"returned an error from write\(\): the physics failed at t = .*simulation "
                           r"diverged.*controller\(s\) joint_state_broadcaster, leg_pd_controller "
                           r"deactivated, their command interfaces in safe mode.*; exiting with code 1$",
                           errors[0])
        assert failure, text
        # the line is logged when the node starts to exit, at most a few ms after the failure
        assert exited - float(failure.group(1)) < 1.0, text
        assert "Traceback" not in text
    finally:
        client.close()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"update_ratee": 500}, "unknown parameter update_ratee for node controller_manager"),
        ({"leg_pd.typ": "kinodyn_control/JointPDController"}, "unknown parameter leg_pd.typ"),
        ({"inactive_controllers": ["leg_pd"]},
         "inactive_controllers names leg_pd, which have no <name>.type"),
    ],
    ids=["node_parameter", "controller_type", "inactive_controller"],
)
def test_misspelled_parameters_are_one_error_and_exit_code_1(
    spawn: ProcessSpawner, tmp_path: Path, params: dict[str, object], message: str,
) -> None:
    proc = start(spawn, tmp_path, (REPO / "urdf" / "quadruped.urdf").read_text(), **params)
    proc.wait(timeout=60.0)
    errors = [line for line in log(proc).splitlines() if "[ERROR]" in line]
    assert proc.returncode == 1, log(proc)
    assert len(errors) == 1, log(proc)
    assert message in errors[0], log(proc)
