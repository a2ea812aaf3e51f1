"""kinodyn: URDF-driven rigid-body kinematics, dynamics, estimation, control and simulation.

The core never imports ROS. See ARCHITECTURE.md §2 for the public API.
"""
