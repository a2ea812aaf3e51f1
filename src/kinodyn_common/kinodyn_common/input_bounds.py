"""Bounds that refuse finite but absurd inputs like NaN, before they reach an algorithm.

- Joint positions: a joint with two finite URDF limits within ``[lower - margin, upper + margin]``
  (``joint_position_margin``: joint encoders read a little past the limits); a continuous (or otherwise
  unbounded) joint within ``±continuous_position_bound`` (1e6 rad by default: sin and cos of such an angle are
  still accurate to 1e-10, while at 1e16 rad the angle's own rounding exceeds a turn).
- Velocities, accelerations, wrenches: a magnitude bound each (``check_magnitude``).
- Pose targets of a frame: within the frame's reach from the root link plus a margin (``reach_radius``).

``docs/nodes/*.md`` lists the parameters of each node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from kinodyn.model import JOINT_PRISMATIC

from kinodyn_common.conversions import InputError, JointStateError
from kinodyn_common.parameters import declare_non_negative, declare_positive

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rclpy.node import Node

    from kinodyn import Model


@dataclass(frozen=True)
class JointBounds:
    """Accepted position range per joint, in the order of ``names``."""

    names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray

    @classmethod
    def from_model(cls, model: Model, margin: float, continuous_bound: float) -> JointBounds:
        """Limits of the model's movable joints widened by ``margin``; ``±continuous_bound`` where a limit is
        infinite."""
        first = model.nq - len(model.joint_names)  # the floating base's 7 coordinates come first
        lower, upper = model.lower_limit[first:], model.upper_limit[first:]
        lower = np.where(np.isfinite(lower), lower - margin, -continuous_bound)
        upper = np.where(np.isfinite(upper), upper + margin, continuous_bound)
        return cls(tuple(model.joint_names), lower, upper)

    def check(self, names: Sequence[str], values: np.ndarray) -> np.ndarray:
        """``values`` of the joints ``names`` (a subset of ``self.names``), unchanged; raises JointStateError
        naming every joint outside its range."""
        position = {n: i for i, n in enumerate(self.names)}
        index = [position[n] for n in names]
        lower, upper = self.lower[index], self.upper[index]
        outside = (values < lower) | (values > upper)
        if np.any(outside):
            details = ", ".join(
                f"{n} = {v:.6g} not in [{lo:.6g}, {hi:.6g}]"
                for n, v, lo, hi, out in zip(names, values, lower, upper, outside, strict=True)
                if out
            )
            raise JointStateError(
                "position_out_of_bounds",
                f"joint positions outside the URDF limits plus joint_position_margin (or "
                f"±continuous_position_bound for unbounded joints): {details}",
                "position",
            )
        return values

    def check_q(self, q: np.ndarray) -> np.ndarray:
        """A full position vector in the order of ``names``, checked."""
        return self.check(self.names, q)


def check_magnitude(values: np.ndarray, bound: float, what: str, parameter: str) -> np.ndarray:
    """``values`` unchanged when every ``|value| <= bound``; otherwise InputError naming ``parameter``."""
    if values.size and float(np.max(np.abs(values))) > bound:
        raise InputError(
            "magnitude_out_of_bounds",
            f"{what} {np.max(np.abs(values)):.6g} exceeds {parameter} = {bound:g} in magnitude",
            what,
        )
    return values


def reach_radius(model: Model, frame: str) -> float:
    """An upper bound on ``|p|`` of ``frame``'s origin in the root link over all configurations within the
    joint limits: the sum, along the chain from the root, of the joint offsets and the largest travel of each
    prismatic joint (rotations keep lengths). Infinite for a floating base or an unbounded prismatic joint."""
    if model.floating_base:
        return float("inf")
    fid = model.frame_id(frame)
    radius = float(np.linalg.norm(model.frame_translation[fid]))
    body = int(model.frame_body[fid])
    while body > 0:
        radius += float(np.linalg.norm(model.joint_translation[body]))
        if model.joint_type[body] == JOINT_PRISMATIC:  # q_body = multiplier q[idx_q] + offset (mimic)
            iq = int(model.idx_q[body])
            travel = max(abs(model.lower_limit[iq]), abs(model.upper_limit[iq]))
            radius += float(abs(model.joint_multiplier[body]) * travel + abs(model.joint_offset[body]))
        body = int(model.parent[body])
    return radius


def check_reach(T: np.ndarray, reach: float, margin: float, frame: str) -> np.ndarray:
    """A target pose ``T`` (root <- target) of ``frame``, unchanged when its position is within ``reach +
    margin`` of the root link; otherwise InputError."""
    distance = float(np.linalg.norm(T[:3, 3]))
    if distance > reach + margin:
        raise InputError(
            "target_out_of_reach",
            f"target position is {distance:.6g} m from the root link, beyond the reach of {frame!r} "
            f"({reach:.6g} m from the URDF) plus ik_target_margin ({margin:g} m)",
        )
    return T


def declare_joint_bounds(node: Node, model: Model) -> JointBounds:
    """Declare `joint_position_margin` and `continuous_position_bound` and build the model's JointBounds."""
    return JointBounds.from_model(
        model,
        declare_non_negative(node, "joint_position_margin", 0.1),
        declare_positive(node, "continuous_position_bound", 1e6),
    )

