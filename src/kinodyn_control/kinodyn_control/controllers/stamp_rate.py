"""A publisher's rate in stamp time: which of a stream of stamps are published (``rate`` Hz; 0: all)."""

from __future__ import annotations

import math

from kinodyn_common.stamps import NS


def rate_parameter(name: str, value: float) -> float:
    """``value`` of the rate parameter ``name`` [Hz]; ValueError unless finite and >= 0 (0: every one)."""
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"parameter {name} must be a finite number >= 0 (Hz; 0: every one), got {value}")
    return float(value)


class StampRate:
    """Due at the first stamp, then at the first stamp at or after each multiple of ``1 / rate``."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self._next: int | None = None

    def due(self, stamp_ns: int) -> bool:
        if self.rate == 0.0:
            return True
        if self._next is not None and stamp_ns < self._next:
            return False
        period = round(NS / self.rate)
        self._next = (stamp_ns // period + 1) * period
        return True
