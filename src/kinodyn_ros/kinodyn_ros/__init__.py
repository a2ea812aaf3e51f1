"""ROS 2 nodes of kinodyn: thin adapters between messages and the core (ARCHITECTURE.md §4)."""
