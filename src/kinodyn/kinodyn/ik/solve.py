"""Position-level numerical IK: Gauss-Newton or Levenberg-Marquardt steps under hard joint limits.

Robot Dynamics lecture notes (ETH), §2.9.3, Algorithm 1 and (2.228)-(2.237): iterate ``q <- q + J^+ Δx`` with
the geometric Jacobian and the relative-rotation error ``Δφ = log(C* C^T)``. Rotations and inverse kinematics
(Fredriksson), §3.7-3.8, (81)-(90): the same Gauss-Newton iteration for several end-effectors at once (stacked
residual), with the recommendation to damp it (Levenberg-Marquardt, §3.8.1; the damped least-squares step
of Robot Dynamics lecture notes (ETH), (2.195), sign corrected).

Each step minimizes the linearized, weighted task error ``|W^{1/2}(J δ - Δx)|² + λ |δ|²``
(λ = λ_min for Gauss-Newton) subject to the joint limits ``lower <= q + δ <= upper`` as hard
inequalities. The closed-form step is taken when it respects the limits; otherwise the
box-constrained QP is solved exactly by a primal active-set method (``kinodyn.ik.qp``), so every
iterate is within limits. Each attempt runs compiled (``kinodyn.ik.descent``: FK, Jacobian,
normal equations and Cholesky in one kernel, a few µs per iteration on a 7-DoF arm); restarts and
the timeout are handled here, between attempts.
LM damping: ``λ = μ |W^{1/2}Δx|² + λ_min`` (error-proportional, vanishing at a solution, so the
final convergence is Gauss-Newton fast: the damping of Yamashita and Fukushima that Sugihara's
IK-specific LM uses), with μ raised tenfold whenever a step does not reduce
the error (the step is then rejected) and lowered again after a successful one. An attempt stops
at convergence, after ``max_iterations``, or when it stalls (μ beyond ``MAX_DAMPING_SCALE``: a
local minimum of the error, also detected when the error has not halved over STALL_ITERATIONS
iterations); the next attempt restarts from a random configuration within the limits. When no
attempt succeeds, the best one is refined without the stall cut-off and returned: the closest
configuration found, with its remaining error.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import types

from kinodyn.ik.descent import CONVERGED, descend
from kinodyn.ik.limits import ConfigurationLimit, active_indices
from kinodyn.ik.tasks import FrameTask, TaskStack
from kinodyn.kernel import BOOL, FLOAT, INT, KF, KI, OUT1, OUT2, OUT3, Kernel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from kinodyn.model import Model

FloatArray = np.ndarray
METHODS = ("lm", "gn")
INITIAL_DAMPING_SCALE = 1e-2
"""μ at the start of an attempt and its floor: λ = μ |Δx|² + λ_min. Measured on 2 x 1000 random poses
of arm7 and the Panda: a random restart reaches the target 30-36 % of the time with 1e-2 against
25-32 % with 1e-1 (bolder first steps); smaller values gain nothing more, larger ones lose."""
MINIMUM_DAMPING = 1e-9
"""λ_min: keeps the LM normal matrix positive definite for redundant arms."""
MAX_DAMPING_SCALE = 1e8
"""An LM attempt whose μ exceeds this has stalled in a local minimum of the error."""
STALL_ITERATIONS = 5
STALL_RATIO = 0.5
"""An attempt whose cost has not fallen below STALL_RATIO times its value STALL_ITERATIONS
iterations earlier has stalled (a local minimum, typically against a joint limit): restart."""
PARAMETERS = np.array([INITIAL_DAMPING_SCALE, MINIMUM_DAMPING, MAX_DAMPING_SCALE, STALL_ITERATIONS,
                       STALL_RATIO])


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


_INDICES = types.Array(types.int64, 1, "C")
_TASKS = types.Tuple((_INDICES, _INDICES, _INDICES, OUT2, OUT3, OUT1, _INDICES))  # type: ignore[no-untyped-call]  # numba's types are unannotated; TaskStack.kernel_arrays
_DESCEND = Kernel(descend, KI, KF, BOOL, _TASKS, _INDICES, OUT1, OUT1, OUT1, FLOAT, FLOAT, BOOL, INT, BOOL,
                  OUT1, OUT1, OUT1)


class _Problem:
    """Tasks, active joints and limits of one solve, as the compiled attempt (``descend``) takes them."""

    def __init__(self, model: Model, tasks: Sequence[FrameTask], active_joints: Sequence[str] | None) -> None:
        self.model = model
        v_idx, self.q_idx = active_indices(model, active_joints)
        self.stack = TaskStack(model, tasks, columns=v_idx)
        self.limit = ConfigurationLimit(model, self.q_idx)
        self.lower, self.upper = self.limit.coordinate_bounds()
        self.joint_q = self.q_idx[self.q_idx >= 0]  # randomized on restarts (not the base)
        self.position_errors = np.empty(len(tasks))
        self.orientation_errors = np.empty(len(tasks))

    def descend(self, q: FloatArray, tolerances: tuple[float, float], method: str, max_iterations: int,
                stop_when_stalled: bool) -> _Attempt:
        """One attempt from q (a copy is iterated); see ``kinodyn.ik.descent.descend``."""
        q = q.copy()
        ki, kf = self.model.kernel_data
        status, iterations, cost = _DESCEND.call(
            ki, kf, self.model.floating_base, self.stack.kernel_arrays, self.q_idx, self.lower, self.upper, q,
            tolerances[0], tolerances[1], method == "gn", max_iterations, stop_when_stalled, PARAMETERS,
            self.position_errors, self.orientation_errors)
        return _Attempt(q, status == CONVERGED, iterations, cost, float(self.position_errors.max()),
                        float(self.orientation_errors.max()))


class _Attempt(NamedTuple):
    q: FloatArray
    converged: bool
    iterations: int
    cost: float
    position_error: float
    orientation_error: float


def _default_seed(model: Model) -> FloatArray:
    """Mid-range of the finite joint limits (TRAC-IK's default seed), neutral elsewhere."""
    q = model.neutral()
    finite = np.isfinite(model.lower_limit) & np.isfinite(model.upper_limit)
    q[finite] = 0.5 * (model.lower_limit[finite] + model.upper_limit[finite])
    return q


def _check_options(position_tolerance: float, orientation_tolerance: float, max_iterations: int,
                   restarts: int, timeout: float | None) -> None:
    """One ``ValueError`` line naming the first option out of range."""
    for name, value in zip(("position_tolerance", "orientation_tolerance"),
                           (position_tolerance, orientation_tolerance), strict=True):
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"{name} must be a positive finite number, got {value}")
    if max_iterations < 1 or restarts < 0:
        raise ValueError(f"need max_iterations >= 1 and restarts >= 0, got {max_iterations}, {restarts}")
    if timeout is not None and not timeout >= 0.0:
        raise ValueError(f"timeout must be None or a number of seconds >= 0, got {timeout}")


