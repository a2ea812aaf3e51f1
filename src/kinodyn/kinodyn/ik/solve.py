"""Position-level numerical IK: Gauss-Newton or Levenberg-Marquardt steps under hard joint limits.

Seed 000 §2.9.3, Algorithm 1 and (2.228)-(2.237): iterate ``q <- q + J^+ Δx`` with the
geometric Jacobian and the relative-rotation error ``Δφ = log(C* C^T)``. Seed 002 §3.7-3.8,
(81)-(90): the same Gauss-Newton iteration for several end-effectors at once (stacked residual),
with the recommendation to damp it (Levenberg-Marquardt, §3.8.1; the damped least-squares step
of Seed 000 (2.195), sign corrected).

Each step minimizes the linearized, weighted task error ``|W^{1/2}(J δ - Δx)|² + λ |δ|²``
(λ = 0 for Gauss-Newton) subject to the joint limits ``lower <= q + δ <= upper`` as hard
inequalities. The closed-form step is taken when it respects the limits; otherwise the
box-constrained QP is solved with OSQP (``kinodyn.ik.qp``), so every iterate is within limits.
LM damping: ``λ = μ |W^{1/2}Δx|² + λ_min`` (error-proportional, vanishing at a solution, so the
final convergence is Gauss-Newton fast), with μ raised tenfold whenever a step does not reduce
the error (the step is then rejected) and lowered again after a successful one. An attempt stops
at convergence, after ``max_iterations``, or when it stalls (μ beyond ``MAX_DAMPING_SCALE``: a
local minimum of the error, also detected when the error has not halved over STALL_ITERATIONS
iterations); the next attempt restarts from a random configuration within the limits. When no
attempt succeeds, the best one is refined without the stall cut-off and returned: the closest
configuration found, with its remaining error.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from kinodyn.ik.limits import ConfigurationLimit, active_indices
from kinodyn.ik.qp import box_qp
from kinodyn.ik.tasks import FrameTask, TaskEvaluation, TaskStack

if TYPE_CHECKING:
    from kinodyn.model import Model

FloatArray = np.ndarray
METHODS = ("lm", "gn")
INITIAL_DAMPING_SCALE = 1e-1
"""μ at the start of an attempt: λ = μ |Δx|² + λ_min."""
MINIMUM_DAMPING = 1e-9
"""λ_min: keeps the LM normal matrix positive definite for redundant arms."""
MAX_DAMPING_SCALE = 1e8
"""An LM attempt whose μ exceeds this has stalled in a local minimum of the error."""
STALL_ITERATIONS = 5
STALL_RATIO = 0.5
"""An attempt whose cost has not fallen below STALL_RATIO times its value STALL_ITERATIONS
iterations earlier has stalled (a local minimum, typically against a joint limit): restart."""


@dataclass(frozen=True)
class IKResult:
    """Outcome of ``solve_ik``.

    ``q``: best configuration found (within the joint limits of the active joints).
    ``success``: every task within tolerance. ``position_error`` (m) and ``orientation_error``
    (rad): the largest over the tasks at ``q`` (0.0 where no task constrains them).
    ``status``: "converged", "max_iterations" (every attempt used up) or "timeout".
    """

    q: FloatArray
    success: bool
    position_error: float
    orientation_error: float
    iterations: int
    restarts: int
    status: str


class _Problem:
    """Tasks, active joints and limits of one solve."""

    def __init__(self, model: Model, tasks: Sequence[FrameTask], active_joints: Sequence[str] | None) -> None:
        self.model = model
        self.v_idx, self.q_idx = active_indices(model, active_joints)
        self.n = self.v_idx.shape[0]
        self.stack = TaskStack(model, tasks, columns=self.v_idx)
        self.limit = ConfigurationLimit(model, self.q_idx)
        self.joint_q = self.q_idx[self.q_idx >= 0]  # randomized on restarts (not the base)

    def step(self, q: FloatArray, step: FloatArray) -> FloatArray:
        """``q ⊕ δ`` for a step δ over the active coordinates, kept exactly within the limits."""
        if self.model.floating_base:
            v = np.zeros(self.model.nv)
            v[self.v_idx] = step
            q_new = self.model.integrate(q, v)
        else:
            q_new = q.copy()
            q_new[self.q_idx] += step
        # The step satisfies lower - q <= δ <= upper - q; this removes the rounding of q + (upper - q).
        return self.limit.project(q_new)

    def linear_step(self, ev: TaskEvaluation, method: str, damping_scale: float) -> FloatArray:
        """Step minimizing ``|J δ - Δx|² + λ|δ|²`` within the joint limits (closed form, else the QP)."""
        if method == "gn":
            H, g = ev.jacobian.T @ ev.jacobian, ev.jacobian.T @ ev.error
            step = np.linalg.lstsq(ev.jacobian, ev.error, rcond=None)[0]  # J^+ Δx, minimum norm (Alg. 1)
        else:
            damping = damping_scale * float(ev.error @ ev.error) + MINIMUM_DAMPING
            H, g, step = _damped_step(ev.jacobian, ev.error, damping)
        lower, upper = self.limit.step_bounds(ev.q)
        if np.all(step >= lower) and np.all(step <= upper):
            return step
        return box_qp(self.n).solve(H, g, lower, upper, unconstrained=step)


@njit(cache=True)
def _damped_step(J: np.ndarray, e: np.ndarray, damping: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``H = J^T J + λ I``, ``g = J^T Δx`` and the LM step ``H^{-1} g`` (Seed 000 (2.195))."""
    H = J.T @ J
    for i in range(H.shape[0]):
        H[i, i] += damping
    g = J.T @ e
    return H, g, np.linalg.solve(H, g)


