"""The whole-body QP's hard rows and their elimination, in buffers made once per set of active contacts.

``Assembly`` holds, for one ``VariableLayout``, the equalities ``E x = e`` and inequalities ``l <= C x <= u``
of ``controller.py`` (the rows are described there), with their fixed entries written once (zeros, the
friction pyramids of point contacts, the joint rows' identity, torque-variable rows); per tick one compiled
pass (``fill_constraints``) writes the entries that move with the state. ``eliminate`` is the QR of ``E^T``
(LAPACK through numpy's own ``_umath_linalg`` calls, the same as ``np.linalg.qr`` and ``np.linalg.solve``
make, without their wrappers), so the elimination's numbers are those of the straightforward computation.
``level`` hands out each priority level's arrays (``LevelBuffers``: its stacked task rows and the products,
``np.matmul(..., out=...)``).

Matrix products stay numpy's (BLAS): the QP's weakest directions (the internal forces of several feet,
weighted about 1e-11) make its answer sensitive to the last bit of its data, and a product summed in another
order moves the forces by about 1e-8 N; element-wise work, which rounds the same whatever runs it, is
compiled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit, types
from numpy.linalg import _umath_linalg

from kinodyn._kernels.entry import BOOL, FLOAT, IN1, IN2, INT, OUT1, OUT2, Kernel
from kinodyn.control.evaluation import Evaluation
from kinodyn.control.wbc.contacts import Contact
from kinodyn.control.wbc.layout import VariableLayout
from kinodyn.control.wbc.limits import JointLimits, acceleration_bounds
from kinodyn.control.wbc.tasks.base import Task

RANK_TOLERANCE = 1e-9  # relative to the largest singular value (or |R_ii|)
EQUALITY_TOLERANCE = 1e-9  # relative residual above which the hard equalities are inconsistent


@njit(cache=True)
def fill_constraints(M: np.ndarray, h: np.ndarray, J: np.ndarray, bias: np.ndarray, q_joints: np.ndarray,
                     v_joints: np.ndarray, frames: np.ndarray, dims: np.ndarray, normal_bounds: np.ndarray,
                     normal_rows: np.ndarray, dyn_rows: int, torque_rows: np.ndarray, torque_row: int,
                     tau_recovered: bool, effort: np.ndarray, position_sides: np.ndarray,
                     velocity_sides: np.ndarray, horizon: float, horizon2: float, max_acceleration: float,
                     joint_row: int, E: np.ndarray, e: np.ndarray, C: np.ndarray, lower: np.ndarray,
                     upper: np.ndarray, Jc: np.ndarray, contact_rhs: np.ndarray) -> None:
    """The state-dependent entries of the hard rows (controller.py step 2). ``frames``, ``dims``: each
    active contact's row in ``J``/``bias`` and its force dimension; ``normal_bounds`` (n_contacts, 2) the
    normal-force range written at ``normal_rows``; the torque-limit rows (of the ``torque_rows`` of ``M``,
    ``h``, ``J_c^T``) from ``torque_row`` when tau is recovered; the joint acceleration bounds from
    ``joint_row``."""
    nv = M.shape[0]
    n_c = 0
    for c in range(frames.size):  # J_c and -Jdot_c v, in layout order
        k = frames[c]
        for i in range(dims[c]):
            for j in range(nv):
                Jc[n_c, j] = J[k, i, j]
            contact_rhs[n_c] = -bias[k, i]
            n_c += 1
    for i in range(dyn_rows):  # M_u qdd - J_c,u^T f = -h_u (all rows, with -S^T tau, for torque variables)
        for j in range(nv):
            E[i, j] = M[i, j]
        for r in range(n_c):
            E[i, nv + r] = -Jc[r, i]
        e[i] = -h[i]
    for r in range(n_c):  # J_c qdd = -Jdot_c v
        for j in range(nv):
            E[dyn_rows + r, j] = Jc[r, j]
        e[dyn_rows + r] = contact_rhs[r]
    for c in range(normal_rows.size):
        lower[normal_rows[c]] = normal_bounds[c, 0]
        upper[normal_rows[c]] = normal_bounds[c, 1]
    if tau_recovered:  # -effort <= (M qdd + h - J_c^T f)[actuated] <= effort
        for t in range(torque_rows.size):
            i, row = torque_rows[t], torque_row + t
            for j in range(nv):
                C[row, j] = M[i, j]
            for r in range(n_c):
                C[row, nv + r] = -Jc[r, i]
            lower[row] = -effort[t] - h[i]
            upper[row] = effort[t] - h[i]
    acceleration_bounds(position_sides, velocity_sides, q_joints, v_joints, horizon, horizon2,
                        max_acceleration, lower[joint_row:], upper[joint_row:])


@njit(cache=True)
def triangular_factor(a: np.ndarray, m: int, Rt: np.ndarray) -> bool:
    """From ``a``, the QR of ``E^T`` as LAPACK leaves it (R on and above the diagonal), ``Rt = R[:m]^T``
    (its lower triangle; zeros above, as ``np.triu`` leaves them); whether every ``|R_ii|`` exceeds the rank
    tolerance relative to the largest (and to 1)."""
    low, high = np.inf, 1.0
    for i in range(m):
        d = abs(a[i, i])
        low, high = min(low, d), max(high, d)
        for j in range(m):
            Rt[i, j] = a[j, i] if j <= i else 0.0
    return low > RANK_TOLERANCE * high


@njit(cache=True)
def consistent(E: np.ndarray, x: np.ndarray, e: np.ndarray) -> bool:
    """Whether ``|E x - e|`` is within the equality tolerance relative to ``1 + max|e|``."""
    scale, worst = 0.0, 0.0
    for i in range(e.size):
        s = 0.0
        for j in range(x.size):
            s += E[i, j] * x[j]
        worst = max(worst, abs(s - e[i]))
        scale = max(scale, abs(e[i]))
    return not worst > EQUALITY_TOLERANCE * (1.0 + scale)


@njit(cache=True)
def torques(x: np.ndarray, generalized: np.ndarray, first_v: int, tau_start: int, Jc: np.ndarray,
            contact_rhs: np.ndarray, effort: np.ndarray, tau: np.ndarray) -> tuple[bool, float, float]:
    """From the solution ``x`` and ``generalized = M qdd + h - J_c^T f``: ``tau`` (``generalized``'s actuated
    rows, or ``x``'s from ``tau_start`` when tau is a variable, -1 otherwise) clipped to ``+-effort`` (the
    QP holds the limits to its tolerance: never exceed them); whether tau and x are finite; the largest
    ``|M qdd + h - S^T tau - J_c^T f|`` and ``|J_c qdd + Jdot_c v|``."""
    finite = True
    for value in x:
        finite = finite and math.isfinite(value)
    dynamics = 0.0
    for i in range(first_v):
        dynamics = max(dynamics, abs(generalized[i]))
    for j in range(tau.size):
        t = x[tau_start + j] if tau_start >= 0 else generalized[first_v + j]
        finite = finite and math.isfinite(t)
        dynamics = max(dynamics, abs(generalized[first_v + j] - t))
        tau[j] = min(max(t, -effort[j]), effort[j])
    contact = 0.0
    for r in range(contact_rhs.size):
        s = 0.0
        for j in range(Jc.shape[1]):
            s += Jc[r, j] * x[j]
        contact = max(contact, abs(s - contact_rhs[r]))
    return finite, dynamics, contact


_IN3 = types.Array(types.float64, 3, "A")
_INDICES = types.Array(types.int64, 1, "C")
_FILL = Kernel(fill_constraints, IN2, IN1, _IN3, IN2, IN1, IN1, _INDICES, _INDICES, OUT2, _INDICES, INT,
               _INDICES, INT, BOOL, OUT1, IN2, IN2, FLOAT, FLOAT, FLOAT, INT, OUT2, OUT1, OUT2, OUT1, OUT1,
               OUT2, OUT1)
_TRIANGULAR = Kernel(triangular_factor, OUT2, INT, OUT2)
_CONSISTENT = Kernel(consistent, OUT2, IN1, OUT1)
_TORQUES = Kernel(torques, OUT1, OUT1, INT, INT, OUT2, OUT1, IN1, OUT1)


class StackedRows:
    """A level's task rows in one matrix ``A`` and vector ``b``; ``blocks``: each task with its rows of
    ``A`` and ``b`` (``task.row_count(layout)`` of them: a function of the layout)."""

    __slots__ = ("A", "b", "blocks")

    def __init__(self, tasks: Sequence[Task], layout: VariableLayout) -> None:
        counts = [task.row_count(layout) for task in tasks]
        self.A, self.b = np.zeros((sum(counts), layout.size)), np.zeros(sum(counts))
        self.blocks: list[tuple[Task, np.ndarray, np.ndarray]] = []
        row = 0
        for task, count in zip(tasks, counts, strict=True):
            self.blocks.append((task, self.A[row:row + count], self.b[row:row + count]))
            row += count


class LevelBuffers:
    """One priority level's arrays, the same every tick: the stacked task rows ``rows`` (``A``, ``b``: m
    rows), and the products of ``WholeBodyController.update`` (``AZ``, ``CZ``, ``Cx``, ``low``, ``high``,
    ``Ax``, ``r``, ``H``, ``g``) for ``nz`` free variables."""

    __slots__ = ("AZ", "Ax", "CZ", "Cx", "H", "g", "high", "low", "r", "rows")

    def __init__(self, rows: StackedRows, n_in: int, nz: int) -> None:
        m = rows.b.size
        self.rows, self.Ax, self.r = rows, np.zeros(m), np.zeros(m)
        self.AZ, self.CZ, self.Cx = np.zeros((m, nz)), np.zeros((n_in, nz)), np.zeros(n_in)
        self.low, self.high = np.zeros(n_in), np.zeros(n_in)
        self.H, self.g = np.zeros((nz, nz)), np.zeros(nz)


class Assembly:
    """The hard rows of one layout in preallocated arrays (module doc): ``E, e, C, lower, upper`` and
    the stacked contact rows ``Jc``, ``contact_rhs``. ``contacts``: the active contacts in layout order;
    ``frames``: their rows in the evaluations to come."""

    def __init__(self, layout: VariableLayout, contacts: Sequence[Contact], frames: Sequence[int],
                 limits: JointLimits, torque_limited: np.ndarray, first_v: int) -> None:
        nv, size = layout.nv, layout.size
        self.layout, self.contacts = layout, tuple(contacts)
        self.force_columns = [(name, layout.force(name)) for name in layout.contact_names]
        self._limits = limits
        self._horizon2 = limits.horizon**2
        n_c = sum(c.dim for c in contacts)
        self._dyn_rows = nv if layout.torque_variables else first_v
        n_eq = self._dyn_rows + n_c
        cone_rows = [c.cone_rows for c in contacts]
        n_limited = torque_limited.size
        n_in = sum(cone_rows) + n_limited + nv - first_v
        self.E, self.e = np.zeros((n_eq, size)), np.zeros(n_eq)
        self.C, self.lower, self.upper = np.zeros((n_in, size)), np.zeros(n_in), np.zeros(n_in)
        self.Jc, self.contact_rhs = np.zeros((n_c, nv)), np.zeros(n_c)
        self._frames = np.array(frames, dtype=np.int64)
        self._dims = np.array([c.dim for c in contacts], dtype=np.int64)
        self.normal_bounds = np.zeros((len(contacts), 2))
        self._cones: list[tuple[Contact, slice, slice]] = []  # all written by the first fill, then the moving
        normal_rows, row = [], 0
        for contact, rows in zip(contacts, cone_rows, strict=True):
            cone = slice(row, row + rows)
            self._cones.append((contact, cone, layout.force(contact.name)))
            self.lower[cone], self.upper[cone] = -np.inf, 0.0  # its last row (the normal force): per tick
            row += rows
            normal_rows.append(row - 1)
        self._normal_rows = np.array(normal_rows, dtype=np.int64)
        self._torque_row = row
        effort = limits.effort[torque_limited]
        self._effort = np.ascontiguousarray(effort)
        self._torque_rows = (first_v + torque_limited).astype(np.int64)
        if layout.torque_variables:  # -S^T tau in the dynamics rows, the torque limits on tau itself
            self.E[first_v:nv, layout.tau] = -np.eye(nv - first_v)
            self.C[row + np.arange(n_limited), layout.tau.start + torque_limited] = 1.0
            self.lower[row:row + n_limited], self.upper[row:row + n_limited] = -effort, effort
        self._joint_row = row + n_limited
        joints = np.arange(nv - first_v)
        self.C[self._joint_row + joints, first_v + joints] = 1.0
        self._first_v = first_v
        self._Rt = np.zeros((n_eq, n_eq))
        self._qr = np.zeros((size, n_eq))  # E^T, then LAPACK's R and reflectors
        self._x0 = np.zeros(size)
        self._levels: dict[tuple[int, int], LevelBuffers] = {}
        self.states: tuple[Any, ...] = ()  # the controller's contact states, in layout order
        self.uppers: list[float] = []  # their normal-force upper bounds as written in normal_bounds

    def fill(self, ev: Evaluation, first_q: int) -> None:
        """This tick's rows at ``ev``; ``normal_bounds`` (each contact's normal-force range) set before."""
        fv, lim = self._first_v, self._limits
        _FILL.call(ev.mass_matrix, ev.nonlinear_effects, ev.jacobians, ev.bias_accelerations, ev.q[first_q:],
                   ev.v[fv:], self._frames, self._dims, self.normal_bounds, self._normal_rows, self._dyn_rows,
                   self._torque_rows, self._torque_row, not self.layout.torque_variables, self._effort,
                   lim._position_sides, lim._velocity_sides, lim.horizon, self._horizon2,
                   lim.max_acceleration, self._joint_row, self.E, self.e, self.C, self.lower, self.upper,
                   self.Jc, self.contact_rhs)
        for contact, rows, cols in self._cones:
            self.C[rows, cols] = contact.cone(ev)
        self._cones = [cone for cone in self._cones if cone[0].moving_cone]

    def eliminate(self) -> tuple[np.ndarray | None, np.ndarray]:
        """Minimum-norm solution of ``E x = e`` and an orthonormal null-space basis; ``(None, _)`` when the
        rows are inconsistent. Full row rank (the usual case): QR of ``E^T``; otherwise the SVD."""
        E, e = self.E, self.e
        m, n = E.shape
        if m == 0:
            return np.zeros(n), np.eye(n)
        if m <= n:
            a = self._qr
            np.copyto(a, E.T)
            tau = _umath_linalg.qr_r_raw(a, signature="d->d")  # a <- R and the reflectors (as np.linalg.qr)
            qr = _umath_linalg.qr_complete if n > m else _umath_linalg.qr_reduced
            Q = qr(a, tau, signature="dd->d")
            if _TRIANGULAR.call(a, m, self._Rt):
                y = _umath_linalg.solve1(self._Rt, e, signature="dd->d")
                x = np.matmul(Q[:, :m], y, out=self._x0)
                return (x if _CONSISTENT.call(E, x, e) else None), Q[:, m:]
        U, s, Vt = np.linalg.svd(E)  # rank deficient
        rank = int(np.count_nonzero(s > RANK_TOLERANCE * max(s[0], 1.0)))
        x, Z = Vt[:rank].T @ ((U[:, :rank].T @ e) / s[:rank]), Vt[rank:].T
        return (x if _CONSISTENT.call(E, x, e) else None), Z

    def torques(self, x: np.ndarray, generalized: np.ndarray, effort: np.ndarray,
                tau: np.ndarray) -> tuple[bool, float, float]:
        """``tau`` (the module function ``torques``) from this tick's solution; ``(finite, dynamics residual,
        contact acceleration)``."""
        start = self.layout.tau.start if self.layout.torque_variables else -1
        return _TORQUES.call(x, generalized, self._first_v, start, self.Jc, self.contact_rhs, effort, tau)

    def level(self, k: int, tasks: Sequence[Task], nz: int) -> LevelBuffers:
        """Level ``k``'s arrays for its ``tasks`` (the same at every call for one ``k``: the controller's
        tasks are fixed while an assembly lives) and ``nz`` free variables (made on first use)."""
        key = (k, nz)
        buffers = self._levels.get(key)
        if buffers is None:
            buffers = self._levels[key] = LevelBuffers(StackedRows(tasks, self.layout), self.C.shape[0], nz)
        return buffers
