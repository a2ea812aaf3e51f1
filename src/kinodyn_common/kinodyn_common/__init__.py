"""ROS 2 helpers shared by the kinodyn nodes and controllers: running a node, parameters, problem logs,
message conversions and checks, the robot description (docs/nodes/README.md)."""
