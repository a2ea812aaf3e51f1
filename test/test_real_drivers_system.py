"""control_node on the real device drivers (issue 14), over DDS: the quadruped's URDF switched to
``kinodyn_control/CanMotorSystem`` (plugin name and params only, generated here from urdf/quadruped.urdf), its
12 motors emulated in this process (emulators/mit_motor.py) behind an slcan serial CAN adapter on a
pseudo-terminal (emulators/slcan_pty.py), which the node opens with python-can's ``slcan`` interface, as it
would a USB CAN adapter.

- JointPDController commands reach the motors: the joint states converge to the PD targets, and the
  emulated motors sit at the same angles in motor coordinates (direction -1 on the right legs).
- A motor reporting over-temperature stops the node with exit code 1 and one error line naming the motor and
  the controllers put in safe mode, after the driver has put every motor back in rest mode.
- A motor that does not answer at startup is one error line naming it and exit code 1.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import numpy as np
import pytest
import yaml
from kinodyn_control.hardware.can_motor_protocol import MotorRanges
from kinodyn_control.hardware.emulators.mit_motor import MitMotor, MitMotorBank
from kinodyn_control.hardware.emulators.slcan_pty import SlcanPtyDevice
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, pd_command
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

from kinodyn_interfaces.msg import JointPDCommand
from test.conftest import REPO, wait_for
from test.ros_listener import Listener

pytestmark = pytest.mark.system

CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"
CAN_MOTORS = "kinodyn_control/CanMotorSystem"
RANGES = MotorRanges(p_max=12.5, v_max=50.0, kp_max=500.0, kd_max=5.0, t_max=100.0)
N = len(QUADRUPED_JOINTS)


def direction(joint: str) -> int:
    return -1 if joint.startswith("R") else 1


def can_ids(text: str) -> dict[str, int]:
    block = ET.fromstring(text).find("ros2_control")
    assert block is not None
    return {j.get("name", ""): k + 1 for k, j in enumerate(block.findall("joint"))}


def switched_urdf(port: str) -> str:
    """urdf/quadruped.urdf with its joints on CanMotorSystem: plugin name and params changed, nothing else
    (the IMU <sensor> leaves the block: a CAN motor bus carries joints only)."""
    text = (REPO / "urdf" / "quadruped.urdf").read_text()
    root = ET.fromstring(text)
    block = root.find("ros2_control")
    assert block is not None
    hardware = block.find("hardware")
    assert hardware is not None and hardware.findtext("plugin") == "kinodyn_control/GenericSystem"
    hardware.find("plugin").text = CAN_MOTORS  # type: ignore[union-attr]
    params = {"interface": "slcan", "channel": port, "reply_timeout": 0.05,
              **{k: getattr(RANGES, k) for k in ("p_max", "v_max", "kp_max", "kd_max", "t_max")}}
    for key, value in params.items():
        ET.SubElement(hardware, "param", name=key).text = str(value)
    ids = can_ids(text)
    for joint in block.findall("joint"):
        name = joint.get("name", "")
        ET.SubElement(joint, "param", name="can_id").text = str(ids[name])
        ET.SubElement(joint, "param", name="direction").text = str(direction(name))
    for sensor in block.findall("sensor"):
        block.remove(sensor)
    return ET.tostring(root, encoding="unicode")


class Motors:
    """12 emulated motors at the standing pose behind an slcan adapter on a pty."""

    def __init__(self, missing: str = "") -> None:
        text = (REPO / "urdf" / "quadruped.urdf").read_text()
        stance = dict(zip(QUADRUPED_JOINTS, QUADRUPED_STANCE, strict=True))
        self.by_joint = {j: MitMotor(i, RANGES, inertia=0.02, damping=0.05, position=direction(j) * stance[j])
                         for j, i in can_ids(text).items() if j != missing}
        self.bank = MitMotorBank(list(self.by_joint.values()))
        self.device = SlcanPtyDevice(self.bank.handle).start()


@pytest.fixture
def motors() -> Iterator[Motors]:
    m = Motors()
    try:
        yield m
    finally:
        m.device.stop()


def start(spawn, tmp_path, port: str):
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(switched_urdf(port))
    params = {"update_rate": 200, "robot_description_file": str(urdf),
              "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"},
              "leg_pd_controller": {"type": "kinodyn_control/JointPDController", "joints": QUADRUPED_JOINTS,
                                    "watchdog_timeout": 5.0}}
    param_file = tmp_path / "control_node.yaml"
    param_file.write_text(yaml.safe_dump({"controller_manager": {"ros__parameters": params}}))
    return spawn([str(CONTROL_NODE), "--ros-args", "--params-file", str(param_file)], "control_node")


def errors_of(proc) -> list[str]:
    return [line for line in proc.log_path.read_text().splitlines() if "[ERROR]" in line]


def test_pd_commands_move_the_motors_and_over_temperature_stops_the_node(spawn, tmp_path, motors) -> None:
    proc = start(spawn, tmp_path, motors.device.port)
    client = Listener("real_drivers_test")
    try:
        states: list[JointState] = []
        client.node.create_subscription(JointState, "/joint_states", states.append, QoSProfile(depth=100))
        pub = client.node.create_publisher(JointPDCommand, "/leg_pd_controller/commands",
                                           QoSProfile(depth=10))
        target = np.array(QUADRUPED_STANCE) + 0.1
        zeros = [0.0] * N
        command = pd_command(QUADRUPED_JOINTS, target, zeros, zeros, [20.0] * N, [1.2] * N)

        def settled() -> bool:
            pub.publish(command)
            if not states:
                return False
            by_name = dict(zip(states[-1].name, states[-1].position, strict=True))
            return bool(np.allclose([by_name[j] for j in QUADRUPED_JOINTS], target, atol=0.01))

        assert client.spin_until(settled, 60.0), proc.log_path.read_text()
        last = states[-1]
        assert np.isfinite(last.position).all() and np.isfinite(last.effort).all()
        for name, q in zip(last.name, last.position, strict=True):  # the same angle in motor coordinates
            assert motors.by_joint[name].position == pytest.approx(direction(name) * q, abs=0.02)
        assert all(m.motor_mode for m in motors.by_joint.values())
        assert not errors_of(proc)

        with motors.bank.lock:
            motors.by_joint["LH_KFE"].temperature = 95
        proc.wait(timeout=30.0)
        assert proc.returncode == 1, proc.log_path.read_text()
        errors = errors_of(proc)
        assert len(errors) == 1, errors
        assert "component 'quadruped_system' returned an error from read(): motor 0x6 (joint 'LH_KFE') is " \
               "over-temperature: 95 °C above max_temperature 80.0 °C" in errors[0]
        assert "leg_pd_controller deactivated" in errors[0] and errors[0].endswith("exiting with code 1")
        assert wait_for(lambda: not any(m.motor_mode for m in motors.by_joint.values()), 5.0)
    finally:
        client.close()


def test_a_motor_missing_at_startup_is_one_error_and_exit_code_1(spawn, tmp_path) -> None:
    motors = Motors(missing="RF_HFE")
    try:
        proc = start(spawn, tmp_path, motors.device.port)
        proc.wait(timeout=60.0)
        errors = errors_of(proc)
        assert proc.returncode == 1 and len(errors) == 1, proc.log_path.read_text()
        assert "no reply from motor 0x8 (joint 'RF_HFE') within reply_timeout 0.05 s" in errors[0]
    finally:
        motors.device.stop()
