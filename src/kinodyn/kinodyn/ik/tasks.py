"""IK tasks: a frame's pose, position or orientation in the world, with its error and Jacobian.

The error is the notes' task-space error ``Δx = [r* - r; Δφ]`` (Robot Dynamics lecture notes (ETH),
§2.9.3-2.9.4, (2.236)-(2.240)): the position difference and the rotation vector ``Δφ = log(C* C^T)`` of the
relative rotation from the current to the desired orientation, both in world axes (Rotations
and inverse kinematics (Fredriksson), §3.8, (86), which calls ``-Δx`` the residual). Its Jacobian is the
frame's geometric Jacobian in ``local_world_aligned`` reference (velocity of the frame origin and angular
velocity, world axes), so ``Δx ≈ J δq`` to first order; the IK steps solve that linearization (Robot Dynamics
lecture notes (ETH), (2.237)).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from kinodyn.kinematics.forward import frame_placement_kernel
from kinodyn.kinematics.jacobians import LOCAL_WORLD_ALIGNED, frame_jacobian_kernel
from kinodyn.spatial.compiled import rotation_log
from kinodyn.urdf.numbers import MAX_MAGNITUDE as MAX_TARGET_MAGNITUDE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from kinodyn.model import Model

FloatArray = np.ndarray

TASK_KINDS = {"pose": slice(0, 6), "position": slice(0, 3), "orientation": slice(3, 6)}
TWIST_ROWS = 6  # a frame task's full error: position (rows 0-2), orientation (rows 3-5)
HOMOGENEOUS_TOLERANCE = 1e-9
"""Largest deviation of a target pose's bottom row from (0, 0, 0, 1)."""
ORTHONORMAL_TOLERANCE = 1e-6
"""Largest entry of ``C^T C - I`` of a target rotation."""
TaskArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                   np.ndarray]
"""``TaskStack.kernel_arrays``: frames, row start and stop, target positions and rotations, square roots of
the row weights, columns."""
"""Rows of ``[linear; angular]`` each kind of task constrains."""


