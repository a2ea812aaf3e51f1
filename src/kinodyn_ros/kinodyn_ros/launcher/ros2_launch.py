"""A graph file as a launch description, for `ros2 launch kinodyn_bringup <graph>.launch.py` (native ROS 2).

Each launch file in launch/ is three lines around `launch_description("<graph>")`, so `ros2 launch` and
`kinodyn up` start the same nodes with the same parameters from the same file, installed in
`share/kinodyn_bringup/config/<graph>.yaml`. As under `kinodyn up`, any node that exits shuts the launch down.
`launch` and `launch_ros` are imported here, not at module level: they exist only on a native ROS 2.
"""

from __future__ import annotations

from typing import Any

from kinodyn_ros.launcher.graph import installed_graph, load_graph


def launch_description(graph_name: str) -> Any:
    """A `launch.LaunchDescription` with one `launch_ros.actions.Node` per node of the graph file."""
    from launch import LaunchDescription
    from launch.actions import Shutdown
    from launch_ros.actions import Node

    graph = load_graph(installed_graph(graph_name))
    return LaunchDescription(
        [
            Node(
                package=node.package,
                executable=node.executable,
                name=node.name,
                parameters=[node.parameters],
                remappings=list(node.remappings.items()),
                output="screen",
                on_exit=[Shutdown(reason=f"node '{node.name}' exited")],
            )
            for node in graph.nodes
        ]
    )
