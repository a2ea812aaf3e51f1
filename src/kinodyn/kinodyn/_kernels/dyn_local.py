"""Body-frame spatial quantities shared by the body-frame dynamics kernels (RNEA, ABA).

Every 6-D vector of body i is in body i's axes, the linear part taken at its origin:
twists ``V_i = [v; w]``, accelerations, wrenches ``[f; n]`` (Seed 001 §8.3.2, where each link
has its own frame {i}; reordered linear-first). A rigid-body inertia is then constant:
``(m, h, I_o)`` with ``h = m c`` and ``I_o = I_c + m (|c|^2 E - c c^T)`` about the body origin
(Steiner, Seed 001 (8.26)-(8.27)), used by ``dyn_world.inertia_times``. Between a body and its
parent, placed by ``E = C_parent_i`` and the origin ``p`` in parent coordinates, motion vectors
map by ``Ad_{T_i,parent}`` and wrenches by its transpose (Seed 001 (8.50)-(8.54)):

- ``motion_to_child(E, p, x, out)``: ``out = [E^T (v + w x p); E^T w]`` (``[Ad_{T_{i,i-1}}] x``)
- ``add_force_to_parent(E, p, f, out)``: ``out += [E f; E n + p x E f]`` (``[Ad_{T_{i,i-1}}]^T f``)

Joint columns in body axes (body frame = joint frame): revolute ``[0; n]``, prismatic ``[n; 0]``,
free flyer the identity (its v is the body twist, Seed 000 §2.10.3).

Functions (all ``njit(cache=True, inline="always")``):

- ``allocate_local_bodies(md) -> LocalBodies``: scratch for the transforms, with the constant
  body-frame inertias filled in; ``fill_local_transforms(md, q, L)``: ``E``, ``p`` at ``q``
- ``body_joint_motion(joint_type, joint_axis, i, m, x, iv, out)``: ``out = m S_i x[iv:iv+nv]``
- ``add_body_joint_projection(joint_type, joint_axis, i, m, f, iv, tau)``: ``tau[iv:iv+nv] += m S_i^T f``
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from kinodyn._kernels.common import (
    JOINT_FREEFLYER,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    ModelArrays,
    joint_transform,
    matrices_view,
    rows_view,
)
from kinodyn._kernels.dyn_world import inline

LocalBodies = namedtuple("LocalBodies", ["E", "p", "h", "inertia"])
LocalBodies.__doc__ = """Parent <- body transforms and body-frame inertias.

``E`` (nb,3,3) ``= C_parent_i``, ``p`` (nb,3) body i's origin in parent coordinates (row 0 unused);
``h`` (nb,3), ``inertia`` (nb,3,3): first moment and rotational inertia about the body origin in
body axes (the mass is ``md.mass``).
"""


@inline
def allocate_local_bodies(md: ModelArrays) -> LocalBodies:
    """``LocalBodies`` for ``md`` in one allocation: ``h`` and ``inertia`` set, ``E`` and ``p`` not."""
    nb = md.nbodies
    block = np.empty(24 * nb)
    L = LocalBodies(matrices_view(block, 0, nb), rows_view(block, 9 * nb, nb, 3),
                    rows_view(block, 12 * nb, nb, 3), matrices_view(block, 15 * nb, nb))
    mass, com, Ic, h, I_o = md.mass, md.body_com, md.inertia, L.h, L.inertia
    for i in range(nb):
        m = mass[i]
        c0, c1, c2 = com[i, 0], com[i, 1], com[i, 2]
        h[i, 0], h[i, 1], h[i, 2] = m * c0, m * c1, m * c2
        cc = c0 * c0 + c1 * c1 + c2 * c2
        for a in range(3):
            for b in range(3):
                I_o[i, a, b] = Ic[i, a, b] - h[i, a] * com[i, b] + (m * cc if a == b else 0.0)
    return L


@inline
def fill_local_transforms(md: ModelArrays, q: np.ndarray, L: LocalBodies) -> None:
    """``L.E[i]``, ``L.p[i]``: placement of every body i >= 1 in its parent's frame at ``q``."""
    joint_type, joint_axis, R, t = md.joint_type, md.joint_axis, md.joint_rotation, md.joint_translation
    multiplier, offset, idx_q, E, p = md.joint_multiplier, md.joint_offset, md.idx_q, L.E, L.p
    for i in range(1, md.nbodies):
        joint_transform(joint_type, joint_axis, R, t, multiplier, offset, idx_q, i, q, E, p)


