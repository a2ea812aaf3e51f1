"""Composite-rigid-body mass matrix and centroidal momentum matrix (world-frame form).

CRBA: column ``(j, c)`` of M is the momentum ``F = Ic_j S_jc`` of the subtree below body j moving
with that joint column, projected on the columns of j and of its ancestors:
``M[k, j] = S_k^T Ic_j S_j`` for k on the support of j. This is Modern Robotics, §8.4, (8.57)
(``M = sum_i J_i^T G_i J_i``) regrouped by subtrees, and Robot Dynamics lecture notes (ETH), §3.5, (3.43).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn._kernels.common import ModelArrays, matrices_view, rows_view, unpack
from kinodyn._kernels.dyn_world import (
    WorldBodies,
    inertia_times,
    inline,
    joint_nv,
    subtree_inertias,
    subtree_inertias_into,
    world_bodies,
)


@inline
def column(S: np.ndarray, c: int, out: np.ndarray) -> None:
    """``out = S[:, c]``."""
    for k in range(6):
        out[k] = S[k, c]


@inline
def dot6(x: np.ndarray, y: np.ndarray) -> float:
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]


@inline
def crba_world(md: ModelArrays, W: WorldBodies, M: np.ndarray) -> None:
    """``M`` (nv x nv, overwritten) = joint-space inertia matrix at the placements ``W``.

    Element indexing on scalars (no per-body slices); scratch in one allocation.
    """
    nb = md.nbodies
    block = np.empty(13 * nb + 36)
    mc, hc, Ic = block[0:nb], rows_view(block, nb, nb, 3), matrices_view(block, 4 * nb, nb)
    F = rows_view(block, 13 * nb, 6, 6)
    subtree_inertias_into(md, W, mc, hc, Ic)
    crba_composites(md, W, mc, hc, Ic, F, M)


@inline
def crba_composites(md: ModelArrays, W: WorldBodies, mc: np.ndarray, hc: np.ndarray, Ic: np.ndarray,
                    F: np.ndarray, M: np.ndarray) -> None:
    """``crba_world`` from the composite inertias ``(mc, hc, Ic)`` of ``subtree_inertias_into``;
    ``F`` (6 x 6) is scratch (``F[c]``: momentum of column c of body j's joint)."""
    nb = md.nbodies
    parent, joint_type, idx_v, multiplier, S = md.parent, md.joint_type, md.idx_v, md.joint_multiplier, W.S
    for a in range(M.shape[0]):
        for b in range(M.shape[1]):
            M[a, b] = 0.0
    for j in range(1, nb):
        nj = joint_nv(joint_type[j])
        m, h0, h1, h2 = mc[j], hc[j, 0], hc[j, 1], hc[j, 2]
        for c in range(nj):
            # F = [m v + w x h; I w + h x v] for the column [v; w]
            v0, v1, v2, w0, w1, w2 = S[j, 0, c], S[j, 1, c], S[j, 2, c], S[j, 3, c], S[j, 4, c], S[j, 5, c]
            F[c, 0] = m * v0 + w1 * h2 - w2 * h1
            F[c, 1] = m * v1 + w2 * h0 - w0 * h2
            F[c, 2] = m * v2 + w0 * h1 - w1 * h0
            F[c, 3] = Ic[j, 0, 0] * w0 + Ic[j, 0, 1] * w1 + Ic[j, 0, 2] * w2 + h1 * v2 - h2 * v1
            F[c, 4] = Ic[j, 1, 0] * w0 + Ic[j, 1, 1] * w1 + Ic[j, 1, 2] * w2 + h2 * v0 - h0 * v2
            F[c, 5] = Ic[j, 2, 0] * w0 + Ic[j, 2, 1] * w1 + Ic[j, 2, 2] * w2 + h0 * v1 - h1 * v0
        mj = multiplier[j]
        ivj = idx_v[j]
        k = j
        while k > 0:
            nk = joint_nv(joint_type[k])
            scale = mj * multiplier[k]
            ivk = idx_v[k]
            for a in range(nk):
                for c in range(a if k == j else 0, nj):  # within one body: upper triangle, mirrored
                    value = scale * (S[k, 0, a] * F[c, 0] + S[k, 1, a] * F[c, 1] + S[k, 2, a] * F[c, 2]
                                     + S[k, 3, a] * F[c, 3] + S[k, 4, a] * F[c, 4] + S[k, 5, a] * F[c, 5])
                    M[ivk + a, ivj + c] += value
                    if k != j or a != c:
                        M[ivj + c, ivk + a] += value
            k = parent[k]


@njit(cache=True)
def mass_matrix(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out = M(q)`` (Modern Robotics, §8.4, (8.57); Robot Dynamics lecture notes (ETH), §3.5, (3.43))."""
    md = unpack(ki, kf)
    crba_world(md, world_bodies(md, q), out)


@njit(cache=True)
def centroidal_momentum_matrix(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out`` (6 x nv) = ``A_G`` with ``[m v_G; h_G] = A_G v``: linear momentum and angular momentum
    about the centre of mass, world axes.

    Column ``(j, c)``: the world-origin momentum ``Ic_j S_jc = [p; L_O]`` of the subtree below j,
    moved to the CoM, ``[p; L_O - c_G x p]`` (Robot Dynamics Essential, §3.5, (96), Orin-Goswami form
    ``A_G = X_G^T M[0:6]`` evaluated column-wise; Modern Robotics, (8.42) for the shift).
    """
    md = unpack(ki, kf)
    W = world_bodies(md, q)
    mc, hc, Ic = subtree_inertias(md, W)
    centroidal_composites(md, W, mc, hc, Ic, out)


@inline
def centroidal_composites(md: ModelArrays, W: WorldBodies, mc: np.ndarray, hc: np.ndarray, Ic: np.ndarray,
                          out: np.ndarray) -> None:
    """``out`` (6 x nv, overwritten) = ``A_G`` from the composite inertias of ``subtree_inertias_into``."""
    cg = hc[0] / mc[0]
    out[:, :] = 0.0
    s = np.empty(6)
    F = np.empty(6)
    for j in range(1, md.nbodies):
        m = md.joint_multiplier[j]
        iv = md.idx_v[j]
        for c in range(joint_nv(md.joint_type[j])):
            column(W.S[j], c, s)
            inertia_times(mc[j], hc[j], Ic[j], s, F)
            out[0, iv + c] += m * F[0]
            out[1, iv + c] += m * F[1]
            out[2, iv + c] += m * F[2]
            out[3, iv + c] += m * (F[3] - (cg[1] * F[2] - cg[2] * F[1]))
            out[4, iv + c] += m * (F[4] - (cg[2] * F[0] - cg[0] * F[2]))
            out[5, iv + c] += m * (F[5] - (cg[0] * F[1] - cg[1] * F[0]))
