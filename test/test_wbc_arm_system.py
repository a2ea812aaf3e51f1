"""arm7 follows a target pose on the wbc node's ~/target_pose over DDS.

The graph of config/arm7_wbc.yaml (`kinodyn up`): control_node with urdf/arm7_sim.urdf on SimulatedSystem in
lockstep, the wbc node in arm mode (operational space control with a null-space posture), state_publisher.
Judged on simulated time and message content: the end effector's position, from each joint state through
Pinocchio's forward kinematics (not kinodyn's), settles within 1 mm of the target and stays there; every joint
state is answered by a finite command stamped with it; a NaN target is refused with one log line and the node
goes on.
"""

from __future__ import annotations

import math
import shutil
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest
from geometry_msgs.msg import PoseStamped
from kinodyn_common.conversions import matrix_to_pose
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

from kinodyn_interfaces.msg import JointPDCommand
from test.conftest import REPO
from test.ros_listener import Listener

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

URDF = REPO / "urdf" / "arm7_sim.urdf"
GRAPH = REPO / "config" / "arm7_wbc.yaml"
READY = np.array([0.0, -0.25, 0.0, -0.75, 0.0, 0.5, 0.25]) * math.pi  # the URDF's initial positions
OFFSET = np.array([0.10, -0.05, 0.08])  # m, target = the ready pose's end effector moved by this
SETTLE = 1.5  # s of simulated time after the arm starts moving
HOLD = 1.0  # s of simulated time judged after settling
NS = 1_000_000_000


def stamp_ns(msg: JointState | JointPDCommand) -> int:
    return msg.header.stamp.sec * NS + msg.header.stamp.nanosec


def test_arm7_settles_within_a_millimetre_of_the_target(spawn: ProcessSpawner) -> None:
    kinodyn = shutil.which("kinodyn")
    assert kinodyn is not None, "the kinodyn console script is not on PATH: source scripts/env.sh"
    model = pin.buildModelFromUrdf(str(URDF))
    data = model.createData()
    ee = model.getFrameId("ee_link")

    def ee_pose(q: ArrayLike) -> pin.SE3:
        pin.framesForwardKinematics(model, data, np.asarray(q))
        return data.oMf[ee].copy()

    start = ee_pose(READY)
    target = np.eye(4)
    target[:3, :3], target[:3, 3] = start.rotation, start.translation + OFFSET
    client = Listener("wbc_arm_test")  # subscribed before the graph starts: discovery has time to match
    try:
        states: list[JointState] = []
        commands: dict[int, JointPDCommand] = {}
        node = client.node
        qos = QoSProfile(depth=1000)
        node.create_subscription(JointState, "/joint_states", states.append, qos)
        node.create_subscription(JointPDCommand, "/arm_pd_controller/commands",
                                 lambda m: commands.setdefault(stamp_ns(m), m), qos)
        publisher = node.create_publisher(PoseStamped, "/wbc/target_pose", QoSProfile(depth=10))
        launcher = spawn([kinodyn, "up", str(GRAPH.relative_to(REPO))], "launcher")
        good, bad = PoseStamped(), PoseStamped()
        good.header.frame_id = bad.header.frame_id = "base_link"
        good.pose = matrix_to_pose(target)
        bad.pose = matrix_to_pose(target)
        bad.pose.position.x = math.nan
        assert client.spin_until(lambda: states and stamp_ns(states[-1]) > 0.2 * NS, 90.0), \
            launcher.log_path.read_text()
        # the NaN target is sent once: only after the wbc's subscription matched, or it is lost (not rejected)
        assert client.spin_until(lambda: publisher.get_subscription_count() > 0, 60.0), \
            launcher.log_path.read_text()
        publisher.publish(bad)
        node.create_timer(0.2, lambda: publisher.publish(good))  # until the wbc has it (discovery)

        def moved_at() -> int | None:
            for s in states:
                if np.linalg.norm(ee_pose(s.position).translation - start.translation) > 5e-3:
                    return stamp_ns(s)
            return None

        assert client.spin_until(lambda: moved_at() is not None, 60.0), launcher.log_path.read_text()
        t_move = moved_at()
        assert client.spin_until(lambda: stamp_ns(states[-1]) > t_move + (SETTLE + HOLD) * NS, 120.0), \
            launcher.log_path.read_text()

        def unanswered() -> list[int]:  # judged states (below) whose command has not reached this process
            return [stamp_ns(s) for s in states if stamp_ns(s) not in commands
                    and t_move + SETTLE * NS <= stamp_ns(s) <= t_move + (SETTLE + HOLD) * NS]

        # the commands answering the judged states: the wbc's messages may reach this process after the
        # control node's later states
        assert client.spin_until(lambda: not unanswered(), 60.0), unanswered()[:10]
    finally:
        client.close()
    judged = [s for s in states if t_move + SETTLE * NS <= stamp_ns(s) <= t_move + (SETTLE + HOLD) * NS]
    assert len(judged) >= 0.9 * HOLD * 500, len(judged)  # 500 Hz of simulated time, nothing much lost
    errors = [np.linalg.norm(ee_pose(s.position).translation - target[:3, 3]) for s in judged]
    assert max(errors) < 1e-3, max(errors)
    rotation = [np.linalg.norm(pin.log3(target[:3, :3] @ ee_pose(s.position).rotation.T)) for s in judged]
    assert max(rotation) < 0.02, max(rotation)
    # lockstep: consecutive states 2 ms apart, each answered by a finite command stamped with it
    stamps = [stamp_ns(s) for s in judged]
    assert set(np.diff(stamps)) == {2_000_000}
    for s in judged:
        command = commands[stamp_ns(s)]
        assert list(command.name) == list(s.name)
        values = np.array([command.position, command.velocity, command.effort, command.kp, command.kd])
        assert np.isfinite(values).all()
        assert np.any(values[2] != 0.0)
    print(f"arm7 over DDS: {len(judged)} states from {SETTLE} s after it moved: position error max "
          f"{1e3 * max(errors):.3f} mm, orientation max {1e3 * max(rotation):.2f} mrad")
    spawn.stop_all()
    log = launcher.log_path.read_text()
    assert log.count("ignoring target_pose message") == 1, log
    assert "QP failed" not in log, log
    assert "controller failed" not in log, log
