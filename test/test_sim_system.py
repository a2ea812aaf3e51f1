"""control_node with the quadruped on kinodyn_control/SimulatedSystem over DDS.

The demo graph (config/quadruped_sim.yaml, urdf/quadruped_sim.urdf): an external process (this test) sends
joint PD commands and reads /joint_states, the IMU, the simulator's ground-truth odometry, contacts and
/clock; after a reset under PD control the quadruped stands, and a push moves it. urdf/quadruped_sim.urdf
must stay urdf/quadruped.urdf with only the <hardware> block changed (checked here).

Lockstep: an external closed-loop policy (test/lockstep_policy.py, a separate process) drives the
simulated quadruped with control_node in lockstep, once answering at once and once after random delays of
0-20 ms; the joint states of the first 300 steps are bit-identical across the two runs, and simulated time
advances exactly one control period (= one physics step) per step.

MuJoCo backend: the same graph with ``<param name="backend">mujoco</param>`` added, in
lockstep with the policy process: simulated time advances one period per answered state, odometry and contacts
are published, a push moves the base that way and a reset brings it back to the initial standing pose.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import Wrench
from kinodyn_control.testing import (
    QUADRUPED_JOINTS,
    QUADRUPED_STANCE,
    QUADRUPED_STANDING_HEIGHT,
    pd_command,
)
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from kinodyn_interfaces.msg import ContactStates, JointPDCommand
from kinodyn_interfaces.srv import Push
from test.conftest import PYTHON, REPO
from test.ros_listener import Listener

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

    from rclpy.type_support import Srv

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

Req = TypeVar("Req")  # a service request

CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"
SIM_URDF = REPO / "urdf" / "quadruped_sim.urdf"
JOINTS = QUADRUPED_JOINTS
Q_STAND = QUADRUPED_STANCE
HEIGHT = QUADRUPED_STANDING_HEIGHT
KP, KD = 800.0, 10.0
LOCKSTEP_STEPS = 300
POLICY = REPO / "test" / "lockstep_policy.py"
PERIOD_NS = 2_000_000  # 500 Hz control = one 2 ms physics step (urdf/quadruped_sim.urdf dt)


def test_sim_urdf_differs_from_the_robot_only_in_the_hardware_block() -> None:
    def strip(text: str) -> str:
        text = re.sub(r"<hardware>.*?</hardware>", "", text, flags=re.S)
        text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
        return "\n".join(line for line in text.splitlines() if line.strip())

    assert strip(SIM_URDF.read_text()) == strip((REPO / "urdf" / "quadruped.urdf").read_text())
    assert "kinodyn_control/SimulatedSystem" in SIM_URDF.read_text()


def demo_params() -> dict:
    graph = yaml.safe_load((REPO / "config" / "quadruped_sim.yaml").read_text())
    params = dict(graph["nodes"][0]["parameters"])
    params["robot_description_file"] = str(SIM_URDF)
    return params


def start_control_node(
    spawn: ProcessSpawner, tmp_path: Path, params: dict, name: str,
) -> subprocess.Popen[bytes]:
    param_file = tmp_path / f"{name}.yaml"
    param_file.write_text(yaml.safe_dump({"controller_manager": {"ros__parameters": params}}))
    # named as the launcher names it: a process-wide __node remap must not rename the simulator's own node
    return spawn([str(CONTROL_NODE), "--ros-args", "-r", "__node:=controller_manager", "--params-file",
                  str(param_file)], name)


@pytest.fixture
def control_node(spawn: ProcessSpawner, tmp_path: Path) -> subprocess.Popen[bytes]:
    params = demo_params()
    # This test is about standing and pushing; the watchdog has its own tests (test_control_node_system.py).
    # This test process also takes ~2500 messages/s and can stall for over a second on a loaded 2-core
    # machine: that must not trip the watchdog and drop the robot.
    params["leg_pd_controller"] = {**params["leg_pd_controller"], "watchdog_timeout": 5.0}
    return start_control_node(spawn, tmp_path, params, "control_node")


class Session:
    def __init__(self, client: Listener) -> None:
        self.client = client
        qos = QoSProfile(depth=50)
        self.states: list[JointState] = []
        self.imu: list[Imu] = []
        self.odom: list[Odometry] = []
        self.contacts: list[ContactStates] = []
        self.clock: list[Clock] = []
        node = client.node
        node.create_subscription(JointState, "/joint_states", self.states.append, qos)
        node.create_subscription(Imu, "/imu_sensor_broadcaster/imu", self.imu.append, qos)
        node.create_subscription(Odometry, "/quadruped_system/odometry", self.odom.append, qos)
        node.create_subscription(ContactStates, "/quadruped_system/contacts", self.contacts.append, qos)
        node.create_subscription(Clock, "/clock", self.clock.append, qos)
        self.pub = node.create_publisher(JointPDCommand, "/leg_pd_controller/commands", QoSProfile(depth=10))
        msg = pd_command(JOINTS, Q_STAND, [0.0] * 12, [0.0] * 12, [KP] * 12, [KD] * 12)
        node.create_timer(0.01, lambda: self.pub.publish(msg))  # 100 Hz, well within the watchdog

    def call(self, srv_type: type[Srv], name: str, request: Req) -> Any:  # noqa: ANN401  (rclpy types no response per service type)
        return call(self.client, srv_type, name, request)


def call(client: Listener, srv_type: type[Srv], name: str, request: Req) -> Any:  # noqa: ANN401  (as above)
    cli = client.node.create_client(srv_type, name)
    assert cli.wait_for_service(timeout_sec=20.0), f"service {name} not offered"
    future = cli.call_async(request)
    assert client.spin_until(future.done, 10.0)
    return future.result()


def test_quadruped_stands_under_pd_then_a_push_moves_it(control_node: subprocess.Popen[bytes]) -> None:
    client = Listener("sim_system_test")
    try:
        s = Session(client)
        # every stream read below (/clock too: sim_time), the node's start-up included (a loaded machine)
        assert client.spin_until(lambda: s.states and s.imu and s.odom and s.contacts and s.clock, 120.0), \
            control_node.log_path.read_text()
        assert list(s.states[-1].name) == JOINTS
        # ground truth in the simulator's own frame, never the estimator's `odom` (REP-105, docs/simulator.md)
        assert (s.odom[-1].header.frame_id, s.odom[-1].child_frame_id) == ("world", "base_link")
        assert s.contacts[-1].header.frame_id == "world"
        # PD commands flow (efforts become non-zero), then restart the simulation from standing under PD
        assert client.spin_until(lambda: any(abs(e) > 1.0 for e in s.states[-1].effort), 10.0)
        before_reset = len(s.odom)
        assert s.call(Trigger, "/quadruped_system/reset", Trigger.Request()).success
        # restarted from standing: some odometry message after the reset has the standing height (the next
        # ones sink into the soft contact, and a loaded test process takes messages in bursts)
        assert client.spin_until(
            lambda: any(abs(m.pose.pose.position.z - HEIGHT) < 1e-4 for m in s.odom[before_reset:]), 10.0)
        start = len(s.odom)
        def sim_time() -> float:
            return s.clock[-1].clock.sec + 1e-9 * s.clock[-1].clock.nanosec

        t0 = sim_time()
        assert client.spin_until(lambda: sim_time() > t0 + 3.0, 60.0)  # 3 s of simulated time
        heights = [m.pose.pose.position.z for m in s.odom[start:]]
        assert len(heights) > 100
        assert min(heights) > HEIGHT - 0.03, (min(heights), max(heights))
        assert max(heights) < HEIGHT + 0.01, (min(heights), max(heights))
        assert all(s.contacts[-1].in_contact)
        assert list(s.contacts[-1].names) == [f"{leg}_FOOT" for leg in
                                                                                ("LF", "LH", "RF", "RH")]
        assert sum(f.z for f in s.contacts[-1].forces) == pytest.approx(36.0 * 9.81, rel=0.05)
        acc = s.imu[-1].linear_acceleration
        assert acc.z == pytest.approx(9.81, abs=0.3)
        assert abs(acc.x) < 0.5
        assert abs(acc.y) < 0.5
        assert s.imu[-1].orientation.w == pytest.approx(1.0, abs=1e-3)
        position = [s.states[-1].position[JOINTS.index(j)] for j in JOINTS]
        assert max(abs(a - b) for a, b in zip(position, Q_STAND, strict=True)) < 0.1

        # a push along x: the base moves forwards; an unknown link is refused
        push = Push.Request(link="base_link", wrench=Wrench(), duration=0.1)
        push.wrench.force.x = 300.0
        assert s.call(Push, "/quadruped_system/push", push).success
        assert client.spin_until(lambda: s.odom[-1].twist.twist.linear.x > 0.2, 10.0)
        bad = Push.Request(link="no_such_link", wrench=Wrench(), duration=0.1)
        result = s.call(Push, "/quadruped_system/push", bad)
        assert not result.success
        assert "no_such_link" in result.message
    finally:
        client.close()


def lockstep_run(spawn: ProcessSpawner, tmp_path: Path, name: str, max_delay: float) -> dict:
    """control_node in lockstep with the policy process answering after up to ``max_delay`` s; the policy's
    record of the first LOCKSTEP_STEPS steps."""
    params = demo_params()
    params.update(lockstep=True, lockstep_timeout=0.5)
    node = start_control_node(spawn, tmp_path, params, f"control_node_{name}")
    out = tmp_path / f"{name}.npz"
    args = [PYTHON, str(POLICY), str(out), str(LOCKSTEP_STEPS), str(max_delay), "7"]
    policy = spawn(args, f"policy_{name}")
    try:
        assert policy.wait(timeout=120) == 0, policy.log_path.read_text() + node.log_path.read_text()
    finally:
        spawn.stop_all()
    with np.load(out) as record:
        run = {key: record[key] for key in record.files}
    run["log"] = node.log_path.read_text()
    return run


def test_lockstep_runs_are_bit_identical_whatever_the_answer_delay(
    spawn: ProcessSpawner, tmp_path: Path,
) -> None:
    prompt = lockstep_run(spawn, tmp_path, "prompt", 0.0)
    delayed = lockstep_run(spawn, tmp_path, "delayed", 0.02)
    assert delayed["slept"] > 1.0  # ~3 s of random delays in total: the wall-clock timing really differed
    for run in (prompt, delayed):
        assert "lockstep, 0.002 s of simulated time per cycle" in run["log"]
        # simulated time: state k stamped k * 2 ms, /clock after step k at (k + 1) * 2 ms, nothing skipped
        np.testing.assert_array_equal(run["stamps"], PERIOD_NS * np.arange(LOCKSTEP_STEPS))
        np.testing.assert_array_equal(run["clock"], PERIOD_NS * np.arange(1, LOCKSTEP_STEPS + 1))
        assert run["duplicates_differ"] == 0
        assert "switching to the safe command" not in run["log"]  # the watchdog runs on simulated time
    # the closed loop really moved the robot: a trajectory, not a constant
    positions = prompt["states"][:, 0]
    assert np.ptp(positions, axis=0).max() > 1e-3
    assert np.abs(prompt["states"][1:, 2]).max() > 1.0
    assert np.array_equal(prompt["states"], delayed["states"])  # bit-identical positions, velocities, efforts


MUJOCO_STEPS = 2500  # 5 s of simulated time


def test_control_node_on_the_mujoco_backend_in_lockstep(spawn: ProcessSpawner, tmp_path: Path) -> None:
    urdf = tmp_path / "quadruped_mujoco.urdf"
    plugin = "<plugin>kinodyn_control/SimulatedSystem</plugin>"
    text = SIM_URDF.read_text()
    assert text.count(plugin) == 1
    urdf.write_text(text.replace(plugin, plugin + '<param name="backend">mujoco</param>'))
    params = demo_params()
    params.update(robot_description_file=str(urdf), lockstep=True, lockstep_timeout=0.5)
    node = start_control_node(spawn, tmp_path, params, "control_node_mujoco")
    out = tmp_path / "mujoco.npz"
    client = Listener("mujoco_sim_test")
    odom: list[Odometry] = []
    contacts: list[ContactStates] = []
    try:
        qos = QoSProfile(depth=50)
        readers = [client.node.create_subscription(Odometry, "/quadruped_system/odometry", odom.append, qos),
                   client.node.create_subscription(ContactStates, "/quadruped_system/contacts",
                                                   contacts.append, qos)]
        # the ground truth goes out only while subscribed, and the lockstep loop runs as fast as the policy
        # answers: the policy starts once this listener has matched both publishers (the loop waits for it;
        # a publisher in the graph is not yet one matched to this listener's readers)
        assert client.spin_until(lambda: all(r.get_publisher_count() > 0 for r in readers), 120.0), \
            node.log_path.read_text()
        client.spin_for(0.5)
        policy = spawn([PYTHON, str(POLICY), str(out), str(MUJOCO_STEPS), "0", "7"], "policy_mujoco")
        assert client.spin_until(lambda: odom and contacts, 60.0), node.log_path.read_text()
        push = Push.Request(link="base_link", wrench=Wrench(), duration=0.1)
        push.wrench.force.y = 150.0
        start = len(odom)
        assert call(client, Push, "/quadruped_system/push", push).success
        assert client.spin_until(lambda: any(m.twist.twist.linear.y > 0.05 for m in odom[start:]), 60.0)
        before_reset = len(odom)
        assert call(client, Trigger, "/quadruped_system/reset", Trigger.Request()).success

        def standing_again() -> bool:  # the pushed base back at the initial pose
            return any(abs(m.pose.pose.position.z - HEIGHT) < 1e-4 and abs(m.pose.pose.position.y) < 1e-4
                       for m in odom[before_reset:])

        assert client.spin_until(standing_again, 60.0), [m.pose.pose.position for m in odom[before_reset:]]
        assert policy.wait(timeout=180) == 0, policy.log_path.read_text() + node.log_path.read_text()
        client.spin_for(0.5)
    finally:
        client.close()
        spawn.stop_all()
    log = node.log_path.read_text()
    assert "lockstep, 0.002 s of simulated time per cycle" in log
    with np.load(out) as record:
        np.testing.assert_array_equal(record["stamps"], PERIOD_NS * np.arange(MUJOCO_STEPS))
        np.testing.assert_array_equal(record["clock"], PERIOD_NS * np.arange(1, MUJOCO_STEPS + 1))
        assert record["duplicates_differ"] == 0
    last = contacts[-1]
    assert list(last.names) == [f"{leg}_FOOT" for leg in ("LF", "LH", "RF", "RH")]
    assert all(last.in_contact)
    assert sum(f.z for f in last.forces) == pytest.approx(36.0 * 9.81, rel=0.05)
    assert all(-0.01 < p.z < 0.0 for p in last.points)
    assert abs(odom[-1].pose.pose.position.z - HEIGHT) < 0.03
