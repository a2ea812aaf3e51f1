"""The `kinodyn report` subcommand's arguments (docs/report.md); the work is in ``build``, imported only when
the command runs (matplotlib and the core take a second to import; `kinodyn up` need not wait)."""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

USAGE_ERROR = 2
ROLE_HELP = {
    "estimate": "nav_msgs/Odometry of the estimated base (default /odometry/filtered)",
    "truth": "nav_msgs/Odometry of the true base (default: the simulator's /<system>/odometry)",
    "contacts": "kinodyn_interfaces/ContactStates measured (default: the simulator's /<system>/contacts)",
    "schedule": "kinodyn_interfaces/ContactStates of the planned stance (default /contact_schedule)",
    "cmd-vel": "geometry_msgs/TwistStamped body velocity command (default /wbc/cmd_vel)",
    "joint-states": "sensor_msgs/JointState with efforts (default /joint_states)",
    "commands": "kinodyn_interfaces/JointPDCommand (default: the bag's one JointPDCommand topic)",
    "diagnostics": "diagnostic_msgs/DiagnosticArray with the wbc's status (default /diagnostics)",
    "robot-description": "std_msgs/String URDF, used without --urdf (default /robot_description)",
}


def add_report_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `report` on the `kinodyn` command's subparsers."""
    parser = commands.add_parser(
        "report", help="write a self-contained HTML run report of a bag (docs/report.md)",
        description="Read a bag once and write report.html: base estimate vs truth, velocity tracking, "
                    "contact forces and schedule, joint torques against their limits, WBC solve times.")
    parser.add_argument("bag", help="rosbag2 bag directory")
    parser.add_argument("--output", help="HTML file to write (default: report.html beside the bag directory)")
    parser.add_argument("--urdf", help="URDF of the robot, for the effort limits (default: the bag's "
                                       "robot_description)")
    for role, text in ROLE_HELP.items():
        parser.add_argument(f"--{role}-topic", metavar="TOPIC", help=text)
    parser.add_argument("--wbc-name", default="wbc",
                        help="DiagnosticStatus name of the wbc node (default wbc)")
    parser.add_argument("--cmd-vel-timeout", type=float, default=0.5, metavar="SECONDS",
                        help="a command older than this counts as zero, as the wbc node does (default 0.5)")
    parser.add_argument("--max-force", type=float, default=1e6, metavar="NEWTONS",
                        help="a contact force with a component beyond this is a fault: its message is left "
                             "out and counted (default 1e6)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def run_report(args: argparse.Namespace) -> int:
    """`kinodyn report`: 0 when the page was written, 2 on bad input (one error line)."""
    # imported when the command runs: the other `kinodyn` commands start without rosbags and matplotlib
    from kinodyn_tools.bags.reader import BagError  # noqa: PLC0415
    from kinodyn_tools.report.build import load_model, make_report  # noqa: PLC0415
    from kinodyn_tools.report.series import ReportTopics  # noqa: PLC0415

    if not (math.isfinite(args.cmd_vel_timeout) and args.cmd_vel_timeout > 0):
        print(f"kinodyn report: error: --cmd-vel-timeout must be a positive number of seconds, got "
              f"{args.cmd_vel_timeout:g}", file=sys.stderr)
        return USAGE_ERROR
    if not (math.isfinite(args.max_force) and args.max_force > 0):
        print(f"kinodyn report: error: --max-force must be a positive number of newtons, got "
              f"{args.max_force:g}", file=sys.stderr)
        return USAGE_ERROR
    chosen = {role.replace("-", "_"): getattr(args, f"{role.replace('-', '_')}_topic") for role in ROLE_HELP}
    topics = ReportTopics(**{k: v for k, v in chosen.items() if v is not None}, wbc_name=args.wbc_name,
                          max_force=args.max_force)
    try:
        model = load_model(args.urdf) if args.urdf else None
        report = make_report(args.bag, args.output, model, topics, args.cmd_vel_timeout,
                             progress=not args.quiet)
    except (BagError, ValueError, OSError) as exc:
        print(f"kinodyn report: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print("\n".join(report.summary))
    print(f"wrote {report.output}")
    return 0
