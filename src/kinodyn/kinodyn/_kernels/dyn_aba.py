"""Forward dynamics: articulated-body algorithm (world-frame form), and the mass-matrix route for
models with mimic joints.

ABA: three passes over the tree. (1) twists ``V_i``, velocity-product accelerations
``c_i = V_i x S_i qd_i`` and the rigid-body bias wrenches ``pA_i = V_i x* I_i V_i - f_ext,i``;
(2) leaves to root, articulated inertias ``IA_i`` and bias ``pA_i``: ``U = IA S``, ``D = S^T U``,
``u = tau - S^T pA``, and the parent receives ``IA - U D^-1 U^T`` and
``pA + (IA - U D^-1 U^T) c + U D^-1 u``; (3) root to leaves,
``qdd = D^-1 (u - U^T (A_p + c))``, ``A_i = A_p + c + S qdd`` with ``A_0 = [-g; 0]``.
All quantities in world axes, so no transforms between bodies. This solves Seed 001 §8.5, (8.81)
(``M qdd = tau - h - J^T F``) in O(n) by the recursive elimination of Seed 001 §8.3's twist-wrench
recursion; the seeds give only the mass-matrix route (§8.5), used here for mimic joints,
whose coupled coordinates the recursion cannot eliminate body by body.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn._kernels.common import ModelArrays, unpack
from kinodyn._kernels.dyn_crba import crba_world, dot6
from kinodyn._kernels.dyn_local import allocate_local_bodies
from kinodyn._kernels.dyn_rnea import rnea_local
from kinodyn._kernels.dyn_world import (
    WorldBodies,
    add_motion_cross,
    allocate_world_bodies,
    cholesky_solve,
    external_wrenches_world,
    fill_world_bodies,
    force_cross,
    inertia_times,
    inline,
    joint_nv,
    rigid_inertia_matrix,
    world_bodies,
)


@inline
def joint_motion(S: np.ndarray, n: int, iv: int, m: float, x: np.ndarray, out: np.ndarray) -> None:
    """``out = m S[:, :n] x[iv:iv + n]``: the twist (or acceleration) a joint adds (m: mimic multiplier)."""
    for k in range(6):
        s = 0.0
        for c in range(n):
            s += S[k, c] * x[iv + c]
        out[k] = m * s



@inline
def aba_world(md: ModelArrays, W: WorldBodies, v: np.ndarray, tau: np.ndarray, fext: np.ndarray,
              qdd: np.ndarray) -> None:
    """``qdd = M^-1 (tau - b - g + J^T f_ext)`` at the placements ``W`` (no mimic joints)."""
    nb = md.nbodies
    spatial = np.empty((5 * nb + 2, 6))
    V = spatial[0:nb]
    c = spatial[nb:2 * nb]
    pA = spatial[2 * nb:3 * nb]
    u = spatial[3 * nb:4 * nb]
    acc = spatial[4 * nb:5 * nb]
    Sqd = spatial[5 * nb]
    tmp = spatial[5 * nb + 1]
    blocks = np.empty((3 * nb + 1, 6, 6))
    IA = blocks[0:nb]
    U = blocks[nb:2 * nb]
    Dinv = blocks[2 * nb:3 * nb]
    Ia = blocks[3 * nb]
    parent, joint_type, idx_v, mass = md.parent, md.joint_type, md.idx_v, md.mass
    S_all, h, inertia = W.S, W.h, W.inertia
    with_fext = fext.shape[0] > 0
    fw = fext
    if with_fext:
        fw = np.empty((nb, 6))
        external_wrenches_world(fext, W, fw)
    for k in range(6):
        V[0, k] = 0.0
    for i in range(1, nb):
        p = parent[i]
        joint_motion(S_all[i], joint_nv(joint_type[i]), idx_v[i], 1.0, v, Sqd)
        for k in range(6):
            V[i, k] = V[p, k] + Sqd[k]
            c[i, k] = 0.0
        add_motion_cross(V[i], Sqd, 1.0, c[i])
        rigid_inertia_matrix(mass[i], h[i], inertia[i], IA[i])
        inertia_times(mass[i], h[i], inertia[i], V[i], tmp)
        force_cross(V[i], tmp, pA[i])
        if with_fext:
            for k in range(6):
                pA[i, k] -= fw[i, k]
    for i in range(nb - 1, 0, -1):
        n = joint_nv(joint_type[i])
        S = S_all[i]
        iv = idx_v[i]
        Ui = U[i]
        IAi = IA[i]
        for col in range(n):
            for r in range(6):
                s = 0.0
                for k in range(6):
                    s += IAi[r, k] * S[k, col]
                Ui[r, col] = s
            s = tau[iv + col]
            for k in range(6):
                s -= S[k, col] * pA[i, k]
            u[i, col] = s
        _inverse_of_projection(S, Ui, n, Dinv[i])
        p = parent[i]
        if p == 0:
            continue
        # Ia = IA - U Dinv U^T;  pa = pA + Ia c + U Dinv u
        for r in range(6):
            for k in range(n):
                s = 0.0
                for m in range(n):
                    s += Ui[r, m] * Dinv[i, m, k]
                tmp[k] = s  # row r of U Dinv
            for col in range(6):
                s = 0.0
                for k in range(n):
                    s += tmp[k] * Ui[col, k]
                Ia[r, col] = IAi[r, col] - s
            s = 0.0
            for k in range(n):
                s += tmp[k] * u[i, k]
            pA[p, r] += pA[i, r] + s
        for r in range(6):
            s = 0.0
            for k in range(6):
                s += Ia[r, k] * c[i, k]
            pA[p, r] += s
            for k in range(6):
                IA[p, r, k] += Ia[r, k]
    gravity = md.gravity
    for k in range(3):
        acc[0, k] = -gravity[k]
        acc[0, 3 + k] = 0.0
    for i in range(1, nb):
        p = parent[i]
        n = joint_nv(joint_type[i])
        iv = idx_v[i]
        for k in range(6):
            acc[i, k] = acc[p, k] + c[i, k]
        for col in range(n):
            tmp[col] = u[i, col] - dot6(U[i, :, col], acc[i])
        for col in range(n):
            s = 0.0
            for k in range(n):
                s += Dinv[i, col, k] * tmp[k]
            qdd[iv + col] = s
        for k in range(6):
            s = 0.0
            for col in range(n):
                s += S_all[i, k, col] * qdd[iv + col]
            acc[i, k] += s


@inline
def _inverse_of_projection(S: np.ndarray, U: np.ndarray, n: int, Dinv: np.ndarray) -> None:
    """``Dinv[:n, :n] = (S^T U)^-1`` for the joint's n columns (scalar for 1-dof joints)."""
    if n == 1:
        Dinv[0, 0] = 1.0 / dot6(S[:, 0], U[:, 0])
        return
    D = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            D[a, b] = dot6(S[:, a], U[:, b])
    for col in range(n):
        L = D.copy()
        e = np.zeros(n)
        e[col] = 1.0
        cholesky_solve(L, e, n)
        for a in range(n):
            Dinv[a, col] = e[a]


