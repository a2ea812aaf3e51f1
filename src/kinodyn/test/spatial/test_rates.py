"""Rate maps E_R between parameter derivatives and angular velocity (Robot Dynamics lecture notes (ETH), §2.5,
§2.5.1)."""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.spatial import lie, rates
from kinodyn.spatial import rotations as rot

if TYPE_CHECKING:
    from collections.abc import Iterator

assert_close = partial(np.testing.assert_allclose, rtol=0.0)
RNG_SEED = 11
SAMPLES = 30
H = 1e-6  # central differences: truncation ~H^2, rounding ~1e-16/H
FD_TOL = 2e-9


def random_axis(rng: np.random.Generator) -> np.ndarray:
    n = rng.normal(size=3)
    return n / np.linalg.norm(n)


def random_value(parameterization: str, rng: np.random.Generator) -> np.ndarray:
    """Parameters inside the extraction branch, away from singularities and branch cuts."""
    if parameterization.startswith("euler_"):
        sequence = parameterization.removeprefix("euler_")
        middle = rng.uniform(-1.4, 1.4) if sequence[0] != sequence[2] else rng.uniform(0.2, math.pi - 0.2)
        return np.array([rng.uniform(-3.0, 3.0), middle, rng.uniform(-3.0, 3.0)])
    if parameterization == "quaternion":
        return rot.rotvec_to_quat(rng.uniform(0.0, math.pi - 0.2) * random_axis(rng))
    if parameterization == "angle_axis":
        return np.append(rng.uniform(0.2, math.pi - 0.2), random_axis(rng))
    return rng.uniform(0.2, math.pi - 0.2) * random_axis(rng)


def samples(parameterization: str) -> Iterator[tuple[np.random.Generator, np.ndarray]]:
    """``SAMPLES`` draws of ``random_value`` from a generator seeded with ``RNG_SEED``, each with that
    generator (a test draws its other inputs from it between two values)."""
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(SAMPLES):
        yield rng, random_value(parameterization, rng)


def project_to_tangent(parameterization: str, value: np.ndarray, chi_dot: np.ndarray) -> np.ndarray:
    """Rates that keep the unit constraint: q . q_dot = 0, n . n_dot = 0."""
    if parameterization == "quaternion":
        return chi_dot - (chi_dot @ value) * value
    if parameterization == "angle_axis":
        n = value[1:]
        return np.append(chi_dot[0], chi_dot[1:] - (chi_dot[1:] @ n) * n)
    return chi_dot


def matrix_on_curve(parameterization: str, value: np.ndarray) -> np.ndarray:
    """C of value + t chi_dot, with the unit parts renormalized (a second-order change)."""
    if parameterization == "quaternion":
        value = value / np.linalg.norm(value)
    elif parameterization == "angle_axis":
        value = np.append(value[0], value[1:] / np.linalg.norm(value[1:]))
    return rot.parameters_to_matrix(parameterization, value)


def omega_by_finite_differences(parameterization: str, value: np.ndarray, chi_dot: np.ndarray,
                                frame: str) -> np.ndarray:
    """Robot Dynamics lecture notes (ETH), (2.72)-(2.75): [I w]x = C_dot C^T, [B w]x = C^T C_dot, from C(t +-
    H)."""
    plus = matrix_on_curve(parameterization, value + H * chi_dot)
    minus = matrix_on_curve(parameterization, value - H * chi_dot)
    relative = plus @ minus.T if frame == "world" else minus.T @ plus
    return lie.so3_log(relative) / (2 * H)


def rates_by_finite_differences(parameterization: str, value: np.ndarray, omega: np.ndarray,
                                frame: str) -> np.ndarray:
    """Rotate C at the constant angular velocity omega and differentiate the extracted parameters."""
    C = rot.parameters_to_matrix(parameterization, value)

    def chi(t: float) -> np.ndarray:
        step = lie.so3_exp(t * omega)
        return rot.matrix_to_parameters(parameterization, step @ C if frame == "world" else C @ step)

    return (chi(H) - chi(-H)) / (2 * H)


@pytest.mark.parametrize("frame", rates.FRAMES)
@pytest.mark.parametrize("parameterization", rot.PARAMETERIZATIONS)
def test_rate_maps_by_finite_differences_both_directions(parameterization: str, frame: str) -> None:
    for rng, value in samples(parameterization):
        chi_dot = project_to_tangent(parameterization, value, rng.normal(size=value.size))
        omega = rates.angular_velocity_from_rates(parameterization, value, chi_dot, frame)
        assert_close(omega, omega_by_finite_differences(parameterization, value, chi_dot, frame), atol=FD_TOL)
        omega = rng.normal(size=3)
        chi_dot = rates.rates_from_angular_velocity(parameterization, value, omega, frame)
        assert_close(chi_dot, rates_by_finite_differences(parameterization, value, omega, frame), atol=FD_TOL)


