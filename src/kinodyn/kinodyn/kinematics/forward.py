"""Forward kinematics: body and frame placements ``T_world_frame(q)`` (Robot Dynamics lecture notes (ETH),
§2.8.3, (2.137)-(2.138)).

The compiled functions the other kernels build on: ``joint_displacement(..., i, q)`` (the joint's own
motion ``(L, p)``), ``place_body`` (world placement of body i from its parent's), ``forward_placements``
(every body),
``support`` / ``forward_placements_support`` (only the bodies from the root down to one body) and
``walk_up`` (one frame's placement, and its LOCAL Jacobian, along its support without storing per-body
placements). The rotation algebra they use is ``kinodyn.spatial.compiled``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numpy import ndarray

from kinodyn.inputs import F64
from kinodyn.kernel import IN1, IN2, INT, KF, KI, OUT1, OUT2, OUT3, Kernel
from kinodyn.kernel_data import JOINT_FREEFLYER, JOINT_PRISMATIC, JOINT_REVOLUTE, ModelArrays, unpack
from kinodyn.linalg import NO_WORK, matrices_view, rows_view, work_block
from kinodyn.spatial.compiled import (
    Mat3,
    Vec3,
    axis_rotation,
    mat3_at,
    mat3_mul,
    mat3_vec,
    matmul3,
    matvec3,
    quaternion_matrix,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.data import Data
    from kinodyn.model import Model


@njit(cache=True, inline="always")
def joint_displacement(joint_type: np.ndarray, joint_axis: np.ndarray, multiplier: np.ndarray,
                       offset: np.ndarray, idx_q: np.ndarray, i: int,
                       q: np.ndarray) -> tuple[float, float, float, float, float, float, float, float, float,
                                               float, float, float]:
    """Joint motion ``(L, p)`` of body i as 12 floats (L row-major, then p): ``T_joint_body = (L, p)``.

    Revolute ``L = Rot(n, θ)``, ``p = 0`` (Robot Dynamics lecture notes (ETH), §2.4.5, (2.48)); prismatic ``L
    = E``, ``p = d n``; free flyer ``L`` from the normalised quaternion in q, ``p`` its position (Robot
    Dynamics lecture notes (ETH), §2.8.3, (2.130); §2.10.2, (2.247)). Mimic joints read ``multiplier *
    q[idx_q] + offset``.
    """
    jt = joint_type[i]
    if jt == JOINT_FREEFLYER:
        iq = idx_q[i]
        l00, l01, l02, l10, l11, l12, l20, l21, l22 = quaternion_matrix(q[iq + 3], q[iq + 4], q[iq + 5],
                                                                         q[iq + 6])
        return l00, l01, l02, l10, l11, l12, l20, l21, l22, q[iq], q[iq + 1], q[iq + 2]
    value = multiplier[i] * q[idx_q[i]] + offset[i]
    x, y, z = joint_axis[i, 0], joint_axis[i, 1], joint_axis[i, 2]
    if jt == JOINT_REVOLUTE:
        l00, l01, l02, l10, l11, l12, l20, l21, l22 = axis_rotation(x, y, z, value)
        return l00, l01, l02, l10, l11, l12, l20, l21, l22, 0.0, 0.0, 0.0
    # JOINT_PRISMATIC
    return 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, value * x, value * y, value * z


@njit(cache=True, inline="always")
def place_body(parent: np.ndarray, joint_type: np.ndarray, joint_axis: np.ndarray, R: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
               t: np.ndarray, multiplier: np.ndarray, offset: np.ndarray, idx_q: np.ndarray, i: int,
               q: np.ndarray, C: np.ndarray, r: np.ndarray) -> None:
    """``C[i]``, ``r[i]``: world placement of body i (i >= 1) from its parent's and q.

    ``T_world_i = T_world_parent T_parent_i(q)`` with ``T_parent_i = (C_pj L, t + C_pj p)`` and
    ``(L, p)`` from ``joint_displacement`` (Robot Dynamics lecture notes (ETH), §2.8.3, (2.137)). Arguments
    are the ``ModelArrays`` fields (``R = joint_rotation``, ``t = joint_translation``): reading
    ``md.<field>`` inside per-body loops costs refcounts.
    """
    l00, l01, l02, l10, l11, l12, l20, l21, l22, px, py, pz = joint_displacement(
        joint_type, joint_axis, multiplier, offset, idx_q, i, q)
    p = parent[i]
    for a in range(3):  # row a of C_world_i = (C_world_p C_pj) L, and r_p + C_world_p t + (C_world_p C_pj) p
        pa0, pa1, pa2 = C[p, a, 0], C[p, a, 1], C[p, a, 2]
        m0 = pa0 * R[i, 0, 0] + pa1 * R[i, 1, 0] + pa2 * R[i, 2, 0]
        m1 = pa0 * R[i, 0, 1] + pa1 * R[i, 1, 1] + pa2 * R[i, 2, 1]
        m2 = pa0 * R[i, 0, 2] + pa1 * R[i, 1, 2] + pa2 * R[i, 2, 2]
        C[i, a, 0] = m0 * l00 + m1 * l10 + m2 * l20
        C[i, a, 1] = m0 * l01 + m1 * l11 + m2 * l21
        C[i, a, 2] = m0 * l02 + m1 * l12 + m2 * l22
        r[i, a] = r[p, a] + pa0 * t[i, 0] + pa1 * t[i, 1] + pa2 * t[i, 2] + m0 * px + m1 * py + m2 * pz


@njit(cache=True, inline="always")
def set_universe(C: np.ndarray, r: np.ndarray) -> None:
    """``C[0] = E``, ``r[0] = 0``: the universe's placement."""
    for a in range(3):
        for b in range(3):
            C[0, a, b] = 1.0 if a == b else 0.0
        r[0, a] = 0.0


