"""DAQP backend: a dual active-set solver for small dense strictly convex QPs (Arnström, Bemporad, Axehill,
"A dual active-set solver for embedded quadratic programming using recursive LDL' updates", IEEE TAC 2022;
daqp 0.11, MIT).

Rows passed to DAQP: the variable bounds first (its "simple bounds"), then the equalities (sense 5: active and
immutable), then the C rows. A warm start marks the rows whose previous multiplier was non-zero as active
(sense bit 1, plus bit 2 for a lower bound): the dual active-set method then starts from that working set.
"""

from __future__ import annotations

import daqp
import numpy as np
from numba import njit, types

from kinodyn._kernels.entry import IN1, OUT1, Kernel
from kinodyn.control.qp.problem import QP, QPResult, QPStatus
from kinodyn.control.qp.solver import RawSolution, SolverBase

_INF = 1e30  # DAQP's infinity (constants.h)
_EMPTY = np.zeros(0)
_ACTIVE, _LOWER, _EQUALITY = 1, 2, 5
_EXITFLAGS = {  # every exit flag of daqp 0.11 (api.h); any other is a failure named by its number
    1: (QPStatus.SOLVED, "optimal"),
    2: (QPStatus.NUMERICAL_ERROR, "soft optimal (a soft constraint violated; this backend sets none)"),
    -1: (QPStatus.INFEASIBLE, "primal infeasible"),
    -2: (QPStatus.NUMERICAL_ERROR, "cycling detected"),
    -3: (QPStatus.UNBOUNDED, "unbounded"),
    -4: (QPStatus.MAX_ITERATIONS, "iteration limit reached"),
    -5: (
        QPStatus.NONCONVEX,
        "H is not positive definite: DAQP needs a strictly convex QP "
        "(or eps_prox < 0 for automatic proximal regularisation)",
    ),
    -6: (
        QPStatus.NUMERICAL_ERROR,
        "overdetermined initial working set: the equalities and the rows pinned by l = u or lb = ub are "
        "linearly dependent",
    ),
    -7: (QPStatus.MAX_ITERATIONS, "time limit reached"),
}

_OUTCOMES = {flag: (status, f"daqp exitflag {flag}: {text}") for flag, (status, text) in _EXITFLAGS.items()}


class DaqpSolver(SolverBase):
    """Dense dual active-set QP solver.

    primal_tol: largest constraint violation accepted for an inactive row (DAQP default 1e-6; 1e-10 here
        so the WBC's rows hold to 1e-8). Equalities and active rows hold to round-off regardless.
    dual_tol: smallest multiplier counted as blocking (DAQP default 1e-12).
    eps_prox: 0 solves the QP exactly and reports a singular H as NONCONVEX; < 0 regularises automatically,
        > 0 always (proximal-point outer iterations, accurate to about |eps_prox|).
    max_iter: active-set iterations (each adds or removes one row).
    acceptance_tol: relative primal residual above which an "optimal" answer is rejected as NUMERICAL_ERROR.
    """

    name = "daqp"

    def __init__(
        self,
        *,
        primal_tol: float = 1e-10,
        dual_tol: float = 1e-12,
        eps_prox: float = 0.0,
        max_iter: int = 1000,
        acceptance_tol: float = 1e-8,
    ) -> None:
        super().__init__(max_iter=max_iter, acceptance_tol=acceptance_tol)
        self.settings = {
            "primal_tol": float(primal_tol),
            "dual_tol": float(dual_tol),
            "eps_prox": float(eps_prox),
            "iter_limit": self.max_iter,
        }
        self._vectors: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # DAQP's, per row count

    def _solve(self, qp: QP, warm: QPResult | None) -> RawSolution:
        n, neq, n_in, has_bounds = qp.shape
        ms = n if has_bounds else 0
        rows = np.vstack((qp.A, qp.C)) if neq and n_in else (qp.A if neq else qp.C)
        lb, ub = qp.bounds or (_EMPTY, _EMPTY)
        size = ms + neq + n_in
        vectors = self._vectors.get(size)  # (every entry written by _ROWS below)
        if vectors is None:
            vectors = self._vectors[size] = (np.empty(size), np.empty(size), np.empty(size, dtype=np.int32))
        bupper, blower, sense = vectors
        if warm is not None:
            # SolverBase passes only a SOLVED result of this shape: z set, w set exactly with bounds
            assert warm.z is not None and (warm.w is not None) == has_bounds
        w = _EMPTY if warm is None or warm.w is None else warm.w
        z = _EMPTY if warm is None or warm.z is None else warm.z
        _ROWS.call(ub, lb, qp.b, qp.u, qp.l, w, z, bupper, blower, sense)
        rows = rows if rows.flags.c_contiguous else np.ascontiguousarray(rows)
        x, _, exitflag, info = daqp.solve(qp.H, qp.g, rows, bupper, blower, sense, **self.settings)
        status, message = _OUTCOMES.get(exitflag) or (QPStatus.NUMERICAL_ERROR,
                                                      f"daqp exitflag {exitflag}: unknown exit flag")
        if exitflag == -6 and not _pinned_consistent(qp, self.settings["primal_tol"]):
            status, message = QPStatus.INFEASIBLE, ("daqp exitflag -6: the equalities and the rows pinned by "
                                                    "l = u or lb = ub contradict each other (no x satisfies "
                                                    "them all)")
        if status is not QPStatus.SOLVED:
            return RawSolution(status, int(info["iterations"]), message)
        lam = info["lam"]
        return RawSolution(
            status,
            int(info["iterations"]),
            message,
            x=x,
            y=lam[ms : ms + neq],
            z=lam[ms + neq :],
            w=lam[:ms] if has_bounds else None,
        )


