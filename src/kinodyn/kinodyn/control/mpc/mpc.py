"""``CentroidalMpc``: convex single-rigid-body MPC of a legged robot's contact forces over a horizon.

The planning level of Robot Dynamics Essential §4.4's two-level scheme (the whole-body QP tracks its forces
and its base
trajectory), after the convex MPC of Di Carlo et al. (IROS 2018): set up once for a robot (its SRB:
``srb.SingleRigidBody``), then ``solve(state, reference, contact_schedule, footholds)`` per planning tick.
The problem is ``problem.build_problem``'s; ``params.solver`` picks the sparse OSQP form (``sparse``) or
the condensed DAQP form (``condensed``). ``schedule`` builds the inputs from a gait, footholds and a
velocity command. ``set_weights`` changes the cost's weights between solves (the rest is set up once).

``solve`` never raises: a wrong shape or a non-finite number in its inputs answers ``invalid_input``, a
solver failure its status (infeasible, max_iterations, inaccurate, numerical_error), in both cases with no
forces and a message saying what went wrong. ``solve_parts`` is the same solve in parts (a generator
pausing between them, ``solution.finish`` runs it to the end), for a caller that spreads one solve over
several control ticks (``planner.MpcPlanner``).
"""

from __future__ import annotations

import time
from dataclasses import fields
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.mpc.condensed import CondensedSolver
from kinodyn.control.mpc.parameters import MpcParameters
from kinodyn.control.mpc.problem import build_problem
from kinodyn.control.mpc.solution import BackendResult, MpcSolution, MpcStatus, finish
from kinodyn.control.mpc.sparse import SparseSolver
from kinodyn.control.mpc.srb import STATE_SIZE, SingleRigidBody

if TYPE_CHECKING:
    from collections.abc import Generator, Sequence

    from numpy.typing import ArrayLike

    from kinodyn.model import Model

# the cost's weights: ``CentroidalMpc.set_weights`` changes them on a set-up MPC
_WEIGHT_FIELDS = ("orientation_weight", "position_weight", "angular_velocity_weight",
                  "linear_velocity_weight", "force_weight")


