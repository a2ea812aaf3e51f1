"""ros2_control-style hardware layer of kinodyn (see ARCHITECTURE.md §4)."""
