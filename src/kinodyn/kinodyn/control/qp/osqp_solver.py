"""OSQP backend: the operator-splitting (ADMM) QP solver, sparse CSC data (Stellato et al., "OSQP: an operator
splitting solver for quadratic programs", Math. Prog. Comp. 2020; osqp 1.1, Apache-2.0).

OSQP's single constraint block ``l <= M x <= u`` stacks ``[A; C; I]`` (equalities as l = u, the identity for
variable bounds), so its multipliers split back into (y, z, w) in order. The sparsity pattern is the dense one
(explicit zeros kept), fixed per problem shape: later problems of that shape only update the numbers, and the
warm start (or an explicit zero cold start) sets x and y before each solve.
"""

from __future__ import annotations

import numpy as np
import osqp
import scipy.sparse as sp

from kinodyn.control.qp.problem import QP, QPResult, QPStatus
from kinodyn.control.qp.solver import RawSolution, SolverBase

_INF = float(osqp.constant("OSQP_INFTY"))
_NONCONVEX_SETUP_ERROR = 4  # OSQP_NONCVX_ERROR (osqp/include/public/osqp_api_constants.h)
_S = osqp.SolverStatus
_STATUS = {  # every SolverStatus of osqp 1.1; SOLVED_INACCURATE is a failure too (QPResult.ok is SOLVED only)
    _S.OSQP_SOLVED: QPStatus.SOLVED,
    _S.OSQP_SOLVED_INACCURATE: QPStatus.INACCURATE,
    _S.OSQP_PRIMAL_INFEASIBLE: QPStatus.INFEASIBLE,
    _S.OSQP_PRIMAL_INFEASIBLE_INACCURATE: QPStatus.INFEASIBLE,
    _S.OSQP_DUAL_INFEASIBLE: QPStatus.UNBOUNDED,
    _S.OSQP_DUAL_INFEASIBLE_INACCURATE: QPStatus.UNBOUNDED,
    _S.OSQP_MAX_ITER_REACHED: QPStatus.MAX_ITERATIONS,
    _S.OSQP_TIME_LIMIT_REACHED: QPStatus.MAX_ITERATIONS,
    _S.OSQP_NON_CVX: QPStatus.NONCONVEX,
    _S.OSQP_SIGINT: QPStatus.NUMERICAL_ERROR,
    _S.OSQP_UNSOLVED: QPStatus.NUMERICAL_ERROR,
}


class _Pattern:
    """Dense CSC patterns of P (upper triangle) and M = [A; C; I] for one problem shape."""

    def __init__(self, n: int, m_dense: int, bounds: bool) -> None:
        upper = np.triu(np.ones((n, n), dtype=bool))
        mask = np.vstack(
            (np.ones((m_dense, n), dtype=bool), np.eye(n, dtype=bool) if bounds else np.zeros((0, n), bool))
        )
        self.p_cols, self.p_rows = np.nonzero(upper.T)  # column-major order of the kept entries
        self.m_cols, self.m_rows = np.nonzero(mask.T)
        self.p_indptr = np.searchsorted(self.p_cols, np.arange(n + 1))
        self.m_indptr = np.searchsorted(self.m_cols, np.arange(n + 1))
        self.m_shape = mask.shape

    def P(self, H: np.ndarray) -> sp.csc_matrix:
        return sp.csc_matrix((H[self.p_rows, self.p_cols], self.p_rows, self.p_indptr), shape=H.shape)

    def M(self, stacked: np.ndarray) -> sp.csc_matrix:
        return sp.csc_matrix(
            (stacked[self.m_rows, self.m_cols], self.m_rows, self.m_indptr), shape=self.m_shape
        )


