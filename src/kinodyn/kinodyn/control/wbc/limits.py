"""Joint limits of the whole-body QP: torque limits, and position/velocity limits as acceleration bounds.

Not in the texts: standard material. Torque limits are the URDF ``<limit effort>``. Position
and velocity limits become bounds on the joint accelerations over a look-ahead ``horizon`` (the scheme of
Del Prete, "Joint position and velocity bounds in discrete-time acceleration/torque control of robot
manipulators", RA-L 2018, in its simple form): with ``h`` the horizon,

- velocity: ``(v_min - v) / h <= qdd <= (v_max - v) / h``;
- position: ``2 (q_min - q - v h) / h^2 <= qdd <= 2 (q_max - q - v h) / h^2`` (the joint stops at the
  limit after ``h`` at constant acceleration);

intersected and capped at ``max_acceleration`` in magnitude. A joint already faster than its velocity limit
is only kept from speeding up further (its bound on that side is 0, not the deceleration that would bring
it back within ``h``): a foot landing late and fast can make that deceleration contradict the contact
constraints, and the QP infeasible. Where the two ranges do not intersect (a joint already past a position
limit and moving outwards), the bound becomes the single value that decelerates hardest towards the
allowed range, so the QP stays feasible and the joint is brought back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.kernel import FLOAT, IN1, IN2, OUT1, Kernel

if TYPE_CHECKING:
    from kinodyn.model import Model

DEFAULT_HORIZON = 0.02  # s
DEFAULT_MAX_ACCELERATION = 1.0e3  # rad/s^2 or m/s^2


@dataclass(frozen=True)
class JointLimits:
    """Bounds on the actuated joints of ``model`` (the last ``n`` velocity coordinates)."""

    effort: np.ndarray  # (n,) >= 0, inf where the URDF gives none
    lower: np.ndarray  # (n,) position, -inf for continuous joints
    upper: np.ndarray
    velocity: np.ndarray  # (n,) >= 0
    horizon: float = DEFAULT_HORIZON
    max_acceleration: float = DEFAULT_MAX_ACCELERATION
    velocity_sides: np.ndarray = field(init=False, repr=False, compare=False)  # (2, n): -velocity, velocity
    position_sides: np.ndarray = field(init=False, repr=False, compare=False)  # (2, n): lower, upper

    @classmethod
    def from_model(cls, model: Model, horizon: float = DEFAULT_HORIZON,
                   max_acceleration: float = DEFAULT_MAX_ACCELERATION) -> JointLimits:
        if not (math.isfinite(horizon) and horizon > 0.0):
            raise ValueError(f"joint limit horizon must be finite and > 0 s, got {horizon}")
        if not (math.isfinite(max_acceleration) and max_acceleration > 0.0):
            raise ValueError(f"max_acceleration must be finite and > 0, got {max_acceleration}")
        first_v = 6 if model.floating_base else 0
        first_q = 7 if model.floating_base else 0
        one_q_per_v = model.nq - first_q == model.nv - first_v
        lower = model.lower_limit[first_q:] if one_q_per_v else np.full(model.nv - first_v, -np.inf)
        upper = model.upper_limit[first_q:] if one_q_per_v else np.full(model.nv - first_v, np.inf)
        return cls(model.effort_limit[first_v:].copy(), lower.copy(), upper.copy(),
                   model.velocity_limit[first_v:].copy(), horizon, max_acceleration)

    def __post_init__(self) -> None:
        # both sides of each limit in one array, for acceleration_bounds (frozen: set once here)
        object.__setattr__(self, "velocity_sides", np.stack((-self.velocity, self.velocity)))
        object.__setattr__(self, "position_sides", np.stack((self.lower, self.upper)))

    def acceleration_bounds(self, q_joints: np.ndarray,
                            v_joints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` joint-acceleration bounds at the joint positions and velocities given."""
        lower, upper = np.empty(self.effort.size), np.empty(self.effort.size)
        _BOUNDS.call(self.position_sides, self.velocity_sides, np.asarray(q_joints, dtype=float),
                            np.asarray(v_joints, dtype=float), self.horizon, self.horizon**2,
                            self.max_acceleration, lower, upper)
        return lower, upper


@njit(cache=True)
def acceleration_bounds(position_sides: np.ndarray, velocity_sides: np.ndarray, q: np.ndarray, v: np.ndarray,
                        h: float, h2: float, a: float, lower: np.ndarray, upper: np.ndarray) -> None:
    """``JointLimits.acceleration_bounds`` into ``lower``, ``upper`` (the module doc's rule, joint by joint;
    ``h2 = h**2``): the velocity bounds ``(v_limit - v) / h`` kept from pushing a joint already too fast
    further, intersected with the position bounds ``2 (q_limit - q - v h) / h^2``; past a limit, the tighter
    bound on both sides; capped at ``+-a``."""
    for j in range(q.size):
        step = v[j] * h
        lo = max(min((velocity_sides[0, j] - v[j]) / h, 0.0), 2.0 * (position_sides[0, j] - q[j] - step) / h2)
        hi = min(max((velocity_sides[1, j] - v[j]) / h, 0.0), 2.0 * (position_sides[1, j] - q[j] - step) / h2)
        if lo > hi:  # past a limit: the acceleration that turns the joint back hardest (the tighter one wins)
            lo = hi if hi < 0.0 else lo
            hi = lo
        lower[j] = min(max(lo, -a), a)
        upper[j] = min(max(hi, -a), a)


_BOUNDS = Kernel(acceleration_bounds, IN2, IN2, IN1, IN1, FLOAT, FLOAT, FLOAT, OUT1, OUT1)
