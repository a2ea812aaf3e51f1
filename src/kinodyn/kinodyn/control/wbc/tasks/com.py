"""Centre-of-mass task: the CoM position, all three world axes or a masked subset.

Robot Dynamics lecture notes (ETH) §3.9 (3.80), (3.89) and §3.10 (3.110) with the CoM Jacobian:
``cdd = J_com qdd + Jdot_com v``;
Robot Dynamics Essential §3.7 (95) (the CoM acceleration is what the contact forces change).
``e = c_ref - c``, ``b = a_ref + kp e + kd (v_ref - J_com v) - Jdot_com v``, masked.
Saturation (both ``inf`` by default, norms over the masked rows, direction kept): ``max_error`` clips ``e``
before the PD, ``max_acceleration`` the desired ``a_ref + kp e + kd (v_ref - v)``. A legged robot's CoM
accelerates horizontally by at most ``mu g`` (the friction cones of its stance feet, Robot Dynamics
Essential §3.7 (95)); a
larger demand only buys itself from the other tasks of a weighted QP (the base height), and a clipped
demand dominated by ``kp e`` leaves too little damping (a lateral limit cycle after a push, measured).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.wbc.tasks._motion import MOTION_ROWS, optional_vector, pd_acceleration
from kinodyn.control.wbc.tasks.base import MaskedMotionTask
from kinodyn.spatial.rotations import as_vector

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.evaluation import Evaluation


class ComTask(MaskedMotionTask):
    """Track a reference CoM position (world). ``kp``, ``kd``, ``weight``: a scalar or 3 values over
    ``[x y z]``; ``mask``: 3 booleans selecting the rows."""

    def __init__(self, kp: ArrayLike, kd: ArrayLike, weight: ArrayLike = 1.0, mask: ArrayLike = (True, True,
                 True),
                 name: str = "com") -> None:
        super().__init__(name, 3, mask, kp, kd, weight)
        self.position: np.ndarray | None = None
        self.velocity = np.zeros(3)
        self.acceleration = np.zeros(3)
        self._own = (np.zeros(3), np.zeros(3), np.zeros(3))  # written in place by the unchecked setter
        self.max_error = math.inf  # m, norm of the masked position error at most
        self.max_acceleration = math.inf  # m/s^2, norm of the masked desired acceleration at most

    def set_reference(self, position: ArrayLike, velocity: ArrayLike | None = None,
                      acceleration: ArrayLike | None = None, *,
                      checked: bool = True) -> None:
        """Reference CoM position, velocity and acceleration, world (``None``: zero). ``checked=False``: a
        trusted caller (the locomotion controller, every tick) guarantees 3 finite numbers each, no ``None``;
        they are copied into arrays the task owns, in place, without the checks (the same values)."""
        if not checked:
            own = self._own
            own[0][:], own[1][:], own[2][:] = position, velocity, acceleration
            self.position, self.velocity, self.acceleration = own
            return
        position = as_vector(position, 3, f"task {self.name!r} reference CoM position")
        velocity = optional_vector(velocity, 3, f"task {self.name!r} reference CoM velocity")
        acceleration = optional_vector(acceleration, 3, f"task {self.name!r} reference CoM acceleration")
        self.position, self.velocity, self.acceleration = position, velocity, acceleration

    def write_weighted_rows(self, ev: Evaluation, A: np.ndarray, b: np.ndarray) -> None:
        """In one compiled pass after the product, the saturation included (``_motion.motion_rows``: the
        numbers of ``qdd_rows``, its norms numpy's)."""
        if self.position is None:
            super().write_weighted_rows(ev, A, b)  # (its error: no reference)
            return
        error = np.empty(self.dim)
        MOTION_ROWS.call(ev.com_jacobian, ev.v, self._axes, self.acceleration, self.kp,
                         self.position - ev.com, self.kd, self.velocity, ev.com_bias_acceleration,
                         self.weight, A, b, error, float(self.max_error), float(self.max_acceleration))
        self.error = error

    def qdd_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        if self.position is None:
            raise RuntimeError(f"task {self.name!r} has no reference: call set_reference(position) first")
        m, J = self._select, ev.com_jacobian
        e = (self.position - ev.com)[m]
        self.error = e
        desired = pd_acceleration(self.acceleration[m], self.kp[m], _clipped(e, self.max_error), self.kd[m],
                                  self.velocity[m], J[m] @ ev.v)
        return J[m], _clipped(desired, self.max_acceleration) - ev.com_bias_acceleration[m]


def _clipped(x: np.ndarray, limit: float) -> np.ndarray:
    """``x`` scaled to the norm ``limit`` when longer."""
    if limit == math.inf:  # (x is finite)
        return x
    norm = math.sqrt(float(x @ x))
    return x * (limit / norm) if norm > limit else x