@inline
def motion_to_child(E: np.ndarray, p: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``out = [E^T (v + w x p); E^T w]`` for ``x = [v; w]`` in parent coordinates (no aliasing)."""
    w0, w1, w2 = x[3], x[4], x[5]
    u0 = x[0] + w1 * p[2] - w2 * p[1]
    u1 = x[1] + w2 * p[0] - w0 * p[2]
    u2 = x[2] + w0 * p[1] - w1 * p[0]
    for a in range(3):
        out[a] = E[0, a] * u0 + E[1, a] * u1 + E[2, a] * u2
        out[3 + a] = E[0, a] * w0 + E[1, a] * w1 + E[2, a] * w2


@inline
def add_force_to_parent(E: np.ndarray, p: np.ndarray, f: np.ndarray, out: np.ndarray) -> None:
    """``out += [E f; E n + p x (E f)]`` for the wrench ``f = [f; n]`` in child coordinates."""
    g0 = E[0, 0] * f[0] + E[0, 1] * f[1] + E[0, 2] * f[2]
    g1 = E[1, 0] * f[0] + E[1, 1] * f[1] + E[1, 2] * f[2]
    g2 = E[2, 0] * f[0] + E[2, 1] * f[1] + E[2, 2] * f[2]
    out[0] += g0
    out[1] += g1
    out[2] += g2
    out[3] += E[0, 0] * f[3] + E[0, 1] * f[4] + E[0, 2] * f[5] + p[1] * g2 - p[2] * g1
    out[4] += E[1, 0] * f[3] + E[1, 1] * f[4] + E[1, 2] * f[5] + p[2] * g0 - p[0] * g2
    out[5] += E[2, 0] * f[3] + E[2, 1] * f[4] + E[2, 2] * f[5] + p[0] * g1 - p[1] * g0


@inline
def body_joint_motion(joint_type: np.ndarray, joint_axis: np.ndarray, i: int, m: float, x: np.ndarray,
                      iv: int, out: np.ndarray) -> None:
    """``out = m S_i x[iv:iv + nv]`` in body axes (m: mimic multiplier)."""
    jt = joint_type[i]
    if jt == JOINT_FREEFLYER:
        for k in range(6):
            out[k] = m * x[iv + k]
        return
    s = m * x[iv]
    n0, n1, n2 = s * joint_axis[i, 0], s * joint_axis[i, 1], s * joint_axis[i, 2]
    if jt == JOINT_REVOLUTE:
        out[0], out[1], out[2], out[3], out[4], out[5] = 0.0, 0.0, 0.0, n0, n1, n2
    elif jt == JOINT_PRISMATIC:
        out[0], out[1], out[2], out[3], out[4], out[5] = n0, n1, n2, 0.0, 0.0, 0.0
    else:
        for k in range(6):
            out[k] = 0.0


@inline
def add_body_joint_projection(joint_type: np.ndarray, joint_axis: np.ndarray, i: int, m: float, f: np.ndarray,
                         iv: int, tau: np.ndarray) -> None:
    """``tau[iv + c] += m S_i[:, c] . f`` for the joint's columns c (Seed 001 (8.49))."""
    jt = joint_type[i]
    if jt == JOINT_FREEFLYER:
        for k in range(6):
            tau[iv + k] += m * f[k]
        return
    half = 3 if jt == JOINT_REVOLUTE else 0
    if jt in (JOINT_REVOLUTE, JOINT_PRISMATIC):
        tau[iv] += m * (joint_axis[i, 0] * f[half] + joint_axis[i, 1] * f[half + 1]
                        + joint_axis[i, 2] * f[half + 2])
