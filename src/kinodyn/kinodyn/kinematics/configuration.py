"""Configuration-space integration and difference (Lie group on the free flyer, as Pinocchio).

``integrate(q, v, dt)``: joints ``q + v dt``; the free-flyer base moves by ``T exp(dt [v_b; w_b])``
with the body-frame twist of v. ``difference(q0, q1)`` is its inverse for ``dt = 1``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.kernel import BOOL, FLOAT, IN1, OUT1, Kernel
from kinodyn.spatial.compiled import (
    cross3,
    matvec3,
    quaternion_multiply,
    quaternion_to_rotation,
    so3_coefficients,
    so3_left_jacobian_inverse_coefficient,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.model import Model


SERIES_BELOW = 1e-8
"""Below this angle (rad) or half-angle sine, the quaternion ratios by their series (the division loses its
precision)."""


@njit(cache=True)
def _normalized(quat: np.ndarray) -> np.ndarray:
    return quat / math.sqrt(quat[0] ** 2 + quat[1] ** 2 + quat[2] ** 2 + quat[3] ** 2)


@njit(cache=True)
def integrate_kernel(q: np.ndarray, v: np.ndarray, dt: float, floating: bool, out: np.ndarray) -> None:
    """``out = q ⊕ v dt``: joints add; the free flyer moves by ``T exp(dt [v_b; w_b])`` (body twist).

    SE(3) exponential: rotation ``Exp(w)``, translation ``C V(w) v`` with the SO(3) left Jacobian
    ``V(w) = I + (1-cos θ)/θ² [w]x + (θ-sin θ)/θ³ [w]x²`` (Robot Dynamics lecture notes (ETH), §2.5, (2.104)).
    """
    iq = 7 if floating else 0
    iv = 6 if floating else 0
    for k in range(q.shape[0] - iq):
        out[iq + k] = q[iq + k] + dt * v[iv + k]
    if not floating:
        return
    u = v[0:3] * dt
    w = v[3:6] * dt
    theta = math.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2)
    _, b, c = so3_coefficients(theta * theta)
    wu = np.empty(3)
    wwu = np.empty(3)
    cross3(w, u, wu)
    cross3(w, wu, wwu)
    Vu = u + b * wu + c * wwu
    quat0 = _normalized(q[3:7])
    C0 = np.empty((3, 3))
    from_quaternion = np.empty(4)
    half = 0.5 * theta
    s = math.sin(half) / theta if theta > SERIES_BELOW else 0.5 - theta * theta / 48.0
    from_quaternion[0:3] = s * w
    from_quaternion[3] = math.cos(half)
    quaternion_to_rotation(quat0, C0)
    step = np.empty(3)
    matvec3(C0, Vu, step)
    for k in range(3):
        out[k] = q[k] + step[k]
    quat1 = np.empty(4)
    quaternion_multiply(quat0, from_quaternion, quat1)
    out[3:7] = _normalized(quat1)


@njit(cache=True)
def difference_kernel(q0: np.ndarray, q1: np.ndarray, floating: bool, out: np.ndarray) -> None:
    """``out = q1 ⊖ q0``, the v with ``integrate(q0, v, 1) = q1`` (free flyer: SE(3) log, shortest rotation).

    ``w = Log(quat0* ⊗ quat1)``, ``v = V(w)^-1 C0^T (r1 - r0)`` with
    ``V^-1 = I - [w]x / 2 + (1/θ²)(1 - θ sin θ / (2(1 - cos θ))) [w]x²`` (Robot Dynamics lecture notes (ETH),
    §2.5, (2.105)-(2.107)).
    """
    iq = 7 if floating else 0
    iv = 6 if floating else 0
    for k in range(q0.shape[0] - iq):
        out[iv + k] = q1[iq + k] - q0[iq + k]
    if not floating:
        return
    a = _normalized(q0[3:7])
    b = _normalized(q1[3:7])
    a_conj = np.array([-a[0], -a[1], -a[2], a[3]])
    dq = np.empty(4)
    quaternion_multiply(a_conj, b, dq)
    if dq[3] < 0.0:
        dq = -dq
    s = math.sqrt(dq[0] ** 2 + dq[1] ** 2 + dq[2] ** 2)
    theta = 2.0 * math.atan2(s, dq[3])
    factor = theta / s if s > SERIES_BELOW else 2.0 / dq[3]
    w = factor * dq[0:3]
    C0 = np.empty((3, 3))
    quaternion_to_rotation(a, C0)
    dr = q1[0:3] - q0[0:3]
    local = np.empty(3)
    for k in range(3):
        local[k] = C0[0, k] * dr[0] + C0[1, k] * dr[1] + C0[2, k] * dr[2]
    e = so3_left_jacobian_inverse_coefficient(theta * theta)
    wl = np.empty(3)
    wwl = np.empty(3)
    cross3(w, local, wl)
    cross3(w, wl, wwl)
    out[0:3] = local - 0.5 * wl + e * wwl
    out[3:6] = w


_INTEGRATE = Kernel(integrate_kernel, IN1, IN1, FLOAT, BOOL, OUT1)
_DIFFERENCE = Kernel(difference_kernel, IN1, IN1, BOOL, OUT1)


def integrate(model: Model, q: ArrayLike, v: ArrayLike, dt: float = 1.0) -> np.ndarray:
    """Configuration reached from ``q`` by holding velocity ``v`` for ``dt`` seconds."""
    q = model.check_q(q)
    v = model.check_v(v)
    out = np.empty(model.nq)
    _INTEGRATE.call(q, v, float(dt), bool(model.floating_base), out)
    return out


def difference(model: Model, q0: ArrayLike, q1: ArrayLike) -> np.ndarray:
    """Velocity v (nv,) with ``integrate(q0, v, 1) == q1`` (shortest rotation for the base)."""
    q0 = model.check_q(q0)
    q1 = model.check_q(q1)
    out = np.empty(model.nv)
    _DIFFERENCE.call(q0, q1, bool(model.floating_base), out)
    return out
