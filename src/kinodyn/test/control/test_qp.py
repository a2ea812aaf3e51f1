"""QP backends (kinodyn.control.qp): KKT, scipy as a second source, statuses, warm starts, bad input."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import daqp
import numpy as np
import pytest
from kinodyn.control.qp import (
    DEFAULT_SOLVER,
    QP,
    SOLVERS,
    QPResult,
    QPSolver,
    QPStatus,
    daqp_solver,
    kkt_residuals,
    make_solver,
)
from scipy.optimize import Bounds, LinearConstraint, minimize

DENSE = ("daqp",)
# Accuracy each backend promises with its default options: round-off for the dense DAQP; OSQP's ADMM eps
# (1e-7 absolute and relative) where its polishing step fails, round-off where it succeeds.
KKT_TOL = {"daqp": 1e-9, "osqp": 1e-5}


def random_qp(rng: np.random.Generator, n: int = 20, neq: int = 6, nin: int = 30, bounds: bool = True) -> QP:
    """Strictly convex, feasible, with the unconstrained optimum far outside the constraints (rows active)."""
    M = rng.standard_normal((n, n))
    H = M @ M.T + 0.1 * np.eye(n)
    x_feasible = rng.standard_normal(n)
    A = rng.standard_normal((neq, n))
    C = rng.standard_normal((nin, n))
    low, high = C @ x_feasible - rng.uniform(0.1, 1.0, nin), C @ x_feasible + rng.uniform(0.1, 1.0, nin)
    low[::3] = -np.inf
    g = -H @ (x_feasible + 5.0 * rng.standard_normal(n))
    return QP(
        H,
        g,
        A=A if neq else None,
        b=A @ x_feasible if neq else None,
        C=C,
        l=low,
        u=high,
        lb=x_feasible - 0.5 if bounds else None,
        ub=x_feasible + 0.5 if bounds else None,
    )


def active_rows(qp: QP, x: np.ndarray, tol: float = 1e-7) -> int:
    cx = qp.C @ x
    count = int(np.sum(np.isclose(cx, qp.l, atol=tol) | np.isclose(cx, qp.u, atol=tol)))
    if qp.has_bounds:
        count += int(np.sum(np.isclose(x, qp.lb, atol=tol) | np.isclose(x, qp.ub, atol=tol)))
    return count


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("seed", range(6))
def test_kkt_on_random_qps_with_active_inequalities(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    qp = random_qp(
        rng,
        n=int(rng.integers(12, 43)),
        neq=int(rng.integers(0, 11)),
        nin=int(rng.integers(40, 61)),
        bounds=bool(seed % 2),
    )
    result = make_solver(name).solve(qp)
    assert result.status is QPStatus.SOLVED, result.message
    assert active_rows(qp, result.x) >= 2
    residuals = kkt_residuals(qp, result)
    assert residuals.max <= KKT_TOL[name], residuals
    assert result.objective == pytest.approx(qp.objective(result.x))


@pytest.mark.parametrize("name", SOLVERS)
def test_matches_scipy_trust_constr(name: str) -> None:
    rng = np.random.default_rng(42)
    qp = random_qp(rng, n=6, neq=2, nin=5, bounds=True)
    constraints = [LinearConstraint(qp.A, qp.b, qp.b), LinearConstraint(qp.C, qp.l, qp.u)]
    reference = minimize(
        qp.objective,
        np.zeros(qp.n),
        jac=lambda x: qp.H @ x + qp.g,
        hess=lambda x: qp.H,
        method="trust-constr",
        constraints=constraints,
        bounds=Bounds(qp.lb, qp.ub),
        options={"gtol": 1e-12, "xtol": 1e-14, "barrier_tol": 1e-12, "maxiter": 5000},
    )
    assert reference.success
    result = make_solver(name).solve(qp)
    assert result.ok
    assert active_rows(qp, result.x) >= 1
    np.testing.assert_allclose(result.x, reference.x, atol=1e-6)
    # trust-constr (an interior-point method) stops ~4e-6 above the optimum the three backends agree on
    assert result.objective == pytest.approx(reference.fun, abs=1e-5)


@pytest.mark.parametrize("name", SOLVERS)
def test_equality_only_matches_closed_form(name: str) -> None:
    rng = np.random.default_rng(3)
    n, neq = 15, 5
    M = rng.standard_normal((n, n))
    H, g = M @ M.T + np.eye(n), rng.standard_normal(n)
    A, b = rng.standard_normal((neq, n)), rng.standard_normal(neq)
    kkt = np.block([[H, A.T], [A, np.zeros((neq, neq))]])
    solution = np.linalg.solve(kkt, np.concatenate((-g, b)))
    result = make_solver(name).solve(QP(H, g, A=A, b=b))
    assert result.ok
    tol = 1e-9 if name in DENSE else 1e-6
    np.testing.assert_allclose(result.x, solution[:n], atol=tol)
    np.testing.assert_allclose(result.y, solution[n:], atol=tol * 10)


@pytest.mark.parametrize("name", SOLVERS)
def test_inconsistent_bounds_are_infeasible(name: str) -> None:
    qp = QP(np.eye(2), np.zeros(2), C=np.eye(2), l=np.array([0.0, 2.0]), u=np.array([1.0, 1.0]))
    result = make_solver(name).solve(qp)
    assert result.status is QPStatus.INFEASIBLE
    assert result.x is None
    assert not result.ok


@pytest.mark.parametrize("name", SOLVERS)
def test_infeasible_equalities(name: str) -> None:
    A = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    result = make_solver(name).solve(QP(np.eye(3), np.ones(3), A=A, b=np.array([1.0, 2.0])))
    assert result.status is QPStatus.INFEASIBLE, result.message
    assert result.x is None


@pytest.mark.parametrize("name", SOLVERS)
def test_infeasible_inequalities(name: str) -> None:
    qp = QP(
        np.eye(2),
        np.array([-2.0, -2.0]),
        C=np.array([[1.0, 1.0]]),
        u=np.array([1.0]),
        lb=np.array([5.0, 5.0]),
    )
    result = make_solver(name).solve(qp)
    assert result.status is QPStatus.INFEASIBLE, result.message
    assert result.x is None


@pytest.mark.parametrize("name", SOLVERS)
def test_iteration_cap_is_reported(name: str) -> None:
    qp = random_qp(np.random.default_rng(7), n=30, neq=5, nin=50)
    result = make_solver(name, max_iter=1).solve(qp)
    assert result.status is QPStatus.MAX_ITERATIONS, result.message
    assert result.x is None
    assert result.objective is None


@pytest.mark.parametrize("name", SOLVERS)
def test_nonconvex_hessian_is_reported(name: str) -> None:
    H = np.diag([1.0, -1.0, 1.0])
    qp = QP(
        H,
        np.array([0.3, 0.1, -0.2]),
        C=np.array([[1.0, 1.0, 1.0]]),
        l=np.array([-1.0]),
        u=np.array([1.0]),
        lb=-np.ones(3),
        ub=np.ones(3),
    )
    result = make_solver(name).solve(qp)
    assert result.status is QPStatus.NONCONVEX, result.message
    assert result.x is None
    assert result.message


def drifting_pair(seed: int) -> tuple[QP, QP]:
    """Two problems of one shape, the second a small perturbation of the first (consecutive control ticks)."""
    rng = np.random.default_rng(seed)
    first = random_qp(rng, n=30, neq=8, nin=50)
    second = QP(
        first.H,
        first.g + 1e-3 * rng.standard_normal(first.n),
        A=first.A,
        b=first.b,
        C=first.C,
        l=first.l,
        u=first.u,
        lb=first.lb,
        ub=first.ub,
    )
    return first, second


@pytest.mark.parametrize("name", SOLVERS)
def test_warm_start_same_answer_fewer_iterations(name: str) -> None:
    first, second = drifting_pair(11)
    solver = make_solver(name)
    previous = solver.solve(first)
    assert previous.ok
    assert not previous.warm_started
    cold = make_solver(name).solve(second)
    warm = solver.solve(second, warm_start=previous)
    assert cold.ok
    assert warm.ok
    assert warm.warm_started
    np.testing.assert_allclose(warm.x, cold.x, atol=1e-9 if name in DENSE else 1e-5)
    assert warm.iterations < cold.iterations


@pytest.mark.parametrize("name", SOLVERS)
def test_warm_start_of_another_shape_is_not_used(name: str) -> None:
    rng = np.random.default_rng(5)
    small, large = random_qp(rng, n=10, neq=2, nin=20), random_qp(rng, n=12, neq=2, nin=20)
    solver = make_solver(name)
    result = solver.solve(large, warm_start=solver.solve(small))
    assert result.ok
    assert not result.warm_started
    assert kkt_residuals(large, result).max <= KKT_TOL[name]


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("QP.g", {"g": np.array([0.0, np.nan])}),
        ("QP.H", {"H": np.array([[1.0, np.inf], [np.inf, 1.0]])}),
        ("QP.H", {"H": np.array([[1.0, 0.5], [0.0, 1.0]])}),
        ("QP.H", {"H": np.ones((2, 3))}),
        ("QP.C", {"C": np.ones((2, 3)), "u": np.ones(2)}),
        ("QP.l", {"C": np.eye(2), "l": np.array([np.nan, 0.0])}),
        ("QP.b", {"A": np.ones((1, 2)), "b": np.array([np.inf])}),
        ("QP.ub", {"ub": np.ones(3)}),
        ("QP.A and QP.b", {"A": np.ones((1, 2))}),
    ],
)
def test_bad_input_names_the_field(field: str, kwargs: dict) -> None:
    data = {"H": np.eye(2), "g": np.zeros(2)} | kwargs
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        QP(**data)


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("QP.H", {"H": np.array([[1.0, np.inf], [np.inf, 1.0]])}),
        ("QP.H", {"H": np.array([[1.0, 0.5], [0.0, 1.0]])}),
        ("QP.g", {"g": np.array([0.0, np.nan])}),
        ("QP.C", {"C": np.array([[1.0, np.nan]])}),
        ("QP.l", {"l": np.array([np.nan])}),
        ("QP.u", {"u": np.array([np.nan])}),
        ("QP.g", {"g": np.zeros(3)}),
        ("QP.C", {"C": np.ones((1, 3))}),
        ("QP.u", {"u": np.ones(2)}),
    ],
)
def test_an_inequality_qp_from_arrays_is_the_constructors(field: str, change: dict) -> None:
    """``QP.inequality`` (the control loop's path: one compiled check) takes float64 arrays as they are and
    equals ``QP(H, g, C=C, l=l, u=u)``, shape included; bad data gets the constructor's error naming the
    field, an integer matrix is converted as the constructor converts it, and an asymmetry within the
    tolerance is accepted as there."""
    data = {"H": np.array([[2.0, 0.5], [0.5, 1.0]]), "g": np.array([1.0, -1.0]), "C": np.array([[1.0, 1.0]]),
            "l": np.array([-np.inf]), "u": np.array([0.5])}
    qp, full = QP.inequality(**data), QP(**data)
    for name in ("H", "g", "C", "l", "u"):
        assert getattr(qp, name) is data[name]
        np.testing.assert_array_equal(getattr(qp, name), getattr(full, name))
    assert qp.A.shape == (0, 2)
    assert qp.b.shape == (0,)
    assert qp.bounds is None
    assert qp.shape == full.shape
    result = make_solver("daqp").solve(qp)
    assert result.x.tolist() == make_solver("daqp").solve(full).x.tolist()
    assert set(vars(result)) == {f.name for f in dataclasses.fields(result)}  # (built without __init__)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.x = None  # type: ignore[misc]
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        QP.inequality(**(data | change))
    np.testing.assert_array_equal(QP.inequality(**(data | {"C": np.array([[1, 1]])})).C, [[1.0, 1.0]])
    nearly = np.array([[2.0, 0.5], [0.5 + 1e-14, 1.0]])
    np.testing.assert_array_equal(QP.inequality(**(data | {"H": nearly})).H, nearly)


@pytest.mark.parametrize("seed", range(3))
def test_daqp_backend_calls_daqp_as_its_python_interface_does(seed: int) -> None:
    """The backend's compiled call of ``daqp_quadprog`` (its structures filled as ``daqp.solve`` fills them)
    gives ``daqp.solve``'s answer bit for bit: x, the multipliers, the iterations, the exit flag; with and
    without bounds, equalities and warm-start senses."""
    rng = np.random.default_rng(seed)
    for k in range(40):
        n, neq, n_in = int(rng.integers(2, 16)), int(rng.integers(0, 3)), int(rng.integers(0, 20))
        qp = random_qp(rng, n=n, neq=neq, nin=n_in, bounds=bool(k % 2))
        solver = make_solver("daqp")
        warm = solver.solve(qp) if k % 3 == 0 else None
        warm = warm if warm is not None and warm.ok else None
        bounded = qp.has_bounds
        size = (n if bounded else 0) + neq + n_in
        bupper, blower, sense = np.empty(size), np.empty(size), np.empty(size, dtype=np.int32)
        lb, ub = qp.bounds or (np.zeros(0), np.zeros(0))
        multipliers = (np.zeros(0), np.zeros(0)) if warm is None else (
            warm.w if warm.w is not None else np.zeros(0), warm.z)
        daqp_solver._ROWS.call(ub, lb, qp.b, qp.u, qp.l, *multipliers, bupper, blower, sense)  # noqa: SLF001  (the backend's compiled row fill)
        rows = np.ascontiguousarray(np.vstack((qp.A, qp.C)))
        x, _, exitflag, info = daqp.solve(qp.H, qp.g, rows, bupper, blower, sense, **solver.settings)
        raw = solver._solve(qp, warm)  # type: ignore[attr-defined]  # noqa: SLF001  (the raw solve, before the checks)
        assert raw.iterations == info["iterations"]
        assert raw.status is daqp_solver._OUTCOMES[exitflag][0]  # noqa: SLF001  (the backend's exit-flag table)
        if raw.x is not None:
            np.testing.assert_array_equal(raw.x, x)
            parts = ([raw.w] if bounded else []) + [raw.y, raw.z]
            np.testing.assert_array_equal(np.concatenate(parts), info["lam"])


def test_unknown_solver_and_bad_options() -> None:
    with pytest.raises(ValueError, match="unknown QP solver 'qpoases'"):
        make_solver("qpoases")
    with pytest.raises(ValueError, match="max_iter"):
        make_solver("daqp", max_iter=0)
    with pytest.raises(TypeError):
        make_solver("osqp", tolerance=1e-3)
    assert DEFAULT_SOLVER in SOLVERS


def test_infinite_sides_are_unbounded_rows() -> None:
    """+-inf per row means no bound on that side; the answers agree across backends."""
    qp = QP(
        np.eye(2),
        np.array([-2.0, -2.0]),
        C=np.array([[1.0, 1.0], [1.0, -1.0]]),
        l=np.array([-np.inf, -np.inf]),
        u=np.array([3.0, np.inf]),
        lb=np.array([-np.inf, 1.8]),
    )
    for name in SOLVERS:
        result = make_solver(name).solve(qp)
        assert result.ok
        np.testing.assert_allclose(result.x, [1.2, 1.8], atol=1e-6)  # on x1 + x2 = 3 and x2 = 1.8


def _pinned_qp(offset: float) -> QP:
    """x0 pinned twice (rows x0 = 1 and 2 x0 = 2 + offset, both l = u): DAQP's initial working set is
    overdetermined (exit -6); consistent up to ``offset``."""
    C = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    side = np.array([1.0, 2.0 + offset, 1.0])
    return QP(np.eye(3), np.ones(3), C=C, l=np.array([1.0, 2.0 + offset, -1.0]), u=side)


def test_daqp_overdetermined_working_set_is_a_failed_solve_the_fallback_solves() -> None:
    """Exit -6 (rows pinned by l = u, dependent, consistent to 2e-9) is NUMERICAL_ERROR, not an exception;
    OSQP (the fallback) solves the same problem; contradictory pinned rows are INFEASIBLE."""
    qp = _pinned_qp(4e-9)
    daqp_result = make_solver("daqp").solve(qp)
    assert daqp_result.status is QPStatus.NUMERICAL_ERROR
    assert not daqp_result.ok
    assert "exitflag -6" in daqp_result.message
    assert "overdetermined" in daqp_result.message
    rescued = make_solver("osqp").solve(qp)
    assert rescued.ok
    assert rescued.x is not None
    np.testing.assert_allclose(rescued.x, [1.0, -0.5, -0.5], atol=1e-6)  # x0 pinned; x1 + x2 >= -1 active
    contradiction = make_solver("daqp").solve(_pinned_qp(0.5))
    assert contradiction.status is QPStatus.INFEASIBLE
    assert "contradict" in contradiction.message


def test_a_backend_that_raises_is_a_failed_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("zero-size array to reduction operation")

    monkeypatch.setattr(daqp_solver._QUADPROG, "call", broken)  # noqa: SLF001  (the backend's call into DAQP)
    result = make_solver("daqp").solve(_pinned_qp(0.0))
    assert result.status is QPStatus.NUMERICAL_ERROR
    assert result.x is None
    assert result.message == "daqp raised ValueError: zero-size array to reduction operation"


def test_a_warm_start_daqp_cycles_on_is_solved_again_at_a_looser_primal_tolerance() -> None:
    """A whole-body QP of the 2 kg quadruped's random run (data/daqp_warm_start_cycles.npz: its hard level and
    the previous tick's answer) on which DAQP, warm-started at its primal_tol 1e-10, cycles: the warm solve is
    repeated at ``CYCLING_PRIMAL_TOL``, says so, satisfies the KKT conditions and is the cold start's answer
    (which does not cycle) to 1e-8."""
    data = np.load(Path(__file__).parent / "data" / "daqp_warm_start_cycles.npz")
    qp = QP.inequality(data["H"], data["g"], data["C"], data["l"], data["u"])
    warm = QPResult(QPStatus.SOLVED, data["warm_x"], 1, 0.0, "daqp", y=data["warm_y"], z=data["warm_z"],
                    shape=qp.shape)
    result = make_solver("daqp").solve(qp, warm_start=warm)
    assert result.ok, result.message
    assert result.warm_started
    assert result.message.startswith("daqp exitflag -2 (cycling) at primal_tol 1e-10; solved again")
    assert kkt_residuals(qp, result).max <= KKT_TOL["daqp"]
    cold = make_solver("daqp").solve(qp)
    assert cold.message == "daqp exitflag 1: optimal"
    np.testing.assert_allclose(result.x, cold.x, atol=1e-8)


def test_a_cold_solve_daqp_cycles_on_is_repeated_at_a_looser_primal_tolerance() -> None:
    """A whole-body QP of the 2 kg quadruped trotting forward (data/daqp_cold_start_cycles.npz: its hard
    level) on which DAQP cycles from a cold start at the backend's primal_tol 1e-10: the solve is repeated at
    ``CYCLING_PRIMAL_TOL``, says so, satisfies the KKT conditions and costs what OSQP's answer costs."""
    data = np.load(Path(__file__).parent / "data" / "daqp_cold_start_cycles.npz")
    qp = QP.inequality(data["H"], data["g"], data["C"], data["l"], data["u"])
    result = make_solver("daqp").solve(qp)
    assert result.ok, result.message
    assert result.message == (f"daqp exitflag -2 (cycling) at primal_tol 1e-10; solved again at primal_tol "
                              f"{daqp_solver.CYCLING_PRIMAL_TOL:g}: daqp exitflag 1: optimal")
    assert kkt_residuals(qp, result).max <= KKT_TOL["daqp"]
    loose = make_solver("daqp", primal_tol=daqp_solver.CYCLING_PRIMAL_TOL).solve(qp)
    assert loose.message == "daqp exitflag 1: optimal"  # no retry at that tolerance
    np.testing.assert_array_equal(result.x, loose.x)
    reference = make_solver("osqp", eps_abs=1e-10, eps_rel=1e-10, max_iter=100000).solve(qp)
    assert reference.ok, reference.message
    # H's smallest eigenvalue is the WBC's 1e-7 ridge: compare the optimal costs, not the nearly free x
    cost = [0.5 * x @ qp.H @ x + qp.g @ x for x in (result.x, reference.x)]
    assert cost[0] <= cost[1] + 1e-12 * abs(cost[1])
    assert cost[0] == pytest.approx(cost[1], rel=1e-11)


@pytest.mark.parametrize("name", SOLVERS)
def test_a_warm_start_is_retried_cold_only_after_a_numerical_failure(name: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """An iteration cap reached from a warm start: solved once more, cold (still capped, both said); an
    infeasible answer from a warm start: not solved again."""
    rng = np.random.default_rng(3)
    previous = make_solver(name).solve(random_qp(rng, n=30, neq=5, nin=50))
    calls: list[bool] = []

    def counted(solver: QPSolver) -> QPSolver:
        """``solver``, its raw solves recorded in ``calls`` (warm-started or not)."""
        solve = solver._solve  # type: ignore[attr-defined]  # noqa: SLF001  (counted)

        def recorded(qp: QP, warm: QPResult | None) -> object:
            calls.append(warm is not None)
            return solve(qp, warm)

        monkeypatch.setattr(solver, "_solve", recorded)
        return solver

    capped = counted(make_solver(name, max_iter=1))
    result = capped.solve(random_qp(rng, n=30, neq=5, nin=50), warm_start=previous)
    assert calls == [True, False]
    assert result.status is QPStatus.MAX_ITERATIONS
    assert not result.warm_started
    assert result.message.startswith("warm start ended max_iterations (")
    feasible = random_qp(rng, n=30, neq=5, nin=50)
    C, low, high = feasible.C.copy(), feasible.l.copy(), feasible.u.copy()
    C[1], low[1], high[1] = C[0], high[0] + 1.0, high[0] + 2.0  # row 1 = row 0 beyond row 0's upper side
    assert feasible.bounds is not None
    infeasible = QP(feasible.H, feasible.g, A=feasible.A, b=feasible.b, C=C, l=low, u=high,
                    lb=feasible.bounds[0], ub=feasible.bounds[1])
    calls.clear()
    result = counted(make_solver(name)).solve(infeasible, warm_start=previous)
    assert result.status is QPStatus.INFEASIBLE, result.message
    assert calls == [True]
