"""The two-beat gaits' duty and the swing fitted to the legs' joint speeds (``locomotion.timing``): the swing
foot's peak speed against finite differences of the swing's positions, the joint-limited foot speed against
the forward kinematics, and the controller's fit on the project quadruped and Unitree's A1. No simulation."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import acceptance_matrix as matrix
from kinodyn.control.locomotion import LocomotionController, LocomotionParameters
from kinodyn.control.locomotion.swing import swing_point
from kinodyn.control.locomotion.timing import fit_swing, foot_speed_limit, swing_speed
from wbc_scenarios import FEET, NOMINAL_JOINTS, QUADRUPED_URDF

import kinodyn as kd

if TYPE_CHECKING:
    from collections.abc import Callable

A1 = matrix.VARIANT["unitree_a1"]


def _quadruped(params: LocomotionParameters | None = None) -> LocomotionController:
    model = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
    return LocomotionController(model, FEET, NOMINAL_JOINTS, params)


@pytest.mark.parametrize(("speed", "duty", "ramp", "height"),
                         [(0.5, 0.6, 0.0, 0.08), (1.5, 0.52, 0.3, 0.05), (1.0, 0.55, 0.1, 0.0),
                          (0.0, 0.6, 0.0, 0.05)])
def test_swing_speed_is_the_peak_of_the_sampled_swing_relative_to_the_hip(
        speed: float, duty: float, ramp: float, height: float) -> None:
    """One stride ``v T`` in the swing time ``(1 - d) T``, the hip moving at ``v``: the peak of the
    position's central differences (not the swing's velocity rows) minus the hip's velocity."""
    period = 0.5
    duration = (1.0 - duty) * period
    start, end = np.zeros(3), np.array([speed * period, 0.0, 0.0])
    out = np.empty((3, 3))
    h = 1e-7
    peak = 0.0
    for s in np.linspace(0.0, 1.0, 2001):
        positions = []
        for ds in (-h, h):
            swing_point(float(s) + ds, duration, start, end, height, out, ramp)
            positions.append(out[0].copy())
        velocity = (positions[1] - positions[0]) / (2.0 * h * duration) if 0.0 < s < 1.0 else np.zeros(3)
        peak = max(peak, float(np.linalg.norm(velocity - [speed, 0.0, 0.0])))
    assert swing_speed(speed, duty, ramp, height, period) == pytest.approx(peak, rel=2e-3)


@pytest.mark.parametrize("robot", ["quadruped", "unitree_a1"])
def test_the_foot_speed_limit_is_reached_with_one_joint_at_its_velocity_limit(robot: str) -> None:
    """At the limit, the least-norm joint velocities of the worst foot and direction put one joint exactly at
    its URDF velocity limit and none beyond, and move the foot at that speed (finite differences of the
    foot's placement: the forward kinematics, not the Jacobian)."""
    urdf, feet, stance = (QUADRUPED_URDF, FEET, NOMINAL_JOINTS) \
        if robot == "quadruped" else (A1.urdf, A1.feet, np.array(A1.stance))
    model = kd.Model.from_urdf(urdf, floating_base=True)
    q = model.neutral()
    q[7:] = stance
    limit = foot_speed_limit(model, q, feet)
    assert 0.5 < limit < 20.0
    worst = math.inf
    for foot in feet:
        jacobian = model.frame_jacobian(q, foot)[:3, 6:]
        for axis in (0, 1):
            rates = np.linalg.pinv(jacobian) @ np.eye(3)[axis] * limit  # joint velocities for `limit` m/s
            share = float(np.max(np.abs(rates) / model.velocity_limit[6:]))
            worst = min(worst, 1.0 / share)
            step = 1e-6
            ahead = model.integrate(q, np.concatenate([np.zeros(6), rates * step]))
            moved = model.frame_placement(ahead, foot)
            velocity = (moved[:3, 3] - model.frame_placement(q, foot)[:3, 3]) / step
            np.testing.assert_allclose(velocity, np.eye(3)[axis] * limit, atol=1e-4 * limit)
            assert share <= 1.0 + 1e-9
    assert worst == pytest.approx(1.0, rel=1e-9)


