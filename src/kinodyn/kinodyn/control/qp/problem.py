"""Convex QP data, solve status and result, and the KKT residuals that judge a solution (Robot Dynamics
lecture notes (ETH) §3.10).

The problem is

    min 1/2 x'Hx + g'x   s.t.   A x = b,   l <= C x <= u,   lb <= x <= ub

with every constraint block optional and +-inf allowed per row of ``l, u, lb, ub``. Multipliers follow one
sign convention for every backend: stationarity reads ``H x + g + A'y + C'z + w = 0`` with ``z_i >= 0`` when
row i sits on its upper bound, ``z_i <= 0`` on its lower bound (and ``w`` likewise for the variable bounds).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.control._inputs import MATRIX_NDIM
from kinodyn.kernel import BOOL, IN1, IN2, Kernel

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

SYMMETRY_TOL = 1e-10
"""Relative asymmetry ``max|H - H'| / max(1, max|H|)`` above which H is refused."""


class QPStatus(enum.Enum):
    """Outcome of a solve; only SOLVED carries a solution."""

    SOLVED = "solved"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NONCONVEX = "nonconvex"
    MAX_ITERATIONS = "max_iterations"
    INACCURATE = "inaccurate"
    NUMERICAL_ERROR = "numerical_error"


@njit(cache=True)
def vector_ok(values: np.ndarray, allow_inf: bool) -> bool:
    """No NaN in ``values``, and no infinity unless ``allow_inf``."""
    for value in values:  # noqa: SIM110 (a loop: numba compiles no generator in all())
        if math.isnan(value) or (not allow_inf and abs(value) == np.inf):
            return False
    return True


@njit(cache=True)
def matrix_finite(values: np.ndarray) -> bool:
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if not np.isfinite(values[i, j]):
                return False
    return True


@njit(cache=True)
def symmetric(H: np.ndarray) -> bool:
    """``H == H^T`` exactly."""
    for i in range(H.shape[0]):
        for j in range(i):
            if H[i, j] != H[j, i]:
                return False
    return True


@njit(cache=True)
def ordered(low: np.ndarray, high: np.ndarray) -> bool:
    """Every ``low <= high``, no ``low`` at +inf and no ``high`` at -inf (NaN fails)."""
    for i in range(low.size):  # noqa: SIM110 (a loop: numba compiles no generator in all())
        if not (low[i] <= high[i] and low[i] < np.inf and high[i] > -np.inf):
            return False
    return True


@njit(cache=True)
def dense_ok(H: np.ndarray, g: np.ndarray, C: np.ndarray, l: np.ndarray, u: np.ndarray) -> bool:  # noqa: E741
    """The checks of ``QP`` on arrays of matching shapes, in one pass: ``H``, ``g``, ``C`` finite, ``H``
    exactly symmetric, no NaN in ``l`` and ``u``."""
    return (matrix_finite(H) and symmetric(H) and vector_ok(g, False) and matrix_finite(C)
            and vector_ok(l, True) and vector_ok(u, True))


_VECTOR_OK = Kernel(vector_ok, IN1, BOOL)
_MATRIX_FINITE = Kernel(matrix_finite, IN2)
_SYMMETRIC = Kernel(symmetric, IN2)
_ORDERED = Kernel(ordered, IN1, IN1)
_DENSE_OK = Kernel(dense_ok, IN2, IN1, IN2, IN1, IN1)
_F64 = np.dtype(np.float64)
_NO_ROWS: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # (A, b) without equalities, per n (read-only)


def _vector(name: str, value: object, size: int, *, allow_inf: bool) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.shape != (size,):
        raise ValueError(f"QP.{name} must have shape ({size},), got {array.shape}")
    if not _VECTOR_OK.call(array, allow_inf):
        bad = np.isnan(array) if allow_inf else ~np.isfinite(array)
        kind = "NaN" if allow_inf else "non-finite"
        raise ValueError(
            f"QP.{name} has {kind} entries at {np.flatnonzero(bad).tolist()}: pass finite numbers"
            + (" (+-inf is allowed for unbounded rows)" if allow_inf else "")
        )
    return array


def _matrix(name: str, value: object, rows: int | None, cols: int) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.ndim != MATRIX_NDIM or array.shape[1] != cols or (rows is not None and array.shape[0] != rows):
        expected = f"({rows if rows is not None else 'm'}, {cols})"
        raise ValueError(f"QP.{name} must have shape {expected}, got {array.shape}")
    if not _MATRIX_FINITE.call(array):
        raise ValueError(f"QP.{name} has non-finite entries: pass a finite matrix")
    return array


