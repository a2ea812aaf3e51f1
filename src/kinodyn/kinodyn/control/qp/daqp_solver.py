"""DAQP backend: a dual active-set solver for small dense strictly convex QPs (Arnström, Bemporad, Axehill,
"A dual active-set solver for embedded quadratic programming using recursive LDL' updates", IEEE TAC 2022;
daqp 0.11, MIT).

Rows passed to DAQP: the variable bounds first (its "simple bounds"), then the equalities (sense 5: active and
immutable), then the C rows. A warm start marks the rows whose previous multiplier was non-zero as active
(sense bit 1, plus bit 2 for a lower bound): the dual active-set method then starts from that working set.

The solve is daqp's C entry point ``daqp_quadprog`` called from compiled code (``quadprog``) with the
problem, settings and result structures daqp 0.11.0's Python ``daqp.solve`` builds (types.h, api.h, and its
defaults for every setting not set here): the same call, without the Python wrapper's cost. Another daqp
version is refused at import (its structures may differ).
"""

from __future__ import annotations

import ctypes
from importlib.metadata import version
from typing import Any

import daqp
import llvmlite.binding as llvm
import numpy as np
from numba import njit, types

from kinodyn.control.qp.problem import QP, QPResult, QPStatus
from kinodyn.control.qp.solver import RawSolution, SolverBase
from kinodyn.kernel import IN1, IN2, INT, OUT1, Kernel, address

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
EXIT_OVERDETERMINED = -6
EXIT_CYCLING = -2
CYCLING_PRIMAL_TOL = 1e-8  # a solve that cycles at a tighter primal_tol is repeated once at this one

if version("daqp") != "0.11.0":
    raise ImportError(f"kinodyn's DAQP backend calls daqp 0.11.0's C entry point with its structures; daqp "
                      f"{version('daqp')} is installed: pip install daqp==0.11.0 (requirements/core.txt)")


class _Problem(ctypes.Structure):  # DAQPProblem (types.h)
    _fields_ = [("n", ctypes.c_int), ("m", ctypes.c_int), ("ms", ctypes.c_int),
                ("H", ctypes.c_void_p), ("f", ctypes.c_void_p), ("A", ctypes.c_void_p),
                ("bupper", ctypes.c_void_p), ("blower", ctypes.c_void_p), ("sense", ctypes.c_void_p),
                ("break_points", ctypes.c_void_p), ("nh", ctypes.c_int), ("problem_type", ctypes.c_int)]


class _Settings(ctypes.Structure):  # DAQPSettings (types.h)
    _fields_ = [("primal_tol", ctypes.c_double), ("dual_tol", ctypes.c_double),
                ("zero_tol", ctypes.c_double), ("pivot_tol", ctypes.c_double),
                ("progress_tol", ctypes.c_double), ("cycle_tol", ctypes.c_int), ("iter_limit", ctypes.c_int),
                ("fval_bound", ctypes.c_double), ("eps_prox", ctypes.c_double), ("eta_prox", ctypes.c_double),
                ("rho_soft", ctypes.c_double), ("rel_subopt", ctypes.c_double),
                ("abs_subopt", ctypes.c_double), ("sing_tol", ctypes.c_double),
                ("refactor_tol", ctypes.c_double), ("time_limit", ctypes.c_double),
                ("w_soft", ctypes.c_double), ("eq_reduction", ctypes.c_int), ("presolve", ctypes.c_int)]


class _Result(ctypes.Structure):  # DAQPResult (api.h)
    _fields_ = [("x", ctypes.c_void_p), ("lam", ctypes.c_void_p), ("fval", ctypes.c_double),
                ("soft_slack", ctypes.c_double), ("exitflag", ctypes.c_int), ("iter", ctypes.c_int),
                ("nodes", ctypes.c_int), ("solve_time", ctypes.c_double), ("setup_time", ctypes.c_double)]


# daqp.solve's defaults (daqp.pyx, constants.h) for the settings this backend does not set
_DEFAULTS = {"zero_tol": 1e-11, "pivot_tol": 1e-8, "progress_tol": 1e-14, "cycle_tol": 10, "fval_bound": _INF,
             "eta_prox": -1.0, "rho_soft": 1e-6, "rel_subopt": 0.0, "abs_subopt": 0.0, "sing_tol": 3.7e-11,
             "refactor_tol": 1e-9, "time_limit": 0.0, "w_soft": 0.0, "eq_reduction": 0, "presolve": 1}
