"""Shared algebra of the motion tasks: optional reference vectors and the PD task acceleration.

Robot Dynamics lecture notes (ETH) §3.9 (3.80) ``wdot = J qdd + Jdot v`` and
(3.89) ``wdot* = kp e + kd (w* - w)`` (with the feed-forward ``a_ref`` the notes omit); the rows
(§3.10 (3.110)) are ``base.MotionTask``'s.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types

from kinodyn.control.wbc import numpy_blas
from kinodyn.kernel import FLOAT, IN1, IN2, OUT1, OUT2, Kernel
from kinodyn.spatial.rotations import as_vector

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def row_selection(mask: np.ndarray) -> slice | np.ndarray:
    """The selected rows of a boolean ``mask`` (at least one True): a slice when they are consecutive (a
    view of the task's arrays, no copy: a control tick's cost), else their indices."""
    rows = np.flatnonzero(mask)
    if rows[-1] - rows[0] + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


def optional_vector(value: ArrayLike | None, dim: int, name: str) -> np.ndarray:
    """A finite ``dim`` vector, zeros for ``None``."""
    return np.zeros(dim) if value is None else as_vector(value, dim, name)


def pd_acceleration(a_ref: np.ndarray, kp: np.ndarray, error: np.ndarray, kd: np.ndarray,
                    v_ref: np.ndarray, velocity: np.ndarray) -> np.ndarray:
    """``a_ref + kp e + kd (v_ref - v)``: the desired task acceleration of (3.89) (float64 vectors of one
    size: the tasks' gains, references and rows)."""
    out = np.empty(error.size)
    _PD.call(a_ref, kp, error, kd, v_ref, velocity, out)
    return out


@njit(cache=True, inline="always")
def pd_entry(a_ref: float, kp: float, error: float, kd: float, v_ref: float, velocity: float) -> float:
    """One entry of ``pd_acceleration``, in numpy's order of operations (the same bits)."""
    return (a_ref + kp * error) + kd * (v_ref - velocity)


@njit(cache=True)
def pd_law(a_ref: np.ndarray, kp: np.ndarray, error: np.ndarray, kd: np.ndarray, v_ref: np.ndarray,
           velocity: np.ndarray, out: np.ndarray) -> None:
    """``pd_acceleration`` into ``out``."""
    for i in range(out.size):
        out[i] = pd_entry(a_ref[i], kp[i], error[i], kd[i], v_ref[i], velocity[i])


@njit(cache=True, inline="always")
def weighted(weight: np.ndarray) -> bool:
    """Whether some weight is non-zero (``weight.any()``)."""
    for w in weight:  # noqa: SIM110 (a loop: numba compiles no generator in any())
        if w != 0.0:
            return True
    return False


@njit(cache=True, inline="always")
def clip_factor(x: np.ndarray, limit: float) -> float:
    """The factor ``com._clipped`` scales ``x`` by: ``limit / norm`` when the norm (numpy's ``sqrt(x @ x)``)
    exceeds ``limit``, else 1.0 (``x * 1.0`` is ``x``, bit for bit); ``limit`` inf: 1.0."""
    if limit == math.inf:
        return 1.0
    norm = math.sqrt(numpy_blas.dot(x, x))
    return limit / norm if norm > limit else 1.0


@njit(cache=True)
def motion_rows(J: np.ndarray, v: np.ndarray, axes: np.ndarray, a_ref: np.ndarray, kp: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                error: np.ndarray, kd: np.ndarray, v_ref: np.ndarray, bias: np.ndarray, weight: np.ndarray,
                A: np.ndarray, b: np.ndarray, selected_error: np.ndarray, max_error: float,
                max_acceleration: float) -> None:
    """A motion task's weighted rows in one pass (``base.MotionTask``): row ``i`` is on axis ``axes[i]`` of
    the task's rows ``J`` (all axes) and full-size vectors (``a_ref``, ``kp``, ``error``, ``kd``, ``v_ref``,
    ``bias`` = ``Jdot v``). ``A[i, :cols(J)] = J_axis sqrt(w_i)``, ``b_i = (pd_i - bias) sqrt(w_i)`` with the
    velocity ``J_axis v`` of numpy's product of the selected rows (``numpy_blas.matvec``),
    ``selected_error_i = error[axis]``; the selected error enters the PD clipped to the norm ``max_error``
    and the desired acceleration is clipped to ``max_acceleration`` (``clip_factor``; inf: not clipped): the
    operations of ``qdd_rows`` followed by ``base.scaled_rows``, in their order (the same bits). All weights
    0: only ``b = 0`` and the error (``A`` stays as it is, zero)."""
    m, nv = axes.size, J.shape[1]
    for i in range(m):
        selected_error[i] = error[axes[i]]
    if not weighted(weight):
        for i in range(m):
            b[i] = 0.0
        return
    rows = np.empty((m, nv))
    for i in range(m):
        for j in range(nv):
            rows[i, j] = J[axes[i], j]
    velocity = np.empty(m)
    numpy_blas.matvec(rows, v, velocity)
    to_error = clip_factor(selected_error, max_error)
    for i in range(m):  # b holds the desired acceleration until its clipping
        r = axes[i]
        b[i] = pd_entry(a_ref[r], kp[r], selected_error[i] * to_error, kd[r], v_ref[r], velocity[i])
    to_acceleration = clip_factor(b, max_acceleration)
    for i in range(m):
        r = axes[i]
        scale = math.sqrt(weight[i])
        for j in range(nv):
            A[i, j] = rows[i, j] * scale
        b[i] = (b[i] * to_acceleration - bias[r]) * scale


_PD = Kernel(pd_law, IN1, IN1, IN1, IN1, IN1, IN1, OUT1)
AXES = types.Array(types.int64, 1, "C")
MOTION_ROWS = Kernel(motion_rows, IN2, IN1, AXES, IN1, IN1, IN1, IN1, IN1, IN1, IN1, OUT2, OUT1, OUT1,
                     FLOAT, FLOAT)
