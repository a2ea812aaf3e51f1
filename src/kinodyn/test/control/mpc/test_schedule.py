"""The MPC's inputs: the predicted contact schedule against the gait scheduler run forward, the foothold
plan on a hand-made schedule, the velocity reference against integrating the commanded twist."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.control.locomotion import GaitScheduler, bound, pace, trot, walk
from kinodyn.control.mpc import contact_schedule, foothold_plan, velocity_reference
from scipy.integrate import quad

FEET = ("LF", "LH", "RF", "RH")
PAIRS = (("LF", "RH"), ("LH", "RF"))


@pytest.mark.parametrize(("period", "duty", "dt"), [(0.5, 0.6, 0.03), (0.36, 0.75, 0.02), (0.8, 0.55, 0.05)])
def test_schedule_predicts_what_the_scheduler_does(period: float, duty: float, dt: float) -> None:
    steps = 16
    for now in 0.0131 + 0.1577 * np.arange(9):  # (no step middle exactly on a touchdown or lift-off)
        planner, future = GaitScheduler(FEET), GaitScheduler(FEET)
        for scheduler in (planner, future):
            scheduler.update(0.0)
            scheduler.set_gait(trot(PAIRS, period, duty))
            scheduler.update(now)
        predicted = contact_schedule(planner.update(now), FEET, dt, steps)
        for k in range(steps):
            state = future.update(now + (k + 0.5) * dt)
            assert [state.feet[f].in_stance for f in FEET] == predicted[k].tolist(), (now, k)
        assert predicted.any(axis=0).all()
        assert not predicted.all()


GAITS = {
    "walk": lambda: walk(("LH", "LF", "RH", "RF"), 0.8, 0.8),
    "pace": lambda: pace((("LF", "LH"), ("RF", "RH")), 0.4, 0.6),
    "bound": lambda: bound((("LF", "RF"), ("LH", "RH")), 0.4, 0.6),
}


@pytest.mark.parametrize("name", list(GAITS))
def test_schedule_predicts_the_scheduler_after_a_gait_switch(name: str) -> None:
    """Switched from a trot at any phase: the feet's current and next segments follow the switch's timing
    (``FootPhase``), later ones the new gait; the prediction made after the switch holds."""
    dt, steps = 0.03, 24
    for switch in 0.31 + 0.0913 * np.arange(6):
        for delay in (0.0131, 0.2017):
            planner, future = GaitScheduler(FEET), GaitScheduler(FEET)
            for scheduler in (planner, future):
                scheduler.update(0.0)
                scheduler.set_gait(trot(PAIRS, 0.5, 0.6))
                scheduler.update(switch)
                scheduler.set_gait(GAITS[name]())
                scheduler.update(switch + delay)
            predicted = contact_schedule(planner.update(switch + delay), FEET, dt, steps)
            for k in range(steps):
                state = future.update(switch + delay + (k + 0.5) * dt)
                assert [state.feet[f].in_stance for f in FEET] == predicted[k].tolist(), (switch, delay, k)


def test_standing_schedule_is_all_stance() -> None:
    scheduler = GaitScheduler(FEET)
    assert contact_schedule(scheduler.update(3.0), FEET, 0.03, 16).all()


def test_foothold_plan_keeps_stance_feet_and_moves_later_stances_with_the_reference() -> None:
    stance = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 1], [1, 0], [0, 0], [1, 1]], dtype=bool)
    current = np.array([[0.3, 0.2, 0.0], [-0.3, 0.2, 0.0]])
    planned = np.array([[0.4, 0.2, 0.01], [-0.2, 0.2, 0.02]])
    reference = np.zeros((8, 12))
    reference[:, 3] = 0.1 * np.arange(1, 9)  # the CoM moves 0.1 m per step in x
    reference[:, 5] = 0.5
    plan = foothold_plan(stance, current, planned, reference)
    np.testing.assert_array_equal(np.isnan(plan[..., 0]), ~stance)
    np.testing.assert_array_equal(plan[0:2, 0], [current[0]] * 2)  # in stance now: where it is
    np.testing.assert_array_equal(plan[4:6, 0], [planned[0]] * 2)  # its next stance: the plan
    # its stance after that starts 3 steps later: moved 0.3 m in x with the reference, same height
    np.testing.assert_allclose(plan[7, 0], planned[0] + [0.3, 0.0, 0.0])
    np.testing.assert_array_equal(plan[2:5, 1], [planned[1]] * 3)  # in swing now: the plan
    np.testing.assert_allclose(plan[7, 1], planned[1] + [0.5, 0.0, 0.0])


def test_velocity_reference_integrates_the_commanded_twist() -> None:
    x0 = np.zeros(12)
    x0[:6] = (0.1, -0.05, 2.5, 1.0, -2.0, 0.45)
    command = np.array([0.6, -0.2, 0.8])
    dt, steps = 0.03, 16
    ref = velocity_reference(x0, command, 0.5, dt, steps)
    t = dt * np.arange(1, steps + 1)
    np.testing.assert_allclose(ref[:, 2], x0[2] + command[2] * t)
    np.testing.assert_array_equal(ref[:, :2], 0.0)  # level
    np.testing.assert_array_equal(ref[:, 5], 0.5)
    np.testing.assert_array_equal(ref[:, 6:9], [[0.0, 0.0, command[2]]] * steps)
    for k in (0, 7, 15):
        yaw = x0[2] + command[2] * t[k]
        heading = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
        np.testing.assert_allclose(ref[k, 9:11], heading @ command[:2], atol=1e-15)
        for axis in (0, 1):
            def velocity(s: float, axis: int = axis) -> float:
                c, si = np.cos(x0[2] + command[2] * s), np.sin(x0[2] + command[2] * s)
                return float(np.array([[c, -si], [si, c]])[axis] @ command[:2])
            travelled = quad(velocity, 0.0, t[k], epsabs=1e-13)[0]
            assert ref[k, 3 + axis] == pytest.approx(x0[3 + axis] + travelled, abs=1e-12)
