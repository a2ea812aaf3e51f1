"""Numba device functions shared by the kinematics and dynamics kernels.

Every kernel receives the model as two flat arrays, ``ki`` (int64) and ``kf`` (float64), from
``model.kernel_data`` (layout: docs/core-model-layout.md, "Kernel data"), and starts with
``md = unpack(ki, kf)``: a ``ModelArrays`` named tuple of views whose fields carry the Model
attribute names (``md.parent``, ``md.joint_rotation``, ...).

Functions (all ``njit(cache=True)``):

- ``unpack(ki, kf) -> ModelArrays``
- ``skew(w, out)``, ``cross3(a, b, out)``, ``matmul3(A, B, out)``, ``matvec3(A, x, out)``
- ``rotation_about_axis(axis, angle, out)``: Rodrigues, unit axis (Seed 000 §2.4.5, (2.48))
- ``quaternion_to_rotation(quat_xyzw, out)``: normalises the quaternion first
- ``joint_coordinate(md, i, q)``, ``joint_rate(md, i, v)``: 1-dof joint value of body i with the
  mimic coupling ``multiplier * x[idx] + offset`` applied (offset only for positions)
- ``joint_placement(md, i, q, C_out, r_out)``: ``C_parent_body``, ``parent_r_body`` of body i
- ``forward_placements(md, q, C, r)``: world <- body for every body (Seed 000 §2.8.3, (2.137))
- ``support(md, body)``: bodies from the root down to ``body`` (universe excluded)
- ``forward_placements_support(md, q, chain, C, r)``: the same, only along ``chain``
- ``motion_subspace(md, i, C, r, o, S)``: columns of body i's joint (``S[:, :nv_joint]``) as
  6-D twists ``[v; w]`` in world axes with linear velocity taken at the world point ``o``,
  without the mimic multiplier (Seed 000 §2.8.5, (2.166); §2.10.3, (2.252))
- ``motion_cross(V, W, out)``: spatial motion cross product ``V x W`` for ``[v; w]`` vectors
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

JOINT_NONE = 0
JOINT_REVOLUTE = 1
JOINT_PRISMATIC = 2
JOINT_FREEFLYER = 3

INT_HEADER = 4  # ki[0:4] = nbodies, nframes, nq, nv

ModelArrays = namedtuple(
    "ModelArrays",
    [
        "nbodies", "nframes", "nq", "nv",
        "parent", "joint_type", "idx_q", "idx_v", "frame_body",
        "joint_axis", "joint_rotation", "joint_translation", "joint_multiplier", "joint_offset",
        "mass", "body_com", "inertia", "frame_rotation", "frame_translation", "gravity",
    ],
)


@njit(cache=True)
def unpack(ki: np.ndarray, kf: np.ndarray) -> ModelArrays:
    """Views of the packed model arrays (layout: docs/core-model-layout.md, "Kernel data")."""
    nb = ki[0]
    nf = ki[1]
    o = INT_HEADER
    parent = ki[o:o + nb]
    o += nb
    joint_type = ki[o:o + nb]
    o += nb
    idx_q = ki[o:o + nb]
    o += nb
    idx_v = ki[o:o + nb]
    o += nb
    frame_body = ki[o:o + nf]
    o = 0
    joint_axis = kf[o:o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    joint_rotation = kf[o:o + 9 * nb].reshape((nb, 3, 3))
    o += 9 * nb
    joint_translation = kf[o:o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    joint_multiplier = kf[o:o + nb]
    o += nb
    joint_offset = kf[o:o + nb]
    o += nb
    mass = kf[o:o + nb]
    o += nb
    body_com = kf[o:o + 3 * nb].reshape((nb, 3))
    o += 3 * nb
    inertia = kf[o:o + 9 * nb].reshape((nb, 3, 3))
    o += 9 * nb
    frame_rotation = kf[o:o + 9 * nf].reshape((nf, 3, 3))
    o += 9 * nf
    frame_translation = kf[o:o + 3 * nf].reshape((nf, 3))
    o += 3 * nf
    gravity = kf[o:o + 3]
    return ModelArrays(
        nb, nf, ki[2], ki[3],
        parent, joint_type, idx_q, idx_v, frame_body,
        joint_axis, joint_rotation, joint_translation, joint_multiplier, joint_offset,
        mass, body_com, inertia, frame_rotation, frame_translation, gravity,
    )


@njit(cache=True)
def skew(w: np.ndarray, out: np.ndarray) -> None:
    """``out = [w]x`` so that ``[w]x b = w x b`` (Seed 000 §2.4, skew-symmetric matrix)."""
    out[0, 0] = 0.0
    out[0, 1] = -w[2]
    out[0, 2] = w[1]
    out[1, 0] = w[2]
    out[1, 1] = 0.0
    out[1, 2] = -w[0]
    out[2, 0] = -w[1]
    out[2, 1] = w[0]
    out[2, 2] = 0.0


@njit(cache=True)
def cross3(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = a x b`` (``out`` must not alias ``a`` or ``b``)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def matmul3(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    """``out = A @ B`` for 3x3 matrices (``out`` must not alias ``A`` or ``B``)."""
    for r in range(3):
        for c in range(3):
            out[r, c] = A[r, 0] * B[0, c] + A[r, 1] * B[1, c] + A[r, 2] * B[2, c]


@njit(cache=True)
def matvec3(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``out = A @ x`` for a 3x3 matrix (``out`` must not alias ``x``)."""
    for r in range(3):
        out[r] = A[r, 0] * x[0] + A[r, 1] * x[1] + A[r, 2] * x[2]


