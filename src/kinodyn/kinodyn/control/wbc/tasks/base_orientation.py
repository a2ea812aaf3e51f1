"""Base orientation task: the angular rows of the floating base body's frame.

Robot Dynamics lecture notes (ETH) §3.9 (3.80), (3.89)-(3.91) and §3.10 (3.110): a ``FrameTask`` on the
base link's frame masked to
``[rx ry rz]`` (world axes), with an orientation-only reference. Error ``log(C_ref C_WB^T)``, world axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control._inputs import gain, selection
from kinodyn.control.wbc.tasks._motion import optional_vector
from kinodyn.control.wbc.tasks.base import MotionTask
from kinodyn.control.wbc.tasks.frame import FrameTask
from kinodyn.model import JOINT_FREEFLYER, Model
from kinodyn.spatial import homogeneous_transform, quat_to_matrix

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.evaluation import Evaluation


class BaseOrientationTask(MotionTask):
    """Track a reference orientation of the floating base. ``kp``, ``kd``, ``weight``: a scalar or 3 values
    over ``[rx ry rz]``; ``mask``: 3 booleans selecting those rows."""

    def __init__(self, model: Model, kp: ArrayLike, kd: ArrayLike, weight: ArrayLike = 1.0,
                 mask: ArrayLike = (True, True, True),
                 name: str = "base_orientation") -> None:
        if not model.floating_base:
            raise ValueError(f"task {name!r} needs a floating-base model; {model.name!r} has a fixed base "
                             "(use a FrameTask on a link instead)")
        root = int(np.flatnonzero(model.joint_type == JOINT_FREEFLYER)[0])
        angular = selection(mask, 3, f"task {name!r} mask")

        def pad(value: ArrayLike, what: str) -> np.ndarray:
            return np.concatenate([np.zeros(3), gain(value, 3, f"task {name!r} {what}")])

        self._frame_task = FrameTask(model, model.body_names[root], pad(kp, "kp"), pad(kd, "kd"),
                                     pad(weight, "weight"), np.concatenate([[False] * 3, angular]), name)
        super().__init__(name, self._frame_task.dim, self._frame_task.weight)
        self.frames = self._frame_task.frames

    def set_reference(self, orientation: ArrayLike, angular_velocity: ArrayLike | None = None,
                      angular_acceleration: ArrayLike | None = None) -> None:
        """Reference ``C_WB`` (3x3 rotation matrix or unit quaternion (x, y, z, w)), angular velocity and
        angular acceleration in world axes (``None``: zero)."""
        C = np.asarray(orientation, dtype=float)
        C = quat_to_matrix(C) if C.shape == (4,) else C
        w = optional_vector(angular_velocity, 3, f"task {self.name!r} reference angular velocity")
        dw = optional_vector(angular_acceleration, 3, f"task {self.name!r} reference angular acceleration")
        self._frame_task.set_reference(homogeneous_transform(C, np.zeros(3)), np.r_[np.zeros(3), w],
                                       np.r_[np.zeros(3), dw])

    def write_weighted_rows(self, ev: Evaluation, A: np.ndarray, b: np.ndarray) -> None:
        self.error = self._frame_task.weighted_rows_into(ev, A, b, self.weight)

    def qdd_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        rows = self._frame_task.qdd_rows(ev)
        self.error = self._frame_task.error
        return rows
