"""Centre of mass and its Jacobian over the moving bodies.

A fixed-base model excludes the links welded to the world (as Pinocchio, docs/conventions.md).
CoM Jacobian: mass-weighted sum of the body CoM point Jacobians (Robot Dynamics lecture notes (ETH), §2.8.5,
(2.154); the notes use CoM Jacobians without defining them, this is the standard form).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn._kernels import kinematics as _k
from kinodyn._kernels.entry import IN1, KF, KI, OUT1, OUT2, Kernel

if TYPE_CHECKING:
    from kinodyn.model import Model

_CENTER_OF_MASS = Kernel(_k.center_of_mass, KI, KF, IN1, OUT1)
_COM_JACOBIAN = Kernel(_k.com_jacobian, KI, KF, IN1, OUT2)


def _check_mass(model: Model) -> None:
    if not model.mass[1:].sum() > 0.0:
        raise ValueError(f"model {model.name!r} has no mass on its moving bodies; no centre of mass")


def com(model: Model, q: Any) -> np.ndarray:
    """World position (3,) of the centre of mass of the moving bodies."""
    q = model.check_q(q)
    _check_mass(model)
    out = np.empty(3)
    ki, kf = model.kernel_data
    _CENTER_OF_MASS.call(ki, kf, q, out)
    return out


def com_jacobian(model: Model, q: Any) -> np.ndarray:
    """3 x nv Jacobian of the world centre of mass: ``d com/dt = J v``."""
    q = model.check_q(q)
    _check_mass(model)
    out = np.empty((3, model.nv))
    ki, kf = model.kernel_data
    _COM_JACOBIAN.call(ki, kf, q, out)
    return out