@njit(cache=True)
def rotation_about_axis(axis: np.ndarray, angle: float, out: np.ndarray) -> None:
    """Rodrigues: ``out = cos θ I + sin θ [n]x + (1 - cos θ) n n^T`` for a unit axis n.

    Seed 000 §2.4.5, (2.48) (angle-axis to rotation matrix).
    """
    c = math.cos(angle)
    s = math.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    out[0, 0] = c + t * x * x
    out[0, 1] = t * x * y - s * z
    out[0, 2] = t * x * z + s * y
    out[1, 0] = t * x * y + s * z
    out[1, 1] = c + t * y * y
    out[1, 2] = t * y * z - s * x
    out[2, 0] = t * x * z - s * y
    out[2, 1] = t * y * z + s * x
    out[2, 2] = c + t * z * z


@njit(cache=True)
def quaternion_to_rotation(quat: np.ndarray, out: np.ndarray) -> None:
    """Rotation matrix of the Hamilton quaternion ``(x, y, z, w)``, normalised first.

    Seed 000 §2.4.5, (2.54) (unit quaternion to rotation matrix).
    """
    n = math.sqrt(quat[0] ** 2 + quat[1] ** 2 + quat[2] ** 2 + quat[3] ** 2)
    x, y, z, w = quat[0] / n, quat[1] / n, quat[2] / n, quat[3] / n
    out[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[0, 1] = 2.0 * (x * y - z * w)
    out[0, 2] = 2.0 * (x * z + y * w)
    out[1, 0] = 2.0 * (x * y + z * w)
    out[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[1, 2] = 2.0 * (y * z - x * w)
    out[2, 0] = 2.0 * (x * z - y * w)
    out[2, 1] = 2.0 * (y * z + x * w)
    out[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True)
def joint_coordinate(md: ModelArrays, i: int, q: np.ndarray) -> float:
    """Position of the 1-dof joint of body i: ``multiplier * q[idx_q] + offset`` (mimic coupling)."""
    return md.joint_multiplier[i] * q[md.idx_q[i]] + md.joint_offset[i]


@njit(cache=True)
def joint_rate(md: ModelArrays, i: int, v: np.ndarray) -> float:
    """Velocity (or acceleration) of the 1-dof joint of body i: ``multiplier * v[idx_v]``."""
    return md.joint_multiplier[i] * v[md.idx_v[i]]


@njit(cache=True)
def joint_placement(md: ModelArrays, i: int, q: np.ndarray, C_out: np.ndarray, r_out: np.ndarray) -> None:
    """Placement of body i in its parent: ``C_out = C_parent_body``, ``r_out = parent_r_body``.

    Revolute: ``C_pj Rot(n, θ)``; prismatic: translation ``C_pj n d``; free flyer: the
    position and (normalised) quaternion in q (Seed 000 §2.8.3, (2.130); §2.10.2, (2.247)).
    """
    Cj = md.joint_rotation[i]
    rj = md.joint_translation[i]
    jt = md.joint_type[i]
    if jt == JOINT_REVOLUTE:
        local = np.empty((3, 3))
        rotation_about_axis(md.joint_axis[i], joint_coordinate(md, i, q), local)
        matmul3(Cj, local, C_out)
        r_out[:] = rj
    elif jt == JOINT_PRISMATIC:
        d = joint_coordinate(md, i, q)
        C_out[:, :] = Cj
        n = md.joint_axis[i]
        for k in range(3):
            r_out[k] = rj[k] + d * (Cj[k, 0] * n[0] + Cj[k, 1] * n[1] + Cj[k, 2] * n[2])
    elif jt == JOINT_FREEFLYER:
        iq = md.idx_q[i]
        local = np.empty((3, 3))
        quaternion_to_rotation(q[iq + 3:iq + 7], local)
        matmul3(Cj, local, C_out)
        matvec3(Cj, q[iq:iq + 3], r_out)
        for k in range(3):
            r_out[k] += rj[k]
    else:
        C_out[:, :] = np.eye(3)
        r_out[:] = 0.0


@njit(cache=True)
def _compose_with_parent(md: ModelArrays, i: int, q: np.ndarray, C: np.ndarray, r: np.ndarray,
                         C_loc: np.ndarray, r_loc: np.ndarray) -> None:
    joint_placement(md, i, q, C_loc, r_loc)
    p = md.parent[i]
    matmul3(C[p], C_loc, C[i])
    matvec3(C[p], r_loc, r[i])
    for k in range(3):
        r[i, k] += r[p, k]


@njit(cache=True)
def forward_placements(md: ModelArrays, q: np.ndarray, C: np.ndarray, r: np.ndarray) -> None:
    """World placements of every body: ``C[i] = C_world_body``, ``r[i] = world_r_body``.

    ``C`` is (nbodies, 3, 3), ``r`` (nbodies, 3). Forward recursion
    ``T_world_i = T_world_parent T_parent_i(q)`` (Seed 000 §2.8.3, (2.137)).
    """
    C[0, :, :] = np.eye(3)
    r[0, :] = 0.0
    C_loc = np.empty((3, 3))
    r_loc = np.empty(3)
    for i in range(1, md.nbodies):
        _compose_with_parent(md, i, q, C, r, C_loc, r_loc)


@njit(cache=True)
def support(md: ModelArrays, body: int) -> np.ndarray:
    """Bodies on the path from the root to ``body``, root first (universe excluded)."""
    depth = 0
    b = body
    while b > 0:
        depth += 1
        b = md.parent[b]
    chain = np.empty(depth, dtype=np.int64)
    b = body
    for k in range(depth - 1, -1, -1):
        chain[k] = b
        b = md.parent[b]
    return chain


@njit(cache=True)
def forward_placements_support(md: ModelArrays, q: np.ndarray, chain: np.ndarray,
                               C: np.ndarray, r: np.ndarray) -> None:
    """``forward_placements`` restricted to ``chain`` (from ``support``); other rows untouched."""
    C[0, :, :] = np.eye(3)
    r[0, :] = 0.0
    C_loc = np.empty((3, 3))
    r_loc = np.empty(3)
    for i in chain:
        _compose_with_parent(md, i, q, C, r, C_loc, r_loc)


@njit(cache=True)
def motion_subspace(md: ModelArrays, i: int, C: np.ndarray, r: np.ndarray, o: np.ndarray,
                    S: np.ndarray) -> int:
    """Joint columns of body i as world-axes twists ``[v_o; w]``; returns the joint's nv.

    ``C``, ``r``: world placements of the bodies. ``o``: world point where the linear velocity
    is taken (zeros: Pinocchio's WORLD twist; the frame origin: LOCAL_WORLD_ALIGNED).
    Revolute: ``[n x (o - r_i); n]``, prismatic ``[n; 0]`` (Seed 000 §2.8.5, (2.166)-(2.167));
    free flyer (body-frame v and w): ``[[C, [r_i - o]x C], [0, C]]`` (Seed 000 §2.10.3, (2.252)).
    The mimic multiplier is not applied.
    """
    jt = md.joint_type[i]
    Ci = C[i]
    if jt in (JOINT_REVOLUTE, JOINT_PRISMATIC):
        n = np.empty(3)
        matvec3(Ci, md.joint_axis[i], n)
        if jt == JOINT_REVOLUTE:
            d0 = o[0] - r[i, 0]
            d1 = o[1] - r[i, 1]
            d2 = o[2] - r[i, 2]
            S[0, 0] = n[1] * d2 - n[2] * d1
            S[1, 0] = n[2] * d0 - n[0] * d2
            S[2, 0] = n[0] * d1 - n[1] * d0
            S[3, 0] = n[0]
            S[4, 0] = n[1]
            S[5, 0] = n[2]
        else:
            S[0, 0] = n[0]
            S[1, 0] = n[1]
            S[2, 0] = n[2]
            S[3, 0] = 0.0
            S[4, 0] = 0.0
            S[5, 0] = 0.0
        return 1
    if jt == JOINT_FREEFLYER:
        d = np.empty(3)
        for k in range(3):
            d[k] = r[i, k] - o[k]
        sk = np.empty((3, 3))
        skew(d, sk)
        block = np.empty((3, 3))
        matmul3(sk, Ci, block)
        for a in range(3):
            for b in range(3):
                S[a, b] = Ci[a, b]
                S[a, 3 + b] = block[a, b]
                S[3 + a, b] = 0.0
                S[3 + a, 3 + b] = Ci[a, b]
        return 6
    return 0


@njit(cache=True)
def motion_cross(V: np.ndarray, W: np.ndarray, out: np.ndarray) -> None:
    """Spatial cross product of motion vectors ``[v; w]``: ``[w_V x v_W + v_V x w_W; w_V x w_W]``.

    Seed 001 Def. 8.3, (8.37)-(8.38) (Lie bracket ``[ad_V] W``, reordered linear-first).
    ``out`` must not alias.
    """
    v1, w1 = V[0:3], V[3:6]
    v2, w2 = W[0:3], W[3:6]
    out[0] = w1[1] * v2[2] - w1[2] * v2[1] + v1[1] * w2[2] - v1[2] * w2[1]
    out[1] = w1[2] * v2[0] - w1[0] * v2[2] + v1[2] * w2[0] - v1[0] * w2[2]
    out[2] = w1[0] * v2[1] - w1[1] * v2[0] + v1[0] * w2[1] - v1[1] * w2[0]
    out[3] = w1[1] * w2[2] - w1[2] * w2[1]
    out[4] = w1[2] * w2[0] - w1[0] * w2[2]
    out[5] = w1[0] * w2[1] - w1[1] * w2[0]