@njit(cache=True, inline="always")
def forward_placements(md: ModelArrays, q: np.ndarray, C: np.ndarray, r: np.ndarray) -> None:
    """World placements of every body: ``C[i] = C_world_body``, ``r[i] = world_r_body``.

    ``C`` is (nbodies, 3, 3), ``r`` (nbodies, 3). Forward recursion
    ``T_world_i = T_world_parent T_parent_i(q)`` (Robot Dynamics lecture notes (ETH), §2.8.3, (2.137)).
    """
    parent, joint_type, joint_axis, R, t = (md.parent, md.joint_type, md.joint_axis, md.joint_rotation,
                                            md.joint_translation)
    multiplier, offset, idx_q = md.joint_multiplier, md.joint_offset, md.idx_q
    set_universe(C, r)
    for i in range(1, md.nbodies):
        place_body(parent, joint_type, joint_axis, R, t, multiplier, offset, idx_q, i, q, C, r)


@njit(cache=True, inline="always")
def support(md: ModelArrays, body: int, chain: np.ndarray) -> int:
    """``chain[:depth]`` = bodies on the path from the root to ``body``, root first (universe
    excluded); returns depth. ``chain`` holds at least ``nbodies`` entries."""
    parent = md.parent
    depth = 0
    b = body
    while b > 0:
        depth += 1
        b = parent[b]
    b = body
    for k in range(depth - 1, -1, -1):
        chain[k] = b
        b = parent[b]
    return depth


@njit(cache=True, inline="always")
def forward_placements_support(md: ModelArrays, q: np.ndarray, chain: np.ndarray, depth: int,
                               C: np.ndarray, r: np.ndarray) -> None:
    """``forward_placements`` restricted to ``chain[:depth]`` (from ``support``); other rows untouched."""
    parent, joint_type, joint_axis, R, t = (md.parent, md.joint_type, md.joint_axis, md.joint_rotation,
                                            md.joint_translation)
    multiplier, offset, idx_q = md.joint_multiplier, md.joint_offset, md.idx_q
    set_universe(C, r)
    for k in range(depth):
        place_body(parent, joint_type, joint_axis, R, t, multiplier, offset, idx_q, chain[k], q, C, r)


