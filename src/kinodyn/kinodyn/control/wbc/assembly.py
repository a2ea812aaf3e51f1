"""The whole-body QP's hard rows and their elimination, in buffers made once per set of active contacts.

``Assembly`` holds, for one ``VariableLayout``, the equalities ``E x = e`` and inequalities ``l <= C x <= u``
of ``controller.py`` (the rows are described there), with their fixed entries written once (zeros, the
friction pyramids of point contacts, the joint rows' identity, torque-variable rows); per tick one compiled
pass (``fill_constraints``) writes the entries that move with the state. ``eliminate`` is the QR of ``E^T``
in one compiled pass (``eliminate_qr``) and ``products`` forms a priority level's QP data in another
(``level_products``), both with the BLAS and LAPACK calls numpy makes for ``np.linalg.qr``,
``np.linalg.solve`` and ``np.matmul`` (``numpy_blas``): the numbers of the straightforward computation.
``level`` hands out each priority level's arrays (``LevelBuffers``: its stacked task rows and the products).

Products go through numpy's own calls because the QP's weakest directions (the internal forces of several
feet, weighted about 1e-11) make its answer sensitive to the last bit of its data: a product summed in
another order moves the forces by about 1e-8 N. Element-wise work rounds the same whatever runs it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit, types

from kinodyn.control.wbc import numpy_blas
from kinodyn.control.wbc.limits import JointLimits, acceleration_bounds
from kinodyn.kernel import BOOL, FLOAT, IN1, IN2, INT, OUT1, OUT2, Kernel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn.control.wbc.contacts import Contact
    from kinodyn.control.wbc.layout import VariableLayout
    from kinodyn.control.wbc.tasks.base import Task
    from kinodyn.evaluation import Evaluation

RANK_TOLERANCE = 1e-9  # relative to the largest singular value (or |R_ii|)
EQUALITY_TOLERANCE = 1e-9  # relative residual above which the hard equalities are inconsistent
# Near-dependent contact rows (``Assembly.eliminate``): when a row's part independent of the rows before it,
# |R_ii| / |E_i|, is below NEAR_DEPENDENT_ROW (about 0.1 and more on a well-posed stance, 1e-5 on two soles
# of legs without ankle roll standing straight), the contact Jacobian's directions of singular value below
# WEAK_CONTACT of its largest are dropped from the equalities
NEAR_DEPENDENT_ROW = 0.05
WEAK_CONTACT = 2e-3
NEAR_DEPENDENT = 3  # eliminate_qr's status for a row below NEAR_DEPENDENT_ROW


@njit(cache=True)
def fill_constraints(M: np.ndarray, h: np.ndarray, J: np.ndarray, bias: np.ndarray, q_joints: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
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
def eliminate_qr(E: np.ndarray, e: np.ndarray, work: np.ndarray, lwork_qr: int, lwork_q: int,
                 pivots: np.ndarray, ints: np.ndarray, Q: np.ndarray, x: np.ndarray,
                 condition_tolerance: float) -> int:
    """The minimum-norm solution ``x`` of ``E x = e`` (m <= n rows) and ``Q`` (n x n; its last n - m columns
    span the null space) from the QR of ``E^T``, with the LAPACK calls and work sizes of ``np.linalg.qr``
    (``qr_r_raw``, then ``qr_complete``) and ``np.linalg.solve`` (``solve1``) and numpy's product
    ``Q[:, :m] @ y``: the same numbers. ``work``: scratch of ``n m + m + lwork_qr + n n + lwork_q + m m``
    entries. Returns 0, 1 when some ``|R_ii|`` is within the rank tolerance (or the triangular solve
    fails: the caller takes the SVD), 2 when the equalities are inconsistent, 3 when some row's
    ``|R_ii| / |E_i|`` is below ``condition_tolerance`` (near-dependent rows: ``Assembly.eliminate``)."""
    m, n = E.shape
    a = work[:n * m]  # E^T column-major: E's rows are its columns
    tau = work[n * m:n * m + m]
    start = n * m + m
    w_qr = work[start:start + lwork_qr]
    start += lwork_qr
    q = work[start:start + n * n]
    start += n * n
    w_q = work[start:start + lwork_q]
    start += lwork_q
    rt = work[start:start + m * m]  # R^T column-major
    for i in range(m):
        for j in range(n):
            a[j + i * n] = E[i, j]
    if numpy_blas.geqrf(n, m, a, tau, w_qr, lwork_qr, ints) != 0:
        return 1
    q[:n * m] = a
    if numpy_blas.orgqr(n, n, m, q, tau, w_q, lwork_q, ints) != 0:
        return 1
    for i in range(n):
        for j in range(n):
            Q[i, j] = q[i + j * n]
    low, high = np.inf, 1.0
    for i in range(m):  # R on and above the diagonal of a (row i, column j: a[i + j n])
        d = abs(a[i + i * n])
        low, high = min(low, d), max(high, d)
        for j in range(m):
            rt[i + j * m] = a[j + i * n] if j <= i else 0.0
    if not low > RANK_TOLERANCE * high:
        return 1
    for i in range(m):
        norm = 0.0
        for j in range(n):
            norm += E[i, j] * E[i, j]
        if abs(a[i + i * n]) < condition_tolerance * math.sqrt(norm):
            return NEAR_DEPENDENT
    y = work[start + m * m:start + m * m + m]
    y[:] = e
    if numpy_blas.gesv(m, rt, y, pivots, ints) != 0:
        return 1
    numpy_blas.matvec(Q[:, :m], y, x)
    return 0 if consistent(E, x, e) else 2


@njit(cache=True)
def level_products(A: np.ndarray, b: np.ndarray, Z: np.ndarray, x: np.ndarray, C: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                   lower: np.ndarray, upper: np.ndarray, ridge: float, AZ: np.ndarray, CZ: np.ndarray,
                   Cx: np.ndarray, low: np.ndarray, high: np.ndarray, Ax: np.ndarray, r: np.ndarray,
                   H: np.ndarray, g: np.ndarray) -> None:
    """A priority level's QP data as ``WholeBodyController.update`` forms it with numpy (every dimension
    at least 2: numpy's matmul takes other routines for a dimension of 1): ``AZ = A Z``, ``CZ = C Z``,
    ``low, high = lower - C x, upper - C x``, ``r = b - A x``, ``H = AZ^T AZ + ridge I``,
    ``g = -AZ^T r``; the same BLAS calls (``numpy_blas``) and element-wise operations, the same numbers."""
    numpy_blas.matmat(A, Z, AZ)
    numpy_blas.matmat(C, Z, CZ)
    numpy_blas.matvec(C, x, Cx)
    for i in range(Cx.size):
        low[i] = lower[i] - Cx[i]
        high[i] = upper[i] - Cx[i]
    numpy_blas.matvec(A, x, Ax)
    for i in range(Ax.size):
        r[i] = b[i] - Ax[i]
    numpy_blas.matmat(AZ.T, AZ, H)
    for i in range(H.shape[0]):
        for j in range(H.shape[1]):
            H[i, j] = H[i, j] + (ridge if i == j else 0.0)  # + ridge * eye: + 0.0 off the diagonal too
    numpy_blas.matvec(AZ.T, r, g)
    for i in range(g.size):
        g[i] = -g[i]


@njit(cache=True)
def torques(x: np.ndarray, M: np.ndarray, h: np.ndarray, first_v: int, tau_start: int, Jc: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
            contact_rhs: np.ndarray, effort: np.ndarray, tau: np.ndarray, generalized: np.ndarray,
            contact_term: np.ndarray) -> tuple[bool, float, float]:
    """From the solution ``x = [qdd; f; ...]``: ``generalized = M qdd + h - J_c^T f`` (numpy's products and
    order: ``numpy_blas``), ``tau`` (``generalized``'s actuated rows, or ``x``'s from ``tau_start`` when tau
    is a variable, -1 otherwise) clipped to ``+-effort`` (the QP holds the limits to its tolerance: never
    exceed them); whether tau and x are finite; the largest ``|M qdd + h - S^T tau - J_c^T f|`` and
    ``|J_c qdd + Jdot_c v|``. ``contact_term``: scratch of ``nv``."""
    nv, n_c = M.shape[0], Jc.shape[0]
    numpy_blas.matvec(M, x[:nv], generalized)
    if n_c:
        numpy_blas.matvec(Jc.T, x[nv:nv + n_c], contact_term)
    else:
        contact_term[:] = 0.0
    for i in range(nv):
        generalized[i] = (generalized[i] + h[i]) - contact_term[i]
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
_ELIMINATE = Kernel(eliminate_qr, IN2, IN1, OUT1, INT, INT, _INDICES, _INDICES, OUT2, OUT1, FLOAT)
_PRODUCTS = Kernel(level_products, IN2, IN1, IN2, IN1, IN2, IN1, IN1, FLOAT, OUT2, OUT2, OUT1, OUT1, OUT1,
                   OUT1, OUT1, OUT2, OUT1)
_CONSISTENT = Kernel(consistent, OUT2, IN1, OUT1)
_TORQUES = Kernel(torques, OUT1, IN2, IN1, INT, INT, OUT2, OUT1, IN1, OUT1, OUT1, OUT1)


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
        self.force_columns = [(name, slice(cols.start - nv, cols.stop - nv))  # (within the forces)
                              for name, cols in ((n, layout.force(n)) for n in layout.contact_names)]
        self._tau_start = layout.tau.start if layout.torque_variables else -1
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
        starts = np.cumsum([0, *(c.dim for c in contacts)])
        # the contacts with feedback gains: their index and their rows of Jc
        self.feedback = [(k, slice(int(starts[k]), int(starts[k + 1])))
                         for k, c in enumerate(contacts) if c.has_feedback]
        self._dims = np.array([c.dim for c in contacts], dtype=np.int64)
        regularized = [(layout.force(c.name), c.force_regularization)
                       for c in contacts if c.force_regularization]
        self.regularized_columns = np.array(
            [i for cols, _ in regularized for i in range(cols.start, cols.stop)], dtype=np.int64)
        self._regularization = np.array(
            [w for cols, w in regularized for _ in range(cols.stop - cols.start)])
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
        if n_eq <= size:  # eliminate_qr's arrays
            lwork_qr, lwork_q = numpy_blas.lwork_geqrf(size, n_eq), numpy_blas.lwork_orgqr(size, n_eq)
            self._lwork = (lwork_qr, lwork_q)
            self._work = np.zeros(size * n_eq + n_eq + lwork_qr + size * size + lwork_q + n_eq * n_eq + n_eq)
            self._pivots, self._ints = np.zeros(n_eq, dtype=np.int64), np.zeros(8, dtype=np.int64)
            self._Q, self._x0 = np.zeros((size, size)), np.zeros(size)
        self._levels: dict[tuple[int, int], LevelBuffers] = {}
        self._generalized, self._contact_term = np.zeros(nv), np.zeros(nv)  # torques' scratch
        self.states: tuple[Any, ...] = ()  # the controller's contact states, in layout order
        self.contact_version = -1  # the controller's contact version normal_bounds was written at

    @property
    def torque_limit_rows(self) -> slice:
        """The torque-limit rows of ``C`` (one per joint with a finite effort, ``limited_effort``)."""
        return slice(self._torque_row, self._joint_row)

    @property
    def joint_limit_rows(self) -> slice:
        """The joint-acceleration-bound rows of ``C`` (one per actuated joint)."""
        return slice(self._joint_row, self.C.shape[0])

    @property
    def limited_effort(self) -> np.ndarray:
        """The effort limit of each torque-limit row."""
        return self._effort

    @property
    def dynamics_rows(self) -> int:
        """The leading rows of ``E`` that are equations of motion (the contact rows follow)."""
        return self._dyn_rows

    def fill(self, ev: Evaluation, first_q: int) -> None:
        """This tick's rows at ``ev``; ``normal_bounds`` (each contact's normal-force range) set before."""
        fv, lim = self._first_v, self._limits
        _FILL.call(ev.mass_matrix, ev.nonlinear_effects, ev.jacobians, ev.bias_accelerations, ev.q[first_q:],
                   ev.v[fv:], self._frames, self._dims, self.normal_bounds, self._normal_rows, self._dyn_rows,
                   self._torque_rows, self._torque_row, not self.layout.torque_variables, self._effort,
                   lim.position_sides, lim.velocity_sides, lim.horizon, self._horizon2,
                   lim.max_acceleration, self._joint_row, self.E, self.e, self.C, self.lower, self.upper,
                   self.Jc, self.contact_rhs)
        for contact, rows, cols in self._cones:
            self.C[rows, cols] = contact.cone(ev)
        self._cones = [cone for cone in self._cones if cone[0].moving_cone]

    def add_feedback(self, rows: slice, acceleration: np.ndarray) -> None:
        """A contact's feedback ``acceleration`` (``contacts.py``) added to the right side of its motion rows
        (``rows`` of ``Jc``: ``feedback``), in the equalities and in ``contact_rhs``; after ``fill``."""
        self.contact_rhs[rows] += acceleration
        self.e[self._dyn_rows + rows.start:self._dyn_rows + rows.stop] = self.contact_rhs[rows]

    def _drop_weak_contact_rows(self) -> bool:
        """Remove from the contact rows (``E``'s and ``e``'s, this tick) their combinations along the contact
        Jacobian's weak left singular vectors (singular value below ``WEAK_CONTACT`` of the largest); True
        when there were any. Such a combination of contact accelerations hardly any joint motion makes (a
        closed chain through the ground near a singular configuration): its demand ``-Jdot v`` comes out of
        the state's velocity slightly off the Jacobian's range, and held exactly it asks for that over the
        singular value (70 rad/s^2 of base pitch from 0.05 rad/s of joint velocity on a humanoid whose legs
        have no ankle roll) or, asked zero, forbids the motion the singular value nearly frees. Dropped, the
        rows are dependent there and the SVD route treats them so: the contacts move along it at most by
        the singular value times that motion."""
        U, s, _ = np.linalg.svd(self.Jc)
        weak = U[:, :s.size][:, s < WEAK_CONTACT * s[0]]
        if not weak.size:
            return False
        rows = slice(self._dyn_rows, self._dyn_rows + self.contact_rhs.size)
        self.E[rows] -= weak @ (weak.T @ self.E[rows])
        self.e[rows] -= weak @ (weak.T @ self.e[rows])
        return True

    def eliminate(self) -> tuple[np.ndarray | None, np.ndarray]:
        """Minimum-norm solution of ``E x = e`` and an orthonormal null-space basis; ``(None, _)`` when the
        rows are inconsistent. Full row rank (the usual case): QR of ``E^T``; otherwise, and when
        near-dependent contact rows lose their weak directions (``_drop_weak_contact_rows``), the SVD."""
        E, e = self.E, self.e
        m, n = E.shape
        if m == 0:
            return np.zeros(n), np.eye(n)
        if m <= n:
            lwork_qr, lwork_q = self._lwork
            status = _ELIMINATE.call(E, e, self._work, lwork_qr, lwork_q, self._pivots, self._ints, self._Q,
                                     self._x0, NEAR_DEPENDENT_ROW)
            if status == NEAR_DEPENDENT:
                status = 1 if self._drop_weak_contact_rows() else \
                    _ELIMINATE.call(E, e, self._work, lwork_qr, lwork_q, self._pivots, self._ints, self._Q,
                                    self._x0, 0.0)
            if status != 1:
                return (self._x0 if status == 0 else None), self._Q[:, m:]
        U, s, Vt = np.linalg.svd(E)  # rank deficient
        rank = int(np.count_nonzero(s > RANK_TOLERANCE * max(s[0], 1.0)))
        x, Z = Vt[:rank].T @ ((U[:, :rank].T @ e) / s[:rank]), Vt[rank:].T
        return (x if _CONSISTENT.call(E, x, e) else None), Z

    def torques(self, x: np.ndarray, ev: Evaluation, effort: np.ndarray,
                tau: np.ndarray) -> tuple[bool, float, float]:
        """``tau`` (the module function ``torques``) from this tick's solution at ``ev``; ``(finite, dynamics
        residual, contact acceleration)``."""
        result: tuple[bool, float, float] = _TORQUES.call(
            x, ev.mass_matrix, ev.nonlinear_effects, self._first_v, self._tau_start, self.Jc,
            self.contact_rhs, effort, tau, self._generalized, self._contact_term)
        return result

    def products(self, buf: LevelBuffers, Z: np.ndarray, x: np.ndarray, ridge: float) -> None:
        """Level ``buf``'s ``AZ, CZ, Cx, low, high, Ax, r, H, g`` (``level_products``) at the null-space basis
        ``Z`` and the point ``x`` of the levels above; numpy's own calls when a dimension is 1 (a level with
        one free variable or one row), where numpy's matmul takes other routines."""
        A, b = buf.rows.A, buf.rows.b
        C = self.C
        if min(A.shape[0], C.shape[0], Z.shape[0], Z.shape[1]) > 1:
            _PRODUCTS.call(A, b, Z, x, C, self.lower, self.upper, ridge, buf.AZ, buf.CZ, buf.Cx, buf.low,
                           buf.high, buf.Ax, buf.r, buf.H, buf.g)
            return
        AZ = np.matmul(A, Z, out=buf.AZ)
        np.matmul(C, Z, out=buf.CZ)
        Cx = np.matmul(C, x, out=buf.Cx)
        np.subtract(self.lower, Cx, out=buf.low)
        np.subtract(self.upper, Cx, out=buf.high)
        r = np.subtract(b, np.matmul(A, x, out=buf.Ax), out=buf.r)
        np.add(np.matmul(AZ.T, AZ, out=buf.H), ridge * np.eye(AZ.shape[1]), out=buf.H)
        np.negative(np.matmul(AZ.T, r, out=buf.g), out=buf.g)

    def regularize_forces(self, buf: LevelBuffers, Z: np.ndarray, x: np.ndarray, weight: float) -> None:
        """Add the surface contacts' wrench regularisation ``sum c |f / weight|^2`` (``contacts.py``;
        ``weight``: the robot's) to level ``buf``'s ``H`` and ``g`` at ``x + Z z``: ``H += Z_F^T C Z_F``,
        ``g += Z_F^T C x_F`` over the regularised force entries ``F``."""
        cols = self.regularized_columns
        ZF = Z[cols]
        scale = self._regularization / (weight * weight)
        buf.H += ZF.T @ (scale[:, None] * ZF)
        buf.g += ZF.T @ (scale * x[cols])

    def level(self, k: int, tasks: Sequence[Task], nz: int) -> LevelBuffers:
        """Level ``k``'s arrays for its ``tasks`` (the same at every call for one ``k``: the controller's
        tasks are fixed while an assembly lives) and ``nz`` free variables (made on first use)."""
        key = (k, nz)
        buffers = self._levels.get(key)
        if buffers is None:
            buffers = self._levels[key] = LevelBuffers(StackedRows(tasks, self.layout), self.C.shape[0], nz)
        return buffers
