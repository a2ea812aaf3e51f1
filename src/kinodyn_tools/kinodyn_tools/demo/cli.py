"""The `kinodyn demo` subcommand's options (kept apart from run.py, so `kinodyn up` does not import the
scenario runner and rclpy to build its parser)."""

from __future__ import annotations

import argparse
from pathlib import Path


def positive_seconds(text: str) -> float:
    """A number of seconds > 0 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value:g}")
    return value


def add_demo_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `demo` subcommand and its options (each with the environment variable scripts/demo.sh maps)."""
    demo = commands.add_parser("demo", help="run a demo: the quadruped closed loop through a scenario, with "
                               "the browser view, a bag, a report and a summary (docs/demo.md)")
    demo.add_argument("demo", nargs="?", default="quadruped",
                      help="quadruped (closed loop and scenario, docs/demo.md), quadruped_rt (the same in "
                      "one process: the estimator and the wbc as controllers), quadruped_mpc (the wbc "
                      "driven by the centroidal MPC), or any graph of config/ (run as `kinodyn up`); "
                      "KINODYN_DEMO in scripts/demo.sh (default quadruped)")
    demo.add_argument("--headless", action="store_true",
                      help="no browser view (CI); KINODYN_DEMO_HEADLESS=1")
    demo.add_argument("--short", action="store_true",
                      help="the short scenario (a few simulated seconds); KINODYN_DEMO_SHORT=1")
    demo.add_argument("--scenario", type=Path, metavar="FILE",
                      help="a scenario YAML file instead of the demo's own (docs/closed-loop.md)")
    demo.add_argument("--runs-dir", type=Path, default=Path("runs"), metavar="DIR",
                      help="where runs/<timestamp>/ is created (default ./runs)")
    demo.add_argument("--seconds", type=positive_seconds, metavar="S",
                      help="a plain graph: stop after S seconds (KINODYN_DEMO_SECONDS); default: at Ctrl-C")
