"""The solver interface every QP backend implements, and the checks they share.

A backend turns a validated :class:`QP` into a :class:`QPResult`. It never raises for a numerical
reason: infeasible, unbounded, capped or failed solves come back as their status with a message (an
exception raised inside a backend's call too: NUMERICAL_ERROR naming it, so a caller's fallback runs), and a
SOLVED result is re-checked here (finite; primal and stationarity residuals within the backend's acceptance
tolerance) so garbage never passes as a solution. A warm start is the previous :class:`QPResult`; it is
used only when it was SOLVED on a problem of the same shape (``QP.shape``), and
``QPResult.warm_started`` says whether it was.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from kinodyn.control.qp.problem import QP, QPResult, QPStatus, _violation


class QPSolver(Protocol):
    """What the whole-body controller needs from a QP backend."""

    @property
    def name(self) -> str:
        """The backend's name (one of ``kinodyn.control.qp.SOLVERS``), reported in every QPResult."""
        ...

    def solve(self, qp: QP, warm_start: QPResult | None = None) -> QPResult:
        """Solve ``qp``, starting from ``warm_start`` when it applies."""
        ...


@dataclass(frozen=True)
class RawSolution:
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
        try:
            raw = self._solve(qp, warm)
        except (ArithmeticError, ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
            raw = RawSolution(QPStatus.NUMERICAL_ERROR, 0, f"{self.name} raised {type(exc).__name__}: {exc}")
        return self._result(qp, raw, warm=warm is not None)

    @abc.abstractmethod
    def _solve(self, qp: QP, warm: QPResult | None) -> RawSolution:
        """Run the backend; ``warm`` is None or a SOLVED result of the same shape."""

    def _result(self, qp: QP, raw: RawSolution, *, warm: bool) -> QPResult:
        status, message = raw.status, raw.message
        if status is QPStatus.SOLVED:
            problem = self._rejection(qp, raw)
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
        return QPResult(
            status,
            raw.x,
            raw.iterations,
            qp.objective(raw.x),
            self.name,
            y=raw.y,
            z=raw.z,
            w=raw.w if qp.has_bounds else None,
            warm_started=warm,
            message=message,
            shape=qp.shape,
        )

    def _rejection(self, qp: QP, raw: RawSolution) -> str:
        """Why a solution the backend calls optimal is not one ('' when it is acceptable): non-finite, or a
        primal or stationarity residual above ``acceptance_tol`` times the problem's scale. (Each product is
        formed once and empty blocks are skipped: a whole-body control tick solves one of these per level.)"""
        x, y, z = raw.x, raw.y, raw.z
        w = raw.w if qp.has_bounds else None
        if x is None or y is None or z is None or (qp.has_bounds and w is None) or not np.isfinite(
            np.concatenate([p for p in (x, y, z, w) if p is not None])
        ).all():
            return "non-finite or missing solution"
        Hx = qp.H @ x
        Cx = qp.C @ x
        gradient = Hx + qp.g
        violations = [_violation(Cx, qp.l, qp.u)]
        if qp.n_in:
            gradient += qp.C.T @ z
        if qp.n_eq:
            gradient += qp.A.T @ y
            violations.append(np.abs(qp.A @ x - qp.b))
        if w is not None and (bounds := qp.bounds) is not None:
            gradient += w
            violations.append(_violation(x, *bounds))
        scale = max(1.0, float(np.abs(np.concatenate((x, qp.g, Hx, qp.b, Cx))).max()))
        limit = self.acceptance_tol * scale
        primal = max((float(v.max()) for v in violations if v.size), default=0.0)
        for what, residual in (("primal", primal), ("stationarity", float(np.abs(gradient).max()))):
            if residual > limit:
                return f"{what} residual {residual:.3g} > {self.acceptance_tol:.3g} x scale {scale:.3g}"
        return ""
