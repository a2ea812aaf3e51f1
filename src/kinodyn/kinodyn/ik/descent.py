"""One IK attempt, compiled: Levenberg-Marquardt (or Gauss-Newton) iterations under hard joint limits.

Robot Dynamics lecture notes (ETH), §2.9.3, Algorithm 1 and (2.235)-(2.237): ``q <- q + J^+ Δx`` with the
geometric Jacobian and ``Δφ = log(C* C^T)``; Rotations and inverse kinematics (Fredriksson), §3.7, (81)-(84),
the same Gauss-Newton iteration, and §3.8.1, (89)-(90): the full step can overshoot, damp it
(Levenberg-Marquardt), i.e. the damped least-squares step of Robot Dynamics lecture notes (ETH), (2.195), sign
corrected (Robot Dynamics Essential, (36)). Each step minimizes ``|J δ - Δx|² + λ |δ|²`` (weighted rows)
subject to ``lower <= q + δ <= upper`` (``kinodyn.ik.qp``), so every iterate is within the limits. Normal
equations and their Cholesky factor are formed in place (7 joints: a few µs per iteration with the FK and
Jacobian kernels).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn.ik.qp import box_qp
from kinodyn.ik.tasks import TaskArrays, evaluate_tasks
from kinodyn.kinematics.configuration import integrate_kernel
from kinodyn.linalg import cholesky_solve

CONVERGED = 0
MAX_ITERATIONS = 1
STALLED = 2


@njit(cache=True)
def _evaluate(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, tasks: TaskArrays, error: np.ndarray,
              jacobian: np.ndarray, position_errors: np.ndarray, orientation_errors: np.ndarray) -> float:
    """Weighted errors and Jacobian of the task stack at q; returns the cost ``|W^{1/2} Δx|²``."""
    frames, row_start, row_stop, target_position, target_rotation, sqrt_weights, columns = tasks
    evaluate_tasks(ki, kf, q, frames, row_start, row_stop, target_position, target_rotation, sqrt_weights,
                   columns, error, jacobian, position_errors, orientation_errors)
    return float(error @ error)


@njit(cache=True)
def _converged(position_errors: np.ndarray, orientation_errors: np.ndarray, position_tolerance: float,
               orientation_tolerance: float) -> bool:
    return bool(np.all(position_errors < position_tolerance)
                and np.all(orientation_errors < orientation_tolerance))


@njit(cache=True)
def _normal_equations(jacobian: np.ndarray, error: np.ndarray, damping: float, H: np.ndarray, A: np.ndarray,
                      g: np.ndarray, step: np.ndarray) -> None:
    """``H = A = J^T J + λ I`` (A's lower triangle, for the Cholesky factor), ``g = step = J^T Δx``."""
    rows, n = jacobian.shape
    for i in range(n):
        s = 0.0
        for r in range(rows):
            s += jacobian[r, i] * error[r]
        g[i] = s
        step[i] = s
        for k in range(i + 1):
            h = 0.0
            for r in range(rows):
                h += jacobian[r, i] * jacobian[r, k]
            H[i, k] = h
            H[k, i] = h
            A[i, k] = h
        H[i, i] += damping
        A[i, i] += damping


@njit(cache=True)
def _step_bounds(q_index: np.ndarray, lower: np.ndarray, upper: np.ndarray, q: np.ndarray, step: np.ndarray,
                 step_lower: np.ndarray, step_upper: np.ndarray) -> bool:
    """The bounds of the step that keep ``q + step`` within the limits; returns whether ``step`` is within."""
    inside = True
    for i in range(step.shape[0]):
        if q_index[i] >= 0:
            step_lower[i] = lower[i] - q[q_index[i]]
            step_upper[i] = upper[i] - q[q_index[i]]
            inside = inside and step_lower[i] <= step[i] <= step_upper[i]
        else:
            step_lower[i], step_upper[i] = -np.inf, np.inf
    return inside


@njit(cache=True)
def descend(ki: np.ndarray, kf: np.ndarray, floating: bool, tasks: TaskArrays, q_index: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
            lower: np.ndarray, upper: np.ndarray, q: np.ndarray, position_tolerance: float,
            orientation_tolerance: float, gauss_newton: bool, max_iterations: int, stop_when_stalled: bool,
            params: np.ndarray, position_errors: np.ndarray, orientation_errors: np.ndarray
            ) -> tuple[int, int, float]:
    """Iterate from ``q`` (overwritten by the last accepted iterate); returns (status, iterations, cost).

    ``q_index``: q entry of each active coordinate (-1 for the free flyer's), ``lower``/``upper``:
    their limits (infinite for the free flyer). ``params``: damping scale at the start, minimum
    damping, damping scale at which the attempt has stalled, stall window, stall ratio.
    """
    columns = tasks[6]
    n = columns.shape[0]
    rows = tasks[5].shape[0]
    nv = ki[3]
    error, jacobian = np.empty(rows), np.empty((rows, n))
    trial_error, trial_jacobian = np.empty(rows), np.empty((rows, n))
    trial_position, trial_orientation = np.empty_like(position_errors), np.empty_like(orientation_errors)
    H, A, g, step, bounded = np.empty((n, n)), np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)
    step_lower, step_upper = np.empty(n), np.empty(n)
    velocity, trial = np.zeros(nv), np.empty_like(q)
    damping_scale, minimum_damping, max_damping_scale = params[0], params[1], params[2]
    window, stall_ratio = int(params[3]), params[4]
    history = np.empty(window + 1)
    cost = _evaluate(ki, kf, q, tasks, error, jacobian, position_errors, orientation_errors)
    initial_scale = damping_scale
    for iteration in range(max_iterations):
        if _converged(position_errors, orientation_errors, position_tolerance, orientation_tolerance):
            return CONVERGED, iteration, cost
        earlier = history[(iteration - window) % (window + 1)]
        if stop_when_stalled and iteration >= window and cost > stall_ratio * earlier:
            return STALLED, iteration, cost
        history[iteration % (window + 1)] = cost
        damping = minimum_damping if gauss_newton else damping_scale * cost + minimum_damping
        _normal_equations(jacobian, error, damping, H, A, g, step)
        cholesky_solve(A, step, n)
        if not _step_bounds(q_index, lower, upper, q, step, step_lower, step_upper):
            box_qp(H, g, step_lower, step_upper, step, bounded)
            step[:] = bounded
        for i in range(n):
            velocity[columns[i]] = step[i]
        integrate_kernel(q, velocity, 1.0, floating, trial)
        for i in range(n):  # remove the rounding of q + (upper - q)
            if q_index[i] >= 0:
                trial[q_index[i]] = min(max(trial[q_index[i]], lower[i]), upper[i])
        trial_cost = _evaluate(ki, kf, trial, tasks, trial_error, trial_jacobian, trial_position,
                               trial_orientation)
        if gauss_newton or trial_cost < cost:
            q[:] = trial
            cost = trial_cost
            error, trial_error = trial_error, error
            jacobian, trial_jacobian = trial_jacobian, jacobian
            position_errors[:] = trial_position
            orientation_errors[:] = trial_orientation
            damping_scale = max(damping_scale / 10.0, initial_scale)
        else:
            damping_scale *= 10.0
            if damping_scale > max_damping_scale:
                return STALLED, iteration + 1, cost
    if _converged(position_errors, orientation_errors, position_tolerance, orientation_tolerance):
        return CONVERGED, max_iterations, cost
    return MAX_ITERATIONS, max_iterations, cost
