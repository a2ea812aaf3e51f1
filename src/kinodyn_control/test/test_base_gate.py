"""The wbc's base-state gate (wbc/base_gate.py) against its rules computed another way.

Random base states around a reference (speeds, rates, position and orientation jumps on both sides of each
bound, time steps up to twice ``base_state_max_age``): the gate's verdict is the first broken rule of the
module doc in its order (speed, rate, position, angle), with the norms from numpy and the rotation angle from
the relative quaternion's vector and scalar parts (``2 atan2(|v|, |w|)``) instead of the gate's
``2 acos(|q1 . q2|)``. States within 1e-9 of a bound are left out (the two formulas round differently there).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from kinodyn_common.stamps import NS
from kinodyn_control.wbc.base_gate import BaseStateGate
from kinodyn_control.wbc.legged import LeggedSettings

SETTINGS = LeggedSettings(feet=("a", "b", "c"), posture=(0.0,))
MAX_AGE = 0.05
EDGE = 1e-9


def relative_angle(q1: np.ndarray, q2: np.ndarray) -> float:
    """The rotation angle between unit quaternions (x, y, z, w), from the product conj(q1) q2."""
    v1, w1, v2, w2 = -q1[:3], q1[3], q2[:3], q2[3]
    v = w1 * v2 + w2 * v1 + np.cross(v1, v2)
    w = w1 * w2 - v1 @ v2
    return 2.0 * math.atan2(float(np.linalg.norm(v)), abs(float(w)))


def expected(q7: np.ndarray, v6: np.ndarray, last: np.ndarray, dt: float) -> tuple[str, float]:
    """The first rule broken ('' for none) and the distance of the nearest bound (module doc)."""
    s = SETTINGS
    dt = min(abs(dt), MAX_AGE)
    checks = (
        ("speed", float(np.linalg.norm(v6[:3])), s.base_max_speed),
        ("rate", float(np.linalg.norm(v6[3:])), s.base_max_rate),
        ("position", float(np.linalg.norm(q7[:3] - last[:3])), s.base_jump_position + s.base_max_speed * dt),
        ("angle", relative_angle(last[3:], q7[3:]), s.base_jump_angle + s.base_max_rate * dt),
    )
    margin = min(abs(value - bound) for _, value, bound in checks)
    return next((cause for cause, value, bound in checks if value > bound), ""), margin


def random_quaternion(rng: np.random.Generator, around: np.ndarray, angle: float) -> np.ndarray:
    """A unit quaternion ``angle`` rad (about a random axis) from ``around``."""
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    d = np.r_[math.sin(angle / 2) * axis, math.cos(angle / 2)]
    x1, y1, z1, w1 = around
    x2, y2, z2, w2 = d
    q = np.array([w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                  w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2])
    return q / np.linalg.norm(q)


@pytest.mark.parametrize("seed", range(5))
def test_the_gate_refuses_exactly_what_breaks_a_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = SETTINGS
    causes = set()
    for _ in range(400):
        gate = BaseStateGate()
        last = np.r_[rng.normal(size=3), random_quaternion(rng, np.array([0.0, 0.0, 0.0, 1.0]), 1.0)]
        assert not gate.check(0, last, np.zeros(6), s, MAX_AGE).refused  # the first one is the reference
        dt = round(rng.uniform(0.0, 2 * MAX_AGE) * NS) / NS  # a stamp in whole nanoseconds
        # each quantity drawn around its bound (0.5 to 1.5 times it)
        step = rng.normal(size=3)
        step *= rng.uniform(0.5, 1.5) * (s.base_jump_position + s.base_max_speed * min(dt, MAX_AGE)) \
            / np.linalg.norm(step)
        angle = rng.uniform(0.5, 1.5) * (s.base_jump_angle + s.base_max_rate * min(dt, MAX_AGE))
        q7 = np.r_[last[:3] + step, random_quaternion(rng, last[3:], angle)]
        v6 = np.r_[rng.normal(size=3), rng.normal(size=3)]
        v6[:3] *= rng.uniform(0.0, 1.2) * s.base_max_speed / np.linalg.norm(v6[:3])
        v6[3:] *= rng.uniform(0.0, 1.2) * s.base_max_rate / np.linalg.norm(v6[3:])
        cause, margin = expected(q7, v6, last, dt)
        if margin < EDGE:
            continue
        verdict = gate.check(round(dt * NS), q7, v6, s, MAX_AGE)
        assert verdict.cause == cause, (verdict, cause)
        assert verdict.refused == bool(cause)
        causes.add(cause)
        if cause:  # a refused state is not the reference: the last one still is
            assert not gate.check(round(dt * NS), last, np.zeros(6), s, MAX_AGE).refused
    assert causes == {"", "speed", "rate", "position", "angle"}  # every rule was exercised
