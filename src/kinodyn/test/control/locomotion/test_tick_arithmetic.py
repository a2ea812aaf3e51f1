"""The locomotion tick's scalar arithmetic (Python floats) against straightforward numpy oracles: the same
numbers to the last bit, and the input checks' fast paths refusing and accepting what the full checks do."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.locomotion import LocomotionController
from kinodyn.control.locomotion.controller import _yaw
from kinodyn.control.locomotion.swing import swing_point
from kinodyn.spatial import quat_to_matrix

import kinodyn as kd

URDFS = Path(__file__).resolve().parents[5] / "urdf"
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
NOMINAL = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])


def test_heading_is_the_rotation_matrix_one_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    for _ in range(2000):
        quaternion = rng.normal(size=4)
        quaternion *= (1.0 + rng.uniform(-9e-4, 9e-4)) / np.linalg.norm(quaternion)  # accepted by update
        norm = math.sqrt(float(quaternion @ quaternion))
        x, y, z, w = quaternion / norm  # the matrix of (2.54), numpy's arithmetic
        C = np.array([[1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w)],
                      [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z)]])
        heading = _yaw(quaternion, norm)
        assert heading == math.atan2(C[1, 0], C[0, 0])
        C_ref = quat_to_matrix(quaternion / norm)  # a second source, to rounding
        assert abs(heading - math.atan2(C_ref[1, 0], C_ref[0, 0])) < 1e-12


def test_swing_point_is_the_vector_formula_bit_for_bit() -> None:
    rng = np.random.default_rng(4)
    out = np.zeros((3, 3))
    for _ in range(2000):
        start, end = rng.normal(size=3), rng.normal(size=3)
        s, duration, height = rng.uniform(-0.2, 1.2), rng.uniform(0.05, 0.5), rng.uniform(0.0, 0.2)
        swing_point(s, duration, start, end, height, out)
        u = min(max(s, 0.0), 1.0)
        m, dm, ddm = u**3 * (10.0 - 15.0 * u + 6.0 * u * u), 30.0 * u * u * (1.0 - u) ** 2, \
            60.0 * u * (1.0 - u) * (1.0 - 2.0 * u)
        r = 1.0 - u
        b, db, ddb = 64.0 * u**3 * r**3, 192.0 * u * u * r * r * (r - u), \
            384.0 * u * r * (r * r - 3.0 * u * r + u * u)
        rate = 1.0 / duration
        delta = end - start
        lift = np.array([0.0, 0.0, 1.0])
        assert np.array_equal(out[0], start + delta * m + lift * (height * b))
        assert np.array_equal(out[1], delta * dm * rate + lift * (height * db * rate))
        assert np.array_equal(out[2], delta * ddm * rate * rate + lift * (height * ddb * rate * rate))
        if 0.0 < s < 1.0:  # the velocity row is the position's derivative (central difference)
            eps = 1e-6
            ahead, behind = np.zeros((3, 3)), np.zeros((3, 3))
            swing_point(s + eps, duration, start, end, height, ahead)
            swing_point(s - eps, duration, start, end, height, behind)
            np.testing.assert_allclose(out[1], (ahead[0] - behind[0]) / (2 * eps * duration), atol=1e-5)


@pytest.fixture(scope="module")
def controller() -> LocomotionController:
    return LocomotionController(kd.Model.from_urdf(URDFS / "quadruped.urdf", floating_base=True), FEET,
                                NOMINAL)


def test_state_check_by_sum_refuses_non_finite_takes_large_finite(controller: LocomotionController) -> None:
    m = controller.model
    q, v = m.neutral(), np.zeros(m.nv)
    q[7], q[8] = 1e308, 1e308  # finite, their sum is not: the entries are looked at one by one
    with np.errstate(over="ignore"):  # (the sum's overflow)
        # _check_state is update()'s first step, called directly: through update() a finite state whose sum
        # overflows would go on into the tick; here only the check's fast path is judged
        checked_q, checked_v, norm = controller._check_state(q, v)  # noqa: SLF001
    assert np.array_equal(checked_q, q)
    assert np.array_equal(checked_v, v)
    assert norm == 1.0
    for k, bad in ((7, math.nan), (8, math.inf), (0, -math.inf)):
        wrong = q.copy()
        wrong[k] = bad
        with pytest.raises(ValueError, match="finite"):
            controller._check_state(wrong, v)  # noqa: SLF001  (update()'s state check alone)
        with pytest.raises(ValueError, match="finite"):
            controller._check_state(m.neutral(), np.r_[v[:-1], bad])  # noqa: SLF001  (update()'s state check alone)


def test_command_check_by_sum(controller: LocomotionController) -> None:
    m = controller.model
    q = m.neutral()
    q[7:] = NOMINAL
    q[2] = 0.5252 - 0.03
    with np.errstate(over="ignore"):  # (the sum's overflow)
        out = controller.update(q, np.zeros(m.nv), 0.0, (1e308, 1e308, 0.0))  # finite: clipped, not refused
    assert out.ok
    assert np.isfinite(out.command).all()
    for bad in ((math.nan, 0.0, 0.0), (0.0, math.inf, 0.0), (0.0, 0.0)):
        with pytest.raises(ValueError, match="velocity command"):
            controller.update(q, np.zeros(m.nv), 0.002, bad)
