"""Rotation parameterizations: Robot Dynamics lecture notes (ETH), §2.4 closed forms and examples, round
trips, scipy, singular cases."""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.spatial import rotations as rot
from scipy.spatial.transform import Rotation

if TYPE_CHECKING:
    from collections.abc import Iterator

assert_close = partial(np.testing.assert_allclose, rtol=0.0)
RNG_SEED = 20240611
SAMPLES = 200


def random_matrices(count: int = SAMPLES) -> list[np.ndarray]:
    rng = np.random.default_rng(RNG_SEED)
    return list(Rotation.random(count, random_state=rng).as_matrix())


def wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    """The notes write quaternions scalar first."""
    return np.array([q[1], q[2], q[3], q[0]])


# The notes' explicit Euler matrices, as printed (1-based names in the notes, 0-based here).
def seed_zyz(z1: float, y: float, z2: float) -> np.ndarray:  # (2.33)
    c1, s1, cy, sy, c2, s2 = math.cos(z1), math.sin(z1), math.cos(y), math.sin(y), math.cos(z2), math.sin(z2)
    return np.array(
        [
            [cy * c1 * c2 - s1 * s2, -c2 * s1 - cy * c1 * s2, c1 * sy],
            [c1 * s2 + cy * c2 * s1, c1 * c2 - cy * s1 * s2, sy * s1],
            [-c2 * sy, sy * s2, cy],
        ]
    )


def seed_zxz(z1: float, x: float, z2: float) -> np.ndarray:  # (2.37)
    c1, s1, cx, sx, c2, s2 = math.cos(z1), math.sin(z1), math.cos(x), math.sin(x), math.cos(z2), math.sin(z2)
    return np.array(
        [
            [c1 * c2 - cx * s1 * s2, -c1 * s2 - cx * c2 * s1, sx * s1],
            [c2 * s1 + cx * c1 * s2, cx * c1 * c2 - s1 * s2, -c1 * sx],
            [sx * s2, c2 * sx, cx],
        ]
    )


def seed_zyx(z: float, y: float, x: float) -> np.ndarray:  # (2.41)
    cz, sz, cy, sy, cx, sx = math.cos(z), math.sin(z), math.cos(y), math.sin(y), math.cos(x), math.sin(x)
    return np.array(
        [
            [cy * cz, cz * sx * sy - cx * sz, sx * sz + cx * cz * sy],
            [cy * sz, cx * cz + sx * sy * sz, cx * sy * sz - cz * sx],
            [-sy, cy * sx, cx * cy],
        ]
    )


def seed_xyz(x: float, y: float, z: float) -> np.ndarray:  # (2.44)
    cz, sz, cy, sy, cx, sx = math.cos(z), math.sin(z), math.cos(y), math.sin(y), math.cos(x), math.sin(x)
    return np.array(
        [
            [cy * cz, -cy * sz, sy],
            [cx * sz + cz * sx * sy, cx * cz - sx * sy * sz, -cy * sx],
            [sx * sz - cx * cz * sy, cz * sx + cx * sy * sz, cx * cy],
        ]
    )


SEED_EULER = {"zyz": seed_zyz, "zxz": seed_zxz, "zyx": seed_zyx, "xyz": seed_xyz}


def seed_euler_angles(C: np.ndarray, sequence: str) -> np.ndarray:
    """The notes' extraction formulas (2.35), (2.39), (2.42), (2.45), with c_ij 1-based -> C[i-1, j-1]."""
    c = lambda i, j: C[i - 1, j - 1]  # noqa: E731
    if sequence == "zyz":
        return np.array(
            [
                math.atan2(c(2, 3), c(1, 3)),
                math.atan2(math.hypot(c(1, 3), c(2, 3)), c(3, 3)),
                math.atan2(c(3, 2), -c(3, 1)),
            ]
        )
    if sequence == "zxz":
        return np.array(
            [
                math.atan2(c(1, 3), -c(2, 3)),
                math.atan2(math.hypot(c(1, 3), c(2, 3)), c(3, 3)),
                math.atan2(c(3, 1), c(3, 2)),
            ]
        )
    if sequence == "zyx":
        return np.array(
            [
                math.atan2(c(2, 1), c(1, 1)),
                math.atan2(-c(3, 1), math.hypot(c(3, 2), c(3, 3))),
                math.atan2(c(3, 2), c(3, 3)),
            ]
        )
    return np.array(
        [
            math.atan2(-c(2, 3), c(3, 3)),
            math.atan2(c(1, 3), math.hypot(c(1, 1), c(1, 2))),
            math.atan2(-c(1, 2), c(1, 1)),
        ]
    )


