"""Declaring node parameters with validation: a bad value raises naming the parameter and what it needs."""

from __future__ import annotations

import math

from rclpy.node import Node


def declare_positive(node: Node, name: str, default: float) -> float:
    """Declare a float parameter that must be positive and finite, and return its value."""
    value = node.declare_parameter(name, default).value
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"parameter {name} must be a positive finite number, got {value}")
    return value