class OsqpSolver(SolverBase):
    """Sparse ADMM QP solver (the one the suite's users name).

    eps_abs, eps_rel: ADMM termination tolerances (OSQP defaults 1e-3; 1e-7 here: at 1e-6 polishing failed on
        one of six random test QPs, leaving KKT residuals of 6e-4). With ``polishing`` (on) OSQP
        refines the ADMM answer on its guessed active set; when that succeeds the residuals reach round-off.
    max_iter: ADMM iterations. acceptance_tol: relative primal/stationarity residual above which an "optimal"
        answer is rejected (1e-4: OSQP is accurate to its eps, not to round-off).
    """

    name = "osqp"

    def __init__(
        self,
        *,
        eps_abs: float = 1e-7,
        eps_rel: float = 1e-7,
        polishing: bool = True,
        max_iter: int = 4000,
        acceptance_tol: float = 1e-4,
    ) -> None:
        super().__init__(max_iter=max_iter, acceptance_tol=acceptance_tol)
        self.settings = {
            "eps_abs": float(eps_abs),
            "eps_rel": float(eps_rel),
            "polishing": bool(polishing),
            "max_iter": self.max_iter,
            "verbose": False,
            "warm_starting": True,
        }
        self._solver: osqp.OSQP | None = None
        self._pattern: _Pattern | None = None
        self._shape: tuple[int, int, int, bool] | None = None

    def _load(self, qp: QP, stacked: np.ndarray, low: np.ndarray, high: np.ndarray) -> osqp.OSQP:
        """Set up OSQP for a new shape, or update the numbers of the current one; returns the solver."""
        if self._shape != qp.shape:
            pattern, solver = _Pattern(qp.n, qp.n_eq + qp.n_in, qp.has_bounds), osqp.OSQP()
            self._pattern, self._solver = pattern, solver
            solver.setup(pattern.P(qp.H), qp.g, pattern.M(stacked), low, high, **self.settings)
            self._shape = qp.shape
            return solver
        # self._shape is set only after a successful setup of self._pattern and self._solver
        assert self._pattern is not None
        assert self._solver is not None
        pattern, solver = self._pattern, self._solver
        solver.update(
            q=qp.g,
            l=low,
            u=high,
            Px=qp.H[pattern.p_rows, pattern.p_cols],
            Ax=stacked[pattern.m_rows, pattern.m_cols],
        )
        return solver

    def _solve(self, qp: QP, warm: QPResult | None) -> RawSolution:
        parts = [qp.A, qp.C] + ([np.eye(qp.n)] if qp.has_bounds else [])
        stacked = np.vstack(parts)
        low = np.maximum(np.concatenate([qp.b, qp.l] + ([qp.lb] if qp.has_bounds else [])), -_INF)
        high = np.minimum(np.concatenate([qp.b, qp.u] + ([qp.ub] if qp.has_bounds else [])), _INF)
        try:
            solver = self._load(qp, stacked, low, high)
        except osqp.OSQPException as error:  # OSQP refuses the data (code 4: P not positive semidefinite)
            self._shape = None
            code = error.args[0] if error.args else None
            status = QPStatus.NONCONVEX if code == _NONCONVEX_SETUP_ERROR else QPStatus.NUMERICAL_ERROR
            return RawSolution(status, 0, f"osqp refused the problem (error code {code})")
        try:
            if warm is None:
                solver.warm_start(x=np.zeros(qp.n), y=np.zeros(stacked.shape[0]))
            else:
                # SolverBase passes only a SOLVED result of this shape: y, z set, w set exactly with bounds
                assert warm.y is not None
                assert warm.z is not None
                assert (warm.w is not None) == qp.has_bounds
                multipliers = [warm.y, warm.z] + ([warm.w] if warm.w is not None else [])
                solver.warm_start(x=warm.x, y=np.concatenate(multipliers))
            result = solver.solve(raise_error=False)
        except osqp.OSQPException as error:  # the solve itself failed (e.g. the KKT factorisation)
            self._shape = None  # set the problem up afresh next time
            return RawSolution(QPStatus.NUMERICAL_ERROR, 0, f"osqp failed: {error}")
        info = result.info
        status = _STATUS.get(info.status_val, QPStatus.NUMERICAL_ERROR)
        message = f"osqp {info.status} (polish {info.status_polish})"
        if status is not QPStatus.SOLVED:
            return RawSolution(status, int(info.iter), message)
        y = np.array(result.y)
        neq, nin = qp.n_eq, qp.n_in
        return RawSolution(
            status,
            int(info.iter),
            message,
            x=np.array(result.x),
            y=y[:neq],
            z=y[neq : neq + nin],
            w=y[neq + nin :] if qp.has_bounds else None,
        )