def random_branch_angles(rng: np.random.Generator, sequence: str) -> np.ndarray:
    """Angles strictly inside the extraction branch, away from gimbal lock."""
    outer = rng.uniform(-math.pi + 1e-3, math.pi - 1e-3, size=2)
    middle = rng.uniform(-1.5, 1.5) if sequence[0] != sequence[2] else rng.uniform(0.05, math.pi - 0.05)
    return np.array([outer[0], middle, outer[1]])


# --- operators and elementary rotations ----------------------------------------------------------


def test_skew_is_the_cross_product_and_unskew_inverts_it() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(20):
        a, b = rng.normal(size=3), rng.normal(size=3)
        assert_close(rot.skew(a) @ b, np.cross(a, b), atol=1e-15)
        assert_close(rot.skew(a), -rot.skew(a).T, atol=0.0)
        np.testing.assert_array_equal(rot.unskew(rot.skew(a)), a)


@pytest.mark.parametrize("axis", ["x", "y", "z"])
def test_elementary_rotations_match_scipy_and_the_seed(axis: str) -> None:
    for angle in np.linspace(-3.0, 3.0, 13):
        C = rot.elementary_rotation(axis, angle)
        assert_close(C, Rotation.from_euler(axis, angle).as_matrix(), atol=1e-15)
        assert_close(C.T @ C, np.eye(3), atol=1e-15)
    # (2.26): the y-z block of Cx is [[c, -s], [s, c]].
    assert_close(rot.rot_x(0.3)[1:, 1:], [[math.cos(0.3), -math.sin(0.3)], [math.sin(0.3), math.cos(0.3)]])


# --- Euler angles ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sequence", rot.EULER_SEQUENCES)
def test_euler_to_matrix_matches_the_seed_closed_forms_and_scipy_intrinsic(sequence: str) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(50):
        angles = rng.uniform(-4.0, 4.0, size=3)
        C = rot.euler_to_matrix(angles, sequence)
        assert_close(C, SEED_EULER[sequence](*angles), atol=1e-15)
        # Intrinsic: scipy's uppercase sequence; equivalently its extrinsic lowercase reversed sequence.
        assert_close(C, Rotation.from_euler(sequence.upper(), angles).as_matrix(), atol=1e-15)
        assert_close(C, Rotation.from_euler(sequence[::-1], angles[::-1]).as_matrix(), atol=1e-15)


@pytest.mark.parametrize("sequence", rot.EULER_SEQUENCES)
def test_matrix_to_euler_round_trips_and_matches_the_seed_formulas_and_scipy(sequence: str) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for C in random_matrices():
        angles = rot.matrix_to_euler(C, sequence)
        assert_close(rot.euler_to_matrix(angles, sequence), C, atol=2e-15)
        assert_close(angles, seed_euler_angles(C, sequence), atol=1e-12)
        assert_close(angles, Rotation.from_matrix(C).as_euler(sequence.upper()), atol=1e-12)
    for _ in range(SAMPLES):
        angles = random_branch_angles(rng, sequence)
        assert_close(rot.matrix_to_euler(rot.euler_to_matrix(angles, sequence), sequence), angles, atol=1e-13)


