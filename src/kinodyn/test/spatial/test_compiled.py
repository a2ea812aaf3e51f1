"""The compiled spatial-vector algebra (``kinodyn.spatial.compiled``) against 6x6 matrix oracles written here
with numpy: the motion and force cross products as ``ad_V`` and ``-ad_V^T``, the rigid-body inertia as its
6x6 matrix, the parent/child transforms as ``Ad_T`` and its transpose (Modern Robotics, (8.37)-(8.39),
(8.42), (8.50)-(8.52), reordered ``[linear; angular]``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.spatial import compiled as c
from kinodyn.spatial import so3_exp

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def hat(x: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def ad(V: np.ndarray) -> np.ndarray:
    """``ad_V`` for ``V = [v; w]``: ``V x W = ad_V W``."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = hat(V[3:])
    out[:3, 3:] = hat(V[:3])
    return out


def inertia_matrix(m: float, h: np.ndarray, I: np.ndarray) -> np.ndarray:  # noqa: E741
    out = np.zeros((6, 6))
    out[:3, :3] = m * np.eye(3)
    out[:3, 3:] = -hat(h)
    out[3:, :3] = hat(h)
    out[3:, 3:] = I
    return out


def child_from_parent(E: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Motion transform from the parent's to the child's coordinates, the child placed by ``(E, p)``."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = E.T
    out[:3, 3:] = -E.T @ hat(p)
    return out


def t(x: np.ndarray) -> tuple[float, ...]:
    """``x`` as a tuple of Python floats, the form the tuple helpers take (numba types them by length: Vec3,
    Mat3, Vec6)."""
    return tuple(float(a) for a in x)


def arr(x: ArrayLike) -> np.ndarray:  # a tuple helper's result
    return np.asarray(x, dtype=np.float64)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(11)


def random_inertia(rng: np.random.Generator) -> tuple[float, np.ndarray, np.ndarray]:
    m = rng.uniform(0.1, 5.0)
    A = rng.normal(size=(3, 3))
    return m, rng.normal(size=3), A @ A.T + np.eye(3)


def test_cross_products_are_ad_and_its_negative_transpose(rng: np.random.Generator) -> None:
    for _ in range(20):
        V, W, F = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
        np.testing.assert_allclose(arr(c.crm(t(V), t(W))), ad(V) @ W, rtol=0.0, atol=1e-14)
        np.testing.assert_allclose(arr(c.crf(t(V), t(F))), -ad(V).T @ F, rtol=0.0, atol=1e-14)
        out = np.empty(6)
        c.motion_cross(V, W, out)
        np.testing.assert_array_equal(out, arr(c.crm(t(V), t(W))))
        c.force_cross(V, F, out)
        np.testing.assert_array_equal(out, arr(c.crf(t(V), t(F))))
        np.testing.assert_allclose(arr(c.crm(t(V), t(V))), np.zeros(6), rtol=0.0, atol=1e-15)


def test_inertia_products_and_the_body_wrench(rng: np.random.Generator) -> None:
    for _ in range(20):
        m, h, I = random_inertia(rng)  # noqa: E741
        V, A = rng.normal(size=6), rng.normal(size=6)
        G = inertia_matrix(m, h, I)
        I9 = t(I.ravel())
        np.testing.assert_allclose(arr(c.inertia_mul(m, t(h), I9, t(V))), G @ V, rtol=0.0, atol=1e-13)
        np.testing.assert_allclose(arr(c.body_wrench(m, t(h), I9, t(V), t(A))), G @ A - ad(V).T @ G @ V,
                                   rtol=0.0, atol=1e-12)
        out = np.empty((2, 6, 6))
        c.rigid_inertia_matrix(m, t(h), I9, out, 1)
        np.testing.assert_array_equal(out[1], G)


def test_transforms_between_parent_and_child(rng: np.random.Generator) -> None:
    for _ in range(20):
        E, p = so3_exp(rng.normal(size=3)), rng.normal(size=3)
        V, F = rng.normal(size=6), rng.normal(size=6)
        X = child_from_parent(E, p)
        E9 = t(E.ravel())
        child = arr(c.motion_to_child(E9, t(p), t(V)))
        np.testing.assert_allclose(child, X @ V, rtol=0.0, atol=1e-13)
        parent = arr(c.force_to_parent(E9, t(p), t(F)))
        np.testing.assert_allclose(parent, X.T @ F, rtol=0.0, atol=1e-13)
        # the power of a wrench on a motion is the same in both frames
        np.testing.assert_allclose(parent @ V, F @ child, rtol=1e-12)
