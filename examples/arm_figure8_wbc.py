"""arm7 draws a figure-8 with the whole-body QP controller in kinodyn's simulator (no ROS).

The end effector follows ``kinodyn.control.trajectories.Figure8`` (0.1 m, 0.5 Hz, vertical y-z plane, as
``arm_figure8_osc.py``) with a 6-D ``FrameTask`` over a ``PostureTask`` (wbc_scenarios.arm7_figure8); the
controller knows nothing of the URDF's joint friction and damping. Prints the RMS errors after one period.

    python examples/arm_figure8_wbc.py [--seconds 6] [--control-hz 500] [--mode weighted|hierarchical]
"""

from __future__ import annotations

import argparse

from wbc_scenarios import arm7_figure8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="simulated time [s] (default 6)")
    parser.add_argument("--control-hz", type=float, default=500.0, help="WBC rate [Hz] (default 500)")
    parser.add_argument("--sim-dt", type=float, default=1e-3, help="simulator step [s] (default 1e-3)")
    parser.add_argument("--mode", choices=("weighted", "hierarchical"), default="weighted")
    args = parser.parse_args()
    f = arm7_figure8(args.control_hz, args.sim_dt, args.mode, duration=args.seconds)
    print(f"arm7 figure-8, WBC {args.control_hz:g} Hz {args.mode}: RMS after {f.settle:g} s: position "
          f"{f.rms_position * 1e3:.3f} mm, orientation {f.rms_orientation * 1e3:.2f} mrad; largest position "
          f"error {f.max_position * 1e3:.2f} mm (the start, on a reference already moving)")


if __name__ == "__main__":
    main()
