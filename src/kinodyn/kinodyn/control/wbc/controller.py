"""The whole-body controller: inverse dynamics as a QP, weighted or as a strict hierarchy (Robot Dynamics
lecture notes (ETH) §3.10).

Decision vector ``x = [qdd; f_1 .. f_nc]`` (``layout.VariableLayout``), ``tau`` recovered from the actuated
rows of the equations of motion, ``tau = (M qdd + h - J_c^T f)[actuated]``; or ``x = [qdd; f; tau]`` with
``torque_variables=True`` (Robot Dynamics lecture notes (ETH) (3.108)-(3.109)). Every tick (``update``):

1. one ``Evaluation`` at ``(q, v)`` (``kinodyn.evaluation``);
2. the hard equalities ``E x = e``: the unactuated (floating-base) rows of the equations of motion
   ``M_u qdd + h_u = J_cu^T f`` (all rows with ``-S^T tau`` when tau is a variable) and every active contact's
   ``J_c qdd + Jdot_c v = 0``; the hard inequalities ``l <= C x <= u``: friction cones and force bounds,
   torque limits, and the joint position/velocity limits as acceleration bounds (``limits.JointLimits``);
3. the equalities are eliminated exactly: ``x = x_0 + Z z`` with ``x_0`` their minimum-norm solution and
   ``Z`` an orthonormal basis of their null space (SVD with a rank tolerance). An inconsistent set (no
   ``x`` satisfies them) is reported, never solved in the least-squares sense;
4. each priority level ``k`` (weighted mode: one level holding every task) solves the QP
   ``min_z ||W_k^(1/2) (A_k (x + Z z) - b_k)||^2 + eps ||z||^2`` s.t. ``l <= C (x + Z z) <= u``, then
   ``x += Z z`` and ``Z <- Z N(A_k Z)``: the next levels move only in the null space of every higher
   level's rows, so a level's optimum is kept exactly (the exact null-space form of the sequence of
   constrained optimisations (3.107) with the iterative projection (3.103)-(3.106); not Robot Dynamics
   Essential's
   (41)-(42), whose projector does not keep the higher levels' optimum). Inequalities hold at every level;
   a level that cannot satisfy
   them returns the solver's status.

When the first level has no solution (its hard constraints cannot all hold: the solver reports it
infeasible, or non-convex or a numerical failure, as DAQP may on a nearly infeasible level; not an
iteration cap), the same tick is solved again
with the joint limits, then the torque limits, then the contacts' no-motion rows made soft by heavily
penalised slacks (bounded but in the last stage, which is feasible by construction), the equations of
motion, friction cones and force bounds kept hard (``relaxation.py``; a stage the solver fails on other
than as infeasible goes to the fallback solver, as a level does): such an answer has the status
``"relaxed"`` (``ok``, ``relaxed`` naming the soft constraints, ``message`` what gave way and by how much;
``relaxed_ticks`` counts them) and only its first level solved. Ticks whose hard level is feasible never
reach it.

A failed tick returns ``WBCResult`` with ``ok == False``, the status and a message, and ``tau = None``. When a
level below the first fails, the answer of the levels above stands (it meets every hard constraint and
the higher-priority tasks): ``ok`` with ``levels`` short of the controller's and the failure in
``message``. Measured: DAQP 0.11 calls 1 % of the third levels of the bench's hierarchy (force
regularisation, row weights down to 1e-11, degenerate active sets) infeasible although ``z = 0`` is feasible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.qp import DEFAULT_SOLVER, QP, QPResult, QPSolver, QPStatus, make_solver
from kinodyn.control.wbc import relaxation as soft
from kinodyn.control.wbc.assembly import RANK_TOLERANCE, Assembly, LevelBuffers, StackedRows
from kinodyn.control.wbc.layout import VariableLayout
from kinodyn.control.wbc.limits import JointLimits
from kinodyn.control.wbc.relaxation import Relaxation
from kinodyn.evaluation import Evaluation, Evaluator

if TYPE_CHECKING:
    from collections.abc import Iterable

    from numpy.typing import ArrayLike

    from kinodyn.control.wbc.contacts import Contact
    from kinodyn.control.wbc.tasks.base import Task
    from kinodyn.model import Model

MODES = ("weighted", "hierarchical")
_SOLVED = QPStatus.SOLVED.value
RELAXED = "relaxed"  # WBCResult.status of an answer with soft constraints (relaxation.py)
_ANSWERED = (_SOLVED, RELAXED)
# a first level's outcomes that mean it has no solution (DAQP may call a nearly infeasible QP non-convex or
# fail numerically on it); not an iteration cap: a starved solver's feasible level is not relaxed
_NO_SOLUTION = (QPStatus.INFEASIBLE, QPStatus.NONCONVEX, QPStatus.NUMERICAL_ERROR)
RELAXED_MAX_ITER = 20000  # DAQP's iterations on a relaxed stage (proximal outer iterations included)
_new = object.__new__
DEFAULT_REGULARIZATION = 1e-10
RAMP_END = 1e-9  # a contact ramping to swing whose force-bound scale is below this is released


@dataclass(frozen=True)
class WBCResult:
    """One tick's answer. ``tau`` (the actuated joints, model order) is ``None`` unless ``ok``: ``status``
    ``"solved"``, or ``"relaxed"`` with ``relaxed`` naming the constraints made soft (module doc)."""

    status: str
    message: str
    tau: np.ndarray | None
    qdd: np.ndarray | None
    forces: dict[str, np.ndarray]
    task_errors: dict[str, np.ndarray]
    evaluation: Evaluation
    dynamics_residual: float = math.nan  # max |M qdd + h - S^T tau - J_c^T f|
    contact_acceleration: float = math.nan  # max |J_c qdd + Jdot_c v|
    levels: int = 0  # priority levels solved (fewer than the controller's when a lower level failed: message)
    x: np.ndarray | None = field(default=None, repr=False)
    relaxed: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status in _ANSWERED


@dataclass
class _ContactState:
    contact: Contact
    target: bool  # wanted in stance
    scale: float  # force-bound ramp factor in [0, 1]
    rate: float = math.inf  # 1 / ramp duration
    ramp_from: float = math.nan  # normal force at the stance -> swing switch (the bound ramps down from it)
    anchor: np.ndarray | None = None  # the contact frame's pose when the contact was established (feedback)

    def upper_normal_force(self) -> float:
        """The normal-force bound this tick: ``scale`` times ``f_max``, or times the force at the switch."""
        start = self.contact.f_max if self.target or math.isnan(self.ramp_from) else self.ramp_from
        return self.scale * min(start, self.contact.f_max)


def _null_space(A: np.ndarray, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """``(V_range, V_null)``: orthonormal bases of the row space and the null space of ``A``."""
    n = A.shape[1]
    if A.shape[0] == 0:
        return np.zeros((n, 0)), np.eye(n)
    _, s, Vt = np.linalg.svd(A)
    rank = int(np.count_nonzero(s > tolerance * max(s[0], 1.0))) if s.size else 0
    return Vt[:rank].T, Vt[rank:].T


class WholeBodyController:
    """Whole-body inverse-dynamics QP for ``model`` (see the module doc).

    ``contacts`` start in stance. ``solver``: a name of ``kinodyn.control.qp.SOLVERS``; ``fallback_solver``
    (one too, or ``None``): asked when ``solver`` fails a level, its answer used and named in the message.
    ``regularization``: the ridge ``eps`` of every level (a unique solution when the tasks leave directions
    free; 0 when they determine ``x``). ``limits``: ``JointLimits`` (default: the URDF's,
    ``JointLimits.from_model``). ``relaxation``: how an infeasible hard level is answered
    (``relaxation.Relaxation``; its default relaxes, ``Relaxation(enabled=False)`` fails the tick).
    """

    def __init__(self, model: Model, contacts: Iterable[Contact] = (), *, mode: str = "weighted",
                 solver: str = DEFAULT_SOLVER, torque_variables: bool = False,
                 regularization: float = DEFAULT_REGULARIZATION, limits: JointLimits | None = None,
                 solver_options: dict[str, float | int | bool] | None = None,
                 fallback_solver: str | None = None, relaxation: Relaxation | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if not (math.isfinite(regularization) and regularization >= 0.0):
            raise ValueError(f"regularization must be finite and >= 0, got {regularization}")
        self.model = model
        self.mode = mode
        self.torque_variables = bool(torque_variables)
        self.regularization = float(regularization)
        self.limits = limits if limits is not None else JointLimits.from_model(model)
        self._torque_limited = np.flatnonzero(np.isfinite(self.limits.effort))
        self._first_v = 6 if model.floating_base else 0
        # the robot's weight [N] (the wrench regularisation's scale, contacts.py); 1 N in zero gravity
        self._weight = float(model.mass[1:].sum() * np.linalg.norm(model.gravity)) or 1.0
        self._gravity = float(np.linalg.norm(model.gravity)) or 1.0  # m/s^2: the contact rows' soft scale
        self.relaxation = relaxation if relaxation is not None else Relaxation()
        self.relaxed_ticks = 0  # ticks answered with soft constraints (module doc)
        self._relax_failures: list[str] = []  # why each relaxed stage of the last infeasible tick failed
        self._solver_name = solver
        self._solver_options = dict(solver_options or {})
        make_solver(solver, **self._solver_options)  # fail now on a bad name or option
        self._fallback_name = fallback_solver
        if fallback_solver is not None:
            make_solver(fallback_solver)
        self._fallbacks: dict[int, QPSolver] = {}
        self._notes: list[str] = []
        self._solvers: dict[int, QPSolver] = {}
        self._warm: dict[int, QPResult] = {}
        self._first_q = 7 if model.floating_base else 0
        self._contacts: dict[str, _ContactState] = {}
        self._contact_version = 0  # counts the changes of the contacts' states (_contacts_changed)
        self._settled = -1  # the contact version at which every ramp had ended (_advance_ramps)
        self._active: tuple[int, tuple[str, ...]] = (-1, ())  # active_contacts() at a contact version
        self._assemblies: dict[tuple[str, ...], Assembly] = {}  # per set of active contacts (made once)
        self._evaluator: Evaluator | None = None
        for contact in contacts:
            self.add_contact(contact)
        self._tasks: list[tuple[int, Task]] = []
        self._level_tasks: list[list[Task]] | None = None  # the tasks per priority level (_levels)
        self._t: float | None = None
        self._last: tuple[Evaluation, dict[str, np.ndarray], Assembly] | None = None  # the last solved tick

    # ----- configuration -------------------------------------------------------------------------------

    def add_contact(self, contact: Contact, active: bool = True) -> None:
        if contact.name in self._contacts:
            raise ValueError(f"contact {contact.name!r} already exists")
        self.model.frame_id(contact.frame)  # KeyError naming close frames
        self._contacts[contact.name] = _ContactState(contact, active, 1.0 if active else 0.0)
        self._reconfigured()

    def replace_contact(self, contact: Contact) -> None:
        """Swap the contact named ``contact.name`` for ``contact`` (another friction coefficient or force
        range, say), keeping its stance and force-bound ramp; the frame and the dimension must be the same."""
        try:
            state = self._contacts[contact.name]
        except KeyError:
            raise KeyError(f"no contact {contact.name!r}; contacts: {list(self._contacts)}") from None
        if (contact.frame, contact.dim) != (state.contact.frame, state.contact.dim):
            raise ValueError(f"contact {contact.name!r} is on frame {state.contact.frame!r} with "
                             f"{state.contact.dim} force entries; a replacement must be too, got "
                             f"{contact.frame!r} and {contact.dim}")
        state.contact = contact
        self._assemblies.clear()
        self._contacts_changed()

    def add_task(self, task: Task, level: int = 1) -> None:
        """Add ``task`` at priority ``level`` (>= 1, smaller is higher; ignored in weighted mode)."""
        if not (isinstance(level, int) and level >= 1):
            raise ValueError(f"task level must be an integer >= 1 (0 is the hard constraints), got {level!r}")
        if any(t.name == task.name for _, t in self._tasks):
            raise ValueError(f"a task named {task.name!r} already exists")
        self._tasks.append((level, task))
        self._reconfigured()
        self._level_tasks = None

    def remove_task(self, name: str) -> None:
        kept = [(lv, t) for lv, t in self._tasks if t.name != name]
        if len(kept) == len(self._tasks):
            raise KeyError(f"no task {name!r}; tasks: {[t.name for _, t in self._tasks]}")
        self._tasks = kept
        self._assemblies.clear()
        self._level_tasks = None

    def task(self, name: str) -> Task:
        for _, t in self._tasks:
            if t.name == name:
                return t
        raise KeyError(f"no task {name!r}; tasks: {[t.name for _, t in self._tasks]}")

    def set_contact_active(self, name: str, active: bool, ramp: float = 0.0) -> None:
        """Switch a contact to stance (``True``) or swing, ramping its force bound over ``ramp`` seconds.

        Switching off keeps the contact's constraint while its maximal normal force goes linearly to 0, then
        drops it; switching on adds the constraint at once with the force bound rising from 0.
        """
        try:
            state = self._contacts[name]
        except KeyError:
            raise KeyError(f"no contact {name!r}; contacts: {list(self._contacts)}") from None
        if not (math.isfinite(ramp) and ramp >= 0.0):
            raise ValueError(f"ramp must be finite and >= 0 s, got {ramp}")
        leaving = state.target and not active
        if active and not state.target:  # established anew: the feedback's anchor is taken at the next tick
            state.anchor = None
        self._contacts_changed()
        state.target = bool(active)
        state.rate = math.inf if ramp == 0.0 else 1.0 / ramp
        if ramp == 0.0:
            state.scale = 1.0 if active else 0.0
        elif leaving:  # the bound starts at the force of the last tick (f_max before any)
            last = self._last_normal(name)
            state.ramp_from = max(last, 0.0) if math.isfinite(last) else math.nan
            state.scale = 1.0

    def _last_normal(self, name: str) -> float:
        """The normal force of ``name`` at the last solved tick (0 if it was not active; NaN before any)."""
        if self._last is None:
            return math.nan
        ev, forces, asm = self._last
        if name not in forces:
            return 0.0
        return asm.contacts[asm.layout.contact_names.index(name)].normal_force(ev, forces[name])

    def active_contacts(self) -> tuple[str, ...]:
        """Contacts holding a constraint this tick: in stance, or ramping down towards swing."""
        return tuple(n for n, s in self._contacts.items() if s.target or s.scale > 0.0)

    def _reconfigured(self) -> None:
        """Contacts or tasks changed: a new evaluator (its frames) and new assemblies (their rows)."""
        self._evaluator = None
        self._assemblies.clear()
        self._contacts_changed()

    # ----- one tick ----------------------------------------------------------------------------------------

    def update(self, q: ArrayLike, v: ArrayLike, t: float | None = None) -> WBCResult:
        """Solve the tick at ``(q, v)``; ``t`` [s] advances the contact ramps (``None``: no ramp progress)."""
        self._advance_ramps(t)
        ev = self._evaluation(q, v)
        asm = self._assembly()
        layout = asm.layout
        if asm.contact_version != self._contact_version:  # (the bounds change only with the contacts)
            bounds = asm.normal_bounds
            for k, state in enumerate(asm.states):
                f_upper = state.upper_normal_force()
                bounds[k, 0], bounds[k, 1] = min(state.contact.f_min, f_upper), f_upper
            asm.contact_version = self._contact_version
        asm.fill(ev, self._first_q)
        for k, rows in asm.feedback:  # contact feedback gains (contacts.py)
            state = asm.states[k]
            if state.anchor is None:
                state.anchor = ev.placement(state.contact.frame).copy()
            asm.add_feedback(rows, state.contact.feedback(ev, state.anchor))
        x, Z = asm.eliminate()
        if x is None:
            return self._failure(ev, "infeasible", "the equations of motion and the contact constraints have "
                                 "no common solution; check for contacts on immobile or duplicated frames")
        levels = self._levels()
        solved = 0
        self._notes.clear()
        for k, tasks in enumerate(levels):
            buf = asm.level(k, tasks, Z.shape[1])
            self._stack(tasks, ev, layout, buf.rows)
            asm.products(buf, Z, x, self.regularization)
            if asm.regularized_columns.size:
                asm.regularize_forces(buf, Z, x, self._weight)
            AZ, CZ, low, high = buf.AZ, buf.CZ, buf.low, buf.high
            if k:  # a lower level starts from the higher levels' solution, z = 0: keep it feasible (it may
                # sit past a bound by the solver's tolerance); drop the rows z cannot change
                low, high = np.minimum(low, 0.0), np.maximum(high, 0.0)
                row_size = np.abs(CZ).max(axis=1)
                movable = row_size > RANK_TOLERANCE * max(1.0, float(row_size.max(initial=0.0)))
                CZ, low, high = CZ[movable], low[movable], high[movable]
            result = self._solve_level(k, buf.H, buf.g, CZ, low, high)
            if result.status is not QPStatus.SOLVED:
                failed = (f"priority level {k + 1} of {len(levels)}: the QP solver returned "
                          f"{result.status.value!r}")
                if k == 0:
                    relaxing = self.relaxation.enabled and result.status in _NO_SOLUTION
                    relaxed = self._relax(ev, asm, buf, x, Z, len(levels)) if relaxing else None
                    tried = f"; relaxed: {'; '.join(self._relax_failures)}" if relaxing else ""
                    hard = "friction cones, force bounds, torque and joint limits"
                    return relaxed or self._failure(ev, result.status.value, f"{failed} (hard constraints: "
                                                    f"{hard}){tried}")
                # The levels above are solved and x meets every hard constraint: answer with them, and say so.
                note = f"levels 1-{k} solved; {failed}: lower levels left unsolved"
                return self._success(ev, asm, x, solved, note)
            x = x + Z @ result.x
            solved += 1
            if k + 1 < len(levels):
                Z = Z @ _null_space(AZ, RANK_TOLERANCE)[1]
                if Z.shape[1] == 0:
                    break
        for tasks in levels[solved:]:  # levels left without freedom: refresh their errors for reporting
            for task in tasks:
                task.rows(ev, layout)
        return self._success(ev, asm, x, solved, "; ".join(["solved", *self._notes]))

    # ----- pieces -----------------------------------------------------------------------------------------

    def _advance_ramps(self, t: float | None) -> None:
        if t is not None and not math.isfinite(t):
            raise ValueError(f"t must be finite, got {t}")
        dt = 0.0 if t is None or self._t is None else max(0.0, t - self._t)
        if t is not None:
            self._t = t
        if self._settled == self._contact_version:  # every ramp ended, no contact changed since: none moves
            return
        settled = True
        for state in self._contacts.values():
            step = dt * state.rate if math.isfinite(state.rate) else 1.0
            scale = min(1.0, state.scale + step) if state.target else max(0.0, state.scale - step)
            if not state.target and scale < RAMP_END:  # the rounding left of a ramp that has ended:
                scale = 0.0  # a bound of ~1e-12 N would leave the QP a single feasible force
            if scale != state.scale:
                state.scale = scale
                self._contacts_changed()
            settled = settled and scale == (1.0 if state.target else 0.0)
        if settled:
            self._settled = self._contact_version

    def _evaluation(self, q: ArrayLike, v: ArrayLike) -> Evaluation:
        if self._evaluator is None:
            frames = [s.contact.frame for s in self._contacts.values()]
            frames += [f for _, task in self._tasks for f in task.frames]
            self._evaluator = Evaluator(self.model, frames)
        return self._evaluator.evaluate(q, v)

    def _contacts_changed(self) -> None:
        """A contact's stance, ramp or parameters changed: the active set and the force bounds are redone."""
        self._contact_version += 1

    def _assembly(self) -> Assembly:
        """The rows of this tick's set of active contacts (made on its first tick)."""
        if self._active[0] != self._contact_version:
            self._active = (self._contact_version, self.active_contacts())
        names = self._active[1]
        asm = self._assemblies.get(names)
        if asm is None:
            assert self._evaluator is not None  # (_evaluation made it)
            contacts = [self._contacts[n].contact for n in names]
            n_tau = self.model.nv - self._first_v
            layout = VariableLayout.build(self.model.nv, [(c.name, c.dim) for c in contacts], n_tau,
                                          self.torque_variables)
            frames = [self._evaluator.frames.index(self.model.frame_names[self.model.frame_id(c.frame)])
                      for c in contacts]
            asm = self._assemblies[names] = Assembly(layout, contacts, frames, self.limits,
                                                     self._torque_limited, self._first_v)
            asm.states = tuple(self._contacts[n] for n in names)
        return asm

    def _levels(self) -> list[list[Task]]:
        """The tasks of each priority level (made once per set of tasks)."""
        if self._level_tasks is None:
            if self.mode == "weighted" or not self._tasks:
                self._level_tasks = [[t for _, t in self._tasks]]
            else:
                numbers = sorted({lv for lv, _ in self._tasks})
                self._level_tasks = [[t for lv, t in self._tasks if lv == number] for number in numbers]
        return self._level_tasks

    @staticmethod
    def _stack(tasks: list[Task], ev: Evaluation, layout: VariableLayout, rows: StackedRows | None = None,
               ) -> tuple[np.ndarray, np.ndarray]:
        """The level's rows scaled by the square roots of the task weights, written into one matrix by each
        task's ``write_rows`` (into ``rows`` when given: the level's buffers, made for ``tasks``). A motion
        task weighted 0 (a swing task while its foot is in stance) keeps its rows, zero: the QP's shape
        stays."""
        rows = StackedRows(tasks, layout) if rows is None else rows
        rows.A.fill(0.0)
        for task, A, b in rows.blocks:
            task.write_rows(ev, layout, A, b)
        return rows.A, rows.b

    def _solve_level(self, k: int, H: np.ndarray, g: np.ndarray, CZ: np.ndarray, lo: np.ndarray,
                     hi: np.ndarray) -> QPResult:
        solver = self._solvers.get(k)
        if solver is None:
            solver = self._solvers[k] = make_solver(self._solver_name, **self._solver_options)
        qp = QP.inequality(H, g, CZ, lo, hi)
        result = solver.solve(qp, warm_start=self._warm.get(k))
        if result.ok:  # the solver uses it only on a problem of the same shape
            self._warm[k] = result
            return result
        return self._second_opinion(k, qp, result, f"level {k + 1}")

    def _second_opinion(self, key: int, qp: QP, result: QPResult, label: str) -> QPResult:
        """The fallback solver's answer to ``qp``, which the solver failed with ``result`` (measured: DAQP
        0.11 called a feasible level infeasible about once a minute of trotting), named in the answer's
        message; ``result`` when there is no fallback solver or it fails too. ``key``: the fallback's slot."""
        if self._fallback_name is None:
            return result
        fallback = self._fallbacks.get(key)
        if fallback is None:
            fallback = self._fallbacks[key] = make_solver(self._fallback_name)
        second = fallback.solve(qp)
        if not second.ok:
            return result
        self._notes.append(f"{label}: {self._solver_name} returned {result.status.value!r}, "
                           f"{self._fallback_name} solved it")
        return second

    def _relax(self, ev: Evaluation, asm: Assembly, buf: LevelBuffers, x: np.ndarray, Z: np.ndarray,
               n_levels: int) -> WBCResult | None:
        """The first level re-solved with soft constraints, stage by stage (``relaxation.STAGES``; the last
        one that applies has unbounded slacks, feasible by construction): the first stage that solves
        answers; ``None`` when none does (each stage's outcome in ``_relax_failures``). ``buf``, ``x``,
        ``Z``: the infeasible level's."""
        n_dyn = asm.dynamics_rows
        failures = self._relax_failures
        failures.clear()
        stages = soft.STAGES if asm.E.shape[0] > n_dyn else soft.STAGES[:-1]  # (contact rows to relax)
        for number, stage in enumerate(stages):
            if soft.CONTACT_MOTION in stage:  # only the equations of motion stay eliminated
                eliminated = soft.eliminate(asm.E[:n_dyn], asm.e[:n_dyn])
                if eliminated is None:
                    failures.append(f"{', '.join(stage)} soft: the equations of motion inconsistent")
                    break
                x, Z = eliminated
                buf = LevelBuffers(buf.rows, asm.C.shape[0], Z.shape[1])
                asm.products(buf, Z, x, self.regularization)
                if asm.regularized_columns.size:
                    asm.regularize_forces(buf, Z, x, self._weight)
            last = number == len(stages) - 1
            rows, hard = self._soft_rows(asm, stage, buf, x, Z)
            qp = QP.inequality(*soft.soft_qp(buf.H, buf.g, buf.CZ[hard], buf.low[hard], buf.high[hard], rows,
                                             self.relaxation.weight,
                                             math.inf if last else self.relaxation.bound))
            result = self._relaxed_solver(number).solve(qp)
            if not result.ok and (last or result.status is not QPStatus.INFEASIBLE):  # (no solution is
                # possible only in a bounded stage: any other failure is the solver's)
                result = self._second_opinion(-1 - number, qp, result, f"relaxed stage {number + 1}")
            if result.x is None or not result.ok:
                failures.append(f"{', '.join(stage)} soft: {result.status.value}")
                continue
            nz = Z.shape[1]
            self.relaxed_ticks += 1
            message = soft.describe(stage, soft.violations(rows, result.x[nz:]))
            if n_levels > 1:
                message += f"; levels 2-{n_levels} left unsolved"
            return self._success(ev, asm, x + Z @ result.x[:nz], 1, "; ".join([message, *self._notes]),
                                 status=RELAXED, relaxed=stage)
        return None

    def _relaxed_solver(self, stage: int) -> QPSolver:
        """The solver of relaxed ``stage``: the controller's, with DAQP's automatic proximal regularisation
        (the slacks' weight makes the QP ill-conditioned: DAQP may call it non-convex without it)."""
        solver = self._solvers.get(-1 - stage)
        if solver is None:
            options = dict(self._solver_options)
            if self._solver_name == "daqp":
                options.setdefault("eps_prox", -1.0)
                options["max_iter"] = max(int(options.get("max_iter", 0)), RELAXED_MAX_ITER)
            solver = self._solvers[-1 - stage] = make_solver(self._solver_name, **options)
        return solver

    def _soft_rows(self, asm: Assembly, stage: tuple[str, ...], buf: LevelBuffers, x: np.ndarray,
                   Z: np.ndarray) -> tuple[soft.SoftRows, np.ndarray]:
        """The rows of ``stage``'s soft constraints at the level ``buf`` (its ``CZ``, ``low``, ``high`` at
        ``x + Z z``), and the indices of the rows of ``C`` that stay hard."""
        n_in = asm.C.shape[0]
        pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]] = []
        blocks = {soft.JOINT_LIMITS: (asm.joint_limit_rows, np.full(n_in, self.limits.max_acceleration)),
                  soft.TORQUE_LIMITS: (asm.torque_limit_rows, np.zeros(n_in))}
        hard = np.ones(n_in, dtype=bool)
        for kind in stage:
            if kind == soft.CONTACT_MOTION:
                E, e = asm.E[asm.dynamics_rows:], asm.e[asm.dynamics_rows:]
                target = e - E @ x
                pieces.append((E @ Z, target, target, np.full(e.size, self._gravity), kind))
                continue
            rows, scales = blocks[kind]
            if kind == soft.TORQUE_LIMITS:
                scales[rows] = asm.limited_effort
            hard[rows] = False
            pieces.append((buf.CZ[rows], buf.low[rows], buf.high[rows], scales[rows], kind))
        rows_soft = soft.SoftRows(np.vstack([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces]),
                                  np.concatenate([p[2] for p in pieces]),
                                  np.concatenate([p[3] for p in pieces]),
                                  tuple(p[4] for p in pieces for _ in range(p[1].size)))
        return rows_soft, np.flatnonzero(hard)

    def _failure(self, ev: Evaluation, status: str, message: str) -> WBCResult:
        return WBCResult(status, message, None, None, {}, self._task_errors(), ev)

    def _task_errors(self) -> dict[str, np.ndarray]:
        return {t.name: t.error.copy() for _, t in self._tasks}

    def _success(self, ev: Evaluation, asm: Assembly, x: np.ndarray, levels: int, message: str = "solved",
                 *, status: str = _SOLVED, relaxed: tuple[str, ...] = ()) -> WBCResult:
        layout = asm.layout
        qdd = x[layout.qdd]
        tau = np.empty(self.model.nv - self._first_v)
        finite, dynamics, contact = asm.torques(x, ev, self.limits.effort, tau)
        if not finite:
            return self._failure(ev, QPStatus.NUMERICAL_ERROR.value, "the solution is not finite")
        block = x[layout.forces].copy()  # (one copy; each contact's force a view of it)
        forces = {name: block[cols] for name, cols in asm.force_columns}
        self._last = (ev, forces, asm)
        result = _new(WBCResult)  # every field, as the frozen dataclass __init__ sets them (a tick cost)
        result.__dict__.update(status=status, message=message, tau=tau, qdd=qdd.copy(), forces=forces,
                               task_errors=self._task_errors(), evaluation=ev, dynamics_residual=dynamics,
                               contact_acceleration=contact, levels=levels, x=x, relaxed=relaxed)
        return result