def with_rounding_noise(C: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``C`` recomputed as ``A (A^T C)``: the same rotation with the rounding errors of a product."""
    A = Rotation.random(random_state=rng).as_matrix()
    return A @ (A.T @ C)


@pytest.mark.parametrize("sequence", rot.EULER_SEQUENCES)
@pytest.mark.parametrize("distance", [0.0, 1e-14, 1e-12, 1e-9, 1e-6])
def test_euler_extraction_at_and_near_gimbal_lock_reconstructs_the_matrix(
    sequence: str, distance: float
) -> None:
    """``distance`` from each lock into the branch; C carries rounding noise, so even at distance 0 the
    lock test may see a radius above GIMBAL_LOCK_TOLERANCE: reconstruction must hold either way."""
    tait_bryan = sequence[0] != sequence[2]
    middles = (
        [-math.pi / 2 + distance, math.pi / 2 - distance] if tait_bryan else [distance, math.pi - distance]
    )
    rng = np.random.default_rng(RNG_SEED)
    for middle in middles:
        for _ in range(20):
            outer = rng.uniform(-3.0, 3.0, size=2)
            exact = rot.euler_to_matrix([outer[0], middle, outer[1]], sequence)
            C = with_rounding_noise(exact, rng)
            angles = rot.matrix_to_euler(C, sequence)
            assert_close(rot.euler_to_matrix(angles, sequence), C, atol=3e-15)
            assert abs(angles[1] - middle) < 1e-14
            if distance == 0.0:
                exact_angles = rot.matrix_to_euler(exact, sequence)
                assert exact_angles[2] == 0.0  # documented convention at lock: last angle zero
                assert_close(rot.euler_to_matrix(exact_angles, sequence), exact, atol=2e-15)
                with pytest.warns(UserWarning, match="Gimbal lock"):
                    reference = Rotation.from_matrix(exact).as_euler(sequence.upper())
                assert_close(exact_angles, reference, atol=1e-12)


def test_the_seed_first_angle_formula_loses_accuracy_near_lock_where_ours_does_not() -> None:
    """Why matrix_to_euler reads the first angle from the remainder (its docstring): 1e-9 from lock, the
    seed's atan2 of two ~1e-9 entries turns rounding noise into ~1e-7 error; the remainder method does not."""
    rng = np.random.default_rng(RNG_SEED)
    seed_error = our_error = 0.0
    for _ in range(20):
        C = with_rounding_noise(rot.euler_to_matrix([0.4, math.pi / 2 - 1e-9, -1.1], "zyx"), rng)
        seed_error = max(
            seed_error, np.abs(rot.euler_to_matrix(seed_euler_angles(C, "zyx"), "zyx") - C).max()
        )
        our_error = max(
            our_error, np.abs(rot.euler_to_matrix(rot.matrix_to_euler(C, "zyx"), "zyx") - C).max()
        )
    assert our_error < 3e-15
    assert seed_error > 1e-9


def test_example_2_9_7_numbers() -> None:
    """Robot Dynamics lecture notes (ETH), Ex. 2.9.7/2.9.8 (App. A.2), printed to 4 decimals."""
    C0 = rot.euler_to_matrix([-0.7, 0.0, 1.5], "zyx")
    C_goal = rot.euler_to_matrix([0.7, 1.5, -0.5], "zyx")
    assert_close(C0, [[0.7648, 0.0456, -0.6426], [-0.6442, 0.0541, -0.7629], [0, 0.9975, 0.0707]], atol=1e-4)
    assert_close(
        C_goal, [[0.0541, -0.9311, 0.3607], [0.0456, 0.3631, 0.9306], [-0.9975, -0.0339, 0.0621]], atol=1e-4
    )
    assert_close(rot.matrix_to_euler(C_goal, "xyz"), [-1.5042, 0.3690, 1.5128], atol=1e-4)
    assert_close(rot.matrix_to_rotvec(C_goal), [-0.9162, 1.2900, 0.9277], atol=1e-4)
    assert_close(rot.matrix_to_rotvec(C0), [1.4334, -0.5232, -0.5616], atol=1e-4)
    relative = rot.matrix_to_rotvec(C_goal @ C0.T)
    assert_close(relative, [1.8557, -1.1100, -2.0898], atol=1e-4)
    assert abs(np.linalg.norm(relative) - 3.0072) < 1e-4


# --- angle-axis and rotation vector ---------------------------------------------------------------


def random_axes(rng: np.random.Generator, count: int = 20) -> Iterator[np.ndarray]:
    """``count`` unit vectors, each drawn from ``rng`` when it is asked for."""
    for _ in range(count):
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        yield n


def seed_angle_axis_matrix(theta: float, n: np.ndarray) -> np.ndarray:
    """Robot Dynamics lecture notes (ETH), (2.48), entry by entry."""
    c, s, v = math.cos(theta), math.sin(theta), 1.0 - math.cos(theta)
    x, y, z = n
    return np.array(
        [
            [x * x * v + c, x * y * v - z * s, x * z * v + y * s],
            [x * y * v + z * s, y * y * v + c, y * z * v - x * s],
            [x * z * v - y * s, y * z * v + x * s, z * z * v + c],
        ]
    )


def test_rotvec_and_angle_axis_match_the_seed_rodrigues_and_scipy() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for n in random_axes(rng, SAMPLES):
        theta = rng.uniform(-7.0, 7.0)
        C = rot.angle_axis_to_matrix(theta, n)
        assert_close(C, seed_angle_axis_matrix(theta, n), atol=4e-15)
        assert_close(rot.rotvec_to_matrix(theta * n), C, atol=0.0)
        assert_close(C, Rotation.from_rotvec(theta * n).as_matrix(), atol=4e-15)
        # Rotations and inverse kinematics (Fredriksson), (13): R v = v + sin a k x v + (1 - cos a) k x (k x
        # v); (27): R - R^T = 2 sin a [k]x; (28).
        v = rng.normal(size=3)
        expected = v + math.sin(theta) * np.cross(n, v) + (1 - math.cos(theta)) * np.cross(n, np.cross(n, v))
        assert_close(C @ v, expected, atol=1e-14)
        assert_close(C - C.T, 2 * math.sin(theta) * rot.skew(n), atol=4e-15)
        assert abs(np.trace(C) - (1 + 2 * math.cos(theta))) < 1e-14


def test_matrix_to_rotvec_round_trips_and_matches_scipy() -> None:
    for C in random_matrices():
        phi = rot.matrix_to_rotvec(C)
        assert np.linalg.norm(phi) <= math.pi
        assert_close(rot.rotvec_to_matrix(phi), C, atol=2e-15)
        assert_close(phi, Rotation.from_matrix(C).as_rotvec(), atol=1e-14)
        theta, n = rot.matrix_to_angle_axis(C)
        assert_close(theta * n, phi, atol=1e-15)
        assert abs(np.linalg.norm(n) - 1.0) < 1e-15


@pytest.mark.parametrize(
    "angle",
    [
        1e-12,
        1e-8,
        1e-3,
        0.0099,
        0.0101,
        1.0,
        math.pi / 2 - 1e-12,
        math.pi / 2 + 1e-12,
        2.0,
        math.pi - 1e-3,
        math.pi - 1e-9,
        math.pi - 1e-12,
    ],
)
def test_rotvec_log_is_exact_on_both_sides_of_each_branch(angle: float) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for n in random_axes(rng):
        C = rot.rotvec_to_matrix(angle * n)
        # Independent oracle: scipy's matrix -> quaternion -> rotation vector path.
        assert_close(C, Rotation.from_rotvec(angle * n).as_matrix(), atol=1e-15)
        phi = rot.matrix_to_rotvec(C)
        assert_close(phi, angle * n, rtol=0.0, atol=1e-14)


def test_small_angle_rotvec_matches_its_series() -> None:
    phi = np.array([3e-13, -1e-12, 2e-12])
    K = rot.skew(phi)
    np.testing.assert_array_equal(rot.rotvec_to_matrix(phi), np.eye(3) + K + 0.5 * K @ K)
    assert_close(rot.matrix_to_rotvec(rot.rotvec_to_matrix(phi)), phi, rtol=1e-4, atol=0.0)
    np.testing.assert_array_equal(rot.rotvec_to_matrix(np.zeros(3)), np.eye(3))
    np.testing.assert_array_equal(rot.matrix_to_rotvec(np.eye(3)), np.zeros(3))
    theta, n = rot.matrix_to_angle_axis(np.eye(3))
    assert theta == 0.0
    np.testing.assert_array_equal(n, [1.0, 0.0, 0.0])


def test_rotation_by_exactly_pi_uses_the_seed_002_column_formula() -> None:
    """Rotations and inverse kinematics (Fredriksson), (31)-(32): at pi, R = 2 k k^T - I, k = (R_i + e_i) /
    sqrt(2 (R_ii + 1)), i = argmax R_ii."""
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(50):
        k = rng.normal(size=3)
        k /= np.linalg.norm(k)
        R = 2 * np.outer(k, k) - np.eye(3)
        i = int(np.argmax(np.diag(R)))
        k_seed = (R[:, i] + np.eye(3)[i]) / math.sqrt(2 * (R[i, i] + 1))
        phi = rot.matrix_to_rotvec(R)
        assert_close(phi, math.pi * k_seed, atol=2e-15)
        assert_close(rot.rotvec_to_matrix(phi), R, atol=2e-15)


# --- quaternions ----------------------------------------------------------------------------------


def random_quaternions(count: int = SAMPLES) -> np.ndarray:
    q = np.random.default_rng(RNG_SEED).normal(size=(count, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_quat_to_matrix_matches_the_seed_and_scipy() -> None:
    for q in random_quaternions():
        x, y, z, w = q
        seed = np.array(  # (2.54), xi = (w, x, y, z)
            [
                [w * w + x * x - y * y - z * z, 2 * x * y - 2 * w * z, 2 * w * y + 2 * x * z],
                [2 * w * z + 2 * x * y, w * w - x * x + y * y - z * z, 2 * y * z - 2 * w * x],
                [2 * x * z - 2 * w * y, 2 * w * x + 2 * y * z, w * w - x * x - y * y + z * z],
            ]
        )
        C = rot.quat_to_matrix(q)
        assert_close(C, seed, atol=1e-15)
        assert_close(C, Rotation.from_quat(q).as_matrix(), atol=1e-15)


def test_matrix_to_quat_round_trips_with_nonnegative_w_and_matches_scipy() -> None:
    for q in random_quaternions():
        canonical = q if q[3] >= 0 else -q
        result = rot.matrix_to_quat(rot.quat_to_matrix(q))
        assert_close(result, canonical, atol=1e-15)
        reference = Rotation.from_matrix(rot.quat_to_matrix(q)).as_quat(canonical=True)
        assert_close(result, reference, atol=1e-15)


@pytest.mark.parametrize("w", [0.0, 1e-12, 1e-9, 1e-4])
def test_matrix_to_quat_is_exact_near_pi_where_the_seed_formula_fails(w: float) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(20):
        v = rng.normal(size=3)
        q = np.append(v / np.linalg.norm(v) * math.sqrt(1 - w * w), w)
        result = rot.matrix_to_quat(rot.quat_to_matrix(q))
        if w == 0.0:  # q and -q are the same rotation; w is zero in both
            result = result if result @ q > 0 else -result
        assert_close(result, q, atol=1e-15)


def test_quaternion_product_composes_rotations_and_matches_scipy() -> None:
    qs = random_quaternions()
    for p, q in zip(qs[::2], qs[1::2], strict=True):
        pq = rot.quat_multiply(p, q)
        assert_close(rot.quat_to_matrix(pq), rot.quat_to_matrix(p) @ rot.quat_to_matrix(q), atol=3e-15)
        reference = (Rotation.from_quat(p) * Rotation.from_quat(q)).as_quat()  # sign differs at most
        assert_close(pq, np.sign(pq @ reference) * reference, atol=1e-15)
        assert_close(pq, rot.quat_right_matrix(q) @ p, atol=1e-16)
        assert_close(rot.quat_multiply(p, rot.quat_conjugate(p)), [0, 0, 0, 1], atol=1e-15)
        assert_close(rot.quat_to_matrix(rot.quat_conjugate(p)), rot.quat_to_matrix(p).T, atol=1e-15)
        r = np.array([0.3, -1.2, 2.0])
        assert_close(rot.quat_rotate(p, r), rot.quat_to_matrix(p) @ r, atol=1e-14)


def test_quaternion_product_unit_rule_i_times_j_is_k() -> None:
    i, j, k = np.eye(4)[0], np.eye(4)[1], np.eye(4)[2]
    np.testing.assert_array_equal(rot.quat_multiply(i, j), k)
    np.testing.assert_array_equal(rot.quat_multiply(j, i), -k)


def test_example_2_4_1_rotation_with_quaternion_multiplication() -> None:
    """Robot Dynamics lecture notes (ETH), Ex. 2.4.1: B rotated by pi/3 about x; A r = (0, 1, 0) gives B r =
    (0, 1/2, -sqrt(3)/2)."""
    s3 = math.sqrt(3.0)
    xi_AB = wxyz_to_xyzw(0.5 * np.array([s3, 1.0, 0.0, 0.0]))
    assert_close(xi_AB, rot.angle_axis_to_quat(math.pi / 3, [1.0, 0.0, 0.0]), atol=3e-16)
    xi_BA = rot.quat_conjugate(xi_AB)
    assert_close(xi_BA, wxyz_to_xyzw(0.5 * np.array([s3, -1.0, 0.0, 0.0])), atol=0.0)
    # 2 Ml(xi_BA) and 2 Mr(xi_BA^T) as printed (scalar first); ours are the same maps in (x, y, z, w) order.
    perm = np.array([1, 2, 3, 0])
    Ml_seed = 0.5 * np.array([[s3, 1, 0, 0], [-1, s3, 0, 0], [0, 0, s3, 1], [0, 0, -1, s3]])
    Mr_seed = 0.5 * np.array([[s3, -1, 0, 0], [1, s3, 0, 0], [0, 0, s3, 1], [0, 0, -1, s3]])
    assert_close(rot.quat_left_matrix(xi_BA), Ml_seed[np.ix_(perm, perm)], atol=1e-16)
    assert_close(rot.quat_right_matrix(rot.quat_conjugate(xi_BA)), Mr_seed[np.ix_(perm, perm)], atol=1e-16)
    p_A = np.array([0.0, 1.0, 0.0, 0.0])  # p(A r) = (r, 0) in (x, y, z, w)
    p_B = rot.quat_left_matrix(xi_BA) @ rot.quat_right_matrix(rot.quat_conjugate(xi_BA)) @ p_A
    assert_close(p_B, [0.0, 0.5, -s3 / 2, 0.0], atol=1e-15)
    assert_close(rot.quat_rotate(xi_BA, [0.0, 1.0, 0.0]), rot.rot_x(math.pi / 3).T @ [0, 1, 0], atol=1e-15)


@pytest.mark.parametrize("angle", [0.0, 1e-12, 1e-6, 1.0, math.pi - 1e-9, math.pi])
def test_quaternion_rotvec_angle_axis_conversions(angle: float) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for n in random_axes(rng):
        q = rot.rotvec_to_quat(angle * n)
        assert_close(q, Rotation.from_rotvec(angle * n).as_quat(), atol=6e-16)
        assert_close(q, rot.angle_axis_to_quat(angle, n), atol=0.0)
        phi = rot.quat_to_rotvec(q)
        if angle == math.pi:  # w is +-1e-16: phi and -phi are the same rotation
            phi = np.sign(phi @ n) * phi
        assert_close(phi, angle * n, atol=1e-15)
        theta, axis = rot.quat_to_angle_axis(q)
        assert abs(theta - angle) < 1e-15
        if 0.0 < angle < math.pi:
            assert_close(axis, n, atol=1e-15)
    # A negative-w quaternion is the same rotation; its rotation vector has angle <= pi.
    assert_close(rot.quat_to_rotvec(-rot.rotvec_to_quat([0.0, 0.0, 2.0])), [0.0, 0.0, 2.0], atol=1e-15)


# --- every parameterization through one entry point, and input validation --------------------------


@pytest.mark.parametrize("parameterization", rot.PARAMETERIZATIONS)
def test_parameters_round_trip(parameterization: str) -> None:
    for C in random_matrices(50):
        chi = rot.matrix_to_parameters(parameterization, C)
        assert chi.shape == (rot.parameter_size(parameterization),)
        assert_close(rot.parameters_to_matrix(parameterization, chi), C, atol=2e-15)


def test_bad_inputs_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="Euler sequence must be one of"):
        rot.euler_to_matrix([0, 0, 0], "xyx")
    with pytest.raises(ValueError, match="not a rotation matrix"):
        rot.matrix_to_quat(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="not a rotation matrix"):
        rot.matrix_to_rotvec(1.01 * np.eye(3))
    with pytest.raises(ValueError, match="normalize it with quat_normalize"):
        rot.quat_to_matrix([0.0, 0.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="must be a unit vector"):
        rot.angle_axis_to_matrix(1.0, [1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        rot.rotvec_to_matrix([1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        rot.rotvec_to_matrix([1.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="zero quaternion"):
        rot.quat_normalize(np.zeros(4))
    with pytest.raises(ValueError, match="rotation parameterization must be one of"):
        rot.parameters_to_matrix("euler_xyx", [0, 0, 0])
