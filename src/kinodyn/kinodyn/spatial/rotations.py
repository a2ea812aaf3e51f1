"""Rotation parameterizations and their conversions (Robot Dynamics lecture notes (ETH), §2.4, Rotations and
inverse kinematics (Fredriksson), §2.4-2.7).

Conventions (docs/conventions.md, Robot Dynamics lecture notes (ETH), (2.22)-(2.24)): a rotation matrix
``C_AB`` maps coordinates in frame B to coordinates in frame A (passive), so ``C_AC = C_AB @ C_BC`` (2.31).
Quaternions are Hamilton (i*j = k, Robot Dynamics lecture notes (ETH), (2.57)), stored ``(x, y, z, w)`` as in
ROS; the notes write them scalar first. ``xi_AB`` parameterizes ``C_AB``.

Euler angles are intrinsic (Robot Dynamics lecture notes (ETH), §2.4.5): sequence ``"zyx"`` means
``C = Cz(a0) @ Cy(a1) @ Cx(a2)``, which is scipy's uppercase (intrinsic) ``"ZYX"``.

All functions act on one rotation at a time; inputs are validated and bad ones raise ValueError. The
rotation matrix, quaternion and rotation-vector maps run the compiled implementations of
``kinodyn.spatial.compiled`` that the kernels use.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kinodyn.kernel import IN1, IN2, OUT1, OUT2, Kernel
from kinodyn.spatial import compiled as _c

FloatArray = NDArray[np.float64]

EULER_SEQUENCES = ("zyx", "xyz", "zyz", "zxz")
PARAMETERIZATIONS = ("euler_zyx", "euler_xyz", "euler_zyz", "euler_zxz", "quaternion", "angle_axis", "rotvec")

ORTHONORMALITY_TOLERANCE = 1e-6
"""Largest ``|C^T C - I|`` entry accepted for a rotation matrix."""
UNIT_NORM_TOLERANCE = 1e-6
"""Largest ``| |x| - 1 |`` accepted for a unit quaternion or a rotation axis."""
GIMBAL_LOCK_TOLERANCE = 1e-15
"""Euler extraction treats the rotation as gimbal locked when ``|cos(middle)|`` (Tait-Bryan) or
``|sin(middle)|`` (proper Euler) is at most this; the third angle is then set to zero."""

_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}

_SKEW = Kernel(_c.skew, IN1, OUT2)
_QUATERNION_TO_ROTATION = Kernel(_c.unit_quaternion_to_rotation, IN1, OUT2)
_ROTATION_TO_QUATERNION = Kernel(_c.rotation_to_quaternion, IN2, OUT1)
_QUATERNION_MULTIPLY = Kernel(_c.quaternion_multiply, IN1, IN1, OUT1)
_SO3_EXP = Kernel(_c.so3_exp, IN1, OUT2)
_SO3_LOG = Kernel(_c.so3_log, IN2, OUT1)


def as_vector(value: ArrayLike, size: int, name: str) -> FloatArray:
    """``value`` as a finite float vector of length ``size``, or a ValueError naming ``name``."""
    vector = np.asarray(value, dtype=np.float64)
    if vector.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got shape {vector.shape}")
    if not np.all(np.isfinite(vector)):
        raise ValueError(f"{name} must be finite, got {vector}")
    return vector


def as_rotation_matrix(C: ArrayLike) -> FloatArray:
    """``C`` as a float 3x3 rotation matrix, or a ValueError if it is not one (ORTHONORMALITY_TOLERANCE)."""
    matrix = np.asarray(C, dtype=np.float64)
    if matrix.shape != (3, 3):
        raise ValueError(f"a rotation matrix must have shape (3, 3), got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"a rotation matrix must be finite, got {matrix.tolist()}")
    deviation = np.max(np.abs(matrix.T @ matrix - np.eye(3)))
    determinant = np.linalg.det(matrix)
    if deviation > ORTHONORMALITY_TOLERANCE or determinant < 0.0:
        raise ValueError(
            f"not a rotation matrix: max |C^T C - I| = {deviation:.3g} "
            f"(tolerance {ORTHONORMALITY_TOLERANCE}), "
            f"det = {determinant:.6g} (must be +1); re-orthonormalize it before converting"
        )
    return matrix


def as_unit_quaternion(q: ArrayLike) -> FloatArray:
    """``q`` as a float (x, y, z, w) unit quaternion, or a ValueError telling to normalize it."""
    quaternion = as_vector(q, 4, "quaternion (x, y, z, w)")
    norm = np.linalg.norm(quaternion)
    if abs(norm - 1.0) > UNIT_NORM_TOLERANCE:
        raise ValueError(
            f"quaternion {quaternion} has norm {norm:.9g}, not 1 (tolerance {UNIT_NORM_TOLERANCE}); "
            "normalize it with quat_normalize first"
        )
    return quaternion


def as_unit_axis(axis: ArrayLike) -> FloatArray:
    """``axis`` as a float unit 3-vector, or a ValueError."""
    vector = as_vector(axis, 3, "rotation axis")
    norm = np.linalg.norm(vector)
    if abs(norm - 1.0) > UNIT_NORM_TOLERANCE:
        raise ValueError(f"rotation axis {vector} has norm {norm:.9g}, must be a unit vector")
    return vector


# --- operators (Robot Dynamics lecture notes (ETH), §1.2) ---------------------------------------------------


def skew(a: ArrayLike) -> FloatArray:
    """Skew-symmetric matrix ``[a]x`` with ``[a]x @ b = a x b`` (Robot Dynamics lecture notes (ETH), §1.2)."""
    out = np.empty((3, 3))
    _SKEW.call(as_vector(a, 3, "vector"), out)
    return out


def unskew(S: ArrayLike) -> FloatArray:
    """Vector ``a`` of the skew-symmetric part of ``S``: ``unskew([a]x) = a`` (Robot Dynamics lecture notes
    (ETH), §1.2, Ex. 2.5.1)."""
    matrix = np.asarray(S, dtype=np.float64)
    if matrix.shape != (3, 3):
        raise ValueError(f"unskew needs a (3, 3) matrix, got shape {matrix.shape}")
    antisymmetric = matrix - matrix.T
    return 0.5 * np.array([antisymmetric[2, 1], antisymmetric[0, 2], antisymmetric[1, 0]])


# --- elementary rotations and Euler angles (Robot Dynamics lecture notes (ETH), §2.4.3, §2.4.5) -------------


def rot_x(angle: float) -> FloatArray:
    """``C_AB`` for B rotated by ``angle`` about the shared x axis (Robot Dynamics lecture notes (ETH),
    (2.26))."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle: float) -> FloatArray:
    """``C_AB`` for B rotated by ``angle`` about the shared y axis (Robot Dynamics lecture notes (ETH),
    (2.27))."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle: float) -> FloatArray:
    """``C_AB`` for B rotated by ``angle`` about the shared z axis (Robot Dynamics lecture notes (ETH),
    (2.28))."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def elementary_rotation(axis: str, angle: float) -> FloatArray:
    """Elementary rotation about ``axis`` in {"x", "y", "z"} (Robot Dynamics lecture notes (ETH),
    (2.26)-(2.28))."""
    if axis not in _AXIS_INDEX:
        raise ValueError(f"elementary rotation axis must be 'x', 'y' or 'z', got {axis!r}")
    return {"x": rot_x, "y": rot_y, "z": rot_z}[axis](angle)


