"""Frame pose task: position and orientation of one frame, all six axes or a masked subset.

Robot Dynamics lecture notes (ETH) §3.9 (3.80), (3.89)-(3.91) and §3.10 (3.110). Rows are over ``[x y z rx
ry rz]`` in world axes
(the evaluation's ``local_world_aligned`` Jacobian: origin velocity and angular velocity). The error is
``e = [p_ref - p; log(C_ref C^T)]``: the orientation part is the exact rotation vector (world axes) taking
the frame to its reference (the compiled log of ``kinodyn.ik.tasks.rotation_error``, the branches of
``kinodyn.spatial.so3_log``), of which (3.91)'s ``E_R (chi_R* - chi_R)`` is the small-error approximation.
``b = a_ref + kp e + kd (v_ref - J v) - Jdot v``, masked.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.control._inputs import as_pose
from kinodyn.control.wbc import numpy_blas
from kinodyn.control.wbc.tasks._motion import (
    AXES,
    motion_rows,
    optional_vector,
    pd_acceleration,
)
from kinodyn.control.wbc.tasks.base import MaskedMotionTask
from kinodyn.ik.tasks import rotation_error
from kinodyn.kernel import BOOL, IN1, IN2, OUT1, OUT2, Kernel
from kinodyn.spatial.compiled import rotation_log
from kinodyn.spatial.rotations import as_rotation_matrix, as_vector

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.evaluation import Evaluation
    from kinodyn.model import Model

ALL_AXES = (True,) * 6


class FrameTask(MaskedMotionTask):
    """Track a reference pose of ``frame``. ``kp``, ``kd``, ``weight``: a scalar or 6 values over
    ``[x y z rx ry rz]``; ``mask``: 6 booleans selecting the rows (world axes)."""

    def __init__(self, model: Model, frame: str, kp: ArrayLike, kd: ArrayLike, weight: ArrayLike = 1.0,
                 mask: ArrayLike = ALL_AXES, name: str | None = None) -> None:
        self.frame = model.frame_names[model.frame_id(frame)]
        self.frames = (self.frame,)
        label = name if name is not None else self.frame
        super().__init__(label, 6, mask, kp, kd, weight)
        self._frames: tuple[str, ...] = ()  # the frames of the last evaluation seen, and this frame's row
        self._row = -1
        self._angular = bool(self.mask[3:].any())  # the orientation error is needed
        self.pose: np.ndarray | None = None
        self.twist = np.zeros(6)
        self.acceleration = np.zeros(6)
        # (written in place by the unchecked setters, ``_owned``)
        self._own = (np.zeros((4, 4)), np.zeros(6), np.zeros(6), np.zeros((3, 3)))

    def set_reference(self, pose: ArrayLike, twist: ArrayLike | None = None,
                      acceleration: ArrayLike | None = None) -> None:
        """Reference pose (world <- frame), twist ``[v; w]`` and classical acceleration, world axes;
        ``None`` twist or acceleration means zero."""
        T = as_pose(pose, "a pose")
        twist = optional_vector(twist, 6, f"task {self.name!r} reference twist")
        acceleration = optional_vector(acceleration, 6, f"task {self.name!r} reference acceleration")
        self.pose, self.twist, self.acceleration = T, twist, acceleration
        self._rotation = np.ascontiguousarray(T[:3, :3])

    def set_position_reference(self, position: ArrayLike, velocity: ArrayLike, acceleration: ArrayLike, *,
                               checked: bool = True) -> None:
        """The translational half of ``set_reference`` (3 values each, world), the rest kept: cheaper, for
        a trajectory sampled every tick. Needs a reference set before. ``checked=False``: a trusted caller
        (the locomotion controller) guarantees 3 finite numbers each; they are written without the checks
        into arrays the task owns, in place (``_owned``: the same values)."""
        if not checked:
            pose, twist, accel, _ = self._owned()
            pose[:3, 3], twist[:3], accel[:3] = position, velocity, acceleration
            return
        position = as_vector(position, 3, f"task {self.name!r} reference position")
        self._set_rates(0, velocity, acceleration, "linear")
        assert self.pose is not None  # _set_rates refuses a task without a reference
        pose = self.pose.copy()
        pose[:3, 3] = position
        self.pose = pose

    def set_orientation_reference(self, rotation: ArrayLike, angular_velocity: ArrayLike,
                                  angular_acceleration: ArrayLike, *, known_rotation: bool = False,
                                  checked: bool = True) -> None:
        """The rotational half of ``set_reference``: ``rotation`` (3x3, world <- frame), angular velocity and
        acceleration (3 each, world), the rest kept. Needs a reference set before. ``known_rotation``: the
        caller built ``rotation`` as a product of elementary rotations (a float 3x3 array), so the check that
        it is orthonormal with determinant 1 is skipped (a tick's cost); the rates are checked unless
        ``checked=False``: a trusted caller guarantees a rotation (as for ``known_rotation``) and 3 finite
        numbers each, written without the checks into arrays the task owns, in place (``_owned``)."""
        if not checked:
            pose, twist, accel, rotation_own = self._owned()
            pose[:3, :3], twist[3:], accel[3:] = rotation, angular_velocity, angular_acceleration
            rotation_own[:] = rotation
            self._rotation = rotation_own
            return
        C = rotation if known_rotation else as_rotation_matrix(rotation)
        self._set_rates(3, angular_velocity, angular_acceleration, "angular")
        assert self.pose is not None
        pose = self.pose.copy()
        pose[:3, :3] = C
        self.pose, self._rotation = pose, np.ascontiguousarray(C)

    def _owned(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The task's own pose, twist, acceleration and rotation arrays, made the reference (the current
        one copied in when a checked setter replaced it): the unchecked setters write into them in place,
        never into an array a caller passed."""
        if self.pose is None:
            raise RuntimeError(f"task {self.name!r} has no reference: call set_reference(pose) first")
        own = self._own
        pose, twist, accel, rotation = own
        if self.pose is not pose:
            pose[:] = self.pose
            rotation[:] = self._rotation
            self.pose, self._rotation = pose, rotation
        if self.twist is not twist:
            twist[:] = self.twist
            self.twist = twist
        if self.acceleration is not accel:
            accel[:] = self.acceleration
            self.acceleration = accel
        return own

    def _set_rates(self, start: int, velocity: ArrayLike, acceleration: ArrayLike, what: str) -> None:
        """Entries ``start:start+3`` of the reference twist and acceleration, checked first."""
        if self.pose is None:
            raise RuntimeError(f"task {self.name!r} has no reference: call set_reference(pose) first")
        try:
            rates = np.array([velocity, acceleration], dtype=float)
        except (TypeError, ValueError):  # (sequences of different lengths, not numbers)
            rates = np.full(1, np.nan)
        if rates.shape != (2, 3) or not np.isfinite(rates).all():
            raise ValueError(f"task {self.name!r} reference {what} velocity and acceleration must be 3 "
                             f"finite numbers each, got {velocity!r} and {acceleration!r}")
        twist, accel = self.twist.copy(), self.acceleration.copy()
        twist[start:start + 3], accel[start:start + 3] = rates
        self.twist, self.acceleration = twist, accel

    def _pose_error(self, ev: Evaluation) -> tuple[int, np.ndarray]:
        """The frame's row in ``ev`` and the 6-D error ``[p_ref - p; log(C_ref C^T)]`` (module doc)."""
        if self.pose is None:
            raise RuntimeError(f"task {self.name!r} has no reference: call set_reference(pose) first")
        if ev.frames is not self._frames:  # (one Evaluator's evaluations share their frames)
            self._frames, self._row = ev.frames, ev.frame_index(self.frame)
        k = self._row
        T = ev.placements[k]
        e = np.zeros(6)
        e[:3] = self.pose[:3, 3] - T[:3, 3]
        if self._angular:  # (position-only tasks skip the log: its rows are not selected)
            e[3:] = rotation_error(self._rotation, np.ascontiguousarray(T[:3, :3]))
        return k, e

    def update_error(self, ev: Evaluation) -> None:
        self.error = self._pose_error(ev)[1][self._select]

    def write_weighted_rows(self, ev: Evaluation, A: np.ndarray, b: np.ndarray) -> None:
        self.error = self.weighted_rows_into(ev, A, b, self.weight)

    def weighted_rows_into(self, ev: Evaluation, A: np.ndarray, b: np.ndarray, weight: np.ndarray
                           ) -> np.ndarray:
        """``qdd_rows`` scaled by ``sqrt(weight)`` into ``A``, ``b`` in one compiled pass after the products
        (``_motion.motion_rows``); returns the selected error."""
        if self.pose is None:
            raise RuntimeError(f"task {self.name!r} has no reference: call set_reference(pose) first")
        if ev.frames is not self._frames:
            self._frames, self._row = ev.frames, ev.frame_index(self.frame)
        k = self._row
        error = np.empty(self.dim)
        _FRAME_ROWS.call(self.pose, self._rotation, ev.placements[k], self._angular, ev.jacobians[k], ev.v,
                         self._axes, self.acceleration, self.kp, self.kd, self.twist,
                         ev.bias_accelerations[k], weight, A, b, error)
        return error

    def qdd_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        k, e = self._pose_error(ev)
        rows = self._select
        J = ev.jacobians[k][rows]
        desired = pd_acceleration(self.acceleration[rows], self.kp[rows], e[rows], self.kd[rows],
                                  self.twist[rows], J @ ev.v)
        self.error = e[rows]
        return J, desired - ev.bias_accelerations[k][rows]


@njit(cache=True)
def frame_rows(pose: np.ndarray, rotation: np.ndarray, T: np.ndarray, angular: bool, J: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
               v: np.ndarray, axes: np.ndarray, a_ref: np.ndarray, kp: np.ndarray, kd: np.ndarray,
               v_ref: np.ndarray, bias: np.ndarray, weight: np.ndarray, A: np.ndarray, b: np.ndarray,
               selected_error: np.ndarray) -> None:
    """``FrameTask.weighted_rows_into`` in one pass: the error of ``_pose_error`` (``p_ref - p``; with
    ``angular``, ``rotation_log(C_ref C^T)`` with numpy's product, ``numpy_blas``) and ``motion_rows``."""
    error = np.zeros(6)
    for i in range(3):
        error[i] = pose[i, 3] - T[i, 3]
    if angular:
        C, product = np.empty((3, 3)), np.empty((3, 3))
        for i in range(3):
            for j in range(3):
                C[i, j] = T[i, j]
        numpy_blas.matmat(rotation, C.T, product)
        error[3:] = rotation_log(product)
    motion_rows(J, v, axes, a_ref, kp, error, kd, v_ref, bias, weight, A, b, selected_error, math.inf,
                math.inf)


_FRAME_ROWS = Kernel(frame_rows, IN2, IN2, IN2, BOOL, IN2, IN1, AXES, IN1, IN1, IN1, IN1, IN1, IN1, OUT2,
                     OUT1, OUT1)
