"""Swing-foot trajectory: from the lift-off point to the foothold, clearing the ground by a step height.

With ``s = (t - t_lo) / T_sw`` in [0, 1]:

- horizontal: the minimum-jerk blend ``p_xy = p0 + (p1 - p0) m(s)``, ``m(s) = 10 s^3 - 15 s^4 + 6 s^5``
  (Flash and Hogan 1985): zero velocity and acceleration at both ends; its peak speed is 1.875 times the
  mean. With a ``ramp`` ``a`` in (0, 1/2], the blend is instead flat-topped: its rate ``m'`` rises as
  ``m(s / a)`` over the first ``a`` of the swing, stays ``1 / (1 - a)`` (the peak: 1.43 times the mean for
  ``a = 0.3``) and falls symmetrically over the last ``a``; still zero velocity and acceleration at both
  ends, the peak acceleration ``1.875 / (a (1 - a))`` of the mean speed per swing time. A fast gait whose
  swing legs reach their joints' velocity limits with the minimum-jerk blend can stay within them;
- vertical: ``z = z0 + (z1 - z0) m(s) + h b(s)`` with the bump ``b(s) = 64 s^3 (1 - s)^3``: ``b(1/2) = 1``,
  and ``b``, ``b'``, ``b''`` vanish at both ends, so the foot rises ``h`` above the blend at mid-swing and
  leaves and reaches the ground with zero velocity and acceleration.

Velocity and acceleration are the exact time derivatives (chain rule, ``ds/dt = 1 / T_sw``), the task's
feed-forward (Robot Dynamics lecture notes (ETH) §3.9 (3.90)). Outside [0, 1] the foot rests at the nearer
end.
"""

from __future__ import annotations

import math

import numpy as np


def _blend(s: float) -> tuple[float, float, float]:
    """``m(s)``, ``m'(s)``, ``m''(s)`` of the minimum-jerk blend."""
    return (s**3 * (10.0 - 15.0 * s + 6.0 * s * s), 30.0 * s * s * (1.0 - s) ** 2,
            60.0 * s * (1.0 - s) * (1.0 - 2.0 * s))


def _ramped_blend(s: float, a: float) -> tuple[float, float, float]:
    """The flat-topped blend with ramp ``a`` in (0, 1/2] (module doc) and its first two derivatives."""
    if s > 1.0 - a:
        m, dm, ddm = _ramped_blend(1.0 - s, a)
        return 1.0 - m, dm, -ddm
    top = 1.0 / (1.0 - a)
    if s >= a:
        return (s - 0.5 * a) * top, top, 0.0
    u = s / a  # the ramp's rate is the minimum-jerk blend of u; its integral u^4 (5/2 - 3 u + u^2)
    rate, slope, _ = _blend(u)
    return a * u**4 * (2.5 - 3.0 * u + u * u) * top, rate * top, slope * top / a


def _bump(s: float) -> tuple[float, float, float]:
    """``b(s) = 64 s^3 (1 - s)^3`` and its first two derivatives."""
    u = 1.0 - s
    return (64.0 * s**3 * u**3, 192.0 * s * s * u * u * (u - s),
            384.0 * s * u * (u * u - 3.0 * s * u + s * s))


def swing_point(s: float, duration: float, start: np.ndarray, end: np.ndarray, height: float,
                out: np.ndarray, ramp: float = 0.0) -> None:
    """Fill ``out`` (3 x 3: position, velocity, acceleration rows, world) at swing phase ``s`` of a swing of
    ``duration`` [s] from ``start`` to ``end`` rising ``height`` [m] (module doc; ``ramp`` 0: the
    minimum-jerk blend, in (0, 1/2]: the flat-topped one). No allocation."""
    s = min(max(s, 0.0), 1.0)
    m, dm, ddm = _ramped_blend(s, ramp) if ramp > 0.0 else _blend(s)
    b, db, ddb = _bump(s)
    rate = 1.0 / duration
    (x0, y0, z0), (x1, y1, z1) = start.tolist(), end.tolist()  # Python floats: no numpy scalars
    dx, dy, dz = x1 - x0, y1 - y0, z1 - z0
    out[0] = x0 + dx * m, y0 + dy * m, z0 + dz * m + height * b
    out[1] = dx * dm * rate, dy * dm * rate, dz * dm * rate + height * db * rate
    out[2] = (dx * ddm * rate * rate, dy * ddm * rate * rate,
              dz * ddm * rate * rate + height * ddb * rate * rate)


class SwingTrajectory:
    """A swing of ``duration`` [s] from ``start`` to ``end`` (world), ``height`` [m] above the blend at its
    middle. ``sample(s)`` returns the (3, 3) array ``[position; velocity; acceleration]`` (reused)."""

    def __init__(self, start: np.ndarray, end: np.ndarray, duration: float, height: float) -> None:
        if not (math.isfinite(duration) and duration > 0.0):
            raise ValueError(f"swing duration must be finite and > 0 s, got {duration}")
        if not (math.isfinite(height) and height >= 0.0):
            raise ValueError(f"step height must be finite and >= 0 m, got {height}")
        self.start = np.array(start, dtype=float)
        self.end = np.array(end, dtype=float)
        if self.start.shape != (3,) or self.end.shape != (3,) or not (
                np.isfinite(self.start).all() and np.isfinite(self.end).all()):
            raise ValueError(f"swing start and end must be 3 finite numbers each, got {start!r}, {end!r}")
        self.duration, self.height = float(duration), float(height)
        self._out = np.zeros((3, 3))

    def sample(self, s: float) -> np.ndarray:
        swing_point(s, self.duration, self.start, self.end, self.height, self._out)
        return self._out