def _check_sequence(sequence: str) -> tuple[str, str, str]:
    """The three axis letters of a supported Euler sequence; ``ValueError`` otherwise."""
    if sequence not in EULER_SEQUENCES:
        raise ValueError(f"Euler sequence must be one of {EULER_SEQUENCES}, got {sequence!r}")
    return sequence[0], sequence[1], sequence[2]


def euler_to_matrix(angles: ArrayLike, sequence: str) -> FloatArray:
    """Rotation matrix of intrinsic Euler ``angles`` (Robot Dynamics lecture notes (ETH), (2.32)-(2.44)).

    ``sequence`` "zyx" gives ``Cz(a0) Cy(a1) Cx(a2)`` (yaw-pitch-roll, (2.41)), "xyz" gives
    ``Cx(a0) Cy(a1) Cz(a2)`` ((2.44)), "zyz" and "zxz" the proper Euler sets ((2.33), (2.37)).
    Each equals scipy's ``Rotation.from_euler(sequence.upper(), angles)``.
    """
    first, middle, last = as_vector(angles, 3, "Euler angles")
    a, b, c = _check_sequence(sequence)
    return elementary_rotation(a, first) @ elementary_rotation(b, middle) @ elementary_rotation(c, last)


def _elementary_angle(axis: str, C: FloatArray) -> float:
    """Angle of ``C`` taken as an elementary rotation about ``axis`` (inverse of (2.26)-(2.28))."""
    j, k = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    return math.atan2(C[k, j], C[j, j])


