"""Position-level IK: GN/LM convergence, hard joint limits, unreachable targets, several frames, options."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from kinodyn.ik import FrameTask, solve_ik
from kinodyn.model import Model
from kinodyn.spatial import so3_log

from .conftest import ARM7, PANDA, planar_3link_urdf


def within_limits(model: Model, q: np.ndarray) -> bool:
    return bool(np.all(q >= model.lower_limit) and np.all(q <= model.upper_limit))


def pinocchio_placement(urdf: str, q: np.ndarray, frame: str) -> np.ndarray:
    """World placement of ``frame`` by Pinocchio (independent FK)."""
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId(frame)].homogeneous


@pytest.mark.parametrize("method", ["gn", "lm"])
def test_converges_from_nearby_seeds(arm7: Model, method: str) -> None:
    rng = np.random.default_rng(31)
    for _ in range(10):
        q_star = arm7.random_configuration(rng)
        margin = 0.05 * (arm7.upper_limit - arm7.lower_limit)
        q_star = np.clip(q_star, arm7.lower_limit + margin, arm7.upper_limit - margin)
        target = arm7.frame_placement(q_star, "ee_link")
        seed = q_star + rng.uniform(-0.05, 0.05, arm7.nq)
        r = solve_ik(arm7, "ee_link", target, q_seed=seed, method=method, restarts=0,
                     position_tolerance=1e-10, orientation_tolerance=1e-10)
        assert r.success
        assert r.status == "converged"
        assert r.restarts == 0
        assert r.iterations <= 8  # Newton-type convergence from a nearby seed
        assert within_limits(arm7, r.q)
        # Independent FK of the answer (Pinocchio) meets the target.
        T = pinocchio_placement(str(ARM7), r.q, "ee_link")
        assert np.linalg.norm(T[:3, 3] - target[:3, 3]) < 1e-9
        assert np.linalg.norm(so3_log(target[:3, :3] @ T[:3, :3].T)) < 1e-9
        assert r.position_error < 1e-10
        assert r.orientation_error < 1e-10


def test_global_solves_on_random_reachable_poses(arm7: Model) -> None:
    rng = np.random.default_rng(32)
    for _ in range(20):
        target = arm7.frame_placement(arm7.random_configuration(rng), "ee_link")
        r = solve_ik(arm7, "ee_link", target, rng=rng)
        assert r.success
        assert within_limits(arm7, r.q)
        T = arm7.frame_placement(r.q, "ee_link")
        assert np.linalg.norm(T[:3, 3] - target[:3, 3]) < 1e-6
        assert np.linalg.norm(so3_log(target[:3, :3] @ T[:3, :3].T)) < 1e-6


def test_limits_hold_when_the_unconstrained_optimum_is_outside() -> None:
    """Planar 3-link arm with joints limited to [-0.5, 0.5]: the target is reachable only with a joint at
    its limit, and the unconstrained Newton step from the seed leaves the limits (so the box QP is used)."""
    model = Model.from_urdf(planar_3link_urdf(-0.5, 0.5))
    q_limit = np.array([0.5, 0.5, 0.2])  # joints 1 and 2 at their upper limit
    target = model.frame_placement(q_limit, "ee")[:3, 3]
    r = solve_ik(model, "ee", target, kind="position", q_seed=np.zeros(3), restarts=0)
    assert np.any(np.abs(r.q) == 0.5)  # the answer lies exactly on a limit (a box-QP step put it there)
    assert within_limits(model, r.q)
    assert r.success
    assert r.position_error < 1e-6
    # The same target without limits: the unconstrained solution from this seed leaves [-0.5, 0.5].
    free = Model.from_urdf(planar_3link_urdf(-3.0, 3.0))
    unconstrained = solve_ik(free, "ee", target, kind="position", q_seed=np.zeros(3), restarts=0)
    assert unconstrained.success
    assert not within_limits(model, unconstrained.q)
    # Clamping that solution into the limits does not reach the target.
    clamped = np.clip(unconstrained.q, -0.5, 0.5)
    assert np.linalg.norm(model.frame_placement(clamped, "ee")[:3, 3] - target) > 1e-3


def test_unreachable_target_returns_closest_solution() -> None:
    """Position 5 m from the shoulder of the unit 3-link arm (reach 3 m): the closest point is 2 m short."""
    model = Model.from_urdf(planar_3link_urdf(-3.0, 3.0))
    shoulder = np.array([0.0, 0.0, 1.0])
    direction = np.array([0.6, 0.0, 0.8])
    target = shoulder + 5.0 * direction
    r = solve_ik(model, "ee", target, kind="position", restarts=3)
    assert not r.success
    assert r.status == "max_iterations"
    assert r.position_error == pytest.approx(2.0, abs=1e-6)
    reached = model.frame_placement(r.q, "ee")[:3, 3]
    assert np.linalg.norm(target - reached) == pytest.approx(r.position_error, abs=1e-14)
    # Arm stretched toward the target. The error is stationary at the optimum, 2 + d²/4 for a lateral
    # offset d, so an error within 1e-6 of the minimum only bounds d by 2e-3.
    np.testing.assert_allclose(reached, shoulder + 3.0 * direction, atol=2e-3)
    assert within_limits(model, r.q)


def test_several_frames_at_once(arm7: Model) -> None:
    rng = np.random.default_rng(33)
    q_star = arm7.random_configuration(rng)
    tasks = [FrameTask(arm7, "ee_link", arm7.frame_placement(q_star, "ee_link")),
             FrameTask(arm7, "link4", arm7.frame_placement(q_star, "link4")[:3, 3], kind="position")]
    r = solve_ik(arm7, tasks, rng=rng)
    assert r.success
    assert within_limits(arm7, r.q)
    for task in tasks:
        T = arm7.frame_placement(r.q, task.frame)
        assert np.linalg.norm(T[:3, 3] - task.target_position) < 1e-6
    # Over-constrained (13 rows, 7 joints), consistent targets: the solution is unique up to the arm's
    # elbow self-motion being fixed by link4, so the result meets both tasks simultaneously.
    assert r.position_error < 1e-6
    assert r.orientation_error < 1e-6


@pytest.mark.parametrize("kind", ["position", "orientation"])
def test_partial_targets(arm7: Model, kind: str) -> None:
    rng = np.random.default_rng(34)
    target = arm7.frame_placement(arm7.random_configuration(rng), "ee_link")
    given = target[:3, 3] if kind == "position" else target[:3, :3]
    r = solve_ik(arm7, "ee_link", given, kind=kind, rng=rng)
    T = arm7.frame_placement(r.q, "ee_link")
    assert r.success
    if kind == "position":
        assert np.linalg.norm(T[:3, 3] - target[:3, 3]) < 1e-6
        assert r.orientation_error == 0.0
    else:
        assert np.linalg.norm(so3_log(target[:3, :3] @ T[:3, :3].T)) < 1e-6
        assert r.position_error == 0.0


def test_active_joints_keep_the_others_at_their_seed(panda: Model) -> None:
    rng = np.random.default_rng(35)
    target = panda.frame_placement(panda.random_configuration(rng), "panda_hand")
    seed = 0.5 * (panda.lower_limit + panda.upper_limit)
    seed[7] = 0.013  # finger
    r = solve_ik(panda, "panda_hand", target, q_seed=seed, rng=rng, active_joints=panda.joint_names[:7])
    assert r.success
    assert within_limits(panda, r.q)
    assert r.q[7] == 0.013


def test_timeout_and_argument_errors(arm7: Model) -> None:
    target = arm7.frame_placement(arm7.random_configuration(36), "ee_link")
    r = solve_ik(arm7, "ee_link", target, timeout=0.0)
    assert not r.success
    assert r.status == "timeout"
    assert r.iterations == 0
    # Unreachable (3 m away), restarts without end: the deadline, checked between attempts, ends the solve.
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.5]
    r = solve_ik(arm7, "ee_link", far, restarts=10**9, timeout=0.01)
    assert not r.success
    assert r.status == "timeout"
    assert 0 < r.restarts < 10**9
    assert within_limits(arm7, r.q)
    assert r.position_error > 1.0
    with pytest.raises(ValueError, match="method must be one of"):
        solve_ik(arm7, "ee_link", target, method="bfgs")
    with pytest.raises(ValueError, match="give the target pose"):
        solve_ik(arm7, "ee_link")
    with pytest.raises(ValueError, match="target must be None"):
        solve_ik(arm7, [FrameTask(arm7, "ee_link", target)], target)
    with pytest.raises(ValueError, match="q must have shape"):
        solve_ik(arm7, "ee_link", target, q_seed=np.zeros(3))
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match="q_seed must be finite"):
            solve_ik(arm7, "ee_link", target, q_seed=np.full(7, bad))
    for option, value in (("position_tolerance", -1.0), ("orientation_tolerance", np.nan),
                          ("position_tolerance", np.inf)):
        with pytest.raises(ValueError, match=f"{option} must be a positive finite number"):
            solve_ik(arm7, "ee_link", target, **{option: value})
    for timeout in (-1.0, np.nan):
        with pytest.raises(ValueError, match="timeout must be None or a number of seconds >= 0"):
            solve_ik(arm7, "ee_link", target, timeout=timeout)


@pytest.mark.parametrize(("robot", "frame"), [("arm7", "ee_link"), ("panda", "panda_hand")])
def test_held_out_poses_at_trac_ik_accuracy(robot: str, frame: str, request: pytest.FixtureRequest) -> None:
    """500 reachable poses from a seed no tuning or benchmark used, judged by Pinocchio's FK at TRAC-IK's
    default accuracy (1e-5 m, 1e-4 rad) and the joint limits: at least 99.5 % solved, none claimed falsely."""
    model: Model = request.getfixturevalue(robot)
    urdf = str(ARM7 if robot == "arm7" else PANDA)
    pin_model = pin.buildModelFromUrdf(urdf)
    pin_data = pin_model.createData()
    pin_frame = pin_model.getFrameId(frame)
    active = model.joint_names[:7]
    targets = np.random.default_rng(2026)
    restarts = np.random.default_rng(2027)
    solved = 0
    for _ in range(500):
        target = model.frame_placement(model.random_configuration(targets), frame)
        r = solve_ik(model, frame, target, rng=restarts, active_joints=active)
        q_pin = pin.neutral(pin_model)
        q_pin[:7] = r.q[:7]
        pin.framesForwardKinematics(pin_model, pin_data, q_pin)
        T = pin_data.oMf[pin_frame].homogeneous
        position = np.linalg.norm(T[:3, 3] - target[:3, 3])
        orientation = np.linalg.norm(so3_log(target[:3, :3] @ T[:3, :3].T))
        reached = position < 1e-5 and orientation < 1e-4 and within_limits(model, r.q)
        assert reached or not r.success  # success is never claimed for a pose that was not reached
        solved += reached
    assert solved >= 498


def test_floating_base_moves_with_the_joints() -> None:
    """arm7 on a free flyer, every coordinate active: the base steps by the SE(3) exponential in the compiled
    attempt; two frames (base link pose and end effector) pin both the base and the arm."""
    model = Model.from_urdf(ARM7, floating_base=True)
    rng = np.random.default_rng(37)
    q_star = model.random_configuration(rng)
    tasks = [FrameTask(model, "base_link", model.frame_placement(q_star, "base_link")),
             FrameTask(model, "ee_link", model.frame_placement(q_star, "ee_link"))]
    r = solve_ik(model, tasks, rng=rng)
    assert r.success
    np.testing.assert_allclose(np.linalg.norm(r.q[3:7]), 1.0, atol=1e-12)
    assert np.all(r.q[7:] >= model.lower_limit[7:])
    assert np.all(r.q[7:] <= model.upper_limit[7:])
    for task in tasks:
        T = model.frame_placement(r.q, task.frame)
        assert np.linalg.norm(T[:3, 3] - task.target_position) < 1e-6
        assert np.linalg.norm(so3_log(task.target_rotation @ T[:3, :3].T)) < 1e-6
