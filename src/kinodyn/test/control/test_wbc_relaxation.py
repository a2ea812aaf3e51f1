"""WholeBodyController on an infeasible hard level: answered relaxed (relaxation.py) with the equations of
motion exact, the forces in their cones, the torques within the limits and the relaxation reported; feasible
ticks unchanged bit for bit. Second sources: kinodyn's RNEA for the dynamics, the contacts' own cone rows."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.control.wbc import JointLimits, Relaxation, WBCResult, WholeBodyController
from kinodyn.control.wbc.relaxation import CONTACT_MOTION, JOINT_LIMITS, TORQUE_LIMITS
from kinodyn.control.wbc.tasks import PostureTask

import kinodyn as kd

from .test_wbc import CONTACT, URDF, PointContact, standing, standing_controller

TOL = 1e-8


@pytest.fixture(scope="module")
def quadruped() -> kd.Model:
    return kd.Model.from_urdf(URDF / "quadruped.urdf", floating_base=True)


def weak(m: kd.Model, effort: float, max_acceleration: float) -> JointLimits:
    urdf = JointLimits.from_model(m)
    return JointLimits(np.full(m.nv - 6, effort), urdf.lower, urdf.upper, urdf.velocity,
                       max_acceleration=max_acceleration)


def check_relaxed(m: kd.Model, r: WBCResult, q: np.ndarray, v: np.ndarray, effort: np.ndarray) -> np.ndarray:
    """The unactuated equations of motion exact (RNEA), the forces in their cones and bounds, the output
    torque within ``effort``; returns the generalized forces ``M qdd + h - J_c^T f``."""
    assert r.ok
    assert r.status == "relaxed"
    assert r.tau is not None
    assert r.qdd is not None
    assert r.dynamics_residual <= TOL
    generalized = m.rnea(q, v, r.qdd)
    for name, f in r.forces.items():
        generalized -= m.frame_jacobian(q, name)[:3].T @ f
        D, lo, hi = PointContact(name, **CONTACT).force_inequalities(r.evaluation, CONTACT["f_max"])
        assert np.all(D @ f <= hi + 1e-9)
        assert np.all(D @ f >= lo - 1e-9)
    np.testing.assert_allclose(generalized[:6], 0.0, atol=1e-8)
    assert np.all(np.abs(r.tau) <= effort)
    return generalized


@pytest.mark.parametrize("solver", ["daqp", "osqp"])
def test_torque_limits_below_the_weight_relax_up_to_the_contacts(quadruped: kd.Model, solver: str) -> None:
    """1 N m and 1 rad/s^2: the legs can neither hold the weight nor let the body drop with the limits'
    slack bounded at 1 x each limit, so the stance feet's no-motion rows give way too (the last stage)."""
    q, v = standing(quadruped)
    limits = weak(quadruped, 1.0, 1.0)
    wbc = standing_controller(quadruped, q, solver=solver, limits=limits, relaxation=Relaxation(bound=1.0))
    r = wbc.update(q, v)
    assert r.relaxed == (JOINT_LIMITS, TORQUE_LIMITS, CONTACT_MOTION)
    generalized = check_relaxed(quadruped, r, q, v, limits.effort)
    assert r.contact_acceleration > 1.0  # the feet are let go: the legs cannot hold 1 g
    assert r.message.startswith("relaxed (joint limits, torque limits, contact motion soft): ")
    assert "contact motion by up to" in r.message
    assert "clipped" in r.message
    # the QP's own torque is past the limit; the output is clipped to it
    assert np.abs(generalized[6:]).max() > 1.0
    assert np.abs(r.tau).max() == pytest.approx(1.0)
    assert wbc.relaxed_ticks == 1