def test_the_default_swing_is_kept_at_the_default_command_limits() -> None:
    """The quadruped and the A1 at the default limits (0.5 m/s): the duty, the minimum-jerk blend and the
    step height as set, within the swing speed ratio."""
    ctl = _quadruped()
    model = kd.Model.from_urdf(A1.urdf, floating_base=True)
    a1 = LocomotionController(model, A1.feet, np.array(A1.stance))
    p = LocomotionParameters()
    duty = p.timing("trot")[1]  # (the trot's own: 0.55)
    for c in (ctl, a1):
        fit = c.swing_fit
        assert not fit.fast
        assert fit.fits
        assert (fit.duty, fit.ramp) == (duty, p.swing_ramp)
        assert c.gaits["trot"].duty == duty
        assert fit.step_height == c.step_height == pytest.approx(p.step_height_ratio * c.leg_length)
        assert fit.swing_speed <= p.swing_speed_ratio * c.foot_speed_limit


def test_a_faster_command_limit_gets_the_fast_swing() -> None:
    """At 1 m/s the minimum-jerk swing passes the ratio: the flat-topped blend and the low step keep the
    duty; at 1.5 m/s the duty goes down to the lowest (nothing in [min_duty, duty] is within the ratio: the
    fit says so); the swing speed grows with the duty, so the fitted duty is the largest within it."""
    p = LocomotionParameters()
    one = _quadruped(LocomotionParameters(max_forward_velocity=1.0))
    assert one.swing_fit.fast
    assert one.swing_fit.fits
    assert one.swing_ramp == p.fast_swing_ramp
    assert one.step_height == pytest.approx(p.fast_step_height_ratio * one.leg_length)
    fast = _quadruped(LocomotionParameters(max_forward_velocity=1.5))
    fit = fast.swing_fit
    assert fit.fast
    assert not fit.fits
    assert fit.duty == fast.gaits["trot"].duty == p.min_duty
    assert fast.swing_ramp == p.fast_swing_ramp
    assert fast.step_height == pytest.approx(p.fast_step_height_ratio * fast.leg_length)
    assert fit.swing_speed > p.swing_speed_ratio * fast.foot_speed_limit
    budget = 1.1 * p.swing_speed_ratio * fast.foot_speed_limit
    duty = p.timing("trot")[1]
    args = (1.5, fast.period, budget, duty, 0.0, 0.16 * fast.leg_length, p.min_duty, 0.3, 0.05)
    wider = fit_swing(*args)
    assert wider.fits
    assert p.min_duty < wider.duty < duty
    assert wider.swing_speed <= budget
    assert swing_speed(1.5, wider.duty + 1e-6, 0.3, 0.05, fast.period) > budget
    # (the walk's command limits follow the fitted trot duty: its swing feet at the same speeds)
    walk = fast.gaits["walk"]
    assert fast._command_scale(walk) == pytest.approx((0.52 / 0.48) / (walk.duty / (1.0 - walk.duty)))  # noqa: SLF001


def test_no_fit_with_a_zero_ratio_and_a_live_change_refits() -> None:
    """``swing_speed_ratio`` 0: the settings as given at any speed; ``set_parameters`` with the ratio back
    refits the trot's duty, the blend and the step height."""
    p = LocomotionParameters(max_forward_velocity=1.5, swing_speed_ratio=0.0)
    ctl = _quadruped(p)
    assert not ctl.swing_fit.fast
    assert ctl.gaits["trot"].duty == 0.55
    assert {n: f.duty for n, f in ctl.swing_fits.items()} == {"trot": 0.55, "pace": 0.55, "bound": 0.55}
    assert ctl.swing_ramp == 0.0
    ctl.set_parameters(LocomotionParameters(max_forward_velocity=1.5))
    assert ctl.swing_fit.fast
    assert ctl.gaits["trot"].duty == p.min_duty
    assert ctl.swing_ramp == p.fast_swing_ramp


FIT_PARAMETERS: dict[str, Callable[[float], LocomotionParameters]] = {
    "swing_speed_ratio": lambda value: LocomotionParameters(swing_speed_ratio=value),
    "min_duty": lambda value: LocomotionParameters(min_duty=value),
    "fast_swing_ramp": lambda value: LocomotionParameters(fast_swing_ramp=value),
    "fast_step_height_ratio": lambda value: LocomotionParameters(fast_step_height_ratio=value),
}


@pytest.mark.parametrize(("field", "value"), [("swing_speed_ratio", -0.1), ("swing_speed_ratio", math.nan),
                                              ("min_duty", 0.5), ("min_duty", 1.0), ("min_duty", math.nan),
                                              ("fast_swing_ramp", 0.0), ("fast_swing_ramp", 0.6),
                                              ("fast_step_height_ratio", 0.0)])
def test_fit_parameters_are_checked(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        FIT_PARAMETERS[field](value)
