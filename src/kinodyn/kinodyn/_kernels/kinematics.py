"""Compiled kinematics kernels over the packed model arrays ``(ki, kf)`` (see ``common.unpack``).

Outputs are written into caller-allocated arrays. ``reference`` is one of ``WORLD``,
``LOCAL``, ``LOCAL_WORLD_ALIGNED`` (Pinocchio's names, ARCHITECTURE.md §3).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kinodyn._kernels.common import (
    JOINT_FREEFLYER,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
    ModelArrays,
    cross3,
    forward_placements,
    forward_placements_support,
    joint_columns,
    matmul3,
    matrices_view,
    matvec3,
    motion_cross,
    quaternion_to_rotation,
    rows_view,
    skew,
    support,
    unpack,
)

WORLD = 0
LOCAL = 1
LOCAL_WORLD_ALIGNED = 2


@njit(cache=True, inline="always")
def _scratch(nb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Body placements ``C`` (nb,3,3), ``r`` (nb,3), a frame's ``C_f``, ``r_f``, joint columns ``S`` (6,6)
    and a point ``o`` (3,), in one allocation (``as_strided`` views: ``reshape`` costs ~15 ns each)."""
    block = np.empty(12 * nb + 51)
    f = 12 * nb
    return (matrices_view(block, 0, nb), rows_view(block, 9 * nb, nb, 3), rows_view(block, f, 3, 3),
            block[f + 9:f + 12], rows_view(block, f + 12, 6, 6), block[f + 48:f + 51])


@njit(cache=True, inline="always")
def _frame_in_world(md: ModelArrays, frame: int, C: np.ndarray, r: np.ndarray,
                    C_f: np.ndarray, r_f: np.ndarray) -> None:
    """``T_world_frame = T_world_body T_body_frame`` from the body placements."""
    b = md.frame_body[frame]
    matmul3(C[b], md.frame_rotation[frame], C_f)
    matvec3(C[b], md.frame_translation[frame], r_f)
    for k in range(3):
        r_f[k] += r[b, k]


@njit(cache=True, inline="always")
def _write_homogeneous(C_f: np.ndarray, r_f: np.ndarray, out: np.ndarray) -> None:
    for a in range(3):
        for b in range(3):
            out[a, b] = C_f[a, b]
        out[a, 3] = r_f[a]
        out[3, a] = 0.0
    out[3, 3] = 1.0


@njit(cache=True, inline="always")
def _frame_along_support(md: ModelArrays, q: np.ndarray, frame: int, chain: np.ndarray, C: np.ndarray,
                         r: np.ndarray, C_f: np.ndarray, r_f: np.ndarray) -> int:
    """Placements of the bodies on the frame's support and of the frame; returns the chain depth."""
    depth = support(md, md.frame_body[frame], chain)
    forward_placements_support(md, q, chain, depth, C, r)
    _frame_in_world(md, frame, C, r, C_f, r_f)
    return depth


@njit(cache=True)
def frame_placement(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frame: int, out: np.ndarray) -> None:
    """``out`` (4x4) = ``T_world_frame(q)``, along the frame's support only (Seed 000 §2.8.3, (2.137))."""
    md = unpack(ki, kf)
    C, r, C_f, r_f, _, _ = _scratch(md.nbodies)
    _frame_along_support(md, q, frame, np.empty(md.nbodies, np.int64), C, r, C_f, r_f)
    _write_homogeneous(C_f, r_f, out)


@njit(cache=True)
def frame_placement_batch(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, frame: int, out: np.ndarray) -> None:
    """``out[k]`` (4x4) = ``T_world_frame(Q[k])`` for every row of ``Q`` (N x nq)."""
    md = unpack(ki, kf)
    C, r, C_f, r_f, _, _ = _scratch(md.nbodies)
    chain = np.empty(md.nbodies, np.int64)
    depth = support(md, md.frame_body[frame], chain)
    for k in range(Q.shape[0]):
        forward_placements_support(md, Q[k], chain, depth, C, r)
        _frame_in_world(md, frame, C, r, C_f, r_f)
        _write_homogeneous(C_f, r_f, out[k])


