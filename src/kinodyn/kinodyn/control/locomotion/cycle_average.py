"""The velocity error the footholds feed back: its mean over the last gait cycle, plus what a push adds.

A trotting body sways at the gait frequency: on a diagonal support line the centre of mass moves across the
line as it moves along the walking direction, and the linear inverted pendulum accelerates it sideways, one
way on one diagonal and the other way on the next (Robot Dynamics Essential §2.8's static stability does not
hold on a line). That periodic part of the velocity error ``e = v - v_cmd`` is the gait's own: fed back into
the footholds (the capture point, ``footholds.raibert_foothold``) it moves the next support line with the
sway and the sway grows. The mean of ``e`` over the last period ``T`` (``CycleAverage``: time-weighted, in
the heading frame) removes every component of period ``T / k`` and passes a steady error whole.

With ``d = e - mean(e)`` the within-cycle part and ``e_s`` the sway's size (the controller's
``deadbeat_speed``), the error fed back (``feedback_error``) is

    e_fb = mean(e) + w d,    w = min(1, (|d| / e_s)^2)

the cycle's mean plus a fraction of a sway that falls with its size squared (``|d| < e_s``), the measured
error itself once ``|d| >= e_s`` (a push: the footholds' capture point and touchdown drift act on it as on
``e``), continuous in ``e``.
"""

from __future__ import annotations

import math
from collections import deque


class CycleAverage:
    """Time-weighted mean of a horizontal error over the last ``window`` seconds, in the heading frame (each
    sample held over the interval since the one before it; the oldest cut at the window's start)."""

    def __init__(self) -> None:
        self._samples: deque[tuple[float, float, float]] = deque()  # (dt, dt ex, dt ey)
        self._sum = [0.0, 0.0]
        self._span = 0.0
        self._last: tuple[float, float, float] | None = None  # t, ex, ey of the latest sample
        self._window = 0.0

    def reset(self) -> None:
        """Forget every sample (the gait stopped or changed its period)."""
        self._samples.clear()
        self._sum = [0.0, 0.0]
        self._span = 0.0
        self._last = None

    def add(self, t: float, window: float, error_x: float, error_y: float) -> None:
        """A sample at time ``t`` [s] of the error (heading frame); ``window`` [s]: the averaging span (a
        different one from the last sample's starts over)."""
        if window != self._window or (self._last is not None and t < self._last[0]):
            self.reset()
            self._window = window
        if self._last is not None:
            dt = t - self._last[0]
            if dt > 0.0:
                self._samples.append((dt, dt * error_x, dt * error_y))
                self._sum[0] += dt * error_x
                self._sum[1] += dt * error_y
                self._span += dt
                self._trim(window)
        self._last = (t, error_x, error_y)

    def _trim(self, window: float) -> None:
        """Drop what is older than ``window`` before the latest sample: whole samples, then the part of the
        oldest one beyond it (its hold shortened, its weight with it)."""
        while self._span > window:
            held, wx, wy = self._samples[0]
            excess = self._span - window
            if held <= excess:
                self._samples.popleft()
                self._span -= held
                self._sum[0] -= wx
                self._sum[1] -= wy
                continue
            keep = (held - excess) / held
            self._samples[0] = (held - excess, wx * keep, wy * keep)
            self._span = window
            self._sum[0] -= wx * (1.0 - keep)
            self._sum[1] -= wy * (1.0 - keep)

    def feedback(self, t: float, window: float, error: tuple[float, float],
                 sway_speed: float) -> tuple[float, float]:
        """``add`` the error (heading frame) at ``t`` and answer ``feedback_error`` of it (module doc)."""
        self.add(t, window, *error)
        return feedback_error(error, self.mean(), sway_speed)

    def mean(self) -> tuple[float, float]:
        """The mean error over the samples' span (heading frame); the latest sample before a span exists,
        ``(0, 0)`` before any sample."""
        if self._span > 0.0:
            return self._sum[0] / self._span, self._sum[1] / self._span
        if self._last is not None:
            return self._last[1], self._last[2]
        return 0.0, 0.0


def feedback_error(error: tuple[float, float], mean: tuple[float, float],
                   sway_speed: float) -> tuple[float, float]:
    """``e_fb`` (module doc) from the error ``e`` now and its cycle ``mean`` (same frame) and the sway's
    size ``sway_speed`` ``e_s`` [m/s] (0: every error a push's, ``e`` itself)."""
    if sway_speed <= 0.0:
        return error
    dx, dy = error[0] - mean[0], error[1] - mean[1]
    w = min(math.hypot(dx, dy) / sway_speed, 1.0) ** 2
    return mean[0] + w * dx, mean[1] + w * dy
