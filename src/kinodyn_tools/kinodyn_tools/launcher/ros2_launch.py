"""A graph file as a launch description, for `ros2 launch kinodyn_bringup <graph>.launch.py` (native ROS 2).

Each launch file in launch/ is three lines around `launch_description("<graph>")`, so `ros2 launch` and
`kinodyn up` start the same nodes with the same parameters from the same file, installed in
`share/kinodyn_bringup/config/<graph>.yaml`. As under `kinodyn up`, any node that exits shuts the launch down.
`launch` and `launch_ros` are imported here, not at module level: they exist only on a native ROS 2.

Every launch file also takes `rviz:=true` (default false), which starts `rviz2` with the repository's RViz
config (`config/kinodyn.rviz`: RobotModel, TF, estimated and true odometry, the viewer's markers) and
`rviz_fixed_frame` (default `odom`; the root link for a fixed-base arm). Closing RViz does not stop the graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kinodyn_tools.launcher.graph import BRINGUP_PACKAGE, installed_graph, load_graph
from kinodyn_tools.launcher.packages import package_share

if TYPE_CHECKING:
    from launch import Action, LaunchDescription  # type: ignore[attr-defined, unused-ignore]  # mypy from the root sees launch/ there

RVIZ_CONFIG = "config/kinodyn.rviz"
"""The RViz config, relative to the share directory of kinodyn_bringup."""


def rviz_actions() -> list[Action]:
    """The `rviz` and `rviz_fixed_frame` arguments, and rviz2 with the config when `rviz` is true."""
    from launch.actions import DeclareLaunchArgument  # noqa: PLC0415  (launch exists only on a native ROS 2)
    from launch.conditions import IfCondition  # noqa: PLC0415  (launch exists only on a native ROS 2)
    from launch.substitutions import LaunchConfiguration  # noqa: PLC0415  (launch exists only on a native ROS 2)
    from launch_ros.actions import Node  # noqa: PLC0415  (launch exists only on a native ROS 2)

    return [
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz (config/kinodyn.rviz)"),
        DeclareLaunchArgument("rviz_fixed_frame", default_value="odom", description="RViz's fixed frame"),
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            arguments=["-d", str(package_share(BRINGUP_PACKAGE) / RVIZ_CONFIG), "-f",
                       LaunchConfiguration("rviz_fixed_frame")],
            output="screen",
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
    ]


def launch_description(graph_name: str) -> LaunchDescription:
    """A `launch.LaunchDescription` with one `launch_ros.actions.Node` per node of the graph file, then
    ``rviz_actions()``."""
    from launch import LaunchDescription  # type: ignore[attr-defined, unused-ignore]  # noqa: PLC0415  (as above)
    from launch.actions import Shutdown  # noqa: PLC0415  (launch exists only on a native ROS 2)
    from launch_ros.actions import Node  # noqa: PLC0415  (launch exists only on a native ROS 2)

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
        + rviz_actions()
    )
