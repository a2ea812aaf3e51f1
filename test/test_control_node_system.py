"""control_node with the quadruped over DDS, on GenericSystem and on SimulatedSystem (issue 5, point 7).

Each test runs twice: with urdf/quadruped.urdf as shipped (kinodyn_control/GenericSystem) and with the same
text where only the plugin name is kinodyn_control/SimulatedSystem. An external process (this test) sends
JointPDCommand and reads /joint_states and the IMU.

What holds for both plugins: in cycle k the controller computes ``tau_k = clip(effort_ff + kp (position_des -
q_k) + kd (velocity_des - qdot_k), ±80)`` from the state it published in that cycle, and the effort state read
in cycle k+1 is ``tau_k`` (GenericSystem mirrors the command into the effort state in its next ``read``; the
simulator reports the torque it applied). So for two consecutive joint_states messages the second one's
efforts are the PD law evaluated at the first one's positions and velocities: ``pd_law_pairs`` counts the
pairs for which that holds to 1e-9 (with GenericSystem positions and velocities stay at their initial values,
urdf/README.md (c), so every pair holds; with the simulator the robot moves and a pair holds only if no
message was lost in between). Where the physics differ the test body says so: GenericSystem's IMU is the
URDF's initial values, the simulator's measures gravity; the simulated robot falls while no command has
arrived yet, so it is reset to its standing start once commands flow.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator

import numpy as np
import pytest
import yaml
from kinodyn_control.testing import (
    GENERIC_SYSTEM,
    QUADRUPED_JOINTS,
    QUADRUPED_STANCE,
    SIMULATED_SYSTEM,
    pd_command,
)
from rclpy.qos import QoSProfile
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from kinodyn_interfaces.msg import JointPDCommand
from kinodyn_interfaces.srv import ListControllers, SwitchController
from test.conftest import REPO, wait_for
from test.ros_listener import Listener

pytestmark = pytest.mark.system

CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"
PLUGINS = [GENERIC_SYSTEM, SIMULATED_SYSTEM]
UPDATE_RATE = 500
TIMEOUT = 0.1  # watchdog_timeout [s]
SAFE_KD = 2.0
EFFORT_LIMIT = 80.0  # urdf/README.md: every joint of the quadruped
JOINTS = QUADRUPED_JOINTS
Q0 = QUADRUPED_STANCE
KP, KD = 800.0, 10.0
ZEROS = [0.0] * 12
IMU_INITIAL = {"orientation.w": 1.0, "linear_acceleration.z": 9.81, "angular_velocity.x": 0.25}


def quadruped_urdf_texts() -> tuple[str, str]:
    """(GenericSystem, SimulatedSystem) URDF texts: urdf/quadruped.urdf with the IMU's initial values set to
    IMU_INITIAL (GenericSystem keeps them, so the test sees values that can only have come through the
    hardware interfaces), and the same text with only the plugin name replaced."""
    text = (REPO / "urdf" / "quadruped.urdf").read_text()
    for key, value in IMU_INITIAL.items():
        interface = rf'<state_interface name="{re.escape(key)}">'
        pattern = rf'({interface}\s*<param name="initial_value">)[^<]*(</param>)'
        text, count = re.subn(pattern, rf"\g<1>{value}\g<2>", text)
        assert count == 1, f"urdf/quadruped.urdf has no initial_value on IMU state interface {key}"
    return text, text.replace(GENERIC_SYSTEM, SIMULATED_SYSTEM)


def test_the_two_urdfs_differ_only_in_the_plugin_name() -> None:
    generic, simulated = quadruped_urdf_texts()
    assert generic.count(GENERIC_SYSTEM) == 1 and SIMULATED_SYSTEM not in generic
    assert f"<plugin>{GENERIC_SYSTEM}</plugin>" in generic
    assert simulated.replace(SIMULATED_SYSTEM, GENERIC_SYSTEM) == generic


@pytest.fixture(params=PLUGINS, ids=["generic", "simulated"])
def plugin(request) -> str:
    return request.param


@pytest.fixture
def control_node(spawn, tmp_path, plugin: str):
    urdf = tmp_path / "quadruped.urdf"
    urdf.write_text(quadruped_urdf_texts()[PLUGINS.index(plugin)])
    params = {
        "update_rate": UPDATE_RATE,
        "robot_description_file": str(urdf),
        "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"},
        "imu_sensor_broadcaster": {
            "type": "kinodyn_control/ImuSensorBroadcaster",
            "sensor_name": "imu_sensor",
        },
        "leg_pd_controller": {
            "type": "kinodyn_control/JointPDController",
            "joints": list(JOINTS),
            "watchdog_timeout": TIMEOUT,
            "safe_mode": "zero_effort",
            "safe_kd": SAFE_KD,
        },
        "leg_effort_controller": {
            "type": "kinodyn_control/ForwardCommandController",
            "joints": list(JOINTS),
            "interface_name": "effort",
        },
        "inactive_controllers": ["leg_effort_controller"],
    }
    param_file = tmp_path / "params.yaml"
    param_file.write_text(yaml.safe_dump({"controller_manager": {"ros__parameters": params}}))
    return spawn([str(CONTROL_NODE), "--ros-args", "--params-file", str(param_file)], "control_node")


@pytest.fixture
def client() -> Iterator[Listener]:
    node = Listener("control_node_test")
    try:
        yield node
    finally:
        node.close()


def log_text(proc) -> str:
    return proc.log_path.read_text()


def pd(position, effort, kp=KP, kd=KD, velocity=0.0, names=JOINTS) -> JointPDCommand:
    """A JointPDCommand; scalar gains and velocity apply to every joint."""
    n = len(names)
    return pd_command(names, position, np.broadcast_to(velocity, n), effort, np.broadcast_to(kp, n),
                      np.broadcast_to(kd, n))


def pd_law(cmd: JointPDCommand, state: JointState) -> np.ndarray:
    """The JointPDController's effort for ``state`` (joint_states order), saturated at the effort limit."""
    order = [list(cmd.name).index(j) for j in state.name]
    position, velocity, effort, kp, kd = (np.array(getattr(cmd, f))[order] for f in
                                          ("position", "velocity", "effort", "kp", "kd"))
    tau = effort + kp * (position - np.array(state.position)) + kd * (velocity - np.array(state.velocity))
    return np.clip(tau, -EFFORT_LIMIT, EFFORT_LIMIT)