def _array(value: ArrayLike, shape: tuple[int, ...], name: str) -> tuple[np.ndarray | None, str]:
    """``value`` as a float array of ``shape``, or None and why not."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as error:
        return None, f"{name} is not an array of numbers ({error})"
    if array.shape != shape:
        return None, f"{name} must have shape {shape}, got {array.shape}"
    return array, ""


class CentroidalMpc:
    """The MPC of one robot (module doc): ``body`` its SRB, ``feet`` the names of its feet (the order of the
    schedule's columns, the footholds' and the answer's forces), ``params`` the settings. An instance keeps
    its solver's state (set-up, warm start): one ``solve`` at a time, from any one thread."""

    def __init__(self, body: SingleRigidBody, feet: Sequence[str],
                 params: MpcParameters | None = None) -> None:
        self.body = body
        self.feet = tuple(feet)
        if not self.feet or len(set(self.feet)) != len(self.feet):
            raise ValueError(f"the MPC needs distinct foot names, got {list(feet)}")
        self.params = params if params is not None else MpcParameters()
        self.solver: SparseSolver | CondensedSolver = (
            SparseSolver(self.params, len(self.feet)) if self.params.solver == "sparse"
            else CondensedSolver(self.params))
        self._times = np.arange(self.params.horizon + 1) * self.params.dt

    @classmethod
    def from_model(cls, model: Model, feet: Sequence[str], q_nominal: np.ndarray,
                   params: MpcParameters | None = None) -> CentroidalMpc:
        """The MPC of a floating-base ``model`` standing at the joint positions of ``q_nominal`` (its SRB:
        ``SingleRigidBody.from_model``); every foot must be a frame of the model."""
        for foot in feet:
            model.frame_id(foot)
        return cls(SingleRigidBody.from_model(model, q_nominal), feet, params)

    def set_weights(self, params: MpcParameters) -> None:
        """Take ``params``'s cost weights (the state weights and ``force_weight``) from the next solve on (a
        solve in progress keeps its own); ``ValueError`` (nothing changed) when any other setting differs:
        they shape the problem or its solver's set-up (build a new ``CentroidalMpc``)."""
        if not isinstance(params, MpcParameters):
            raise TypeError(f"set_weights takes an MpcParameters, got {type(params).__name__}")
        changed = [f.name for f in fields(params) if f.name not in _WEIGHT_FIELDS
                   and getattr(params, f.name) != getattr(self.params, f.name)]
        if changed:
            raise ValueError(f"MPC parameters {', '.join(changed)} cannot change on a set-up MPC (only the "
                             f"cost weights {', '.join(_WEIGHT_FIELDS)} can): build a new CentroidalMpc")
        self.params = params

    def _check(self, state: ArrayLike, reference: ArrayLike, contact_schedule: ArrayLike,
               footholds: ArrayLike) -> tuple[tuple[np.ndarray, ...] | None, str]:
        N, n = self.params.horizon, len(self.feet)
        x0, why = _array(state, (STATE_SIZE,), "state")
        ref, why_ref = _array(reference, (N, STATE_SIZE), "reference")
        stance, why_stance = _array(contact_schedule, (N, n), "contact_schedule")
        feet, why_feet = _array(footholds, (N, n, 3), "footholds")
        if x0 is None or ref is None or stance is None or feet is None:
            return None, why or why_ref or why_stance or why_feet
        if not ((stance == 0.0) | (stance == 1.0)).all():
            return None, "contact_schedule must hold booleans (stance True, swing False)"
        mask = stance.astype(bool)
        checks = (("state", x0), ("reference", ref), ("footholds of the stance steps", feet[mask]))
        for name, values in checks:
            if not np.isfinite(values).all():
                bad = np.argwhere(~np.isfinite(values))[:3].tolist()
                return None, f"{name} has non-finite entries (first at {bad}): pass finite numbers"
        return (x0, ref, mask, feet), ""

    def solve(self, state: ArrayLike, reference: ArrayLike, contact_schedule: ArrayLike,
              footholds: ArrayLike) -> MpcSolution:
        """The optimal forces and predicted states over the horizon (module doc). ``state`` (12,): the SRB
        state now (``SingleRigidBody.state_from_floating_base``); ``reference`` (N, 12): the wanted states
        of steps 1 .. N (``schedule.velocity_reference``); ``contact_schedule`` (N, n_feet) bool: stance per
        step and foot (``schedule.contact_schedule``); ``footholds`` (N, n_feet, 3): each stance foot's
        contact point, world (``schedule.foothold_plan``; swing entries are not read)."""
        return finish(self.solve_parts(state, reference, contact_schedule, footholds))

    def solve_parts(self, state: ArrayLike, reference: ArrayLike, contact_schedule: ArrayLike,
                    footholds: ArrayLike) -> Generator[None, None, MpcSolution]:
        """``solve`` in parts: the checks and the problem's set-up, then the solver's own parts (module doc).
        The inputs are read before the first pause. The answer's ``solve_time`` counts the parts' time
        only, not the pauses."""
        start, busy = time.perf_counter(), 0.0
        checked, why = self._check(state, reference, contact_schedule, footholds)
        if checked is None:
            return self._answer(start, BackendResult(MpcStatus.INVALID_INPUT, why, 0))
        x0, ref, stance, feet = checked
        try:
            parts = self.solver.solve_parts(build_problem(self.body, self.params, x0, ref, stance, feet))
            while True:
                try:
                    next(parts)
                except StopIteration as done:
                    result = done.value
                    break
                busy += time.perf_counter() - start
                yield
                start = time.perf_counter()
        except (ArithmeticError, ValueError, np.linalg.LinAlgError) as error:
            result = BackendResult(MpcStatus.NUMERICAL_ERROR, f"{type(error).__name__}: {error}", 0)
        return self._answer(start, result, x0, busy)

    def _answer(self, start: float, result: BackendResult, x0: np.ndarray | None = None,
                busy: float = 0.0) -> MpcSolution:
        forces = states = base = None
        if (result.status is MpcStatus.SOLVED and result.forces is not None and result.states is not None
                and x0 is not None):
            forces = result.forces * self.body.weight
            states = np.vstack((x0[None], result.states))
            base = self.body.base_positions(states)
        return MpcSolution(result.status, result.message, self.solver.name, self.feet, self._times, forces,
                           states, base, result.iterations, busy + time.perf_counter() - start)
