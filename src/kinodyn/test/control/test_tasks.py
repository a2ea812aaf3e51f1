"""Whole-body tasks (kinodyn.control.wbc.tasks) on the quadruped (floating base) and arm7.

Second sources: J v against central differences of the task quantity along ``model.integrate``, ``Jdot v``
against central differences of ``J v`` along the same motion, ``b`` against its closed form built from the
model's separate calls and scipy's rotation log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.wbc import tasks
from kinodyn.control.wbc.layout import VariableLayout
from kinodyn.evaluation import Evaluation, Evaluator
from scipy.spatial.transform import Rotation

from .conftest import project_model

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn.model import Model

H = 1e-6
FD_TOL = 1e-6  # relative to the larger of 1 and the compared vector's largest entry
FRAMES = {"quadruped": ("LF_FOOT", "RH_SHANK", "base_link", "imu_link"), "arm7": ("ee_link", "link4")}


@pytest.fixture(scope="module", params=["quadruped", "arm7"])
def model(request: pytest.FixtureRequest) -> Model:
    return project_model(request.param)


def state(model: Model, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return model.random_configuration(rng), rng.normal(size=model.nv)


def layout_of(model: Model) -> VariableLayout:
    """Two contacts (point, surface) and torque variables, so non-qdd columns exist and must stay zero."""
    n_tau = model.nv - 6 if model.floating_base else model.nv
    return VariableLayout.build(model.nv, [("LF_FOOT", 3), ("RH_FOOT", 6)], n_tau, torque_variables=True)


def evaluate(model: Model, task: tasks.Task, q: np.ndarray, v: np.ndarray) -> Evaluation:
    return Evaluator(model, task.frames).evaluate(q, v)


def along(model: Model, q: np.ndarray, v: np.ndarray, f: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """d/dt f(q(t)) at t = 0 along q(t) = integrate(q, v, t), central difference."""
    return (f(model.integrate(q, v, H)) - f(model.integrate(q, v, -H))) / (2 * H)


def close_fd(actual: np.ndarray, expected: np.ndarray) -> None:
    scale = max(1.0, float(np.max(np.abs(expected))))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=FD_TOL * scale)


def frame_rate(model: Model, frame: str, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """[dp/dt; w] of ``frame`` (world axes) from placements at q(-H), q(+H)."""
    Tm = model.frame_placement(model.integrate(q, v, -H), frame)
    Tp = model.frame_placement(model.integrate(q, v, H), frame)
    w = Rotation.from_matrix(Tp[:3, :3] @ Tm[:3, :3].T).as_rotvec() / (2 * H)
    return np.r_[(Tp[:3, 3] - Tm[:3, 3]) / (2 * H), w]


def check_kinematics(model: Model, task: tasks.Task, rate: np.ndarray, q: np.ndarray, v: np.ndarray) -> None:
    """With zero gains and zero reference rates: A v is ``rate`` and -b is d/dt (A v) along the motion;
    only the qdd columns are non-zero."""
    layout = layout_of(model)
    rows = task.rows(evaluate(model, task, q, v), layout)
    assert rows.A.shape == (task.dim, layout.size)
    assert rows.b.shape == (task.dim,)
    assert not rows.A[:, layout.qdd.stop:].any()
    close_fd(rows.A[:, layout.qdd] @ v, rate)
    def task_velocity(qq: np.ndarray) -> np.ndarray:
        return task.rows(evaluate(model, task, qq, v), layout).A[:, layout.qdd] @ v

    close_fd(-rows.b, along(model, q, v, task_velocity))


# --- FrameTask ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_frame_task_jacobian_and_bias_are_derivatives(model: Model, seed: int) -> None:
    q, v = state(model, seed)
    for frame in FRAMES[model.name]:
        task = tasks.FrameTask(model, frame, kp=0.0, kd=0.0)
        task.set_reference(np.eye(4))
        check_kinematics(model, task, frame_rate(model, frame, q, v), q, v)


def random_pose(rng: np.random.Generator) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.from_rotvec(rng.uniform(-1.5, 1.5, 3)).as_matrix()
    T[:3, 3] = rng.normal(size=3)
    return T


def test_frame_task_b_closed_form(model: Model) -> None:
    rng = np.random.default_rng(7)
    q, v = state(model, 11)
    frame = FRAMES[model.name][0]
    kp, kd = rng.uniform(1, 100, 6), rng.uniform(1, 20, 6)
    pose, twist, acc = random_pose(rng), rng.normal(size=6), rng.normal(size=6)
    task = tasks.FrameTask(model, frame, kp, kd)
    task.set_reference(pose, twist, acc)
    rows = task.rows(evaluate(model, task, q, v), layout_of(model))
    T = model.frame_placement(q, frame)
    e = np.r_[pose[:3, 3] - T[:3, 3], Rotation.from_matrix(pose[:3, :3] @ T[:3, :3].T).as_rotvec()]
    J = model.frame_jacobian(q, frame, "local_world_aligned")
    jdot_v = model.frame_bias_acceleration(q, v, frame, "local_world_aligned")
    expected = acc + kp * e + kd * (twist - J @ v) - jdot_v
    np.testing.assert_allclose(task.error, e, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rows.b, expected, rtol=1e-12, atol=1e-10)
    assert np.linalg.norm(e[3:]) > 0.1  # the reference is away from the frame: the error terms count


def test_frame_task_error_is_zero_at_the_reference(model: Model) -> None:
    q, v = state(model, 3)
    frame = FRAMES[model.name][0]
    J = model.frame_jacobian(q, frame)
    acc = np.arange(6.0)
    task = tasks.FrameTask(model, frame, kp=50.0, kd=10.0)
    task.set_reference(model.frame_placement(q, frame), J @ v, acc)
    rows = task.rows(evaluate(model, task, q, v), layout_of(model))
    np.testing.assert_allclose(task.error, 0.0, atol=1e-12)
    np.testing.assert_allclose(rows.b, acc - model.frame_bias_acceleration(q, v, frame), rtol=0, atol=1e-9)


def test_frame_task_mask_selects_rows(model: Model) -> None:
    q, v = state(model, 5)
    frame = FRAMES[model.name][0]
    mask = [True, False, True, False, True, True]
    weight = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    full = tasks.FrameTask(model, frame, 30.0, 5.0)
    masked = tasks.FrameTask(model, frame, 30.0, 5.0, weight, mask)
    reference = random_pose(np.random.default_rng(1))
    ev = evaluate(model, full, q, v)
    for task in (full, masked):
        task.set_reference(reference)
    a, b = full.rows(ev, layout_of(model)), masked.rows(ev, layout_of(model))
    assert masked.dim == 4
    assert b.A.shape[0] == 4
    np.testing.assert_array_equal(b.A, a.A[mask])
    np.testing.assert_array_equal(b.b, a.b[mask])
    np.testing.assert_array_equal(masked.error, full.error[mask])
    np.testing.assert_array_equal(masked.weight, [1.0, 3.0, 5.0, 6.0])


def test_frame_task_half_references_give_the_rows_of_set_reference(model: Model) -> None:
    """``set_position_reference`` + ``set_orientation_reference`` (the per-tick path of locomotion) give
    exactly the rows of ``set_reference`` with the same pose, twist and acceleration; a refusal changes
    nothing."""
    q, v = state(model, 6)
    frame = FRAMES[model.name][0]
    rng = np.random.default_rng(2)
    pose, twist, acceleration = random_pose(rng), rng.normal(size=6), rng.normal(size=6)
    whole, halves = tasks.FrameTask(model, frame, 30.0, 5.0), tasks.FrameTask(model, frame, 30.0, 5.0)
    whole.set_reference(pose, twist, acceleration)
    with pytest.raises(RuntimeError, match="no reference"):
        halves.set_position_reference(pose[:3, 3], twist[:3], acceleration[:3])
    halves.set_reference(np.eye(4))
    halves.set_position_reference(pose[:3, 3], twist[:3], acceleration[:3])
    halves.set_orientation_reference(pose[:3, :3], twist[3:], acceleration[3:])
    ev = evaluate(model, whole, q, v)
    a, b = whole.rows(ev, layout_of(model)), halves.rows(ev, layout_of(model))
    np.testing.assert_array_equal(b.A, a.A)
    np.testing.assert_array_equal(b.b, a.b)
    zeros = np.zeros(3)
    with pytest.raises(ValueError, match="finite"):
        halves.set_position_reference(zeros, (0.0, np.nan, 0.0), zeros)
    with pytest.raises(ValueError, match="not a rotation matrix"):
        halves.set_orientation_reference(np.diag([1.0, 1.0, -1.0]), zeros, zeros)
    np.testing.assert_array_equal(halves.rows(ev, layout_of(model)).b, a.b)


def test_frame_task_rejects_bad_inputs(quadruped: Model) -> None:
    with pytest.raises(KeyError, match="LF_FOTO"):
        tasks.FrameTask(quadruped, "LF_FOTO", 1.0, 1.0)
    with pytest.raises(ValueError, match="kp"):
        tasks.FrameTask(quadruped, "LF_FOOT", np.nan, 1.0)
    with pytest.raises(ValueError, match="kd"):
        tasks.FrameTask(quadruped, "LF_FOOT", 1.0, [1.0, 2.0])
    with pytest.raises(ValueError, match="weight"):
        tasks.FrameTask(quadruped, "LF_FOOT", 1.0, 1.0, weight=-1.0)
    with pytest.raises(ValueError, match="mask"):
        tasks.FrameTask(quadruped, "LF_FOOT", 1.0, 1.0, mask=[False] * 6)
    with pytest.raises(ValueError, match="mask"):
        tasks.FrameTask(quadruped, "LF_FOOT", 1.0, 1.0, mask=[1, 1, 1, 0, 0, 0])
    task = tasks.FrameTask(quadruped, "LF_FOOT", 1.0, 1.0)
    q, v = state(quadruped, 0)
    with pytest.raises(RuntimeError, match="set_reference"):
        task.rows(evaluate(quadruped, task, q, v), layout_of(quadruped))
    bad_rotation = np.eye(4)
    bad_rotation[0, 0] = 2.0
    for pose, what in ((bad_rotation, "rotation"), (np.full((4, 4), np.nan), "last row"), (np.eye(3), "4x4")):
        with pytest.raises(ValueError, match=what):
            task.set_reference(pose)
    with pytest.raises(ValueError, match="twist"):
        task.set_reference(np.eye(4), twist=[0.0, 0.0, np.inf, 0.0, 0.0, 0.0])
    assert task.pose is None  # a rejected reference leaves the task unchanged


# --- BaseOrientationTask --------------------------------------------------------------------------------


def test_base_orientation_task_rows(quadruped: Model) -> None:
    q, v = state(quadruped, 21)
    task = tasks.BaseOrientationTask(quadruped, kp=0.0, kd=0.0)
    task.set_reference(np.eye(3))
    assert task.frames == ("base_link",)
    assert task.dim == 3
    check_kinematics(quadruped, task, frame_rate(quadruped, "base_link", q, v)[3:], q, v)
    # the base's angular velocity is v[3:6] in the base frame: world axes through C_WB
    C = quadruped.frame_placement(q, "base_link")[:3, :3]
    rows = task.rows(evaluate(quadruped, task, q, v), layout_of(quadruped))
    np.testing.assert_allclose(rows.A[:, :quadruped.nv] @ v, C @ v[3:6], rtol=0, atol=1e-12)

    rng = np.random.default_rng(2)
    kp, kd, w, dw = rng.uniform(1, 50, 3), rng.uniform(1, 10, 3), rng.normal(size=3), rng.normal(size=3)
    C_ref = Rotation.from_rotvec(rng.uniform(-1, 1, 3))
    task = tasks.BaseOrientationTask(quadruped, kp, kd, mask=[True, False, True])
    task.set_reference(C_ref.as_quat(), w, dw)  # scipy's quaternion is (x, y, z, w), as the task's
    rows = task.rows(evaluate(quadruped, task, q, v), layout_of(quadruped))
    e = (C_ref * Rotation.from_matrix(C).inv()).as_rotvec()
    J = quadruped.frame_jacobian(q, "base_link")[3:]
    expected = dw + kp * e + kd * (w - J @ v) - quadruped.frame_bias_acceleration(q, v, "base_link")[3:]
    np.testing.assert_allclose(task.error, e[[0, 2]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rows.b, expected[[0, 2]], rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(rows.A[:, :quadruped.nv], J[[0, 2]], rtol=0, atol=1e-14)

    task.set_reference(C, C @ v[3:6])
    task.rows(evaluate(quadruped, task, q, v), layout_of(quadruped))
    np.testing.assert_allclose(task.error, 0.0, atol=1e-12)


def test_base_orientation_task_rejects_bad_inputs(quadruped: Model) -> None:
    arm7 = project_model("arm7")
    with pytest.raises(ValueError, match="floating-base"):
        tasks.BaseOrientationTask(arm7, 1.0, 1.0)
    with pytest.raises(ValueError, match="mask"):
        tasks.BaseOrientationTask(quadruped, 1.0, 1.0, mask=[True] * 6)
    with pytest.raises(ValueError, match="kp"):
        tasks.BaseOrientationTask(quadruped, [1.0, -1.0, 1.0], 1.0)
    task = tasks.BaseOrientationTask(quadruped, 1.0, 1.0)
    with pytest.raises(ValueError, match="normalize"):
        task.set_reference([0.0, 0.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="angular velocity"):
        task.set_reference(np.eye(3), [np.nan, 0.0, 0.0])


# --- ComTask --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_com_task_jacobian_and_bias_are_derivatives(model: Model, seed: int) -> None:
    q, v = state(model, 30 + seed)
    task = tasks.ComTask(kp=0.0, kd=0.0)
    task.set_reference(np.zeros(3))
    check_kinematics(model, task, along(model, q, v, model.com), q, v)


def test_com_task_b_closed_form_error_and_mask(model: Model) -> None:
    rng = np.random.default_rng(4)
    q, v = state(model, 40)
    kp, kd, c_ref, c_vel, c_acc = (rng.uniform(1, 50, 3), rng.uniform(1, 10, 3), rng.normal(size=3),
                                   rng.normal(size=3), rng.normal(size=3))
    task = tasks.ComTask(kp, kd, mask=[True, True, False])
    task.set_reference(c_ref, c_vel, c_acc)
    rows = task.rows(evaluate(model, task, q, v), layout_of(model))
    J = model.com_jacobian(q)
    jdot_v = along(model, q, v, lambda qq: model.com_jacobian(qq) @ v)
    e = c_ref - model.com(q)
    expected = c_acc + kp * e + kd * (c_vel - J @ v) - jdot_v
    np.testing.assert_allclose(task.error, e[:2], rtol=0, atol=1e-12)
    close_fd(rows.b, expected[:2])
    np.testing.assert_allclose(rows.A[:, :model.nv], J[:2], rtol=0, atol=1e-12)

    task.set_reference(model.com(q), J @ v)
    rows = task.rows(evaluate(model, task, q, v), layout_of(model))
    np.testing.assert_allclose(task.error, 0.0, atol=1e-12)
    close_fd(rows.b, -jdot_v[:2])


def test_com_task_saturates_the_error_and_the_desired_acceleration(quadruped: Model) -> None:
    """``max_error`` scales the masked error to its norm before the PD, ``max_acceleration`` the masked
    desired acceleration (direction kept): the closed form with the clipped vectors; ``error`` unclipped."""
    q, v = state(quadruped, 41)
    kp, kd = np.array([30.0, 20.0, 5.0]), np.array([8.0, 6.0, 2.0])
    c, cdot = quadruped.com(q), quadruped.com_jacobian(q) @ v
    task = tasks.ComTask(kp, kd, mask=[True, True, False])
    task.set_reference(c + np.array([0.3, -0.4, 9.0]), cdot)  # masked error (0.3, -0.4): norm 0.5; z left out
    ev = evaluate(quadruped, task, q, v)
    unclipped = task.rows(ev, layout_of(quadruped)).b
    bias = unclipped - kp[:2] * [0.3, -0.4]  # -Jdot v (zero velocity error)
    task.max_error = 0.1
    clipped = task.rows(ev, layout_of(quadruped)).b
    np.testing.assert_allclose(task.error, [0.3, -0.4], atol=1e-12)
    np.testing.assert_allclose(clipped - bias, kp[:2] * [0.06, -0.08], atol=1e-9)
    task.max_acceleration = 1.0  # the desired (1.8, -1.6) -> norm 1, the same direction
    desired = task.rows(ev, layout_of(quadruped)).b - bias
    np.testing.assert_allclose(desired, np.array([1.8, -1.6]) / np.hypot(1.8, -1.6), atol=1e-9)
    task.max_error, task.max_acceleration = 0.6, 13.0  # not reached (0.5 m, |(9, -8)| = 12): unclipped
    np.testing.assert_allclose(task.rows(ev, layout_of(quadruped)).b, unclipped, atol=1e-12)


def test_com_task_rejects_bad_inputs(quadruped: Model) -> None:
    with pytest.raises(ValueError, match="mask"):
        tasks.ComTask(1.0, 1.0, mask=[True] * 6)
    with pytest.raises(ValueError, match="weight"):
        tasks.ComTask(1.0, 1.0, weight=np.inf)
    task = tasks.ComTask(1.0, 1.0)
    q, v = state(quadruped, 0)
    with pytest.raises(RuntimeError, match="set_reference"):
        task.rows(evaluate(quadruped, task, q, v), layout_of(quadruped))
    with pytest.raises(ValueError, match="CoM position"):
        task.set_reference([0.0, np.nan, 0.0])


# --- CentroidalMomentumTask -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_centroidal_task_rows_are_the_momentum_and_its_rate(model: Model, seed: int) -> None:
    q, v = state(model, 50 + seed)
    task = tasks.CentroidalMomentumTask(kd=0.0)
    layout = layout_of(model)
    rows = task.rows(evaluate(model, task, q, v), layout)
    A_G = model.centroidal_momentum_matrix(q)
    np.testing.assert_allclose(rows.A[:, layout.qdd], A_G, rtol=0, atol=1e-12)
    assert not rows.A[:, layout.qdd.stop:].any()
    mass = float(model.mass[1:].sum())
    close_fd(rows.A[:3, layout.qdd] @ v, mass * along(model, q, v, model.com))  # linear momentum = m v_com
    close_fd(-rows.b, along(model, q, v, lambda qq: model.centroidal_momentum_matrix(qq) @ v))


def test_centroidal_task_b_closed_form_and_mask(model: Model) -> None:
    rng = np.random.default_rng(8)
    q, v = state(model, 60)
    kd, kp = rng.uniform(1, 10, 6), rng.uniform(1, 50, 3)
    h_ref, rate, c_ref = rng.normal(size=6), rng.normal(size=6), rng.normal(size=3)
    mask = [True, False, True, True, True, False]
    task = tasks.CentroidalMomentumTask(kd, mask=mask, kp=kp)
    task.set_reference(h_ref, rate, c_ref)
    rows = task.rows(evaluate(model, task, q, v), layout_of(model))
    A_G = model.centroidal_momentum_matrix(q)
    mass = float(model.mass[1:].sum())
    e = h_ref - A_G @ v
    expected = rate + kd * e - along(model, q, v, lambda qq: model.centroidal_momentum_matrix(qq) @ v)
    expected[:3] += mass * kp * (c_ref - model.com(q))
    np.testing.assert_allclose(task.error, e[mask], rtol=0, atol=1e-12)
    close_fd(rows.b, expected[mask])

    task = tasks.CentroidalMomentumTask(kd)
    task.set_reference(A_G @ v)
    task.rows(evaluate(model, task, q, v), layout_of(model))
    np.testing.assert_allclose(task.error, 0.0, atol=1e-12)


def test_centroidal_task_rejects_bad_inputs(quadruped: Model) -> None:
    with pytest.raises(ValueError, match="kp"):
        tasks.CentroidalMomentumTask(1.0, kp=[1.0] * 6)
    task = tasks.CentroidalMomentumTask(1.0, kp=10.0)
    q, v = state(quadruped, 0)
    with pytest.raises(RuntimeError, match="no reference CoM"):
        task.rows(evaluate(quadruped, task, q, v), layout_of(quadruped))
    with pytest.raises(ValueError, match="momentum"):
        task.set_reference(momentum=[0.0] * 5)


# --- PostureTask ----------------------------------------------------------------------------------------


def test_posture_task_rows(model: Model) -> None:
    rng = np.random.default_rng(9)
    q, v = state(model, 70)
    iq, iv = (7, 6) if model.floating_base else (0, 0)
    n = model.nv - iv
    task = tasks.PostureTask(model, model.random_configuration(rng)[iq:], 0.0, 0.0)
    assert task.dim == n
    check_kinematics(model, task, along(model, q, v, lambda qq: qq[iq:]), q, v)

    kp, kd = rng.uniform(1, 50, n), rng.uniform(1, 10, n)
    q_ref = model.random_configuration(rng)[iq:]
    v_ref = rng.uniform(-1, 1, n) * np.minimum(model.velocity_limit[iv:], 1.0)
    a_ref = rng.normal(size=n)
    task = tasks.PostureTask(model, q_ref, kp, kd, weight=np.arange(1.0, n + 1))
    task.set_reference(q_ref, v_ref, a_ref)
    rows = task.rows(evaluate(model, task, q, v), layout_of(model))
    np.testing.assert_array_equal(rows.A[:, :iv], 0.0)
    np.testing.assert_array_equal(rows.A[:, iv:model.nv], np.eye(n))
    np.testing.assert_allclose(task.error, q_ref - q[iq:], rtol=0, atol=1e-15)
    np.testing.assert_allclose(rows.b, a_ref + kp * (q_ref - q[iq:]) + kd * (v_ref - v[iv:]), rtol=1e-14)

    task.set_reference(q[iq:])
    task.rows(evaluate(model, task, q, v), layout_of(model))
    np.testing.assert_array_equal(task.error, 0.0)


def test_posture_task_rejects_bad_inputs() -> None:
    arm7 = project_model("arm7")
    with pytest.raises(ValueError, match="joint4"):
        tasks.PostureTask(arm7, np.zeros(7), 1.0, 1.0)  # joint4's range is [-3.07, -0.07]
    q_ok = arm7.neutral()
    q_ok[3] = -1.0
    with pytest.raises(ValueError, match="shape"):
        tasks.PostureTask(arm7, q_ok[:6], 1.0, 1.0)
    with pytest.raises(ValueError, match="kd"):
        tasks.PostureTask(arm7, q_ok, 1.0, [1.0] * 6)
    task = tasks.PostureTask(arm7, q_ok, 1.0, 1.0)
    with pytest.raises(ValueError, match="joint1"):
        task.set_reference(q_ok, v_ref=[1e3, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(task.v_ref, 0.0)


# --- ContactForceTask -----------------------------------------------------------------------------------


def test_contact_force_task_selects_the_contact_slice(quadruped: Model) -> None:
    layout = layout_of(quadruped)
    q, v = state(quadruped, 0)
    ev = Evaluator(quadruped).evaluate(q, v)
    point = tasks.ContactForceTask("LF_FOOT")
    rows = point.rows(ev, layout)
    assert rows.A.shape == (3, layout.size)
    np.testing.assert_array_equal(rows.A[:, 18:21], np.eye(3))
    assert np.count_nonzero(rows.A) == 3
    np.testing.assert_array_equal(rows.b, 0.0)

    wrench = np.arange(1.0, 7.0)
    surface = tasks.ContactForceTask("RH_FOOT", dim=6, f_ref=wrench, weight=2.0)
    rows = surface.rows(ev, layout)
    np.testing.assert_array_equal(rows.A[:, 21:27], np.eye(6))
    assert np.count_nonzero(rows.A) == 6
    np.testing.assert_array_equal(rows.b, wrench)

    inactive = tasks.ContactForceTask("RF_FOOT").rows(ev, layout)
    assert inactive.A.shape == (0, layout.size)
    assert inactive.b.shape == (0,)


def test_contact_force_task_rejects_bad_inputs(quadruped: Model) -> None:
    with pytest.raises(ValueError, match=r"3 \(point\) or 6"):
        tasks.ContactForceTask("LF_FOOT", dim=4)
    with pytest.raises(ValueError, match="reference force"):
        tasks.ContactForceTask("LF_FOOT", f_ref=[0.0, 0.0, np.nan])
    q, v = state(quadruped, 0)
    task = tasks.ContactForceTask("RH_FOOT", dim=3)
    with pytest.raises(ValueError, match="force entries"):
        task.rows(Evaluator(quadruped).evaluate(q, v), layout_of(quadruped))