def pd_law_pairs(states: list[JointState], cmd: JointPDCommand, joints: slice = slice(None)) -> int:
    """Consecutive message pairs whose second efforts are the PD law of ``cmd`` at the first's state."""
    return sum(
        bool(np.all(np.abs(np.array(b.effort)[joints] - pd_law(cmd, a)[joints]) < 1e-9))
        for a, b in itertools.pairwise(states)
    )


class Session:
    def __init__(self, client: Listener, plugin: str) -> None:
        self.client, self.plugin = client, plugin
        self.states: list[JointState] = []
        self.imu: list[Imu] = []
        client.node.create_subscription(JointState, "/joint_states", self.states.append, QoSProfile(depth=50))
        client.node.create_subscription(
            Imu, "/imu_sensor_broadcaster/imu", self.imu.append, QoSProfile(depth=50)
        )
        self.pub = client.node.create_publisher(
            JointPDCommand, "/leg_pd_controller/commands", QoSProfile(depth=10)
        )

    def send_until(self, msg: JointPDCommand, predicate, timeout: float = 10.0) -> bool:
        def step() -> bool:
            self.pub.publish(msg)
            return predicate()

        return self.client.spin_until(step, timeout)

    def send_for(self, msg: JointPDCommand, seconds: float) -> None:
        self.send_until(msg, lambda: False, seconds)

    def establish(self, cmd: JointPDCommand) -> None:
        """Send ``cmd`` until the PD law holds on 10 message pairs; the simulated robot, which fell while it
        had no command, is first reset to its standing start (a fall can leave joints on their limits, where
        the controller rightly withholds torque)."""
        if self.plugin == SIMULATED_SYSTEM:
            assert self.send_until(cmd, lambda: self.states and any(self.states[-1].effort))
            cli = self.client.node.create_client(Trigger, "/quadruped_system/reset")
            assert cli.wait_for_service(timeout_sec=10.0)
            future = cli.call_async(Trigger.Request())
            assert self.send_until(cmd, future.done) and future.result().success
        start = len(self.states)
        assert self.send_until(cmd, lambda: pd_law_pairs(self.states[start:], cmd) >= 10), (
            self.states[-1] if self.states else "no joint states")


