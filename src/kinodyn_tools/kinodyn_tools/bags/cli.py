"""The `kinodyn bag record | play | info | reindex` subcommands (docs/bags.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kinodyn_tools.bags import info, play, record, reindex

if TYPE_CHECKING:
    import argparse

_VERBS = {
    "record": (record, "record topics into a rosbag2 bag (MCAP by default) until Ctrl-C"),
    "play": (play, "publish a bag's messages with their recorded timing"),
    "info": (info, "print a bag's files, duration, start, end and topics as `ros2 bag info`"),
    "reindex": (reindex, "rebuild metadata.yaml and the MCAP summary from what the files hold"),
}


def add_bag_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bag` with its verbs on the `kinodyn` command's subparsers."""
    bag = commands.add_parser("bag", help="record, play and inspect rosbag2 bags (docs/bags.md)")
    verbs = bag.add_subparsers(dest="verb", required=True, metavar="{record,play,info,reindex}")
    for name, (module, text) in _VERBS.items():
        parser = verbs.add_parser(name, help=text, description=(module.__doc__ or "").split("\n\n")[0])
        module.add_arguments(parser)
        parser.set_defaults(run_bag=module.run)


def run_bag(args: argparse.Namespace) -> int:
    """Run the chosen verb; its exit code."""
    code: int = args.run_bag(args)
    return code
