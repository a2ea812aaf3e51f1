"""The compiled spatial algebra: one implementation of the rotation, Lie-group and 6-D vector math.

Every kernel (kinematics, dynamics, estimation, simulation) and the public functions of ``kinodyn.spatial``
use these. All but ``rotation_log`` are ``njit(cache=True, inline="always")``: inlined at numba IR level into
the caller, since a call passing arrays costs about as much as these small computations.

Two forms:

- on arrays, writing into ``out`` (``out`` must not alias an input): ``skew``, ``cross3``, ``matmul3``,
  ``matvec3``, ``quaternion_to_rotation``, ``unit_quaternion_to_rotation``, ``rotation_to_quaternion``,
  ``quaternion_multiply``, ``so3_exp``, ``so3_log`` (``rotation_log`` returns a new array),
  ``so3_left_jacobian``, ``so3_left_jacobian_inverse``, ``motion_cross``, ``add_motion_cross``,
  ``force_cross``, ``inertia_times``, ``dot6``;
- on tuples of scalars (``Vec3``, ``Mat3`` row-major, ``Vec6``), returning tuples: ``quaternion_matrix``,
  ``axis_rotation``, ``mat3_mul``, ``mat3_vec``, ``crm``, ``crf``, ``inertia_mul``, ``body_wrench``,
  ``motion_to_child``, ``force_to_parent``; ``rigid_inertia_matrix`` writes one. Per-body recursions keep
  their 6-vectors in registers this way: an inlined helper on tuples compiles to the same code as the
  products written out, so long as it does not itself call other tuple-returning helpers (those are
  written out on scalars). ``vec3_at``/``vec6_at``/``mat3_at`` read tuples from arrays, ``set_vec3``/
  ``set_vec6``/``set_mat3`` store them.

6-D vectors are ``[linear; angular]`` (docs/conventions.md): twists ``V = [v; w]``, wrenches ``f = [f; n]``.
A rigid-body inertia about a point is ``(m, h, I)``: mass, first moment ``h = m c`` and the rotational inertia
about that point; it maps ``[v; w]`` to ``[m v + w x h; I w + h x v]`` (Modern Robotics, (8.34) and (8.42),
reordered linear-first).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

inline = njit(cache=True, inline="always")

Vec3 = tuple[float, float, float]
Mat3 = tuple[float, float, float, float, float, float, float, float, float]  # 3x3, row-major
Vec6 = tuple[float, float, float, float, float, float]

SMALL_ANGLE = 1e-2
"""Below this rotation angle (rad) the ratios of the SO(3) maps use their Taylor series (each truncated
where the next term is below 1e-20 of the first at SMALL_ANGLE)."""


# --- 3-vectors and 3x3 matrices on arrays (Robot Dynamics lecture notes (ETH), §1.2) ------------------------


@inline
def skew(w: np.ndarray, out: np.ndarray) -> None:
    """``out = [w]x`` so that ``[w]x b = w x b`` (Robot Dynamics lecture notes (ETH), §1.2)."""
    out[0, 0], out[0, 1], out[0, 2] = 0.0, -w[2], w[1]
    out[1, 0], out[1, 1], out[1, 2] = w[2], 0.0, -w[0]
    out[2, 0], out[2, 1], out[2, 2] = -w[1], w[0], 0.0


@inline
def cross3(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out = a x b``."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@inline
def matmul3(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    """``out = A @ B`` for 3x3 matrices."""
    for r in range(3):
        for c in range(3):
            out[r, c] = A[r, 0] * B[0, c] + A[r, 1] * B[1, c] + A[r, 2] * B[2, c]


@inline
def matvec3(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``out = A @ x`` for a 3x3 matrix."""
    for r in range(3):
        out[r] = A[r, 0] * x[0] + A[r, 1] * x[1] + A[r, 2] * x[2]


# --- on tuples ----------------------------------------------------------------------------------------------


@inline
def vec3_at(x: np.ndarray, i: int) -> Vec3:
    """Row ``i`` of an (n, 3) array."""
    return x[i, 0], x[i, 1], x[i, 2]


