"""Where an estimator's odometry frame lies in the simulator's world, for drawing both in one scene.

REP-105's ``odom`` starts where the estimate started (kinodyn's estimator: the base at the origin, zero yaw),
the simulator's ``world`` has the ground at z = 0. Nothing publishes ``world -> odom``, so the viewer places
``odom`` once where the true base was when the estimate began: the two base poses coincide in position and
heading. Both frames are gravity-aligned, so the rotation is about z only.
"""

from __future__ import annotations

import math

import numpy as np


def heading(T: np.ndarray) -> float:
    """Yaw [rad] of a pose: the direction of its x axis projected on the horizontal plane."""
    return math.atan2(T[1, 0], T[0, 0])


def heading_anchor(T_world_base: np.ndarray, T_odom_base: np.ndarray) -> np.ndarray:
    """``T_world_odom`` that puts ``T_odom_base``'s position and heading on ``T_world_base``'s."""
    yaw = heading(T_world_base) - heading(T_odom_base)
    c, s = math.cos(yaw), math.sin(yaw)
    T = np.eye(4)
    T[:3, :3] = [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    T[:3, 3] = T_world_base[:3, 3] - T[:3, :3] @ T_odom_base[:3, 3]
    return T
