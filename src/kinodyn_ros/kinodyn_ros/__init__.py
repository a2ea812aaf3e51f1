"""ROS 2 nodes of kinodyn: thin adapters between messages and the core (docs/nodes/README.md)."""
