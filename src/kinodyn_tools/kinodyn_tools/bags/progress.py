"""Progress of a long pass over a bag: one line on stderr every ``period`` s of wall time (only the display
reads the clock; what is computed depends on the bag alone)."""

from __future__ import annotations

import sys
import time

from kinodyn_common.stamps import NS

PROGRESS_PERIOD = 5.0  # s of wall time between progress lines


class BagProgress:
    """``progress(t_ns)`` after each message at bag time ``t_ns`` prints ``"<label> 12.3 % of 10.0 s of bag
    time"`` when ``period`` s of wall time have passed since the last line (nothing unless ``enabled``)."""

    def __init__(self, label: str, start_ns: int, duration_ns: int, enabled: bool,
                 period: float = PROGRESS_PERIOD) -> None:
        self._label, self._period = label, period
        self._start, self._duration = start_ns, max(duration_ns, 1)
        self._enabled = enabled
        self._next = time.monotonic() + period

    def __call__(self, t_ns: int) -> None:
        if self._enabled and time.monotonic() >= self._next:
            self._next += self._period
            done = (t_ns - self._start) / self._duration
            print(f"{self._label} {100.0 * done:5.1f} % of {self._duration / NS:.1f} s of bag time",
                  file=sys.stderr)
