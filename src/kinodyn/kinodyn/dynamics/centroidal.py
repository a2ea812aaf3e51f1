"""Centroidal momentum matrix (Robot Dynamics Essential, §3.5, (96))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy import empty, ndarray

from kinodyn._kernels import dyn_crba as _k
from kinodyn._kernels.entry import IN1, KF, KI, OUT2, Kernel
from kinodyn.dynamics._inputs import F64, vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_CENTROIDAL_MOMENTUM_MATRIX = Kernel(_k.centroidal_momentum_matrix, KI, KF, IN1, OUT2)


def centroidal_momentum_matrix(model: Model, q: Any) -> np.ndarray:
    """``A_G`` (6 x nv): ``A_G v = [m v_com; h_G]``, linear momentum and angular momentum about the
    centre of mass, world axes (as pinocchio.ccrba). Fixed base: the link welded to the world is excluded."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    out = empty((6, model.nv))
    ki, kf = model.kernel_data
    _CENTROIDAL_MOMENTUM_MATRIX.call(ki, kf, q, out)
    return out
