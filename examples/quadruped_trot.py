"""Legged locomotion under the whole-body QP in kinodyn's simulator, without ROS (issue 12, point 2).

    python examples/quadruped_trot.py stand-up       # sit down, stand up
    python examples/quadruped_trot.py in-place       # trot on the spot: drift, height
    python examples/quadruped_trot.py forward        # 0.5 m/s forward: velocity RMSE after the transient
    python examples/quadruped_trot.py sideways       # 0.2 m/s to the left
    python examples/quadruped_trot.py yaw            # 0.6 rad/s turn on the spot
    python examples/quadruped_trot.py push           # 120 N lateral push for 0.2 s while trotting
    python examples/quadruped_trot.py all --robot hexapod --seconds 6

Each scenario starts from the nominal stance (the quadruped of urdf/README.md, or the test hexapod with a
tripod gait) and prints its figures (SI units). The scenarios are in locomotion_scenarios.py, which the
closed-loop test asserts on.
"""

from __future__ import annotations

import argparse

import numpy as np
from locomotion_scenarios import Legged, push_while_trotting, stand_up, trot

COMMANDS = {"in-place": (0.0, 0.0, 0.0), "forward": (0.5, 0.0, 0.0), "sideways": (0.0, 0.2, 0.0),
            "yaw": (0.0, 0.0, 0.6)}
SCENARIOS = ("stand-up", *COMMANDS, "push")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=(*SCENARIOS, "all"))
    parser.add_argument("--robot", choices=("quadruped", "hexapod"), default="quadruped")
    parser.add_argument("--seconds", type=float, default=6.0, help="trot duration [s] (default 6)")
    parser.add_argument("--settle", type=float, default=2.0, help="left out of the RMSE [s] (default 2)")
    args = parser.parse_args()
    np.set_printoptions(precision=4, suppress=True)
    for name in SCENARIOS if args.scenario == "all" else (args.scenario,):
        robot = getattr(Legged, args.robot)()
        print(f"--- {args.robot} {name} (control 500 Hz, sim dt 1 ms, rk4, soft contact)")
        if name == "stand-up":
            f = stand_up(robot)
            print(f"sat at {f.sit_height:.3f} m; stood up to within {f.final_height_error * 1e3:.2f} mm of "
                  f"{robot.nominal_height:.3f} m, overshoot {f.max_overshoot * 1e3:.2f} mm, tilt <= "
                  f"{np.degrees(f.max_tilt):.2f} deg, feet slipped <= {f.max_slip * 1e3:.2f} mm")
        elif name == "push":
            f = push_while_trotting(robot)
            print(f"{f.force:g} N for {f.duration:g} s while trotting: base >= {f.min_height_ratio:.1%} of "
                  f"its nominal height, lowest body point {f.lowest_body:.3f} m, base moved <= "
                  f"{f.max_offset:.3f} m, speed at the end {f.final_speed:.3f} m/s")
        else:
            f = trot(robot, np.array(COMMANDS[name]), args.seconds, args.settle)
            print(f"command {f.command}: RMSE after {f.settle:g} s {f.rmse_linear:.4f} m/s, "
                  f"{f.rmse_yaw_rate:.4f} rad/s; mean (vx, vy, wz) {f.mean_velocity}; drift "
                  f"{f.drift * 1e3:.1f} mm, yaw {f.yaw_drift * 1e3:.1f} mrad; base >= "
                  f"{f.min_height_ratio:.1%} of nominal, lowest body point {f.lowest_body:.3f} m; QP median "
                  f"{f.solve_time_median * 1e3:.3f} ms, p99 {f.solve_time_p99 * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
