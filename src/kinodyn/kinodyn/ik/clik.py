"""Closed-loop inverse kinematics (CLIK): tracking of position and orientation trajectories.

Robot Dynamics lecture notes (ETH), §2.9.4, (2.240)-(2.242): ``q̇* = J^+(q_t) (ẋ*(t) + k_p Δx_t)`` with the
position error ``Δr = r*(t) - r(q_t)`` and the relative-rotation error ``Δφ = log(C*(t) C(q_t)^T)`` (no
analytical Jacobian needed). Several tasks are stacked with equal priority (2.201); ``damping > 0`` uses the
damped least-squares inverse (2.195, corrected sign) instead of the pseudo-inverse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from kinodyn.ik.differential import damped_pseudo_inverse, pseudo_inverse
from kinodyn.ik.limits import active_indices
from kinodyn.ik.tasks import FrameTask, TaskEvaluation, TaskStack

if TYPE_CHECKING:
    from kinodyn.model import Model

FloatArray = np.ndarray
Reference = Callable[[float], tuple[Sequence[ArrayLike], Sequence[ArrayLike]]]
"""``t -> (targets, twists)``: per task the desired pose (4x4) and twist ``[v; w]`` (world axes)."""


class ClosedLoopIK:
    """``q̇ = J^+ (ẋ* + k_p Δx)`` for frame tasks whose targets move (Robot Dynamics lecture notes (ETH),
    (2.241)-(2.242)).

    ``active_joints``: names of the joints CLIK may move (default: every degree of freedom, the floating
    base's included); the others get zero velocity, e.g. the joints alone with the base held where it is.
    """

    def __init__(self, model: Model, tasks: Sequence[FrameTask], gain: float, damping: float = 0.0,
                 active_joints: Sequence[str] | None = None) -> None:
        if gain < 0.0 or damping < 0.0:
            raise ValueError(f"gain and damping must be non-negative, got {gain}, {damping}")
        self.model = model
        self.tasks = list(tasks)
        self.columns = active_indices(model, active_joints)[0]
        self.stack = TaskStack(model, self.tasks, columns=self.columns, weighted=False)
        self.gain = gain
        self.damping = damping

    def velocity(self, q: ArrayLike, targets: Sequence[ArrayLike], twists: Sequence[ArrayLike]) -> FloatArray:
        """Joint velocity (nv,) at q for the tasks' current targets and desired twists ``[v; w]``."""
        return self._command(self.model.check_q(q), targets, twists)[0]

    def _command(self, q: FloatArray, targets: Sequence[ArrayLike], twists: Sequence[ArrayLike]
                 ) -> tuple[FloatArray, TaskEvaluation]:
        if len(targets) != len(self.tasks) or len(twists) != len(self.tasks):
            raise ValueError(f"need one target and one twist per task ({len(self.tasks)}), "
                             f"got {len(targets)} and {len(twists)}")
        for task, target in zip(self.tasks, targets, strict=True):
            task.set_target(target)
        self.stack.refresh_targets()
        ev = self.stack.evaluate(q)
        feedforward = np.concatenate([np.asarray(twist, dtype=float).reshape(6)[task.rows]
                                      for task, twist in zip(self.tasks, twists, strict=True)])
        inverse = damped_pseudo_inverse(ev.jacobian, self.damping) if self.damping > 0.0 \
            else pseudo_inverse(ev.jacobian)
        qdot = np.zeros(self.model.nv)
        qdot[self.columns] = inverse @ (feedforward + self.gain * ev.error)
        return qdot, ev

    def track(self, q0: ArrayLike, reference: Reference, dt: float, steps: int
              ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Integrate ``q_{k+1} = q_k ⊕ q̇_k dt`` (explicit Euler) along ``reference``.

        Returns the configurations (steps+1, nq) and the largest position (m) and orientation (rad)
        tracking error over the tasks at each of them (steps+1,).
        """
        q = self.model.check_q(q0).copy()
        configurations = [q]
        position_errors, orientation_errors = [], []
        for k in range(steps + 1):
            targets, twists = reference(k * dt)
            qdot, ev = self._command(q, targets, twists)
            position_errors.append(float(np.max(ev.position_errors)))
            orientation_errors.append(float(np.max(ev.orientation_errors)))
            if k < steps:
                q = self.model.integrate(q, qdot, dt)
                configurations.append(q)
        return np.array(configurations), np.array(position_errors), np.array(orientation_errors)
