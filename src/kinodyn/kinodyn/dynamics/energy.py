"""Kinetic and potential energy (Robot Dynamics lecture notes (ETH), §3.4.2-3.4.3, (3.28)-(3.34))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from numpy import ndarray

from kinodyn._kernels import dyn_energy as _k
from kinodyn._kernels.entry import IN1, KF, KI, Kernel
from kinodyn.dynamics._inputs import F64, vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_KINETIC_ENERGY = Kernel(_k.kinetic_energy, KI, KF, IN1, IN1)
_POTENTIAL_ENERGY = Kernel(_k.potential_energy, KI, KF, IN1)


def kinetic_energy(model: Model, q: Any, v: Any) -> float:
    """``T = 1/2 v^T M(q) v`` [J], summed body by body (Robot Dynamics lecture notes (ETH), (3.28)-(3.31))."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != model._v_shape:
        v = vector(v, model.nv, "v")
    ki, kf = model.kernel_data
    return _KINETIC_ENERGY.call(ki, kf, q, v)


def potential_energy(model: Model, q: Any) -> float:
    """``U = -sum_i m_i g^T c_i`` [J] over the moving bodies, zero at the world origin
    (Robot Dynamics lecture notes (ETH), (3.32)-(3.33))."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    ki, kf = model.kernel_data
    return _POTENTIAL_ENERGY.call(ki, kf, q)
