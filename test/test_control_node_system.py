"""control_node with the quadruped on GenericSystem over DDS (issue 5, point 7).

An external process (this test) sends JointPDCommand and reads /joint_states and the IMU. GenericSystem
mirrors
the effort command into the effort state and keeps positions and velocities at their initial values
(urdf/README.md (c): nominal standing configuration, velocity 0), so the published effort must equal the PD
law computed by hand: effort_ff + kp (position_des - q_nominal) + kd (velocity_des - 0).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import pytest
import yaml
from rclpy.qos import QoSProfile
from sensor_msgs.msg import Imu, JointState

from kinodyn_interfaces.msg import JointPDCommand
from kinodyn_interfaces.srv import ListControllers, SwitchController
from test.conftest import REPO, wait_for
from test.ros_listener import Listener

pytestmark = pytest.mark.system

CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"
UPDATE_RATE = 500
TIMEOUT = 0.1  # watchdog_timeout [s]
SAFE_KD = 2.0
JOINTS = [f"{leg}_{j}" for leg in ("LF", "LH", "RF", "RH") for j in ("HAA", "HFE", "KFE")]
NOMINAL = {
    "HAA": 0.0,
    "LF_HFE": 0.6,
    "RF_HFE": 0.6,
    "LF_KFE": -1.2,
    "RF_KFE": -1.2,
    "LH_HFE": -0.6,
    "RH_HFE": -0.6,
    "LH_KFE": 1.2,
    "RH_KFE": 1.2,
}
Q0 = [NOMINAL.get(j, 0.0) for j in JOINTS]
IMU_INITIAL = {"orientation.w": 1.0, "linear_acceleration.z": 9.81, "angular_velocity.x": 0.25}


def urdf_with_imu_values(tmp_path) -> str:
    """The quadruped URDF with the IMU's initial values set to IMU_INITIAL (GenericSystem keeps them), so the
    test sees values that can only have come through the hardware interfaces."""
    text = (REPO / "urdf" / "quadruped.urdf").read_text()
    for key, value in IMU_INITIAL.items():
        interface = rf'<state_interface name="{re.escape(key)}">'
        pattern = rf'({interface}\s*<param name="initial_value">)[^<]*(</param>)'
        text, count = re.subn(pattern, rf"\g<1>{value}\g<2>", text)
        assert count == 1, f"urdf/quadruped.urdf has no initial_value on IMU state interface {key}"
    path = tmp_path / "quadruped_imu.urdf"
    path.write_text(text)
    return str(path)


@pytest.fixture
def control_node(spawn, tmp_path):
    params = {
        "update_rate": UPDATE_RATE,
        "robot_description_file": urdf_with_imu_values(tmp_path),
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


def pd_command(position, velocity, effort, kp, kd, names=JOINTS) -> JointPDCommand:
    return JointPDCommand(
        name=list(names),
        position=list(position),
        velocity=list(velocity),
        effort=list(effort),
        kp=list(kp),
        kd=list(kd),
    )


class Session:
    def __init__(self, client: Listener) -> None:
        self.client = client
        self.states: list[JointState] = []
        self.imu: list[Imu] = []
        client.node.create_subscription(JointState, "/joint_states", self.states.append, QoSProfile(depth=50))
        client.node.create_subscription(
            Imu, "/imu_sensor_broadcaster/imu", self.imu.append, QoSProfile(depth=50)
        )
        self.pub = client.node.create_publisher(
            JointPDCommand, "/leg_pd_controller/commands", QoSProfile(depth=10)
        )

    def effort(self) -> list[float]:
        return list(self.states[-1].effort) if self.states else []

    def send_until(self, msg: JointPDCommand, predicate, timeout: float = 10.0) -> bool:
        def step() -> bool:
            self.pub.publish(msg)
            return predicate()

        return self.client.spin_until(step, timeout)


def test_pd_commands_joint_states_and_imu(control_node, client: Listener) -> None:
    s = Session(client)
    assert client.spin_until(lambda: s.states and s.imu, 20.0), log_text(control_node)
    first = s.states[-1]
    assert list(first.name) == JOINTS
    assert (
        list(first.position) == Q0 and list(first.velocity) == [0.0] * 12 and list(first.effort) == [0.0] * 12
    )
    imu = s.imu[-1]
    assert imu.header.frame_id == "imu_link"
    assert (imu.orientation.w, imu.linear_acceleration.z, imu.angular_velocity.x) == (1.0, 9.81, 0.25)
    assert (imu.orientation.x, imu.angular_velocity.y, imu.linear_acceleration.x) == (0.0, 0.0, 0.0)  # URDF

    desired = [q + 0.1 for q in Q0]
    desired[2] = -1.25  # LF_KFE stays within [-2.6, 0]
    ff = [0.5 * k for k in range(12)]
    kp, kd, vel = [40.0] * 12, [3.0] * 12, [0.2] * 12
    expected = [f + 40.0 * (d - q) + 3.0 * (v - 0.0) for f, d, q, v in zip(ff, desired, Q0, vel, strict=True)]
    msg = pd_command(desired, vel, ff, kp, kd)
    assert s.send_until(
        msg, lambda: s.effort() and max(abs(a - b) for a, b in zip(s.effort(), expected, strict=True)) < 1e-12
    ), (s.effort(), expected)

    # joints are matched by name, not by position: the reversed message gives the same efforts
    r = slice(None, None, -1)
    reversed_msg = pd_command(desired[r], vel[r], ff[r], kp[r], kd[r], JOINTS[r])
    for _ in range(20):
        s.pub.publish(reversed_msg)
        client.spin_for(0.01)
    assert max(abs(a - b) for a, b in zip(s.effort(), expected, strict=True)) < 1e-12

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
    assert cli.wait_for_service(timeout_sec=20.0), log_text(control_node)
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
def test_bad_command_rejected_node_keeps_running(control_node, client: Listener, bad, log: str) -> None:
    s = Session(client)
    assert client.spin_until(lambda: bool(s.states), 20.0), log_text(control_node)
    good = pd_command(Q0, [0.0] * 12, [1.0] * 12, [0.0] * 12, [0.0] * 12)
    assert s.send_until(good, lambda: s.effort() == [1.0] * 12)
    wrong = pd_command(Q0, [0.0] * 12, [7.0] * 12, [0.0] * 12, [0.0] * 12)
    bad(wrong)
    for _ in range(10):
        s.pub.publish(wrong)
        s.pub.publish(good)  # keeps the watchdog fed
        client.spin_for(0.02)
    assert wait_for(lambda: log in log_text(control_node), 5.0), log_text(control_node)
    assert log_text(control_node).count(log) == 1  # one line per distinct problem
    assert s.effort() == [1.0] * 12  # the bad command was never applied
    assert control_node.poll() is None
    again = pd_command(Q0, [0.0] * 12, [2.0] * 12, [0.0] * 12, [0.0] * 12)
    assert s.send_until(again, lambda: s.effort() == [2.0] * 12)


def test_watchdog_trips_within_two_periods(control_node, client: Listener) -> None:
    s = Session(client)
    assert client.spin_until(lambda: bool(s.states), 20.0), log_text(control_node)
    cmd = pd_command(Q0, [0.0] * 12, [3.0] * 12, [0.0] * 12, [0.0] * 12)
    assert s.send_until(cmd, lambda: s.effort() == [3.0] * 12)
    # commands stop here; zero_effort with damping: effort = -safe_kd * qdot = 0 (GenericSystem keeps qdot =
    # 0)
    assert client.spin_until(lambda: s.effort() == [0.0] * 12, 5.0)
    pattern = (
        r"controller 'leg_pd_controller': no command for ([0-9.]+) s \(watchdog_timeout 0.1 s\); switching "
        r"to the safe command zero_effort \(kd 2.0\)"
    )
    assert wait_for(lambda: re.search(pattern, log_text(control_node)), 5.0), log_text(control_node)
    silences = [float(x) for x in re.findall(pattern, log_text(control_node))]
    assert len(silences) == 1  # logged once
    assert TIMEOUT < silences[0] <= TIMEOUT + 2.0 / UPDATE_RATE
    client.spin_for(0.3)
    assert len(re.findall(pattern, log_text(control_node))) == 1