def _middle_and_last_angles(C: FloatArray, sequence: str) -> tuple[float, float, float]:
    """Middle angle, last angle and the lock radius (|cos| or |sin| of the middle angle) from ``C``.

    These are the notes' atan2 formulas, 0-based: ZYX (2.42), XYZ (2.45), ZYZ (2.35), ZXZ (2.39).
    """
    if sequence == "zyx":
        radius = math.hypot(C[2, 1], C[2, 2])
        return math.atan2(-C[2, 0], radius), math.atan2(C[2, 1], C[2, 2]), radius
    if sequence == "xyz":
        radius = math.hypot(C[0, 0], C[0, 1])
        return math.atan2(C[0, 2], radius), math.atan2(-C[0, 1], C[0, 0]), radius
    if sequence == "zyz":
        middle = math.atan2(math.hypot(C[0, 2], C[1, 2]), C[2, 2])
        return middle, math.atan2(C[2, 1], -C[2, 0]), math.hypot(C[2, 0], C[2, 1])
    middle = math.atan2(math.hypot(C[0, 2], C[1, 2]), C[2, 2])
    return middle, math.atan2(C[2, 0], C[2, 1]), math.hypot(C[2, 0], C[2, 1])


def matrix_to_euler(C: ArrayLike, sequence: str) -> FloatArray:
    """Intrinsic Euler angles of ``C`` for ``sequence`` (Robot Dynamics lecture notes (ETH), (2.35), (2.39),
    (2.42), (2.45)).

    Branches: the first and last angles lie in (-pi, pi]; the middle angle in [-pi/2, pi/2] for the
    Tait-Bryan sets "zyx", "xyz" and in [0, pi] for the proper sets "zyz", "zxz", as in the notes.
    The middle and last angles come from the notes' atan2 formulas. The first angle is then read
    from the remainder ``C Cc(last)^T Cb(middle)^T``, an elementary rotation; unlike the notes'
    formula for it, this keeps ``euler_to_matrix(matrix_to_euler(C)) == C`` to machine precision
    near gimbal lock. At gimbal lock (lock radius <= GIMBAL_LOCK_TOLERANCE) only the sum or the
    difference of the outer angles is defined: the last angle is set to zero and the first
    carries the whole rotation about the locked axis (scipy makes the same choice).
    """
    matrix = as_rotation_matrix(C)
    a, b, c = _check_sequence(sequence)
    middle, last, radius = _middle_and_last_angles(matrix, sequence)
    if radius <= GIMBAL_LOCK_TOLERANCE:
        last = 0.0
    remainder = matrix @ elementary_rotation(c, last).T @ elementary_rotation(b, middle).T
    return np.array([_elementary_angle(a, remainder), middle, last])


# --- rotation vector and angle-axis (Robot Dynamics lecture notes (ETH), (2.46)-(2.50), Rotations and inverse
# kinematics (Fredriksson), §2.4-2.7) ----------------------


def rotvec_to_matrix(phi: ArrayLike) -> FloatArray:
    """Rodrigues' formula ``C = I + sin|phi|/|phi| [phi]x + (1 - cos|phi|)/|phi|^2 [phi]x^2``.

    Robot Dynamics lecture notes (ETH), (2.48) and App. A.2, Rotations and inverse kinematics (Fredriksson),
    (7). This is the exponential map of SO(3) (``compiled.so3_exp``): below ``compiled.SMALL_ANGLE`` the
    coefficients come from their Taylor series, exact at ``|phi| = 0`` and free of cancellation near it.
    """
    out = np.empty((3, 3))
    _SO3_EXP.call(as_vector(phi, 3, "rotation vector"), out)
    return out


def matrix_to_rotvec(C: ArrayLike) -> FloatArray:
    """Rotation vector ``phi = theta n`` of ``C``, with ``theta`` in [0, pi] (log of SO(3)).

    Robot Dynamics lecture notes (ETH), (2.49)-(2.50) and Rotations and inverse kinematics (Fredriksson),
    (27)-(32); ``compiled.so3_log`` states its small-angle and near-pi branches.
    """
    out = np.empty(3)
    _SO3_LOG.call(as_rotation_matrix(C), out)
    return out