@pytest.mark.parametrize("frame", rates.FRAMES)
@pytest.mark.parametrize("parameterization", rot.PARAMETERIZATIONS)
def test_inverse_maps_invert_and_keep_the_unit_constraint(parameterization: str, frame: str) -> None:
    for rng, value in samples(parameterization):
        E = rates.rate_matrix(parameterization, value, frame)
        E_inv = rates.inverse_rate_matrix(parameterization, value, frame)
        m = rot.parameter_size(parameterization)
        assert E.shape == (3, m)
        assert E_inv.shape == (m, 3)
        assert_close(E @ E_inv, np.eye(3), atol=1e-14)
        chi_dot = project_to_tangent(parameterization, value, rng.normal(size=m))
        assert_close(E_inv @ E @ chi_dot, chi_dot, atol=1e-14)
        if parameterization == "quaternion":
            assert abs(value @ (E_inv @ rng.normal(size=3))) < 1e-15
        if parameterization == "angle_axis":
            assert abs(value[1:] @ (E_inv @ rng.normal(size=3))[1:]) < 1e-15


@pytest.mark.parametrize("parameterization", rot.PARAMETERIZATIONS)
def test_body_maps_are_the_world_maps_rotated(parameterization: str) -> None:
    """B w = C^T I w (Robot Dynamics lecture notes (ETH), (2.74))."""
    rng = np.random.default_rng(RNG_SEED)
    value = random_value(parameterization, rng)
    C = rot.parameters_to_matrix(parameterization, value)
    chi_dot = project_to_tangent(parameterization, value, rng.normal(size=value.size))
    world = rates.angular_velocity_from_rates(parameterization, value, chi_dot, "world")
    assert_close(
        rates.angular_velocity_from_rates(parameterization, value, chi_dot, "body"), C.T @ world, atol=1e-14
    )


# --- the notes' closed forms (2.86)-(2.107) -----------------------------------------------------------


