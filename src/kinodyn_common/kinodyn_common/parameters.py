"""Declaring node parameters with validation: a bad value raises naming the parameter and what it needs, and a
parameter the node does not declare (a misspelling) is an error too, not a silent default."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from rclpy.node import Node


def declare_positive(node: Node, name: str, default: float) -> float:
    """Declare a float parameter that must be positive and finite, and return its value."""
    value: float = node.declare_parameter(name, default).value
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"parameter {name} must be a positive finite number, got {value}")
    return value


def declare_non_negative(node: Node, name: str, default: float) -> float:
    """Declare a float parameter that must be finite and >= 0, and return its value."""
    value: float = node.declare_parameter(name, default).value
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"parameter {name} must be a finite number >= 0, got {value}")
    return value


def reject_undeclared_parameters(node: Node, known: Collection[str] | None = None) -> None:
    """Raise ValueError naming every parameter given to ``node`` (``--ros-args -p``, a params file) that is
    not in ``known`` (default: the parameters the node declared), with the accepted names.

    rclpy ignores such overrides silently, so ``rate_hzz: 10.0`` would leave ``rate_hz`` at its default.
    Call it once the node has declared all its parameters. The overrides are read from rclpy's
    ``Node._parameter_overrides`` (what ``declare_parameter`` consults; rclpy has no public accessor).
    """
    accepted = set(node._parameters if known is None else known)  # noqa: SLF001  (rclpy: no public accessor)
    unknown = sorted(set(node._parameter_overrides) - accepted)  # noqa: SLF001  (rclpy: no public accessor)
    if unknown:
        raise ValueError(
            f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for node "
            f"{node.get_name()} (misspelled, or not used with this configuration); its parameters are: "
            f"{', '.join(sorted(accepted))}"
        )