@njit(cache=True)
def frame_placements(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out[f]`` (4x4) = ``T_world_f(q)`` for every frame f."""
    md = unpack(ki, kf)
    C, r, C_f, r_f, _, _ = _scratch(md.nbodies)
    forward_placements(md, q, C, r)
    for f in range(md.nframes):
        _frame_in_world(md, f, C, r, C_f, r_f)
        _write_homogeneous(C_f, r_f, out[f])


@njit(cache=True, inline="always")
def _rotate_to_local(C_f: np.ndarray, M: np.ndarray) -> None:
    """``M[0:3] <- C_f^T M[0:3]``, ``M[3:6] <- C_f^T M[3:6]`` column by column (6 x n)."""
    for c in range(M.shape[1]):
        for half in (0, 3):
            x0, x1, x2 = M[half, c], M[half + 1, c], M[half + 2, c]
            for a in range(3):
                M[half + a, c] = C_f[0, a] * x0 + C_f[1, a] * x1 + C_f[2, a] * x2


@njit(cache=True)
def frame_jacobian(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frame: int, reference: int,
                   out: np.ndarray) -> None:
    """``out`` (6 x nv): geometric Jacobian ``[J_P; J_R]`` of the frame in ``reference``.

    Column of each joint on the frame's support: revolute ``[n x (o - r_k); n]``, prismatic
    ``[n; 0]``, free flyer ``[[C, [r_b - o]x C], [0, C]]``, with ``o`` = world origin (WORLD) or
    the frame origin (LOCAL_WORLD_ALIGNED; LOCAL rotates that into frame axes). Mimic joints
    add ``multiplier * column`` to their master's column.
    Seed 000 §2.8.5, (2.161)-(2.167); §2.10.3, (2.248)-(2.252).
    """
    md = unpack(ki, kf)
    C, r, C_f, r_f, S, o = _scratch(md.nbodies)
    chain = np.empty(md.nbodies, np.int64)
    depth = _frame_along_support(md, q, frame, chain, C, r, C_f, r_f)
    for k in range(3):
        o[k] = 0.0 if reference == WORLD else r_f[k]
    out[:, :] = 0.0
    joint_type, joint_axis, multiplier, idx_v = md.joint_type, md.joint_axis, md.joint_multiplier, md.idx_v
    for d in range(depth):
        i = chain[d]
        n = joint_columns(joint_type, joint_axis, i, C, r, o, S)
        m = multiplier[i]
        iv = idx_v[i]
        for c in range(n):
            for k in range(6):
                out[k, iv + c] += m * S[k, c]
    if reference == LOCAL:
        _rotate_to_local(C_f, out)


@njit(cache=True)
def frame_bias_acceleration(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, frame: int,
                            reference: int, out: np.ndarray) -> None:
    """``out`` (6,) = ``dJ/dt v`` of the frame in ``reference`` (the frame acceleration at zero qdd).

    World-axes spatial recursion ``V_k = V_p + S_k qd_k``, ``A_k = A_p + V_p x S_k qd_k`` (the
    joint columns are constant in the body, so ``dS/dt = V x S``; Seed 001 Def. 8.3, (8.37)).
    WORLD: ``A``; LOCAL: ``A`` taken at the frame origin in frame axes; LOCAL_WORLD_ALIGNED:
    classical drift ``[a_o + dw x r_f + w x v_f; dw]`` of the frame origin (Seed 000 §2.7,
    ``a_P = a_B + Ψ x r_BP + Ω x (Ω x r_BP)``).
    """
    md = unpack(ki, kf)
    C, r, C_f, r_f, S, o = _scratch(md.nbodies)
    chain = np.empty(md.nbodies, np.int64)
    depth = _frame_along_support(md, q, frame, chain, C, r, C_f, r_f)
    for k in range(3):
        o[k] = 0.0  # columns at the world origin
    V = np.zeros(6)
    A = np.zeros(6)
    Sqd = np.empty(6)
    VxS = np.empty(6)
    joint_type, joint_axis, multiplier, idx_v = md.joint_type, md.joint_axis, md.joint_multiplier, md.idx_v
    for d in range(depth):
        i = chain[d]
        n = joint_columns(joint_type, joint_axis, i, C, r, o, S)
        m = multiplier[i]
        iv = idx_v[i]
        for k in range(6):
            acc = 0.0
            for c in range(n):
                acc += S[k, c] * v[iv + c]
            Sqd[k] = m * acc
        motion_cross(V, Sqd, VxS)
        for k in range(6):
            A[k] += VxS[k]
            V[k] += Sqd[k]
    if reference == WORLD:
        out[:] = A
        return
    # Velocity and spatial acceleration taken at the frame origin: x_o + x_w x r_f.
    tmp = np.empty(3)
    cross3(V[3:6], r_f, tmp)
    v_f = V[0:3] + tmp
    cross3(A[3:6], r_f, tmp)
    out[0:3] = A[0:3] + tmp
    out[3:6] = A[3:6]
    if reference == LOCAL:
        _rotate_to_local(C_f, out.reshape((6, 1)))
    else:
        cross3(V[3:6], v_f, tmp)
        for k in range(3):
            out[k] += tmp[k]


@njit(cache=True, inline="always")
def _body_coms(md: ModelArrays, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World placements ``C``, ``r`` and world centres of mass ``c`` of every body."""
    C, r, _, _, _, _ = _scratch(md.nbodies)
    forward_placements(md, q, C, r)
    c = np.empty((md.nbodies, 3))
    body_com = md.body_com
    for i in range(md.nbodies):
        for k in range(3):
            c[i, k] = (r[i, k] + C[i, k, 0] * body_com[i, 0] + C[i, k, 1] * body_com[i, 1]
                       + C[i, k, 2] * body_com[i, 2])
    return C, r, c


@njit(cache=True)
def center_of_mass(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out`` = ``sum_i m_i c_i / sum_i m_i`` over the moving bodies (universe excluded)."""
    md = unpack(ki, kf)
    _, _, c = _body_coms(md, q)
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
def com_jacobian(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out`` (3 x nv) = ``d com / d v``: ``(1/M) sum_i m_i J_P(c_i)`` (Seed 000 §2.8, ◇ CoM Jacobian).

    With the subtree mass ``M_k`` and first moment ``h_k = sum m_i c_i`` below joint k, the column
    is ``n x (h_k - M_k r_k) / M`` (revolute), ``M_k n / M`` (prismatic), and
    ``[M_k C, -[h_k - M_k r_k]x C] / M`` for the free flyer.
    """
    md = unpack(ki, kf)
    C, r, c = _body_coms(md, q)
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


@njit(cache=True)
def _se3_left_jacobian_coefficients(theta: float) -> tuple[float, float]:
    """``(b, c)`` with ``V(w) = I + b [w]x + c [w]x^2``: ``(1-cos θ)/θ², (θ-sin θ)/θ³`` (series near 0)."""
    if theta < 1e-3:
        t2 = theta * theta
        return 0.5 - t2 / 24.0 + t2 * t2 / 720.0, 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    return (1.0 - math.cos(theta)) / theta ** 2, (theta - math.sin(theta)) / theta ** 3


@njit(cache=True)
def _quaternion_multiply(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """Hamilton product ``a ⊗ b`` of (x, y, z, w) quaternions (Seed 000 §2.4.5, (2.56))."""
    ax, ay, az, aw = a[0], a[1], a[2], a[3]
    bx, by, bz, bw = b[0], b[1], b[2], b[3]
    out[0] = aw * bx + ax * bw + ay * bz - az * by
    out[1] = aw * by - ax * bz + ay * bw + az * bx
    out[2] = aw * bz + ax * by - ay * bx + az * bw
    out[3] = aw * bw - ax * bx - ay * by - az * bz


@njit(cache=True)
def _normalized(quat: np.ndarray) -> np.ndarray:
    return quat / math.sqrt(quat[0] ** 2 + quat[1] ** 2 + quat[2] ** 2 + quat[3] ** 2)


@njit(cache=True)
def integrate(q: np.ndarray, v: np.ndarray, dt: float, floating: bool, out: np.ndarray) -> None:
    """``out = q ⊕ v dt``: joints add; the free flyer moves by ``T exp(dt [v_b; w_b])`` (body twist).

    SE(3) exponential: rotation ``Exp(w)``, translation ``C V(w) v`` with the SO(3) left Jacobian
    ``V(w) = I + (1-cos θ)/θ² [w]x + (θ-sin θ)/θ³ [w]x²`` (Seed 000 §2.5, (2.104)).
    """
    iq = 7 if floating else 0
    iv = 6 if floating else 0
    for k in range(q.shape[0] - iq):
        out[iq + k] = q[iq + k] + dt * v[iv + k]
    if not floating:
        return
    u = v[0:3] * dt
    w = v[3:6] * dt
    theta = math.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2)
    b, c = _se3_left_jacobian_coefficients(theta)
    wu = np.empty(3)
    wwu = np.empty(3)
    cross3(w, u, wu)
    cross3(w, wu, wwu)
    Vu = u + b * wu + c * wwu
    quat0 = _normalized(q[3:7])
    C0 = np.empty((3, 3))
    from_quaternion = np.empty(4)
    half = 0.5 * theta
    s = math.sin(half) / theta if theta > 1e-8 else 0.5 - theta * theta / 48.0
    from_quaternion[0:3] = s * w
    from_quaternion[3] = math.cos(half)
    quaternion_to_rotation(quat0, C0)
    step = np.empty(3)
    matvec3(C0, Vu, step)
    for k in range(3):
        out[k] = q[k] + step[k]
    quat1 = np.empty(4)
    _quaternion_multiply(quat0, from_quaternion, quat1)
    out[3:7] = _normalized(quat1)


@njit(cache=True)
def difference(q0: np.ndarray, q1: np.ndarray, floating: bool, out: np.ndarray) -> None:
    """``out = q1 ⊖ q0``, the v with ``integrate(q0, v, 1) = q1`` (free flyer: SE(3) log, shortest rotation).

    ``w = Log(quat0* ⊗ quat1)``, ``v = V(w)^-1 C0^T (r1 - r0)`` with
    ``V^-1 = I - [w]x / 2 + (1/θ²)(1 - θ sin θ / (2(1 - cos θ))) [w]x²`` (Seed 000 §2.5, (2.105)-(2.107)).
    """
    iq = 7 if floating else 0
    iv = 6 if floating else 0
    for k in range(q0.shape[0] - iq):
        out[iv + k] = q1[iq + k] - q0[iq + k]
    if not floating:
        return
    a = _normalized(q0[3:7])
    b = _normalized(q1[3:7])
    a_conj = np.array([-a[0], -a[1], -a[2], a[3]])
    dq = np.empty(4)
    _quaternion_multiply(a_conj, b, dq)
    if dq[3] < 0.0:
        dq = -dq
    s = math.sqrt(dq[0] ** 2 + dq[1] ** 2 + dq[2] ** 2)
    theta = 2.0 * math.atan2(s, dq[3])
    factor = theta / s if s > 1e-8 else 2.0 / dq[3]
    w = factor * dq[0:3]
    C0 = np.empty((3, 3))
    quaternion_to_rotation(a, C0)
    dr = q1[0:3] - q0[0:3]
    local = np.empty(3)
    for k in range(3):
        local[k] = C0[0, k] * dr[0] + C0[1, k] * dr[1] + C0[2, k] * dr[2]
    if theta < 1e-3:
        t2 = theta * theta
        e = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    else:
        e = (1.0 - theta * math.sin(theta) / (2.0 * (1.0 - math.cos(theta)))) / (theta * theta)
    wl = np.empty(3)
    wwl = np.empty(3)
    cross3(w, local, wl)
    cross3(w, wl, wwl)
    out[0:3] = local - 0.5 * wl + e * wwl
    out[3:6] = w
