"""A read + write cycle of the real drivers at 500 Hz: 12 CAN motors and the IMU, against the emulators.

The quadruped switched to the real plugins (emulators/quadruped.py) runs in-process through the controller
manager (joint state broadcaster, IMU broadcaster, JointPDController holding the standing pose; no ROS: the
controllers publish into test doubles): CanMotorSystem on python-can's virtual bus answered by 12 emulated MIT
motors on a thread, SerialImuSensor on a pty fed by an emulated MTi streaming at 400 Hz. The loop is paced at
``--rate`` (sleep until the next period) and each ``manager.cycle`` (read -> update -> write: 12 frames out,
12 replies in, the IMU stream parsed) is timed. Printed: median, p99 and maximum of the cycle time, as a
fraction of the period, and the cycles that did not fit. The emulators run on threads of this process, so
their work (12 replies per cycle) competes for the interpreter with the cycle measured: on a robot the motors
answer in their own hardware.
Run: `source scripts/env.sh && python bench/bench_real_drivers.py`.
"""

from __future__ import annotations

import argparse
import time
import uuid

import can
import numpy as np
from kinodyn_control.hardware.emulators.mit_motor import BusServer, MitMotorBank
from kinodyn_control.hardware.emulators.quadruped import quadruped_motors, real_drivers_urdf
from kinodyn_control.hardware.emulators.serial_imu import XsensImuEmulator
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, Harness, pd_command


def run(rate: float, seconds: float) -> np.ndarray:
    """Cycle times [s] of ``seconds`` of cycles at ``rate`` Hz."""
    channel = f"bench-{uuid.uuid4().hex[:8]}"
    stance = dict(zip(QUADRUPED_JOINTS, QUADRUPED_STANCE, strict=True))
    bank = MitMotorBank(list(quadruped_motors(stance).values()))
    server = BusServer(bank, can.Bus(interface="virtual", channel=channel)).start()
    imu = XsensImuEmulator(rate=400.0)
    imu.start()
    try:
        h = Harness(real_drivers_urdf({"interface": "virtual", "channel": channel, "reply_timeout": 0.05},
                                      {"port": imu.port}))
        h.activate_hardware()
        h.start("joint_state_broadcaster", "kinodyn_control/JointStateBroadcaster")
        h.start("imu_sensor_broadcaster", "kinodyn_control/ImuSensorBroadcaster",
                {"sensor_name": "imu_sensor"})
        h.start("leg_pd_controller", "kinodyn_control/JointPDController",
                {"joints": QUADRUPED_JOINTS, "watchdog_timeout": 1e6})
        n = len(QUADRUPED_JOINTS)
        h.contexts["leg_pd_controller"].subscriptions["/leg_pd_controller/commands"](
            pd_command(QUADRUPED_JOINTS, QUADRUPED_STANCE, [0.0] * n, [0.0] * n, [20.0] * n, [1.2] * n))
        period = 1.0 / rate
        cycles = int(seconds * rate)
        times = np.empty(cycles)
        start = time.perf_counter()
        for k in range(cycles):
            wake = start + k * period
            delay = wake - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            t0 = time.perf_counter()
            h.manager.cycle(k * period, period)
            times[k] = time.perf_counter() - t0
        if h.messages("error"):
            raise RuntimeError(f"the loop failed: {h.messages('error')}")
        h.manager.shutdown()
        return times
    finally:
        imu.close()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    times = run(args.rate, args.seconds)
    period = 1.0 / args.rate
    median, p99 = np.percentile(times, [50, 99])
    print(f"12 CAN motors + IMU, {len(times)} cycles at {args.rate:g} Hz (period {period * 1e3:.3f} ms)")
    print(f"cycle time: median {median * 1e3:.3f} ms ({median / period:.0%} of the period), "
          f"p99 {p99 * 1e3:.3f} ms ({p99 / period:.0%}), max {times.max() * 1e3:.3f} ms")
    print(f"cycles longer than the period: {(times > period).sum()} of {len(times)}")


if __name__ == "__main__":
    main()