def angle_axis_to_matrix(angle: float, axis: ArrayLike) -> FloatArray:
    """Rotation by ``angle`` about the unit ``axis`` (Robot Dynamics lecture notes (ETH), (2.48))."""
    return rotvec_to_matrix(float(angle) * as_unit_axis(axis))


def _rotvec_angle_axis(phi: FloatArray) -> tuple[float, FloatArray]:
    """``(|phi|, phi / |phi|)`` of the rotation vector ``phi``; the x axis at a zero rotation."""
    angle = float(np.linalg.norm(phi))
    if angle == 0.0:
        return 0.0, np.array([1.0, 0.0, 0.0])
    return angle, phi / angle


def matrix_to_angle_axis(C: ArrayLike) -> tuple[float, FloatArray]:
    """``(theta, n)`` of ``C`` with theta in [0, pi] (Robot Dynamics lecture notes (ETH), (2.49)-(2.50)).

    Branches as in matrix_to_rotvec. At theta = 0 every axis is valid; the x axis is returned.
    """
    return _rotvec_angle_axis(matrix_to_rotvec(C))


# --- unit quaternions, stored (x, y, z, w) (Robot Dynamics lecture notes (ETH), (2.51)-(2.64)) --------------


def quat_normalize(q: ArrayLike) -> FloatArray:
    """``q / |q|``; raises for a zero quaternion."""
    quaternion = as_vector(q, 4, "quaternion (x, y, z, w)")
    norm = np.linalg.norm(quaternion)
    if norm == 0.0:
        raise ValueError("cannot normalize the zero quaternion")
    normalized: FloatArray = quaternion / norm
    return normalized


def quat_conjugate(q: ArrayLike) -> FloatArray:
    """Conjugate ``(-x, -y, -z, w)``, the inverse of a unit quaternion (Robot Dynamics lecture notes (ETH),
    (2.56), its xi^T)."""
    x, y, z, w = as_vector(q, 4, "quaternion (x, y, z, w)")
    return np.array([-x, -y, -z, w])


def quat_left_matrix(q: ArrayLike) -> FloatArray:
    """4x4 ``L(p)`` with ``p (x) q = L(p) @ q`` in (x, y, z, w) storage (Robot Dynamics lecture notes (ETH),
    Ml, (2.58)-(2.59))."""
    x, y, z, w = as_vector(q, 4, "quaternion (x, y, z, w)")
    return np.array([[w, -z, y, x], [z, w, -x, y], [-y, x, w, z], [-x, -y, -z, w]])


def quat_right_matrix(q: ArrayLike) -> FloatArray:
    """4x4 ``R(q)`` with ``p (x) q = R(q) @ p`` in (x, y, z, w) storage (Robot Dynamics lecture notes (ETH),
    Mr, (2.60)-(2.61))."""
    x, y, z, w = as_vector(q, 4, "quaternion (x, y, z, w)")
    return np.array([[w, z, -y, x], [-z, w, x, y], [y, -x, w, z], [-x, -y, -z, w]])


def quat_multiply(p: ArrayLike, q: ArrayLike) -> FloatArray:
    """Hamilton product ``p (x) q``; ``xi_AB (x) xi_BC = xi_AC`` (Robot Dynamics lecture notes (ETH),
    (2.57))."""
    name = "quaternion (x, y, z, w)"
    out = np.empty(4)
    _QUATERNION_MULTIPLY.call(as_vector(p, 4, name), as_vector(q, 4, name), out)
    return out


def quat_to_matrix(q: ArrayLike) -> FloatArray:
    """Rotation matrix of the unit quaternion ``q = (x, y, z, w)`` (Robot Dynamics lecture notes (ETH),
    (2.54); ``compiled.unit_quaternion_matrix``)."""
    out = np.empty((3, 3))
    _QUATERNION_TO_ROTATION.call(as_unit_quaternion(q), out)
    return out


def matrix_to_quat(C: ArrayLike) -> FloatArray:
    """Unit quaternion (x, y, z, w) of ``C`` with ``w >= 0`` (Robot Dynamics lecture notes (ETH), (2.55)),
    by Shepperd's method (``compiled.rotation_to_quaternion``), exact where the notes' formula divides by
    zero."""
    out = np.empty(4)
    _ROTATION_TO_QUATERNION.call(as_rotation_matrix(C), out)
    return out


