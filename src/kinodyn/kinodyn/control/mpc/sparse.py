"""The sparse MPC: states and forces as variables, the dynamics as equality rows, solved by OSQP.

Robot Dynamics Essential §4.2.2 (the states kept as decision variables: a sparse, block-banded KKT system).
Variables
``z = [x_1 .. x_N, u_0 .. u_{N-1}]`` (every foot's force at every step, so the shape never changes), rows
``l <= M z <= u``:

- dynamics, 12 N rows: ``x_{k+1} - A_k x_k - B_k u_k = c_k`` (``+ A_0 x_0`` on the right for k = 0);
- friction pyramids, 4 rows per foot and step: ``F u <= 0`` (a swing foot's rows left free: its bounds
  already hold it at zero, and the redundant rows would make OSQP's solution polishing fail);
- bounds, one row per force component: a stance foot's ``u_z`` in its bounds (``u_x``, ``u_y`` free), a swing
  foot's ``u = 0``.

The sparsity pattern of ``M`` (every entry ``A_k`` or ``B_k`` can make non-zero, explicit zeros kept) and of
the diagonal cost are fixed, so OSQP (Stellato et al., Math. Prog. Comp. 2020) is set up once: each solve
writes the new numbers into ``M``'s data (``update(Ax=...)``), the cost vector and the bounds (and the cost's
diagonal, ``update(Px=...)``, when the problem's weights differ from the last solve's), and starts from the
previous solution (OSQP's warm start). A failed solve makes the next one start cold. ``solve_parts`` gives
the solve in two parts (writing the numbers, OSQP's solve), so a caller can spread it over two control ticks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import osqp
import scipy.sparse as sp

from kinodyn.control.mpc.problem import FRICTION_FACETS, HorizonProblem, friction_pyramid
from kinodyn.control.mpc.solution import BackendResult, MpcStatus, finish
from kinodyn.control.mpc.srb import ANGULAR_VELOCITY, LINEAR_VELOCITY, ORIENTATION, POSITION, STATE_SIZE
from kinodyn.control.qp import QPStatus

if TYPE_CHECKING:
    from collections.abc import Generator

    from kinodyn.control.mpc.parameters import MpcParameters

_INF = float(osqp.constant("OSQP_INFTY"))
_S = osqp.SolverStatus
_STATUS = {
    _S.OSQP_SOLVED: QPStatus.SOLVED,
    _S.OSQP_SOLVED_INACCURATE: QPStatus.INACCURATE,
    _S.OSQP_PRIMAL_INFEASIBLE: QPStatus.INFEASIBLE,
    _S.OSQP_PRIMAL_INFEASIBLE_INACCURATE: QPStatus.INFEASIBLE,
    _S.OSQP_MAX_ITER_REACHED: QPStatus.MAX_ITERATIONS,
    _S.OSQP_TIME_LIMIT_REACHED: QPStatus.MAX_ITERATIONS,
}


def dynamics_patterns(feet: int) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(rows, cols)`` of the entries ``A_k`` and ``B_k`` can make non-zero (``dynamics.discretise``): ``A``
    the identity, ``rpy <- omega`` (3 x 3) and ``p <- v`` (diagonal); ``B`` the ``rpy`` and ``omega`` rows
    full, the ``p`` and ``v`` rows diagonal per foot."""
    a = np.eye(STATE_SIZE, dtype=bool)
    a[ORIENTATION, ANGULAR_VELOCITY] = True
    a[POSITION, LINEAR_VELOCITY] = np.eye(3, dtype=bool)
    b = np.zeros((STATE_SIZE, 3 * feet), dtype=bool)
    b[ORIENTATION] = b[ANGULAR_VELOCITY] = True
    b[POSITION] = b[LINEAR_VELOCITY] = np.tile(np.eye(3, dtype=bool), feet)
    (ar, ac), (br, bc) = np.nonzero(a), np.nonzero(b)
    return (ar, ac), (br, bc)


