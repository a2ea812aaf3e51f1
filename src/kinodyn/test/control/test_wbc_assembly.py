"""The whole-body QP's per-tick assembly (its fast paths) against straightforward
computations of the same quantities: the stacked task rows against each task's own dense rows scaled by the
square roots of its weights, a task weighted 0 (zero rows, its error still updated), a frame task reading two
evaluators' frame lists, the posture error against ``model.difference``, the joint acceleration bounds against
the limits module's formulas written per joint, and the QP acceptance check against ``kkt_residuals``."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.qp import QP, QPResult, QPStatus, kkt_residuals, make_solver
from kinodyn.control.qp.solver import RawSolution
from kinodyn.control.wbc import PointContact, WholeBodyController, numpy_blas
from kinodyn.control.wbc.layout import VariableLayout
from kinodyn.control.wbc.limits import JointLimits
from kinodyn.control.wbc.tasks import (
    BaseOrientationTask,
    ComTask,
    ContactForceTask,
    FrameTask,
    PostureTask,
    Task,
)
from kinodyn.evaluation import Evaluation, Evaluator
from numpy.linalg import _umath_linalg

from .conftest import project_model

if TYPE_CHECKING:
    from kinodyn.control.wbc.contacts import Contact
    from kinodyn.model import Model

FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")


def random_pose(rng: np.random.Generator) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    if np.linalg.det(T[:3, :3]) < 0.0:
        T[:3, 0] *= -1.0
    T[:3, 3] = rng.normal(size=3)
    return T


def tasks_of_a_trot(model: Model, rng: np.random.Generator) -> list[Task]:
    """The locomotion controller's tasks (CoM x-y with its error and acceleration saturated, base height and
    orientation, one swing task per foot, two of them weighted 0 as feet in stance), one task with axes that
    are not consecutive, a frame task and a CoM task of one row each (numpy's product is a dot there; its
    error saturated), and the posture."""
    com = ComTask(rng.uniform(10, 50, 3), rng.uniform(1, 5, 3), weight=2.0, mask=(True, True, False))
    com.set_reference(rng.normal(size=3), rng.normal(size=3), rng.normal(size=3))
    com.max_error, com.max_acceleration = 0.3, 5.0  # saturated as the locomotion controller's (both clip)
    base = FrameTask(model, "base_link", 40.0, 6.0, weight=(1, 1, 3, 4, 5, 6),
                     mask=(False, False, True, True, True, True), name="base")
    scattered = FrameTask(model, "RH_SHANK", 20.0, 3.0, weight=0.5,
                          mask=(True, False, True, False, True, False), name="scattered")
    yaw = FrameTask(model, "LF_SHANK", 10.0, 2.0, weight=0.3, mask=(False,) * 5 + (True,), name="one_row")
    height = ComTask(30.0, 4.0, weight=1.5, mask=(False, False, True), name="com_height")
    height.set_reference(rng.normal(size=3), rng.normal(size=3), rng.normal(size=3))
    height.max_error = 0.02  # one row clipped to 2 cm (|e| ~ N(0, 1) here), its acceleration not limited
    tasks: list[Task] = [com, base, scattered, yaw]
    for k, foot in enumerate(FEET):
        tasks.append(FrameTask(model, foot, 90.0, 12.0, weight=0.0 if k % 2 else 7.0,
                               mask=(True, True, True, False, False, False), name=f"swing_{foot}"))
    for task in tasks[1:]:
        assert isinstance(task, FrameTask)
        task.set_reference(random_pose(rng), rng.normal(size=6), rng.normal(size=6))
    posture = PostureTask(model, model.neutral()[7:], 5.0, 1.0, weight=rng.uniform(0.1, 1.0, model.nv - 6))
    posture.set_reference(model.random_configuration(rng)[7:])
    return [*tasks, height, posture]


@pytest.mark.parametrize("seed", range(4))
def test_stacked_rows_are_each_tasks_dense_rows_scaled_and_a_task_weighted_zero_keeps_its_error(
        quadruped: Model, seed: int) -> None:
    rng = np.random.default_rng(seed)
    tasks = tasks_of_a_trot(quadruped, rng)
    frames = [f for task in tasks for f in task.frames]
    q, v = quadruped.random_configuration(rng), rng.normal(size=quadruped.nv)
    ev = Evaluator(quadruped, frames).evaluate(q, v)
    layout = VariableLayout.build(quadruped.nv, [(f, 3) for f in FEET], quadruped.nv - 6)
    A, b = WholeBodyController._stack(tasks, ev, layout)  # noqa: SLF001  (the weighted stacking itself)
    errors = {task.name: task.error.copy() for task in tasks}
    blocks_A, blocks_b = [], []
    for task in tasks:  # the reference: every task's full rows (qdd_rows), dense, times sqrt(weight)
        rows = task.rows(ev, layout)
        scale = np.sqrt(task.weight)
        blocks_A.append(rows.A * scale[:, None])
        blocks_b.append(rows.b * scale)
        np.testing.assert_array_equal(errors[task.name], task.error)  # the error-only path's is the same
    np.testing.assert_array_equal(A, np.vstack(blocks_A))  # the compiled passes: numpy's numbers
    np.testing.assert_array_equal(b, np.concatenate(blocks_b))
    zero = [t.name for t in tasks if not t.weight.any()]
    assert zero == ["swing_LH_FOOT", "swing_RH_FOOT"]
    # the saturations were reached: the CoM's errors beyond their limits, its desired acceleration at 5
    assert np.linalg.norm(errors["com"]) > 0.3
    assert abs(errors["com_height"][0]) > 0.02
    desired = b[:2] / np.sqrt(2.0) + ev.com_bias_acceleration[:2]
    assert abs(np.linalg.norm(desired) - 5.0) < 1e-9
    assert all(np.abs(errors[n]).max() > 1e-3 for n in zero)


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
    model = project_model(name)
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
    assert result.ok
    assert result.x is not None
    assert result.z is not None

    def check(x: np.ndarray) -> tuple[str, bool]:
        raw = RawSolution(QPStatus.SOLVED, 1, "", x, result.y, result.z, result.w)
        kkt = kkt_residuals(qp, QPResult(QPStatus.SOLVED, x, 1, 0.0, "daqp", result.y, result.z, result.w))
        scale = max(1.0, *(float(np.abs(a).max()) for a in (x, qp.g, qp.H @ x, qp.b, qp.C @ x)))
        return solver._rejection(qp, raw), max(kkt.primal, kkt.stationarity) <= solver.acceptance_tol * scale  # noqa: SLF001  (the acceptance test itself)

    assert check(result.x) == ("", True)
    problem, within = check(result.x + 1e-3)
    assert not within
    assert problem.startswith(("primal residual", "stationarity residual"))
    nan = RawSolution(QPStatus.SOLVED, 1, "", result.x, result.y, np.full(m, math.nan), result.w)
    assert solver._rejection(qp, nan) == "non-finite or missing solution"  # noqa: SLF001  (the acceptance test itself)


class ReferenceTick:
    """The whole-body QP of ``wbc`` computed the straightforward way, as the controller did before its rows
    went into preallocated buffers (the test oracle of ``test_the_tick_is_the_straightforward_computation``):
    fresh dense matrices per tick, each task's dense ``rows`` times ``sqrt(weight)``, the contacts' own
    ``motion_rows`` and ``force_inequalities``, the joint bounds of ``scalar_acceleration_bounds``,
    ``np.linalg.qr`` / ``np.linalg.solve``, one ``QP`` per level and a DAQP solver of its own (warm-started
    from its previous answer, as the controller's). It reads the contact ramps' force bounds from ``wbc``
    (call it after ``wbc.update`` at the same state)."""

    def __init__(self, wbc: WholeBodyController) -> None:
        self.wbc = wbc
        self.solvers: dict[int, object] = {}
        self.warm: dict[int, QPResult] = {}

    def tick(self, q: np.ndarray, v: np.ndarray) -> dict[str, np.ndarray]:
        w = self.wbc
        model, nv = w.model, w.model.nv
        fv = 6 if model.floating_base else 0
        names = w.active_contacts()
        states = {n: w._contacts[n] for n in names}  # noqa: SLF001  (the controller's contact states)
        contacts = [states[n].contact for n in names]
        layout = VariableLayout.build(nv, [(c.name, c.dim) for c in contacts], nv - fv, w.torque_variables)
        frames = [c.frame for c in contacts] + [f for _, t in w._tasks for f in t.frames]  # noqa: SLF001  (the controller's task list)
        ev = Evaluator(model, frames).evaluate(q, v)
        rows = [c.motion_rows(ev) for c in contacts]
        Jc, rhs = np.vstack([r[0] for r in rows]), np.concatenate([r[1] for r in rows])
        dyn = nv if w.torque_variables else fv
        E = np.zeros((dyn + Jc.shape[0], layout.size))
        E[:dyn, :nv] = ev.mass_matrix[:dyn]
        E[:dyn, layout.forces] = -Jc.T[:dyn]
        if w.torque_variables:
            E[fv:nv, layout.tau] = -np.eye(nv - fv)
        E[dyn:, :nv] = Jc
        e = np.concatenate([-ev.nonlinear_effects[:dyn], rhs])
        upper_normal = [states[c.name].upper_normal_force() for c in contacts]
        C, lower, upper = _inequality_rows(w, ev, layout, contacts, upper_normal, Jc, q, v)
        Q, R = np.linalg.qr(E.T, mode="complete")
        m = E.shape[0]
        assert np.abs(R.diagonal()).min() > 1e-9 * max(np.abs(R.diagonal()).max(), 1.0)  # full rank here
        x, Z = Q[:, :m] @ np.linalg.solve(R[:m].T, e), Q[:, m:]
        levels = ([[t for _, t in w._tasks]] if w.mode == "weighted" else  # noqa: SLF001  (the controller's task list)
                  [[t for lv, t in w._tasks if lv == n] for n in sorted({lv for lv, _ in w._tasks})])  # noqa: SLF001
        for k, tasks in enumerate(levels):
            blocks = [(task.rows(ev, layout), np.sqrt(task.weight)) for task in tasks]
            blocks = [(rows, scale) for rows, scale in blocks if rows.b.size]  # (a contact out of stance)
            A = np.vstack([rows.A * scale[:, None] for rows, scale in blocks])
            b = np.concatenate([rows.b * scale for rows, scale in blocks])
            AZ, CZ, Cx = A @ Z, C @ Z, C @ x
            low, high = lower - Cx, upper - Cx
            if k:
                low, high = np.minimum(low, 0.0), np.maximum(high, 0.0)
                size = np.abs(CZ).max(axis=1)
                movable = size > 1e-9 * max(1.0, float(size.max(initial=0.0)))
                CZ, low, high = CZ[movable], low[movable], high[movable]
            qp = QP(H=AZ.T @ AZ + w.regularization * np.eye(AZ.shape[1]), g=-AZ.T @ (b - A @ x), C=CZ, l=low,
                    u=high)
            solver = self.solvers.setdefault(k, make_solver("daqp"))
            result = solver.solve(qp, warm_start=self.warm.get(k))  # type: ignore[attr-defined]
            if not result.ok:  # a lower level left unsolved: the levels above answer (DAQP 0.11 calls some
                assert k > 0, result.message  # feasible lower levels infeasible, docs/wbc.md)
                break
            self.warm[k] = result
            x = x + Z @ result.x
            if k + 1 < len(levels):
                _, s, Vt = np.linalg.svd(AZ)
                Z = Z @ Vt[int(np.count_nonzero(s > 1e-9 * max(s[0], 1.0))):].T
        generalized = ev.mass_matrix @ x[:nv] + ev.nonlinear_effects - Jc.T @ x[layout.forces]
        tau = x[layout.tau] if w.torque_variables else generalized[fv:]
        residual = generalized.copy()
        residual[fv:] -= tau
        return {"x": x, "qdd": x[:nv], "tau": np.minimum(np.maximum(tau, -w.limits.effort), w.limits.effort),
                "dynamics": np.abs(residual).max(), "contact": np.abs(Jc @ x[:nv] - rhs).max()}


def _inequality_rows(w: WholeBodyController, ev: Evaluation, layout: VariableLayout, contacts: list[Contact],
                     upper_normal: list[float], Jc: np.ndarray, q: np.ndarray,
                     v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The QP's inequality rows ``lower <= C x <= upper``: friction cones, efforts, joint accelerations."""
    nv = w.model.nv
    fv, fq = (6, 7) if w.model.floating_base else (0, 0)
    C_rows, lows, highs = [], [], []
    for c, f_max in zip(contacts, upper_normal, strict=True):
        D, lo, hi = c.force_inequalities(ev, f_max)
        block = np.zeros((D.shape[0], layout.size))
        block[:, layout.force(c.name)] = D
        C_rows.append(block), lows.append(lo), highs.append(hi)
    limited = np.flatnonzero(np.isfinite(w.limits.effort))
    effort = w.limits.effort[limited]
    block = np.zeros((limited.size, layout.size))
    if w.torque_variables:
        block[np.arange(limited.size), layout.tau.start + limited] = 1.0
        lows.append(-effort), highs.append(effort)
    else:
        block[:, :nv] = ev.mass_matrix[fv + limited]
        block[:, layout.forces] = -Jc.T[fv + limited]
        lows.append(-effort - ev.nonlinear_effects[fv + limited])
        highs.append(effort - ev.nonlinear_effects[fv + limited])
    C_rows.append(block)
    joints = np.zeros((nv - fv, layout.size))
    joints[:, fv:nv] = np.eye(nv - fv)
    C_rows.append(joints)
    low_q, high_q = scalar_acceleration_bounds(w.limits, q[fq:], v[fv:])
    lows.append(np.array(low_q)), highs.append(np.array(high_q))
    return np.vstack(C_rows), np.concatenate(lows), np.concatenate(highs)


def oracle_controllers(model: Model) -> dict[str, WholeBodyController]:
    """TSID's standing problem (bench/bench_wbc.py's): weighted without limits, with the URDF's limits (tau
    recovered and tau as variables), and as a 3-level hierarchy."""
    def build(mode: str, levels: tuple[int, int, int], limits: JointLimits | None, **options: object
              ) -> WholeBodyController:
        wbc = WholeBodyController(model, [PointContact(f, mu=0.99, facets=4, f_min=1.0, f_max=500.0)
                                          for f in FEET], mode=mode, limits=limits, regularization=1e-8,
                                  **options)  # type: ignore[arg-type]
        com = ComTask(100.0, 20.0)
        com.set_reference(model.com(standing(model)) + np.array([0.01, 0.0, 0.0]))
        base = BaseOrientationTask(model, 100.0, 20.0)
        base.set_reference(np.eye(3))
        posture = PostureTask(model, standing(model)[7:], 50.0, 14.0, 1e-2)
        for task, level in ((com, levels[0]), (base, levels[0]), (posture, levels[1])):
            wbc.add_task(task, level)
        for foot in FEET:
            wbc.add_task(ContactForceTask(foot, 3, None, 1e-5 * np.array([1.0, 1.0, 1e-6])), levels[2])
        return wbc

    n = model.nv - 6
    unlimited = JointLimits(np.full(n, np.inf), np.full(n, -np.inf), np.full(n, np.inf), np.full(n, np.inf),
                            max_acceleration=np.inf)
    return {"weighted, no limits": build("weighted", (1, 1, 1), unlimited),
            "weighted, URDF limits": build("weighted", (1, 1, 1), None),
            "weighted, tau variables": build("weighted", (1, 1, 1), None, torque_variables=True),
            "hierarchy": build("hierarchical", (1, 2, 3), None)}


def standing(model: Model) -> np.ndarray:
    q = model.neutral()
    q[2] = 0.495
    q[7:] = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]
    return q