def _cost(ev: TaskEvaluation) -> float:
    return float(ev.error @ ev.error)


def _default_seed(model: Model) -> FloatArray:
    """Mid-range of the finite joint limits (TRAC-IK's default seed), neutral elsewhere."""
    q = model.neutral()
    finite = np.isfinite(model.lower_limit) & np.isfinite(model.upper_limit)
    q[finite] = 0.5 * (model.lower_limit[finite] + model.upper_limit[finite])
    return q


def _converged(ev: TaskEvaluation, position_tolerance: float, orientation_tolerance: float) -> bool:
    return bool(np.all(ev.position_errors < position_tolerance)
                and np.all(ev.orientation_errors < orientation_tolerance))


def solve_ik(model: Model, frame: str | int | Sequence[FrameTask], target: ArrayLike | None = None,
             q_seed: ArrayLike | None = None, rng: np.random.Generator | int | None = None, *,
             kind: str = "pose", method: str = "lm", position_tolerance: float = 1e-6,
             orientation_tolerance: float = 1e-6, max_iterations: int = 50, restarts: int = 50,
             timeout: float | None = None, active_joints: Sequence[str] | None = None) -> IKResult:
    """Configuration that brings ``frame`` to ``target`` (4x4 world pose), or satisfies a list of tasks.

    ``frame``: a frame name or index with ``target`` (a 4x4 pose; a 3-vector for
    ``kind="position"``, a 3x3 rotation for ``kind="orientation"``), or a sequence of
    ``FrameTask`` (several frames at once, ``target`` must then be None).
    ``q_seed``: start configuration (default: mid-range of the joint limits). ``rng``: generator
    or seed of the random restarts (None: seed 0, so results are reproducible).
    ``method``: "lm" (Levenberg-Marquardt, default) or "gn" (Gauss-Newton, Seed 000 Algorithm 1).
    Tolerances: per task, in m and rad. ``max_iterations``: per attempt; ``restarts``: random
    restarts after the first attempt; ``timeout``: wall-clock seconds for the whole solve.
    ``active_joints``: names of the joints the IK may move (default: all; the others keep their
    seed value), e.g. the 7 arm joints of a Panda without its finger.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(frame, (str, int, np.integer)):
        if target is None:
            raise ValueError(f"solve_ik({frame!r}, target=None): give the target pose of the frame")
        tasks: Sequence[FrameTask] = [FrameTask(model, frame, target, kind)]
    else:
        if target is not None:
            raise ValueError("target must be None when frame is a list of tasks (each task holds its target)")
        tasks = list(frame)
        if not tasks or not all(isinstance(task, FrameTask) for task in tasks):
            raise ValueError(f"frame must be a frame name or index, or a non-empty list of FrameTask; "
                             f"got {frame!r}")
    if max_iterations < 1 or restarts < 0:
        raise ValueError(f"need max_iterations >= 1 and restarts >= 0, got {max_iterations}, {restarts}")
    problem = _Problem(model, tasks, active_joints)
    q = _default_seed(model) if q_seed is None else model.check_q(q_seed).copy()
    rng = np.random.default_rng(0 if rng is None else rng)
    deadline = np.inf if timeout is None else time.perf_counter() + timeout

    def solved(ev: TaskEvaluation) -> bool:
        return _converged(ev, position_tolerance, orientation_tolerance) and problem.limit.contains(ev.q)

    iterations = 0
    timed_out = False

    def descend(ev: TaskEvaluation, stop_when_stalled: bool) -> TaskEvaluation:
        """LM / GN iterations from ev until solved, max_iterations, a stall (if asked) or the deadline."""
        nonlocal iterations, timed_out
        cost = _cost(ev)
        damping_scale = INITIAL_DAMPING_SCALE
        history = [cost]
        for _ in range(max_iterations):
            if solved(ev):
                break
            if stop_when_stalled and len(history) > STALL_ITERATIONS \
                    and history[-1] > STALL_RATIO * history[-1 - STALL_ITERATIONS]:
                break
            if time.perf_counter() > deadline:
                timed_out = True
                break
            iterations += 1
            trial = problem.stack.evaluate(problem.step(ev.q, problem.linear_step(ev, method, damping_scale)))
            trial_cost = _cost(trial)
            if method == "gn" or trial_cost < cost:
                ev, cost = trial, trial_cost
                damping_scale = max(damping_scale / 10.0, INITIAL_DAMPING_SCALE)
            else:
                damping_scale *= 10.0
                if damping_scale > MAX_DAMPING_SCALE:
                    break
            history.append(cost)
        return ev

    best: TaskEvaluation | None = None
    for attempt in range(restarts + 1):
        if attempt > 0:
            q = q.copy()
            q[problem.joint_q] = model.random_configuration(rng)[problem.joint_q]
        ev = descend(problem.stack.evaluate(q), stop_when_stalled=True)
        if solved(ev) or best is None or _cost(ev) < _cost(best):
            best = ev
        if solved(ev) or timed_out:
            break
    assert best is not None
    if not solved(best) and not timed_out:
        # No attempt reached the target: refine the closest one to its local minimum (no stall cut-off).
        best = descend(best, stop_when_stalled=False)
    success = solved(best)
    status = "converged" if success else ("timeout" if timed_out else "max_iterations")
    return IKResult(best.q, success, float(np.max(best.position_errors)),
                    float(np.max(best.orientation_errors)), iterations, attempt, status)
