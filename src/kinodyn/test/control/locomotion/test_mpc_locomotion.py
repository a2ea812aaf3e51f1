"""The centroidal MPC driving the LocomotionController's whole-body QP (``MpcLocomotion``) in closed loop with
kinodyn's simulator on the project quadruped (the scenarios of ``examples/locomotion_scenarios.py``: control
500 Hz, simulator RK4 at 1 ms, soft contact; true state, no ROS). Simulated time only."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import locomotion_scenarios as scenarios
from kinodyn.control.locomotion import LocomotionParameters
from kinodyn.control.locomotion.mpc_locomotion import MpcLocomotion, MpcLocomotionParameters
from kinodyn.control.mpc import MpcStatus
from kinodyn.control.mpc.planner import PlannerParameters
from kinodyn.control.mpc.solution import BackendResult

if TYPE_CHECKING:
    from collections.abc import Generator

    from kinodyn.control.mpc.problem import HorizonProblem
    from kinodyn.control.wbc.controller import WBCResult
    from numpy.typing import ArrayLike

COMMAND = np.array([0.5, 0.0, 0.0])


def _robot(backend: str = "kinodyn",
           params: MpcLocomotionParameters | None = None) -> tuple[scenarios.Legged, MpcLocomotion]:
    robot = scenarios.Legged.quadruped(backend=backend)
    return robot, MpcLocomotion(robot.controller, params)


def _forces_against_plan(robot: scenarios.Legged, mpc: MpcLocomotion, seconds: float,
                         monkeypatch: pytest.MonkeyPatch) -> tuple[float, float]:
    """Trot ``seconds`` more, one tick at a time; the median and RMS normal-force difference [N] between the
    QP's answer and the force task's reference over the stance feet the plan tracks (and the QP has)."""
    ctl, s = robot.controller, robot.sim
    answers: list[WBCResult] = []
    solve = ctl.wbc.update

    def recorded(q: ArrayLike, v: ArrayLike, t: float | None = None) -> WBCResult:
        answers.append(solve(q, v, t))
        return answers[-1]

    monkeypatch.setattr(ctl.wbc, "update", recorded)
    differences = []
    end = s.t + seconds
    while s.t < end - 1e-9:
        out = ctl.update(s.q, s.v, s.t, COMMAND)
        assert out.ok, out.message
        assert out.tau is not None
        assert mpc.status.state == "tracking", mpc.status
        for foot, task in mpc.force_tasks.items():
            if task.weight[0] > 0.0 and foot in answers[-1].forces:  # (a contact ramped out this tick: none)
                differences.append(float(answers[-1].forces[foot][2] - task.f_ref[2]))
        for _ in range(robot.steps_per_tick):
            s.step(out.tau)
    assert len(differences) >= 1.9 * len(answers)  # two feet tracked nearly every tick
    d = np.abs(differences)
    return float(np.median(d)), float(np.sqrt(np.mean(d**2)))


@pytest.mark.parametrize("backend", ["kinodyn", "mujoco"])
def test_mpc_trots_at_half_a_metre_per_second(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """0.5 m/s forward on both physics backends: velocity RMSE <= 0.05 m/s after the transient (the
    controller alone: about 0.07 on kinodyn.sim, 0.09 on MuJoCo), no QP failure (the run stops on one), every
    tick from the first plan on tracks a plan, one solve per 1 / rate, and the QP's forces follow the
    plan's."""
    robot, mpc = _robot(backend)
    f = scenarios.trot(robot, COMMAND, duration=3.0, settle=1.5)
    assert f.rmse_linear <= 0.05
    assert f.rmse_yaw_rate <= 0.05
    np.testing.assert_allclose(f.mean_velocity, COMMAND, atol=0.02)
    assert f.min_height_ratio > 0.95
    status = mpc.status
    assert status.state == "tracking"
    assert status.failures == 0
    assert status.late == 0
    assert abs(status.solves - 3.0 * mpc.planner.params.rate) <= 2  # 3 s at 50 Hz
    assert status.plan_age <= mpc.planner.params.max_age
    # tracking: the QP's normal forces near the plan's (the force tasks pull them there against the CoM
    # task's feedback on the deviations from the plan, and the contact ramps at each handover: the largest
    # differences) with the default force weight; a stance foot carries about half the weight
    weight = mpc.mpc.body.weight
    median, rms = _forces_against_plan(robot, mpc, 0.5, monkeypatch)
    # the CoM task's feedback pulls the QP's normal forces off the plan at force_weight 0.1 (MuJoCo's median
    # 40 N of 353 N); force_weight 1 brings it under 0.1 of the weight but the standing plan then asks for up
    # to 14 % more than the weight now and then (test_wbc_mpc_system's force arrows)
    assert median < 0.12 * weight
    assert rms < 0.2 * weight


