"""The step height fitted to the legs' joint torques (``locomotion.timing``: ``stance_load``, ``swing_lift``,
``load_step_height``): the bump's largest upward acceleration against the sampled swing, the stance load
against virtual work on finite differences of the forward kinematics, the CoM's rise against finite
differences of the CoM, the controller's fit on a robot of weak motors for its size (ANYbotics' ANYmal C)
and on robots it leaves alone, and ANYmal C pushed while trotting with and without the fit."""

from __future__ import annotations

import math
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import acceptance_matrix as matrix
from kinodyn.control.locomotion import LocomotionController, LocomotionParameters
from kinodyn.control.locomotion.swing import swing_point
from kinodyn.control.locomotion.timing import BUMP_PEAK_LIFT, load_step_height, stance_load, swing_lift

import kinodyn as kd

ANYMAL = matrix.VARIANT["anymal_c"]
A1 = matrix.VARIANT["unitree_a1"]


def _model_and_stance(robot: matrix.PublicRobot) -> tuple[kd.Model, np.ndarray]:
    model = kd.Model.from_urdf(robot.urdf, floating_base=True)
    q = model.neutral()
    q[7:] = robot.stance
    return model, q


def _controller(robot: matrix.PublicRobot,
                params: LocomotionParameters | None = None) -> LocomotionController:
    model, q = _model_and_stance(robot)
    return LocomotionController(model, robot.feet, q[7:], params)


def _peak_load(ctl: LocomotionController, height: float) -> float:
    """The stance joints' peak load of the trot's swing at ``height`` (timing.py's module doc)."""
    swing_time = ctl.gaits["trot"].swing_duration
    return ctl.stance_load * (1.0 + ctl.swing_lift * BUMP_PEAK_LIFT * height / (ctl.gravity * swing_time**2))


def test_the_bump_lifts_the_foot_hardest_at_its_ends() -> None:
    """The largest upward acceleration of a swing of unit height and duration (no horizontal travel) is
    ``BUMP_PEAK_LIFT``, at ``s = (1 - sqrt(3/5)) / 2`` and its mirror."""
    out = np.empty((3, 3))
    origin = np.zeros(3)
    lifts = []
    for s in np.linspace(0.0, 1.0, 20001):
        swing_point(float(s), 1.0, origin, origin, 1.0, out)
        lifts.append(out[2, 2])
    assert max(lifts) == pytest.approx(BUMP_PEAK_LIFT, rel=1e-7)
    for s in ((1.0 - math.sqrt(0.6)) / 2.0, (1.0 + math.sqrt(0.6)) / 2.0):
        swing_point(s, 1.0, origin, origin, 1.0, out)
        assert out[2, 2] == pytest.approx(BUMP_PEAK_LIFT, rel=1e-12)


@pytest.mark.parametrize("robot", [ANYMAL, A1], ids=lambda r: r.name)
def test_the_stance_load_is_the_virtual_work_of_the_weight(robot: matrix.PublicRobot) -> None:
    """Each leg joint's torque holding ``m g / 2`` straight down at its foot is that force times the foot's
    displacement per radian of the joint (finite differences of the foot's placement); the largest over
    its effort limit is ``stance_load``."""
    model, q = _model_and_stance(robot)
    weight = float(model.mass.sum()) * float(np.linalg.norm(model.gravity))
    step = 1e-7
    worst = 0.0
    for foot in robot.feet:
        here = model.frame_placement(q, foot)[2, 3]
        for j in range(model.nv - 6):
            dv = np.zeros(model.nv)
            dv[6 + j] = step
            height_rate = (model.frame_placement(model.integrate(q, dv), foot)[2, 3] - here) / step
            worst = max(worst, abs(weight / 2.0 * height_rate) / model.effort_limit[6 + j])
    assert stance_load(model, q, robot.feet, 2) == pytest.approx(worst, rel=1e-5)
    assert stance_load(model, q, robot.feet, 4) == pytest.approx(worst / 2.0, rel=1e-5)


@pytest.mark.parametrize("robot", [ANYMAL, A1], ids=lambda r: r.name)
def test_the_swing_lift_is_the_com_rise_per_foot_rise(robot: matrix.PublicRobot) -> None:
    """Moving a leg's joints along the least-norm rates that lift its foot by ``e`` raises the CoM by
    ``swing_lift e`` (finite differences of the CoM; the foot rises ``e`` and moves no other way), a small
    fraction of the robot's mass: the part of one leg that moves with its foot."""
    model, q = _model_and_stance(robot)
    step = 1e-7
    for foot in robot.feet:
        jacobian = model.frame_jacobian(q, foot, "local_world_aligned")[:3, 6:]
        rates = np.linalg.pinv(jacobian) @ np.array([0.0, 0.0, 1.0])
        moved = model.integrate(q, np.concatenate([np.zeros(6), rates * step]))
        np.testing.assert_allclose((model.frame_placement(moved, foot)[:3, 3]
                                    - model.frame_placement(q, foot)[:3, 3]) / step, [0.0, 0.0, 1.0],
                                   atol=1e-5)
        rise = (model.com(moved)[2] - model.com(q)[2]) / step
        assert swing_lift(model, q, foot) == pytest.approx(rise, rel=1e-5)
        assert 0.0 < rise < 0.25