def test_pd_commands_joint_states_and_imu(control_node, client: Listener, plugin: str) -> None:
    s = Session(client, plugin)
    assert client.spin_until(lambda: s.states and s.imu, 30.0), log_text(control_node)
    first, imu = s.states[-1], s.imu[-1]
    assert list(first.name) == JOINTS and imu.header.frame_id == "imu_link"
    if plugin == GENERIC_SYSTEM:  # mock hardware: the URDF's initial values, and the command mirrored
        assert (list(first.position), list(first.velocity), list(first.effort)) == (Q0, ZEROS, ZEROS)
        assert (imu.orientation.w, imu.linear_acceleration.z, imu.angular_velocity.x) == (1.0, 9.81, 0.25)
        assert (imu.orientation.x, imu.angular_velocity.y, imu.linear_acceleration.x) == (0.0, 0.0, 0.0)

    desired = [q + (0.05 if j.endswith("HFE") else 0.0) for q, j in zip(Q0, JOINTS, strict=True)]
    ff = [0.5 * k for k in range(12)]
    cmd = pd(desired, ff, velocity=0.2)
    s.establish(cmd)
    if plugin == GENERIC_SYSTEM:  # states stay at their initial values: the published effort is the law at Q0
        expected = [f + KP * (d - q) + KD * 0.2 for f, d, q in zip(ff, desired, Q0, strict=True)]
        np.testing.assert_allclose(s.states[-1].effort, expected, rtol=0, atol=1e-12)

    # joints are matched by name, not by position: the reversed message gives the same law
    r = slice(None, None, -1)
    reversed_cmd = pd(desired[r], ff[r], velocity=0.2, names=JOINTS[r])
    start = len(s.states)
    s.send_for(reversed_cmd, 0.3)
    assert pd_law_pairs(s.states[start:], cmd) >= 10

    if plugin == SIMULATED_SYSTEM:  # the simulated robot stands on the PD law, and its IMU measures gravity
        s.send_for(cmd, 1.0)
        position = np.array(s.states[-1].position)
        assert np.abs(position - desired).max() < 0.1, position
        # At rest (no feed-forward, no desired velocity: cmd's kd * 0.2 and ff keep the legs working) the
        # accelerometer measures gravity's reaction in its own axes, C_world_imu^T [0, 0, g], over the last
        # 0.1 s (50 samples at 500 Hz: the soft contacts still vibrate by a few 0.1 m/s^2).
        s.send_for(pd(desired, [0.0] * 12), 1.0)
        window = s.imu[-50:]
        orientation = window[-1].orientation
        assert orientation.w == pytest.approx(1.0, abs=1e-3)
        quat = [orientation.x, orientation.y, orientation.z, orientation.w]
        gravity_in_imu = Rotation.from_quat(quat).inv().apply([0.0, 0.0, 9.81])
        measured = np.mean([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]
                            for m in window], axis=0)
        np.testing.assert_allclose(measured, gravity_in_imu, rtol=0, atol=0.2)

    # the service lists the controllers with their claims
    cli = client.node.create_client(ListControllers, "/controller_manager/list_controllers")
    assert cli.wait_for_service(timeout_sec=10.0)
    future = cli.call_async(ListControllers.Request())
    assert client.spin_until(future.done, 10.0)
    states = {c.name: c for c in future.result().controller}
    assert {n: c.state for n, c in states.items()} == {
        "joint_state_broadcaster": "active",
        "imu_sensor_broadcaster": "active",
        "leg_pd_controller": "active",
        "leg_effort_controller": "inactive",
    }
    assert list(states["leg_pd_controller"].claimed_interfaces) == [f"{j}/effort" for j in JOINTS]


