"""Joint-space inertia matrix by the composite-rigid-body algorithm (Modern Robotics, §8.4, (8.57))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy import empty, ndarray

from kinodyn._kernels import dyn_crba as _k
from kinodyn._kernels.entry import IN1, KF, KI, OUT2, Kernel
from kinodyn.dynamics._inputs import F64, vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_MASS_MATRIX = Kernel(_k.mass_matrix, KI, KF, IN1, OUT2)


def mass_matrix(model: Model, q: Any) -> np.ndarray:
    """``M(q)`` (nv x nv), symmetric positive definite, both triangles filled (Robot Dynamics lecture notes
    (ETH), §3.5, (3.43))."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    nv = model.nv
    out = empty((nv, nv))
    ki, kf = model.kernel_data
    _MASS_MATRIX.call(ki, kf, q, out)
    return out
