"""Frame Jacobians, their time derivative times v, and manipulability.

Geometric Jacobian ``[J_P; J_R]`` (Robot Dynamics lecture notes (ETH), §2.8.5, (2.151)-(2.167); floating base
§2.10.3, (2.248)-(2.252)) in Pinocchio's three references (docs/conventions.md):

- ``"world"``: spatial twist, linear part = velocity of the body point at the world origin;
- ``"local"``: body twist of the frame, in frame axes;
- ``"local_world_aligned"``: velocity of the frame origin and angular velocity, in world axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numpy import ndarray

from kinodyn.inputs import F64
from kinodyn.kernel import IN1, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.kernel_data import JOINT_FREEFLYER, JOINT_PRISMATIC, JOINT_REVOLUTE, unpack
from kinodyn.kinematics.forward import frame_along_support, placement_scratch, walk_up
from kinodyn.spatial.compiled import cross3, mat3_vec, motion_cross

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.data import Data
    from kinodyn.model import Model

WORLD = 0
LOCAL = 1
LOCAL_WORLD_ALIGNED = 2
REFERENCES = {"world": WORLD, "local": LOCAL, "local_world_aligned": LOCAL_WORLD_ALIGNED}


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
@njit(cache=True, inline="always")
def _rotate_to_local(C_f: np.ndarray, M: np.ndarray) -> None:
    """``M[0:3] <- C_f^T M[0:3]``, ``M[3:6] <- C_f^T M[3:6]`` column by column (6 x n)."""
    for c in range(M.shape[1]):
        for half in (0, 3):
            x0, x1, x2 = M[half, c], M[half + 1, c], M[half + 2, c]
            for a in range(3):
                M[half + a, c] = C_f[0, a] * x0 + C_f[1, a] * x1 + C_f[2, a] * x2


@njit(cache=True)
def frame_jacobian_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frame: int, reference: int,
                   out: np.ndarray) -> None:
    """``out`` (6 x nv): geometric Jacobian ``[J_P; J_R]`` of the frame in ``reference``.

    ``walk_up`` gives the LOCAL Jacobian and ``(C, d) = T_world_frame``: LOCAL_WORLD_ALIGNED rotates
    both halves by ``C``; WORLD also moves the linear part to the world origin, ``v_O = v_f + d x w``
    (Robot Dynamics lecture notes (ETH), §2.8.5, (2.161)-(2.167); §2.10.3, (2.248)-(2.252)).
    """
    nv = out.shape[1]
    for k in range(6):
        for c in range(nv):
            out[k, c] = 0.0
    C, d = walk_up(unpack(ki, kf), q, frame, True, out)
    d0, d1, d2 = d
    if reference == LOCAL:
        return
    for c in range(nv):
        v0, v1, v2, w0, w1, w2 = out[0, c], out[1, c], out[2, c], out[3, c], out[4, c], out[5, c]
        if v0 == 0.0 and v1 == 0.0 and v2 == 0.0 and w0 == 0.0 and w1 == 0.0 and w2 == 0.0:
            continue  # off the frame's support
        a0, a1, a2 = mat3_vec(C, (w0, w1, w2))
        u0, u1, u2 = mat3_vec(C, (v0, v1, v2))
        if reference == WORLD:
            u0, u1, u2 = u0 + d1 * a2 - d2 * a1, u1 + d2 * a0 - d0 * a2, u2 + d0 * a1 - d1 * a0
        out[0, c], out[1, c], out[2, c], out[3, c], out[4, c], out[5, c] = u0, u1, u2, a0, a1, a2


@njit(cache=True)
def frame_bias_acceleration_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, frame: int,
                            reference: int, out: np.ndarray) -> None:
    """``out`` (6,) = ``dJ/dt v`` of the frame in ``reference`` (the frame acceleration at zero qdd).

    World-axes spatial recursion ``V_k = V_p + S_k qd_k``, ``A_k = A_p + V_p x S_k qd_k`` (the
    joint columns are constant in the body, so ``dS/dt = V x S``; Modern Robotics, Def. 8.3, (8.37)).
    WORLD: ``A``; LOCAL: ``A`` taken at the frame origin in frame axes; LOCAL_WORLD_ALIGNED:
    classical drift ``[a_o + dw x r_f + w x v_f; dw]`` of the frame origin (Robot Dynamics lecture notes
    (ETH), §2.7, ``a_P = a_B + Ψ x r_BP + Ω x (Ω x r_BP)``).
    """
    md = unpack(ki, kf)
    C, r, C_f, r_f, S, o = placement_scratch(md.nbodies, np.empty(0))
    chain = np.empty(md.nbodies, np.int64)
    depth = frame_along_support(md, q, frame, chain, C, r, C_f, r_f)
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


_FRAME_JACOBIAN = Kernel(frame_jacobian_kernel, KI, KF, IN1, INT, INT, OUT2)
_FRAME_BIAS_ACCELERATION = Kernel(frame_bias_acceleration_kernel, KI, KF, IN1, IN1, INT, INT, OUT1)


def _reference_id(reference: str) -> int:
    try:
        return REFERENCES[reference]
    except (KeyError, TypeError):
        raise ValueError(f"reference must be one of {sorted(REFERENCES)}, got {reference!r}") from None


def frame_jacobian(model: Model, q: ArrayLike, frame: str | int, reference: str = "local_world_aligned",
                   data: Data | None = None) -> np.ndarray:
    """6 x nv geometric Jacobian of ``frame`` in ``reference``: ``twist = J v``.

    With ``data`` the result is written into and returned as ``data.J``, overwritten by the next call. The
    common inputs are tested inline, as in ``frame_placement``.
    """
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = model.check_q(q)
    try:
        fid = model.frame_ids[frame]
    except (KeyError, TypeError):
        fid = model.frame_id(frame)  # raises, naming close frames
    out = np.empty((6, model.nv)) if data is None else data.of(model).J
    ki, kf = model.kernel_data
    _FRAME_JACOBIAN.call(ki, kf, q, fid, _reference_id(reference), out)
    return out


def frame_bias_acceleration(model: Model, q: ArrayLike, v: ArrayLike, frame: str | int,
                            reference: str = "local_world_aligned") -> np.ndarray:
    """``(dJ/dt) v`` (6,) of ``frame`` in ``reference``: the frame acceleration when ``qdd = 0``.

    ``"world"`` / ``"local"``: spatial acceleration (Pinocchio ``getFrameAcceleration``);
    ``"local_world_aligned"``: classical acceleration of the frame origin and angular
    acceleration, in world axes (Pinocchio ``getFrameClassicalAcceleration``).
    """
    q = model.check_q(q)
    v = model.check_v(v)
    out = np.empty(6)
    ki, kf = model.kernel_data
    _FRAME_BIAS_ACCELERATION.call(ki, kf, q, v, model.frame_id(frame), _reference_id(reference), out)
    return out


def manipulability(model: Model, q: ArrayLike, frame: str | int) -> float:
    """Yoshikawa's measure ``sqrt(det(J J^T))`` of the frame's 6 x nv Jacobian.

    The value is the same in the three references (they differ by a left factor of determinant
    1); it is computed as the product of the six singular values of the ``"world"`` Jacobian and
    is 0 when nv < 6.
    """
    J = frame_jacobian(model, q, frame, "world")
    if J.shape[1] < J.shape[0]:  # fewer columns than the twist has rows: singular
        return 0.0
    return float(np.prod(np.linalg.svd(J, compute_uv=False)))
