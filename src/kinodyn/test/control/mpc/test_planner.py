"""A solve in parts (``CentroidalMpc.solve_parts``) and the ``MpcPlanner`` that spreads solves over control
ticks: the same answer as one ``solve``, one part per tick, plans applied only while young enough, failed
and late solves dropped with their reason, the rate kept on rounded tick times."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NoReturn

import numpy as np
import pytest
from kinodyn.control.locomotion import GaitScheduler, trot
from kinodyn.control.mpc import (
    SOLVERS,
    CentroidalMpc,
    MpcParameters,
    contact_schedule,
    foothold_plan,
    velocity_reference,
)
from kinodyn.control.mpc.planner import MpcPlanner, PlannerParameters
from kinodyn.control.mpc.solution import finish

from .conftest import FEET

if TYPE_CHECKING:
    from .conftest import Robot


TICK = 0.002
PARTS = {"condensed": 3, "sparse": 2}  # steps of a trotting solve: set-up (+ condensing), (Gram,) QP


def trot_inputs(robot: Robot, params: MpcParameters, t: float, command: np.ndarray) -> tuple[np.ndarray, ...]:
    """The MPC's inputs trotting at gait time ``t`` from the standing state, every foot landing where it
    stands."""
    scheduler = GaitScheduler(FEET)
    scheduler.update(0.0)
    pairs = (("LF_FOOT", "RH_FOOT"), ("LH_FOOT", "RF_FOOT"))
    scheduler.set_gait(trot(pairs, params.horizon * params.dt, 0.6))
    stance = contact_schedule(scheduler.update(t), FEET, params.dt, params.horizon)
    reference = velocity_reference(robot.x0, command, robot.x0[5], params.dt, params.horizon)
    return robot.x0, reference, stance, foothold_plan(stance, robot.contacts, robot.contacts, reference)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_solve_in_parts_is_the_solve(robot: Robot, solver: str) -> None:
    params = MpcParameters(solver=solver)
    inputs = trot_inputs(robot, params, 0.1, np.array([0.5, 0.0, 0.0]))
    whole = CentroidalMpc(robot.body, FEET, params).solve(*inputs)
    parts = CentroidalMpc(robot.body, FEET, params).solve_parts(*inputs)
    pauses = 0
    while True:
        try:
            next(parts)
        except StopIteration as done:
            solution = done.value
            break
        pauses += 1
    assert pauses == PARTS[solver] - 1
    assert solution.ok
    assert whole.ok
    np.testing.assert_array_equal(solution.forces, whole.forces)
    np.testing.assert_array_equal(solution.states, whole.states)
    bad = list(inputs)
    bad[0] = np.full(12, np.nan)
    assert finish(CentroidalMpc(robot.body, FEET, params).solve_parts(*bad)).status.value == "invalid_input"


def test_the_planner_starts_at_its_rate_and_applies_young_plans(robot: Robot) -> None:
    params = MpcParameters()
    planner = MpcPlanner(CentroidalMpc(robot.body, FEET, params), PlannerParameters(rate=50.0, max_age=0.03))
    inputs = trot_inputs(robot, params, 0.1, np.array([0.5, 0.0, 0.0]))
    calls: list[float] = []

    def sampled(t: float) -> tuple[np.ndarray, ...]:
        calls.append(t)
        return inputs

    t = 0.0
    answers = []
    for _ in range(100):  # 0.2 s; the tick times summed as a loop would (rounded)
        answers.append(planner.step(t, lambda t=t: sampled(t)))
        t += TICK
    np.testing.assert_allclose(calls, np.arange(10) * 0.02, atol=1e-9)  # 50 Hz, on time
    assert answers[0] is None
    assert answers[1] is None
    assert answers[2] is not None
    assert answers[2].t0 == 0.0
    for k, plan in enumerate(answers[2:], start=2):  # from then on always the newest finished plan
        assert plan is not None
        assert plan.t0 == pytest.approx(0.02 * ((k - 2) // 10), abs=1e-9)
        assert plan.inputs is inputs
    status = planner.status
    assert status.state == "tracking"
    assert status.solves == 10
    assert status.failures == status.late == 0
    assert status.plan_age == pytest.approx(t - TICK - 0.18, abs=1e-9)
    assert status.solve_time > 0.0


def test_failed_late_and_expired_plans_are_not_applied(robot: Robot) -> None:
    params = MpcParameters()
    planner = MpcPlanner(CentroidalMpc(robot.body, FEET, params), PlannerParameters(rate=50.0, max_age=0.03))
    good = trot_inputs(robot, params, 0.1, np.array([0.5, 0.0, 0.0]))
    bad = (np.full(12, np.nan), *good[1:])
    for k in range(3):
        plan = planner.step(k * TICK, lambda: good)
    assert plan is not None
    # a failed solve drops the plan in force at once
    for k in range(10, 13):
        plan = planner.step(k * TICK, lambda: bad)
    assert plan is None
    assert planner.plan is None
    status = planner.status
    assert status.state == "fallback"
    assert status.failures == 1
    assert "invalid_input" in status.reason
    assert math.isnan(status.plan_age)
    # a good solve applies again; its plan expires when no new one comes within max_age
    for k in range(20, 23):
        plan = planner.step(k * TICK, lambda: good)
    assert plan is not None
    assert planner.status.state == "tracking"
    assert planner.step(20 * TICK + 0.029, lambda: good) is not None  # within max_age; a solve starts
    assert planner.step(20 * TICK + 0.031, lambda: good) is None  # older, its successor not finished
    assert planner.status.state == "fallback"
    assert "no new plan within" in planner.status.reason
    assert planner.status.late == 1
    # that successor finishes 0.05 s after its state: late, not applied
    assert planner.step(20 * TICK + 0.08, lambda: good) is None
    assert planner.plan is None
    assert planner.status.late == 2
    assert "later than max_age" in planner.status.reason
    # inputs that cannot be built: a failure, with the reason
    def broken() -> NoReturn:
        raise ValueError("no foot frame")

    assert planner.step(20 * TICK + 0.1, broken) is None
    assert planner.status.failures == 2
    assert "inputs could not be built: ValueError: no foot frame" in \
        planner.status.reason
    assert not planner.solving
    # time going backwards starts afresh
    assert planner.step(0.0, lambda: good) is None
    assert planner.status.state == "waiting"
    assert "backwards" in planner.status.reason


def test_max_age_must_fit_the_horizon(robot: Robot) -> None:
    mpc = CentroidalMpc(robot.body, FEET, MpcParameters(horizon=4, dt=0.01))
    with pytest.raises(ValueError, match="horizon"):
        MpcPlanner(mpc, PlannerParameters(rate=50.0, max_age=0.05))