@pytest.mark.parametrize("name", ["weighted, no limits", "weighted, URDF limits", "weighted, tau variables",
                                  "hierarchy"])
def test_the_tick_is_the_straightforward_computation(quadruped: Model, name: str) -> None:
    """The controller's tick (rows in buffers, compiled element-wise assembly, numpy's BLAS and LAPACK called
    from compiled code) gives the reference's numbers bit for bit over 120 ticks: the same BLAS and LAPACK
    calls on the same data (a product summed in another order would move the forces by ~1e-8 N: the
    internal forces are weighted ~1e-11). States near standing, with the friction facets, f_min and (with
    limits) joint bounds active, and one foot ramping out of stance."""
    wbc = oracle_controllers(quadruped)[name]
    reference = ReferenceTick(wbc)
    rng = np.random.default_rng(7)
    q0, active = standing(quadruped), 0
    for k in range(120):
        q = quadruped.integrate(q0, rng.uniform(-0.1, 0.1, quadruped.nv))
        v = rng.uniform(-0.3, 0.3, quadruped.nv)
        if k == 60:
            wbc.set_contact_active("RH_FOOT", False, ramp=0.01)
        result, expected = wbc.update(q, v, t=0.002 * k), reference.tick(q, v)
        assert result.ok, result.message
        assert result.x is not None
        assert result.tau is not None
        np.testing.assert_array_equal(result.x, expected["x"])
        np.testing.assert_array_equal(result.qdd, expected["qdd"])
        np.testing.assert_array_equal(result.tau, expected["tau"])
        assert abs(result.dynamics_residual - expected["dynamics"]) <= 1e-12
        assert abs(result.contact_acceleration - expected["contact"]) <= 1e-12
        active += int(np.count_nonzero(reference.warm[0].z))  # type: ignore[arg-type]
    assert active > 24  # inequalities were active
    assert wbc.active_contacts() == ("LF_FOOT", "LH_FOOT", "RF_FOOT")  # the ramp ended: the layout changed


