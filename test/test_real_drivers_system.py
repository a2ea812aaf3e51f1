"""control_node on the real device drivers, over DDS: the quadruped's URDF switched to
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
- A stray reply (a motor answering a frame of another node) is dropped with one warning and the node runs on.
- A joint reading outside its URDF limits, and an IMU rate beyond the device's range, each stop the node the
  same way, and the value never reaches /joint_states or the IMU broadcaster; so does an IMU that replays its
  last packet.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import pytest
import yaml
from kinodyn.urdf import read_urdf
from kinodyn_control.hardware.emulators.mit_motor import MitMotorBank
from kinodyn_control.hardware.emulators.quadruped import URDF, direction, quadruped_motors, real_drivers_urdf
from kinodyn_control.hardware.emulators.serial_imu import XsensImuEmulator
from kinodyn_control.hardware.emulators.slcan_pty import SlcanPtyDevice
from kinodyn_control.hardware.serial_imu_protocol import ImuSample
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, pd_command
from rclpy.qos import QoSProfile
from sensor_msgs.msg import Imu, JointState

from kinodyn_interfaces.msg import JointPDCommand
from test.conftest import REPO, wait_for
from test.ros_listener import Listener

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterator
    from pathlib import Path

    from test.conftest import ProcessSpawner

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


def start(spawn: ProcessSpawner, tmp_path: Path, devices: Devices) -> subprocess.Popen[bytes]:
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


def lines_of(proc: subprocess.Popen[bytes], level: str) -> list[str]:
    return [line for line in proc.log_path.read_text().splitlines() if f"[{level}]" in line]


def errors_of(proc: subprocess.Popen[bytes]) -> list[str]:
    return lines_of(proc, "ERROR")


class Run:
    """A test's view of control_node: /joint_states and the IMU broadcaster's messages, PD commands."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.client = Listener("real_drivers_test")
        self.states: list[JointState] = []
        self.imu: list[Imu] = []
        node = self.client.node
        node.create_subscription(JointState, "/joint_states", self.states.append, QoSProfile(depth=100))
        node.create_subscription(Imu, "/imu_sensor_broadcaster/imu", self.imu.append, QoSProfile(depth=100))
        self.pub = node.create_publisher(JointPDCommand, "/leg_pd_controller/commands", QoSProfile(depth=10))

    def positions(self, message: JointState) -> np.ndarray:
        by_name = dict(zip(message.name, message.position, strict=True))
        return np.array([by_name[j] for j in QUADRUPED_JOINTS])

    def settle(self, target: np.ndarray) -> None:
        """Command PD to ``target`` until the joint states are there (60 s at most)."""
        zeros = [0.0] * N
        command = pd_command(QUADRUPED_JOINTS, target, zeros, zeros, [20.0] * N, [1.2] * N)

        def settled() -> bool:
            self.pub.publish(command)
            return bool(self.states) and bool(np.allclose(self.positions(self.states[-1]), target, atol=0.01))

        assert self.client.spin_until(settled, 60.0), self.proc.log_path.read_text()

    def exits_with_one_error(self) -> str:
        """The node exits with code 1 after one error line (returned), spinning the listener meanwhile."""
        exited = self.client.spin_until(lambda: self.proc.poll() is not None, 30.0)
        assert exited, self.proc.log_path.read_text()
        assert self.proc.returncode == 1, self.proc.log_path.read_text()
        errors = errors_of(self.proc)
        assert len(errors) == 1, errors
        assert errors[0].endswith("exiting with code 1")
        return errors[0]

    def close(self) -> None:
        self.client.close()


def test_pd_commands_move_the_motors_and_over_temperature_stops_the_node(
    spawn: ProcessSpawner, tmp_path: Path, devices: Devices,
) -> None:
    proc = start(spawn, tmp_path, devices)
    run = Run(proc)
    states, imu = run.states, run.imu
    try:
        target = np.array(QUADRUPED_STANCE) + 0.1
        run.settle(target)
        last = states[-1]
        assert np.isfinite(last.position).all()
        assert np.isfinite(last.effort).all()
        for name, q in zip(last.name, last.position, strict=True):  # the same angle in motor coordinates
            assert devices.by_joint[name].position == pytest.approx(direction(name) * q, abs=0.02)
        assert all(m.motor_mode for m in devices.by_joint.values())
        # the IMU's own stream (settle waited for the joint states only; its reader may match later)
        assert run.client.spin_until(lambda: bool(imu), 60.0), proc.log_path.read_text()
        assert imu[-1].header.frame_id == "imu_link"  # the emulated MTi: level, at rest
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
        assert "leg_pd_controller deactivated" in errors[0]
        assert errors[0].endswith("exiting with code 1")
        assert wait_for(lambda: not any(m.motor_mode for m in devices.by_joint.values()), 5.0)
    finally:
        run.close()


