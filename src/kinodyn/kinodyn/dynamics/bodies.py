"""Placements, joint columns, inertias and twists of every body at one configuration: what the dynamics
kernels share.

World-frame form (``WorldBodies``; ``aba``, ``crba``, ``centroidal``, ``coriolis``, ``energy``): every 6-D
vector is ``[linear; angular]`` in world axes with the linear part taken at the world origin (Pinocchio's
WORLD convention): twists ``V = [v_O; w]``, accelerations ``A = dV/dt``, wrenches ``f = [f; n_O]``.
Parent-to-child transforms then vanish from the recursions: a joint adds ``S qd`` to the parent twist, a
child's wrench adds unchanged to its parent's (Modern Robotics, §8.3 with every frame taken as the space frame
{0}; Robot Dynamics lecture notes (ETH), §3.5, (3.43)-(3.45), where all Jacobians are in one frame). A body's
inertia is ``(m, h, I_O)`` about the world origin, ``I_O = C I_c C^T + m (|c|^2 E - c c^T)`` (Steiner, Modern
Robotics, (8.26)-(8.27)), and acts as ``kinodyn.spatial.compiled.inertia_mul``.

Body-frame form (``LocalBodies``; ``rnea``): every 6-D vector of body i is in body i's axes, the linear part
taken at its origin (Modern Robotics, §8.3.2, where each link has its own frame {i}). The inertia
``(m, h, I_o)`` about the body origin is then constant; motion vectors pass from a parent to a child placed
by ``(E, p)`` through ``compiled.motion_to_child``, wrenches back through ``compiled.force_to_parent``. Joint
columns in body axes (body frame = joint frame): revolute ``[0; n]``, prismatic ``[n; 0]``, free flyer the
identity (its v is the body twist, Robot Dynamics lecture notes (ETH), §2.10.3).

All functions are ``njit(cache=True, inline="always")``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from kinodyn.kernel_data import JOINT_FREEFLYER, JOINT_NONE, JOINT_PRISMATIC, JOINT_REVOLUTE, ModelArrays
from kinodyn.kinematics.forward import joint_displacement, set_universe
from kinodyn.linalg import matrices_view, rows_view, work_block
from kinodyn.spatial.compiled import Vec6, inline, mat3_at, mat3_mul, mat3_vec, vec3_at
from kinodyn.spatial.compiled import body_wrench as wrench_of_motion

WorldBodies = namedtuple("WorldBodies", ["C", "r", "S", "h", "inertia"])
WorldBodies.__doc__ = """World placements and inertias of the bodies at one configuration.

