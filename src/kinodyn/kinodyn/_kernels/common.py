"""Numba device functions shared by the kinematics and dynamics kernels.

Every kernel receives the model as two flat arrays, ``ki`` (int64) and ``kf`` (float64), from
``model.kernel_data`` (layout: docs/core-model-layout.md, "Kernel data"), and starts with
``md = unpack(ki, kf)``: a ``ModelArrays`` named tuple of views whose fields carry the Model
attribute names (``md.parent``, ``md.joint_rotation``, ...).

Performance rule: reading ``md.<field>`` or passing ``md`` to a function costs reference-count
updates of its arrays (~100 ns per access in a loop). Read the fields into locals once, before
per-body loops, and pass arrays (not ``md``) to functions called per body.

Functions (all ``njit(cache=True, inline="always")``: inlined at numba IR level, since a call
passing arrays costs about as much as these small computations); the rotation and spatial-vector
algebra they use is ``kinodyn.spatial.compiled``:

- ``unpack(ki, kf) -> ModelArrays``
- ``joint_displacement(joint_type, ..., i, q) -> 12 floats``: the joint's own motion ``(L, p)``
- ``place_body(parent, joint_type, ..., i, q, C, r)``: world placement of body i from its parent's
- ``set_universe(C, r)``, ``forward_placements(md, q, C, r)``: world <- body for every body
  (Robot Dynamics lecture notes (ETH), §2.8.3, (2.137))
- ``support(md, body, chain) -> depth``: bodies from the root down to ``body`` (universe excluded)
- ``forward_placements_support(md, q, chain, depth, C, r)``: the same, only along the chain
- ``joint_columns(joint_type, joint_axis, i, C, r, o, S)``: columns of body i's joint
  (``S[:, :nv_joint]``) as 6-D twists ``[v; w]`` in world axes with linear velocity taken at the
  world point ``o``, without the mimic multiplier (Robot Dynamics lecture notes (ETH), §2.8.5, (2.166);
  §2.10.3, (2.252))

``skew`` is re-exported here for the estimation kernels that import it from this module.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

from kinodyn.spatial.compiled import axis_rotation, quaternion_matrix
from kinodyn.spatial.compiled import skew as skew  # re-exported: the estimation kernels import it from here

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


@njit(cache=True, inline="always")
def rows_view(kf: np.ndarray, start: int, n: int, width: int) -> np.ndarray:
    """``kf[start:start + n * width]`` viewed as (n, width) (``as_strided``: numba's ``reshape``
    calls a C helper, ~15 ns per view)."""
    return as_strided(kf[start:start + n * width], shape=(n, width), strides=(8 * width, 8))


@njit(cache=True, inline="always")
def matrices_view(kf: np.ndarray, start: int, n: int) -> np.ndarray:
    """``kf[start:start + 9 n]`` viewed as (n, 3, 3)."""
    return as_strided(kf[start:start + 9 * n], shape=(n, 3, 3), strides=(72, 24, 8))


@njit(cache=True, inline="always")
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
    joint_axis = rows_view(kf, o, nb, 3)
    o += 3 * nb
    joint_rotation = matrices_view(kf, o, nb)
    o += 9 * nb
    joint_translation = rows_view(kf, o, nb, 3)
    o += 3 * nb
    joint_multiplier = kf[o:o + nb]
    o += nb
    joint_offset = kf[o:o + nb]
    o += nb
    mass = kf[o:o + nb]
    o += nb
    body_com = rows_view(kf, o, nb, 3)
    o += 3 * nb
    inertia = matrices_view(kf, o, nb)
    o += 9 * nb
    frame_rotation = matrices_view(kf, o, nf)
    o += 9 * nf
    frame_translation = rows_view(kf, o, nf, 3)
    o += 3 * nf
    gravity = kf[o:o + 3]
    return ModelArrays(
        nb, nf, ki[2], ki[3],
        parent, joint_type, idx_q, idx_v, frame_body,
        joint_axis, joint_rotation, joint_translation, joint_multiplier, joint_offset,
        mass, body_com, inertia, frame_rotation, frame_translation, gravity,
    )


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
def place_body(parent: np.ndarray, joint_type: np.ndarray, joint_axis: np.ndarray, R: np.ndarray,
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
def joint_columns(joint_type: np.ndarray, joint_axis: np.ndarray, i: int, C: np.ndarray, r: np.ndarray,
                  o: np.ndarray, S: np.ndarray) -> int:
    """Joint columns of body i as world-axes twists ``[v_o; w]`` in ``S[:, :nv]``; returns the joint's nv.

    ``C``, ``r``: world placements of the bodies. ``o``: world point where the linear velocity
    is taken (zeros: Pinocchio's WORLD twist; the frame origin: LOCAL_WORLD_ALIGNED).
    Revolute: ``[n x (o - r_i); n]``, prismatic ``[n; 0]`` (Robot Dynamics lecture notes (ETH), §2.8.5,
    (2.166)-(2.167)); free flyer (body-frame v and w): ``[[C, [r_i - o]x C], [0, C]]`` (Robot Dynamics lecture
    notes (ETH), §2.10.3, (2.252)). The mimic multiplier is not applied.
    """
    jt = joint_type[i]
    if jt in (JOINT_REVOLUTE, JOINT_PRISMATIC):
        ax = joint_axis
        n0 = C[i, 0, 0] * ax[i, 0] + C[i, 0, 1] * ax[i, 1] + C[i, 0, 2] * ax[i, 2]
        n1 = C[i, 1, 0] * ax[i, 0] + C[i, 1, 1] * ax[i, 1] + C[i, 1, 2] * ax[i, 2]
        n2 = C[i, 2, 0] * ax[i, 0] + C[i, 2, 1] * ax[i, 1] + C[i, 2, 2] * ax[i, 2]
        if jt == JOINT_REVOLUTE:
            d0, d1, d2 = o[0] - r[i, 0], o[1] - r[i, 1], o[2] - r[i, 2]
            S[0, 0] = n1 * d2 - n2 * d1
            S[1, 0] = n2 * d0 - n0 * d2
            S[2, 0] = n0 * d1 - n1 * d0
            S[3, 0] = n0
            S[4, 0] = n1
            S[5, 0] = n2
        else:
            S[0, 0] = n0
            S[1, 0] = n1
            S[2, 0] = n2
            S[3, 0] = 0.0
            S[4, 0] = 0.0
            S[5, 0] = 0.0
        return 1
    if jt == JOINT_FREEFLYER:
        d0, d1, d2 = r[i, 0] - o[0], r[i, 1] - o[1], r[i, 2] - o[2]
        for b in range(3):
            c0, c1, c2 = C[i, 0, b], C[i, 1, b], C[i, 2, b]
            S[0, b] = c0
            S[1, b] = c1
            S[2, b] = c2
            S[3, b] = 0.0
            S[4, b] = 0.0
            S[5, b] = 0.0
            S[0, 3 + b] = d1 * c2 - d2 * c1
            S[1, 3 + b] = d2 * c0 - d0 * c2
            S[2, 3 + b] = d0 * c1 - d1 * c0
            S[3, 3 + b] = c0
            S[4, 3 + b] = c1
            S[5, 3 + b] = c2
        return 6
    return 0
