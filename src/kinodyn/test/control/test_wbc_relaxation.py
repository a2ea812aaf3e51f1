"""WholeBodyController on an infeasible hard level: answered relaxed (relaxation.py) with the equations of
motion exact, the forces in their cones, the torques within the limits and the relaxation reported; feasible
ticks unchanged bit for bit. Second sources: kinodyn's RNEA for the dynamics, the contacts' own cone rows."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from kinodyn.control.wbc import JointLimits, Relaxation, WBCResult, WholeBodyController
from kinodyn.control.wbc.relaxation import CONTACT_MOTION, JOINT_LIMITS, TORQUE_LIMITS
from kinodyn.control.wbc.tasks import PostureTask

import kinodyn as kd

from .test_wbc import (
    CONTACT,
    FEET,
    INEQUALITY_TOL,
    URDF,
    BaseOrientationTask,
    ComTask,
    PointContact,
    standing,
    standing_controller,
)

sys.path.insert(0, str(URDF))
import generate  # (urdf/generate.py: the generated quadrupeds)

TOL = 1e-8


@pytest.fixture(scope="module")
def quadruped() -> kd.Model:
    return kd.Model.from_urdf(URDF / "quadruped.urdf", floating_base=True)


def weak(m: kd.Model, effort: float, max_acceleration: float) -> JointLimits:
    urdf = JointLimits.from_model(m)
    return JointLimits(np.full(urdf.effort.size, effort), urdf.lower, urdf.upper, urdf.velocity,
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


@pytest.mark.parametrize("robot", ["quadruped", "arm7"])
def test_the_last_stage_answers_whatever_the_bound(quadruped: kd.Model, robot: str) -> None:
    """Slacks bounded at 1e-6 of each limit: the bounded stages have no solution, the last one (unbounded
    slacks) answers. On the quadruped (1 N m against the weight) it is the contacts' stage; on arm7 (no
    contacts: a joint past its limit with 1e-3 of its effort) the torque limits' stage."""
    stages: tuple[str, ...]
    if robot == "quadruped":
        q, v = standing(quadruped)
        limits = weak(quadruped, 1.0, 1.0)
        wbc = standing_controller(quadruped, q, limits=limits, relaxation=Relaxation(bound=1e-6))
        model, stages = quadruped, (JOINT_LIMITS, TORQUE_LIMITS, CONTACT_MOTION)
    else:
        model = kd.Model.from_urdf(URDF / "arm7.urdf")
        q = np.clip(model.neutral(), model.lower_limit, model.upper_limit)
        wbc = WholeBodyController(model, limits=weak(model, 1e-3, 1.0), relaxation=Relaxation(bound=1e-6))
        wbc.add_task(PostureTask(model, q.copy(), kp=50.0, kd=10.0))
        v = np.zeros(model.nv)
        q[1], v[1] = model.upper_limit[1] + 0.2, 2.0
        limits, stages = wbc.limits, (JOINT_LIMITS, TORQUE_LIMITS)
    r = wbc.update(q, v)
    assert r.status == "relaxed", r.message
    assert r.relaxed == stages
    assert r.tau is not None
    assert r.qdd is not None
    assert np.all(np.isfinite(r.tau))
    assert np.all(np.abs(r.tau) <= limits.effort)
    assert r.dynamics_residual <= TOL
    if robot == "arm7":  # the QP's own torque is RNEA's: the answer is past the first stages' slack bound
        low, high = limits.acceleration_bounds(q, v)
        joints = np.maximum(low - r.qdd, r.qdd - high).max() / limits.max_acceleration
        torques = ((np.abs(model.rnea(q, v, r.qdd)) - limits.effort) / limits.effort).max()
        assert max(joints, torques) > 1e-3
    assert wbc.relaxed_ticks == 1


THROWN_BASE = np.array([0.5, 1.0, -0.2, -5.0, 1.0, 0.2])  # m/s, rad/s: a robot hit hard, spinning