@njit(cache=True, inline="always")
def placement_scratch(nb: int, work: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                          np.ndarray, np.ndarray]:
    """Body placements ``C`` (nb,3,3), ``r`` (nb,3), a frame's ``C_f``, ``r_f``, joint columns ``S`` (6,6)
    and a point ``o`` (3,), as views of one block (``linalg.work_block``: the Data's work, or allocated)."""
    block = work_block(work, placement_work_size(nb, 0))
    f = 12 * nb
    return (matrices_view(block, 0, nb), rows_view(block, 9 * nb, nb, 3), rows_view(block, f, 3, 3),
            block[f + 9:f + 12], rows_view(block, f + 12, 6, 6), block[f + 48:f + 51])


@njit(cache=True, inline="always")
def placement_work_size(nb: int, nv: int) -> int:
    """Entries of ``placement_scratch``'s block for ``nb`` bodies."""
    return 12 * nb + 51


@njit(cache=True, inline="always")
def frame_in_world(md: ModelArrays, frame: int, C: np.ndarray, r: np.ndarray,
                    C_f: np.ndarray, r_f: np.ndarray) -> None:
    """``T_world_frame = T_world_body T_body_frame`` from the body placements."""
    b = md.frame_body[frame]
    matmul3(C[b], md.frame_rotation[frame], C_f)
    matvec3(C[b], md.frame_translation[frame], r_f)
    for k in range(3):
        r_f[k] += r[b, k]


@njit(cache=True, inline="always")
def write_homogeneous(C_f: np.ndarray, r_f: np.ndarray, out: np.ndarray) -> None:
    for a in range(3):
        for b in range(3):
            out[a, b] = C_f[a, b]
        out[a, 3] = r_f[a]
        out[3, a] = 0.0
    out[3, 3] = 1.0


@njit(cache=True, inline="always")
def frame_along_support(md: ModelArrays, q: np.ndarray, frame: int, chain: np.ndarray, C: np.ndarray,
                         r: np.ndarray, C_f: np.ndarray, r_f: np.ndarray) -> int:
    """Placements of the bodies on the frame's support and of the frame; returns the chain depth."""
    depth = support(md, md.frame_body[frame], chain)
    forward_placements_support(md, q, chain, depth, C, r)
    frame_in_world(md, frame, C, r, C_f, r_f)
    return depth


@njit(cache=True, inline="always")
def walk_up(md: ModelArrays, q: np.ndarray, frame: int, jacobian: bool, J: np.ndarray) -> tuple[Mat3, Vec3]:
    """``T_world_frame(q) = (C, d)`` as tuples; with ``jacobian``, also the frame's LOCAL Jacobian added
    into ``J`` (6 x nv, zeroed by the caller).

    ``T_world_frame = T_0,1 ... T_parent,b T_b,frame`` (Robot Dynamics lecture notes (ETH), §2.8.3, (2.137)),
    multiplied from the frame's end: ``(C, d) <- T_parent_i (C, d)`` while walking up the parent pointers, so
    only the frame's support is visited and nothing is stored per body. Before that step ``(C, d) =
    T_i,frame`` places the frame in body i, whose joint moves the frame origin with, in body-i axes: revolute
    ``[n x d; n]``, prismatic ``[n; 0]``, free flyer (body twist ``[v; w]``) ``[E, -[d]x; 0, E]``
    (Robot Dynamics lecture notes (ETH), §2.8.5, (2.161)-(2.167); §2.10.3, (2.248)-(2.252)); ``C^T`` turns
    each into frame axes. Mimic joints add ``multiplier * column`` to their master's column.
    """
    FR, Ft = md.frame_rotation, md.frame_translation
    C = mat3_at(FR, frame)
    d = (Ft[frame, 0], Ft[frame, 1], Ft[frame, 2])
    parent, joint_type, joint_axis, R, t = (md.parent, md.joint_type, md.joint_axis, md.joint_rotation,
                                            md.joint_translation)
    multiplier, offset, idx_q, idx_v = md.joint_multiplier, md.joint_offset, md.idx_q, md.idx_v
    i = md.frame_body[frame]
    while i > 0:
        if jacobian:
            _add_local_columns(joint_type[i], joint_axis, i, multiplier[i], idx_v[i], C, d, J)
        l00, l01, l02, l10, l11, l12, l20, l21, l22, px, py, pz = joint_displacement(
            joint_type, joint_axis, multiplier, offset, idx_q, i, q)
        Ri = mat3_at(R, i)
        E = mat3_mul(Ri, (l00, l01, l02, l10, l11, l12, l20, l21, l22))  # T_parent_i = (R L, t + R p)
        p = mat3_vec(Ri, (px, py, pz))
        C = mat3_mul(E, C)
        y = mat3_vec(E, d)
        d = (y[0] + p[0] + t[i, 0], y[1] + p[1] + t[i, 1], y[2] + p[2] + t[i, 2])
        i = parent[i]
    return C, d


