"""Configuration-space integration and difference (Lie group on the free flyer, as Pinocchio).

``integrate(q, v, dt)``: joints ``q + v dt``; the free-flyer base moves by ``T exp(dt [v_b; w_b])``
with the body-frame twist of v. ``difference(q0, q1)`` is its inverse for ``dt = 1``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn._kernels import kinematics as _k
from kinodyn._kernels.entry import BOOL, FLOAT, IN1, OUT1, Kernel

if TYPE_CHECKING:
    from kinodyn.model import Model

_INTEGRATE = Kernel(_k.integrate, IN1, IN1, FLOAT, BOOL, OUT1)
_DIFFERENCE = Kernel(_k.difference, IN1, IN1, BOOL, OUT1)


def integrate(model: Model, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
    """Configuration reached from ``q`` by holding velocity ``v`` for ``dt`` seconds."""
    q = model.check_q(q)
    v = model.check_v(v)
    out = np.empty(model.nq)
    _INTEGRATE.call(q, v, float(dt), bool(model.floating_base), out)
    return out


def difference(model: Model, q0: Any, q1: Any) -> np.ndarray:
    """Velocity v (nv,) with ``integrate(q0, v, 1) == q1`` (shortest rotation for the base)."""
    q0 = model.check_q(q0)
    q1 = model.check_q(q1)
    out = np.empty(model.nv)
    _DIFFERENCE.call(q0, q1, bool(model.floating_base), out)
    return out
