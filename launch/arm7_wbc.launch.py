"""`ros2 launch kinodyn_bringup arm7_wbc.launch.py`: the graph of config/arm7_wbc.yaml.

The same nodes and parameters as `kinodyn up config/arm7_wbc.yaml`; the graph file is the single source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kinodyn_tools.launcher.ros2_launch import launch_description

if TYPE_CHECKING:
    from launch import LaunchDescription


def generate_launch_description() -> LaunchDescription:
    return launch_description("arm7_wbc")
