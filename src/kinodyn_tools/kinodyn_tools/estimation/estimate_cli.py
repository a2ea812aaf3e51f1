"""The `kinodyn estimate` subcommand's arguments (docs/offline-estimation.md); the work is in ``offline``,
imported only when the command runs (the estimator takes seconds to import; `kinodyn up` need not wait)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

USAGE_ERROR = 2
CONTACT_TOPICS = {"message": "/contacts", "schedule": "/contact_schedule"}
"""Default contacts topic per contact_source (the node's topic names); detection reads none."""
STORAGE_CHOICES = ("mcap", "sqlite3")


def add_estimate_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `estimate` on the `kinodyn` command's subparsers."""
    parser = commands.add_parser(
        "estimate", help="re-estimate the base state from a bag, offline (docs/offline-estimation.md)",
        description="Run the state_estimator's filter over a bag in header-stamp order and write the "
                    "estimates as a bag (/odometry/filtered, /diagnostics).",
    )
    parser.add_argument("bag", help="input rosbag2 bag directory")
    parser.add_argument("--urdf", required=True, help="URDF file of the robot (its root link is the base)")
    parser.add_argument("--output", required=True, help="output bag directory (must not exist)")
    parser.add_argument("--params", help="ROS 2 params file of the state_estimator node")
    parser.add_argument("--imu-topic", default="/imu/data", help="sensor_msgs/Imu topic (default /imu/data)")
    parser.add_argument("--joint-states-topic", default="/joint_states",
                        help="sensor_msgs/JointState topic (default /joint_states)")
    parser.add_argument("--contacts-topic",
                        help="kinodyn_interfaces/ContactStates topic (default /contacts; /contact_schedule "
                             "for contact_source schedule; none is read for detection)")
    parser.add_argument("--ground-truth-topic",
                        help="nav_msgs/Odometry of the true base: print the drift and error figures")
    parser.add_argument("--storage", choices=STORAGE_CHOICES, default="mcap", help="output storage (mcap)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def run_estimate(args: argparse.Namespace) -> int:
    """`kinodyn estimate`: 0 when estimates were written, 1 when the filter produced none or input messages
    were refused for their stamps (ahead of their bag time, or of another clock domain: the estimates leave
    them out), 2 on bad input (one error line)."""
    # imported when the command runs: the other `kinodyn` commands start without the estimator's kernels
    from kinodyn.sim.collision import collision_spheres  # noqa: PLC0415
    from kinodyn_control.estimation.pipeline import EstimatorParameters  # noqa: PLC0415

    from kinodyn_tools.bags.reader import BagError  # noqa: PLC0415
    from kinodyn_tools.estimation import offline  # noqa: PLC0415

    try:
        params = offline.parameters_from_file(args.params) if args.params else EstimatorParameters()
        contacts = None
        if params.contact_source != "detection":
            contacts = args.contacts_topic or CONTACT_TOPICS[params.contact_source]
        topics = offline.Topics(args.imu_topic, args.joint_states_topic, contacts, args.ground_truth_topic)
        model = offline.load_model(args.urdf)
        result = offline.estimate_bag(args.bag, model, params, args.output, topics, args.storage,
                                      progress=not args.quiet, spheres=collision_spheres(args.urdf))
    except (BagError, ValueError, KeyError) as exc:
        print(f"kinodyn estimate: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    print(offline.summary_text(result, args.output))
    if not result.estimates.t:
        print(f"kinodyn estimate: no estimate was produced ({result.status})", file=sys.stderr)
        return 1
    refused = {cause: result.counters.get(f"dropped_{cause}", 0) for cause in ("ahead", "clock")}
    if any(refused.values()):
        print(f"kinodyn estimate: error: {refused['ahead']} input message(s) stamped more than "
              f"max_stamp_lead ahead of their bag time and {refused['clock']} of another clock domain were "
              f"refused; the estimates in {args.output} leave them out (the lines above name topic, stamp "
              "and bag time)",
              file=sys.stderr)
        return 1
    return 0