def seed_euler_E(sequence: str, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(E, E^-1) as printed: ZYX (2.86)-(2.87), XYZ (2.88)-(2.89), ZYZ (2.90)-(2.91), ZXZ (2.92)-(2.93)."""
    c = np.cos(a)
    s = np.sin(a)
    if sequence == "zyx":  # a = (z, y, x)
        cz, cy, sz, sy = c[0], c[1], s[0], s[1]
        E = [[0, -sz, cy * cz], [0, cz, cy * sz], [1, 0, -sy]]
        E_inv = [[cz * sy / cy, sy * sz / cy, 1], [-sz, cz, 0], [cz / cy, sz / cy, 0]]
    elif sequence == "xyz":  # a = (x, y, z)
        cx, cy, sx, sy = c[0], c[1], s[0], s[1]
        E = [[1, 0, sy], [0, cx, -cy * sx], [0, sx, cx * cy]]
        E_inv = [[1, sx * sy / cy, -cx * sy / cy], [0, cx, sx], [0, -sx / cy, cx / cy]]
    elif sequence == "zyz":  # a = (z1, y, z2)
        c1, cy, s1, sy = c[0], c[1], s[0], s[1]
        E = [[0, -s1, c1 * sy], [0, c1, s1 * sy], [1, 0, cy]]
        E_inv = [[-cy * c1 / sy, -cy * s1 / sy, 1], [-s1, c1, 0], [c1 / sy, s1 / sy, 0]]
    else:  # zxz, a = (z1, x, z2)
        c1, cx, s1, sx = c[0], c[1], s[0], s[1]
        E = [[0, c1, s1 * sx], [0, s1, -c1 * sx], [1, 0, cx]]
        E_inv = [[-cx * s1 / sx, cx * c1 / sx, 1], [c1, s1, 0], [s1 / sx, -c1 / sx, 0]]
    return np.array(E), np.array(E_inv)


@pytest.mark.parametrize("sequence", rot.EULER_SEQUENCES)
def test_euler_rate_matrices_match_the_seed(sequence: str) -> None:
    for _, angles in samples("euler_" + sequence):
        E_seed, E_inv_seed = seed_euler_E(sequence, angles)
        assert_close(rates.rate_matrix("euler_" + sequence, angles), E_seed, atol=1e-15)
        assert_close(rates.inverse_rate_matrix("euler_" + sequence, angles), E_inv_seed, atol=1e-13)


def test_quaternion_rate_matrices_match_the_seed() -> None:
    """(2.94)-(2.99): w = 2 H(xi) xi_dot, H = [[-x, w, -z, y], [-y, z, w, -x], [-z, -y, x, w]] for
    xi = (w, x, y, z); body (derived, not in the notes): B w = 2 [w I - [v]x, -v] xi_dot in (x, y, z, w)
    order."""
    for _, q in samples("quaternion"):
        x, y, z, w = q
        H_seed = np.array([[-x, w, -z, y], [-y, z, w, -x], [-z, -y, x, w]])[
            :, [1, 2, 3, 0]
        ]  # columns to xyzw
        assert_close(rates.rate_matrix("quaternion", q), 2 * H_seed, atol=0.0)
        assert_close(rates.inverse_rate_matrix("quaternion", q), 0.5 * H_seed.T, atol=0.0)
        body = 2 * np.column_stack([w * np.eye(3) - rot.skew(q[:3]), -q[:3]])
        assert_close(rates.rate_matrix("quaternion", q, "body"), body, atol=1e-15)
        assert_close(H_seed @ H_seed.T, np.eye(3), atol=1e-15)
        assert_close(H_seed @ q, np.zeros(3), atol=1e-16)


def test_angle_axis_rate_matrices_match_the_seed() -> None:
    """(2.102) E = [n, sin t I + (1 - cos t)[n]x];
    (2.103) E^-1 = [n^T; -sin t / (2 (1 - cos t)) [n]x^2 - [n]x / 2]."""
    for _, value in samples("angle_axis"):
        t, n = value[0], value[1:]
        K = rot.skew(n)
        E = np.column_stack([n, math.sin(t) * np.eye(3) + (1 - math.cos(t)) * K])
        E_inv = np.vstack([n, -0.5 * math.sin(t) / (1 - math.cos(t)) * K @ K - 0.5 * K])
        assert_close(rates.rate_matrix("angle_axis", value), E, atol=1e-15)
        assert_close(rates.inverse_rate_matrix("angle_axis", value), E_inv, atol=4e-15)


def test_rotvec_rate_matrices_match_the_seed() -> None:
    """(2.106) and (2.107) as printed; the body map is the right Jacobian."""
    for _, phi in samples("rotvec"):
        t, K = np.linalg.norm(phi), rot.skew(phi)
        E = np.eye(3) + K * (1 - math.cos(t)) / t**2 + K @ K * (t - math.sin(t)) / t**3
        E_inv = np.eye(3) - 0.5 * K + K @ K / t**2 * (1 - t / 2 * math.sin(t) / (1 - math.cos(t)))
        assert_close(rates.rate_matrix("rotvec", phi), E, atol=1e-15)
        # (the printed form divides by 1 - cos t: its own rounding is a few units in the last place)
        assert_close(rates.inverse_rate_matrix("rotvec", phi), E_inv, atol=1e-14)
        assert_close(rates.rate_matrix("rotvec", phi, "body"), lie.so3_right_jacobian(phi), atol=1e-15)


def test_example_2_5_1_angular_velocity_from_rotation_matrix() -> None:
    """C_AB(t) = Cx(alpha(t)): [A w]x = C_dot C^T = [[0,0,0],[0,0,-a_dot],[0,a_dot,0]], A w = (a_dot,0,0)."""
    alpha, alpha_dot = 0.7, -1.3
    c, s = math.cos(alpha), math.sin(alpha)
    C_dot = alpha_dot * np.array([[0, 0, 0], [0, -s, -c], [0, c, -s]])  # (2.79)
    W = C_dot @ rot.rot_x(alpha).T
    assert_close(W, [[0, 0, 0], [0, 0, -alpha_dot], [0, alpha_dot, 0]], atol=1e-15)
    assert_close(rot.unskew(W), [alpha_dot, 0, 0], atol=1e-15)
    assert_close(
        rates.angular_velocity_from_rates("euler_xyz", [alpha, 0, 0], [alpha_dot, 0, 0]),
        [alpha_dot, 0, 0],
        atol=0.0,
    )
    assert_close(
        rates.angular_velocity_from_rates("euler_zyx", [0, 0, alpha], [0, 0, alpha_dot]),
        [alpha_dot, 0, 0],
        atol=0.0,
    )
    assert_close(
        rates.angular_velocity_from_rates("rotvec", [alpha, 0, 0], [alpha_dot, 0, 0]),
        [alpha_dot, 0, 0],
        atol=1e-16,
    )


# --- singular cases -----------------------------------------------------------------------------------


@pytest.mark.parametrize("sequence", rot.EULER_SEQUENCES)
def test_euler_inverse_raises_at_gimbal_lock_and_works_near_it(sequence: str) -> None:
    locks = [-math.pi / 2, math.pi / 2] if sequence[0] != sequence[2] else [0.0, math.pi]
    for lock in locks:
        with pytest.raises(ValueError, match="gimbal lock"):
            rates.inverse_rate_matrix("euler_" + sequence, [0.3, lock, -0.2])
        with pytest.raises(ValueError, match="gimbal lock"):
            rates.rates_from_angular_velocity("euler_" + sequence, [0.3, lock, -0.2], [1.0, 0.0, 0.0], "body")
        E = rates.rate_matrix("euler_" + sequence, [0.3, lock, -0.2])  # the forward map is defined
        assert abs(np.linalg.det(E)) < 1e-15
        near = [0.3, lock + (1e-6 if lock <= 0.0 else -1e-6), -0.2]
        E = rates.rate_matrix("euler_" + sequence, near)
        assert_close(E @ rates.inverse_rate_matrix("euler_" + sequence, near), np.eye(3), atol=1e-9)


def test_angle_axis_inverse_raises_at_zero_angle() -> None:
    for angle in (0.0, 1e-12, 2 * math.pi):
        with pytest.raises(ValueError, match="angle-axis rates are undefined"):
            rates.inverse_rate_matrix("angle_axis", [angle, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("angle", [0.0, 1e-12, 1e-6, 1e-3])
def test_rotvec_maps_are_regular_at_small_angles(angle: float) -> None:
    """|phi| -> 0 is removable. Oracles: the power series J_l = sum K^k/(k+1)!, J_l^-1 = sum B_k/k! K^k
    (Bernoulli numbers), and finite differences."""
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(10):
        phi = angle * random_axis(rng)
        K = rot.skew(phi)
        powers = [np.linalg.matrix_power(K, k) for k in range(7)]
        series = sum(P / math.factorial(k + 1) for k, P in enumerate(powers))
        inverse_series = np.eye(3) - K / 2 + powers[2] / 12 - powers[4] / 720 + powers[6] / 30240
        assert_close(rates.rate_matrix("rotvec", phi), series, atol=3e-16)
        assert_close(rates.inverse_rate_matrix("rotvec", phi), inverse_series, atol=3e-16)
        phi_dot = rng.normal(size=3)
        for frame in rates.FRAMES:
            omega = rates.angular_velocity_from_rates("rotvec", phi, phi_dot, frame)
            assert_close(omega, omega_by_finite_differences("rotvec", phi, phi_dot, frame), atol=FD_TOL)


def test_rotvec_inverse_raises_at_two_pi() -> None:
    with pytest.raises(ValueError, match="singular"):
        rates.inverse_rate_matrix("rotvec", [2 * math.pi, 0.0, 0.0])


@pytest.mark.parametrize("angle", [0.0, 1e-12, math.pi - 1e-9, math.pi])
def test_quaternion_maps_are_regular_everywhere(angle: float) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(10):
        q = rot.rotvec_to_quat(angle * random_axis(rng))
        q_dot = project_to_tangent("quaternion", q, rng.normal(size=4))
        for frame in rates.FRAMES:
            omega = rates.angular_velocity_from_rates("quaternion", q, q_dot, frame)
            assert_close(omega, omega_by_finite_differences("quaternion", q, q_dot, frame), atol=FD_TOL)
            E = rates.rate_matrix("quaternion", q, frame)
            assert_close(E @ rates.inverse_rate_matrix("quaternion", q, frame), np.eye(3), atol=5e-15)


def test_bad_inputs_raise() -> None:
    with pytest.raises(ValueError, match="frame must be one of"):
        rates.rate_matrix("rotvec", [0.1, 0.2, 0.3], "inertial")
    with pytest.raises(ValueError, match="normalize"):
        rates.rate_matrix("quaternion", [0.0, 0.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="unit vector"):
        rates.rate_matrix("angle_axis", [1.0, 1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match=r"rates must have shape \(4,\)"):
        rates.angular_velocity_from_rates("quaternion", [0.0, 0.0, 0.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="parameterization must be one of"):
        rates.rate_matrix("rodrigues", [0.1, 0.2, 0.3])