def test_load_step_height_puts_the_peak_load_on_the_budget() -> None:
    load, lift, swing_time, gravity = 0.6, 0.05, 0.2, 9.81
    height = load_step_height(load, lift, 0.75, swing_time, gravity)
    assert load * (1.0 + lift * BUMP_PEAK_LIFT * height / (gravity * swing_time**2)) == pytest.approx(0.75)
    assert load_step_height(load, lift, 0.9, swing_time, gravity) > height  # a larger budget: higher
    assert load_step_height(load, lift, 0.75, 2.0 * swing_time, gravity) == pytest.approx(4.0 * height)
    assert load_step_height(0.8, lift, 0.75, swing_time, gravity) == 0.0  # the weight alone takes it
    assert load_step_height(0.0, lift, 0.75, swing_time, gravity) == math.inf  # no effort limits
    assert load_step_height(load, 0.0, 0.75, swing_time, gravity) == math.inf  # massless legs


def test_anymal_steps_lower_for_its_motors_and_the_others_keep_their_step() -> None:
    """ANYmal C's knees need about 2/3 of their 80 N m to hold its 52 kg on two feet: its trot steps as high
    as keeps the peak load at ``swing_load_ratio``, under ``step_height_ratio L``. The A1 and the generated
    variants (their loads within the budget at that height) keep ``step_height_ratio L``; a ratio of 0 turns
    the fit off, and ``min_step_height_ratio`` bounds it below."""
    p = LocomotionParameters()
    anymal = _controller(ANYMAL)
    assert 0.6 < anymal.stance_load < p.swing_load_ratio
    assert anymal.step_height < p.step_height_ratio * anymal.leg_length
    assert _peak_load(anymal, anymal.step_height) == pytest.approx(p.swing_load_ratio, rel=1e-9)
    assert _controller(ANYMAL, replace(p, swing_load_ratio=0.0)).step_height == pytest.approx(
        p.step_height_ratio * anymal.leg_length)
    floored = _controller(ANYMAL, replace(p, min_step_height_ratio=0.12))
    assert floored.step_height == pytest.approx(0.12 * anymal.leg_length)
    others = [_controller(A1)]
    with tempfile.TemporaryDirectory() as directory:
        others += [matrix.build(v, "kinodyn", Path(directory)).controller for v in matrix.VARIANTS]
    for ctl in others:
        assert ctl.step_height == pytest.approx(p.step_height_ratio * ctl.leg_length)
        assert _peak_load(ctl, ctl.step_height) < p.swing_load_ratio


@pytest.mark.parametrize("engine", ["kinodyn", "mujoco"])
def test_anymal_takes_a_push_with_the_fit_and_needs_relaxed_ticks_without_it(engine: str) -> None:
    """With the defaults ANYmal C takes the trotting push at a quarter of its cycle with every tick solved;
    with the full step (``swing_load_ratio`` 0) and the body held at its height (``stance_reach_ratio`` 0:
    lowered while pushed, kinodyn.sim's full step is solved too) its stance legs reach their torque limits
    and the QP has no answer on some ticks (answered relaxed; it fell there before the footholds kept a
    margin from the legs' full extension)."""
    scenario = "trot push 0.5 mg @0.25T"
    row = matrix.evaluate(ANYMAL, engine, scenario)
    assert not row.fell, row.figure()
    assert not row.infeasible, row.figure()
    assert row.fallbacks == 0, row.figure()
    assert row.relaxed == 0, row.figure()
    assert row.min_height_ratio > 0.9, row.figure()
    full_step = matrix.evaluate(ANYMAL, engine, scenario,
                                overrides={"swing_load_ratio": 0.0, "stance_reach_ratio": 0.0})
    assert full_step.relaxed > 0, full_step.figure()


def test_a_live_change_of_the_budget_refits_the_step() -> None:
    """``set_parameters`` with a larger ``swing_load_ratio`` gives ANYmal C's trot the higher step that budget
    allows, at once (the gait's swing is refitted)."""
    ctl = _controller(ANYMAL)
    low = ctl.step_height
    ctl.set_parameters(replace(ctl.params, swing_load_ratio=0.8))
    assert ctl.step_height > low
    assert _peak_load(ctl, ctl.step_height) == pytest.approx(0.8, rel=1e-9)


@pytest.mark.parametrize(("field", "value"), [("swing_load_ratio", -0.1), ("swing_load_ratio", math.nan),
                                              ("swing_load_ratio", math.inf),
                                              ("min_step_height_ratio", -0.01),
                                              ("min_step_height_ratio", math.nan)])
def test_the_load_fit_parameters_are_checked(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        LocomotionParameters(**{field: value})