def test_a_stray_reply_is_dropped_with_one_warning_and_the_node_runs_on(
    spawn: ProcessSpawner, tmp_path: Path, devices: Devices,
) -> None:
    """A reply of LH_KFE's motor to no frame of the driver (as if another node had sent it one): dropped and
    reported once, the node goes on and its joint states still follow the motors."""
    proc = start(spawn, tmp_path, devices)
    run = Run(proc)
    try:
        run.settle(np.array(QUADRUPED_STANCE) + 0.1)
        motor = devices.by_joint["LH_KFE"]
        devices.adapter.inject([devices.bank.unsolicited(motor.can_id)])
        def dropped() -> list[str]:
            return [line for line in lines_of(proc, "WARN") if "dropped" in line]

        assert run.client.spin_until(dropped, 10.0), proc.log_path.read_text()
        (warning,) = dropped()
        assert f"motor {motor.can_id:#x} (joint 'LH_KFE'): dropped 1 reply(ies) no frame of this driver " \
               "was waiting for" in warning
        target = np.array(QUADRUPED_STANCE) - 0.1  # the loop still closes on the motors' answers
        run.settle(target)
        for name, q in zip(QUADRUPED_JOINTS, run.positions(run.states[-1]), strict=True):
            assert devices.by_joint[name].position == pytest.approx(direction(name) * q, abs=0.02)
        assert proc.poll() is None
        assert not errors_of(proc)
        assert len(dropped()) == 1
    finally:
        run.close()


def test_a_joint_reading_outside_its_urdf_limits_stops_the_node(
    spawn: ProcessSpawner, tmp_path: Path, devices: Devices,
) -> None:
    """LH_KFE's motor reports a position beyond the joint's URDF range (+ position_margin 0.1): one error line
    naming joint, value and range, exit code 1, motors resting, and /joint_states never carried it."""
    joint = next(j for j in read_urdf(URDF.read_text()).joints if j.name == "LH_KFE")
    beyond = joint.upper + 0.5
    proc = start(spawn, tmp_path, devices)
    run = Run(proc)
    try:
        run.settle(np.array(QUADRUPED_STANCE))
        motor = devices.by_joint["LH_KFE"]
        with devices.bank.lock:
            motor.misreport = {"position": direction("LH_KFE") * beyond}
        error = run.exits_with_one_error()
        read = re.search(f"returned an error from read\\(\\): joint 'LH_KFE' \\(motor {motor.can_id:#x}\\) "
                         r"reads position (\S+) rad", error)
        assert read, error
        assert float(read[1]) == pytest.approx(beyond, abs=25 / 65535), error
        assert (f"outside [{joint.lower - 0.1:.6g}, {joint.upper + 0.1:.6g}] (URDF limits [{joint.lower:g}, "
                f"{joint.upper:g}] rad ± position_margin 0.1)") in error, error
        assert "leg_pd_controller deactivated" in error
        column = QUADRUPED_JOINTS.index("LH_KFE")
        assert all(run.positions(m)[column] <= joint.upper + 0.1 for m in run.states)
        assert wait_for(lambda: not any(m.motor_mode for m in devices.by_joint.values()), 5.0)
    finally:
        run.close()


def test_an_imu_rate_beyond_its_range_stops_the_node_and_is_never_broadcast(
    spawn: ProcessSpawner, tmp_path: Path, devices: Devices,
) -> None:
    """The MTi reports 1e6 rad/s: one error line naming the value and the range, exit code 1, and no IMU
    message carries it."""
    proc = start(spawn, tmp_path, devices)
    run = Run(proc)
    try:
        assert run.client.spin_until(lambda: len(run.imu) > 10, 60.0), proc.log_path.read_text()
        devices.imu.misreport(ImuSample(None, (1e6, 0.0, 0.0), None))
        error = run.exits_with_one_error()
        assert (f"component 'imu' returned an error from read(): the IMU on {devices.imu.port} reports "
                "angular_velocity.x = 1e+06 rad/s, beyond its full-scale range ±34.9066 rad/s (gyro_range)") \
            in error, error
        assert "imu_sensor_broadcaster deactivated" in error
        assert all(abs(m.angular_velocity.x) < 1.0 for m in run.imu)
    finally:
        run.close()


def test_an_imu_replaying_its_last_packet_stops_the_node(
    spawn: ProcessSpawner, tmp_path: Path, devices: Devices,
) -> None:
    """The MTi sends its last packet again and again (a stuck device): the packets are not taken as new, and
    three reads in a row with nothing else are one error line and exit code 1."""
    proc = start(spawn, tmp_path, devices)
    run = Run(proc)
    try:
        assert run.client.spin_until(lambda: len(run.imu) > 10, 60.0), proc.log_path.read_text()
        devices.imu.replay(100_000)
        error = run.exits_with_one_error()
        assert (f"component 'imu' returned an error from read(): the IMU on {devices.imu.port} sent only "
                "packet(s) whose PacketCounter does not advance past ") in error, error
        assert "in 3 reads in a row (stale_fault_cycles 3)" in error
        assert "imu_sensor_broadcaster deactivated" in error
    finally:
        run.close()


def test_a_motor_missing_at_startup_is_one_error_and_exit_code_1(
    spawn: ProcessSpawner, tmp_path: Path,
) -> None:
    devices = Devices(missing="RF_HFE")
    try:
        proc = start(spawn, tmp_path, devices)
        proc.wait(timeout=60.0)
        errors = errors_of(proc)
        assert proc.returncode == 1, proc.log_path.read_text()
        assert len(errors) == 1, proc.log_path.read_text()
        assert "no reply from motor 0x8 (joint 'RF_HFE') within reply_timeout 1.0 s" in errors[0]
    finally:
        devices.close()