@inline
def vec6_at(x: np.ndarray, i: int) -> Vec6:
    """Row ``i`` of an (n, 6) array."""
    return x[i, 0], x[i, 1], x[i, 2], x[i, 3], x[i, 4], x[i, 5]


@inline
def mat3_at(M: np.ndarray, i: int) -> Mat3:
    """``M[i]`` of an (n, 3, 3) array."""
    return (M[i, 0, 0], M[i, 0, 1], M[i, 0, 2], M[i, 1, 0], M[i, 1, 1], M[i, 1, 2],
            M[i, 2, 0], M[i, 2, 1], M[i, 2, 2])


@inline
def set_vec3(out: np.ndarray, i: int, x: Vec3) -> None:
    """Row ``i`` of an (n, 3) array = ``x``."""
    out[i, 0], out[i, 1], out[i, 2] = x


@inline
def set_vec6(out: np.ndarray, i: int, x: Vec6) -> None:
    """Row ``i`` of an (n, 6) array = ``x``."""
    out[i, 0], out[i, 1], out[i, 2], out[i, 3], out[i, 4], out[i, 5] = x


@inline
def set_mat3(out: np.ndarray, i: int, M: Mat3) -> None:
    """``out[i]`` of an (n, 3, 3) array = ``M``."""
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = M
    out[i, 0, 0], out[i, 0, 1], out[i, 0, 2] = m00, m01, m02
    out[i, 1, 0], out[i, 1, 1], out[i, 1, 2] = m10, m11, m12
    out[i, 2, 0], out[i, 2, 1], out[i, 2, 2] = m20, m21, m22


