"""Coriolis matrix C(q, v) with ``C v = b(q, v)`` and ``dM/dt - 2C`` skew-symmetric (world-frame form).

With body Jacobians ``J_i`` (world twists), ``M = sum_i J_i^T I_i J_i`` (Modern Robotics, (8.57)) and
``dJ_i/dt`` made of the columns ``V_k x S_k``, the Christoffel-consistent matrix (Modern Robotics, §8.1.2,
(8.17)-(8.19); Robot Dynamics Essential, §3.5, (80)) is ``C = sum_i J_i^T (I_i dJ_i/dt + B_i J_i)`` with
``B(I, V) = 1/2 (V x* I - I V x + (I V) x-bar)``, where ``(f x-bar) x = x x* f``.
Then ``C + C^T = dM/dt`` because ``B + B^T = dI/dt = V x* I - I V x``, and ``C v`` is the
velocity part of the RNEA. Regrouped by subtrees (composites ``Ic_j``, ``Bc_j``) as in the CRBA
(``kinodyn.dynamics.crba``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numpy import empty, ndarray

from kinodyn.dynamics.bodies import WorldBodies, column, joint_nv, subtree_inertias, velocities, world_bodies
from kinodyn.inputs import F64, vector
from kinodyn.kernel import IN1, KF, KI, OUT2, Kernel
from kinodyn.kernel_data import ModelArrays, unpack
from kinodyn.spatial.compiled import (
    add_motion_cross,
    dot6,
    force_cross,
    inertia_times,
    mat3_at,
    rigid_inertia_matrix,
    vec3_at,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.model import Model


@njit(cache=True)
def _coriolis_inertia(I6: np.ndarray, V: np.ndarray, out: np.ndarray) -> None:
    """``out = B(I, V)``, column by column: ``B e = 1/2 (V x* (I e) - I (V x e) + e x* (I V))``."""
    IV = I6 @ V
    e = np.zeros(6)
    Ie = np.empty(6)
    t1 = np.empty(6)
    Vxe = np.zeros(6)
    t3 = np.empty(6)
    for col in range(6):
        e[:] = 0.0
        e[col] = 1.0
        for r in range(6):
            Ie[r] = I6[r, col]
        force_cross(V, Ie, t1)
        Vxe[:] = 0.0
        add_motion_cross(V, e, 1.0, Vxe)
        force_cross(e, IV, t3)
        IVxe = I6 @ Vxe
        for r in range(6):
            out[r, col] = 0.5 * (t1[r] - IVxe[r] + t3[r])


@njit(cache=True)
def coriolis_world(md: ModelArrays, W: WorldBodies, v: np.ndarray, Cm: np.ndarray) -> None:
    """``Cm`` (nv x nv, overwritten) = C(q, v) at the placements ``W``."""
    nb = md.nbodies
    V = np.empty((nb, 6))
    velocities(md, W, v, V)
    mc, hc, Ic = subtree_inertias(md, W, np.empty(0))
    Bc = np.zeros((nb, 6, 6))
    I6 = np.empty((1, 6, 6))
    B = np.empty((6, 6))
    for i in range(nb - 1, 0, -1):
        rigid_inertia_matrix(md.mass[i], vec3_at(W.h, i), mat3_at(W.inertia, i), I6, 0)
        _coriolis_inertia(I6[0], V[i], B)
        Bc[i] += B
        p = md.parent[i]
        if p > 0:
            Bc[p] += Bc[i]
    Cm[:, :] = 0.0
    s_a = np.empty(6)
    ds_a = np.empty(6)
    s_b = np.empty(6)
    ds_b = np.empty(6)
    f_a = np.empty(6)
    g1 = np.empty(6)
    g2 = np.empty(6)
    for j in range(1, nb):
        mj = md.joint_multiplier[j]
        ivj = md.idx_v[j]
        for a in range(joint_nv(md.joint_type[j])):
            column(W.S[j], a, s_a)
            ds_a[:] = 0.0
            add_motion_cross(V[j], s_a, 1.0, ds_a)
            inertia_times(mc[j], hc[j], Ic[j], ds_a, f_a)
            f_a += Bc[j] @ s_a
            inertia_times(mc[j], hc[j], Ic[j], s_a, g1)
            g2[:] = Bc[j].T @ s_a
            k = j
            while k > 0:
                scale = mj * md.joint_multiplier[k]
                ivk = md.idx_v[k]
                for b in range(joint_nv(md.joint_type[k])):
                    column(W.S[k], b, s_b)
                    ds_b[:] = 0.0
                    add_motion_cross(V[k], s_b, 1.0, ds_b)
                    Cm[ivj + a, ivk + b] += scale * (dot6(g1, ds_b) + dot6(g2, s_b))
                    if k != j:
                        Cm[ivk + b, ivj + a] += scale * dot6(s_b, f_a)
                k = md.parent[k]


@njit(cache=True)
def coriolis_matrix_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray,
                           out: np.ndarray) -> None:
    """``out = C(q, v)`` (Modern Robotics, §8.1.2, (8.19), Prop. 8.1)."""
    md = unpack(ki, kf)
    coriolis_world(md, world_bodies(md, q, np.empty(0)), v, out)


_CORIOLIS_MATRIX = Kernel(coriolis_matrix_kernel, KI, KF, IN1, IN1, OUT2)


def coriolis_matrix(model: Model, q: ArrayLike, v: ArrayLike) -> np.ndarray:
    """``C(q, v)`` (nv x nv) of the Christoffel symbols: ``C v = b(q, v)`` (the velocity part of
    ``nonlinear_effects``) and ``dM/dt - 2C`` is skew-symmetric (as Pinocchio's computeCoriolisMatrix)."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != model.v_shape:
        v = vector(v, model.nv, "v")
    out = empty((model.nv, model.nv))
    ki, kf = model.kernel_data
    _CORIOLIS_MATRIX.call(ki, kf, q, v, out)
    return out
