"""Legged locomotion under the whole-body QP on a physics backend, without ROS.

    python examples/quadruped_trot.py stand-up       # sit down, stand up
    python examples/quadruped_trot.py in-place       # trot on the spot: drift, height
    python examples/quadruped_trot.py forward        # 0.5 m/s forward: velocity RMSE after the transient
    python examples/quadruped_trot.py sideways       # 0.2 m/s to the left
    python examples/quadruped_trot.py yaw            # 0.6 rad/s turn on the spot
    python examples/quadruped_trot.py push           # 120 N lateral push for 0.2 s while trotting
    python examples/quadruped_trot.py push-standing  # 60 N lateral push for 0.2 s standing
    python examples/quadruped_trot.py random         # 60 s of random commands (seeded, new every 2-4 s)
    python examples/quadruped_trot.py pushes         # the 120 N trotting push at 8 gait phases, both ways
    python examples/quadruped_trot.py all --backend mujoco --robot hexapod --seconds 6

Each scenario starts from the nominal stance (the quadruped of urdf/README.md, or the test hexapod with a
tripod gait) on kinodyn's simulator or MuJoCo (``--backend``) and prints its figures (SI units). ``all``
runs every scenario but ``random`` and ``pushes``. The scenarios are in locomotion_scenarios.py, which the
closed-loop tests assert on.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import numpy as np
from locomotion_scenarios import Legged, push, random_run, stand_up, trot
from wbc_scenarios import ControlError

from kinodyn import sim

if TYPE_CHECKING:
    from collections.abc import Callable

COMMANDS = {"in-place": (0.0, 0.0, 0.0), "forward": (0.5, 0.0, 0.0), "sideways": (0.0, 0.2, 0.0),
            "yaw": (0.0, 0.0, 0.6)}
PUSHES = {"push": ("trot", 120.0), "push-standing": ("stand", 60.0)}
SCENARIOS = ("stand-up", *COMMANDS, *PUSHES, "random", "pushes")
PHASES = 8  # "pushes": starts at k/PHASES of a gait period (one period of trotting first), k = 0 .. PHASES-1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=(*SCENARIOS, "all"))
    parser.add_argument("--robot", choices=("quadruped", "hexapod"), default="quadruped")
    parser.add_argument("--backend", choices=sim.backend_names(), default=sim.DEFAULT_BACKEND)
    parser.add_argument("--random-seconds", type=float, default=60.0, help="random run length [s] (60)")
    parser.add_argument("--seed", type=int, default=0, help="of the random commands (default 0)")
    parser.add_argument("--seconds", type=float, default=6.0, help="trot duration [s] (default 6)")
    parser.add_argument("--settle", type=float, default=2.0, help="left out of the RMSE [s] (default 2)")
    args = parser.parse_args()
    np.set_printoptions(precision=4, suppress=True)
    for name in SCENARIOS[:-2] if args.scenario == "all" else (args.scenario,):
        print(f"--- {args.robot} {name} on {args.backend} (control 500 Hz, sim dt 1 ms, rk4)")
        try:
            scenario(name, lambda: getattr(Legged, args.robot)(backend=args.backend), args)
        except ControlError as exc:
            print(f"FAILED: {exc}")


def pushes(make: Callable[[], Legged]) -> None:
    """The 120 N, 0.2 s lateral push while trotting in place, from a fresh start each time, at ``PHASES``
    evenly spaced phases of the gait, to +y and -y; 2 s after each; a failure is printed and the rest run."""
    for k in range(PHASES):
        for direction in (1.0, -1.0):
            robot = make()
            before = robot.controller.params.period * (1.0 + k / PHASES)
            try:
                f = push(robot, direction * 120.0, before=before)
            except ControlError as exc:
                print(f"phase {k}/{PHASES} {direction * 120:+g} N: FAILED: {exc}")
                continue
            print(f"phase {k}/{PHASES} {f.force:+g} N: base >= {f.min_height_ratio:.1%}, lowest body point "
                  f"{f.lowest_body:.3f} m, moved <= {f.max_offset:.3f} m, speed at the end "
                  f"{f.final_speed:.3f} m/s, fallback solves {len(f.notes)}")


def scenario(name: str, make: Callable[[], Legged], args: argparse.Namespace) -> None:
    """Run scenario ``name`` on a robot from ``make()`` and print its figures."""
    if name == "pushes":
        pushes(make)
        return
    robot = make()
    if name == "stand-up":
        f = stand_up(robot)
        print(f"sat at {f.sit_height:.3f} m; stood up to within {f.final_height_error * 1e3:.2f} mm of "
              f"{robot.nominal_height:.3f} m, overshoot {f.max_overshoot * 1e3:.2f} mm, tilt <= "
              f"{np.degrees(f.max_tilt):.2f} deg, feet slipped <= {f.max_slip * 1e3:.2f} mm")
    elif name in PUSHES:
        mode, force = PUSHES[name]
        f = push(robot, force, mode=mode)
        print(f"{f.force:g} N for {f.duration:g} s ({f.mode}): base >= {f.min_height_ratio:.1%} of "
              f"its nominal height, lowest body point {f.lowest_body:.3f} m, base moved <= "
              f"{f.max_offset:.3f} m, speed at the end {f.final_speed:.3f} m/s")
    elif name == "random":
        r = random_run(robot, args.random_seconds, args.seed)
        print(f"{len(r.commands)} commands within (vx, vy, wz) +-{np.abs(r.commands[:, 1:]).max(axis=0)}"
              f" over {r.seconds:g} s: " + (f"FELL at {r.fell_at:.2f} s ({r.reason})" if r.fell_at
                                              is not None else "no fall")
              + f"; RMSE (each command's first second left out) {r.rmse_linear:.4f} m/s, "
              f"{r.rmse_yaw_rate:.4f} rad/s; base >= {r.min_height_ratio:.1%} of nominal, lowest body "
              f"point {r.lowest_body:.3f} m")
    else:
        f = trot(robot, np.array(COMMANDS[name]), args.seconds, args.settle)
        print(f"command {f.command}: RMSE after {f.settle:g} s {f.rmse_linear:.4f} m/s, "
              f"{f.rmse_yaw_rate:.4f} rad/s; mean (vx, vy, wz) {f.mean_velocity}; drift "
              f"{f.drift * 1e3:.1f} mm, yaw {f.yaw_drift * 1e3:.1f} mrad; base >= "
              f"{f.min_height_ratio:.1%} of nominal, lowest body point {f.lowest_body:.3f} m; QP median "
              f"{f.solve_time_median * 1e3:.3f} ms, p99 {f.solve_time_p99 * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
