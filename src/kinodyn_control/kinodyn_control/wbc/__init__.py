"""The `wbc` node's logic without rclpy nodes (docs/nodes/wbc.md): the joint command and its checks, the arm's
operational space controller, the legged adapter over kinodyn.control.locomotion, the base-state matching."""
