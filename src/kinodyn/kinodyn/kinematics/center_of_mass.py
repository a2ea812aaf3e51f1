"""Centre of mass and its Jacobian over the moving bodies.

A fixed-base model excludes the links welded to the world (as Pinocchio, docs/conventions.md).
CoM Jacobian: mass-weighted sum of the body CoM point Jacobians (Robot Dynamics lecture notes (ETH), §2.8.5,
(2.154); the notes use CoM Jacobians without defining them, this is the standard form).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.kernel import IN1, KF, KI, OUT1, OUT2, Kernel
from kinodyn.kernel_data import JOINT_FREEFLYER, JOINT_PRISMATIC, JOINT_REVOLUTE, ModelArrays, unpack
from kinodyn.kinematics.forward import forward_placements
from kinodyn.linalg import NO_WORK, matrices_view, rows_view, work_block
from kinodyn.spatial.compiled import cross3, matmul3, matvec3, skew

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.data import Data
    from kinodyn.model import Model


@njit(cache=True, inline="always")
def com_work_size(nb: int, nv: int) -> int:
    """Entries of the work block of ``body_coms`` for ``nb`` bodies."""
    return 15 * nb


@njit(cache=True, inline="always")
def body_coms(md: ModelArrays, q: np.ndarray, work: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World placements ``C``, ``r`` and world centres of mass ``c`` of every body, as views of the work
    block (``linalg.work_block``)."""
    nb = md.nbodies
    block = work_block(work, com_work_size(nb, 0))
    C, r, c = matrices_view(block, 0, nb), rows_view(block, 9 * nb, nb, 3), rows_view(block, 12 * nb, nb, 3)
    forward_placements(md, q, C, r)
    body_com = md.body_com
    for i in range(nb):
        for k in range(3):
            c[i, k] = (r[i, k] + C[i, k, 0] * body_com[i, 0] + C[i, k, 1] * body_com[i, 1]
                       + C[i, k, 2] * body_com[i, 2])
    return C, r, c


@njit(cache=True)
def center_of_mass_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, work: np.ndarray,
                          out: np.ndarray) -> None:
    """``out`` = ``sum_i m_i c_i / sum_i m_i`` over the moving bodies (universe excluded)."""
    md = unpack(ki, kf)
    _, _, c = body_coms(md, q, work)
    mass = md.mass
    total = 0.0
    out[:] = 0.0
    for i in range(1, md.nbodies):
        total += mass[i]
        for k in range(3):
            out[k] += mass[i] * c[i, k]
    for k in range(3):
        out[k] /= total


@njit(cache=True)
def com_jacobian_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out`` (3 x nv) = ``d com / d v``: ``(1/M) sum_i m_i J_P(c_i)`` (Robot Dynamics lecture notes (ETH),
    §2.8, ◇ CoM Jacobian).

    With the subtree mass ``M_k`` and first moment ``h_k = sum m_i c_i`` below joint k, the column
    is ``n x (h_k - M_k r_k) / M`` (revolute), ``M_k n / M`` (prismatic), and
    ``[M_k C, -[h_k - M_k r_k]x C] / M`` for the free flyer.
    """
    md = unpack(ki, kf)
    C, r, c = body_coms(md, q, np.empty(0))
    nb = md.nbodies
    mass, parent, joint_type, joint_axis = md.mass, md.parent, md.joint_type, md.joint_axis
    idx_v, multiplier = md.idx_v, md.joint_multiplier
    Msub = np.zeros(nb)
    h = np.zeros((nb, 3))
    total = 0.0
    for i in range(1, nb):
        Msub[i] = mass[i]
        total += mass[i]
        for k in range(3):
            h[i, k] = mass[i] * c[i, k]
    for i in range(nb - 1, 1, -1):
        p = parent[i]
        if p > 0:
            Msub[p] += Msub[i]
            for k in range(3):
                h[p, k] += h[i, k]
    out[:, :] = 0.0
    n = np.empty(3)
    d = np.empty(3)
    col = np.empty(3)
    for i in range(1, nb):
        jt = joint_type[i]
        iv = idx_v[i]
        scale = multiplier[i] / total
        for k in range(3):
            d[k] = h[i, k] - Msub[i] * r[i, k]
        if jt in (JOINT_REVOLUTE, JOINT_PRISMATIC):
            matvec3(C[i], joint_axis[i], n)
            if jt == JOINT_REVOLUTE:
                cross3(n, d, col)
            else:
                for k in range(3):
                    col[k] = Msub[i] * n[k]
            for k in range(3):
                out[k, iv] += scale * col[k]
        elif jt == JOINT_FREEFLYER:
            sk = np.empty((3, 3))
            skew(d, sk)
            block = np.empty((3, 3))
            matmul3(sk, C[i], block)
            for a in range(3):
                for b in range(3):
                    out[a, iv + b] += scale * Msub[i] * C[i, a, b]
                    out[a, iv + 3 + b] -= scale * block[a, b]


_CENTER_OF_MASS = Kernel(center_of_mass_kernel, KI, KF, IN1, OUT1, OUT1)
_COM_JACOBIAN = Kernel(com_jacobian_kernel, KI, KF, IN1, OUT2)


def check_mass(model: Model) -> None:
    if not model.total_mass > 0.0:
        raise ValueError(f"model {model.name!r} has no mass on its moving bodies; no centre of mass")


def com(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """World position (3,) of the centre of mass of the moving bodies (with ``data``: into and as
    ``data.com``)."""
    q = model.check_q(q)
    check_mass(model)
    if data is None:
        out, work = np.empty(3), NO_WORK
    else:
        out, work = data.of(model).com, data.work
    ki, kf = model.kernel_data
    _CENTER_OF_MASS.call(ki, kf, q, work, out)
    return out


def com_jacobian(model: Model, q: ArrayLike) -> np.ndarray:
    """3 x nv Jacobian of the world centre of mass: ``d com/dt = J v``."""
    q = model.check_q(q)
    check_mass(model)
    out = np.empty((3, model.nv))
    ki, kf = model.kernel_data
    _COM_JACOBIAN.call(ki, kf, q, out)
    return out