@pytest.mark.parametrize("backend", ["kinodyn", "mujoco"])
@pytest.mark.parametrize(("phase", "direction"), [(0, 1.0), (1, -1.0), (2, 1.0), (3, -1.0)])
def test_mpc_trot_survives_a_120_newton_push_at_any_phase(backend: str, phase: int, direction: float) -> None:
    """120 N sideways on the base for 0.2 s while trotting in place, one period plus ``phase / 8`` of it after
    the trot started (with the mirror symmetry, phases 0-3 of 8 in alternating directions cover the 8 phases
    in both; test_push_phases.py), on both physics backends: the body up, back to rest, every tick's plan
    applied and every QP solved by the first solver."""
    robot, mpc = _robot(backend)
    period = robot.controller.period
    f = scenarios.push(robot, force=direction * 120.0, duration=0.2, before=period * (1.0 + phase / 8.0),
                       after=1.2)
    assert f.min_height_ratio > 0.9
    assert f.lowest_body > 0.15
    assert f.max_offset > 0.02  # the push moved it
    assert f.max_offset < 0.25
    assert f.final_speed < 0.1
    assert f.notes == ()
    assert f.relaxed == ()
    assert mpc.status.state == "tracking"
    assert mpc.status.failures == 0
    assert mpc.status.late == 0


def test_a_failed_solve_falls_back_to_the_controller_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every solve between 1.0 s and 1.6 s answers infeasible (the solver replaced by one that says so): the
    plan is dropped at the first, the force tasks are switched off and the status says why; the robot trots
    on at the command on the controller's own references, and tracks the MPC again after."""
    robot, mpc = _robot()
    ctl, s = robot.controller, robot.sim
    solver = mpc.mpc.solver
    real = solver.solve_parts

    def sometimes_infeasible(problem: HorizonProblem) -> Generator[None, None, BackendResult]:
        if 1.0 <= s.t < 1.6:
            yield
            return BackendResult(MpcStatus.INFEASIBLE, "forced for the test", 0)
        return (yield from real(problem))

    monkeypatch.setattr(solver, "solve_parts", sometimes_infeasible)
    scenarios.run(robot, 1.0, lambda _t: COMMAND, mode="trot")
    assert mpc.status.state == "tracking"
    velocity, states = [], []
    while s.t < 1.6 - 1e-9:
        out = ctl.update(s.q, s.v, s.t, COMMAND)
        assert out.ok, out.message
        states.append(mpc.status.state)
        if mpc.status.state == "fallback":
            assert "infeasible" in mpc.status.reason
            assert "forced for the test" in mpc.status.reason
            assert all(task.weight[0] == 0.0 for task in mpc.force_tasks.values())
        assert out.tau is not None, out.message
        for _ in range(robot.steps_per_tick):
            s.step(out.tau)
        velocity.append(s.v[0])
        assert s.q[2] > 0.95 * robot.nominal_height
    assert states[0] == "tracking"
    assert states[-1] == "fallback"
    assert states.index("fallback") <= 15  # from the first solve started in the window (every 10 ticks)
    assert mpc.status.failures >= 25
    # the last 0.5 s (a trot period) on the controller alone, the switch 0.1 s before: measured 0.54 m/s
    assert abs(np.mean(velocity[-250:]) - 0.5) < 0.08
    scenarios.run(robot, 2.0, lambda _t: COMMAND)
    assert mpc.status.state == "tracking"


