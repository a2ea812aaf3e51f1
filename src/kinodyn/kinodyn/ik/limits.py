"""Joint limits as hard inequality rows ``lower <= δ <= upper`` on an IK step δ over the active joints.

Each limit returns bounds on the step over the active velocity coordinates (the rows of the QP
inequality ``l <= I δ <= u``); several limits intersect. ``ConfigurationLimit`` keeps
``q + δ`` within the URDF position limits, ``VelocityLimit`` keeps ``|δ| <= v_max dt``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn.model import Model

FloatArray = np.ndarray


def active_indices(model: Model, active_joints: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
    """``(v_indices, q_indices)`` of the joints the IK may move; ``q_indices`` is -1 on the free flyer.

    ``None`` means every degree of freedom (with a floating base, the 6 base coordinates first).
    Joints are 1-dof (revolute, continuous, prismatic), so a joint's q and v entries are one each.
    """
    names = model.joint_names if active_joints is None else list(active_joints)
    if len(set(names)) != len(names):
        raise ValueError(f"active_joints lists a joint twice: {names}")
    bodies = [model.joint_body[model.joint_id(name)] for name in names]
    v_idx = [int(model.idx_v[b]) for b in bodies]
    q_idx = [int(model.idx_q[b]) for b in bodies]
    if active_joints is None and model.floating_base:
        v_idx = list(range(6)) + v_idx
        q_idx = [-1] * 6 + q_idx
    order = np.argsort(v_idx)
    return np.asarray(v_idx, dtype=np.int64)[order], np.asarray(q_idx, dtype=np.int64)[order]


class ConfigurationLimit:
    """``lower <= q + δ <= upper`` for the active joints (URDF position limits; infinite for continuous)."""

    def __init__(self, model: Model, q_indices: np.ndarray) -> None:
        joint = q_indices >= 0
        self._rows = np.flatnonzero(joint)
        self._q = q_indices[joint]
        self._size = q_indices.shape[0]
        self.lower = model.lower_limit[self._q]
        self.upper = model.upper_limit[self._q]

    def coordinate_bounds(self) -> tuple[FloatArray, FloatArray]:
        """Limits of each active coordinate (``∓inf`` on the free flyer's)."""
        lower = np.full(self._size, -np.inf)
        upper = np.full(self._size, np.inf)
        lower[self._rows] = self.lower
        upper[self._rows] = self.upper
        return lower, upper

    def step_bounds(self, q: FloatArray, dt: float = 1.0) -> tuple[FloatArray, FloatArray]:
        """Bounds on the step over the active coordinates (``dt`` is unused: position limits)."""
        lower = np.full(self._size, -np.inf)
        upper = np.full(self._size, np.inf)
        lower[self._rows] = self.lower - q[self._q]
        upper[self._rows] = self.upper - q[self._q]
        return lower, upper

    def project(self, q: FloatArray) -> FloatArray:
        """Copy of q with the active joints clipped into their limits."""
        q = q.copy()
        q[self._q] = np.clip(q[self._q], self.lower, self.upper)
        return q


class VelocityLimit:
    """``|δ| <= v_max dt`` for the active coordinates (URDF velocity limits; infinite where absent)."""

    def __init__(self, model: Model, v_indices: np.ndarray) -> None:
        self.velocity = model.velocity_limit[v_indices]

    def step_bounds(self, q: FloatArray, dt: float = 1.0) -> tuple[FloatArray, FloatArray]:
        """Bounds ``∓v_max dt`` on a step taken over ``dt`` seconds."""
        return -self.velocity * dt, self.velocity * dt


def intersect_bounds(limits: Sequence[ConfigurationLimit | VelocityLimit], q: FloatArray, size: int,
                     dt: float = 1.0) -> tuple[FloatArray, FloatArray]:
    """Intersection of the limits' step bounds (``±inf`` when no limit applies)."""
    lower = np.full(size, -np.inf)
    upper = np.full(size, np.inf)
    for limit in limits:
        lo, hi = limit.step_bounds(q, dt)
        np.maximum(lower, lo, out=lower)
        np.minimum(upper, hi, out=upper)
    return lower, upper
