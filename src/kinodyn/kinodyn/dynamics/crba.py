"""Joint-space inertia matrix by the composite-rigid-body algorithm (world-frame form).

Column ``(j, c)`` of M is the momentum ``F = Ic_j S_jc`` of the subtree below body j moving with that joint
column, projected on the columns of j and of its ancestors: ``M[k, j] = S_k^T Ic_j S_j`` for k on the support
of j. This is Modern Robotics, §8.4, (8.57) (``M = sum_i J_i^T G_i J_i``) regrouped by subtrees, and Robot
Dynamics lecture notes (ETH), §3.5, (3.43). Composite inertias are summed without transforms because all are
in world axes (``kinodyn.dynamics.bodies``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numpy import empty, ndarray

from kinodyn.dynamics.bodies import (
    WorldBodies,
    fill_world_bodies,
    joint_nv,
    subtree_inertias_into,
    world_bodies,
    world_bodies_in,
)
from kinodyn.inputs import F64, vector
from kinodyn.kernel import IN1, KF, KI, OUT1, OUT2, Kernel
from kinodyn.kernel_data import ModelArrays, unpack
from kinodyn.linalg import matrices_view, rows_view, work_block
from kinodyn.spatial.compiled import inertia_mul, inline, mat3_at, set_vec6, vec3_at

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.data import Data
    from kinodyn.model import Model


@inline
def crba_world(md: ModelArrays, W: WorldBodies, M: np.ndarray, work: np.ndarray) -> None:
    """``M`` (nv x nv, overwritten) = joint-space inertia matrix at the placements ``W``.

    Element indexing on scalars (no per-body slices); scratch in ``work[:13 nb + 36]``
    (``linalg.work_block``).
    """
    crba_world_in(md, W, M, work_block(work, 13 * md.nbodies + 36))


@inline
def crba_world_in(md: ModelArrays, W: WorldBodies, M: np.ndarray, block: np.ndarray) -> None:
    """``crba_world`` with the scratch in ``block`` (13 nb + 36 entries)."""
    nb = md.nbodies
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
        m, h, I = mc[j], vec3_at(hc, j), mat3_at(Ic, j)  # noqa: E741 (the inertia's name)
        for c in range(nj):  # F[c] = Ic_j S_jc
            set_vec6(F, c, inertia_mul(m, h, I, (S[j, 0, c], S[j, 1, c], S[j, 2, c], S[j, 3, c], S[j, 4, c],
                                                 S[j, 5, c])))
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


@inline
def mass_matrix_work_size(nb: int, nv: int) -> int:
    """Entries of ``mass_matrix_data_kernel``'s work block."""
    return 73 * nb + 36


@njit(cache=True)
def mass_matrix_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out = M(q)`` (Modern Robotics, §8.4, (8.57); Robot Dynamics lecture notes (ETH), §3.5, (3.43)), the
    scratch allocated here (the calls without a Data: see ``rnea.rnea_kernel``)."""
    md = unpack(ki, kf)
    nb = md.nbodies
    W = world_bodies_in(nb, np.empty(60 * nb))
    fill_world_bodies(md, q, W)
    crba_world_in(md, W, out, np.empty(13 * nb + 36))


@njit(cache=True)
def mass_matrix_data_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, work: np.ndarray,
                            out: np.ndarray) -> None:
    """``mass_matrix_kernel`` with the scratch in ``work`` (a Data's)."""
    md = unpack(ki, kf)
    crba_world(md, world_bodies(md, q, work), out, work[60 * md.nbodies:])


_MASS_MATRIX = Kernel(mass_matrix_kernel, KI, KF, IN1, OUT2)
_MASS_MATRIX_DATA = Kernel(mass_matrix_data_kernel, KI, KF, IN1, OUT1, OUT2)


def mass_matrix(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """``M(q)`` (nv x nv), symmetric positive definite, both triangles filled (Robot Dynamics lecture notes
    (ETH), §3.5, (3.43)); with ``data``: into and as ``data.M``."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    ki, kf = model.kernel_data
    if data is None:
        nv = model.nv
        out = empty((nv, nv))
        _MASS_MATRIX.call(ki, kf, q, out)
        return out
    M: np.ndarray = data.of(model).M
    _MASS_MATRIX_DATA.call(ki, kf, q, data.work, M)
    return M