def test_numpy_blas_calls_give_numpys_numbers() -> None:
    """``numpy_blas`` makes numpy's own BLAS and LAPACK calls: its products (gemm, syrk for a matrix times its
    own transpose, gemv on views with a row stride) and the QR and triangular solve of ``eliminate_qr``
    equal ``np.matmul`` and ``_umath_linalg`` bit for bit, on random shapes."""
    rng = np.random.default_rng(11)
    ints = np.zeros(8, dtype=np.int64)
    for _ in range(60):
        m, n, p = (int(d) for d in rng.integers(2, 40, 3))
        A, B = rng.normal(size=(m, n)), rng.normal(size=(n, p))
        wide = rng.normal(size=(n, p + 7))
        for X, Y in ((A, B), (A, wide[:, 3:3 + p]), (B.T.copy(), A.T)):
            out = np.empty((X.shape[0], Y.shape[1]))
            numpy_blas.matmat(X, Y, out)
            np.testing.assert_array_equal(out, X @ Y)
        gram = np.empty((p, p))
        numpy_blas.matmat(B.T, B, gram)
        np.testing.assert_array_equal(gram, B.T @ B)
        for X in (A, B.T, wide[:, 3:3 + p].T):
            v, out = rng.normal(size=n), np.empty(X.shape[0])
            numpy_blas.matvec(X, v, out)
            np.testing.assert_array_equal(out, X @ v)
        rows, cols = sorted((m, n))  # E: rows <= cols, as the hard equalities
        E = rng.normal(size=(rows, cols))
        a = np.ascontiguousarray(E.T)
        tau = _umath_linalg.qr_r_raw(a, signature="d->d")
        Q = _umath_linalg.qr_complete(a, tau, signature="dd->d")
        column_major, tau_ours = E.ravel().copy(), np.zeros(rows)
        work = np.zeros(numpy_blas.lwork_geqrf(cols, rows))
        assert numpy_blas.geqrf(cols, rows, column_major, tau_ours, work, work.size, ints) == 0
        np.testing.assert_array_equal(column_major.reshape(rows, cols).T, a)
        np.testing.assert_array_equal(tau_ours, tau)
        q = np.zeros(cols * cols)
        q[:cols * rows] = column_major
        work = np.zeros(numpy_blas.lwork_orgqr(cols, rows))
        assert numpy_blas.orgqr(cols, cols, rows, q, tau_ours, work, work.size, ints) == 0
        np.testing.assert_array_equal(q.reshape(cols, cols).T, Q)
        L, e = np.tril(rng.normal(size=(rows, rows))) + 3.0 * np.eye(rows), rng.normal(size=rows)
        solution, pivots = e.copy(), np.zeros(rows, dtype=np.int64)
        assert numpy_blas.gesv(rows, L.T.ravel().copy(), solution, pivots, ints) == 0
        np.testing.assert_array_equal(solution, _umath_linalg.solve1(L, e, signature="dd->d"))


def test_a_ticks_result_and_evaluation_hold_every_field_and_stay_frozen(quadruped: Model) -> None:
    """The tick builds ``WBCResult`` and ``Evaluation`` without their ``__init__`` (a tick's cost): each
    holds exactly the dataclass's fields and refuses assignment as a frozen dataclass does."""
    wbc = oracle_controllers(quadruped)["weighted, no limits"]
    result = wbc.update(standing(quadruped), np.zeros(quadruped.nv))
    assert result.ok
    assert result.tau is not None
    for instance in (result, result.evaluation):
        assert set(vars(instance)) == {f.name for f in dataclasses.fields(instance)}
        with pytest.raises(dataclasses.FrozenInstanceError):
            instance.frames = ()  # type: ignore[misc]
