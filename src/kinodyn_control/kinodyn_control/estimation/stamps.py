"""Header stamps against the receiver's clock: a stamp is a claim, bounded before a message is merged.

A message stamped more than ``max_stamp_lead`` ahead of the clock cannot have been measured yet (``ahead``);
one more than ``max_stamp_lag`` away from it, ahead or behind, comes from another clock domain (``clock``:
wall-clock epoch stamps on a node running on simulated time, or the reverse; a bag replayed without its
clock). A clock reading 0 has not started (``use_sim_time`` before the first /clock): nothing can be bounded
and every message is refused (``clock``) until it runs. Refused messages never reach the merger, so a single
bad stamp neither holds the others back nor makes a topic look silent.

On simulated time the node's clock moves only when its /clock callback runs: while the node is busy (a long
batch, a first compilation) it falls behind the messages queued meanwhile. ``ClockReading`` adds the steady
time since the clock last moved, so a stall is not taken for stamps ahead (a paused simulation publishes
nothing to refuse).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from kinodyn_common.stamps import NS

CAUSES = ("ahead", "clock")
"""Drop causes of a refused stamp (EstimatorPipeline's ``dropped_ahead``, ``dropped_clock``)."""


@dataclass(frozen=True)
class StampBounds:
    """``max_stamp_lead`` and ``max_stamp_lag`` in seconds (module docstring)."""

    max_stamp_lead: float
    max_stamp_lag: float

    def __post_init__(self) -> None:
        for name in ("max_stamp_lead", "max_stamp_lag"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"parameter {name} must be a positive finite number (s), got {value}")
        if self.max_stamp_lag <= self.max_stamp_lead:
            raise ValueError(
                f"parameter max_stamp_lag ({self.max_stamp_lag} s, another clock domain beyond it) must be "
                f"larger than max_stamp_lead ({self.max_stamp_lead} s)"
            )

    def judge(self, stamp_ns: int, clock_ns: int) -> str | None:
        """None when ``stamp_ns`` is within the bounds of ``clock_ns``, else the cause (CAUSES)."""
        if clock_ns <= 0:
            return "clock"
        lead = stamp_ns - clock_ns
        if abs(lead) > round(self.max_stamp_lag * NS):
            return "clock"
        return "ahead" if lead > round(self.max_stamp_lead * NS) else None

    def refused(self, stamps_ns: np.ndarray, clocks_ns: np.ndarray) -> np.ndarray:
        """``judge`` of many messages: True where a stamp is refused."""
        lead = stamps_ns - clocks_ns
        refused: np.ndarray = ((clocks_ns <= 0) | (np.abs(lead) > round(self.max_stamp_lag * NS))
                               | (lead > round(self.max_stamp_lead * NS)))
        return refused

    def reason(self, cause: str, topic: str, stamp_ns: int, clock_ns: int, clock_name: str) -> str:
        """The one line a refusal logs: topic, stamp, clock, and what to do."""
        head = (f"refusing {topic} message stamped {stamp_ns / NS:.9f} s: {clock_name} reads "
                f"{clock_ns / NS:.9f} s")
        if clock_ns <= 0:
            return (f"{head}, it has not started (use_sim_time and no /clock yet?); messages are refused "
                    "until it runs")
        lead = (stamp_ns - clock_ns) / NS
        if cause == "ahead":
            return (f"{head}, the stamp is {lead:.3f} s ahead of it (more than max_stamp_lead "
                    f"{self.max_stamp_lead:g} s): a sensor clock running ahead, or a bad stamp")
        side = "ahead of" if lead > 0 else "behind"
        return (f"{head}, the stamp is {abs(lead):.3f} s {side} it (more than max_stamp_lag "
                f"{self.max_stamp_lag:g} s): another clock domain (wall-clock stamps on simulated time or "
                "the reverse; a bag replayed without --clock and use_sim_time)")


class ClockReading:
    """The clock a stamp is bounded by: the node's ROS clock, plus the steady (monotonic) time since that
    clock last changed (module docstring); 0 (not started) stays 0."""

    def __init__(self) -> None:
        self._last_ns: int | None = None
        self._moved_at_ns = 0

    def __call__(self, clock_ns: int, steady_ns: int) -> int:
        if clock_ns <= 0:
            return clock_ns
        if clock_ns != self._last_ns:
            self._last_ns, self._moved_at_ns = clock_ns, steady_ns
            return clock_ns
        return clock_ns + max(steady_ns - self._moved_at_ns, 0)
