"""heading_anchor places odom in world so that the estimated base pose lands on the true one (position and
heading), with a rotation about the vertical only (kinodyn_tools/viewer/anchor.py)."""

from __future__ import annotations

import math

import numpy as np
from kinodyn_tools.viewer.anchor import heading, heading_anchor
from scipy.spatial.transform import Rotation


def _pose(rng: np.random.Generator, yaw: float) -> np.ndarray:
    T = np.eye(4)
    roll, pitch = rng.uniform(-0.3, 0.3, 2)
    T[:3, :3] = Rotation.from_euler("ZYX", [yaw, pitch, roll]).as_matrix()
    T[:3, 3] = rng.uniform(-2.0, 2.0, 3)
    return T


def test_heading_anchor_puts_the_estimated_base_on_the_true_one() -> None:
    rng = np.random.default_rng(3)
    for true_yaw, estimated_yaw in [(0.0, 0.0), (1.2, 0.0), (-2.9, 0.4), (3.0, -3.0)]:
        T_world_base, T_odom_base = _pose(rng, true_yaw), _pose(rng, estimated_yaw)
        A = heading_anchor(T_world_base, T_odom_base)
        placed = A @ T_odom_base
        np.testing.assert_allclose(placed[:3, 3], T_world_base[:3, 3], atol=1e-12)
        turn = (heading(placed) - heading(T_world_base) + math.pi) % (2 * math.pi) - math.pi
        assert abs(turn) < 1e-9
        np.testing.assert_allclose(A[:3, 2], [0.0, 0.0, 1.0], atol=1e-15)  # about z only: up stays up
        np.testing.assert_allclose(A[:3, :3] @ A[:3, :3].T, np.eye(3), atol=1e-12)
        # the heading is scipy's ZYX yaw
        scipy_yaw = Rotation.from_matrix(T_world_base[:3, :3]).as_euler("ZYX")[0]
        assert abs(heading(T_world_base) - scipy_yaw) < 1e-9