@inline
def mat3_mul(A: Mat3, B: Mat3) -> Mat3:
    """``A @ B``."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6], A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@inline
def mat3_vec(A: Mat3, x: Vec3) -> Vec3:
    """``A @ x``."""
    return (A[0] * x[0] + A[1] * x[1] + A[2] * x[2], A[3] * x[0] + A[4] * x[1] + A[5] * x[2],
            A[6] * x[0] + A[7] * x[1] + A[8] * x[2])


@inline
def add3(a: Vec3, b: Vec3) -> Vec3:
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


@inline
def add6(a: Vec6, b: Vec6) -> Vec6:
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@inline
def sub6(a: Vec6, b: Vec6) -> Vec6:
    return a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5]


@inline
def unit_quaternion_matrix(x: float, y: float, z: float, w: float) -> Mat3:
    """``C = (2w^2 - 1) I + 2w [v]x + 2 v v^T`` for the unit quaternion ``(v, w) = (x, y, z, w)`` (Robot
    Dynamics lecture notes (ETH), §2.4.5, (2.54))."""
    d = 2.0 * w * w - 1.0
    return (d + 2.0 * x * x, 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
            2.0 * (x * y + w * z), d + 2.0 * y * y, 2.0 * (y * z - w * x),
            2.0 * (x * z - w * y), 2.0 * (y * z + w * x), d + 2.0 * z * z)


@inline
def quaternion_matrix(x: float, y: float, z: float, w: float) -> Mat3:
    """``unit_quaternion_matrix`` of the quaternion ``(x, y, z, w)`` normalised first. A zero quaternion is
    no orientation: NaN entries, not an exception."""
    n = math.sqrt(x * x + y * y + z * z + w * w)
    inv = 1.0 / n if n > 0.0 else math.nan
    return unit_quaternion_matrix(x * inv, y * inv, z * inv, w * inv)


@inline
def quaternion_to_rotation(quat: np.ndarray, out: np.ndarray) -> None:
    """``out`` = rotation matrix of the quaternion ``(x, y, z, w)``, normalised (``quaternion_matrix``)."""
    write_mat3(quaternion_matrix(quat[0], quat[1], quat[2], quat[3]), out)


@inline
def unit_quaternion_to_rotation(quat: np.ndarray, out: np.ndarray) -> None:
    """``out`` = rotation matrix of the unit quaternion ``(x, y, z, w)`` (``unit_quaternion_matrix``)."""
    write_mat3(unit_quaternion_matrix(quat[0], quat[1], quat[2], quat[3]), out)


@inline
def write_mat3(M: Mat3, out: np.ndarray) -> None:
    """``out`` (3x3) = ``M``."""
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = M
    out[0, 0], out[0, 1], out[0, 2] = m00, m01, m02
    out[1, 0], out[1, 1], out[1, 2] = m10, m11, m12
    out[2, 0], out[2, 1], out[2, 2] = m20, m21, m22


@inline
def axis_rotation(n0: float, n1: float, n2: float, angle: float) -> Mat3:
    """Rotation by ``angle`` about the unit axis ``n`` (Robot Dynamics lecture notes (ETH), §2.4.5,
    (2.48))."""
    c = math.cos(angle)
    s = math.sin(angle)
    k = 1.0 - c
    return (c + k * n0 * n0, k * n0 * n1 - s * n2, k * n0 * n2 + s * n1,
            k * n0 * n1 + s * n2, c + k * n1 * n1, k * n1 * n2 - s * n0,
            k * n0 * n2 - s * n1, k * n1 * n2 + s * n0, c + k * n2 * n2)


@inline
def rotation_to_quaternion(m: np.ndarray, out: np.ndarray) -> None:
    """``out`` = (x, y, z, w) of the rotation matrix ``m``, ``w >= 0``, normalised.

    Robot Dynamics lecture notes (ETH), (2.55) takes every component from a square root and fails where one
    is zero (e.g. at 180 degrees). Shepperd's method instead: the largest of ``4w^2 = 1 + tr m``,
    ``4x^2 = 1 + 2 m00 - tr m`` (and y, z alike) from its square root, the other three from the off-diagonal
    entries, so no division is by less than 1/2.
    """
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    pivot, best = 3, trace
    for a in range(3):
        if m[a, a] > best:
            pivot, best = a, m[a, a]
    if pivot == 3:  # noqa: PLR2004  (w, the quaternion's fourth component)
        s = 2.0 * math.sqrt(max(1.0 + trace, 0.0))
        x, y, z, w = (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s
    elif pivot == 0:
        s = 2.0 * math.sqrt(max(1.0 + 2.0 * m[0, 0] - trace, 0.0))
        x, y, z, w = 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s
    elif pivot == 1:
        s = 2.0 * math.sqrt(max(1.0 + 2.0 * m[1, 1] - trace, 0.0))
        x, y, z, w = (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s
    else:
        s = 2.0 * math.sqrt(max(1.0 + 2.0 * m[2, 2] - trace, 0.0))
        x, y, z, w = (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s
    n = (-1.0 if w < 0.0 else 1.0) / math.sqrt(x * x + y * y + z * z + w * w)
    out[0], out[1], out[2], out[3] = x * n, y * n, z * n, w * n


@inline
def quaternion_multiply(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """Hamilton product ``out = a (x) b`` of (x, y, z, w) quaternions (Robot Dynamics lecture notes (ETH),
    (2.57))."""
    ax, ay, az, aw = a[0], a[1], a[2], a[3]
    bx, by, bz, bw = b[0], b[1], b[2], b[3]
    out[0] = (aw * bx + ay * bz) + (ax * bw - az * by)
    out[1] = (az * bx - ax * bz) + (aw * by + ay * bw)
    out[2] = (aw * bz - ay * bx) + (ax * by + az * bw)
    out[3] = (aw * bw - ay * by) - (ax * bx + az * bz)


# --- SO(3) (Robot Dynamics lecture notes (ETH), §2.4.5, §2.5.1; Rotations and inverse kinematics
# (Fredriksson), §2.6-2.7) -----------------------------------------------------------------------------------


@inline
def so3_coefficients(t2: float) -> tuple[float, float, float]:
    """``(sin t / t, (1 - cos t) / t^2, (t - sin t) / t^3)`` at ``t^2 = t2``, by their Taylor series below
    SMALL_ANGLE."""
    if t2 < SMALL_ANGLE * SMALL_ANGLE:
        t4 = t2 * t2
        return (1.0 - t2 / 6.0 + t4 / 120.0 - t4 * t2 / 5040.0,
                0.5 - t2 / 24.0 + t4 / 720.0 - t4 * t2 / 40320.0,
                1.0 / 6.0 - t2 / 120.0 + t4 / 5040.0 - t4 * t2 / 362880.0)
    t = math.sqrt(t2)
    s = math.sin(t)
    half = math.sin(0.5 * t) / t  # (1 - cos t) / t^2 = 2 sin(t/2)^2 / t^2, free of cancellation
    return s / t, 2.0 * half * half, (t - s) / (t2 * t)


@inline
def identity_plus_cross_series(x: float, y: float, z: float, a: float, b: float, out: np.ndarray) -> None:
    """``out = I + a K + b K^2`` with ``K = [(x, y, z)]x``: the form of ``Exp`` and of the left Jacobian."""
    out[0, 0], out[0, 1], out[0, 2] = 1.0 - b * (y * y + z * z), b * x * y - a * z, b * x * z + a * y
    out[1, 0], out[1, 1], out[1, 2] = b * x * y + a * z, 1.0 - b * (x * x + z * z), b * y * z - a * x
    out[2, 0], out[2, 1], out[2, 2] = b * x * z - a * y, b * y * z + a * x, 1.0 - b * (x * x + y * y)


@inline
def so3_exp(phi: np.ndarray, out: np.ndarray) -> None:
    """``out = Exp(phi) = I + a K + b K^2`` with ``K = [phi]x``, ``a = sin t / t``, ``b = (1 - cos t) / t^2``,
    ``t = |phi|`` (Rodrigues; Robot Dynamics lecture notes (ETH), (2.48))."""
    x, y, z = phi[0], phi[1], phi[2]
    a, b, _ = so3_coefficients(x * x + y * y + z * z)
    identity_plus_cross_series(x, y, z, a, b, out)


@inline
def so3_left_jacobian(phi: np.ndarray, out: np.ndarray) -> None:
    """``out = J_l(phi) = I + b K + c K^2`` with ``c = (t - sin t) / t^3`` (Robot Dynamics lecture notes
    (ETH), (2.104), (2.106))."""
    x, y, z = phi[0], phi[1], phi[2]
    _, b, c = so3_coefficients(x * x + y * y + z * z)
    identity_plus_cross_series(x, y, z, b, c, out)


@inline
def so3_left_jacobian_inverse_coefficient(t2: float) -> float:
    """``(1 - (t/2) cot(t/2)) / t^2`` at ``t^2 = t2``, by its Taylor series below SMALL_ANGLE; not finite at
    ``t = 2 pi k`` (k >= 1), where ``J_l`` is singular (callers check)."""
    if t2 < SMALL_ANGLE * SMALL_ANGLE:
        return 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0 + t2 * t2 * t2 / 1209600.0
    half = 0.5 * math.sqrt(t2)
    return (1.0 - half * math.cos(half) / math.sin(half)) / t2


@inline
def so3_left_jacobian_inverse(phi: np.ndarray, out: np.ndarray) -> None:
    """``out = J_l(phi)^-1 = I - K / 2 + e K^2`` with ``e`` from ``so3_left_jacobian_inverse_coefficient``
    (Robot Dynamics lecture notes (ETH), (2.105), (2.107))."""
    x, y, z = phi[0], phi[1], phi[2]
    e = so3_left_jacobian_inverse_coefficient(x * x + y * y + z * z)
    out[0, 0], out[0, 1], out[0, 2] = 1.0 - e * (y * y + z * z), e * x * y + 0.5 * z, e * x * z - 0.5 * y
    out[1, 0], out[1, 1], out[1, 2] = e * x * y - 0.5 * z, 1.0 - e * (x * x + z * z), e * y * z + 0.5 * x
    out[2, 0], out[2, 1], out[2, 2] = e * x * z + 0.5 * y, e * y * z - 0.5 * x, 1.0 - e * (x * x + y * y)


@inline
def so3_log(R: np.ndarray, out: np.ndarray) -> None:
    """``out`` = rotation vector of ``R``, angle in [0, pi] (Robot Dynamics lecture notes (ETH),
    (2.49)-(2.50)).

    The angle is ``atan2(|w|, (tr R - 1)/2)`` with ``w = vee(R - R^T)/2 = sin(angle) n`` (accurate
    everywhere, unlike arccos). Up to pi/2, ``phi = w angle / |w|``; above, ``w`` loses its accuracy as
    sin(angle) -> 0 and the axis comes from the symmetric part,
    ``n n^T = ((R + R^T)/2 - cos(angle) I) / (1 - cos(angle))`` (Rotations and inverse kinematics
    (Fredriksson), (31)-(32)), column of the largest diagonal entry, signed so that ``n . w >= 0``.
    At pi exactly, phi and -phi are the same rotation; the axis then has a positive component along its
    largest coordinate.
    """
    w0, w1, w2 = 0.5 * (R[2, 1] - R[1, 2]), 0.5 * (R[0, 2] - R[2, 0]), 0.5 * (R[1, 0] - R[0, 1])
    cos_angle = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    sin_angle = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    angle = math.atan2(sin_angle, cos_angle)
    if cos_angle >= 0.0:
        k = 1.0 if sin_angle == 0.0 else angle / sin_angle
        out[0], out[1], out[2] = k * w0, k * w1, k * w2
        return
    i = 0
    for a in (1, 2):
        if R[a, a] > R[i, i]:
            i = a
    d = 1.0 / (1.0 - cos_angle)
    n0 = (0.5 * (R[0, i] + R[i, 0]) - (cos_angle if i == 0 else 0.0)) * d
    n1 = (0.5 * (R[1, i] + R[i, 1]) - (cos_angle if i == 1 else 0.0)) * d
    n2 = (0.5 * (R[2, i] + R[i, 2]) - (cos_angle if i == 2 else 0.0)) * d  # noqa: PLR2004  (the z axis)
    k = angle / math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if n0 * w0 + n1 * w1 + n2 * w2 < 0.0:
        k = -k
    out[0], out[1], out[2] = k * n0, k * n1, k * n2


@njit(cache=True)
def rotation_log(R: np.ndarray) -> np.ndarray:
    """``so3_log`` into a new array."""
    out = np.empty(3)
    so3_log(R, out)
    return out


# --- spatial vectors (Modern Robotics, §8.2.2, §8.3; Robot Dynamics lecture notes (ETH), §3.5) --------------


@inline
def crm(V: Vec6, W: Vec6) -> Vec6:
    """Motion cross product ``V x W = [w_V x v_W + v_V x w_W; w_V x w_W]`` (the Lie bracket ``[ad_V] W``,
    Modern Robotics, Def. 8.3, (8.37)-(8.38), reordered linear-first)."""
    v0, v1, v2, w0, w1, w2 = V
    a0, a1, a2, b0, b1, b2 = W
    return (w1 * a2 - w2 * a1 + v1 * b2 - v2 * b1, w2 * a0 - w0 * a2 + v2 * b0 - v0 * b2,
            w0 * a1 - w1 * a0 + v0 * b1 - v1 * b0,
            w1 * b2 - w2 * b1, w2 * b0 - w0 * b2, w0 * b1 - w1 * b0)


@inline
def crf(V: Vec6, F: Vec6) -> Vec6:
    """Force cross product ``V x* F = [w x f; w x n + v x f]`` for ``V = [v; w]``, ``F = [f; n]``
    (``-[ad_V]^T F``, Modern Robotics, Def. 8.4, (8.39), reordered)."""
    v0, v1, v2, w0, w1, w2 = V
    f0, f1, f2, n0, n1, n2 = F
    return (w1 * f2 - w2 * f1, w2 * f0 - w0 * f2, w0 * f1 - w1 * f0,
            w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1, w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2,
            w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0)


@inline
def inertia_mul(m: float, h: Vec3, I: Mat3, V: Vec6) -> Vec6:  # noqa: E741 (the inertia's name)
    """``[m v + w x h; I w + h x v]``: the momentum of the inertia ``(m, h, I)`` moving with
    ``V = [v; w]``."""
    v0, v1, v2, w0, w1, w2 = V
    h0, h1, h2 = h
    return (m * v0 + w1 * h2 - w2 * h1, m * v1 + w2 * h0 - w0 * h2, m * v2 + w0 * h1 - w1 * h0,
            I[0] * w0 + I[1] * w1 + I[2] * w2 + h1 * v2 - h2 * v1,
            I[3] * w0 + I[4] * w1 + I[5] * w2 + h2 * v0 - h0 * v2,
            I[6] * w0 + I[7] * w1 + I[8] * w2 + h0 * v1 - h1 * v0)


@inline
def body_wrench(m: float, h: Vec3, I: Mat3, V: Vec6, A: Vec6) -> Vec6:  # noqa: E741
    """``I A + V x* (I V)``: the net wrench a body of inertia ``(m, h, I)`` needs for the twist ``V`` and
    acceleration ``A`` (Modern Robotics, (8.40), (8.43), reordered; Robot Dynamics lecture notes (ETH),
    §3.3.1, (3.25)). Written out on scalars, as ``motion_to_child`` and ``force_to_parent``: a helper that
    calls other tuple-returning helpers compiles to slower per-body loops than the products written out."""
    v0, v1, v2, w0, w1, w2 = V
    a0, a1, a2, b0, b1, b2 = A
    h0, h1, h2 = h
    f0 = m * v0 + w1 * h2 - w2 * h1  # I V = [f; n]
    f1 = m * v1 + w2 * h0 - w0 * h2
    f2 = m * v2 + w0 * h1 - w1 * h0
    n0 = I[0] * w0 + I[1] * w1 + I[2] * w2 + h1 * v2 - h2 * v1
    n1 = I[3] * w0 + I[4] * w1 + I[5] * w2 + h2 * v0 - h0 * v2
    n2 = I[6] * w0 + I[7] * w1 + I[8] * w2 + h0 * v1 - h1 * v0
    return (w1 * f2 - w2 * f1 + m * a0 + b1 * h2 - b2 * h1,
            w2 * f0 - w0 * f2 + m * a1 + b2 * h0 - b0 * h2,
            w0 * f1 - w1 * f0 + m * a2 + b0 * h1 - b1 * h0,
            w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1 + I[0] * b0 + I[1] * b1 + I[2] * b2 + h1 * a2 - h2 * a1,
            w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2 + I[3] * b0 + I[4] * b1 + I[5] * b2 + h2 * a0 - h0 * a2,
            w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0 + I[6] * b0 + I[7] * b1 + I[8] * b2 + h0 * a1 - h1 * a0)


@inline
def motion_to_child(E: Mat3, p: Vec3, V: Vec6) -> Vec6:
    """A motion vector in the child's coordinates: ``[E^T (v + w x p); E^T w]`` for the child placed in its
    parent by ``(E, p)`` (``[Ad_{T_child,parent}] V``, Modern Robotics, (8.50)-(8.51))."""
    v0, v1, v2, w0, w1, w2 = V
    p0, p1, p2 = p
    u0 = v0 + w1 * p2 - w2 * p1
    u1 = v1 + w2 * p0 - w0 * p2
    u2 = v2 + w0 * p1 - w1 * p0
    return (E[0] * u0 + E[3] * u1 + E[6] * u2, E[1] * u0 + E[4] * u1 + E[7] * u2,
            E[2] * u0 + E[5] * u1 + E[8] * u2,
            E[0] * w0 + E[3] * w1 + E[6] * w2, E[1] * w0 + E[4] * w1 + E[7] * w2,
            E[2] * w0 + E[5] * w1 + E[8] * w2)


@inline
def force_to_parent(E: Mat3, p: Vec3, F: Vec6) -> Vec6:
    """A wrench in the parent's coordinates: ``[E f; E n + p x (E f)]`` (``[Ad_{T_child,parent}]^T F``,
    Modern Robotics, (8.53))."""
    f0, f1, f2, n0, n1, n2 = F
    p0, p1, p2 = p
    c0 = E[0] * f0 + E[1] * f1 + E[2] * f2
    c1 = E[3] * f0 + E[4] * f1 + E[5] * f2
    c2 = E[6] * f0 + E[7] * f1 + E[8] * f2
    return (c0, c1, c2, E[0] * n0 + E[1] * n1 + E[2] * n2 + p1 * c2 - p2 * c1,
            E[3] * n0 + E[4] * n1 + E[5] * n2 + p2 * c0 - p0 * c2,
            E[6] * n0 + E[7] * n1 + E[8] * n2 + p0 * c1 - p1 * c0)


@inline
def motion_cross(V: np.ndarray, W: np.ndarray, out: np.ndarray) -> None:
    """``out = V x W`` (``crm``) on arrays."""
    out[0], out[1], out[2], out[3], out[4], out[5] = crm(
        (V[0], V[1], V[2], V[3], V[4], V[5]), (W[0], W[1], W[2], W[3], W[4], W[5]))


@inline
def add_motion_cross(V: np.ndarray, W: np.ndarray, scale: float, out: np.ndarray) -> None:
    """``out += scale (V x W)`` on arrays."""
    c = crm((V[0], V[1], V[2], V[3], V[4], V[5]), (W[0], W[1], W[2], W[3], W[4], W[5]))
    for k in range(6):
        out[k] += scale * c[k]


@inline
def force_cross(V: np.ndarray, F: np.ndarray, out: np.ndarray) -> None:
    """``out = V x* F`` (``crf``) on arrays."""
    out[0], out[1], out[2], out[3], out[4], out[5] = crf(
        (V[0], V[1], V[2], V[3], V[4], V[5]), (F[0], F[1], F[2], F[3], F[4], F[5]))


@inline
def inertia_times(m: float, h: np.ndarray, I: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:  # noqa: E741
    """``out = [m v + w x h; I w + h x v]`` (``inertia_mul``) on arrays, ``x = [v; w]``."""
    out[0], out[1], out[2], out[3], out[4], out[5] = inertia_mul(
        m, (h[0], h[1], h[2]),
        (I[0, 0], I[0, 1], I[0, 2], I[1, 0], I[1, 1], I[1, 2], I[2, 0], I[2, 1], I[2, 2]),
        (x[0], x[1], x[2], x[3], x[4], x[5]))


@inline
def dot6(x: np.ndarray, y: np.ndarray) -> float:
    """``x . y`` of two 6-vector arrays (a motion and a force: the power)."""
    power: float = x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5]
    return power


@inline
def rigid_inertia_matrix(m: float, h: Vec3, I: Mat3, out: np.ndarray, i: int) -> None:  # noqa: E741
    """``out[i]`` (6x6) = ``[[m E, -[h]x], [[h]x, I]]``, the matrix of ``inertia_mul``."""
    h0, h1, h2 = h
    out[i, 0, 0], out[i, 0, 1], out[i, 0, 2] = m, 0.0, 0.0
    out[i, 1, 0], out[i, 1, 1], out[i, 1, 2] = 0.0, m, 0.0
    out[i, 2, 0], out[i, 2, 1], out[i, 2, 2] = 0.0, 0.0, m
    out[i, 3, 3], out[i, 3, 4], out[i, 3, 5] = I[0], I[1], I[2]
    out[i, 4, 3], out[i, 4, 4], out[i, 4, 5] = I[3], I[4], I[5]
    out[i, 5, 3], out[i, 5, 4], out[i, 5, 5] = I[6], I[7], I[8]
    out[i, 0, 3], out[i, 0, 4], out[i, 0, 5] = 0.0, h2, -h1
    out[i, 1, 3], out[i, 1, 4], out[i, 1, 5] = -h2, 0.0, h0
    out[i, 2, 3], out[i, 2, 4], out[i, 2, 5] = h1, -h0, 0.0
    out[i, 3, 0], out[i, 3, 1], out[i, 3, 2] = 0.0, -h2, h1
    out[i, 4, 0], out[i, 4, 1], out[i, 4, 2] = h2, 0.0, -h0
    out[i, 5, 0], out[i, 5, 1], out[i, 5, 2] = -h1, h0, 0.0