def quat_rotate(q: ArrayLike, r: ArrayLike) -> FloatArray:
    """``A r`` from ``B r`` and ``xi_AB``: vector part of ``xi (x) (r, 0) (x) xi^-1`` (Robot Dynamics lecture
    notes (ETH), (2.62)).

    ``quat_rotate(q, r) == quat_to_matrix(q) @ r``.
    """
    quaternion = as_unit_quaternion(q)
    pure = np.append(as_vector(r, 3, "vector"), 0.0)
    return quat_multiply(quat_multiply(quaternion, pure), quat_conjugate(quaternion))[:3]


def rotvec_to_quat(phi: ArrayLike) -> FloatArray:
    """Quaternion ``(sin(theta/2) n, cos(theta/2))`` of ``phi = theta n`` (Robot Dynamics lecture notes (ETH),
    (2.52)).

    ``sin(theta/2) n = phi sinc(theta/2) / 2`` is exact at theta = 0.
    """
    vector = as_vector(phi, 3, "rotation vector")
    half = 0.5 * float(np.linalg.norm(vector))
    return np.append(0.5 * np.sinc(half / math.pi) * vector, math.cos(half))


def quat_to_rotvec(q: ArrayLike) -> FloatArray:
    """Rotation vector of the unit quaternion ``q``, theta in [0, pi] (inverse of (2.52)).

    ``q`` is first flipped to ``w >= 0``; then ``theta = 2 atan2(|v|, w)`` and
    ``phi = v theta / sin(theta/2) = 2 v / sinc(theta/2)``, exact at theta = 0.
    """
    quaternion = quat_normalize(as_unit_quaternion(q))
    if quaternion[3] < 0.0:
        quaternion = -quaternion
    v = quaternion[:3]
    half = math.atan2(float(np.linalg.norm(v)), quaternion[3])
    return 2.0 * v / np.sinc(half / math.pi)


def angle_axis_to_quat(angle: float, axis: ArrayLike) -> FloatArray:
    """Quaternion of the rotation by ``angle`` about the unit ``axis`` (Robot Dynamics lecture notes (ETH),
    (2.52))."""
    return rotvec_to_quat(float(angle) * as_unit_axis(axis))


def quat_to_angle_axis(q: ArrayLike) -> tuple[float, FloatArray]:
    """``(theta, n)`` of the unit quaternion ``q``, theta in [0, pi]; the x axis at theta = 0."""
    return _rotvec_angle_axis(quat_to_rotvec(q))


# --- one entry point for every parameterization ---------------------------------------------------


def parameter_size(parameterization: str) -> int:
    """Number of parameters of ``parameterization`` (one of PARAMETERIZATIONS)."""
    if parameterization not in PARAMETERIZATIONS:
        raise ValueError(
            f"rotation parameterization must be one of {PARAMETERIZATIONS}, got {parameterization!r}"
        )
    return 4 if parameterization in ("quaternion", "angle_axis") else 3


def parameters_to_matrix(parameterization: str, value: ArrayLike) -> FloatArray:
    """Rotation matrix of ``value`` in ``parameterization``.

    Values: "euler_<seq>" the three angles; "quaternion" (x, y, z, w); "angle_axis"
    (theta, nx, ny, nz) as the notes' chi = (theta, n); "rotvec" theta n.
    """
    vector = as_vector(value, parameter_size(parameterization), f"{parameterization} parameters")
    if parameterization.startswith("euler_"):
        return euler_to_matrix(vector, parameterization.removeprefix("euler_"))
    if parameterization == "quaternion":
        return quat_to_matrix(vector)
    if parameterization == "angle_axis":
        return angle_axis_to_matrix(vector[0], vector[1:])
    return rotvec_to_matrix(vector)


def matrix_to_parameters(parameterization: str, C: ArrayLike) -> FloatArray:
    """Parameters of ``C`` in ``parameterization``, on the branches of matrix_to_euler,
    matrix_to_quat (w >= 0), matrix_to_angle_axis and matrix_to_rotvec (theta in [0, pi])."""
    parameter_size(parameterization)
    if parameterization.startswith("euler_"):
        return matrix_to_euler(C, parameterization.removeprefix("euler_"))
    if parameterization == "quaternion":
        return matrix_to_quat(C)
    if parameterization == "angle_axis":
        angle, axis = matrix_to_angle_axis(C)
        return np.append(angle, axis)
    return matrix_to_rotvec(C)
