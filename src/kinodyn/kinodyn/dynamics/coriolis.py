"""Coriolis matrix (Modern Robotics, §8.1.2, (8.17)-(8.19), Prop. 8.1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy import empty, ndarray

from kinodyn._kernels import dyn_coriolis as _k
from kinodyn._kernels.entry import IN1, KF, KI, OUT2, Kernel
from kinodyn.dynamics._inputs import F64, vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_CORIOLIS_MATRIX = Kernel(_k.coriolis_matrix, KI, KF, IN1, IN1, OUT2)


def coriolis_matrix(model: Model, q: Any, v: Any) -> np.ndarray:
    """``C(q, v)`` (nv x nv) of the Christoffel symbols: ``C v = b(q, v)`` (the velocity part of
    ``nonlinear_effects``) and ``dM/dt - 2C`` is skew-symmetric (as Pinocchio's computeCoriolisMatrix)."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != model._v_shape:
        v = vector(v, model.nv, "v")
    out = empty((model.nv, model.nv))
    ki, kf = model.kernel_data
    _CORIOLIS_MATRIX.call(ki, kf, q, v, out)
    return out