def check_thrown(m: kd.Model, r: WBCResult, q: np.ndarray, v: np.ndarray, contacts: list[PointContact],
                 solver: str) -> None:
    """Relaxed at the last stage; the unactuated equations of motion exact against kinodyn's RNEA (to
    round-off relative to the generalized forces at this speed); the forces in their cones and bounds (each
    contact's own rows); the output torque finite and within the effort limits."""
    assert r.status == "relaxed", r.message
    assert r.relaxed == (JOINT_LIMITS, TORQUE_LIMITS, CONTACT_MOTION)
    assert "contact motion by up to" in r.message
    assert r.tau is not None
    assert r.qdd is not None
    assert np.all(np.isfinite(r.tau))
    assert np.all(np.abs(r.tau) <= m.effort_limit[6:])
    size = 1.0 + np.abs(m.rnea(q, v, np.zeros(m.nv))).max()
    assert r.dynamics_residual <= TOL * size
    generalized = m.rnea(q, v, r.qdd)
    for contact in contacts:
        f = r.forces[contact.name]
        generalized -= m.frame_jacobian(q, contact.frame)[:3].T @ f
        D, lo, hi = contact.force_inequalities(r.evaluation, contact.f_max)
        tolerance = INEQUALITY_TOL[solver] * (1.0 + np.abs(f).max())
        assert np.all(D @ f <= hi + tolerance)
        assert np.all(D @ f >= lo - tolerance)
    np.testing.assert_allclose(generalized[:6], 0.0, atol=TOL * size)


@pytest.mark.parametrize("solver", ["daqp", "osqp"])
def test_a_thrown_quadruped_is_answered_relaxed(quadruped: kd.Model, solver: str) -> None:
    """All four feet in stance while the base tumbles and the legs swing at tens of rad/s: no point of the
    hard level exists (the same controller without relaxation fails), nor one within ten times each limit;
    the last stage answers."""
    q, _ = standing(quadruped)
    v = np.concatenate((THROWN_BASE, np.random.default_rng(1).normal(scale=50.0, size=quadruped.nv - 6)))
    strict = standing_controller(quadruped, q, solver=solver, relaxation=Relaxation(enabled=False))
    assert strict.update(q, v).status == "infeasible"
    wbc = standing_controller(quadruped, q, solver=solver)
    r = wbc.update(q, v)
    check_thrown(quadruped, r, q, v, [PointContact(f, **CONTACT) for f in FEET], solver)
    assert wbc.relaxed_ticks == 1


# A generated 6 kg quadruped with legs of 0.25 m and forward knees (examples/acceptance_matrix.py's
# small_fwd_knees) trotting on kinodyn.sim after a lateral push of half its weight: two diagonal feet in
# stance, the base rolling at 5 rad/s, a swinging knee at 215 rad/s
PUSHED_Q = np.array([0.094, 0.405, 0.223, 0.023, 0.049, -0.008, 0.999, 0.391, -0.534, 0.209, -0.649, 0.105,
                     0.022, -0.582, -0.127, 0.0, 0.136, -0.891, 0.79])
PUSHED_V = np.array([0.45, 0.9, -0.13, -5.37, 1.05, 0.14, 1.63, 74.01, -214.82, 5.0, -5.04, 9.49, 4.3, 6.6,
                     0.0, 15.02, 56.55, -168.32])
PUSHED_STANCE = ("LF_FOOT", "RH_FOOT")


@pytest.mark.parametrize("solver", ["daqp", "osqp"])
def test_a_pushed_small_quadruped_is_answered_relaxed(solver: str) -> None:
    variant = generate.QuadrupedVariant("small_fwd_knees", 6.0, 0.25, "forward", "forward", (0.03, 0.0))
    robot = generate.quadruped_variant(variant)
    m = kd.Model.from_urdf(generate.render(robot), floating_base=True)
    q = PUSHED_Q.copy()
    q[3:7] /= np.linalg.norm(q[3:7])
    contacts = [PointContact(f, mu=0.6) for f in PUSHED_STANCE]
    controllers = []
    for relaxation in (Relaxation(enabled=False), Relaxation()):
        wbc = WholeBodyController(m, contacts, solver=solver, relaxation=relaxation)
        com = ComTask(kp=100.0, kd=20.0)
        com.set_reference(m.com(q))
        base = BaseOrientationTask(m, kp=100.0, kd=20.0)
        base.set_reference(np.eye(3))
        wbc.add_task(com)
        wbc.add_task(base)
        wbc.add_task(PostureTask(m, np.array([c.nominal for c in robot.controlled]), kp=50.0, kd=10.0,
                                 weight=1e-2))
        controllers.append(wbc)
    strict, wbc = controllers
    assert strict.update(q, PUSHED_V).status == "infeasible"
    check_thrown(m, wbc.update(q, PUSHED_V), q, PUSHED_V, contacts, solver)
