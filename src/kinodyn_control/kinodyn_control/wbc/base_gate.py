"""The legged wbc's plausibility gate for the base state: a pose no robot reaches from the last one believed.

A base state (odometry: pose, twist) is compared with the last one accepted, ``dt`` seconds of stamp time
earlier. Its position may differ by at most ``base_jump_position + base_max_speed min(|dt|, max_age)``, its
orientation by a rotation angle of at most ``base_jump_angle + base_max_rate min(|dt|, max_age)``, and its
linear speed and angular rate may not exceed ``base_max_speed`` and ``base_max_rate``. ``max_age`` is the
wbc's ``base_state_max_age``: beyond it the node holds the robot's posture, so the robot moves no further
than it could in that time. The first base state is accepted as it is.

A refused base state is not remembered: a second publisher disagreeing with the estimator is refused
message by message while the estimator's own are accepted. Only when every base state has been refused for
``base_reanchor_time`` seconds of stamp time (the estimator was reset, or the only publisher left disagrees
for that long) is the next one accepted as the new reference, and the caller says so. This is
robot_localization's outlier gating in its simplest form: a bound on the motion instead of a Mahalanobis
distance (an odometry's covariance is not trusted to be filled in).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kinodyn_common.stamps import NS

if TYPE_CHECKING:
    import numpy as np

    from kinodyn_control.wbc.legged import LeggedSettings


@dataclass(frozen=True)
class Verdict:
    """``refusal`` (None: accepted) names the ``cause`` (position, angle, speed, rate) in ``text``;
    ``reanchored``: accepted as the new reference after ``base_reanchor_time`` of refusals."""

    cause: str = ""
    text: str = ""
    reanchored: bool = False

    @property
    def refused(self) -> bool:
        return bool(self.cause)


ACCEPTED = Verdict()


def _rotation_angle(q1: list[float], q2: list[float]) -> float:
    """The angle [rad] of the rotation between two unit quaternions (x, y, z, w)."""
    dot = q1[0] * q2[0] + q1[1] * q2[1] + q1[2] * q2[2] + q1[3] * q2[3]
    return 2.0 * math.acos(min(1.0, abs(dot)))


def _norm3(x: float, y: float, z: float) -> float:
    return math.sqrt(x * x + y * y + z * z)


class BaseStateGate:
    """Remembers the last accepted base state; ``check`` refuses the implausible ones (module doc)."""

    def __init__(self) -> None:
        self._stamp: int | None = None
        self._q7 = [0.0] * 7  # the last accepted pose, as Python floats (the checks are on a few numbers)
        self._refusing_since: int | None = None  # stamp of the first refusal since the last acceptance

    def check(self, stamp_ns: int, q7: np.ndarray, v6: np.ndarray, limits: LeggedSettings,
              max_age: float) -> Verdict:
        """Whether ``(q7, v6)`` at ``stamp_ns`` is believed (then it becomes the reference)."""
        pose = q7.tolist()
        verdict = self._judge(stamp_ns, pose, v6.tolist(), limits, max_age)
        if verdict.refused:
            if self._refusing_since is None:
                self._refusing_since = stamp_ns
            if stamp_ns - self._refusing_since < round(limits.base_reanchor_time * NS):
                return verdict
            verdict = Verdict(reanchored=True, text=verdict.text)
        self._stamp, self._q7, self._refusing_since = stamp_ns, pose, None
        return verdict

    def _judge(self, stamp_ns: int, q7: list[float], v6: list[float], limits: LeggedSettings,
               max_age: float) -> Verdict:
        speed = _norm3(*v6[:3])
        if speed > limits.base_max_speed:
            return Verdict("speed", f"linear speed {speed:.3g} m/s is above base_max_speed = "
                                    f"{limits.base_max_speed} m/s")
        rate = _norm3(*v6[3:])
        if rate > limits.base_max_rate:
            return Verdict("rate", f"angular rate {rate:.3g} rad/s is above base_max_rate = "
                                   f"{limits.base_max_rate} rad/s")
        if self._stamp is None:
            return ACCEPTED
        dt = min(abs(stamp_ns - self._stamp) / NS, max_age)
        last = self._q7
        jump = _norm3(q7[0] - last[0], q7[1] - last[1], q7[2] - last[2])
        allowed = limits.base_jump_position + limits.base_max_speed * dt
        if jump > allowed:
            return Verdict("position", f"position {jump:.3g} m from the last accepted base state (allowed "
                                       f"{allowed:.3g} m: base_jump_position + base_max_speed x {dt:.3f} s)")
        angle = _rotation_angle(last[3:], q7[3:])
        allowed = limits.base_jump_angle + limits.base_max_rate * dt
        if angle > allowed:
            return Verdict("angle", f"orientation {math.degrees(angle):.3g} deg from the last accepted base "
                                    f"state (allowed {math.degrees(allowed):.3g} deg: base_jump_angle + "
                                    f"base_max_rate x {dt:.3f} s)")
        return ACCEPTED
