"""Speed of the real-device drivers (issue 14, point 5): one read + write cycle of 12 MIT-mode CAN motors
(``kinodyn_control/CanMotorSystem``) and an Xsens IMU (``kinodyn_control/SerialImuSensor``) at 500 Hz
against their emulators, timed with ``time.perf_counter``: median, 99th percentile and maximum of the cycle
against the period, overruns, and the CPU time of the cycle's thread (the drivers' own work, without the
waits for replies, which depend on how promptly the emulators are scheduled).

The IMU emulator (hardware/emulators/serial_imu.py) streams MTData2 at ``--imu-rate`` on a pty from a child
process, as a separate device would. The 12 motors (hardware/emulators/mit_motor.py) are reached through
python-can, by default on its virtual bus (the closest to SocketCAN's cost per frame: no byte parsing in
Python), served by a thread of this process since that bus does not cross processes, so the wall-clock cycle
also holds the GIL handovers to that thread. ``--bus slcan`` puts them in the child process behind an slcan
serial CAN adapter on a pty (emulators/slcan_pty.py), opened with python-can's ``slcan`` interface as a
USB-CAN adapter would be. The cycle is what the controller manager calls: ``ResourceManager.read`` then
``write`` (every motor gets an effort command each cycle).

Run: ``source scripts/env.sh && python bench/bench_drivers.py`` (options: ``--seconds 10 --rate 500
--bus slcan|virtual --reply-timeout 0.05 --imu-only``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
import uuid
from multiprocessing.synchronize import Event

import can
import numpy as np
from kinodyn_control.hardware.can_motor_protocol import MotorRanges
from kinodyn_control.hardware.emulators.mit_motor import BusServer, MitMotor, MitMotorBank
from kinodyn_control.hardware.emulators.serial_imu import XsensImuEmulator, constant_rate
from kinodyn_control.hardware.emulators.slcan_pty import SlcanPtyDevice
from kinodyn_control.hardware.types import IMU_INTERFACES, LifecycleState
from kinodyn_control.testing import QUADRUPED_JOINTS, Harness, param, robot_xml, system_block

RANGES = {"p_max": 12.5, "v_max": 50.0, "kp_max": 500.0, "kd_max": 5.0, "t_max": 18.0}


def imu_block(port: str) -> str:
    states = "".join(f'<state_interface name="{i}"/>' for i in IMU_INTERFACES)
    params = "".join(param(k, v) for k, v in
                     (("port", port), ("baudrate", 921600), ("timeout", 0.1), ("frame_id", "imu")))
    return (f'<ros2_control name="imu" type="sensor"><hardware><plugin>kinodyn_control/SerialImuSensor'
            f'</plugin></hardware><sensor name="imu_sensor">{states}{params}</sensor></ros2_control>')


def motor_block(interface: str, channel: str, reply_timeout: float) -> str:
    joints = "".join(
        f'<joint name="{name}"><command_interface name="effort">{param("min", -10)}{param("max", 10)}'
        f'</command_interface><state_interface name="position"/><state_interface name="velocity"/>'
        f'<state_interface name="effort"/>{param("can_id", k + 1)}</joint>'
        for k, name in enumerate(QUADRUPED_JOINTS)
    )
    hardware = "".join(param(k, v) for k, v in (("interface", interface), ("channel", channel),
                                                ("reply_timeout", reply_timeout), *RANGES.items()))
    return system_block(hardware, joints, name="motors", plugin="kinodyn_control/CanMotorSystem")


def serve(imu: XsensImuEmulator, adapter: SlcanPtyDevice | None, stop: Event) -> None:
    """The child process: the devices stream and answer until ``stop``."""
    imu.start()
    if adapter is not None:
        adapter.start()
    stop.wait()
    imu.stop()
    if adapter is not None:
        adapter.stop()


def run(seconds: float, rate: float, imu_rate: float, bus: str, reply_timeout: float) -> None:
    period = 1.0 / rate
    imu = XsensImuEmulator(constant_rate((0.2, -0.1, 0.3)), rate=imu_rate)
    bank = MitMotorBank([MitMotor(k + 1, MotorRanges(**RANGES), inertia=0.01, damping=0.05)
                         for k in range(len(QUADRUPED_JOINTS))])
    adapter = SlcanPtyDevice(bank.handle) if bus == "slcan" else None
    context = multiprocessing.get_context("fork")  # before any thread: the child inherits the ptys
    stop = context.Event()
    child = context.Process(target=serve, args=(imu, adapter, stop), daemon=True)
    child.start()
    server = None
    blocks = imu_block(imu.port)
    if adapter is not None:
        blocks = motor_block("slcan", adapter.port, reply_timeout) + blocks
    elif bus == "virtual":
        channel = f"bench-{uuid.uuid4().hex[:8]}"
        server = BusServer(bank, can.Bus(interface="virtual", channel=channel)).start()
        blocks = motor_block("virtual", channel, reply_timeout) + blocks
    harness = None
    try:
        harness = Harness(robot_xml(blocks, tuple(QUADRUPED_JOINTS)))
        harness.activate_hardware()
        resources = harness.resources
        for name in resources.commands.names:
            harness.set_command(name, 0.5)
        durations = np.empty(int(seconds * rate))
        cpu = np.empty_like(durations)
        start = time.perf_counter()
        for k in range(len(durations)):
            next_start = start + k * period
            while (now := time.perf_counter()) < next_start:
                time.sleep(max(0.0, next_start - now - 2e-4))
            t0, c0 = time.perf_counter(), time.thread_time()
            failed = resources.read(k * period, period) + resources.write(k * period, period)
            durations[k], cpu[k] = time.perf_counter() - t0, time.thread_time() - c0
            if failed:
                raise RuntimeError("; ".join(resources.errors.values()))
        assert all(c.lifecycle_state is LifecycleState.ACTIVE for c in resources.components.values())
        what = {"slcan": "12 CAN motors (slcan adapter, other process)",
                "virtual": "12 CAN motors (virtual bus, thread)", "none": "no motors"}[bus]
        _report(durations, cpu, period, f"{what} + IMU")
    finally:
        if harness is not None:
            harness.manager.shutdown()
        stop.set()
        child.join(5.0)
        if child.is_alive():
            child.terminate()
        if server is not None:
            server.stop()
        imu.close()


def _report(durations: np.ndarray, cpu: np.ndarray, period: float, what: str) -> None:
    ms, period_ms = durations * 1e3, period * 1e3
    print(f"read + write cycle, {what}: {len(ms)} cycles at {1 / period:.0f} Hz (period {period_ms:.2f} ms)")
    print(f"  median {np.median(ms):.3f} ms ({np.median(ms) / period_ms:.1%} of the period), "
          f"p99 {np.percentile(ms, 99):.3f} ms ({np.percentile(ms, 99) / period_ms:.1%}), "
          f"max {ms.max():.3f} ms; overruns (cycle > period): {int((ms > period_ms).sum())}")
    print(f"  CPU time of the cycle's thread (the drivers' own work, without waiting): median "
          f"{np.median(cpu) * 1e3:.3f} ms, p99 {np.percentile(cpu, 99) * 1e3:.3f} ms; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=500.0, help="control loop rate [Hz]")
    parser.add_argument("--imu-rate", type=float, default=400.0, help="MTData2 rate [Hz] (MTi maximum 400)")
    parser.add_argument("--bus", choices=("virtual", "slcan"), default="virtual",
                        help="how the motors are reached")
    parser.add_argument("--reply-timeout", type=float, default=0.05, help="CanMotorSystem reply_timeout [s]")
    parser.add_argument("--imu-only", action="store_true", help="no motors")
    args = parser.parse_args()
    run(args.seconds, args.rate, args.imu_rate, "none" if args.imu_only else args.bus, args.reply_timeout)


if __name__ == "__main__":
    main()
