"""The condensed MPC: the states eliminated, a dense QP in the stance forces, solved by DAQP.

Robot Dynamics Essential §4.2.1 (direct shooting): the states are a function of the inputs, ``X = S U +
X_free`` with
``X = [x_1; ..; x_N]``, ``X_free`` the rollout with zero forces and ``S`` block lower triangular
(``S_{k+1} = A_k S_k + [.. B_k ..]``). Only the forces of the feet in stance are variables (a swing foot's
are zero), so the QP has ``3 n_stance`` variables:

    min 1/2 U'(S'QS + rho I)U + U'S'Q(X_free - X_ref)   s.t.  F u_i <= 0 (pyramid rows),  u_z in bounds

DAQP (``kinodyn.control.qp``) is warm-started from the previous answer when the problem has the same shape.
``solve_parts`` gives the solve in three parts (condensing, the Gram product, the QP), so a caller can spread
one solve over several control ticks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types

from kinodyn.control.mpc.problem import FRICTION_FACETS, HorizonProblem, friction_pyramid
from kinodyn.control.mpc.solution import BackendResult, MpcStatus, finish
from kinodyn.control.mpc.srb import STATE_SIZE
from kinodyn.control.qp import QP, DaqpSolver, QPResult
from kinodyn.kernel import FLOAT, IN1, IN2, OUT1, OUT2, Kernel

if TYPE_CHECKING:
    from collections.abc import Generator

    from kinodyn.control.mpc.parameters import MpcParameters


@njit(cache=True)
def weighted_gram(St: np.ndarray, w: np.ndarray, e: np.ndarray, first_row: np.ndarray, rho: float,
                  H: np.ndarray, g: np.ndarray) -> None:
    """``H = S' diag(w) S + rho I`` (exactly symmetric) and ``g = S' diag(w) e`` from ``St = S'``, using that
    column a of ``S`` is zero above row ``first_row[a]`` (the states before its step). Compiled loops rather
    than a BLAS product: a multi-threaded BLAS on a shared machine can take far longer for this size."""
    n, rows = St.shape
    for a in range(n):
        acc = 0.0
        for r in range(first_row[a], rows):
            acc += St[a, r] * w[r] * e[r]
        g[a] = acc
        for b in range(a + 1):
            acc = 0.0
            for r in range(max(first_row[a], first_row[b]), rows):
                acc += St[a, r] * w[r] * St[b, r]
            H[a, b] = acc
            H[b, a] = acc
        H[a, a] += rho


_GRAM = Kernel(weighted_gram, IN2, IN1, IN1, types.Array(types.int64, 1, "A"), FLOAT, OUT2, OUT1)


def condense(problem: HorizonProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(S, X_free, pairs)``: ``S`` (12 N, 3 n_stance), ``X_free`` (12 N,) and ``pairs`` (n_stance, 2), the
    (step, foot) of each variable triple, in step-major order."""
    N, n = problem.steps, STATE_SIZE
    pairs = np.argwhere(problem.stance)
    S = np.zeros((N, n, 3 * len(pairs)))
    free = np.empty((N, n))
    x, column = problem.x0, 0
    for k in range(N):
        x = problem.A[k] @ x + problem.c[k]
        free[k] = x
        if k:
            S[k, :, :column] = problem.A[k] @ S[k - 1, :, :column]
        for foot in np.flatnonzero(problem.stance[k]):
            S[k, :, column:column + 3] = problem.B[k, :, 3 * foot:3 * foot + 3]
            column += 3
    return S.reshape(N * n, -1), free.reshape(-1), pairs


class CondensedSolver:
    """Solves ``HorizonProblem`` s in the condensed form (module doc)."""

    name = "condensed"

    def __init__(self, params: MpcParameters) -> None:
        self._daqp = DaqpSolver(max_iter=params.daqp_max_iter)
        self._previous: QPResult | None = None

    def solve(self, problem: HorizonProblem) -> BackendResult:
        return finish(self.solve_parts(problem))

    def solve_parts(self, problem: HorizonProblem) -> Generator[None, None, BackendResult]:
        """``solve`` in parts (module doc): pauses after condensing and after the Gram product."""
        S, free, pairs = condense(problem)
        N, feet = problem.steps, problem.feet
        if not len(pairs):  # no foot on the ground over the whole horizon: nothing to choose
            return BackendResult(MpcStatus.SOLVED, "no stance foot in the horizon", 0,
                                 np.zeros((N, feet, 3)), free.reshape(N, STATE_SIZE))
        yield
        weights = np.tile(problem.state_weights, N)
        first_row = STATE_SIZE * pairs[:, 0].repeat(3)  # x_{j+1}, block j of S, is the first u_j moves
        H, g = np.empty((S.shape[1], S.shape[1])), np.empty(S.shape[1])
        _GRAM.call(np.ascontiguousarray(S.T), weights, free - problem.reference.reshape(-1), first_row,
                   problem.force_weight, H, g)
        if not (np.isfinite(H).all() and np.isfinite(g).all()):
            return BackendResult(MpcStatus.NUMERICAL_ERROR, "the condensed QP has non-finite entries "
                                 "(inputs too large)", 0)
        yield
        m = len(pairs)
        C = np.zeros((m, FRICTION_FACETS, m, 3))
        C[np.arange(m), :, np.arange(m), :] = friction_pyramid(problem.friction)
        lb = np.full((m, 3), -np.inf)
        ub = np.full((m, 3), np.inf)
        lb[:, 2] = problem.normal_min[pairs[:, 0], pairs[:, 1]]
        ub[:, 2] = problem.normal_max[pairs[:, 0], pairs[:, 1]]
        qp = QP(H, g, C=C.reshape(m * FRICTION_FACETS, 3 * m), u=np.zeros(m * FRICTION_FACETS),
                lb=lb.reshape(-1), ub=ub.reshape(-1))
        result = self._daqp.solve(qp, warm_start=self._previous)
        self._previous = result if result.ok else None
        status = MpcStatus.from_qp(result.status)
        if status is not MpcStatus.SOLVED or result.x is None:
            return BackendResult(status, result.message, result.iterations)
        forces = np.zeros((N, feet, 3))
        forces[pairs[:, 0], pairs[:, 1]] = result.x.reshape(m, 3)
        states = (S @ result.x + free).reshape(N, STATE_SIZE)
        return BackendResult(status, result.message, result.iterations, forces, states)