@njit(cache=True, inline="always")
def _add_local_columns(jt: int, joint_axis: np.ndarray, i: int, m: float, iv: int, C: Mat3, d: Vec3,
                       J: np.ndarray) -> None:
    """Adds body i's joint columns at the frame origin, in frame axes, to ``J`` (see ``walk_up``);
    ``(C, d) = T_i,frame``."""
    c00, c01, c02, c10, c11, c12, c20, c21, c22 = C
    d0, d1, d2 = d
    if jt in (JOINT_REVOLUTE, JOINT_PRISMATIC):
        n0, n1, n2 = m * joint_axis[i, 0], m * joint_axis[i, 1], m * joint_axis[i, 2]
        if jt == JOINT_REVOLUTE:
            x0, x1, x2 = n1 * d2 - n2 * d1, n2 * d0 - n0 * d2, n0 * d1 - n1 * d0
            J[3, iv] += c00 * n0 + c10 * n1 + c20 * n2
            J[4, iv] += c01 * n0 + c11 * n1 + c21 * n2
            J[5, iv] += c02 * n0 + c12 * n1 + c22 * n2
        else:
            x0, x1, x2 = n0, n1, n2
        J[0, iv] += c00 * x0 + c10 * x1 + c20 * x2
        J[1, iv] += c01 * x0 + c11 * x1 + c21 * x2
        J[2, iv] += c02 * x0 + c12 * x1 + c22 * x2
    elif jt == JOINT_FREEFLYER:
        # v columns: C^T e_b (row b of C); w columns: C^T (e_b x d) and C^T e_b
        J[0, iv], J[1, iv], J[2, iv] = c00, c01, c02
        J[0, iv + 1], J[1, iv + 1], J[2, iv + 1] = c10, c11, c12
        J[0, iv + 2], J[1, iv + 2], J[2, iv + 2] = c20, c21, c22
        J[0, iv + 3] = c20 * d1 - c10 * d2
        J[1, iv + 3] = c21 * d1 - c11 * d2
        J[2, iv + 3] = c22 * d1 - c12 * d2
        J[0, iv + 4] = c00 * d2 - c20 * d0
        J[1, iv + 4] = c01 * d2 - c21 * d0
        J[2, iv + 4] = c02 * d2 - c22 * d0
        J[0, iv + 5] = c10 * d0 - c00 * d1
        J[1, iv + 5] = c11 * d0 - c01 * d1
        J[2, iv + 5] = c12 * d0 - c02 * d1
        J[3, iv + 3], J[4, iv + 3], J[5, iv + 3] = c00, c01, c02
        J[3, iv + 4], J[4, iv + 4], J[5, iv + 4] = c10, c11, c12
        J[3, iv + 5], J[4, iv + 5], J[5, iv + 5] = c20, c21, c22