def test_second_claim_refused_over_service(control_node, client: Listener) -> None:
    cli = client.node.create_client(SwitchController, "/controller_manager/switch_controller")
    assert cli.wait_for_service(timeout_sec=30.0), log_text(control_node)
    future = cli.call_async(
        SwitchController.Request(
            activate_controllers=["leg_effort_controller"], strictness=SwitchController.Request.STRICT
        )
    )
    assert client.spin_until(future.done, 10.0)
    result = future.result()
    assert not result.ok
    assert (
        "Unable to activate controller 'leg_effort_controller' since the command interface "
        "'LF_HAA/effort' is "
        "currently claimed by controller 'leg_pd_controller'"
    ) in result.message
    # deactivating the holder in the same switch hands the interfaces over
    future = cli.call_async(
        SwitchController.Request(
            activate_controllers=["leg_effort_controller"],
            deactivate_controllers=["leg_pd_controller"],
            strictness=2,
        )
    )
    assert client.spin_until(future.done, 10.0)
    assert future.result().ok, future.result().message


UNTOUCHED = slice(6, 12)  # joints no bad command below breaks


@pytest.mark.parametrize(
    ("bad", "log"),
    [
        (lambda m: m.position.__setitem__(3, math.nan), "non-finite values in position"),
        (lambda m: m.kp.pop(), "kp has 11 values for 12 names"),
        (lambda m: m.name.__setitem__(0, "LF_WHEEL"), "joint(s) 'LF_WHEEL' not commanded by this controller"),
        (lambda m: m.effort.__setitem__(5, 81.0), "out of limits: LH_KFE effort 81.0 outside ±80.0"),
        (lambda m: m.position.__setitem__(1, 2.5), "out of limits: LF_HFE position 2.5 outside [-2.0, 2.0]"),
    ],
    ids=["nan", "wrong_length", "unknown_joint", "effort_limit", "position_limit"],
)
def test_bad_command_rejected_node_keeps_running(control_node, client: Listener, plugin: str, bad,
                                                 log: str) -> None:
    s = Session(client, plugin)
    assert client.spin_until(lambda: bool(s.states), 30.0), log_text(control_node)
    good = pd(Q0, [1.0] * 12)
    s.establish(good)
    intact = pd(Q0, [7.0] * 12)  # what the bad command would do on the joints it leaves intact
    wrong = pd(Q0, [7.0] * 12)
    bad(wrong)
    start = len(s.states)
    for _ in range(10):
        s.pub.publish(wrong)
        s.pub.publish(good)  # keeps the watchdog fed
        client.spin_for(0.02)
    assert wait_for(lambda: log in log_text(control_node), 5.0), log_text(control_node)
    assert log_text(control_node).count(log) == 1  # one line per distinct problem
    assert control_node.poll() is None
    # the bad command was never applied: the good law held throughout, the bad one never
    assert pd_law_pairs(s.states[start:], good) >= 10
    assert pd_law_pairs(s.states[start:], intact, UNTOUCHED) == 0
    s.establish(pd(Q0, [2.0] * 12))  # and the next good command is applied


def test_watchdog_trips_within_two_periods(control_node, client: Listener, plugin: str) -> None:
    s = Session(client, plugin)
    assert client.spin_until(lambda: bool(s.states), 30.0), log_text(control_node)
    s.establish(pd(Q0, [3.0] * 12))
    # commands stop here; zero_effort with damping: effort = -safe_kd * qdot (GenericSystem keeps qdot = 0)
    pattern = (
        r"controller 'leg_pd_controller': no command for ([0-9.]+) s \(watchdog_timeout 0.1 s\); switching "
        r"to the safe command zero_effort \(kd 2.0\)"
    )
    assert client.spin_until(lambda: re.search(pattern, log_text(control_node)), 5.0), log_text(control_node)
    silences = [float(x) for x in re.findall(pattern, log_text(control_node))]
    assert len(silences) == 1  # logged once
    assert TIMEOUT < silences[0] <= TIMEOUT + 2.0 / UPDATE_RATE
    start = len(s.states)
    client.spin_for(0.3)
    assert pd_law_pairs(s.states[start:], pd(Q0, ZEROS, kp=0.0, kd=SAFE_KD)) >= 10
    assert len(re.findall(pattern, log_text(control_node))) == 1
