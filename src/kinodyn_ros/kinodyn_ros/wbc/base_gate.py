"""The legged wbc's plausibility gate for the base state: a pose no robot reaches from the last one believed.

A base state (odometry: pose, twist) is compared with the last one accepted, ``dt`` seconds of stamp time
earlier: its position may differ by at most ``base_jump_position + base_max_speed |dt|``, its orientation by
a rotation angle of at most ``base_jump_angle + base_max_rate |dt|``; its linear speed may not exceed
``base_max_speed`` nor its angular rate ``base_max_rate``. The first base state is accepted as it is. A
refused one is not remembered, so a second publisher disagreeing with the estimator is refused message by
message while the estimator's own keep being accepted; as the allowance grows with ``dt``, a base state that
moved for good (an estimator reset) is accepted once a robot at ``base_max_speed`` / ``base_max_rate``
could have got there. This is robot_localization's outlier gating in its simplest form: a bound on the
motion instead of a Mahalanobis distance (the odometry's covariance is not trusted to be filled in).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kinodyn_ros.wbc.legged import LeggedSettings

NS = 1_000_000_000


def _rotation_angle(q1: np.ndarray, q2: np.ndarray) -> float:
    """The angle [rad] of the rotation between two unit quaternions (x, y, z, w)."""
    return 2.0 * math.acos(min(1.0, abs(float(q1 @ q2))))


@dataclass(frozen=True)
class Refusal:
    """Why a base state was refused: ``cause`` (position, angle, speed, rate) and a sentence."""

    cause: str
    text: str


class BaseStateGate:
    """Remembers the last accepted base state; ``check`` refuses the implausible ones (module doc)."""

    def __init__(self) -> None:
        self._stamp: int | None = None
        self._q7 = np.zeros(7)

    @property
    def last_stamp_ns(self) -> int | None:
        """Stamp of the last accepted base state (None before the first)."""
        return self._stamp

    def check(self, stamp_ns: int, q7: np.ndarray, v6: np.ndarray, limits: LeggedSettings) -> Refusal | None:
        """None (and remembered) if ``(q7, v6)`` at ``stamp_ns`` is plausible, else why not."""
        speed = math.sqrt(float(v6[:3] @ v6[:3]))
        if speed > limits.base_max_speed:
            return Refusal("speed", f"linear speed {speed:.3g} m/s is above base_max_speed = "
                                    f"{limits.base_max_speed} m/s")
        rate = math.sqrt(float(v6[3:] @ v6[3:]))
        if rate > limits.base_max_rate:
            return Refusal("rate", f"angular rate {rate:.3g} rad/s is above base_max_rate = "
                                   f"{limits.base_max_rate} rad/s")
        if self._stamp is not None:
            dt = abs(stamp_ns - self._stamp) / NS
            jump = math.sqrt(float((q7[:3] - self._q7[:3]) @ (q7[:3] - self._q7[:3])))
            allowed = limits.base_jump_position + limits.base_max_speed * dt
            if jump > allowed:
                return Refusal("position", f"position {jump:.3g} m from the last accepted base state "
                                           f"{dt:.3f} s earlier (allowed: base_jump_position + "
                                           f"base_max_speed x dt = {allowed:.3g} m)")
            angle = _rotation_angle(self._q7[3:], q7[3:])
            allowed = limits.base_jump_angle + limits.base_max_rate * dt
            if angle > allowed:
                return Refusal("angle", f"orientation {math.degrees(angle):.3g} deg from the last accepted "
                                        f"base state {dt:.3f} s earlier (allowed: base_jump_angle + "
                                        f"base_max_rate x dt = {math.degrees(allowed):.3g} deg)")
        self._stamp, self._q7 = stamp_ns, np.array(q7, dtype=float)
        return None
