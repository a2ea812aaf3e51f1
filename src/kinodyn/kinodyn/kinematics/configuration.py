"""Configuration-space integration and difference (Lie group on the free flyer, as Pinocchio).

``integrate(q, v, dt)``: joints ``q + v dt``; the free-flyer base moves by ``T exp(dt [v_b; w_b])``
with the body-frame twist of v. ``difference(q0, q1)`` is its inverse for ``dt = 1``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn._kernels import kinematics as _k

if TYPE_CHECKING:
    from kinodyn.model import Model


def integrate(model: Model, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
    """Configuration reached from ``q`` by holding velocity ``v`` for ``dt`` seconds."""
    q = model.check_q(q)
    v = model.check_v(v)
    out = np.empty(model.nq)
    _k.integrate(q, v, float(dt), model.floating_base, out)
    return out


def difference(model: Model, q0: Any, q1: Any) -> np.ndarray:
    """Velocity v (nv,) with ``integrate(q0, v, 1) == q1`` (shortest rotation for the base)."""
    q0 = model.check_q(q0)
    q1 = model.check_q(q1)
    out = np.empty(model.nv)
    _k.difference(q0, q1, model.floating_base, out)
    return out
