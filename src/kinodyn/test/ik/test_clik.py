"""CLIK (Robot Dynamics lecture notes (ETH), §2.9.4): tracking a circle and a rotation; error bounded, falling
with the gain."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from kinodyn.ik import FrameTask, solve_ik
from kinodyn.ik.clik import ClosedLoopIK
from kinodyn.model import Model
from kinodyn.spatial import so3_exp

RADIUS = 0.1  # m
OMEGA = 2.0 * np.pi / 2.0  # rad/s: one turn in 2 s
QUADRUPED = Path(__file__).resolve().parents[4] / "urdf" / "quadruped.urdf"
SPIN = 0.5  # rad/s about the world z axis
DT = 1e-3
STEPS = 2000
Reference = Callable[[float], tuple[list[np.ndarray], list[np.ndarray]]]  # t -> ([pose], [twist])


def circle_reference(center: np.ndarray, C0: np.ndarray) -> Reference:
    """Pose and twist of a frame on a horizontal circle, turning at SPIN about world z."""

    def reference(t: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
        position = center + RADIUS * np.array([np.cos(OMEGA * t), np.sin(OMEGA * t), 0.0])
        velocity = RADIUS * OMEGA * np.array([-np.sin(OMEGA * t), np.cos(OMEGA * t), 0.0])
        rotation = so3_exp([0.0, 0.0, SPIN * t]) @ C0
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = rotation, position
        return [T], [np.concatenate([velocity, [0.0, 0.0, SPIN]])]

    return reference


@pytest.fixture(scope="module")
def start(arm7: Model) -> tuple[np.ndarray, Reference]:
    """A configuration on the circle's start point (found by IK) and the reference."""
    q_mid = 0.5 * (arm7.lower_limit + arm7.upper_limit)
    T0 = arm7.frame_placement(q_mid, "ee_link")
    center = T0[:3, 3] - np.array([RADIUS, 0.0, 0.0])
    reference = circle_reference(center, T0[:3, :3])
    r = solve_ik(arm7, "ee_link", reference(0.0)[0][0], q_seed=q_mid)
    assert r.success
    return r.q, reference


def test_tracking_error_bounded_and_decreasing_with_gain(arm7: Model,
                                                         start: tuple[np.ndarray, Reference]) -> None:
    q0, reference = start
    worst = []
    for gain in (2.0, 10.0, 50.0):
        clik = ClosedLoopIK(arm7, [FrameTask(arm7, "ee_link", np.eye(4))], gain=gain)
        _, position_errors, orientation_errors = clik.track(q0, reference, DT, STEPS)
        # Explicit Euler: each step misses the curved path by about a dt² / 2 (a = r ω² centripetal),
        # and the feedback k dt per step removes it, so the steady error is about a dt / (2 k).
        steady = RADIUS * OMEGA**2 * DT / (2.0 * gain)
        late = slice(STEPS // 2, None)
        assert np.max(position_errors[late]) < 2.0 * steady
        assert np.max(position_errors[late]) > 0.5 * steady  # the estimate is the right size
        assert np.max(orientation_errors) < 1e-3
        worst.append(np.max(position_errors))
    assert worst[0] > worst[1] > worst[2]


def test_feedback_removes_an_initial_offset(arm7: Model, start: tuple[np.ndarray, Reference]) -> None:
    """Start 1 cm off the path: the error decays like exp(-k t) (Robot Dynamics lecture notes (ETH), (2.241)
    closed loop)."""
    q0, reference = start
    gain = 10.0
    clik = ClosedLoopIK(arm7, [FrameTask(arm7, "ee_link", np.eye(4))], gain=gain)
    task = FrameTask(arm7, "ee_link", reference(0.0)[0][0])
    offset_target = reference(0.0)[0][0].copy()
    offset_target[:3, 3] += [0.0, 0.0, 0.01]
    r = solve_ik(arm7, "ee_link", offset_target, q_seed=q0)
    assert r.success
    assert task.error(arm7, r.q)[:3] @ [0, 0, 1] == pytest.approx(-0.01, abs=1e-6)
    _, position_errors, _ = clik.track(r.q, reference, DT, 500)
    for t in (0.1, 0.2, 0.3):
        assert position_errors[int(t / DT)] == pytest.approx(0.01 * np.exp(-gain * t), rel=0.05)
    # Without feedback (k = 0) the offset stays: only the feed-forward twist is tracked.
    open_loop = ClosedLoopIK(arm7, [FrameTask(arm7, "ee_link", np.eye(4))], gain=0.0)
    _, open_errors, _ = open_loop.track(r.q, reference, DT, 300)
    assert open_errors[-1] > 0.009


def test_active_joints_hold_the_floating_base_and_the_other_joints() -> None:
    """CLIK over one leg of the floating quadruped: the base and the other legs get zero velocity, the leg's
    joint velocity is the pseudo-inverse of its own Jacobian columns (second source: ``frame_jacobian``),
    and the foot converges to a target the leg alone can reach, the base pose unchanged."""
    model = Model.from_urdf(QUADRUPED, floating_base=True)
    leg = ["LF_HAA", "LF_HFE", "LF_KFE"]
    q0 = model.random_configuration(1)
    q_goal = q0.copy()
    leg_q = [model.idx_q[model.joint_body[model.joint_id(n)]] for n in leg]
    q_goal[leg_q] += [0.1, -0.2, 0.3]
    target = model.frame_placement(q_goal, "LF_FOOT")
    clik = ClosedLoopIK(model, [FrameTask(model, "LF_FOOT", target, kind="position")], gain=10.0,
                        active_joints=leg)
    qdot = clik.velocity(q0, [target], [np.zeros(6)])
    leg_v = [model.idx_v[model.joint_body[model.joint_id(n)]] for n in leg]
    others = np.setdiff1d(np.arange(model.nv), leg_v)
    np.testing.assert_array_equal(qdot[others], 0.0)
    J = model.frame_jacobian(q0, "LF_FOOT", "local_world_aligned")[:3, leg_v]
    error = target[:3, 3] - model.frame_placement(q0, "LF_FOOT")[:3, 3]
    np.testing.assert_allclose(qdot[leg_v], np.linalg.pinv(J) @ (10.0 * error), rtol=0, atol=1e-12)
    configurations, position_errors, _ = clik.track(q0, lambda t: ([target], [np.zeros(6)]), 0.01, 300)
    assert position_errors[0] > 0.01
    assert position_errors[-1] < 1e-9
    np.testing.assert_array_equal(configurations[-1][:7], q0[:7])
