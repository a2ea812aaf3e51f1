"""control_node on the real device drivers (issue 14), over DDS: the quadruped's URDF switched to
``kinodyn_control/CanMotorSystem`` and ``kinodyn_control/SerialImuSensor`` (plugin names and params only,
generated from urdf/quadruped.urdf by emulators/quadruped.py), its 12 motors emulated in this process
(emulators/mit_motor.py) behind an slcan serial CAN adapter on a pseudo-terminal (emulators/slcan_pty.py),
which the node opens with python-can's ``slcan`` interface as it would a USB CAN adapter, and the IMU an
emulated Xsens MTi streaming on another pseudo-terminal (emulators/serial_imu.py).

- JointPDController commands reach the motors: the joint states converge to the PD targets, and the
  emulated motors sit at the same angles in motor coordinates (direction -1 on the right legs); the IMU
  broadcaster publishes what the emulated MTi sends.
- A motor reporting over-temperature stops the node with exit code 1 and one error line naming the motor and
  the controllers put in safe mode, after the driver has put every motor back in rest mode.
- A motor that does not answer at startup is one error line naming it and exit code 1.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import yaml
from kinodyn_control.hardware.emulators.mit_motor import MitMotorBank
from kinodyn_control.hardware.emulators.quadruped import direction, quadruped_motors, real_drivers_urdf
from kinodyn_control.hardware.emulators.serial_imu import XsensImuEmulator
from kinodyn_control.hardware.emulators.slcan_pty import SlcanPtyDevice
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, pd_command
from rclpy.qos import QoSProfile
from sensor_msgs.msg import Imu, JointState

from kinodyn_interfaces.msg import JointPDCommand
from test.conftest import REPO, wait_for
from test.ros_listener import Listener

pytestmark = pytest.mark.system

CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"
N = len(QUADRUPED_JOINTS)
STANCE = dict(zip(QUADRUPED_JOINTS, QUADRUPED_STANCE, strict=True))


class Devices:
    """12 emulated motors at the standing pose behind an slcan adapter on a pty, and an emulated MTi (level,
    at rest) streaming 400 Hz on another pty."""

    def __init__(self, missing: str = "") -> None:
        self.by_joint = quadruped_motors(STANCE, missing)
        self.bank = MitMotorBank(list(self.by_joint.values()))
        self.adapter = SlcanPtyDevice(self.bank.handle).start()
        self.imu = XsensImuEmulator(rate=400.0)
        self.imu.start()

    def close(self) -> None:
        self.imu.close()
        self.adapter.stop()


@pytest.fixture
def devices() -> Iterator[Devices]:
    d = Devices()
    try:
        yield d
    finally:
        d.close()


# The emulated devices answer from this test's process on shared, loaded cores: a real bus's deadline (50 ms)
# would time out on scheduling alone, so the test gives them a second (it judges content, not timing).
REPLY_TIMEOUT = 1.0


def start(spawn, tmp_path, devices: Devices):
    urdf = tmp_path / "robot.urdf"
    urdf.write_text(real_drivers_urdf({"interface": "slcan", "channel": devices.adapter.port,
                                       "reply_timeout": REPLY_TIMEOUT},
                                      {"port": devices.imu.port, "timeout": REPLY_TIMEOUT}))
    params = {"update_rate": 200, "robot_description_file": str(urdf),
              "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"},
              "imu_sensor_broadcaster": {"type": "kinodyn_control/ImuSensorBroadcaster",
                                         "sensor_name": "imu_sensor"},
              "leg_pd_controller": {"type": "kinodyn_control/JointPDController", "joints": QUADRUPED_JOINTS,
                                    "watchdog_timeout": 5.0}}
    param_file = tmp_path / "control_node.yaml"
    param_file.write_text(yaml.safe_dump({"controller_manager": {"ros__parameters": params}}))
    return spawn([str(CONTROL_NODE), "--ros-args", "--params-file", str(param_file)], "control_node")


def errors_of(proc) -> list[str]:
    return [line for line in proc.log_path.read_text().splitlines() if "[ERROR]" in line]


def test_pd_commands_move_the_motors_and_over_temperature_stops_the_node(spawn, tmp_path, devices) -> None:
    proc = start(spawn, tmp_path, devices)
    client = Listener("real_drivers_test")
    try:
        states: list[JointState] = []
        imu: list[Imu] = []
        client.node.create_subscription(JointState, "/joint_states", states.append, QoSProfile(depth=100))
        client.node.create_subscription(Imu, "/imu_sensor_broadcaster/imu", imu.append, QoSProfile(depth=100))
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
            assert devices.by_joint[name].position == pytest.approx(direction(name) * q, abs=0.02)
        assert all(m.motor_mode for m in devices.by_joint.values())
        assert imu and imu[-1].header.frame_id == "imu_link"  # the emulated MTi: level, at rest
        orientation, acceleration = imu[-1].orientation, imu[-1].linear_acceleration
        assert (orientation.x, orientation.y, orientation.z, orientation.w) == (0.0, 0.0, 0.0, 1.0)
        assert (acceleration.x, acceleration.y) == (0.0, 0.0)
        assert acceleration.z == pytest.approx(9.81, abs=1e-5)  # float32 on the wire
        assert not errors_of(proc)

        with devices.bank.lock:
            devices.by_joint["LH_KFE"].temperature = 95
        proc.wait(timeout=30.0)
        assert proc.returncode == 1, proc.log_path.read_text()
        errors = errors_of(proc)
        assert len(errors) == 1, errors
        assert "component 'quadruped_system' returned an error from read(): motor 0x6 (joint 'LH_KFE') is " \
               "over-temperature: 95 °C above max_temperature 80.0 °C" in errors[0]
        assert "leg_pd_controller deactivated" in errors[0] and errors[0].endswith("exiting with code 1")
        assert wait_for(lambda: not any(m.motor_mode for m in devices.by_joint.values()), 5.0)
    finally:
        client.close()


def test_a_motor_missing_at_startup_is_one_error_and_exit_code_1(spawn, tmp_path) -> None:
    devices = Devices(missing="RF_HFE")
    try:
        proc = start(spawn, tmp_path, devices)
        proc.wait(timeout=60.0)
        errors = errors_of(proc)
        assert proc.returncode == 1 and len(errors) == 1, proc.log_path.read_text()
        assert "no reply from motor 0x8 (joint 'RF_HFE') within reply_timeout 1.0 s" in errors[0]
    finally:
        devices.close()