@njit(cache=True)
def daqp_rows(ub: np.ndarray, lb: np.ndarray, b: np.ndarray, u: np.ndarray, l: np.ndarray,  # noqa: E741
              w: np.ndarray, z: np.ndarray, bupper: np.ndarray, blower: np.ndarray,
              sense: np.ndarray) -> None:
    """DAQP's bound vectors and senses, rows in its order (module doc): the variable bounds ``lb``, ``ub``
    (empty: none), the equalities ``b`` (sense 5), the C rows ``l``, ``u``; infinities at DAQP's ``_INF``.
    A warm start's multipliers ``w`` (bounds) and ``z`` (C rows; both empty when cold) mark the rows active
    (bit 1) and at their lower side (bit 2) where they push; every entry of the outputs is written."""
    ms, neq = ub.size, b.size
    for i in range(bupper.size):
        flags = 0
        if i < ms:
            high, low = ub[i], lb[i]
        elif i < ms + neq:
            high = low = b[i - ms]
            flags = _EQUALITY
        else:
            high, low = u[i - ms - neq], l[i - ms - neq]
        bupper[i] = min(max(high, -_INF), _INF)
        blower[i] = min(max(low, -_INF), _INF)
        previous = w[i] if i < w.size else (z[i - ms - neq] if z.size and i >= ms + neq else 0.0)
        if previous > 0.0:
            flags |= _ACTIVE
        elif previous < 0.0:
            flags |= _ACTIVE | _LOWER
        sense[i] = flags


_ROWS = Kernel(daqp_rows, IN1, IN1, IN1, IN1, IN1, IN1, IN1, OUT1, OUT1, types.Array(types.int32, 1, "C"))


def _pinned_consistent(qp: QP, tol: float) -> bool:
    """Whether the rows DAQP holds from the start (equalities, C rows with ``u - l <= tol``, bounds with
    ``ub - lb <= tol``) have a common solution (least-squares residual at round-off; none: True)."""
    rows, rhs = [qp.A], [qp.b]
    pinned = qp.u - qp.l <= tol
    rows.append(qp.C[pinned])
    rhs.append(qp.l[pinned])
    if qp.bounds is not None:
        lb, ub = qp.bounds
        fixed = ub - lb <= tol
        rows.append(np.eye(qp.n)[fixed])
        rhs.append(lb[fixed])
    M, b = np.vstack(rows), np.concatenate(rhs)
    if b.size == 0:
        return True
    x = np.linalg.lstsq(M, b, rcond=None)[0]
    return bool(np.abs(M @ x - b).max() <= 1e-9 * max(1.0, float(np.abs(b).max())))
