"""``MpcPlanner``: runs a ``CentroidalMpc`` at its own rate inside a control loop, never holding up a tick.

The two-level scheme of Robot Dynamics Essential §4.4 runs the planner slower than the whole-body QP. Here
a solve is spread
over the control ticks (``CentroidalMpc.solve_parts``): each ``step`` does at most one part of the solve in
progress (with the condensed solver: the set-up and condensing, the Gram product, the QP), so a tick grows by
one part, never by a whole solve. (A worker thread would not do better in Python: the solve's set-up and its
compiled kernels hold the interpreter lock, and a tick that wants it back waits up to the interpreter's
switch interval, longer than a whole solve.)

Every ``step(t, inputs)``:

1. with no solve in progress and at least ``1 / rate`` since the last one started, a new solve starts from
   ``inputs()`` (the state, reference, contact schedule and footholds sampled now: the plan's time zero);
   otherwise the solve in progress goes one part further;
2. a finished solve becomes the plan when it succeeded and is at most ``max_age`` old (from the state it
   started from); a failed one (or inputs that raise ``ValueError`` or an arithmetic error) drops the plan
   in force (the caller falls back), a late one is not applied;
3. the answer is the plan in force, or ``None`` when there is none or it has grown older than ``max_age``
   (no new plan came in time). ``status`` says which and why.

Times are the caller's clock (the control loop's ``t``, simulated or not), so the planner behaves the same in
simulation and on a robot; time going backwards starts it afresh.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

    from kinodyn.control.mpc.mpc import CentroidalMpc
    from kinodyn.control.mpc.solution import MpcSolution

Inputs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # state, reference, schedule, footholds

TRACKING, WAITING, FALLBACK = "tracking", "waiting", "fallback"
_TIME_TOLERANCE = 1e-9  # s: tick times summed from steps are off by rounding


@dataclass(frozen=True)
class PlannerParameters:
    """``rate`` [Hz]: solves started per second at most; ``max_age`` [s]: a plan older than this (from the
    state it started from) is not applied; more than ``1 / rate`` (a plan must live until the next one) and
    less than the horizon (``CentroidalMpc.params``, checked by ``MpcPlanner``)."""

    rate: float = 50.0
    max_age: float = 0.06

    def __post_init__(self) -> None:
        for name in ("rate", "max_age"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                    and value > 0.0):
                raise ValueError(f"MPC planner parameter {name} must be a finite number > 0, got {value!r}")
        if self.max_age <= 1.0 / self.rate:
            raise ValueError(f"MPC planner parameter max_age ({self.max_age} s) must exceed the time between "
                             f"solves, 1 / rate = {1.0 / self.rate:.4f} s: each plan would expire before the "
                             "next")


@dataclass(frozen=True)
class PlannerStatus:
    """``state``: ``tracking`` (a plan in force), ``waiting`` (none yet, or the planner is not asked for
    one) or ``fallback`` (the last solve failed, or the plan in force grew too old: ``reason`` says which);
    ``plan_age`` [s] of the plan in force (NaN without one); counts since construction: ``solves``
    finished, ``failures`` (failed solves), ``late`` (solves finished too late, plans expired unreplaced);
    ``solve_time`` [s]: the last finished solve's compute time (its parts, ``MpcSolution.solve_time``)."""

    state: str
    reason: str
    plan_age: float
    solves: int
    failures: int
    late: int
    solve_time: float


@dataclass(frozen=True)
class Plan:
    """A successful solve (``solution``), the time ``t0`` of the state it started from and its ``inputs``."""

    t0: float
    solution: MpcSolution
    inputs: Inputs


