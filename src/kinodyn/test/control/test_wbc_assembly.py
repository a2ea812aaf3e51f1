"""The whole-body QP's per-tick assembly (issue 12 point 6: the fast paths) against straightforward
computations of the same quantities: the stacked task rows against each task's own dense rows scaled by the
square roots of its weights, a task weighted 0 (zero rows, its error still updated), a frame task reading two
evaluators' frame lists, the posture error against ``model.difference``, the joint acceleration bounds against
the limits module's formulas written per joint, and the QP acceptance check against ``kkt_residuals``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.evaluation import Evaluator
from kinodyn.control.qp import QP, QPResult, QPStatus, kkt_residuals, make_solver
from kinodyn.control.qp.solver import RawSolution
from kinodyn.control.wbc import WholeBodyController
from kinodyn.control.wbc.layout import VariableLayout
from kinodyn.control.wbc.limits import JointLimits
from kinodyn.control.wbc.tasks import ComTask, FrameTask, PostureTask, Task
from kinodyn.model import Model

URDF = Path(__file__).resolve().parents[4] / "urdf"
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")


@pytest.fixture(scope="module")
def quadruped() -> Model:
    return Model.from_urdf(URDF / "quadruped.urdf", floating_base=True)


def random_pose(rng: np.random.Generator) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    if np.linalg.det(T[:3, :3]) < 0.0:
        T[:3, 0] *= -1.0
    T[:3, 3] = rng.normal(size=3)
    return T


def tasks_of_a_trot(model: Model, rng: np.random.Generator) -> list[Task]:
    """The locomotion controller's tasks (CoM x-y, base height and orientation, one swing task per foot,
    two of them weighted 0 as feet in stance), one task with axes that are not consecutive, and the
    posture."""
    com = ComTask(rng.uniform(10, 50, 3), rng.uniform(1, 5, 3), weight=2.0, mask=(True, True, False))
    com.set_reference(rng.normal(size=3), rng.normal(size=3), rng.normal(size=3))
    base = FrameTask(model, "base_link", 40.0, 6.0, weight=(1, 1, 3, 4, 5, 6),
                     mask=(False, False, True, True, True, True), name="base")
    scattered = FrameTask(model, "RH_SHANK", 20.0, 3.0, weight=0.5,
                          mask=(True, False, True, False, True, False), name="scattered")
    tasks: list[Task] = [com, base, scattered]
    for k, foot in enumerate(FEET):
        tasks.append(FrameTask(model, foot, 90.0, 12.0, weight=0.0 if k % 2 else 7.0,
                               mask=(True, True, True, False, False, False), name=f"swing_{foot}"))
    for task in tasks[1:]:
        assert isinstance(task, FrameTask)
        task.set_reference(random_pose(rng), rng.normal(size=6), rng.normal(size=6))
    posture = PostureTask(model, model.neutral()[7:], 5.0, 1.0, weight=rng.uniform(0.1, 1.0, model.nv - 6))
    posture.set_reference(model.random_configuration(rng)[7:])
    return [*tasks, posture]


@pytest.mark.parametrize("seed", range(4))
def test_stacked_rows_are_each_tasks_dense_rows_scaled_and_a_task_weighted_zero_keeps_its_error(
        quadruped: Model, seed: int) -> None:
    rng = np.random.default_rng(seed)
    tasks = tasks_of_a_trot(quadruped, rng)
    frames = [f for task in tasks for f in task.frames]
    q, v = quadruped.random_configuration(rng), rng.normal(size=quadruped.nv)
    ev = Evaluator(quadruped, frames).evaluate(q, v)
    layout = VariableLayout.build(quadruped.nv, [(f, 3) for f in FEET], quadruped.nv - 6)
    A, b = WholeBodyController._stack(tasks, ev, layout)
    errors = {task.name: task.error.copy() for task in tasks}
    blocks_A, blocks_b = [], []
    for task in tasks:  # the reference: every task's full rows (qdd_rows), dense, times sqrt(weight)
        rows = task.rows(ev, layout)
        scale = np.sqrt(task.weight)
        blocks_A.append(rows.A * scale[:, None])
        blocks_b.append(rows.b * scale)
        np.testing.assert_array_equal(errors[task.name], task.error)  # the error-only path's is the same
    np.testing.assert_allclose(A, np.vstack(blocks_A), rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(b, np.concatenate(blocks_b), rtol=0.0, atol=1e-12)
    zero = [t.name for t in tasks if not t.weight.any()]
    assert zero == ["swing_LH_FOOT", "swing_RH_FOOT"] and all(np.abs(errors[n]).max() > 1e-3 for n in zero)


def test_a_frame_task_reads_its_row_of_whichever_evaluation_it_gets(quadruped: Model) -> None:
    """The task keeps its frame's row between ticks; an evaluation of other frames (another order) must not
    be read at the old row."""
    rng = np.random.default_rng(5)
    q, v = quadruped.random_configuration(rng), rng.normal(size=quadruped.nv)
    task = FrameTask(quadruped, "LF_FOOT", 30.0, 5.0)
    task.set_reference(random_pose(rng), rng.normal(size=6), rng.normal(size=6))
    first = Evaluator(quadruped, ["LF_FOOT", "RH_FOOT"]).evaluate(q, v)
    second = Evaluator(quadruped, ["RH_FOOT", "base_link", "LF_FOOT"]).evaluate(q, v)
    J1, b1 = task.qdd_rows(first)
    J2, b2 = task.qdd_rows(second)
    fresh = FrameTask(quadruped, "LF_FOOT", 30.0, 5.0)
    fresh.set_reference(task.pose, task.twist, task.acceleration)
    J_ref, b_ref = fresh.qdd_rows(second)
    np.testing.assert_array_equal(J2, J_ref)
    np.testing.assert_array_equal(b2, b_ref)
    np.testing.assert_allclose(J1, J2, rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(b1, b2, rtol=0.0, atol=1e-12)
    J_model = quadruped.frame_jacobian(q, "LF_FOOT", "local_world_aligned")
    np.testing.assert_allclose(J2, J_model, rtol=0.0, atol=1e-12)


@pytest.mark.parametrize("name", ["quadruped", "arm7"])
def test_posture_error_is_the_joints_part_of_model_difference(name: str) -> None:
    model = Model.from_urdf(URDF / f"{name}.urdf", floating_base=name == "quadruped")
    first_q, first_v = (7, 6) if model.floating_base else (0, 0)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, q_ref = model.random_configuration(rng), model.random_configuration(rng)
        task = PostureTask(model, q_ref[first_q:], 1.0, 1.0)
        ev = Evaluator(model, ()).evaluate(q, np.zeros(model.nv))
        task.qdd_rows(ev)
        target = q.copy()
        target[first_q:] = q_ref[first_q:]
        np.testing.assert_array_equal(task.error, model.difference(q, target)[first_v:])


def scalar_acceleration_bounds(limits: JointLimits, q: np.ndarray, v: np.ndarray) -> tuple[list, list]:
    """The limits module's rule, one joint at a time in plain floats."""
    h, a = limits.horizon, limits.max_acceleration
    lows, highs = [], []
    for j in range(q.size):
        lo = max(min((-limits.velocity[j] - v[j]) / h, 0.0), 2.0 * (limits.lower[j] - q[j] - v[j] * h) / h**2)
        hi = min(max((limits.velocity[j] - v[j]) / h, 0.0), 2.0 * (limits.upper[j] - q[j] - v[j] * h) / h**2)
        if lo > hi:  # past a limit: the tighter bound, both sides
            lo = hi = hi if hi < 0.0 else lo
        lows.append(min(max(lo, -a), a))
        highs.append(min(max(hi, -a), a))
    return lows, highs


