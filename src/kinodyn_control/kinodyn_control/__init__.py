"""ros2_control-style hardware layer of kinodyn."""
