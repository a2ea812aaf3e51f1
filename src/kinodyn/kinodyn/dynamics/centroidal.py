"""Centroidal momentum matrix (Robot Dynamics Essential, §3.5, (96)), from the composite inertias of the
CRBA (``kinodyn.dynamics.crba``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit
from numpy import empty, ndarray

from kinodyn._kernels.common import ModelArrays, unpack
from kinodyn._kernels.entry import IN1, KF, KI, OUT2, Kernel
from kinodyn.dynamics._inputs import F64, vector
from kinodyn.dynamics.bodies import WorldBodies, column, joint_nv, subtree_inertias, world_bodies
from kinodyn.spatial.compiled import inertia_times, inline

if TYPE_CHECKING:
    from kinodyn.model import Model


@njit(cache=True)
def centroidal_momentum_matrix_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
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


_CENTROIDAL_MOMENTUM_MATRIX = Kernel(centroidal_momentum_matrix_kernel, KI, KF, IN1, OUT2)


def centroidal_momentum_matrix(model: Model, q: Any) -> np.ndarray:
    """``A_G`` (6 x nv): ``A_G v = [m v_com; h_G]``, linear momentum and angular momentum about the
    centre of mass, world axes (as pinocchio.ccrba). Fixed base: the link welded to the world is excluded."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    out = empty((6, model.nv))
    ki, kf = model.kernel_data
    _CENTROIDAL_MOMENTUM_MATRIX.call(ki, kf, q, out)
    return out