class _Triplets:
    """COO entries collected block by block; ``csc`` orders them and says where each block's entries went."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.count = 0

    def add(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray | float) -> slice:
        rows, cols = np.broadcast_arrays(rows, cols)
        self.rows.append(rows.ravel())
        self.cols.append(cols.ravel())
        self.values.append(np.broadcast_to(values, rows.shape).ravel().astype(float))
        start, self.count = self.count, self.count + rows.size
        return slice(start, self.count)

    def csc(self, shape: tuple[int, int]) -> tuple[sp.csc_matrix, np.ndarray]:
        """The matrix (entries kept even where zero) and ``where[i]``: the data index of entry ``i``."""
        rows, cols = np.concatenate(self.rows), np.concatenate(self.cols)
        ids = sp.csc_matrix((np.arange(1.0, self.count + 1.0), (rows, cols)), shape=shape)
        ids.sort_indices()
        if ids.nnz != self.count:
            raise AssertionError("duplicate entries in the sparse MPC's pattern")
        where = np.empty(self.count, dtype=np.int64)
        where[ids.data.astype(np.int64) - 1] = np.arange(self.count)
        data = np.empty(self.count)
        data[where] = np.concatenate(self.values)
        return sp.csc_matrix((data, ids.indices, ids.indptr), shape=shape), where


class SparseSolver:
    """Solves ``HorizonProblem`` s of ``steps`` steps and ``feet`` feet in the sparse form (module doc)."""

    name = "sparse"

    def __init__(self, params: MpcParameters, feet: int) -> None:
        N, n, nu = params.horizon, STATE_SIZE, 3 * feet
        self.steps, self.feet = N, feet
        self._nx, self._nu = N * n, N * nu
        dyn_rows = N * n
        fric_rows = N * feet * FRICTION_FACETS
        self._rows = dyn_rows + fric_rows + self._nu
        m = _Triplets()
        k_of = np.arange(N)
        m.add(np.arange(dyn_rows), np.arange(dyn_rows), 1.0)  # x_{k+1} (X block k)
        (ar, ac), (br, bc) = dynamics_patterns(feet)
        self._a_pattern, self._b_pattern = (ar, ac), (br, bc)
        self._a_slots = m.add((n * k_of[1:, None] + ar).ravel(), (n * k_of[:-1, None] + ac).ravel(), 0.0)
        self._b_slots = m.add((n * k_of[:, None] + br).ravel(),
                              (self._nx + nu * k_of[:, None] + bc).ravel(), 0.0)
        F = friction_pyramid(params.friction)
        fr, fc = np.nonzero(F)
        pair = np.arange(N * feet)
        m.add((dyn_rows + FRICTION_FACETS * pair[:, None] + fr).ravel(),
              (self._nx + 3 * pair[:, None] + fc).ravel(), np.tile(F[fr, fc], N * feet))
        m.add(dyn_rows + fric_rows + np.arange(self._nu), self._nx + np.arange(self._nu), 1.0)
        self._M, self._where = m.csc((self._rows, self._nx + self._nu))
        self._data = self._M.data.copy()
        self._weights = (np.asarray(params.state_weights, dtype=float), float(params.force_weight))
        diagonal = np.arange(self._nx + self._nu)  # (explicit zeros kept: the pattern fits any weights)
        P = sp.csc_matrix((self._cost_diagonal(*self._weights), (diagonal, diagonal)),
                          shape=(diagonal.size, diagonal.size))
        self._low = np.empty(self._rows)
        self._high = np.empty(self._rows)
        self._low[dyn_rows:dyn_rows + fric_rows], self._high[dyn_rows:dyn_rows + fric_rows] = -_INF, 0.0
        self._low[:dyn_rows] = self._high[:dyn_rows] = 0.0
        self._low[dyn_rows + fric_rows:] = self._high[dyn_rows + fric_rows:] = 0.0
        self._q = np.zeros(self._nx + self._nu)
        settings: dict[str, float | int | bool] = {
            "eps_abs": params.osqp_eps_abs, "eps_rel": params.osqp_eps_rel, "polishing": params.osqp_polish,
            "max_iter": params.osqp_max_iter, "verbose": False, "warm_starting": True}
        if params.osqp_time_limit > 0.0:
            settings["time_limit"] = params.osqp_time_limit
        self._osqp = osqp.OSQP()
        self._osqp.setup(P, self._q, self._M, self._low, self._high, **settings)
        self._cold = True

    def _cost_diagonal(self, state_weights: np.ndarray, force_weight: float) -> np.ndarray:
        return np.concatenate((np.tile(state_weights, self.steps), np.full(self._nu, force_weight)))

    def solve(self, problem: HorizonProblem) -> BackendResult:
        return finish(self.solve_parts(problem))

    def solve_parts(self, problem: HorizonProblem) -> Generator[None, None, BackendResult]:
        """``solve`` in parts (module doc): pauses before OSQP's solve."""
        N, n, dyn = self.steps, STATE_SIZE, self.steps * STATE_SIZE
        if (problem.steps, problem.feet) != (N, self.feet):
            return BackendResult(MpcStatus.INVALID_INPUT, f"the sparse solver was set up for {N} steps and "
                                 f"{self.feet} feet, got {problem.steps} and {problem.feet}", 0)
        (ar, ac), (br, bc) = self._a_pattern, self._b_pattern
        data = self._data
        data[self._where[self._a_slots]] = -problem.A[1:, ar, ac].ravel()
        data[self._where[self._b_slots]] = -problem.B[:, br, bc].ravel()
        rhs = problem.c.copy()
        rhs[0] += problem.A[0] @ problem.x0
        self._low[:dyn] = self._high[:dyn] = rhs.ravel()
        bounds_low = self._low[self._rows - self._nu:].reshape(N, self.feet, 3)
        bounds_high = self._high[self._rows - self._nu:].reshape(N, self.feet, 3)
        free = np.where(problem.stance, _INF, 0.0)
        bounds_low[..., 0] = bounds_low[..., 1] = -free
        bounds_high[..., 0] = bounds_high[..., 1] = free
        bounds_low[..., 2], bounds_high[..., 2] = problem.normal_min, problem.normal_max
        friction_high = self._high[dyn:dyn + N * self.feet * FRICTION_FACETS].reshape(N, self.feet, -1)
        friction_high[:] = np.where(problem.stance, 0.0, _INF)[..., None]
        self._q[:dyn] = -(problem.state_weights * problem.reference).ravel()
        if not (np.isfinite(data).all() and np.isfinite(self._q).all() and np.isfinite(rhs).all()):
            return BackendResult(MpcStatus.NUMERICAL_ERROR, "the sparse QP has non-finite entries "
                                 "(inputs too large)", 0)
        if (bounds_low > bounds_high).any():
            return BackendResult(MpcStatus.INFEASIBLE, "a force bound's lower side exceeds its upper side", 0)
        weights = (problem.state_weights, problem.force_weight)
        reweighted = weights[1] != self._weights[1] or not np.array_equal(weights[0], self._weights[0])
        yield
        try:
            if reweighted:
                self._osqp.update(Px=self._cost_diagonal(*weights))
                self._weights = (np.array(weights[0], dtype=float), float(weights[1]))
            self._osqp.update(q=self._q, l=self._low, u=self._high, Ax=data)
            if self._cold:
                self._osqp.warm_start(x=np.zeros(self._q.size), y=np.zeros(self._rows))
            result = self._osqp.solve(raise_error=False)
        except (osqp.OSQPException, ValueError, ArithmeticError) as error:
            self._cold = True
            return BackendResult(MpcStatus.NUMERICAL_ERROR, f"osqp failed: {error}", 0)
        info = result.info
        status = MpcStatus.from_qp(_STATUS.get(info.status_val, QPStatus.NUMERICAL_ERROR))
        message = f"osqp {info.status} (polish {info.status_polish})"
        z = np.asarray(result.x) if result.x is not None else None
        if status is MpcStatus.SOLVED and (z is None or not np.isfinite(z).all()):
            status, message = MpcStatus.NUMERICAL_ERROR, f"{message}: non-finite solution"
        self._cold = status is not MpcStatus.SOLVED
        if status is not MpcStatus.SOLVED or z is None:
            return BackendResult(status, message, int(info.iter))
        return BackendResult(status, message, int(info.iter), z[dyn:].reshape(N, self.feet, 3).copy(),
                             z[:dyn].reshape(N, n).copy())
