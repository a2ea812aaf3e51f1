"""ProxQP dense backend: a primal-dual proximal augmented-Lagrangian QP solver (Bambade et al., "PROX-QP: Yet
another Quadratic Programming Solver for Robotics and beyond", RSS 2022; proxsuite 0.8, BSD-2).

The variable bounds go in as identity rows under C, not as ProxQP's box constraints: proxsuite 0.8.0 takes no
box multipliers in a warm start and, warm-started with box constraints, diverges to NaN (measured). One dense
workspace is kept per problem shape and re-initialised each solve (fresh Ruiz equilibration of the new data).
A warm start passes the previous primal and dual iterates (``InitialGuess.WARM_START``); a cold start uses
ProxQP's equality-constrained initial guess.

Known limit (proxsuite 0.8.0): infeasible *equalities* are reported PRIMAL_INFEASIBLE, but some infeasible
inequality sets are not detected and end at the iteration cap (status MAX_ITERATIONS, never SOLVED).
"""

from __future__ import annotations

import numpy as np
from proxsuite import proxqp

from kinodyn.control.qp.problem import QP, QPResult, QPStatus
from kinodyn.control.qp.solver import RawSolution, SolverBase

_STATUS = {
    proxqp.QPSolverOutput.PROXQP_SOLVED: QPStatus.SOLVED,
    proxqp.QPSolverOutput.PROXQP_MAX_ITER_REACHED: QPStatus.MAX_ITERATIONS,
    proxqp.QPSolverOutput.PROXQP_PRIMAL_INFEASIBLE: QPStatus.INFEASIBLE,
    proxqp.QPSolverOutput.PROXQP_SOLVED_CLOSEST_PRIMAL_FEASIBLE: QPStatus.INFEASIBLE,
    proxqp.QPSolverOutput.PROXQP_DUAL_INFEASIBLE: QPStatus.UNBOUNDED,
}


class ProxsuiteSolver(SolverBase):
    """Dense ProxQP.

    eps_abs: absolute primal and dual residual at termination (ProxQP default 1e-5; 1e-12 here: at 1e-10
        complementarity stayed at 2e-9 on random QPs, at 1e-12 it reaches 1e-11 for ~1 more iteration).
    eps_rel: relative residual (default 0: absolute only).
    max_iter: outer iterations.
    acceptance_tol: relative primal/stationarity residual above which an "optimal" answer is rejected.
    """

    name = "proxsuite"

    def __init__(
        self,
        *,
        eps_abs: float = 1e-12,
        eps_rel: float = 0.0,
        max_iter: int = 1000,
        acceptance_tol: float = 1e-8,
    ) -> None:
        super().__init__(max_iter=max_iter, acceptance_tol=acceptance_tol)
        self.eps_abs, self.eps_rel = float(eps_abs), float(eps_rel)
        self._workspace: proxqp.dense.QP | None = None
        self._shape: tuple[int, int, int, bool] | None = None

    def _qp_workspace(self, qp: QP) -> proxqp.dense.QP:
        if self._shape != qp.shape:
            workspace = proxqp.dense.QP(qp.n, qp.n_eq, qp.n_in + (qp.n if qp.has_bounds else 0), False)
            settings = workspace.settings
            settings.eps_abs, settings.eps_rel, settings.max_iter = self.eps_abs, self.eps_rel, self.max_iter
            settings.verbose = False
            self._workspace, self._shape = workspace, qp.shape
        return self._workspace

    def _solve(self, qp: QP, warm: QPResult | None) -> RawSolution:
        workspace = self._qp_workspace(qp)
        if qp.has_bounds:
            rows = np.vstack((qp.C, np.eye(qp.n)))
            low, high = np.concatenate((qp.l, qp.lb)), np.concatenate((qp.u, qp.ub))
        else:
            rows, low, high = qp.C, qp.l, qp.u
        workspace.init(qp.H, qp.g, qp.A, qp.b, rows, low, high)
        if warm is None:
            workspace.settings.initial_guess = proxqp.InitialGuess.EQUALITY_CONSTRAINED_INITIAL_GUESS
            workspace.solve()
        else:
            workspace.settings.initial_guess = proxqp.InitialGuess.WARM_START
            workspace.solve(warm.x, warm.y, np.concatenate((warm.z, warm.w)) if qp.has_bounds else warm.z)
        results = workspace.results
        status = _STATUS.get(results.info.status, QPStatus.NUMERICAL_ERROR)
        message = f"proxsuite {results.info.status.name}"
        iterations = int(results.info.iter)
        if status is not QPStatus.SOLVED:
            return RawSolution(status, iterations, message)
        z = np.array(results.z)
        return RawSolution(
            status,
            iterations,
            message,
            x=np.array(results.x),
            y=np.array(results.y),
            z=z[: qp.n_in],
            w=z[qp.n_in :] if qp.has_bounds else None,
        )