def test_a_late_solve_is_not_applied() -> None:
    """A solve that finishes more than max_age after its state (the control loop stalled: the next ticks
    come 0.025 s apart, the torque held) is not applied: the plan in force is dropped, the status says so,
    and the force tasks are off; the next solve on regular ticks is applied again."""
    robot, mpc = _robot(params=MpcLocomotionParameters(planner=PlannerParameters(rate=50.0, max_age=0.04)))
    ctl, s = robot.controller, robot.sim
    scenarios.run(robot, 0.8, lambda _t: COMMAND, mode="trot")
    while True:  # up to the tick starting a solve (one every 10 ticks)
        solves = mpc.status.solves
        out = ctl.update(s.q, s.v, s.t, COMMAND)
        assert out.tau is not None, out.message
        for _ in range(robot.steps_per_tick):
            s.step(out.tau)
        if mpc.planner.solving:
            break
    assert mpc.status.state == "tracking"
    for gap in (0.025, 0.025):  # the solve's remaining two parts, each on a stalled tick
        for _ in range(round(gap / 0.001)):
            s.step(out.tau)
        out = ctl.update(s.q, s.v, s.t, COMMAND)
        assert out.ok
    status = mpc.status
    assert status.solves == solves + 1
    assert status.late >= 1
    assert status.state == "fallback", status
    assert "later than max_age" in status.reason, status
    assert mpc.planner.plan is None
    assert all(task.weight[0] == 0.0 for task in mpc.force_tasks.values())
    scenarios.run(robot, s.t + 0.1, lambda _t: COMMAND)
    assert mpc.status.state == "tracking"
    assert mpc.status.late == status.late


@pytest.mark.parametrize(("field", "value"), [("rate", 0.0), ("rate", float("nan")), ("max_age", -1.0),
                                              ("max_age", 0.01)])
