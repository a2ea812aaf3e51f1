"""The `kinodyn` command: start a node graph (`up`), show it (`list`), list the nodes one can use (`nodes`).

    kinodyn up config/planar_demo.yaml [--timeout SECONDS] [--stop-timeout SECONDS]
    kinodyn list config/planar_demo.yaml
    kinodyn nodes
    kinodyn bag record|play|info ...      (rosbag2 bags: kinodyn_tools.bags, docs/bags.md)
    kinodyn estimate BAG --urdf URDF --output OUT ...   (offline re-estimation, docs/offline-estimation.md)
    kinodyn report BAG [--output report.html] [--urdf URDF] ...   (HTML run report, docs/report.md)
    kinodyn demo [quadruped|<graph>] [--headless] [--short] ...   (the README's main command, docs/demo.md)

A graph may also be named without its path (`kinodyn up planar_demo`): it is then looked up in the installed
`share/kinodyn_bringup/config/`. A graph file that cannot be started gives one error line and exit code 2.
"""

from __future__ import annotations

import argparse
import sys

import yaml

from kinodyn_tools.bags.cli import add_bag_parser, run_bag
from kinodyn_tools.demo.cli import add_demo_parser
from kinodyn_tools.estimation.estimate_cli import add_estimate_parser, run_estimate
from kinodyn_tools.launcher.graph import Graph, GraphError, graph_path, load_graph
from kinodyn_tools.launcher.packages import PackageLookupError, kinodyn_packages, package_executables
from kinodyn_tools.launcher.supervisor import DEFAULT_STOP_TIMEOUT, USAGE_ERROR, up
from kinodyn_tools.report.cli import add_report_parser, run_report


def graph_listing(graph: Graph) -> str:
    """The graph as YAML: per node its package, executable, the file that runs, parameters and remappings."""
    nodes = {
        node.name: {
            "package": node.package,
            "executable": node.executable,
            "path": str(node.executable_path),
            "parameters": node.parameters,
            "remappings": node.remappings,
        }
        for node in graph.nodes
    }
    header = f"# {graph.path}" + (f": {graph.description}" if graph.description else "")
    text: str = yaml.safe_dump(nodes, sort_keys=False)
    return header + "\n" + text


def executables_listing() -> str:
    """`<package> <executable>` per line for every kinodyn package, as `ros2 pkg executables` prints them."""
    return "".join(
        f"{package} {name}\n" for package in kinodyn_packages() for name in package_executables(package)
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kinodyn", description="Start and inspect kinodyn node graphs (docs/launcher.md)."
    )
    commands = parser.add_subparsers(dest="command", required=True,
                                     metavar="{up,list,nodes,bag,estimate,report,demo}")
    up = commands.add_parser(
        "up", help="start every node of a graph; stop all on Ctrl-C, SIGTERM, --timeout or when one exits"
    )
    up.add_argument("graph", help="graph file (config/<graph>.yaml) or the name of an installed graph")
    up.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="stop the graph after this time (exit code 0)"
    )
    up.add_argument(
        "--stop-timeout", type=float, default=DEFAULT_STOP_TIMEOUT, metavar="SECONDS",
        help="when stopping, wait this long after SIGINT, then after SIGTERM, before escalating (default 5)",
    )
    show = commands.add_parser("list", help="print a graph's nodes with their executables and parameters")
    show.add_argument("graph", help="graph file (config/<graph>.yaml) or the name of an installed graph")
    commands.add_parser("nodes", help="list the executables of the kinodyn packages")
    add_bag_parser(commands)
    add_estimate_parser(commands)
    add_report_parser(commands)
    add_demo_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "bag":
        return run_bag(args)
    if args.command == "estimate":
        return run_estimate(args)
    if args.command == "report":
        return run_report(args)
    if args.command == "demo":
        from kinodyn_tools.demo.run import run_demo  # noqa: PLC0415  (rclpy and the scenario runner only for the demo)

        return run_demo(args)
    if args.command == "up":
        try:
            return up(args.graph, timeout=args.timeout, stop_timeout=args.stop_timeout)
        except ValueError as error:  # a timeout that is not positive
            parser.error(str(error))
    try:
        if args.command == "nodes":
            sys.stdout.write(executables_listing())
            return 0
        graph = load_graph(graph_path(args.graph))
    except (GraphError, PackageLookupError) as error:
        print(f"kinodyn: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    sys.stdout.write(graph_listing(graph))
    return 0


if __name__ == "__main__":
    sys.exit(main())
