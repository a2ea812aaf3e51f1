"""Control-loop period jitter of control_node on mock hardware (issue 5, point 2).

Runs the quadruped (urdf/quadruped.urdf, GenericSystem) in-process with the joint state broadcaster, the IMU
broadcaster and the joint PD controller (publishing /joint_states and the IMU every cycle over DDS), for
``--seconds`` at each rate, and prints the median and 99th percentile of the period error |measured - nominal|
and the number of overruns. Run: `source scripts/env.sh && python bench/bench_control_loop.py`.
"""

from __future__ import annotations

import argparse
import functools
import threading
import time
from pathlib import Path

import numpy as np
import rclpy
from kinodyn_control.loop import ControlLoop
from rclpy.executors import SingleThreadedExecutor

from kinodyn_control import control_node

URDF = Path(__file__).resolve().parents[1] / "urdf" / "quadruped.urdf"
JOINTS = [f"{leg}_{j}" for leg in ("LF", "LH", "RF", "RH") for j in ("HAA", "HFE", "KFE")]


def run(rate: int, seconds: float) -> tuple[np.ndarray, int]:
    """Measured periods [s] and overrun count of one run of the node's loop at ``rate``."""
    params = {
        "update_rate": rate,
        "robot_description_file": URDF,
        "jsb.type": "kinodyn_control/JointStateBroadcaster",
        "imu.type": "kinodyn_control/ImuSensorBroadcaster",
        "imu.sensor_name": "imu_sensor",
        "pd.type": "kinodyn_control/JointPDController",
        "pd.joints": "[" + ",".join(JOINTS) + "]",
    }
    args = ["bench", "--ros-args", *(x for k, v in params.items() for x in ("-p", f"{k}:={v}"))]
    rclpy.init(args=args)
    control_node.ControlLoop = functools.partial(ControlLoop, record=int(rate * seconds) + 10)
    try:
        node = control_node.ControlNode()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        spinner = threading.Thread(target=executor.spin, daemon=True)
        spinner.start()
        time.sleep(seconds)
        assert node.loop is not None
        node.loop.stop()
        periods, overruns = node.loop.periods.copy(), node.loop.overruns
        executor.shutdown()
        node.destroy_node()
    finally:
        control_node.ControlLoop = ControlLoop
        rclpy.try_shutdown()
    return periods, overruns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    print(f"control_node, quadruped on GenericSystem, JSB + IMU + joint PD, {args.seconds:.0f} s per rate")
    print(
        f"{'rate [Hz]':>10} {'cycles':>8} {'median |err| [us]':>18} {'p99 |err| [us]':>15} "
        f"{'max [us]':>10} {'overruns':>9}"
    )
    for rate in (500, 1000):
        periods, overruns = run(rate, args.seconds)
        error = np.abs(periods - 1.0 / rate) * 1e6
        print(
            f"{rate:>10} {periods.size:>8} {np.median(error):>18.1f} {np.percentile(error, 99):>15.1f} "
            f"{error.max():>10.1f} {overruns:>9}"
        )


if __name__ == "__main__":
    main()
