"""Missing IMU samples, counted from the processed IMU stamps against the nominal rate.

An IMU publishes at a fixed rate; an interval of ``k`` nominal periods between two processed samples means
``k - 1`` samples did not arrive (a sensor dropout, a lossy link, or a subscriber queue overflowing because
the node cannot keep up: keep-last drops the oldest messages without a word). The nominal period is the
``imu_rate`` parameter, or, when it is 0, the median of the first ``LEARN`` intervals of the stream (a
subscriber's queue holds ``qos_depth`` consecutive messages before it can overflow, so these intervals are
the sensor's own).
"""

from __future__ import annotations

import numpy as np
from kinodyn_common.stamps import NS

LEARN = 50
"""Intervals whose median is the nominal period when ``imu_rate`` is 0."""


class ImuGaps:
    """Counts of received and missing IMU samples, in total and since the last ``take_window``."""

    def __init__(self, rate: float) -> None:
        self._period_ns = round(NS / rate) if rate > 0.0 else None
        self._learning: list[int] = []  # first intervals (ns), while the period is unknown
        self._last_ns: int | None = None
        self.received = 0
        self.missing = 0
        self.window_received = 0
        self.window_missing = 0

    @property
    def rate(self) -> float:
        """The nominal rate in Hz (nan while it is being learnt)."""
        return NS / self._period_ns if self._period_ns else float("nan")

    def add(self, stamps_ns: np.ndarray) -> None:
        """Processed IMU stamps (ns, increasing) following the previous ones."""
        if not len(stamps_ns):
            return
        if len(stamps_ns) == 1 and self._last_ns is not None and self._period_ns is not None:
            self.add_stamp(int(stamps_ns[0]))
            return
        previous = [] if self._last_ns is None else [self._last_ns]
        intervals = np.diff(np.r_[previous, stamps_ns].astype(np.int64))
        self._last_ns = int(stamps_ns[-1])
        self.received += len(stamps_ns)
        self.window_received += len(stamps_ns)
        if self._period_ns is None:
            self._learning.extend(intervals.tolist())
            if len(self._learning) < LEARN:
                return
            intervals = np.array(self._learning, np.int64)
            self._period_ns = max(int(np.median(intervals)), 1)
            self._learning = []
        missing = int(np.maximum(np.rint(intervals / self._period_ns) - 1, 0).sum())
        self.missing += missing
        self.window_missing += missing

    def add_stamp(self, stamp_ns: int) -> None:
        """``add`` of one stamp (a live pipeline's call): once the period is known, the same arithmetic on
        Python numbers."""
        last, period = self._last_ns, self._period_ns
        if last is None or period is None:
            self.add(np.array([stamp_ns], np.int64))
            return
        missing = max(round((stamp_ns - last) / period) - 1, 0)
        self._last_ns = stamp_ns
        self.received += 1
        self.window_received += 1
        self.missing += missing
        self.window_missing += missing

    def restart(self) -> None:
        """A jump back in time: the next stamp starts a new sequence (no gap across the jump)."""
        self._last_ns = None

    def take_window(self) -> tuple[int, int]:
        """``(received, missing)`` since the previous call."""
        window = self.window_received, self.window_missing
        self.window_received = self.window_missing = 0
        return window
