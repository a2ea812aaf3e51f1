"""Centre-of-mass task: the CoM position, all three world axes or a masked subset.

Seed 000 §3.9 (3.80), (3.89) and §3.10 (3.110) with the CoM Jacobian: ``cdd = J_com qdd + Jdot_com v``;
seed 003 §3.7 (95) (the CoM acceleration is what the contact forces change).
``e = c_ref - c``, ``b = a_ref + kp e + kd (v_ref - J_com v) - Jdot_com v``, masked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kinodyn.control._inputs import selection
from kinodyn.control.evaluation import Evaluation
from kinodyn.control.wbc.tasks._motion import optional_vector, pd_acceleration
from kinodyn.control.wbc.tasks.base import MotionTask, gain
from kinodyn.spatial.rotations import as_vector


class ComTask(MotionTask):
    """Track a reference CoM position (world). ``kp``, ``kd``, ``weight``: a scalar or 3 values over
    ``[x y z]``; ``mask``: 3 booleans selecting the rows."""

    def __init__(self, kp: Any, kd: Any, weight: Any = 1.0, mask: Any = (True, True, True),
                 name: str = "com") -> None:
        self.mask = selection(mask, 3, f"task {name!r} mask")
        super().__init__(name, int(self.mask.sum()), gain(weight, 3, f"task {name!r} weight")[self.mask])
        self.kp = gain(kp, 3, f"task {name!r} kp")
        self.kd = gain(kd, 3, f"task {name!r} kd")
        self.position: np.ndarray | None = None
        self.velocity = np.zeros(3)
        self.acceleration = np.zeros(3)

    def set_reference(self, position: Any, velocity: Any = None, acceleration: Any = None) -> None:
        """Reference CoM position, velocity and acceleration, world (``None``: zero)."""
        position = as_vector(position, 3, f"task {self.name!r} reference CoM position")
        velocity = optional_vector(velocity, 3, f"task {self.name!r} reference CoM velocity")
        acceleration = optional_vector(acceleration, 3, f"task {self.name!r} reference CoM acceleration")
        self.position, self.velocity, self.acceleration = position, velocity, acceleration

    def qdd_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        if self.position is None:
            raise RuntimeError(f"task {self.name!r} has no reference: call set_reference(position) first")
        e = self.position - ev.com
        J = ev.com_jacobian
        desired = pd_acceleration(self.acceleration, self.kp, e, self.kd, self.velocity, J @ ev.v)
        self.error = e[self.mask]
        return J[self.mask], desired[self.mask] - ev.com_bias_acceleration[self.mask]
