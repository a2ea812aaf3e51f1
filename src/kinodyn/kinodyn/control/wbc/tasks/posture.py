"""Posture task: the joint positions (not the floating base) towards a reference posture.

Robot Dynamics lecture notes (ETH) §3.9 (3.89) in joint space and §3.10 (3.110) with ``J = [0 I]`` over the
joint columns of
``qdd`` (the last ``nv - 6`` for a floating base) and ``Jdot v = 0``. ``e = q_ref ⊖ q`` over the joints
through ``model.difference`` (continuous joints: the plain angle difference, as their ``q`` is unbounded).
``b = a_ref + kp e + kd (v_ref - v_joints)``. Every joint of a kinodyn model has one coordinate in ``q``
and one in ``v``, so the joints' part of ``model.difference`` is its compiled kernel
(``kinodyn.kinematics.configuration.difference_kernel``) run on the joints' coordinates alone, without the
base. ``posture_acceleration`` computes ``e`` that way, and ``b``, for both the rows (``qdd_rows``) and the
weighted rows (``posture_rows``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.control._inputs import gain
from kinodyn.control.wbc.tasks._motion import optional_vector, pd_entry, weighted
from kinodyn.control.wbc.tasks.base import MotionTask
from kinodyn.kernel import IN1, INT, OUT1, OUT2, Kernel
from kinodyn.kinematics.configuration import difference_kernel
from kinodyn.spatial.rotations import as_vector

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.evaluation import Evaluation
    from kinodyn.model import Model


class PostureTask(MotionTask):
    """Hold or track the joints at ``q_ref`` (one value per joint, in ``model.joint_names`` order, within
    the URDF limits). ``kp``, ``kd``, ``weight``: a scalar or one value per joint."""

    def __init__(self, model: Model, q_ref: ArrayLike, kp: ArrayLike, kd: ArrayLike, weight: ArrayLike = 1.0,
                 name: str = "posture") -> None:
        self.model = model
        self._iq = 7 if model.floating_base else 0
        self._iv = 6 if model.floating_base else 0
        n = model.nv - self._iv
        super().__init__(name, n, weight)
        self.kp = gain(kp, n, f"task {name!r} kp")
        self.kd = gain(kd, n, f"task {name!r} kd")
        self._J = np.eye(n, model.nv, self._iv)
        self.set_reference(q_ref)

    def set_reference(self, q_ref: ArrayLike, v_ref: ArrayLike | None = None,
                      a_ref: ArrayLike | None = None) -> None:
        """Joint positions, velocities and accelerations (``None``: zero), within the URDF position and
        velocity limits."""
        n, label = self.dim, f"task {self.name!r}"
        q_ref = as_vector(q_ref, n, f"{label} reference joint positions")
        v_ref = optional_vector(v_ref, n, f"{label} reference joint velocities")
        a_ref = optional_vector(a_ref, n, f"{label} reference joint accelerations")
        lower, upper = self.model.lower_limit[self._iq:], self.model.upper_limit[self._iq:]
        v_max = self.model.velocity_limit[self._iv:]
        outside = np.flatnonzero((q_ref < lower) | (q_ref > upper) | (np.abs(v_ref) > v_max))
        if outside.size:
            names = [self.model.joint_names[k] for k in outside]
            raise ValueError(f"{label} reference outside the URDF limits for joints {names}: positions "
                             f"{q_ref[outside].tolist()} in [{lower[outside].tolist()}, "
                             f"{upper[outside].tolist()}], velocities {v_ref[outside].tolist()} within "
                             f"+-{v_max[outside].tolist()}; clip it to the limits")
        self.q_ref, self.v_ref, self.a_ref = q_ref, v_ref, a_ref

    def write_weighted_rows(self, ev: Evaluation, A: np.ndarray, b: np.ndarray) -> None:
        """``qdd_rows`` scaled by ``sqrt(weight)`` in one compiled pass (``posture_rows``)."""
        error = np.empty(self.dim)
        _POSTURE_ROWS.call(self.q_ref, ev.q[self._iq:], self.a_ref, self.kp, self.kd, self.v_ref,
                           ev.v[self._iv:], self.weight, self._iv, A, b, error)
        self.error = error

    def qdd_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        b, error = np.empty(self.dim), np.empty(self.dim)
        _POSTURE_ACCELERATION.call(self.q_ref, ev.q[self._iq:], self.a_ref, self.kp, self.kd, self.v_ref,
                                   ev.v[self._iv:], b, error)
        self.error = error
        return self._J, b


@njit(cache=True, inline="always")
def posture_acceleration(q_ref: np.ndarray, q: np.ndarray, a_ref: np.ndarray, kp: np.ndarray,
                         kd: np.ndarray, v_ref: np.ndarray, v: np.ndarray, b: np.ndarray,
                         error: np.ndarray) -> None:
    """The error ``q_ref ⊖ q`` over the joints (``difference_kernel``, no floating base) into ``error``
    and the right side of ``qdd_rows``, ``b = a_ref + kp e + kd (v_ref - v)`` (``_motion.pd_entry``), into
    ``b``."""
    difference_kernel(q, q_ref, False, error)
    for i in range(b.size):
        b[i] = pd_entry(a_ref[i], kp[i], error[i], kd[i], v_ref[i], v[i])


@njit(cache=True)
def posture_rows(q_ref: np.ndarray, q: np.ndarray, a_ref: np.ndarray, kp: np.ndarray, kd: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                 v_ref: np.ndarray, v: np.ndarray, weight: np.ndarray, column: int, A: np.ndarray,
                 b: np.ndarray, error: np.ndarray) -> None:
    """The weighted rows of ``qdd_rows`` (``J = [0 I]`` from ``column``) into ``A`` (zero on entry: only the
    diagonal, ``1 * sqrt(w)``, is written) and ``b``, and the error: ``posture_acceleration`` then
    ``base.scaled_rows``' products (the same bits as ``qdd_rows`` scaled). All weights 0: ``b = 0`` and the
    error."""
    posture_acceleration(q_ref, q, a_ref, kp, kd, v_ref, v, b, error)
    if not weighted(weight):
        b[:] = 0.0
        return
    for i in range(b.size):
        scale = math.sqrt(weight[i])
        A[i, column + i] = scale
        b[i] *= scale


_POSTURE_ACCELERATION = Kernel(posture_acceleration, IN1, IN1, IN1, IN1, IN1, IN1, IN1, OUT1, OUT1)
_POSTURE_ROWS = Kernel(posture_rows, IN1, IN1, IN1, IN1, IN1, IN1, IN1, IN1, INT, OUT2, OUT1, OUT1)