@njit(cache=True)
def aba(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, tau: np.ndarray, fext: np.ndarray,
        out: np.ndarray) -> None:
    """``out = qdd`` by the articulated-body algorithm (models without mimic joints)."""
    md = unpack(ki, kf)
    aba_world(md, world_bodies(md, q), v, tau, fext, out)


@njit(cache=True)
def forward_dynamics_cholesky(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
                              fext: np.ndarray, out: np.ndarray) -> None:
    """``out = M^-1 (tau - h + J^T f_ext)``: CRBA, RNEA with zero acceleration and a Cholesky solve
    (Seed 001 §8.5, (8.81) and the recipe after it)."""
    md = unpack(ki, kf)
    M = np.empty((md.nv, md.nv))
    crba_world(md, world_bodies(md, q), M)
    rnea_local(md, allocate_local_bodies(md), q, v, np.zeros(md.nv), fext, np.empty((3 * md.nbodies + 2, 6)),
               out)
    for k in range(md.nv):
        out[k] = tau[k] - out[k]
    cholesky_solve(M, out, md.nv)


@njit(cache=True)
def aba_batch(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, V: np.ndarray, TAU: np.ndarray,
              out: np.ndarray) -> None:
    """``out[k] = aba(Q[k], V[k], TAU[k])`` for every row (no external wrenches, no mimic joints)."""
    md = unpack(ki, kf)
    none = np.empty((0, 6))
    W = allocate_world_bodies(md.nbodies)
    for k in range(Q.shape[0]):
        fill_world_bodies(md, Q[k], W)
        aba_world(md, W, V[k], TAU[k], none, out[k])
