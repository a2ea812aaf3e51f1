"""Joint-space inertia matrix by the composite-rigid-body algorithm (Seed 001 §8.4, (8.57))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn._kernels import dyn_crba as _k
from kinodyn._kernels.entry import IN1, KF, KI, OUT2, Kernel
from kinodyn.dynamics._inputs import vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_MASS_MATRIX = Kernel(_k.mass_matrix, KI, KF, IN1, OUT2)


def mass_matrix(model: Model, q: Any) -> np.ndarray:
    """``M(q)`` (nv x nv), symmetric positive definite, both triangles filled (Seed 000 §3.5, (3.43))."""
    out = np.empty((model.nv, model.nv))
    ki, kf = model.kernel_data
    _MASS_MATRIX.call(ki, kf, vector(q, model.nq, "q"), out)
    return out
