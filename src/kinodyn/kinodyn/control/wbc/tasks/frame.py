"""Frame pose task: position and orientation of one frame, all six axes or a masked subset.

Seed 000 §3.9 (3.80), (3.89)-(3.91) and §3.10 (3.110). Rows are over ``[x y z rx ry rz]`` in world axes
(the evaluation's ``local_world_aligned`` Jacobian: origin velocity and angular velocity). The error is
``e = [p_ref - p; log(C_ref C^T)]``: the orientation part is the exact rotation vector (world axes) taking
the frame to its reference (the compiled log of ``kinodyn.ik.tasks.rotation_error``, the branches of
``kinodyn.spatial.so3_log``), of which (3.91)'s ``E_R (chi_R* - chi_R)`` is the small-error approximation.
``b = a_ref + kp e + kd (v_ref - J v) - Jdot v``, masked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kinodyn.control._inputs import selection
from kinodyn.control.evaluation import Evaluation
from kinodyn.control.wbc.layout import VariableLayout
from kinodyn.control.wbc.tasks._motion import motion_rows, optional_vector, pd_acceleration
from kinodyn.control.wbc.tasks.base import Task, TaskRows, gain
from kinodyn.ik.tasks import rotation_error
from kinodyn.model import Model
from kinodyn.spatial import homogeneous_transform

ALL_AXES = (True,) * 6


def as_pose(pose: Any) -> np.ndarray:
    """``pose`` as a 4x4 homogeneous transform; ``ValueError`` saying what is wrong otherwise."""
    T = np.asarray(pose, dtype=float)
    if T.shape != (4, 4):
        raise ValueError(f"a pose must be a 4x4 homogeneous transform, got shape {T.shape}")
    if not np.array_equal(T[3], [0.0, 0.0, 0.0, 1.0]):
        raise ValueError(f"the last row of a pose must be [0, 0, 0, 1], got {T[3].tolist()}")
    return homogeneous_transform(T[:3, :3], T[:3, 3])


class FrameTask(Task):
    """Track a reference pose of ``frame``. ``kp``, ``kd``, ``weight``: a scalar or 6 values over
    ``[x y z rx ry rz]``; ``mask``: 6 booleans selecting the rows (world axes)."""

    def __init__(self, model: Model, frame: str, kp: Any, kd: Any, weight: Any = 1.0,
                 mask: Any = ALL_AXES, name: str | None = None) -> None:
        self.frame = model.frame_names[model.frame_id(frame)]
        self.frames = (self.frame,)
        label = name if name is not None else self.frame
        self.mask = selection(mask, 6, f"task {label!r} mask")
        super().__init__(label, int(self.mask.sum()), gain(weight, 6, f"task {label!r} weight")[self.mask])
        self.kp = gain(kp, 6, f"task {label!r} kp")
        self.kd = gain(kd, 6, f"task {label!r} kd")
        self.pose: np.ndarray | None = None
        self.twist = np.zeros(6)
        self.acceleration = np.zeros(6)

    def set_reference(self, pose: Any, twist: Any = None, acceleration: Any = None) -> None:
        """Reference pose (world <- frame), twist ``[v; w]`` and classical acceleration, world axes;
        ``None`` twist or acceleration means zero."""
        T = as_pose(pose)
        twist = optional_vector(twist, 6, f"task {self.name!r} reference twist")
        acceleration = optional_vector(acceleration, 6, f"task {self.name!r} reference acceleration")
        self.pose, self.twist, self.acceleration = T, twist, acceleration
        self._rotation = np.ascontiguousarray(T[:3, :3])

    def rows(self, ev: Evaluation, layout: VariableLayout) -> TaskRows:
        if self.pose is None:
            raise RuntimeError(f"task {self.name!r} has no reference: call set_reference(pose) first")
        T = ev.placement(self.frame)
        rotation = rotation_error(self._rotation, np.ascontiguousarray(T[:3, :3]))
        e = np.concatenate([self.pose[:3, 3] - T[:3, 3], rotation])
        J = ev.jacobian(self.frame)
        desired = pd_acceleration(self.acceleration, self.kp, e, self.kd, self.twist, J @ ev.v)
        self.error = e[self.mask]
        return motion_rows(layout, J[self.mask], ev.bias_acceleration(self.frame)[self.mask],
                           desired[self.mask])