def test_planner_parameters_are_checked(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        PlannerParameters(**{field: value})


@pytest.mark.parametrize(("field", "value"), [
    ("force_weight", -1.0), ("force_weight", math.nan), ("force_weight", math.inf), ("force_weight", True),
    ("orientation_weight", (1.0, 1.0)), ("orientation_weight", (1.0, -1.0, 1.0)),
    ("orientation_weight", (math.nan, 1.0, 1.0)), ("orientation_weight", 3.0)])
def test_weights_are_checked(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        MpcLocomotionParameters(**{field: value})  # type: ignore[arg-type]


def test_an_orientation_weight_inside_the_mpc_settings_is_refused_not_ignored() -> None:
    """Each mode sets the MPC's orientation weight, so one given in ``mpc`` would not be read."""
    with pytest.raises(ValueError, match=r"mpc\.orientation_weight .* set MpcLocomotionParameters"):
        MpcLocomotionParameters(mpc=replace(MpcLocomotionParameters().mpc, orientation_weight=(1.0, 1, 1)))


def test_the_mpc_plans_with_the_controllers_friction_and_follows_a_live_change() -> None:
    """The MPC's friction pyramids are the controller's (``LocomotionParameters.friction``), whatever they
    are; a friction inside the MPC's own settings is refused, not ignored; a live change of the controller's
    sets up a new MPC with it at the next tick (the plan and the solve in progress dropped, the status says
    why), and it plans again within a solve's time, its forces in the new pyramids."""
    with pytest.raises(ValueError, match=r"mpc\.friction .* set LocomotionParameters\.friction"):
        MpcLocomotionParameters(mpc=replace(MpcLocomotionParameters().mpc, friction=0.4))
    robot = scenarios.Legged.quadruped(LocomotionParameters(friction=0.45, pd_horizon=0.002))
    mpc = MpcLocomotion(robot.controller)
    assert mpc.mpc.params.friction == 0.45
    scenarios.run(robot, 0.4, mode="stand")
    assert mpc.status.state == "tracking", mpc.status
    set_up = mpc.mpc.params
    robot.controller.set_parameters(replace(robot.controller.params, friction=0.05))
    scenarios.run(robot, robot.sim.t + 0.002)
    assert mpc.mpc.params == replace(set_up, friction=0.05)
    assert mpc.planner.mpc is mpc.mpc
    assert "friction changed to 0.05" in mpc.status.reason, mpc.status
    scenarios.run(robot, robot.sim.t + 0.1)
    assert mpc.status.state == "tracking", mpc.status
    plan = mpc.planner.plan
    assert plan is not None
    assert plan.solution.forces is not None
    forces = plan.solution.forces
    tangential = np.hypot(forces[..., 0], forces[..., 1])
    assert (tangential <= 0.05 * np.sqrt(2.0) * forces[..., 2] + 1e-9).all()  # (pyramid: each axis <= mu f_z)


def test_each_mode_has_its_own_weights_unless_set() -> None:
    """Left unset, the MPC's orientation weight and the force tasks' weight are the mode's own: the stand,
    walk and trot (60, 60, 10) and 0.1, the pace's roll and the bound's pitch low, (10, 60, 10) and
    (60, 2, 10), with 1; set, they hold in every mode (the others left as they are)."""
    level, pace, bound = ((60.0, 60.0, 10.0), 0.1), ((10.0, 60.0, 10.0), 1.0), ((60.0, 2.0, 10.0), 1.0)
    own = {"stand": level, "walk": level, "trot": level, "pace": pace, "bound": bound}
    def table(params: MpcLocomotionParameters) -> dict[str, tuple[tuple[float, ...] | None, float]]:
        return {m: (params.weights(m).orientation_weight, params.weights(m).force_weight) for m in own}

    assert table(MpcLocomotionParameters()) == own
    both = MpcLocomotionParameters(orientation_weight=(1, 2, 3), force_weight=0.5)
    assert table(both) == dict.fromkeys(own, ((1.0, 2.0, 3.0), 0.5))
    assert table(MpcLocomotionParameters(force_weight=0.5)) == {m: (o, 0.5) for m, (o, _) in own.items()}


def test_the_mpc_and_the_force_tasks_take_the_weights_of_the_gait_in_force() -> None:
    """Standing, the MPC solves with the stand's orientation weight and the force tasks weigh 0.1 / m^2;
    pacing, with the pace's and 1 / m^2 (checked while the plan tracks a stance foot); the MPC's other
    settings stay as set up."""
    robot, mpc = _robot()
    mass = mpc.mpc.body.mass
    assert mass == pytest.approx(float(robot.model.mass.sum()), rel=1e-12)
    set_up = mpc.mpc.params
    for mode, orientation, force in (("stand", (60.0, 60.0, 10.0), 0.1), ("pace", (10.0, 60.0, 10.0), 1.0)):
        scenarios.run(robot, 0.6 if mode == "stand" else 1.2, mode=mode)
        assert robot.controller.scheduler.gait.name == mode
        assert mpc.status.state == "tracking", mpc.status
        assert mpc.mpc.params.orientation_weight == orientation
        assert replace(mpc.mpc.params, orientation_weight=set_up.orientation_weight) == set_up
        weights = sorted({float(task.weight[0]) for task in mpc.force_tasks.values()} - {0.0})
        assert weights == pytest.approx([force / mass**2], rel=1e-12)


def test_one_planner_per_controller() -> None:
    robot, _ = _robot()
    with pytest.raises(ValueError, match="already has a planner"):
        MpcLocomotion(robot.controller)


def test_not_planned_while_sitting_down() -> None:
    """The MPC plans in stand and the gaits only: sitting down, the plan is dropped, the force tasks are off
    and the status says why (waiting, not a fallback)."""
    robot, mpc = _robot()
    scenarios.run(robot, 0.3, mode="stand")
    assert mpc.status.state == "tracking"
    assert robot.controller.mode == "stand"
    scenarios.run(robot, 0.8, mode="sit")
    assert robot.controller.mode == "sitting_down"
    status = mpc.status
    assert status.state == "waiting", status
    assert status.reason == "not planned in mode sitting_down", status
    assert mpc.planner.plan is None
    assert not mpc.planner.solving
    assert all(task.weight[0] == 0.0 for task in mpc.force_tasks.values())


def test_pace_and_bound_only_with_a_planner_that_moves_the_com() -> None:
    """Without a planner the controller refuses the pace and the bound (their supports stand beside the
    centre it holds the CoM over); plugging the MPC in makes both available with their own period (the
    pendulum law with the ratios 0.28 and 0.245 against the trot's 0.3) and contact ramp (0.8 of the
    handover at duty 0.55), and unplugging it while pacing is refused (the pace would go on
    without it)."""
    robot = scenarios.Legged.quadruped()
    ctl = robot.controller
    assert set(ctl.unavailable) == {"pace", "bound"}
    with pytest.raises(ValueError, match="cannot bound"):
        ctl.request_mode("bound")
    MpcLocomotion(ctl)
    assert ctl.unavailable == {}
    assert {"pace", "bound"} <= set(ctl.gaits)
    for name, ratio, duty in (("pace", 0.28, 0.55), ("bound", 0.245, 0.55)):
        assert ctl.gaits[name].period == pytest.approx(ratio / 0.3 * ctl.period, rel=1e-12)
        assert ctl.gaits[name].duty == duty
        handover = (duty - 0.5) * ctl.gaits[name].period
        assert ctl.contact_ramps[name] == pytest.approx(0.8 * handover, rel=1e-12)
    scenarios.run(robot, 0.6, mode="pace")
    assert ctl.mode == "pace"
    assert ctl.scheduler.gait.name == "pace"
    with pytest.raises(ValueError, match="cannot go on without this planner"):
        ctl.set_planner(None)
    assert ctl.planner is not None
    assert "pace" in ctl.gaits