def test_acceleration_bounds_are_the_per_joint_formulas(quadruped: Model) -> None:
    limits = JointLimits.from_model(quadruped, horizon=0.05, max_acceleration=400.0)
    rng = np.random.default_rng(11)
    crossed = 0
    for _ in range(50):  # positions up to 0.3 rad beyond the limits, speeds up to twice the limits
        q = rng.uniform(limits.lower - 0.3, limits.upper + 0.3)
        v = rng.uniform(-2.0, 2.0, q.size) * limits.velocity
        lo, hi = limits.acceleration_bounds(q, v)
        lo_ref, hi_ref = scalar_acceleration_bounds(limits, q, v)
        np.testing.assert_array_equal(lo, lo_ref)
        np.testing.assert_array_equal(hi, hi_ref)
        crossed += int(np.count_nonzero(lo == hi))
    assert crossed > 10  # the branch past a limit was exercised


@pytest.mark.parametrize("seed", range(3))
def test_the_acceptance_check_agrees_with_the_kkt_residuals(seed: int) -> None:
    """An answer is accepted exactly when its primal and stationarity residuals (``kkt_residuals``) are within
    ``acceptance_tol`` times the problem's scale: an exact answer passes, one moved off it is rejected."""
    rng = np.random.default_rng(seed)
    n, m = 8, 12
    L, A, C = rng.normal(size=(n, n)), rng.normal(size=(2, n)), rng.normal(size=(m, n))
    feasible = rng.uniform(-1.0, 1.0, n)  # a point meeting every constraint
    qp = QP(H=L @ L.T + np.eye(n), g=rng.normal(size=n) * 10.0, A=A, b=A @ feasible, C=C,
            l=C @ feasible - rng.uniform(0.1, 1.0, m), u=C @ feasible + rng.uniform(0.1, 1.0, m),
            lb=feasible - 2.0, ub=feasible + 2.0)
    solver = make_solver("daqp")
    result = solver.solve(qp)
    assert result.ok and result.x is not None and result.z is not None

    def check(x: np.ndarray) -> tuple[str, bool]:
        raw = RawSolution(QPStatus.SOLVED, 1, "", x, result.y, result.z, result.w)
        kkt = kkt_residuals(qp, QPResult(QPStatus.SOLVED, x, 1, 0.0, "daqp", result.y, result.z, result.w))
        scale = max(1.0, *(float(np.abs(a).max()) for a in (x, qp.g, qp.H @ x, qp.b, qp.C @ x)))
        return solver._rejection(qp, raw), max(kkt.primal, kkt.stationarity) <= solver.acceptance_tol * scale

    assert check(result.x) == ("", True)
    problem, within = check(result.x + 1e-3)
    assert not within and problem.startswith(("primal residual", "stationarity residual"))
    nan = RawSolution(QPStatus.SOLVED, 1, "", result.x, result.y, np.full(m, math.nan), result.w)
    assert solver._rejection(qp, nan) == "non-finite or missing solution"
