"""Report each distinct input problem once, not once per message."""

from __future__ import annotations

import time
from collections.abc import Hashable

from rclpy.impl.rcutils_logger import RcutilsLogger


class DistinctProblemLog:
    """Warns the first time a problem (identified by ``key``) occurs, then at most once per ``period``
    seconds for that key, with the number of occurrences that were not reported in between."""

    def __init__(self, logger: RcutilsLogger, period: float = 10.0) -> None:
        self._logger = logger
        self._period = period
        self._last: dict[Hashable, float] = {}
        self._silenced: dict[Hashable, int] = {}

    def warn(self, key: Hashable, message: str) -> None:
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self._period:
            self._silenced[key] = self._silenced.get(key, 0) + 1
            return
        silenced = self._silenced.pop(key, 0)
        suffix = f" ({silenced} more since the last report)" if silenced else ""
        self._last[key] = now
        self._logger.warning(message + suffix)
