"""World-frame spatial quantities shared by the dynamics kernels.

Every dynamics kernel works with 6-D vectors ``[linear; angular]`` in world axes, the linear
part taken at the world origin (Pinocchio's WORLD convention): twists ``V = [v_O; w]``, spatial
accelerations ``A = dV/dt``, wrenches ``f = [f; n_O]``. Parent-to-child transforms then vanish
from the recursions: a joint adds ``S qd`` to the parent twist, a child's wrench adds unchanged
to its parent's (Modern Robotics, §8.3 with every frame taken as the space frame {0}; Robot Dynamics lecture
notes (ETH), §3.5, (3.43)-(3.45), where all Jacobians are in one frame).

A rigid-body inertia is kept as ``(m, h, I_O)``: mass, first moment ``h = m c`` and the
rotational inertia about the world origin ``I_O = C I_c C^T + m (|c|^2 E - c c^T)`` (Steiner,
Modern Robotics, (8.26)-(8.27); Robot Dynamics lecture notes (ETH), §3.3.1). It maps a twist ``[v; w]`` to the
spatial momentum ``[m v + w x h; I_O w + h x v]`` (Modern Robotics, (8.34) and (8.42), reordered
linear-first).

Functions (all ``njit(cache=True)``):

- ``world_bodies(md, q) -> WorldBodies``: placements, joint columns and inertias of every body
  (``allocate_world_bodies(nb)`` + ``fill_world_bodies(md, q, W)``, for loops that reuse ``W``)
- ``inertia_times(m, h, I, x, out)``: ``out = I x`` for a ``(m, h, I_O)`` inertia
- ``joint_twist(S, i, v, iv, n, scale)`` / ``body_wrench(m, h, I, i, v, w, a, b)``: a joint's twist ``S qd``
  and a body's ``I A + V x* (I V)``, as scalars (the recursions keep 6-vectors in registers)
- ``force_cross(V, f, out)``: ``out = V x* f`` (Modern Robotics, Def. 8.4, (8.39), reordered)
- ``add_motion_cross(V, W, scale, out)``: ``out += scale (V x W)`` (Modern Robotics, Def. 8.3, (8.37))
- ``external_wrenches_world(fext, W, out)``: body-frame wrenches (about the body origin) to world
- ``subtree_inertias(md, W)`` / ``subtree_inertias_into(md, W, mc, hc, Ic)``: composite inertias
- ``cholesky_solve(A, b, n)``: solves the SPD system ``A[:n, :n] x = b[:n]`` in place in ``b``
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

from kinodyn._kernels.common import (
    JOINT_FREEFLYER,
    JOINT_NONE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    ModelArrays,
    joint_displacement,
    mat3_at,
    mat3_mul,
    mat3_vec,
    matrices_view,
    rows_view,
    set_universe,
)

# Per-body helpers are inlined at numba IR level: a call that passes arrays costs about as much
# as the small computation itself.
inline = njit(cache=True, inline="always")

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
def allocate_world_bodies(nb: int) -> WorldBodies:
    """Uninitialised ``WorldBodies`` for ``nb`` bodies, in one allocation (``as_strided`` views, not
    ``reshape``: see ``common.rows_view``)."""
    block = np.empty(60 * nb)
    S = as_strided(block[12 * nb:48 * nb], shape=(nb, 6, 6), strides=(288, 48, 8))
    return WorldBodies(matrices_view(block, 0, nb), rows_view(block, 9 * nb, nb, 3), S,
                       rows_view(block, 48 * nb, nb, 3), matrices_view(block, 51 * nb, nb))


@inline
def fill_world_bodies(md: ModelArrays, q: np.ndarray, W: WorldBodies) -> None:
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
def world_bodies(md: ModelArrays, q: np.ndarray) -> WorldBodies:
    """Placements, joint columns and world inertias of every body at ``q`` (``fill_world_bodies``)."""
    W = allocate_world_bodies(md.nbodies)
    fill_world_bodies(md, q, W)
    return W


@inline
def _world_inertia(m: float, com: np.ndarray, Ic: np.ndarray, C: np.ndarray, r: np.ndarray, h: np.ndarray,
                   I_O: np.ndarray) -> None:
    """``h = m c`` and ``I_O = C I_c C^T + m (|c|^2 E - c c^T)`` with ``c = C com + r`` the world CoM."""
    c0 = C[0, 0] * com[0] + C[0, 1] * com[1] + C[0, 2] * com[2] + r[0]
    c1 = C[1, 0] * com[0] + C[1, 1] * com[1] + C[1, 2] * com[2] + r[1]
    c2 = C[2, 0] * com[0] + C[2, 1] * com[1] + C[2, 2] * com[2] + r[2]
    c = (c0, c1, c2)
    h[0] = m * c0
    h[1] = m * c1
    h[2] = m * c2
    cc = c0 * c0 + c1 * c1 + c2 * c2
    for a in range(3):
        # row a of C Ic
        t0 = C[a, 0] * Ic[0, 0] + C[a, 1] * Ic[1, 0] + C[a, 2] * Ic[2, 0]
        t1 = C[a, 0] * Ic[0, 1] + C[a, 1] * Ic[1, 1] + C[a, 2] * Ic[2, 1]
        t2 = C[a, 0] * Ic[0, 2] + C[a, 1] * Ic[1, 2] + C[a, 2] * Ic[2, 2]
        for b in range(a, 3):
            value = t0 * C[b, 0] + t1 * C[b, 1] + t2 * C[b, 2] - h[a] * c[b]
            if a == b:
                value += m * cc
            I_O[a, b] = value
            I_O[b, a] = value


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
def body_wrench(m: float, h: np.ndarray, inertia: np.ndarray, i: int, v0: float, v1: float, v2: float,
                w0: float, w1: float, w2: float, a0: float, a1: float, a2: float, b0: float, b1: float,
                b2: float) -> tuple[float, float, float, float, float, float]:
    """``I A + V x* (I V)`` of body ``i`` (twist ``[v; w]``, acceleration ``[a; b]``, world axes), with
    ``I V = [m v + w x h; I_O w + h x v]``: the net wrench its motion needs (Modern Robotics, (8.46),
    reordered)."""
    h0, h1, h2 = h[i, 0], h[i, 1], h[i, 2]
    i00, i01, i02 = inertia[i, 0, 0], inertia[i, 0, 1], inertia[i, 0, 2]
    i10, i11, i12 = inertia[i, 1, 0], inertia[i, 1, 1], inertia[i, 1, 2]
    i20, i21, i22 = inertia[i, 2, 0], inertia[i, 2, 1], inertia[i, 2, 2]
    f0 = m * v0 + w1 * h2 - w2 * h1
    f1 = m * v1 + w2 * h0 - w0 * h2
    f2 = m * v2 + w0 * h1 - w1 * h0
    n0 = i00 * w0 + i01 * w1 + i02 * w2 + h1 * v2 - h2 * v1
    n1 = i10 * w0 + i11 * w1 + i12 * w2 + h2 * v0 - h0 * v2
    n2 = i20 * w0 + i21 * w1 + i22 * w2 + h0 * v1 - h1 * v0
    return (w1 * f2 - w2 * f1 + m * a0 + b1 * h2 - b2 * h1,
            w2 * f0 - w0 * f2 + m * a1 + b2 * h0 - b0 * h2,
            w0 * f1 - w1 * f0 + m * a2 + b0 * h1 - b1 * h0,
            w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1 + i00 * b0 + i01 * b1 + i02 * b2 + h1 * a2 - h2 * a1,
            w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2 + i10 * b0 + i11 * b1 + i12 * b2 + h2 * a0 - h0 * a2,
            w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0 + i20 * b0 + i21 * b1 + i22 * b2 + h0 * a1 - h1 * a0)


@inline
def inertia_times(m: float, h: np.ndarray, I_O: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``out = [m v + w x h; I w + h x v]`` for ``x = [v; w]`` (``out`` must not alias ``x``)."""
    v0, v1, v2, w0, w1, w2 = x[0], x[1], x[2], x[3], x[4], x[5]
    out[0] = m * v0 + w1 * h[2] - w2 * h[1]
    out[1] = m * v1 + w2 * h[0] - w0 * h[2]
    out[2] = m * v2 + w0 * h[1] - w1 * h[0]
    out[3] = I_O[0, 0] * w0 + I_O[0, 1] * w1 + I_O[0, 2] * w2 + h[1] * v2 - h[2] * v1
    out[4] = I_O[1, 0] * w0 + I_O[1, 1] * w1 + I_O[1, 2] * w2 + h[2] * v0 - h[0] * v2
    out[5] = I_O[2, 0] * w0 + I_O[2, 1] * w1 + I_O[2, 2] * w2 + h[0] * v1 - h[1] * v0


