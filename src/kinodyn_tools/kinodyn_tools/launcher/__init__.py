"""`kinodyn up`: start a node graph from a parameter file where `ros2 launch` is not available."""
