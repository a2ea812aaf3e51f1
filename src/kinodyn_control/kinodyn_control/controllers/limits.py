"""Joint limits from the URDF enforced on commands (as ros2_control's joint_limits saturation limiter).

Limits per joint are the URDF ``<limit>`` intersected with the command interface's ``min``/``max``:
- position commands are clamped to [lower, upper] and moved at most ``velocity * period`` from the previous
  command (or from the measured position for the first one);
- effort commands are clamped to ±effort, and set to 0 when they would push further past a position limit
  (q >= upper and effort > 0, or q <= lower and effort < 0) or further past the velocity limit
  (qdot >= velocity and effort > 0, or qdot <= -velocity and effort < 0).
``check_*`` reject an incoming command outright (the caller logs and drops the message).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn_control.hardware.types import EFFORT, POSITION, full_name

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn_control.hardware.description import RobotDescription


class JointLimitArrays:
    """lower, upper, velocity, effort limits (arrays in ``joints`` order)."""

    def __init__(self, description: RobotDescription, joints: Sequence[str]) -> None:
        limits = [description.joint_limits[j] for j in joints]
        self.joints = tuple(joints)
        self.lower = np.array([lim.lower for lim in limits])
        self.upper = np.array([lim.upper for lim in limits])
        self.velocity = np.array([lim.velocity for lim in limits])
        self.effort = np.array([lim.effort for lim in limits])
        interfaces = {
            full_name(c.name, i.name): i
            for hw in description.hardware
            for c in hw.joints
            for i in c.command_interfaces
        }
        for k, joint in enumerate(self.joints):
            if (info := interfaces.get(full_name(joint, POSITION))) is not None:
                self.lower[k], self.upper[k] = max(self.lower[k], info.min), min(self.upper[k], info.max)
            if (info := interfaces.get(full_name(joint, EFFORT))) is not None:
                self.effort[k] = min(self.effort[k], -info.min, info.max)
        self._negative_effort, self._negative_velocity = -self.effort, -self.velocity

    def check(self, values: np.ndarray, kind: str) -> str:
        """'' if every value is within its limit for ``kind`` (position, velocity or effort), else why not."""
        if kind == POSITION:
            bad = (values < self.lower) | (values > self.upper)
        else:
            limit = self.velocity if kind == "velocity" else self.effort
            bad = np.abs(values) > limit
        return ", ".join(f"{self.joints[k]} {kind} {values[k]} outside {self._bound(k, kind)}"
                         for k in np.flatnonzero(bad).tolist())

    def _bound(self, k: int, kind: str) -> str:
        if kind == POSITION:
            return f"[{self.lower[k]}, {self.upper[k]}]"
        return f"±{(self.velocity if kind == 'velocity' else self.effort)[k]}"

    def saturate_position(self, command: np.ndarray, previous: np.ndarray, period: float) -> np.ndarray:
        step = self.velocity * period
        saturated: np.ndarray = np.clip(np.clip(command, previous - step, previous + step), self.lower,
                                        self.upper)
        return saturated

    def saturate_effort(self, effort: np.ndarray, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        # np.clip, but NaN kept
        tau: np.ndarray = np.minimum(np.maximum(effort, self._negative_effort), self.effort)
        pushing_up = (q >= self.upper) | (qdot >= self.velocity)  # at or past an upper position/speed limit
        pushing_down = (q <= self.lower) | (qdot <= self._negative_velocity)
        tau[((tau > 0) & pushing_up) | ((tau < 0) & pushing_down)] = 0.0
        return tau
