"""The quadruped under the whole-body QP controller in kinodyn's simulator, without ROS.

    python examples/quadruped_wbc.py stand          # 10 s standing: base height held within 5 mm
    python examples/quadruped_wbc.py sway           # roll, pitch, yaw +-0.15 rad, height +-3 cm at 0.5 Hz
    python examples/quadruped_wbc.py three-legs     # CoM over three feet, force ramp, lift one foot 5 cm
    python examples/quadruped_wbc.py push           # 60 N lateral push for 0.2 s while standing
    python examples/quadruped_wbc.py all --control-hz 1000 --sim-dt 5e-4 --mode hierarchical

Each scenario starts from the nominal stance (urdf/README.md) and prints its figures (SI units). The
scenarios themselves are in wbc_scenarios.py, which the closed-loop test asserts on.
"""

from __future__ import annotations

import argparse

import numpy as np
from wbc_scenarios import Quadruped, push, stand, sway, three_legs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=("stand", "sway", "three-legs", "push", "all"))
    parser.add_argument("--control-hz", type=float, default=500.0, help="WBC rate [Hz] (default 500)")
    parser.add_argument("--sim-dt", type=float, default=1e-3, help="simulator step [s] (default 1e-3)")
    parser.add_argument("--mode", choices=("weighted", "hierarchical"), default="weighted")
    args = parser.parse_args()
    chosen = ("stand", "sway", "three-legs", "push") if args.scenario == "all" else (args.scenario,)
    np.set_printoptions(precision=4, suppress=True)
    for name in chosen:
        robot = Quadruped.build(args.control_hz, args.sim_dt, args.mode)
        print(f"--- {name} (WBC {args.control_hz:g} Hz, {args.mode}; sim dt {args.sim_dt:g} s, rk4)")
        if name == "stand":
            f = stand(robot)
            print(f"{f.duration:.1f} s: base height within {f.max_height_error * 1e3:.2f} mm of its start, "
                  f"CoM within {f.max_com_error * 1e3:.2f} mm, feet slipped <= {f.max_slip * 1e3:.3f} mm, "
                  f"final max |v| {f.final_speed:.2e}")
        elif name == "sway":
            f = sway(robot)
            print(f"RMS error after {f.settle:.0f} s (roll, pitch, yaw) {f.rms_angles * 1e3} mrad, height "
                  f"{f.rms_height * 1e3:.3f} mm; max over the run {f.max_angles * 1e3} mrad, "
                  f"{f.max_height * 1e3:.2f} mm; feet slipped <= {f.max_slip * 1e3:.2f} mm")
        elif name == "three-legs":
            f = three_legs(robot)
            print(f"CoM {f.support_margin * 1e3:.1f} mm inside the support triangle at the release; torque "
                  f"jump at the ramp start (t = {f.switch_times[0]:.3f} s) {f.torque_jumps[0]:.1%}, at the "
                  f"release (t = {f.switch_times[1]:.3f} s) {f.torque_jumps[1]:.1%}, largest tick-to-tick "
                  f"{f.max_tick_jump:.1%}; foot lifted {f.lift * 1e3:.1f} mm; base height within "
                  f"{f.max_height_error * 1e3:.2f} mm; stance feet slipped <= {f.max_slip * 1e3:.2f} mm")
        else:
            f = push(robot)
            print(f"{f.force:g} N for {f.duration:g} s: feet slipped <= {f.max_slip * 1e3:.2f} mm, base "
                  f"moved <= {f.max_base_offset * 1e3:.1f} mm, CoM back within "
                  f"{f.final_com_error * 1e3:.2f} mm")


if __name__ == "__main__":
    main()