def _checked_seed(model: Model, q_seed: ArrayLike) -> FloatArray:
    q = model.check_q(q_seed)
    if not np.all(np.isfinite(q)):
        raise ValueError(f"q_seed must be finite, got {q.tolist()}")
    return q


def solve_ik(model: Model, frame: str | int | Sequence[FrameTask], target: ArrayLike | None = None,  # noqa: PLR0913  (the solver's options, keyword-only)
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
    ``method``: "lm" (Levenberg-Marquardt, default) or "gn" (Gauss-Newton, Robot Dynamics lecture notes (ETH),
    Algorithm 1). Tolerances: per task, in m and rad. ``max_iterations``: per attempt; ``restarts``: random
    restarts after the first attempt; ``timeout``: wall-clock seconds for the whole solve, checked
    before each attempt (an attempt started in time runs to its end: at most ``max_iterations``
    iterations). A seed outside the limits starts from its projection into them.
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
    _check_options(position_tolerance, orientation_tolerance, max_iterations, restarts, timeout)
    max_iterations = int(max_iterations)
    problem = _Problem(model, tasks, active_joints)
    q = problem.limit.project(_default_seed(model) if q_seed is None else _checked_seed(model, q_seed))
    generator: np.random.Generator | None = None  # made at the first restart (seeding one costs ~30 us)
    deadline = np.inf if timeout is None else time.perf_counter() + timeout
    tolerances = (float(position_tolerance), float(orientation_tolerance))
    best: _Attempt | None = None
    iterations = 0
    attempts = 0
    timed_out = False
    for attempt in range(restarts + 1):
        if time.perf_counter() >= deadline:
            timed_out = True
            break
        if attempt > 0:
            generator = generator or np.random.default_rng(0 if rng is None else rng)
            q[problem.joint_q] = model.random_configuration(generator)[problem.joint_q]
        result = problem.descend(q, tolerances, method, max_iterations, stop_when_stalled=True)
        iterations += result.iterations
        attempts += 1
        if best is None or result.converged or result.cost < best.cost:
            best = result
        if result.converged:
            break
    if best is None:  # timed out before the first attempt
        best = problem.descend(q, tolerances, method, 0, stop_when_stalled=True)
    elif not best.converged and not timed_out:
        timed_out = time.perf_counter() >= deadline
        if not timed_out:
            # No attempt reached the target: refine the closest one to its local minimum (no stall cut-off).
            best = problem.descend(best.q, tolerances, method, max_iterations, stop_when_stalled=False)
            iterations += best.iterations
    status = "converged" if best.converged else ("timeout" if timed_out else "max_iterations")
    return IKResult(best.q, best.converged, best.position_error, best.orientation_error, iterations,
                    max(attempts - 1, 0), status)