@njit(cache=True, inline="always")
def _write_placement(C: Mat3, d: Vec3, out: np.ndarray) -> None:
    """``out`` (4x4) = the homogeneous matrix of the placement ``(C, d)``."""
    out[0, 0], out[0, 1], out[0, 2], out[0, 3] = C[0], C[1], C[2], d[0]
    out[1, 0], out[1, 1], out[1, 2], out[1, 3] = C[3], C[4], C[5], d[1]
    out[2, 0], out[2, 1], out[2, 2], out[2, 3] = C[6], C[7], C[8], d[2]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@njit(cache=True)
def frame_placement_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frame: int,
                           out: np.ndarray) -> None:
    """``out`` (4x4) = ``T_world_frame(q)``, along the frame's support only (Robot Dynamics lecture notes
    (ETH), §2.8.3, (2.137))."""
    C, d = walk_up(unpack(ki, kf), q, frame, False, out)
    _write_placement(C, d, out)


@njit(cache=True)
def frame_placement_batch_kernel(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, frame: int,
                                 out: np.ndarray) -> None:
    """``out[k]`` (4x4) = ``T_world_frame(Q[k])`` for every row of ``Q`` (N x nq)."""
    md = unpack(ki, kf)
    for k in range(Q.shape[0]):
        block = out[k]
        C, d = walk_up(md, Q[k], frame, False, block)
        _write_placement(C, d, block)


@njit(cache=True)
def frame_placements_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, work: np.ndarray,
                           out: np.ndarray) -> None:
    """``out[f]`` (4x4) = ``T_world_f(q)`` for every frame f."""
    md = unpack(ki, kf)
    C, r, C_f, r_f, _, _ = placement_scratch(md.nbodies, work)
    forward_placements(md, q, C, r)
    for f in range(md.nframes):
        frame_in_world(md, f, C, r, C_f, r_f)
        write_homogeneous(C_f, r_f, out[f])


_FRAME_PLACEMENT = Kernel(frame_placement_kernel, KI, KF, IN1, INT, OUT2)
_FRAME_PLACEMENTS = Kernel(frame_placements_kernel, KI, KF, IN1, OUT1, OUT3)
_FRAME_PLACEMENT_BATCH = Kernel(frame_placement_batch_kernel, KI, KF, IN2, INT, OUT3)


def frame_placement(model: Model, q: ArrayLike, frame: str | int, data: Data | None = None) -> np.ndarray:
    """4x4 homogeneous transform world <- frame at configuration ``q``.

    With ``data`` (``model.create_data()``) the result is written into and returned as ``data.oMf[frame]``,
    overwritten by the next call for that frame. The common inputs (a float64 array, a known frame) are
    tested inline: this is the hottest call.
    """
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = model.check_q(q)
    try:
        fid = model.frame_ids[frame]
    except (KeyError, TypeError):
        fid = model.frame_id(frame)  # raises, naming close frames
    out = np.empty((4, 4)) if data is None else data.of(model).oMf_rows[fid]
    ki, kf = model.kernel_data
    _FRAME_PLACEMENT.call(ki, kf, q, fid, out)
    return out


def frame_placements(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """(nframes, 4, 4): world <- frame for every frame, in ``model.frame_names`` order (with ``data``: into
    and as ``data.oMf``)."""
    q = model.check_q(q)
    if data is None:
        out, work = np.empty((model.nframes, 4, 4)), NO_WORK
    else:
        out, work = data.of(model).oMf, data.work
    ki, kf = model.kernel_data
    _FRAME_PLACEMENTS.call(ki, kf, q, work, out)
    return out


def frame_placements_batch(model: Model, Q: ArrayLike, frame: str | int) -> np.ndarray:
    """(N, 4, 4): world <- frame for each row of ``Q`` (N x nq), in one compiled loop."""
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    if Q.shape[1:] != (model.nq,):  # (N, nq): two dimensions
        raise ValueError(f"Q must have shape (N, {model.nq}), got {Q.shape}")
    out = np.empty((Q.shape[0], 4, 4))
    ki, kf = model.kernel_data
    _FRAME_PLACEMENT_BATCH.call(ki, kf, Q, model.frame_id(frame), out)
    return out