``C`` (nb,3,3), ``r`` (nb,3): world <- body placements. ``S`` (nb,6,6): the joint's columns as
world twists (``S[i, :, :joint_nv(joint_type[i])]``, without the mimic multiplier). ``h`` (nb,3),
``inertia`` (nb,3,3): ``h`` and ``I_O`` of each body in world axes about the world origin (the
mass is ``md.mass``); row 0 (the universe) is zero.
"""


@inline
def joint_nv(joint_type: int) -> int:
    """Number of velocity coordinates of a joint type (6 free flyer, 1 revolute/prismatic, 0 none)."""
    if joint_type == JOINT_FREEFLYER:
        return 6
    if joint_type == JOINT_NONE:
        return 0
    return 1


@inline
def world_bodies_work_size(nb: int, nv: int) -> int:
    """Entries of the work block of ``WorldBodies`` for ``nb`` bodies."""
    return 60 * nb


@inline
def allocate_world_bodies(nb: int, work: np.ndarray) -> WorldBodies:
    """Uninitialised ``WorldBodies`` for ``nb`` bodies, as views of one block (``linalg.work_block``: the
    Data's work, or allocated; ``as_strided`` views, not ``reshape``: see ``linalg.rows_view``)."""
    return world_bodies_in(nb, work_block(work, 60 * nb))


@inline
def world_bodies_in(nb: int, block: np.ndarray) -> WorldBodies:
    """``allocate_world_bodies`` as views of ``block`` (60 nb entries)."""
    S = as_strided(block[12 * nb:48 * nb], shape=(nb, 6, 6), strides=(288, 48, 8))
    return WorldBodies(matrices_view(block, 0, nb), rows_view(block, 9 * nb, nb, 3), S,
                       rows_view(block, 48 * nb, nb, 3), matrices_view(block, 51 * nb, nb))


@inline
def fill_world_bodies(md: ModelArrays, q: np.ndarray, W: WorldBodies) -> None:  # noqa: PLR0915  (one compiled pass on scalar locals)
    """``W`` = placements, joint columns and world inertias ``(m, h, I_O)`` of every body at ``q``.

    ``T_world_i = T_world_parent T_parent_i(q)``, ``T_parent_i = (R_i L, t_i + R_i p)`` with ``(L, p)``
    from ``common.joint_displacement`` (Robot Dynamics lecture notes (ETH), §2.8.3, (2.137)); revolute columns
    ``[r_i x n; n]``, prismatic ``[n; 0]`` (§2.8.5, (2.166)-(2.167)); the free flyer's body-frame ``[v; w]``
    gives ``[[C, [r]x C], [0, C]]`` (§2.10.3, (2.252)); ``h = m c`` and ``I_O = C I_c C^T + m (|c|^2 E - c
    c^T)`` with ``c = C com + r`` the world CoM (Steiner, Modern Robotics, (8.26)-(8.27)). This is
    ``common.place_body`` and ``common.joint_columns`` (at the world origin) written out on scalar
    locals, so the placement feeds the columns and the inertia without a store and reload: faster
    than calling them (bench/bench_core.py), same results bit for bit.
    """
    parent, joint_type, joint_axis, R, t = (md.parent, md.joint_type, md.joint_axis, md.joint_rotation,
                                            md.joint_translation)
    multiplier, offset, idx_q = md.joint_multiplier, md.joint_offset, md.idx_q
    mass, com, Ic = md.mass, md.body_com, md.inertia
    C, r, S, h, I_O = W.C, W.r, W.S, W.h, W.inertia
    set_universe(C, r)
    for k in range(3):
        h[0, k] = 0.0
        for b in range(3):
            I_O[0, k, b] = 0.0
    for i in range(1, md.nbodies):
        l00, l01, l02, l10, l11, l12, l20, l21, l22, px, py, pz = joint_displacement(
            joint_type, joint_axis, multiplier, offset, idx_q, i, q)
        p = parent[i]
        # M = C_p R_i, C_i = M L, r_i = r_p + C_p t_i + M p
        Cp = mat3_at(C, p)
        M = mat3_mul(Cp, mat3_at(R, i))
        L = (l00, l01, l02, l10, l11, l12, l20, l21, l22)
        c00, c01, c02, c10, c11, c12, c20, c21, c22 = mat3_mul(M, L)
        u = mat3_vec(Cp, (t[i, 0], t[i, 1], t[i, 2]))
        w = mat3_vec(M, (px, py, pz))
        x0, x1, x2 = r[p, 0] + u[0] + w[0], r[p, 1] + u[1] + w[1], r[p, 2] + u[2] + w[2]
        C[i, 0, 0], C[i, 0, 1], C[i, 0, 2] = c00, c01, c02
        C[i, 1, 0], C[i, 1, 1], C[i, 1, 2] = c10, c11, c12
        C[i, 2, 0], C[i, 2, 1], C[i, 2, 2] = c20, c21, c22
        r[i, 0], r[i, 1], r[i, 2] = x0, x1, x2
        jt = joint_type[i]
        if jt == JOINT_FREEFLYER:
            for b in range(3):
                e0, e1, e2 = C[i, 0, b], C[i, 1, b], C[i, 2, b]
                S[i, 0, b], S[i, 1, b], S[i, 2, b] = e0, e1, e2
                S[i, 3, b], S[i, 4, b], S[i, 5, b] = 0.0, 0.0, 0.0
                S[i, 0, 3 + b] = x1 * e2 - x2 * e1
                S[i, 1, 3 + b] = x2 * e0 - x0 * e2
                S[i, 2, 3 + b] = x0 * e1 - x1 * e0
                S[i, 3, 3 + b], S[i, 4, 3 + b], S[i, 5, 3 + b] = e0, e1, e2
        elif jt in (JOINT_REVOLUTE, JOINT_PRISMATIC):
            k0, k1, k2 = joint_axis[i, 0], joint_axis[i, 1], joint_axis[i, 2]
            n0 = c00 * k0 + c01 * k1 + c02 * k2
            n1 = c10 * k0 + c11 * k1 + c12 * k2
            n2 = c20 * k0 + c21 * k1 + c22 * k2
            if jt == JOINT_REVOLUTE:
                S[i, 0, 0] = x1 * n2 - x2 * n1
                S[i, 1, 0] = x2 * n0 - x0 * n2
                S[i, 2, 0] = x0 * n1 - x1 * n0
                S[i, 3, 0], S[i, 4, 0], S[i, 5, 0] = n0, n1, n2
            else:
                S[i, 0, 0], S[i, 1, 0], S[i, 2, 0] = n0, n1, n2
                S[i, 3, 0], S[i, 4, 0], S[i, 5, 0] = 0.0, 0.0, 0.0
        m = mass[i]
        k0, k1, k2 = com[i, 0], com[i, 1], com[i, 2]
        g0 = c00 * k0 + c01 * k1 + c02 * k2 + x0
        g1 = c10 * k0 + c11 * k1 + c12 * k2 + x1
        g2 = c20 * k0 + c21 * k1 + c22 * k2 + x2
        h0, h1, h2 = m * g0, m * g1, m * g2
        h[i, 0], h[i, 1], h[i, 2] = h0, h1, h2
        mcc = m * (g0 * g0 + g1 * g1 + g2 * g2)
        u00, u01, u02, u10, u11, u12, u20, u21, u22 = mat3_mul(
            (c00, c01, c02, c10, c11, c12, c20, c21, c22), mat3_at(Ic, i))  # C Ic
        I00 = u00 * c00 + u01 * c01 + u02 * c02 - h0 * g0 + mcc
        I01 = u00 * c10 + u01 * c11 + u02 * c12 - h0 * g1
        I02 = u00 * c20 + u01 * c21 + u02 * c22 - h0 * g2
        I11 = u10 * c10 + u11 * c11 + u12 * c12 - h1 * g1 + mcc
        I12 = u10 * c20 + u11 * c21 + u12 * c22 - h1 * g2
        I22 = u20 * c20 + u21 * c21 + u22 * c22 - h2 * g2 + mcc
        I_O[i, 0, 0], I_O[i, 0, 1], I_O[i, 0, 2] = I00, I01, I02
        I_O[i, 1, 0], I_O[i, 1, 1], I_O[i, 1, 2] = I01, I11, I12
        I_O[i, 2, 0], I_O[i, 2, 1], I_O[i, 2, 2] = I02, I12, I22


@inline
def world_bodies(md: ModelArrays, q: np.ndarray, work: np.ndarray) -> WorldBodies:
    """Placements, joint columns and world inertias of every body at ``q`` (``fill_world_bodies``), in
    ``work[:60 nb]`` (``allocate_world_bodies``)."""
    W = allocate_world_bodies(md.nbodies, work)
    fill_world_bodies(md, q, W)
    return W


@inline
def joint_twist(S: np.ndarray, i: int, v: np.ndarray, iv: int, n: int,
                scale: float) -> tuple[float, float, float, float, float, float]:
    """``scale S_i v[iv:iv+n]``: the twist body ``i``'s joint adds (``n`` columns of ``S``; ``scale``: the
    mimic multiplier)."""
    s0 = s1 = s2 = s3 = s4 = s5 = 0.0
    for c in range(n):
        x = scale * v[iv + c]
        s0 += S[i, 0, c] * x
        s1 += S[i, 1, c] * x
        s2 += S[i, 2, c] * x
        s3 += S[i, 3, c] * x
        s4 += S[i, 4, c] * x
        s5 += S[i, 5, c] * x
    return s0, s1, s2, s3, s4, s5


@inline
def velocities(md: ModelArrays, W: WorldBodies, v: np.ndarray, V: np.ndarray) -> None:
    """World twists ``V[i] = V[p] + S_i qd_i`` of every body (``V[0] = 0``)."""
    parent, joint_type, idx_v, multiplier, S = md.parent, md.joint_type, md.idx_v, md.joint_multiplier, W.S
    for k in range(6):
        V[0, k] = 0.0
    for i in range(1, md.nbodies):
        p = parent[i]
        s0, s1, s2, s3, s4, s5 = joint_twist(S, i, v, idx_v[i], joint_nv(joint_type[i]), multiplier[i])
        V[i, 0], V[i, 1], V[i, 2] = V[p, 0] + s0, V[p, 1] + s1, V[p, 2] + s2
        V[i, 3], V[i, 4], V[i, 5] = V[p, 3] + s3, V[p, 4] + s4, V[p, 5] + s5


@inline
def subtree_inertias(md: ModelArrays, W: WorldBodies, work: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                                  np.ndarray]:
    """Composite ``(m, h, I_O)`` of the subtree rooted at each body (``subtree_inertias_into``), in
    ``work[:13 nb]`` (``linalg.work_block``)."""
    nb = md.nbodies
    block = work_block(work, 13 * nb)
    mc, hc, Ic = block[0:nb], rows_view(block, nb, nb, 3), matrices_view(block, 4 * nb, nb)
    subtree_inertias_into(md, W, mc, hc, Ic)
    return mc, hc, Ic


@inline
def subtree_inertias_into(md: ModelArrays, W: WorldBodies, mc: np.ndarray, hc: np.ndarray,
                          Ic: np.ndarray) -> None:
    """``mc[i], hc[i], Ic[i]`` = composite ``(m, h, I_O)`` of the subtree rooted at body i (world axes,
    about the origin).

    Bodies are summed without transforms because all inertias share the world frame
    (Modern Robotics, §8.2.3, (8.42); composite bodies, §8.2.1). Row 0 holds the sum over all moving bodies.
    """
    mass, parent, h, inertia = md.mass, md.parent, W.h, W.inertia
    for i in range(md.nbodies):
        mc[i] = mass[i]
        for a in range(3):
            hc[i, a] = h[i, a]
            for b in range(3):
                Ic[i, a, b] = inertia[i, a, b]
    mc[0] = 0.0
    for i in range(md.nbodies - 1, 0, -1):
        p = parent[i]
        mc[p] += mc[i]
        for a in range(3):
            hc[p, a] += hc[i, a]
            for b in range(3):
                Ic[p, a, b] += Ic[i, a, b]


LocalBodies = namedtuple("LocalBodies", ["E", "p", "h", "inertia"])
LocalBodies.__doc__ = """Parent <- body transforms and body-frame inertias.

``E`` (nb,3,3) ``= C_parent_i``, ``p`` (nb,3) body i's origin in parent coordinates (row 0 unused);
``h`` (nb,3), ``inertia`` (nb,3,3): first moment and rotational inertia about the body origin in
body axes (the mass is ``md.mass``).
"""


@inline
def allocate_local_bodies(md: ModelArrays) -> LocalBodies:
    """``LocalBodies`` for ``md`` in one allocation: ``h`` and ``inertia`` set, ``E`` and ``p`` not."""
    return local_bodies_in(md, np.empty(24 * md.nbodies))


@inline
def local_bodies_in(md: ModelArrays, block: np.ndarray) -> LocalBodies:
    """``LocalBodies`` as views of ``block[:24 nb]``, with ``h`` and ``inertia`` set."""
    nb = md.nbodies
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
def column(S: np.ndarray, c: int, out: np.ndarray) -> None:
    """``out = S[:, c]``: column c of a body's joint columns (``WorldBodies.S[i]``)."""
    for k in range(6):
        out[k] = S[k, c]


@inline
def body_wrench(m: float, h: np.ndarray, inertia: np.ndarray, i: int, v0: float, v1: float, v2: float,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                w0: float, w1: float, w2: float, a0: float, a1: float, a2: float, b0: float, b1: float,
                b2: float) -> Vec6:
    """``I A + V x* (I V)`` of body ``i`` (``kinodyn.spatial.compiled.body_wrench``) with its inertia read
    from the ``h``, ``inertia`` arrays of ``WorldBodies`` or ``LocalBodies``, for the twist ``[v; w]`` and
    acceleration ``[a; b]``."""
    return wrench_of_motion(m, vec3_at(h, i), mat3_at(inertia, i), (v0, v1, v2, w0, w1, w2),
                            (a0, a1, a2, b0, b1, b2))
