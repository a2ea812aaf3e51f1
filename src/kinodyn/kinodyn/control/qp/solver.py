"""The solver interface every QP backend implements, and the checks they share.

A backend turns a validated :class:`QP` into a :class:`QPResult`. It never raises for a numerical
reason: infeasible, unbounded, capped or failed solves come back as their status with a message (an
exception raised inside a backend's call too: NUMERICAL_ERROR naming it, so a caller's fallback runs), and a
SOLVED result is re-checked here (finite; primal and stationarity residuals within the backend's acceptance
tolerance) so garbage never passes as a solution. A warm start is the previous :class:`QPResult`; it is
used only when it was SOLVED on a problem of the same shape (``QP.shape``), and
``QPResult.warm_started`` says whether it was. A warm-started solve that ends in a numerical failure (an
iteration cap, an inaccurate or rejected answer, DAQP's cycling: measured once in 30 s of a trot, a QP its
cold start solved in 13 iterations) is solved once more from a cold start; that answer says so in its
message and has ``warm_started`` False.
"""

from __future__ import annotations

import abc
import math
from typing import ClassVar, NamedTuple, Protocol

import numpy as np
from numba import njit

from kinodyn.control.qp.problem import QP, QPResult, QPStatus
from kinodyn.kernel import IN1, IN2, Kernel

_EMPTY = np.zeros(0)
_COLD_RETRY = frozenset({QPStatus.NUMERICAL_ERROR, QPStatus.MAX_ITERATIONS, QPStatus.INACCURATE})
_new = object.__new__


class QPSolver(Protocol):
    """What the whole-body controller needs from a QP backend."""

    @property
    def name(self) -> str:
        """The backend's name (one of ``kinodyn.control.qp.SOLVERS``), reported in every QPResult."""
        ...

    def solve(self, qp: QP, warm_start: QPResult | None = None) -> QPResult:
        """Solve ``qp``, starting from ``warm_start`` when it applies."""
        ...


class RawSolution(NamedTuple):
    """What a backend returns to :class:`SolverBase`, multipliers in the convention of ``problem.py``."""

    status: QPStatus
    iterations: int
    message: str = ""
    x: np.ndarray | None = None
    y: np.ndarray | None = None
    z: np.ndarray | None = None
    w: np.ndarray | None = None