_WORDS = {name: ctypes.sizeof(struct) // 8 for name, struct in (("problem", _Problem), ("result", _Result))}
_OFFSETS = {field[0]: getattr(_Problem, field[0]).offset for field in _Problem._fields_}
_OFFSETS |= {f"result_{field[0]}": getattr(_Result, field[0]).offset for field in _Result._fields_}
_lib = ctypes.CDLL(daqp.__file__)
llvm.add_symbol("daqp_quadprog", ctypes.cast(_lib.daqp_quadprog, ctypes.c_void_p).value)
# Any: numba's ExternalFunction has no static type
_daqp_quadprog: Any = types.ExternalFunction("daqp_quadprog", types.void(types.voidptr, types.voidptr,
                                                                          types.voidptr))
if (_WORDS, _OFFSETS["H"], _OFFSETS["nh"], _OFFSETS["result_exitflag"]) != (
        {"problem": 10, "result": 8}, 16, 72, 32):  # quadprog's word and int32 indices below
    raise ImportError(f"unexpected DAQP structure layout on this platform: {_OFFSETS}")


def _settings_words(primal_tol: float, dual_tol: float, eps_prox: float, iter_limit: int) -> np.ndarray:
    """A DAQPSettings as the int64 words ``quadprog`` passes, the given settings and daqp.solve's defaults."""
    settings = _Settings(primal_tol=primal_tol, dual_tol=dual_tol, eps_prox=eps_prox, iter_limit=iter_limit,
                         **_DEFAULTS)
    result: np.ndarray = np.frombuffer(bytes(settings), dtype=np.int64).copy()
    return result


@njit(cache=True)
def quadprog(H: np.ndarray, f: np.ndarray, A: np.ndarray, bupper: np.ndarray, blower: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
             sense: np.ndarray, ms: int, settings: np.ndarray, problem: np.ndarray, result: np.ndarray,
             x: np.ndarray, lam: np.ndarray) -> tuple[int, int]:
    """``daqp_quadprog`` on C-contiguous data as ``daqp.solve`` calls it (no break points, a QP, pointers
    NULL for empty blocks): ``x``, ``lam`` written; ``(exitflag, iterations)``. ``problem``, ``result``:
    int64 scratch of DAQPProblem's and DAQPResult's sizes; ``settings``: ``_settings_words``."""
    n, m = H.shape[0], bupper.size
    words = problem.view(np.int32)
    words[0], words[1], words[2] = n, m, ms
    problem[2], problem[3] = H.ctypes.data, f.ctypes.data
    problem[4] = A.ctypes.data if A.shape[0] else 0
    problem[5] = bupper.ctypes.data if m else 0
    problem[6] = blower.ctypes.data if m else 0
    problem[7] = sense.ctypes.data if m else 0
    problem[8] = 0  # break_points
    words[18], words[19] = 0, 0  # nh, problem_type (a QP)
    result[:] = 0
    result[0], result[1] = x.ctypes.data, lam.ctypes.data if m else 0
    _daqp_quadprog(address(result), address(problem), address(settings))
    outcome = result.view(np.int32)
    return outcome[8], outcome[9]


class DaqpSolver(SolverBase):
    """Dense dual active-set QP solver. One solve at a time per solver object (it reuses DAQP's structures and
    bound vectors between solves).

    primal_tol: largest constraint violation accepted for an inactive row (DAQP default 1e-6; 1e-10 here
        so the WBC's rows hold to 1e-8). Equalities and active rows hold to round-off regardless. DAQP can
        cycle (exitflag -2) on a nearly degenerate active set at so tight a tolerance: such a solve is
        repeated once at ``CYCLING_PRIMAL_TOL`` (its message says so; the acceptance check still applies).
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
        self._settings = _settings_words(**self.settings)  # type: ignore[arg-type]
        self._cycling_settings = self._settings if primal_tol >= CYCLING_PRIMAL_TOL else _settings_words(
            **(self.settings | {"primal_tol": CYCLING_PRIMAL_TOL}))  # type: ignore[arg-type]
        self._structs = np.zeros(_WORDS["problem"], np.int64), np.zeros(_WORDS["result"], np.int64)
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
            assert warm.z is not None
            assert (warm.w is not None) == has_bounds
        w = _EMPTY if warm is None or warm.w is None else warm.w
        z = _EMPTY if warm is None or warm.z is None else warm.z
        H, g = (a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in (qp.H, qp.g))
        rows = rows if rows.flags.c_contiguous else np.ascontiguousarray(rows)
        x, lam = np.empty(n), np.empty(size)
        note = ""
        for settings in (self._settings, self._cycling_settings):
            _ROWS.call(ub, lb, qp.b, qp.u, qp.l, w, z, bupper, blower, sense)  # (DAQP rewrites sense)
            exitflag, iterations = _QUADPROG.call(H, g, rows, bupper, blower, sense, ms, settings,
                                                  *self._structs, x, lam)
            if exitflag != EXIT_CYCLING or self._cycling_settings is self._settings:
                break
            note = (f"daqp exitflag -2 (cycling) at primal_tol {self.settings['primal_tol']:g}; solved again "
                    f"at primal_tol {CYCLING_PRIMAL_TOL:g}: ")
        status, message = _OUTCOMES.get(exitflag) or (QPStatus.NUMERICAL_ERROR,
                                                      f"daqp exitflag {exitflag}: unknown exit flag")
        message = note + message
        if exitflag == EXIT_OVERDETERMINED and not _pinned_consistent(qp, self.settings["primal_tol"]):
            status, message = QPStatus.INFEASIBLE, ("daqp exitflag -6: the equalities and the rows pinned by "
                                                    "l = u or lb = ub contradict each other (no x satisfies "
                                                    "them all)")
        if status is not QPStatus.SOLVED:
            return RawSolution(status, iterations, message)
        return RawSolution(
            status,
            iterations,
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


_QUADPROG = Kernel(quadprog, IN2, IN1, IN2, OUT1, OUT1, types.Array(types.int32, 1, "C"), INT,
                   types.Array(types.int64, 1, "C"), types.Array(types.int64, 1, "C"),
                   types.Array(types.int64, 1, "C"), OUT1, OUT1)
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