@dataclass(frozen=True, init=False)
class QP:
    """A convex QP, validated and normalised on construction (absent blocks become empty, missing sides
    +-inf, so only ``lb``/``ub`` stay None: both or neither). Raises ValueError naming the field for a wrong
    shape, NaN, an infinite matrix or cost entry, or an asymmetric H.
    Inconsistent bounds (``l > u``) are not an input error: solvers report them as INFEASIBLE.
    """

    H: np.ndarray
    g: np.ndarray
    A: np.ndarray
    b: np.ndarray
    C: np.ndarray
    l: np.ndarray  # noqa: E741 (the QP literature's name)
    u: np.ndarray
    lb: np.ndarray | None
    ub: np.ndarray | None
    n: int  # variables
    n_eq: int  # equality rows (A)
    n_in: int  # two-sided inequality rows (C)
    has_bounds: bool  # whether the variable bounds are present
    shape: tuple[int, int, int, bool]  # (n, n_eq, n_in, has_bounds): a warm start needs the same shape

    def __init__(
        self,
        H: ArrayLike,
        g: ArrayLike,
        A: ArrayLike | None = None,
        b: ArrayLike | None = None,
        C: ArrayLike | None = None,
        l: ArrayLike | None = None,  # noqa: E741 (the QP literature's name)
        u: ArrayLike | None = None,
        lb: ArrayLike | None = None,
        ub: ArrayLike | None = None,
    ) -> None:
        H = np.asarray(H, dtype=float)
        if H.ndim != MATRIX_NDIM or H.shape[0] != H.shape[1] or H.shape[0] == 0:
            raise ValueError(f"QP.H must be a non-empty square matrix, got shape {H.shape}")
        n = H.shape[0]
        H = _matrix("H", H, n, n)
        if not _SYMMETRIC.call(H) and np.abs(H - H.T).max() > SYMMETRY_TOL * max(1.0, np.abs(H).max()):
            raise ValueError("QP.H is not symmetric: pass (H + H.T) / 2 if that is what you mean")
        g = _vector("g", g, n, allow_inf=False)
        if (A is None) != (b is None):
            raise ValueError("QP.A and QP.b come together: pass both or neither")
        A = np.zeros((0, n)) if A is None else _matrix("A", A, None, n)
        b = np.zeros(0) if b is None else _vector("b", b, A.shape[0], allow_inf=False)
        if C is None and (l is not None or u is not None):
            raise ValueError("QP.l / QP.u given without QP.C: pass the constraint matrix C")
        c_given = C is not None
        C = np.zeros((0, n)) if C is None else _matrix("C", C, None, n)
        m = C.shape[0]
        if c_given and l is None and u is None:
            raise ValueError("QP.C given without QP.l or QP.u: pass at least one side")
        l = np.full(m, -np.inf) if l is None else _vector("l", l, m, allow_inf=True)  # noqa: E741 (the QP literature\'s name)
        u = np.full(m, np.inf) if u is None else _vector("u", u, m, allow_inf=True)
        if lb is not None or ub is not None:
            lb = np.full(n, -np.inf) if lb is None else _vector("lb", lb, n, allow_inf=True)
            ub = np.full(n, np.inf) if ub is None else _vector("ub", ub, n, allow_inf=True)
        self._set(H, g, A, b, C, l, u, lb, ub)

    @classmethod
    def inequality(cls, H: np.ndarray, g: np.ndarray, C: np.ndarray, l: np.ndarray,  # noqa: E741
                   u: np.ndarray) -> QP:
        """``QP(H, g, C=C, l=l, u=u)`` from float64 arrays of matching shapes (a control loop's buffers): the
        same checks in one compiled pass, the arrays taken as they are. Anything else (another dtype or
        shape, a failed check: then the constructor's error) goes through the constructor."""
        ndarray = np.ndarray
        if (type(H) is ndarray and type(g) is ndarray and type(C) is ndarray and type(l) is ndarray
                and type(u) is ndarray and H.dtype is _F64 and g.dtype is _F64 and C.dtype is _F64
                and l.dtype is _F64 and u.dtype is _F64 and H.ndim == MATRIX_NDIM and (n := H.shape[0])
                and H.shape[1] == n and g.shape == (n,) and C.ndim == MATRIX_NDIM and C.shape[1] == n
                and l.shape == u.shape == C.shape[:1]
                and _DENSE_OK.call(H, g, C, l, u)):
            empty = _NO_ROWS.get(n)
            if empty is None:
                empty = _NO_ROWS[n] = (np.zeros((0, n)), np.zeros(0))
                for array in empty:
                    array.flags.writeable = False
            qp = object.__new__(cls)
            qp._set(H, g, empty[0], empty[1], C, l, u, None, None)
            return qp
        return cls(H, g, C=C, l=l, u=u)

    def _set(self, H: np.ndarray, g: np.ndarray, A: np.ndarray, b: np.ndarray, C: np.ndarray,
             l: np.ndarray, u: np.ndarray, lb: np.ndarray | None, ub: np.ndarray | None) -> None:  # noqa: E741
        shape = (H.shape[0], A.shape[0], C.shape[0], lb is not None)
        self.__dict__.update(H=H, g=g, A=A, b=b, C=C, l=l, u=u, lb=lb, ub=ub, shape=shape, n=shape[0],
                             n_eq=shape[1], n_in=shape[2], has_bounds=shape[3])  # (frozen)

    @property
    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The variable bounds ``(lb, ub)``, or None without them (construction sets both or neither)."""
        return None if self.lb is None or self.ub is None else (self.lb, self.ub)


    def bounds_consistent(self) -> bool:
        """False when some ``l > u`` / ``lb > ub`` or a side excludes every finite value (infeasible)."""
        bounds = self.bounds
        return _ORDERED.call(self.l, self.u) and (bounds is None or _ORDERED.call(*bounds))

    def objective(self, x: np.ndarray) -> float:
        """1/2 x'Hx + g'x."""
        return float(0.5 * x @ self.H @ x + self.g @ x)

    def primal_residual(self, x: np.ndarray) -> float:
        """Largest violation of any constraint at x (infinity norm)."""
        parts = [np.abs(self.A @ x - self.b), _violation(self.C @ x, self.l, self.u)]
        if (bounds := self.bounds) is not None:
            parts.append(_violation(x, *bounds))
        return max((float(p.max()) for p in parts if p.size), default=0.0)


def _violation(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.maximum(np.maximum(low - values, values - high), 0.0)
    return result


def _complementarity(values: np.ndarray, mult: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """|z+ (u - v)| + |z- (v - l)|, and any multiplier pushing on an infinite side counts in full."""
    upper, lower = np.maximum(mult, 0.0), np.maximum(-mult, 0.0)
    gap_u = np.where(np.isfinite(high), high - values, 0.0)
    gap_l = np.where(np.isfinite(low), values - low, 0.0)
    wrong_side = np.where(np.isfinite(high), 0.0, upper) + np.where(np.isfinite(low), 0.0, lower)
    result: np.ndarray = np.abs(upper * gap_u) + np.abs(lower * gap_l) + wrong_side
    return result


@dataclass(frozen=True)
class KKTResiduals:
    """Infinity norms of the KKT conditions at (x, y, z, w)."""

    stationarity: float
    primal: float
    complementarity: float

    @property
    def max(self) -> float:
        """The largest of the three."""
        return max(self.stationarity, self.primal, self.complementarity)


@dataclass(frozen=True)
class QPResult:
    """Outcome of one solve. ``x`` and the multipliers ``y`` (A rows), ``z`` (C rows), ``w`` (bounds, or None
    without bounds) are None unless ``status`` is SOLVED; ``message`` says what the backend reported."""

    status: QPStatus
    x: np.ndarray | None
    iterations: int
    objective: float | None
    solver: str
    y: np.ndarray | None = None
    z: np.ndarray | None = None
    w: np.ndarray | None = None
    warm_started: bool = False
    message: str = ""
    shape: tuple[int, int, int, bool] = field(default=(0, 0, 0, False))

    @property
    def ok(self) -> bool:
        """True only for SOLVED."""
        return self.status is QPStatus.SOLVED


def kkt_residuals(qp: QP, result: QPResult) -> KKTResiduals:
    """Stationarity, primal feasibility and complementarity (with multiplier signs) of a SOLVED result."""
    if not result.ok:
        raise ValueError(f"kkt_residuals needs a SOLVED result, got {result.status.name}")
    x, y, z, w = result.x, result.y, result.z, result.w
    if x is None or y is None or z is None:
        raise ValueError("kkt_residuals: the SOLVED result lacks x, y or z")
    grad = qp.H @ x + qp.g + qp.A.T @ y + qp.C.T @ z
    comp = [_complementarity(qp.C @ x, z, qp.l, qp.u)]
    if (bounds := qp.bounds) is not None:
        if w is None:
            raise ValueError("kkt_residuals: the SOLVED result of a QP with bounds lacks w")
        grad = grad + w
        comp.append(_complementarity(x, w, *bounds))
    return KKTResiduals(
        stationarity=float(np.abs(grad).max()),
        primal=qp.primal_residual(x),
        complementarity=max((float(c.max()) for c in comp if c.size), default=0.0),
    )
