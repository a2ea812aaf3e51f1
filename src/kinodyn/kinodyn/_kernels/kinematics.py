"""Compiled kinematics kernels over the packed model arrays ``(ki, kf)`` (see ``common.unpack``).

Outputs are written into caller-allocated arrays. ``reference`` is one of ``WORLD``,
``LOCAL``, ``LOCAL_WORLD_ALIGNED`` (Pinocchio's names, docs/conventions.md).
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
    forward_placements,
    forward_placements_support,
    joint_columns,
    joint_displacement,
    matrices_view,
    rows_view,
    support,
    unpack,
)
from kinodyn.spatial.compiled import (
    Mat3,
    Vec3,
    cross3,
    mat3_at,
    mat3_mul,
    mat3_vec,
    matmul3,
    matvec3,
    motion_cross,
    quaternion_multiply,
    quaternion_to_rotation,
    skew,
    so3_coefficients,
    so3_left_jacobian_inverse_coefficient,
)
from kinodyn.spatial.compiled import (
    rotation_log as rotation_log,  # re-exported: kinodyn.estimation.legs imports it from here
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


@njit(cache=True, inline="always")
def _walk_up(md: ModelArrays, q: np.ndarray, frame: int, jacobian: bool, J: np.ndarray) -> tuple[Mat3, Vec3]:
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
    """Adds body i's joint columns at the frame origin, in frame axes, to ``J`` (see ``_walk_up``);
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
def frame_placement(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frame: int, out: np.ndarray) -> None:
    """``out`` (4x4) = ``T_world_frame(q)``, along the frame's support only (Robot Dynamics lecture notes
    (ETH), §2.8.3, (2.137))."""
    C, d = _walk_up(unpack(ki, kf), q, frame, False, out)
    _write_placement(C, d, out)


@njit(cache=True)
def frame_placement_batch(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, frame: int, out: np.ndarray) -> None:
    """``out[k]`` (4x4) = ``T_world_frame(Q[k])`` for every row of ``Q`` (N x nq)."""
    md = unpack(ki, kf)
    for k in range(Q.shape[0]):
        block = out[k]
        C, d = _walk_up(md, Q[k], frame, False, block)
        _write_placement(C, d, block)


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

    ``_walk_up`` gives the LOCAL Jacobian and ``(C, d) = T_world_frame``: LOCAL_WORLD_ALIGNED rotates
    both halves by ``C``; WORLD also moves the linear part to the world origin, ``v_O = v_f + d x w``
    (Robot Dynamics lecture notes (ETH), §2.8.5, (2.161)-(2.167); §2.10.3, (2.248)-(2.252)).
    """
    nv = out.shape[1]
    for k in range(6):
        for c in range(nv):
            out[k, c] = 0.0
    C, d = _walk_up(unpack(ki, kf), q, frame, True, out)
    c00, c01, c02, c10, c11, c12, c20, c21, c22 = C
    d0, d1, d2 = d
    if reference == LOCAL:
        return
    for c in range(nv):
        v0, v1, v2, w0, w1, w2 = out[0, c], out[1, c], out[2, c], out[3, c], out[4, c], out[5, c]
        if v0 == 0.0 and v1 == 0.0 and v2 == 0.0 and w0 == 0.0 and w1 == 0.0 and w2 == 0.0:
            continue  # off the frame's support
        a0 = c00 * w0 + c01 * w1 + c02 * w2
        a1 = c10 * w0 + c11 * w1 + c12 * w2
        a2 = c20 * w0 + c21 * w1 + c22 * w2
        u0 = c00 * v0 + c01 * v1 + c02 * v2
        u1 = c10 * v0 + c11 * v1 + c12 * v2
        u2 = c20 * v0 + c21 * v1 + c22 * v2
        if reference == WORLD:
            u0, u1, u2 = u0 + d1 * a2 - d2 * a1, u1 + d2 * a0 - d0 * a2, u2 + d0 * a1 - d1 * a0
        out[0, c], out[1, c], out[2, c], out[3, c], out[4, c], out[5, c] = u0, u1, u2, a0, a1, a2


@njit(cache=True)
def frame_bias_acceleration(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, frame: int,
                            reference: int, out: np.ndarray) -> None:
    """``out`` (6,) = ``dJ/dt v`` of the frame in ``reference`` (the frame acceleration at zero qdd).

    World-axes spatial recursion ``V_k = V_p + S_k qd_k``, ``A_k = A_p + V_p x S_k qd_k`` (the
    joint columns are constant in the body, so ``dS/dt = V x S``; Modern Robotics, Def. 8.3, (8.37)).
    WORLD: ``A``; LOCAL: ``A`` taken at the frame origin in frame axes; LOCAL_WORLD_ALIGNED:
    classical drift ``[a_o + dw x r_f + w x v_f; dw]`` of the frame origin (Robot Dynamics lecture notes
    (ETH), §2.7, ``a_P = a_B + Ψ x r_BP + Ω x (Ω x r_BP)``).
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
    """``out`` (3 x nv) = ``d com / d v``: ``(1/M) sum_i m_i J_P(c_i)`` (Robot Dynamics lecture notes (ETH),
    §2.8, ◇ CoM Jacobian).

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
def _normalized(quat: np.ndarray) -> np.ndarray:
    return quat / math.sqrt(quat[0] ** 2 + quat[1] ** 2 + quat[2] ** 2 + quat[3] ** 2)


@njit(cache=True)
def integrate(q: np.ndarray, v: np.ndarray, dt: float, floating: bool, out: np.ndarray) -> None:
    """``out = q ⊕ v dt``: joints add; the free flyer moves by ``T exp(dt [v_b; w_b])`` (body twist).

    SE(3) exponential: rotation ``Exp(w)``, translation ``C V(w) v`` with the SO(3) left Jacobian
    ``V(w) = I + (1-cos θ)/θ² [w]x + (θ-sin θ)/θ³ [w]x²`` (Robot Dynamics lecture notes (ETH), §2.5, (2.104)).
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
    _, b, c = so3_coefficients(theta * theta)
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
    quaternion_multiply(quat0, from_quaternion, quat1)
    out[3:7] = _normalized(quat1)


@njit(cache=True)
def difference(q0: np.ndarray, q1: np.ndarray, floating: bool, out: np.ndarray) -> None:
    """``out = q1 ⊖ q0``, the v with ``integrate(q0, v, 1) = q1`` (free flyer: SE(3) log, shortest rotation).

    ``w = Log(quat0* ⊗ quat1)``, ``v = V(w)^-1 C0^T (r1 - r0)`` with
    ``V^-1 = I - [w]x / 2 + (1/θ²)(1 - θ sin θ / (2(1 - cos θ))) [w]x²`` (Robot Dynamics lecture notes (ETH),
    §2.5, (2.105)-(2.107)).
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
    quaternion_multiply(a_conj, b, dq)
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
    e = so3_left_jacobian_inverse_coefficient(theta * theta)
    wl = np.empty(3)
    wwl = np.empty(3)
    cross3(w, local, wl)
    cross3(w, wl, wwl)
    out[0:3] = local - 0.5 * wl + e * wwl
    out[3:6] = w
