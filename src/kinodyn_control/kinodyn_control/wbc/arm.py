"""The `wbc` node's arm mode: operational space control of one frame towards a target pose, with a joint
posture in the null space (fixed-base models; docs/nodes/wbc.md).

Each tick (Robot Dynamics lecture notes (ETH) §3.9, Robot Dynamics Essential §3.6.4;
kinodyn.control.task_space):

- ``wdot* = kp e - kd J v`` (3.90) with ``e = pose_error(target, frame)`` (position and the exact rotation
  vector), gains per axis group (position, orientation);
- ``tau0 = M (posture_kp (q_posture - q) - posture_kd v) + h``: computed torque towards the posture
  (``computed_torque``, (3.75)-(3.77)). It carries the whole of ``h``, so the null-space projection of the
  task law ``tau = J^T (Lambda wdot* + mu + p) + (I - J^T Jbar^T) tau0`` (3.89) compensates gravity and
  Coriolis in every direction: ``qdd = M^-1 J^T Lambda (wdot* - Jdot v) + M^-1 N^T M qdd0`` and
  ``J qdd + Jdot v = wdot*`` exactly on the model;
- the command is pure torque (``kp = kd = 0`` in the JointPDCommand), so the joint-level PD does not fight
  the task law.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from kinodyn.control import Evaluator, computed_torque, operational_space_control, pose_error
from kinodyn.control.task_space import RCOND

from kinodyn_control.wbc.command import JointCommand, TickResult

if TYPE_CHECKING:
    from kinodyn import Model

TWO_PI = 2.0 * math.pi


def _critical(hz: float) -> tuple[float, float]:
    """``(kp, kd)`` of a unit mass at ``hz`` with critical damping (Robot Dynamics lecture notes (ETH)
    (3.78)-(3.79))."""
    omega = TWO_PI * hz
    return omega * omega, 2.0 * omega


TASK_KP, TASK_KD = _critical(5.0)
POSTURE_KP, POSTURE_KD = _critical(1.0)


@dataclass(frozen=True)
class ArmParameters:
    """The arm mode's ROS parameters, same names (docs/nodes/wbc.md lists them with their units)."""

    frame: str = "ee_link"
    position_kp: float = TASK_KP
    position_kd: float = TASK_KD
    orientation_kp: float = TASK_KP
    orientation_kd: float = TASK_KD
    track_orientation: bool = True
    posture_kp: float = POSTURE_KP
    posture_kd: float = POSTURE_KD
    posture: tuple[float, ...] = field(default=())  # empty: the joint positions of the first joint state
    rcond: float = RCOND

    def __post_init__(self) -> None:
        if not self.frame:
            raise ValueError("parameter frame must name the URDF frame to control (e.g. 'ee_link')")
        for name in ("position_kp", "position_kd", "orientation_kp", "orientation_kd", "posture_kp",
                     "posture_kd"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"parameter {name} must be a finite number >= 0, got {value}")
        object.__setattr__(self, "posture", tuple(float(x) for x in self.posture))
        if not all(math.isfinite(x) for x in self.posture):
            raise ValueError(f"parameter posture must hold finite joint positions, got {list(self.posture)}")
        if not (math.isfinite(self.rcond) and 0.0 < self.rcond < 1.0):
            raise ValueError(f"parameter rcond must be in (0, 1), got {self.rcond}")


class ArmController:
    """Operational space control of ``params.frame`` of a fixed-base ``model`` (module doc)."""

    def __init__(self, model: Model, params: ArmParameters) -> None:
        if model.floating_base:
            raise ValueError("mode arm needs a fixed-base robot; a floating base is driven through its "
                             "contacts: use mode legged")
        self.model = model
        self._evaluator = Evaluator(model, [params.frame])  # KeyError for an unknown frame
        self.params = params
        self._posture = self._check_posture(params.posture) if params.posture else None
        self.target: np.ndarray | None = None  # 4x4, root <- target; None: hold the pose of the first tick

    def _check_posture(self, posture: tuple[float, ...]) -> np.ndarray:
        if len(posture) != self.model.nq:
            raise ValueError(f"parameter posture has {len(posture)} values; the URDF has {self.model.nq} "
                             f"joints ({', '.join(self.model.joint_names)})")
        return np.array(posture)

    def reconfigure(self, params: ArmParameters) -> None:
        """New gains (and posture); the frame is fixed at construction."""
        if params.frame != self.params.frame:
            raise ValueError("parameter frame applies at start-up only: restart the node")
        posture = self._check_posture(params.posture) if params.posture else self._posture
        self.params, self._posture = params, posture

    def tick(self, q: np.ndarray, v: np.ndarray) -> TickResult:
        """The torque command at ``(q, v)``; the first call fixes the posture (unless given) and the target
        (until ``target`` is set) at the present state. ``task_errors``: ``position`` p* - p [m],
        ``orientation`` log(C* C^T) [rad]."""
        p = self.params
        ev = self._evaluator.evaluate(q, v)
        if self._posture is None:
            self._posture = ev.q.copy()
        if self.target is None:
            self.target = ev.placement(p.frame).copy()
        e = pose_error(self.target, ev.placement(p.frame))
        twist = ev.jacobian(p.frame) @ ev.v
        kp = np.repeat([p.position_kp, p.orientation_kp], 3)
        kd = np.repeat([p.position_kd, p.orientation_kd], 3)
        wdot = kp * e - kd * twist
        mask = np.array([True] * 3 + [p.track_orientation] * 3)
        tau0 = computed_torque(ev, self._posture, p.posture_kp, p.posture_kd)
        tau = operational_space_control(ev, p.frame, wdot, mask=mask, tau0=tau0, rcond=p.rcond)
        n = self.model.nv
        command = JointCommand(ev.q.copy(), np.zeros(n), tau, np.zeros(n), np.zeros(n))
        errors = {"position": e[:3], "orientation": e[3:]}
        return TickResult(command, "ok", task_errors=errors)
