"""Kinetic and potential energy (Seed 000 §3.4.2-3.4.3, (3.28)-(3.34))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kinodyn._kernels import dyn_energy as _k
from kinodyn._kernels.entry import IN1, KF, KI, Kernel
from kinodyn.dynamics._inputs import vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_KINETIC_ENERGY = Kernel(_k.kinetic_energy, KI, KF, IN1, IN1)
_POTENTIAL_ENERGY = Kernel(_k.potential_energy, KI, KF, IN1)


def kinetic_energy(model: Model, q: Any, v: Any) -> float:
    """``T = 1/2 v^T M(q) v`` [J], summed body by body (Seed 000 (3.28)-(3.31))."""
    ki, kf = model.kernel_data
    return _KINETIC_ENERGY.call(ki, kf, vector(q, model.nq, "q"), vector(v, model.nv, "v"))


def potential_energy(model: Model, q: Any) -> float:
    """``U = -sum_i m_i g^T c_i`` [J] over the moving bodies, zero at the world origin
    (Seed 000 (3.32)-(3.33))."""
    ki, kf = model.kernel_data
    return _POTENTIAL_ENERGY.call(ki, kf, vector(q, model.nq, "q"))
