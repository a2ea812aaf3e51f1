"""Shared algebra of the motion tasks: optional reference vectors and the PD task acceleration.

Seed 000 §3.9 (3.80) ``wdot = J qdd + Jdot v`` and (3.89) ``wdot* = kp e + kd (w* - w)`` (with the
feed-forward ``a_ref`` the seed omits); the rows (§3.10 (3.110)) are ``base.MotionTask``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from kinodyn._kernels.entry import IN1, OUT1, Kernel
from kinodyn.spatial.rotations import as_vector


def row_selection(mask: np.ndarray) -> slice | np.ndarray:
    """The selected rows of a boolean ``mask`` (at least one True): a slice when they are consecutive (a
    view of the task's arrays, no copy: a control tick's cost), else their indices."""
    rows = np.flatnonzero(mask)
    if rows[-1] - rows[0] + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


def optional_vector(value: Any, dim: int, name: str) -> np.ndarray:
    """A finite ``dim`` vector, zeros for ``None``."""
    return np.zeros(dim) if value is None else as_vector(value, dim, name)


def pd_acceleration(a_ref: np.ndarray, kp: np.ndarray, error: np.ndarray, kd: np.ndarray,
                    v_ref: np.ndarray, velocity: np.ndarray) -> np.ndarray:
    """``a_ref + kp e + kd (v_ref - v)``: the desired task acceleration of (3.89) (float64 vectors of one
    size: the tasks' gains, references and rows)."""
    out = np.empty(error.size)
    _PD.call(a_ref, kp, error, kd, v_ref, velocity, out)
    return out


@njit(cache=True)
def pd_law(a_ref: np.ndarray, kp: np.ndarray, error: np.ndarray, kd: np.ndarray, v_ref: np.ndarray,
           velocity: np.ndarray, out: np.ndarray) -> None:
    """``pd_acceleration`` into ``out``, entry by entry in numpy's order of operations (the same bits)."""
    for i in range(out.size):
        out[i] = (a_ref[i] + kp[i] * error[i]) + kd[i] * (v_ref[i] - velocity[i])


_PD = Kernel(pd_law, IN1, IN1, IN1, IN1, IN1, IN1, OUT1)
