"""Everything a control tick reads at ``(q, v)`` from one world-frame kinematics pass (``Evaluator``).

One pass gives the body placements, joint columns and world inertias
(``kinodyn.dynamics.bodies.world_bodies``), then the twists ``V_i = V_p + S_i qd_i`` and the accelerations
at ``qdd = 0``, ``A_i = A_p + V_p x S_i qd_i`` (``dS_i/dt = V_i x S_i``, Modern Robotics, Def. 8.3, (8.37)),
all in world axes at the world origin (``kinodyn.dynamics.bodies``). From them:

- ``M``: the CRBA on the composite inertias (``kinodyn.dynamics.crba.crba_composites``; Modern Robotics,
  §8.4, (8.57));
- ``h = C v + g``: the RNEA at ``qdd = 0`` in world form, body wrench ``I_i A_i + V_i x* I_i V_i``
  (Modern Robotics, (8.40), with the world inertia's rate ``V x* I - I V x``), summed up the tree and
  projected, ``tau_j = S_j^T F_j`` (Modern Robotics, (8.49)); gravity ``g_j = S_j^T Ic_j [-g; 0]`` on the
  composites (Robot Dynamics lecture notes (ETH), §3.5, (3.45));
- frames: ``T_world_f = T_world_b T_b_f``; ``local_world_aligned`` Jacobian columns
  ``[s_v + s_w x o; s_w]`` of the joints on the frame's support, ``o`` the frame origin (Robot
  Dynamics lecture notes (ETH), §2.8.5, (2.166)); classical ``Jdot v = [a_O + dw x o + w x v_o; dw]`` from the
  body's ``(V, A)`` (Robot Dynamics lecture notes (ETH), §2.7, ``a_P = a_B + Psi x r_BP + Omega x (Omega x
  r_BP)``);
- centroidal: ``A_G`` (``kinodyn.dynamics.centroidal.centroidal_composites``; Robot Dynamics Essential,
  §3.5, (96)), the CoM ``c = hc_0 / m``, ``J_com = A_G[0:3] / m`` (``p = m dc/dt``), and from the total
  momentum rate at ``qdd = 0`` without gravity ``(dp, dL_O) = sum_i F_i``: ``Jcom_dot v = dp / m`` and
  ``Adot_G v = [dp; dL_O - c x dp]`` (``h_G = L_O - c x p``, ``dc/dt x p = 0``).

The outputs, and copies of q and v, share one float64 block laid out by ``block_layout``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

from kinodyn._kernels.common import JOINT_FREEFLYER, matrices_view, rows_view, unpack
from kinodyn.dynamics.bodies import body_wrench, joint_nv, joint_twist, subtree_inertias_into, world_bodies
from kinodyn.dynamics.centroidal import centroidal_composites
from kinodyn.dynamics.crba import crba_composites
from kinodyn.spatial.compiled import inline

OK = 0
Q_NOT_FINITE = 1
V_NOT_FINITE = 2
ZERO_QUATERNION = 3


@njit(cache=True)
def block_layout(nq: int, nv: int, k: int) -> tuple[int, ...]:
    """Offsets in the output block of M (nv, nv), h (nv), g (nv), placements (k, 4, 4), Jacobians (k, 6, nv),
    Jdot v (k, 6), CoM (3), J_com (3, nv), Jcom_dot v (3), A_G (6, nv), Adot_G v (6), q (nq) and v (nv),
    then the size of the block (``k`` frames)."""
    o_M = 0
    o_h = o_M + nv * nv
    o_g = o_h + nv
    o_T = o_g + nv
    o_J = o_T + 16 * k
    o_b = o_J + 6 * nv * k
    o_c = o_b + 6 * k
    o_Jc = o_c + 3
    o_bc = o_Jc + 3 * nv
    o_A = o_bc + 3
    o_Ab = o_A + 6 * nv
    o_q = o_Ab + 6
    o_v = o_q + nq
    return o_M, o_h, o_g, o_T, o_J, o_b, o_c, o_Jc, o_bc, o_A, o_Ab, o_q, o_v, o_v + nv


@inline
def _check_inputs(q: np.ndarray, v: np.ndarray, iq_base: int) -> int:
    """``OK``, or the first problem: a non-finite entry of q or v, or a zero quaternion of the free flyer
    whose position starts at ``q[iq_base]`` (``iq_base < 0``: none)."""
    for k in range(q.shape[0]):
        if not math.isfinite(q[k]):
            return Q_NOT_FINITE
    for k in range(v.shape[0]):
        if not math.isfinite(v[k]):
            return V_NOT_FINITE
    if iq_base >= 0 and (q[iq_base + 3] * q[iq_base + 3] + q[iq_base + 4] * q[iq_base + 4]
                         + q[iq_base + 5] * q[iq_base + 5] + q[iq_base + 6] * q[iq_base + 6]) == 0.0:
        return ZERO_QUATERNION
    return OK


@njit(cache=True)
def evaluate(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, frames: np.ndarray,
             out: np.ndarray) -> int:
    """Fills ``out`` (``block_layout``) at ``(q, v)`` for the frame ids ``frames``; returns ``OK`` or, with
    ``out`` untouched, the input problem code. The model must have mass on its moving bodies."""
    md = unpack(ki, kf)
    floating = md.nbodies > 1 and md.joint_type[1] == JOINT_FREEFLYER  # the free flyer is the root's joint
    status = _check_inputs(q, v, md.idx_q[1] if floating else -1)
    if status != OK:
        return status
    nb, nv, k = md.nbodies, md.nv, frames.shape[0]
    o_M, o_h, o_g, o_T, o_J, o_b, o_c, o_Jc, o_bc, o_A, o_Ab, o_q, o_v, _ = block_layout(q.shape[0], nv, k)
    M = rows_view(out, o_M, nv, nv)
    h = out[o_h:o_g]
    g = out[o_g:o_T]
    T = as_strided(out[o_T:o_J], shape=(k, 4, 4), strides=(128, 32, 8))
    J = as_strided(out[o_J:o_b], shape=(k, 6, nv), strides=(48 * nv, 8 * nv, 8))
    bias = rows_view(out, o_b, k, 6)
    com = out[o_c:o_Jc]
    J_com = rows_view(out, o_Jc, 3, nv)
    com_bias = out[o_bc:o_A]
    A_G = rows_view(out, o_A, 6, nv)
    A_G_bias = out[o_Ab:o_q]
    for a in range(q.shape[0]):
        out[o_q + a] = q[a]
    for a in range(nv):
        out[o_v + a] = v[a]

    W = world_bodies(md, q)
    block = np.empty(31 * nb + 36)
    mc, hc, Ic = block[0:nb], rows_view(block, nb, nb, 3), matrices_view(block, 4 * nb, nb)
    V = rows_view(block, 13 * nb, nb, 6)
    A = rows_view(block, 19 * nb, nb, 6)
    F = rows_view(block, 25 * nb, nb, 6)
    subtree_inertias_into(md, W, mc, hc, Ic)
    crba_composites(md, W, mc, hc, Ic, rows_view(block, 31 * nb, 6, 6), M)
    centroidal_composites(md, W, mc, hc, Ic, A_G)
    _motion_and_wrenches(md.parent, md.joint_type, md.idx_v, md.joint_multiplier, md.mass, W.S, W.h,
                         W.inertia, v, V, A, F)
    _joint_forces(md.parent, md.joint_type, md.idx_v, md.joint_multiplier, md.gravity, W.S, mc, hc, F, h, g)
    total = mc[0]
    c0, c1, c2 = hc[0, 0] / total, hc[0, 1] / total, hc[0, 2] / total
    com[0], com[1], com[2] = c0, c1, c2
    for a in range(3):
        for col in range(nv):
            J_com[a, col] = A_G[a, col] / total
    p0, p1, p2 = F[0, 0], F[0, 1], F[0, 2]
    com_bias[0], com_bias[1], com_bias[2] = p0 / total, p1 / total, p2 / total
    A_G_bias[0], A_G_bias[1], A_G_bias[2] = p0, p1, p2
    A_G_bias[3] = F[0, 3] - (c1 * p2 - c2 * p1)
    A_G_bias[4] = F[0, 4] - (c2 * p0 - c0 * p2)
    A_G_bias[5] = F[0, 5] - (c0 * p1 - c1 * p0)
    for n in range(k):
        _frame_terms(md.parent, md.joint_type, md.idx_v, md.joint_multiplier, md.frame_body,
                     md.frame_rotation, md.frame_translation, W.C, W.r, W.S, V, A, frames[n], T[n], J[n],
                     bias[n])
    return OK


@inline
def _motion_and_wrenches(parent: np.ndarray, joint_type: np.ndarray, idx_v: np.ndarray,
                         multiplier: np.ndarray, mass: np.ndarray, S: np.ndarray, hw: np.ndarray,
                         inertia: np.ndarray, v: np.ndarray, V: np.ndarray, A: np.ndarray,
                         F: np.ndarray) -> None:
    """Twists ``V``, accelerations ``A`` at ``qdd = 0`` and wrenches ``F`` summed over each subtree
    (``F[0]``: all moving bodies), from the joint columns ``S`` and world inertias ``(mass, hw, inertia)``.

    ``F_i = I_i A_i + V_i x* (I_i V_i)``, with ``I V = [m v + w x h; I_O w + h x v]``
    (``kinodyn.spatial.compiled.inertia_mul``).
    """
    nb = parent.shape[0]
    for a in range(6):
        V[0, a] = 0.0
        A[0, a] = 0.0
        F[0, a] = 0.0
    for i in range(1, nb):
        p = parent[i]
        n = joint_nv(joint_type[i])
        iv = idx_v[i]
        m = multiplier[i]
        s0, s1, s2, s3, s4, s5 = joint_twist(S, i, v, iv, n, m)
        u0, u1, u2, y0, y1, y2 = V[p, 0], V[p, 1], V[p, 2], V[p, 3], V[p, 4], V[p, 5]
        # A_i = A_p + V_p x (S qd)
        a0 = A[p, 0] + y1 * s2 - y2 * s1 + u1 * s5 - u2 * s4
        a1 = A[p, 1] + y2 * s0 - y0 * s2 + u2 * s3 - u0 * s5
        a2 = A[p, 2] + y0 * s1 - y1 * s0 + u0 * s4 - u1 * s3
        b0 = A[p, 3] + y1 * s5 - y2 * s4
        b1 = A[p, 4] + y2 * s3 - y0 * s5
        b2 = A[p, 5] + y0 * s4 - y1 * s3
        v0, v1, v2, w0, w1, w2 = u0 + s0, u1 + s1, u2 + s2, y0 + s3, y1 + s4, y2 + s5
        V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5] = v0, v1, v2, w0, w1, w2
        A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5] = a0, a1, a2, b0, b1, b2
        F[i, 0], F[i, 1], F[i, 2], F[i, 3], F[i, 4], F[i, 5] = body_wrench(
            mass[i], hw, inertia, i, v0, v1, v2, w0, w1, w2, a0, a1, a2, b0, b1, b2)
    for i in range(nb - 1, 0, -1):
        p = parent[i]
        for a in range(6):
            F[p, a] += F[i, a]


@inline
def _joint_forces(parent: np.ndarray, joint_type: np.ndarray, idx_v: np.ndarray, multiplier: np.ndarray,
                  gravity: np.ndarray, S: np.ndarray, mc: np.ndarray, hc: np.ndarray, F: np.ndarray,
                  h: np.ndarray, g: np.ndarray) -> None:
    """``g_j = m_j S_j^T [-mc_j g; hc_j x (-g)]`` and ``h_j = m_j S_j^T F_j + g_j`` for every joint column
    (``m_j``: the mimic multiplier; a mimic joint adds to its master's entry)."""
    for col in range(h.shape[0]):
        h[col] = 0.0
        g[col] = 0.0
    e0, e1, e2 = -gravity[0], -gravity[1], -gravity[2]
    for j in range(1, parent.shape[0]):
        n = joint_nv(joint_type[j])
        if n == 0:
            continue
        m = mc[j]
        k0, k1, k2 = hc[j, 0], hc[j, 1], hc[j, 2]
        x0, x1, x2 = m * e0, m * e1, m * e2
        x3, x4, x5 = k1 * e2 - k2 * e1, k2 * e0 - k0 * e2, k0 * e1 - k1 * e0
        f0, f1, f2, f3, f4, f5 = F[j, 0], F[j, 1], F[j, 2], F[j, 3], F[j, 4], F[j, 5]
        iv = idx_v[j]
        scale = multiplier[j]
        for c in range(n):
            s0, s1, s2, s3, s4, s5 = S[j, 0, c], S[j, 1, c], S[j, 2, c], S[j, 3, c], S[j, 4, c], S[j, 5, c]
            gc = scale * (s0 * x0 + s1 * x1 + s2 * x2 + s3 * x3 + s4 * x4 + s5 * x5)
            g[iv + c] += gc
            h[iv + c] += scale * (s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5) + gc


@inline
def _frame_terms(parent: np.ndarray, joint_type: np.ndarray, idx_v: np.ndarray, multiplier: np.ndarray,
                 frame_body: np.ndarray, frame_rotation: np.ndarray, frame_translation: np.ndarray,
                 C: np.ndarray, r: np.ndarray, S: np.ndarray, V: np.ndarray, A: np.ndarray, frame: int,
                 T: np.ndarray, J: np.ndarray, bias: np.ndarray) -> None:
    """Placement ``T`` (4x4), ``local_world_aligned`` Jacobian ``J`` (6 x nv) and classical ``Jdot v``
    ``bias`` (6,) of ``frame`` from the body placements ``(C, r)``, columns ``S`` and ``(V, A)``."""
    b = frame_body[frame]
    for a in range(3):
        t = r[b, a]
        for e in range(3):
            T[a, e] = (C[b, a, 0] * frame_rotation[frame, 0, e] + C[b, a, 1] * frame_rotation[frame, 1, e]
                       + C[b, a, 2] * frame_rotation[frame, 2, e])
            t += C[b, a, e] * frame_translation[frame, e]
        T[a, 3] = t
        T[3, a] = 0.0
    T[3, 3] = 1.0
    o0, o1, o2 = T[0, 3], T[1, 3], T[2, 3]
    for a in range(6):
        for col in range(J.shape[1]):
            J[a, col] = 0.0
    i = b
    while i > 0:
        iv = idx_v[i]
        m = multiplier[i]
        for c in range(joint_nv(joint_type[i])):
            s0, s1, s2 = m * S[i, 0, c], m * S[i, 1, c], m * S[i, 2, c]
            s3, s4, s5 = m * S[i, 3, c], m * S[i, 4, c], m * S[i, 5, c]
            J[0, iv + c] += s0 + s4 * o2 - s5 * o1
            J[1, iv + c] += s1 + s5 * o0 - s3 * o2
            J[2, iv + c] += s2 + s3 * o1 - s4 * o0
            J[3, iv + c] += s3
            J[4, iv + c] += s4
            J[5, iv + c] += s5
        i = parent[i]
    w0, w1, w2 = V[b, 3], V[b, 4], V[b, 5]
    d0, d1, d2 = A[b, 3], A[b, 4], A[b, 5]
    u0 = V[b, 0] + w1 * o2 - w2 * o1  # velocity of the frame origin
    u1 = V[b, 1] + w2 * o0 - w0 * o2
    u2 = V[b, 2] + w0 * o1 - w1 * o0
    bias[0] = A[b, 0] + d1 * o2 - d2 * o1 + w1 * u2 - w2 * u1
    bias[1] = A[b, 1] + d2 * o0 - d0 * o2 + w2 * u0 - w0 * u2
    bias[2] = A[b, 2] + d0 * o1 - d1 * o0 + w0 * u1 - w1 * u0
    bias[3], bias[4], bias[5] = d0, d1, d2
