"""Recursive Newton-Euler inverse dynamics over the packed model arrays (body-frame form).

Seed 001 §8.3.2, (8.50)-(8.54), with every twist, acceleration and wrench of body i in body i's
frame (``dyn_local``): the forward pass ``V_i = X_i V_p + S_i qd_i``,
``A_i = X_i A_p + S_i qdd_i + V_i x S_i qd_i`` (``X_i``: the parent-to-child motion transform
``[Ad_{T_{i,p}}]``), gravity entering as the universe's acceleration ``A_0 = [-g; 0]``; the body
wrench ``f_i = I_i A_i + V_i x* I_i V_i - f_ext,i`` with the constant body-frame inertia
(Seed 001 (8.40); Seed 000 §3.3.1, (3.25)); the backward pass ``f_p += X_i^T f_i`` and
``tau = S^T f`` (Seed 001 (8.49)). A mimic joint adds ``multiplier * S^T f`` to its master's
entry and moves with ``multiplier * qd``. ``velocities`` gives the world-frame twists that the
world-frame kernels (``dyn_world``) use.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn._kernels.common import ModelArrays, unpack
from kinodyn._kernels.dyn_local import (
    LocalBodies,
    add_body_joint_projection,
    add_force_to_parent,
    allocate_local_bodies,
    body_joint_motion,
    fill_local_transforms,
    motion_to_child,
)
from kinodyn._kernels.dyn_world import (
    WorldBodies,
    add_motion_cross,
    force_cross,
    inertia_times,
    inline,
    joint_nv,
)


@inline
def velocities(md: ModelArrays, W: WorldBodies, v: np.ndarray, V: np.ndarray) -> None:
    """World twists ``V[i] = V[p] + S_i qd_i`` of every body (``V[0] = 0``)."""
    parent, joint_type, idx_v, multiplier, S = md.parent, md.joint_type, md.idx_v, md.joint_multiplier, W.S
    for k in range(6):
        V[0, k] = 0.0
    for i in range(1, md.nbodies):
        p = parent[i]
        n = joint_nv(joint_type[i])
        iv = idx_v[i]
        m = multiplier[i]
        for k in range(6):
            s = 0.0
            for c in range(n):
                s += S[i, k, c] * v[iv + c]
            V[i, k] = V[p, k] + m * s


@inline
def rnea_local(md: ModelArrays, L: LocalBodies, q: np.ndarray, v: np.ndarray, a: np.ndarray, fext: np.ndarray,
               spatial: np.ndarray, tau: np.ndarray) -> None:
    """``tau = M a + b + g - J^T f_ext`` by the body-frame recursion (Seed 001 §8.3.2, (8.50)-(8.54)).

    ``L``: from ``allocate_local_bodies`` (transforms filled here at ``q``); ``spatial``: scratch of
    shape (3 nb + 2, 6); ``fext``: (0, 6) for none, else (nb, 6) body-frame wrenches about the body
    origins (the frame of the recursion, so they enter unchanged). Gravity enters as the universe's
    acceleration ``[-g; 0]``.
    """
    nb = md.nbodies
    parent, joint_type, joint_axis, idx_v = md.parent, md.joint_type, md.joint_axis, md.idx_v
    multiplier, mass, gravity = md.joint_multiplier, md.mass, md.gravity
    fill_local_transforms(md, q, L)
    E, p, h, inertia = L.E, L.p, L.h, L.inertia
    V = spatial[0:nb]
    A = spatial[nb:2 * nb]
    F = spatial[2 * nb:3 * nb]
    Sqd = spatial[3 * nb]
    tmp = spatial[3 * nb + 1]
    for k in range(3):
        V[0, k] = 0.0
        V[0, 3 + k] = 0.0
        A[0, k] = -gravity[k]
        A[0, 3 + k] = 0.0
    with_fext = fext.shape[0] > 0
    for i in range(1, nb):
        pi = parent[i]
        iv = idx_v[i]
        m = multiplier[i]
        Vi, Ai, Fi = V[i], A[i], F[i]
        motion_to_child(E[i], p[i], V[pi], Vi)
        motion_to_child(E[i], p[i], A[pi], Ai)
        body_joint_motion(joint_type, joint_axis, i, m, v, iv, Sqd)
        body_joint_motion(joint_type, joint_axis, i, m, a, iv, tmp)
        for k in range(6):
            Vi[k] += Sqd[k]
            Ai[k] += tmp[k]
        add_motion_cross(Vi, Sqd, 1.0, Ai)
        inertia_times(mass[i], h[i], inertia[i], Vi, tmp)
        force_cross(Vi, tmp, Fi)
        inertia_times(mass[i], h[i], inertia[i], Ai, tmp)
        for k in range(6):
            Fi[k] += tmp[k]
        if with_fext:
            for k in range(6):
                Fi[k] -= fext[i, k]
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    for i in range(nb - 1, 0, -1):
        add_body_joint_projection(joint_type, joint_axis, i, multiplier[i], F[i], idx_v[i], tau)
        pi = parent[i]
        if pi > 0:
            add_force_to_parent(E[i], p[i], F[i], F[pi])


@njit(cache=True)
def rnea(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray, fext: np.ndarray,
         tau: np.ndarray) -> None:
    """``tau = M(q) a + b(q, v) + g(q) - sum J_i^T f_ext,i`` (Seed 001 §8.3.2; Seed 000 §3.5, (3.54))."""
    md = unpack(ki, kf)
    rnea_local(md, allocate_local_bodies(md), q, v, a, fext, np.empty((3 * md.nbodies + 2, 6)), tau)


@njit(cache=True)
def nonlinear_effects(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    """``out = b(q, v) + g(q)``: RNEA with ``a = 0`` (Seed 001 §8.5, h from the RNEA at zero acceleration)."""
    md = unpack(ki, kf)
    rnea_local(md, allocate_local_bodies(md), q, v, np.zeros(md.nv), np.empty((0, 6)),
               np.empty((3 * md.nbodies + 2, 6)), out)


@njit(cache=True)
def gravity_torques(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out = g(q)``: RNEA with ``v = a = 0`` (Seed 000 §3.5, (3.45))."""
    md = unpack(ki, kf)
    zero = np.zeros(md.nv)
    rnea_local(md, allocate_local_bodies(md), q, zero, zero, np.empty((0, 6)),
               np.empty((3 * md.nbodies + 2, 6)), out)


@njit(cache=True)
def rnea_batch(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, V: np.ndarray, A: np.ndarray,
               out: np.ndarray) -> None:
    """``out[k] = rnea(Q[k], V[k], A[k])`` for every row (no external wrenches)."""
    md = unpack(ki, kf)
    none = np.empty((0, 6))
    L = allocate_local_bodies(md)
    spatial = np.empty((3 * md.nbodies + 2, 6))
    for k in range(Q.shape[0]):
        rnea_local(md, L, Q[k], V[k], A[k], none, spatial, out[k])
