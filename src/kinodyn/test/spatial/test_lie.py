"""SO(3)/SE(3) exp and log, SO(3) Jacobians, transforms (Robot Dynamics lecture notes (ETH), §2.5.1, §2.6;
Rotations and inverse kinematics (Fredriksson), §2.6-2.7)."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
from kinodyn.spatial import lie
from kinodyn.spatial.rotations import skew
from scipy.linalg import expm

assert_close = partial(np.testing.assert_allclose, rtol=0.0)
RNG_SEED = 7
# Rotation angles on both sides of every branch: series/direct (lie.SMALL_ANGLE), pi/2 (log), near pi.
ANGLES = [0.0, 1e-12, 1e-6, 0.0099, 0.0101, 0.5, math.pi / 2 + 1e-9, 2.5, math.pi - 1e-9]


def random_axis(rng: np.random.Generator) -> np.ndarray:
    n = rng.normal(size=3)
    return n / np.linalg.norm(n)


def twist_matrix(xi: np.ndarray) -> np.ndarray:
    """``[[ [w]x, v ], [0, 0]]`` for ``xi = [v; w]``."""
    X = np.zeros((4, 4))
    X[:3, :3] = skew(xi[3:])
    X[:3, 3] = xi[:3]
    return X


def left_jacobian_by_quadrature(phi: np.ndarray) -> np.ndarray:
    """Independent oracle: ``J_l(phi) = integral_0^1 exp(s [phi]x) ds`` (Gauss-Legendre, scipy expm)."""
    nodes, weights = np.polynomial.legendre.leggauss(24)
    return sum(0.5 * w * expm(0.5 * (x + 1.0) * skew(phi)) for x, w in zip(nodes, weights, strict=True))


@pytest.mark.parametrize("angle", ANGLES)
def test_so3_exp_is_the_matrix_exponential_and_log_inverts_it(angle: float) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(10):
        phi = angle * random_axis(rng)
        C = lie.so3_exp(phi)
        assert_close(C, expm(skew(phi)), atol=4e-15)
        assert_close(lie.so3_log(C), phi, atol=2e-15)
        assert_close(lie.so3_exp(-phi), C.T, atol=1e-15)


@pytest.mark.parametrize("angle", [*ANGLES, 4.0, 2 * math.pi - 0.1])
def test_so3_jacobians_match_quadrature_and_their_inverses(angle: float) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(5):
        phi = angle * random_axis(rng)
        J_l = lie.so3_left_jacobian(phi)
        assert_close(J_l, left_jacobian_by_quadrature(phi), atol=4e-15)
        assert_close(lie.so3_right_jacobian(phi), lie.so3_left_jacobian(-phi), atol=1e-16)
        assert_close(lie.so3_left_jacobian_inverse(phi) @ J_l, np.eye(3), atol=1e-13 if angle > 6 else 2e-15)
        assert_close(
            lie.so3_right_jacobian_inverse(phi) @ lie.so3_right_jacobian(phi),
            np.eye(3),
            atol=1e-13 if angle > 6 else 2e-15,
        )


@pytest.mark.parametrize("angle", [1e-3, 0.5, 2.5, 3.0])
def test_so3_jacobians_by_finite_differences(angle: float) -> None:
    """``exp(phi + h d) = exp(h J_l d) exp(phi) = exp(phi) exp(h J_r d)`` to first order in h."""
    rng = np.random.default_rng(RNG_SEED)
    h = 1e-6
    for _ in range(5):
        phi, d = angle * random_axis(rng), rng.normal(size=3)
        plus, minus = lie.so3_exp(phi + h * d), lie.so3_exp(phi - h * d)
        assert_close(lie.so3_log(plus @ minus.T) / (2 * h), lie.so3_left_jacobian(phi) @ d, atol=1e-9)
        assert_close(lie.so3_log(minus.T @ plus) / (2 * h), lie.so3_right_jacobian(phi) @ d, atol=1e-9)


def test_so3_jacobian_inverse_is_singular_at_two_pi() -> None:
    with pytest.raises(ValueError, match="singular at rotation angle"):
        lie.so3_left_jacobian_inverse([0.0, 2 * math.pi, 0.0])


def test_small_angle_series_agree_with_the_closed_forms_at_the_switch() -> None:
    """Just below and above lie.SMALL_ANGLE the series and the closed forms agree to rounding."""
    n = np.array([0.6, -0.8, 0.0])
    below, above = lie.SMALL_ANGLE * (1 - 1e-14), lie.SMALL_ANGLE * (1 + 1e-14)
    for f in (lie.so3_left_jacobian, lie.so3_left_jacobian_inverse):
        assert_close(f(below * n), f(above * n), atol=3e-16)


@pytest.mark.parametrize("angle", ANGLES)
def test_se3_exp_is_the_matrix_exponential_and_log_inverts_it(angle: float) -> None:
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(10):
        xi = np.concatenate([rng.normal(size=3), angle * random_axis(rng)])
        T = lie.se3_exp(xi)
        assert_close(T, expm(twist_matrix(xi)), atol=1e-14)
        assert_close(lie.se3_log(T), xi, atol=1e-14)
        assert_close(lie.se3_exp(-xi), lie.inverse_transform(T), atol=1e-14)


def test_se3_exp_of_a_pure_translation_and_a_pure_rotation() -> None:
    assert_close(
        lie.se3_exp([1.0, -2.0, 3.0, 0.0, 0.0, 0.0]),
        lie.homogeneous_transform(np.eye(3), [1, -2, 3]),
        atol=0.0,
    )
    assert_close(lie.se3_exp([0.0, 0.0, 0.0, 0.0, 0.0, 0.4])[:3, :3], expm(skew([0.0, 0.0, 0.4])), atol=1e-16)
    # Screw about z through the origin: v = h w (pitch h) moves h * angle along z.
    assert_close(lie.se3_exp([0.0, 0.0, 0.3 * 2.0, 0.0, 0.0, 2.0])[:3, 3], [0.0, 0.0, 0.6], atol=1e-15)


def test_example_2_6_1_homogeneous_transformation() -> None:
    """Robot Dynamics lecture notes (ETH), Ex. 2.6.1: C_AB = Cx(pi/2), A r_AB = (0, 3, 1), B r_BP = (0, 1, 1)
    give A r_AP = (0, 2, 2)."""
    C_AB = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    assert_close(C_AB, expm(skew([math.pi / 2, 0.0, 0.0])), atol=1e-15)
    T_AB = lie.homogeneous_transform(C_AB, [0.0, 3.0, 1.0])
    assert_close(T_AB, [[1, 0, 0, 0], [0, 0, -1, 3], [0, 1, 0, 1], [0, 0, 0, 1]], atol=0.0)
    assert_close(T_AB @ [0.0, 1.0, 1.0, 1.0], [0.0, 2.0, 2.0, 1.0], atol=0.0)
    T_BA = lie.inverse_transform(T_AB)
    assert_close(T_BA, [[1, 0, 0, 0], [0, 0, 1, -1], [0, -1, 0, 3], [0, 0, 0, 1]], atol=0.0)
    assert_close(T_BA @ T_AB, np.eye(4), atol=0.0)


def test_bad_transforms_raise() -> None:
    with pytest.raises(ValueError, match="last row"):
        lie.se3_log(np.ones((4, 4)))
    with pytest.raises(ValueError, match="shape"):
        lie.inverse_transform(np.eye(3))
    with pytest.raises(ValueError, match="not a rotation matrix"):
        lie.homogeneous_transform(2 * np.eye(3), [0.0, 0.0, 0.0])
