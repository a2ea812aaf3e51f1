"""`ros2 launch kinodyn_bringup arm7_viewer.launch.py`: the graph of config/arm7_viewer.yaml.

The same nodes and parameters as `kinodyn up config/arm7_viewer.yaml`; the graph file is the single source.
"""

from kinodyn_tools.launcher.ros2_launch import launch_description


def generate_launch_description():
    return launch_description("arm7_viewer")
