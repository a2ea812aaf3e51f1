"""Centroidal momentum matrix (Robot Dynamics Essential, §3.5, (96)), from the composite inertias of the
CRBA (``kinodyn.dynamics.crba``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numpy import empty, ndarray

from kinodyn.dynamics.bodies import WorldBodies, joint_nv, subtree_inertias, world_bodies
from kinodyn.inputs import F64, vector
from kinodyn.kernel import IN1, KF, KI, OUT1, OUT2, Kernel
from kinodyn.kernel_data import ModelArrays, unpack
from kinodyn.linalg import NO_WORK
from kinodyn.spatial.compiled import inertia_mul, inline, mat3_at, vec3_at

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.data import Data
    from kinodyn.model import Model


@inline
def centroidal_work_size(nb: int, nv: int) -> int:
    """Entries of ``centroidal_momentum_matrix_kernel``'s work block."""
    return 73 * nb


@njit(cache=True)
def centroidal_momentum_matrix_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, work: np.ndarray,
                                      out: np.ndarray) -> None:
    """``out`` (6 x nv) = ``A_G`` with ``[m v_G; h_G] = A_G v``: linear momentum and angular momentum
    about the centre of mass, world axes.

    Column ``(j, c)``: the world-origin momentum ``Ic_j S_jc = [p; L_O]`` of the subtree below j,
    moved to the CoM, ``[p; L_O - c_G x p]`` (Robot Dynamics Essential, §3.5, (96), Orin-Goswami form
    ``A_G = X_G^T M[0:6]`` evaluated column-wise; Modern Robotics, (8.42) for the shift).
    """
    md = unpack(ki, kf)
    W = world_bodies(md, q, work)
    mc, hc, Ic = subtree_inertias(md, W, work[60 * md.nbodies:])
    centroidal_composites(md, W, mc, hc, Ic, out)


@inline
def centroidal_composites(md: ModelArrays, W: WorldBodies, mc: np.ndarray, hc: np.ndarray, Ic: np.ndarray,
                          out: np.ndarray) -> None:
    """``out`` (6 x nv, overwritten) = ``A_G`` from the composite inertias of ``subtree_inertias_into``."""
    g0, g1, g2 = hc[0, 0] / mc[0], hc[0, 1] / mc[0], hc[0, 2] / mc[0]
    for a in range(6):
        for col in range(out.shape[1]):
            out[a, col] = 0.0
    S = W.S
    for j in range(1, md.nbodies):
        m = md.joint_multiplier[j]
        iv = md.idx_v[j]
        mj, hj, Ij = mc[j], vec3_at(hc, j), mat3_at(Ic, j)
        for c in range(joint_nv(md.joint_type[j])):
            F = inertia_mul(mj, hj, Ij, (S[j, 0, c], S[j, 1, c], S[j, 2, c], S[j, 3, c], S[j, 4, c],
                                         S[j, 5, c]))
            out[0, iv + c] += m * F[0]
            out[1, iv + c] += m * F[1]
            out[2, iv + c] += m * F[2]
            out[3, iv + c] += m * (F[3] - (g1 * F[2] - g2 * F[1]))
            out[4, iv + c] += m * (F[4] - (g2 * F[0] - g0 * F[2]))
            out[5, iv + c] += m * (F[5] - (g0 * F[1] - g1 * F[0]))


_CENTROIDAL_MOMENTUM_MATRIX = Kernel(centroidal_momentum_matrix_kernel, KI, KF, IN1, OUT1, OUT2)


def centroidal_momentum_matrix(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """``A_G`` (6 x nv): ``A_G v = [m v_com; h_G]``, linear momentum and angular momentum about the
    centre of mass, world axes (as pinocchio.ccrba). Fixed base: the link welded to the world is excluded.
    With ``data``: into and as ``data.Ag``."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    if data is None:
        out, work = empty((6, model.nv)), NO_WORK
    else:
        out, work = data.of(model).Ag, data.work
    ki, kf = model.kernel_data
    _CENTROIDAL_MOMENTUM_MATRIX.call(ki, kf, q, work, out)
    return out