@inline
def force_cross(V: np.ndarray, f: np.ndarray, out: np.ndarray) -> None:
    """``out = V x* f = [w x f; w x n + v x f]`` for ``V = [v; w]``, ``f = [f; n]`` (no aliasing)."""
    v0, v1, v2, w0, w1, w2 = V[0], V[1], V[2], V[3], V[4], V[5]
    f0, f1, f2, n0, n1, n2 = f[0], f[1], f[2], f[3], f[4], f[5]
    out[0] = w1 * f2 - w2 * f1
    out[1] = w2 * f0 - w0 * f2
    out[2] = w0 * f1 - w1 * f0
    out[3] = w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
    out[4] = w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
    out[5] = w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0


@inline
def add_motion_cross(V: np.ndarray, W: np.ndarray, scale: float, out: np.ndarray) -> None:
    """``out += scale (V x W) = scale [w_V x v_W + v_V x w_W; w_V x w_W]``."""
    v0, v1, v2, w0, w1, w2 = V[0], V[1], V[2], V[3], V[4], V[5]
    a0, a1, a2, b0, b1, b2 = W[0], W[1], W[2], W[3], W[4], W[5]
    out[0] += scale * (w1 * a2 - w2 * a1 + v1 * b2 - v2 * b1)
    out[1] += scale * (w2 * a0 - w0 * a2 + v2 * b0 - v0 * b2)
    out[2] += scale * (w0 * a1 - w1 * a0 + v0 * b1 - v1 * b0)
    out[3] += scale * (w1 * b2 - w2 * b1)
    out[4] += scale * (w2 * b0 - w0 * b2)
    out[5] += scale * (w0 * b1 - w1 * b0)