def test_a_joint_past_its_limit_relaxes_only_the_joint_limits() -> None:
    """arm7 (fixed base) with a joint far past its upper limit and moving outwards: turning it back within
    the look-ahead needs more torque than the URDF gives; the joint limits give way, the torque limits
    hold exactly."""
    m = kd.Model.from_urdf(URDF / "arm7.urdf")
    rest = np.clip(m.neutral(), m.lower_limit, m.upper_limit)
    q, v = rest.copy(), np.zeros(m.nv)
    q[1], v[1] = m.upper_limit[1] + 0.2, 2.0
    limits = JointLimits.from_model(m)
    strict = WholeBodyController(m, limits=limits, relaxation=Relaxation(enabled=False))
    wbc = WholeBodyController(m, limits=limits)
    for controller in (strict, wbc):
        controller.add_task(PostureTask(m, rest, kp=50.0, kd=10.0))
    failed = strict.update(q, v)
    assert not failed.ok
    assert failed.status == "infeasible"
    r = wbc.update(q, v)
    assert r.ok, r.message
    assert r.status == "relaxed"
    assert r.relaxed == (JOINT_LIMITS,)
    assert r.message.startswith("relaxed (joint limits soft): joint limits by up to ")
    assert r.tau is not None
    assert r.qdd is not None
    assert r.dynamics_residual <= TOL
    np.testing.assert_allclose(r.tau, m.rnea(q, v, r.qdd), atol=1e-8)  # no clipping: the limits held
    assert np.all(np.abs(r.tau) <= m.effort_limit * (1.0 + 1e-9))
    low, _ = limits.acceleration_bounds(q, v)
    assert r.qdd[1] > low[1]  # decelerating as hard as the torque allows, less than the bound asks
    assert np.abs(r.tau[1]) == pytest.approx(m.effort_limit[1])


def test_hierarchical_mode_answers_with_the_first_level(quadruped: kd.Model) -> None:
    q, v = standing(quadruped)
    wbc = standing_controller(quadruped, q, mode="hierarchical", levels=(1, 2, 3),
                              limits=weak(quadruped, 1.0, 1.0))
    r = wbc.update(q, v)
    assert r.status == "relaxed"
    assert r.levels == 1
    assert r.message.endswith("levels 2-3 left unsolved")


def test_disabled_relaxation_fails_the_tick(quadruped: kd.Model) -> None:
    q, v = standing(quadruped)
    wbc = standing_controller(quadruped, q, limits=weak(quadruped, 1.0, 1.0),
                              relaxation=Relaxation(enabled=False))
    r = wbc.update(q, v)
    assert not r.ok
    assert r.status == "infeasible"
    assert r.relaxed == ()
    assert wbc.relaxed_ticks == 0


@pytest.mark.parametrize("mode", ["weighted", "hierarchical"])
def test_feasible_ticks_are_unchanged_bit_for_bit(quadruped: kd.Model, mode: str) -> None:
    rng = np.random.default_rng(11)
    q, _ = standing(quadruped)
    strict = standing_controller(quadruped, q, mode, levels=(1, 1, 2), relaxation=Relaxation(enabled=False))
    relaxing = standing_controller(quadruped, q, mode, levels=(1, 1, 2))
    for _ in range(5):
        q, v = standing(quadruped, rng)
        a, b = strict.update(q, v), relaxing.update(q, v)
        assert a.status == b.status == "solved"
        assert a.tau is not None
        assert b.tau is not None
        assert np.array_equal(a.tau, b.tau)
        assert np.array_equal(a.qdd, b.qdd)
        assert all(np.array_equal(a.forces[n], b.forces[n]) for n in a.forces)
        assert b.relaxed == ()
    assert relaxing.relaxed_ticks == 0


def test_relaxation_settings_are_checked() -> None:
    for bad in ({"weight": 0.0}, {"weight": float("nan")}, {"bound": -1.0}, {"bound": float("inf")}):
        with pytest.raises(ValueError, match="relaxation"):
            Relaxation(**bad)  # type: ignore[arg-type]


def test_a_tick_no_stage_solves_fails_naming_each_stage(quadruped: kd.Model) -> None:
    """Slacks bounded at 1e-6 of each limit cannot make up for 1 N m against the weight: every stage has no
    solution, and the failure names each one's outcome."""
    q, v = standing(quadruped)
    wbc = standing_controller(quadruped, q, limits=weak(quadruped, 1.0, 1.0),
                              relaxation=Relaxation(bound=1e-6))
    r = wbc.update(q, v)
    assert not r.ok
    assert r.tau is None
    assert r.status == "infeasible"
    stages = r.message.split("; relaxed: ")[1].split("; ")
    assert [s.split(" soft: ")[0] for s in stages] == [
        "joint limits", "joint limits, torque limits", "joint limits, torque limits, contact motion"]
    assert wbc.relaxed_ticks == 0