class MpcPlanner:
    """Runs ``mpc`` at ``params.rate`` within a caller's control ticks (module doc)."""

    def __init__(self, mpc: CentroidalMpc, params: PlannerParameters | None = None) -> None:
        self.mpc = mpc
        self.params = PlannerParameters()
        self.set_parameters(params if params is not None else PlannerParameters())
        self.plan: Plan | None = None
        self._solve: Generator[None, None, MpcSolution] | None = None
        self._solve_t0 = 0.0
        self._solve_inputs: Inputs | None = None
        self._next = -math.inf  # the earliest start of the next solve
        self._t: float | None = None
        self._state, self._reason = WAITING, "no plan yet"
        self._solves = self._failures = self._late = 0
        self._solve_time = math.nan

    def set_parameters(self, params: PlannerParameters) -> None:
        """New rate and largest age, from the next ``step``; ``ValueError`` (nothing changed) for a
        ``max_age`` not shorter than the MPC's horizon."""
        horizon = self.mpc.params.horizon * self.mpc.params.dt
        if params.max_age >= horizon:
            raise ValueError(f"MPC planner parameter max_age ({params.max_age} s) must be shorter than the "
                             f"MPC's horizon ({horizon:.3f} s): a plan is sampled up to max_age ahead")
        self.params = params

    def step(self, t: float, inputs: Callable[[], Inputs]) -> Plan | None:
        """One control tick at time ``t`` [s] (module doc); ``inputs`` is called only when a solve starts."""
        if not math.isfinite(t):
            raise ValueError(f"t must be finite, got {t}")
        if self._t is not None and t < self._t:
            self.reset("time went backwards")
        self._t = t
        period = 1.0 / self.params.rate
        if self._solve is None and t >= self._next - _TIME_TOLERANCE:
            # on the grid of starts while on time (rounded tick times do not slow the rate), else from now
            self._next = self._next + period if t - self._next < period else t + period
            self._solve_t0 = t
            try:
                self._solve_inputs = inputs()
            except (ArithmeticError, ValueError, np.linalg.LinAlgError) as error:
                self._failures += 1
                self.plan = None
                self._state, self._reason = FALLBACK, f"the MPC's inputs could not be built: " \
                                                      f"{type(error).__name__}: {error}"
                return None
            self._solve = self.mpc.solve_parts(*self._solve_inputs)
        if self._solve is not None:
            try:
                next(self._solve)
            except StopIteration as done:
                self._solve = None
                self._finished(t, done.value)
        return self._current(t)

    def idle(self, t: float, reason: str) -> None:
        """The caller does not want a plan at ``t`` (``reason``): the solve in progress and the plan are
        dropped, the status is ``waiting``."""
        self.reset(reason)
        self._t = t

    def reset(self, reason: str) -> None:
        """Drop the solve in progress and the plan; the next ``step`` starts a solve."""
        self._solve, self.plan, self._next = None, None, -math.inf
        self._state, self._reason = WAITING, reason

    @property
    def solving(self) -> bool:
        """A solve is in progress (started, not finished)."""
        return self._solve is not None

    @property
    def status(self) -> PlannerStatus:
        age = self._t - self.plan.t0 if self.plan is not None and self._t is not None else math.nan
        return PlannerStatus(self._state, self._reason, age, self._solves, self._failures, self._late,
                             self._solve_time)

    def _finished(self, t: float, solution: MpcSolution) -> None:
        self._solves += 1
        self._solve_time = solution.solve_time
        age = t - self._solve_t0
        if not solution.ok:
            self._failures += 1
            self.plan = None
            self._state, self._reason = FALLBACK, f"the MPC solve failed: {solution.status.value} " \
                                                  f"({solution.message})"
        elif age > self.params.max_age:
            self._late += 1
            self._state, self._reason = FALLBACK, f"a solve finished {age:.4f} s after its state, later " \
                                                  f"than max_age {self.params.max_age} s: not applied"
        else:
            assert self._solve_inputs is not None  # (set with the solve)
            self.plan = Plan(self._solve_t0, solution, self._solve_inputs)

    def _current(self, t: float) -> Plan | None:
        plan = self.plan
        if plan is None:
            return None
        age = t - plan.t0
        if age > self.params.max_age:
            self.plan = None
            self._late += 1
            self._state, self._reason = FALLBACK, f"no new plan within max_age {self.params.max_age} s " \
                                                  f"(the last is {age:.4f} s old)"
            return None
        self._state, self._reason = TRACKING, "solved"
        return plan