@inline
def external_wrenches_world(fext: np.ndarray, W: WorldBodies, out: np.ndarray) -> None:
    """``out[i] = [C f; C n + r x (C f)]``: wrench ``fext[i] = [f; n]`` (body axes, about the body
    origin) in world axes about the world origin (Robot Dynamics lecture notes (ETH), §3.5.3,
    (3.49)-(3.51))."""
    out[0, :] = 0.0
    for i in range(1, fext.shape[0]):
        C = W.C[i]
        r = W.r[i]
        for half in (0, 3):
            for a in range(3):
                out[i, half + a] = (C[a, 0] * fext[i, half] + C[a, 1] * fext[i, half + 1]
                                    + C[a, 2] * fext[i, half + 2])
        f0, f1, f2 = out[i, 0], out[i, 1], out[i, 2]
        out[i, 3] += r[1] * f2 - r[2] * f1
        out[i, 4] += r[2] * f0 - r[0] * f2
        out[i, 5] += r[0] * f1 - r[1] * f0


@njit(cache=True)
def cholesky_solve(A: np.ndarray, b: np.ndarray, n: int) -> None:
    """Solve ``A[:n, :n] x = b[:n]`` for symmetric positive definite A, of which only the lower triangle
    is read; it is overwritten by the Cholesky factor, b by x. Raises if A is not positive definite."""
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            raise ValueError("matrix is not positive definite (a body or subtree without mass or inertia?)")
        d = np.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * b[k]
        b[i] = s / A[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= A[k, i] * b[k]
        b[i] = s / A[i, i]


@inline
def rigid_inertia_matrix(m: float, h: np.ndarray, I_O: np.ndarray, out: np.ndarray) -> None:
    """``out`` (6x6) = ``[[m E, -[h]x], [[h]x, I_O]]``, the matrix of ``inertia_times``."""
    for a in range(3):
        for b in range(3):
            out[a, b] = m if a == b else 0.0
            out[3 + a, 3 + b] = I_O[a, b]
    out[0, 3], out[0, 4], out[0, 5] = 0.0, h[2], -h[1]
    out[1, 3], out[1, 4], out[1, 5] = -h[2], 0.0, h[0]
    out[2, 3], out[2, 4], out[2, 5] = h[1], -h[0], 0.0
    for a in range(3):
        for b in range(3):
            out[3 + a, b] = -out[a, 3 + b]


@inline
def subtree_inertias(md: ModelArrays, W: WorldBodies) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Composite ``(m, h, I_O)`` of the subtree rooted at each body (``subtree_inertias_into``), in
    arrays allocated here."""
    nb = md.nbodies
    block = np.empty(13 * nb)
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