@njit(cache=True)
def rotation_error(C_target: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``Δφ = log(C_target C^T)``: rotation vector, world axes, angle in [0, π] (Robot Dynamics lecture notes
    (ETH), (2.235)-(2.236)); the log is ``kinodyn.spatial.compiled.so3_log``."""
    return rotation_log(C_target @ C.T)


class FrameTask:
    """Bring ``frame`` to ``target``: its pose (4x4), position (3,) or orientation (3x3) in the world.

    ``kind`` is ``"pose"``, ``"position"`` or ``"orientation"``; a 4x4 target is accepted for
    every kind (only the constrained part is used). ``position_weight`` and
    ``orientation_weight`` scale the rows in the least-squares objective (Robot Dynamics lecture notes (ETH),
    (2.202)).
    """

    def __init__(self, model: Model, frame: str | int, target: ArrayLike, kind: str = "pose",
                 position_weight: float = 1.0, orientation_weight: float = 1.0) -> None:
        if kind not in TASK_KINDS:
            raise ValueError(f"task kind must be one of {sorted(TASK_KINDS)}, got {kind!r}")
        if not (position_weight > 0.0 and orientation_weight > 0.0):
            raise ValueError(f"task weights must be positive, got {position_weight}, {orientation_weight}")
        self.frame = model.frame_id(frame)
        self.frame_name = model.frame_names[self.frame]
        self.kind = kind
        self.rows = TASK_KINDS[kind]
        self.weights = np.array([position_weight] * 3 + [orientation_weight] * 3)[self.rows]
        self.constrains_position = kind in ("pose", "position")
        self.constrains_orientation = kind in ("pose", "orientation")
        self.set_target(target)

    def set_target(self, target: ArrayLike) -> None:
        """New target: 4x4 pose (any kind), 3-vector (position task) or 3x3 rotation (orientation task).

        Refused with one line naming the target: not numbers, a wrong shape, a non-finite entry, a
        4x4 pose whose bottom row is not (0, 0, 0, 1), a rotation that is not orthonormal.
        """
        try:
            target = np.asarray(target, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"target of the task on {self.frame_name!r} must be an array of numbers, "
                             f"got {target!r}") from None
        position, rotation = np.zeros(3), np.eye(3)
        if target.shape == (4, 4):
            position, rotation = target[:3, 3].copy(), target[:3, :3].copy()
        elif target.shape == (3,) and self.kind == "position":
            position = target.copy()
        elif target.shape == (3, 3) and self.kind == "orientation":
            rotation = target.copy()
        else:
            raise ValueError(f"target of a {self.kind!r} task on {self.frame_name!r} must be a 4x4 pose"
                             f"{', a (3,) position' if self.kind == 'position' else ''}"
                             f"{', a 3x3 rotation' if self.kind == 'orientation' else ''}, "
                             f"got shape {target.shape}")
        if not np.all(np.isfinite(target)):
            raise ValueError(f"target of the task on {self.frame_name!r} must be finite, got "
                             f"{target.ravel().tolist()}")
        if np.max(np.abs(target)) > MAX_TARGET_MAGNITUDE:
            raise ValueError(f"target of the task on {self.frame_name!r} has an entry of magnitude "
                             f"{np.max(np.abs(target)):.3g} > {MAX_TARGET_MAGNITUDE:g} (the bound on every "
                             "number of a URDF): no robot reaches it, and its squared error would overflow")
        bottom_row_error = np.max(np.abs(target[3] - (0.0, 0.0, 0.0, 1.0))) if target.shape == (4, 4) else 0.0
        if bottom_row_error > HOMOGENEOUS_TOLERANCE:
            raise ValueError(f"target pose of the task on {self.frame_name!r} is not homogeneous: its bottom "
                             f"row is {target[3].tolist()}, not (0, 0, 0, 1)")
        if (self.constrains_orientation
                and np.max(np.abs(rotation.T @ rotation - np.eye(3))) > ORTHONORMAL_TOLERANCE):
            raise ValueError(f"target rotation of the task on {self.frame_name!r} is not orthonormal "
                             "(max |C^T C - I| > 1e-6); re-orthonormalize it")
        self.target_position = position
        self.target_rotation = rotation

    def error(self, model: Model, q: ArrayLike) -> FloatArray:
        """``Δx = [r* - r; log(C* C^T)]`` restricted to the task's rows, at configuration q (unweighted)."""
        return TaskStack(model, [self], weighted=False).evaluate(model.check_q(q)).error

    def jacobian(self, model: Model, q: ArrayLike) -> FloatArray:
        """Rows of the frame's ``local_world_aligned`` Jacobian (rows x nv) that the task constrains."""
        return TaskStack(model, [self], weighted=False).evaluate(model.check_q(q)).jacobian


class TaskEvaluation(NamedTuple):
    """Stacked task errors and Jacobian at ``q``, and each task's position and orientation error norms."""

    q: FloatArray
    error: FloatArray
    jacobian: FloatArray
    position_errors: FloatArray
    orientation_errors: FloatArray


class TaskStack:
    """Frame tasks stacked: weighted errors ``W^{1/2} Δx``, Jacobian ``W^{1/2} J`` (Robot Dynamics lecture
    notes (ETH), (2.201)-(2.202)).

    ``columns``: velocity coordinates kept in the Jacobian (default all nv). One compiled call
    evaluates every task.
    """

    def __init__(self, model: Model, tasks: Sequence[FrameTask], columns: ArrayLike | None = None,
                 weighted: bool = True) -> None:
        if not tasks:
            raise ValueError("a task stack needs at least one FrameTask")
        self.model = model
        self.tasks = list(tasks)
        columns = np.arange(model.nv) if columns is None else columns
        self.columns = np.ascontiguousarray(columns, dtype=np.int64)
        self._frames = np.array([task.frame for task in tasks], dtype=np.int64)
        self._row_start = np.array([task.rows.start for task in tasks], dtype=np.int64)
        self._row_stop = np.array([task.rows.stop for task in tasks], dtype=np.int64)
        self.rows = int(np.sum(self._row_stop - self._row_start))
        weights = np.concatenate([task.weights for task in tasks])
        self._sqrt_weights = np.sqrt(weights) if weighted else np.ones(self.rows)
        self.refresh_targets()

    def refresh_targets(self) -> None:
        """Reread the tasks' targets (after ``FrameTask.set_target``)."""
        self._target_position = np.array([task.target_position for task in self.tasks])
        self._target_rotation = np.array([task.target_rotation for task in self.tasks])

    def evaluate(self, q: FloatArray) -> TaskEvaluation:
        """Errors and Jacobian at q (float64, shape (nq,); unchecked: this is the solver's inner loop)."""
        error = np.empty(self.rows)
        jacobian = np.empty((self.rows, self.columns.shape[0]))
        position_errors = np.empty(len(self.tasks))
        orientation_errors = np.empty(len(self.tasks))
        ki, kf = self.model.kernel_data
        evaluate_tasks(ki, kf, q, self._frames, self._row_start, self._row_stop, self._target_position,
                       self._target_rotation, self._sqrt_weights, self.columns, error, jacobian,
                       position_errors, orientation_errors)
        return TaskEvaluation(q, error, jacobian, position_errors, orientation_errors)

    @property
    def kernel_arrays(self) -> TaskArrays:
        """The stack as the arrays ``evaluate_tasks`` takes after ``(ki, kf, q)``."""
        return (self._frames, self._row_start, self._row_stop, self._target_position, self._target_rotation,
                self._sqrt_weights, self.columns)


@njit(cache=True)
def evaluate_tasks(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frames: np.ndarray, row_start: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                    row_stop: np.ndarray, target_position: np.ndarray, target_rotation: np.ndarray,
                    sqrt_weights: np.ndarray, columns: np.ndarray, error: np.ndarray, jacobian: np.ndarray,
                    position_errors: np.ndarray, orientation_errors: np.ndarray) -> None:
    """Stacked weighted errors and Jacobian columns of the frame tasks (FK and Jacobian kernels per task)."""
    T = np.empty((4, 4))
    J = np.empty((6, ki[3]))  # ki[3] = nv
    full = np.empty(6)
    row = 0
    for t in range(frames.shape[0]):
        frame_placement_kernel(ki, kf, q, frames[t], T)
        frame_jacobian_kernel(ki, kf, q, frames[t], LOCAL_WORLD_ALIGNED, J)
        for k in range(3):
            full[k] = target_position[t, k] - T[k, 3]
        full[3:] = rotation_error(target_rotation[t], np.ascontiguousarray(T[:3, :3]))
        for r in range(row_start[t], row_stop[t]):
            error[row] = sqrt_weights[row] * full[r]
            for c in range(columns.shape[0]):
                jacobian[row, c] = sqrt_weights[row] * J[r, columns[c]]
            row += 1
        constrained_position = row_start[t] == 0
        constrained_orientation = row_stop[t] == TWIST_ROWS
        position_norm = math.sqrt(full[0] ** 2 + full[1] ** 2 + full[2] ** 2)
        orientation_norm = math.sqrt(full[3] ** 2 + full[4] ** 2 + full[5] ** 2)
        position_errors[t] = position_norm if constrained_position else 0.0
        orientation_errors[t] = orientation_norm if constrained_orientation else 0.0