class SolverBase(abc.ABC):
    """Shared front of the backends: input checks, warm-start selection and the acceptance check."""

    name: ClassVar[str]

    def __init__(self, *, max_iter: int, acceptance_tol: float) -> None:
        if max_iter < 1:
            raise ValueError(f"{self.name}: max_iter must be >= 1, got {max_iter}")
        if not acceptance_tol > 0.0:
            raise ValueError(f"{self.name}: acceptance_tol must be > 0, got {acceptance_tol}")
        self.max_iter = int(max_iter)
        self.acceptance_tol = float(acceptance_tol)

    def solve(self, qp: QP, warm_start: QPResult | None = None) -> QPResult:
        """Solve ``qp``; a SOLVED ``warm_start`` of the same shape seeds the primal (and dual) iterate."""
        if not isinstance(qp, QP):
            raise TypeError(f"{self.name}.solve expects a kinodyn.control.qp.QP, got {type(qp).__name__}")
        if warm_start is not None and not isinstance(warm_start, QPResult):
            raise TypeError(
                f"{self.name}.solve: warm_start must be a QPResult or None, got {type(warm_start).__name__}"
            )
        if not qp.bounds_consistent():
            raw = RawSolution(
                QPStatus.INFEASIBLE, 0, "a lower bound exceeds its upper bound (l > u or lb > ub)"
            )
            return self._result(qp, raw, warm=False)
        warm = (
            warm_start if warm_start is not None and warm_start.ok and warm_start.shape == qp.shape else None
        )
        result = self._result(qp, self._guarded(qp, warm), warm=warm is not None)
        if warm is None or result.status not in _COLD_RETRY:
            return result
        raw = self._guarded(qp, None)
        note = f"warm start ended {result.status.value} ({result.message}); solved again from a cold start"
        return self._result(qp, raw._replace(message=f"{note}; {raw.message}" if raw.message else note),
                            warm=False)

    def _guarded(self, qp: QP, warm: QPResult | None) -> RawSolution:
        """``_solve``'s answer; NUMERICAL_ERROR naming an exception the backend raised."""
        try:
            return self._solve(qp, warm)
        except (ArithmeticError, ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
            return RawSolution(QPStatus.NUMERICAL_ERROR, 0, f"{self.name} raised {type(exc).__name__}: {exc}")

    @abc.abstractmethod
    def _solve(self, qp: QP, warm: QPResult | None) -> RawSolution:
        """Run the backend; ``warm`` is None or a SOLVED result of the same shape."""

    def _result(self, qp: QP, raw: RawSolution, *, warm: bool) -> QPResult:
        status, message, objective = raw.status, raw.message, math.nan
        if status is QPStatus.SOLVED:
            problem, objective = self._acceptance(qp, raw)
            if problem:
                status, message = QPStatus.NUMERICAL_ERROR, f"{message}; rejected: {problem}".lstrip("; ")
        if status is not QPStatus.SOLVED:
            return QPResult(
                status,
                None,
                raw.iterations,
                None,
                self.name,
                warm_started=warm,
                message=message,
                shape=qp.shape,
            )
        assert raw.x is not None  # _rejection turns a SOLVED answer without x into NUMERICAL_ERROR
        result = _new(QPResult)  # every field, as the frozen dataclass __init__ sets them (a tick cost)
        result.__dict__.update(status=status, x=raw.x, iterations=raw.iterations, objective=objective,
                               solver=self.name, y=raw.y, z=raw.z, w=raw.w if qp.has_bounds else None,
                               warm_started=warm, message=message, shape=qp.shape)
        return result

    def _rejection(self, qp: QP, raw: RawSolution) -> str:
        """Why a solution the backend calls optimal is not one ('' when it is acceptable): non-finite, or a
        primal or stationarity residual above ``acceptance_tol`` times the problem's scale (``residuals``)."""
        return self._acceptance(qp, raw)[0]

    def _acceptance(self, qp: QP, raw: RawSolution) -> tuple[str, float]:
        """``_rejection``'s answer and the objective at ``raw.x`` (NaN when rejected)."""
        x, y, z = raw.x, raw.y, raw.z
        w = raw.w if qp.has_bounds else None
        if x is None or y is None or z is None or (qp.has_bounds and w is None):
            return "non-finite or missing solution", math.nan
        lb, ub = qp.bounds or (_EMPTY, _EMPTY)
        primal, stationarity, scale, objective = _RESIDUALS.call(qp.H, qp.g, qp.A, qp.b, qp.C, qp.l, qp.u, lb,
                                                                 ub, x, y, z, _EMPTY if w is None else w)
        if not math.isfinite(primal + stationarity):
            return "non-finite or missing solution", math.nan
        limit = self.acceptance_tol * scale
        for what, residual in (("primal", primal), ("stationarity", stationarity)):
            if residual > limit:
                return (f"{what} residual {residual:.3g} > {self.acceptance_tol:.3g} x scale {scale:.3g}",
                        math.nan)
        return "", objective


@njit(cache=True)
def residuals(H: np.ndarray, g: np.ndarray, A: np.ndarray, b: np.ndarray, C: np.ndarray, l: np.ndarray,  # noqa: E741, PLR0913, PLR0917  (flat arrays for a compiled kernel)
              u: np.ndarray, lb: np.ndarray, ub: np.ndarray, x: np.ndarray, y: np.ndarray, z: np.ndarray,
              w: np.ndarray) -> tuple[float, float, float, float]:
    """``(primal, stationarity, scale, objective)`` of ``(x, y, z, w)`` (``lb``, ``ub``, ``w`` empty without
    variable bounds): the largest constraint violation, ``max |H x + g + A^T y + C^T z + w|``,
    ``max(1, |x|, |g|, |H x|, |b|, |C x|)`` and ``1/2 x'Hx + g'x``; NaN when an entry of the solution is not
    finite."""
    n = x.size
    for block in (x, y, z, w):
        for value in block:
            if not math.isfinite(value):
                return math.nan, math.nan, 1.0, math.nan
    gradient = g.copy()
    scale, primal, objective = 1.0, 0.0, 0.0
    for i in range(n):
        hx = 0.0
        for j in range(n):
            hx += H[i, j] * x[j]
        gradient[i] += hx
        objective += x[i] * (0.5 * hx + g[i])
        scale = max(scale, abs(x[i]), abs(g[i]), abs(hx))
    for k in range(C.shape[0]):
        cx = 0.0
        for j in range(n):
            cx += C[k, j] * x[j]
            gradient[j] += C[k, j] * z[k]
        scale = max(scale, abs(cx))
        primal = max(primal, l[k] - cx, cx - u[k])
    for k in range(A.shape[0]):
        ax = 0.0
        for j in range(n):
            ax += A[k, j] * x[j]
            gradient[j] += A[k, j] * y[k]
        scale = max(scale, abs(b[k]))
        primal = max(primal, abs(ax - b[k]))
    for j in range(w.size):
        gradient[j] += w[j]
        primal = max(primal, lb[j] - x[j], x[j] - ub[j])
    stationarity = 0.0
    for j in range(n):
        stationarity = max(stationarity, abs(gradient[j]))
    return primal, stationarity, scale, objective


_RESIDUALS = Kernel(residuals, IN2, IN1, IN2, IN1, IN2, IN1, IN1, IN1, IN1, IN1, IN1, IN1, IN1)
