"""Swing trajectory (boundary conditions, derivatives by finite differences) and footholds (hand-computed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kinodyn.control.locomotion import SwingTrajectory, arc_displacement, raibert_foothold

START, END = np.array([0.1, -0.2, 0.03]), np.array([0.25, -0.15, 0.05])


def test_swing_boundary_conditions_and_apex() -> None:
    swing = SwingTrajectory(START, END, duration=0.2, height=0.08)
    for s, point in ((0.0, START), (1.0, END), (-0.5, START), (1.5, END)):
        r = swing.sample(s)
        np.testing.assert_allclose(r[0], point, atol=1e-15)
        np.testing.assert_allclose(r[1:], 0.0, atol=1e-12)  # zero velocity and acceleration at both ends
    mid = swing.sample(0.5)
    np.testing.assert_allclose(mid[0], np.r_[(START[:2] + END[:2]) / 2, (START[2] + END[2]) / 2 + 0.08],
                               atol=1e-15)
    np.testing.assert_allclose(mid[1, :2], 1.875 * (END[:2] - START[:2]) / 0.2, atol=1e-12)  # 15/8 mean speed
    assert abs(mid[1, 2] - 1.875 * 0.02 / 0.2) < 1e-12  # the bump's slope is zero at its top


@pytest.mark.parametrize("s", [0.05, 0.3, 0.5, 0.77, 0.95])
def test_swing_derivatives_match_finite_differences(s: float) -> None:
    duration, h = 0.2, 1e-6
    swing = SwingTrajectory(START, END, duration, height=0.08)

    def at(time: float) -> np.ndarray:
        return swing.sample(time / duration).copy()

    t = s * duration
    r, before, after = at(t), at(t - h), at(t + h)
    np.testing.assert_allclose(r[1], (after[0] - before[0]) / (2 * h), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(r[2], (after[1] - before[1]) / (2 * h), rtol=1e-6, atol=1e-5)


def test_swing_validation() -> None:
    with pytest.raises(ValueError, match="duration"):
        SwingTrajectory(START, END, 0.0, 0.08)
    with pytest.raises(ValueError, match="height"):
        SwingTrajectory(START, END, 0.2, -0.01)
    with pytest.raises(ValueError, match="finite"):
        SwingTrajectory(START, [0.0, math.nan, 0.0], 0.2, 0.08)


G, Z0 = 9.81, 0.5


def foothold(base: tuple[float, float] = (1.0, 2.0), yaw: float = 0.0,
             hip: tuple[float, float] = (0.25, 0.2), velocity: tuple[float, float] = (0.5, 0.0),
             command: tuple[float, float, float] = (0.5, 0.0, 0.0), tau: float = 0.3, gain: float = 1.0,
             max_offset: float = 1.0) -> np.ndarray:
    return raibert_foothold(np.array(base), yaw, np.array(hip), np.array(velocity), np.array(command), tau,
                            Z0, G, gain, max_offset)


def test_foothold_hand_computed_cases() -> None:
    # on command: the hip 0.3 s ahead at 0.5 m/s, no feedback
    np.testing.assert_allclose(foothold(), [1.0 + 0.15 + 0.25, 2.2], atol=1e-15)
    # 0.2 m/s too fast: the capture point sqrt(0.5 / 9.81) * 0.2 = 0.045152 m further ahead
    np.testing.assert_allclose(foothold(velocity=(0.7, 0.0)), [1.4 + 0.2 * math.sqrt(Z0 / G), 2.2],
                               atol=1e-15)
    # half the gain, half the correction; the correction clipped to max_offset
    np.testing.assert_allclose(foothold(velocity=(0.7, 0.0), gain=0.5), [1.4 + 0.1 * math.sqrt(Z0 / G), 2.2],
                               atol=1e-15)
    np.testing.assert_allclose(foothold(velocity=(1.5, 0.0), max_offset=0.1), [1.5, 2.2], atol=1e-15)
    # heading pi/2: the body's x is the world's y; a base-frame hip (0.25, 0.2) sits at world (-0.2, 0.25)
    np.testing.assert_allclose(foothold(yaw=math.pi / 2, velocity=(0.0, 0.5)), [1.0 - 0.2, 2.0 + 0.15 + 0.25],
                               atol=1e-12)
    # standing still, turning at 1 rad/s for tau: the hip turns about the base by tau rad
    c, s = math.cos(0.3), math.sin(0.3)
    np.testing.assert_allclose(foothold(velocity=(0.0, 0.0), command=(0.0, 0.0, 1.0)),
                               [1.0 + c * 0.25 - s * 0.2, 2.0 + s * 0.25 + c * 0.2], atol=1e-12)
    # moving and turning: the arc plus the pendulum's centripetal offset (z0 / g) (v x w) = (0, -0.5 z0 / g)
    dx, dy = math.sin(0.3) * 0.5, (1.0 - math.cos(0.3)) * 0.5
    expected = [1.0 + dx + c * 0.25 - s * 0.2, 2.0 + dy + s * 0.25 + c * 0.2 - 0.5 * Z0 / G]
    np.testing.assert_allclose(foothold(velocity=(0.5, 0.0), command=(0.5, 0.0, 1.0)), expected, atol=1e-12)


@pytest.mark.parametrize("wz", [0.0, 1e-12, 0.6, -2.0])
def test_arc_displacement_integrates_the_body_velocity(wz: float) -> None:
    vx, vy, tau, n = 0.4, -0.15, 0.35, 20000
    t = (np.arange(n) + 0.5) * tau / n  # midpoint rule on the heading-frame velocity turned by wz t
    x = np.sum(np.cos(wz * t) * vx - np.sin(wz * t) * vy) * tau / n
    y = np.sum(np.sin(wz * t) * vx + np.cos(wz * t) * vy) * tau / n
    np.testing.assert_allclose(arc_displacement(vx, vy, wz, tau), [x, y], atol=1e-9)
