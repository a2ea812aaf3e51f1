"""Centroidal momentum task: the rate of the centroidal momentum ``h = A_G v = [m v_com; h_G]``.

Robot Dynamics Essential §3.7 (95)-(96): ``hdot = A_G qdd + Adot_G v`` (about the CoM, world axes, linear
first), which
the contact forces alone change; rows ``A_G`` as a motion task of Robot Dynamics lecture notes (ETH) §3.10
(3.110).
``hdot_des = hdot_ref + kd (h_ref - A_G v)``. Momentum has no position to return to, except the linear
part: with ``kp > 0`` (3 values, world axes) and a reference CoM ``c_ref``, ``m kp (c_ref - c)`` is added
to the linear rows, which then equal ``m`` times a CoM task's PD law. ``error`` is ``h_ref - h``, masked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control._inputs import gain, selection
from kinodyn.control.wbc.tasks._motion import optional_vector
from kinodyn.control.wbc.tasks.base import MotionTask

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.evaluation import Evaluation


class CentroidalMomentumTask(MotionTask):
    """Track a reference centroidal momentum and its rate (default zero: damp the momentum).
    ``kd``, ``weight``: a scalar or 6 values over ``[linear; angular]``; ``mask``: 6 booleans;
    ``kp``: a scalar or 3 values, the CoM stiffness of the linear rows (needs ``set_reference(com=...)``)."""

    def __init__(self, kd: ArrayLike, weight: ArrayLike = 1.0, mask: ArrayLike = (True,) * 6,
                 kp: ArrayLike = 0.0,
                 name: str = "centroidal_momentum") -> None:
        self.mask = selection(mask, 6, f"task {name!r} mask")
        super().__init__(name, int(self.mask.sum()), gain(weight, 6, f"task {name!r} weight")[self.mask])
        self.kd = gain(kd, 6, f"task {name!r} kd")
        self.kp = gain(kp, 3, f"task {name!r} kp")
        self.momentum = np.zeros(6)
        self.rate = np.zeros(6)
        self.com: np.ndarray | None = None

    def set_reference(self, momentum: ArrayLike | None = None, rate: ArrayLike | None = None,
                      com: ArrayLike | None = None) -> None:
        """Reference momentum ``[m v_com; h_G]``, its rate (``None``: zero) and the CoM position that
        ``kp`` pulls towards (``None``: none; then ``kp`` must be zero)."""
        momentum = optional_vector(momentum, 6, f"task {self.name!r} reference momentum")
        rate = optional_vector(rate, 6, f"task {self.name!r} reference momentum rate")
        com = None if com is None else optional_vector(com, 3, f"task {self.name!r} reference CoM")
        self.momentum, self.rate, self.com = momentum, rate, com

    def qdd_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        A_G = ev.centroidal_matrix
        e = self.momentum - A_G @ ev.v
        desired = self.rate + self.kd * e
        if self.com is not None:
            desired[:3] += ev.total_mass * self.kp * (self.com - ev.com)
        elif np.any(self.kp > 0.0):
            raise RuntimeError(f"task {self.name!r} has kp > 0 but no reference CoM: "
                               "call set_reference(com=...) or set kp to 0")
        self.error = e[self.mask]
        return A_G[self.mask], desired[self.mask] - ev.centroidal_bias[self.mask]
