"""The control loop: ``cycle(time, period)`` at a fixed rate on a dedicated thread.

The schedule runs on the monotonic clock: cycle k is due at ``start + k / rate`` and the thread sleeps
until then; ``period`` passed to the cycle is the measured monotonic time since the previous cycle. If a cycle
starts more than one period late, the schedule restarts from now (missed cycles are not run in a burst) and
the overrun is counted. ``time`` comes from ``clock`` (the node's ROS clock in seconds). ``on_start``, if
given, runs first in the loop's thread (e.g. to put that thread under ``SCHED_FIFO``). No ROS import here.
"""

from __future__ import annotations

import threading
import time as _time
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable


class ControlLoop:
    def __init__(
        self,
        cycle: Callable[[float, float], None],
        rate: float,
        clock: Callable[[], float],
        record: int = 0,
        on_start: Callable[[], None] | None = None,
    ) -> None:
        if not (np.isfinite(rate) and rate > 0):
            raise ValueError(f"update_rate must be a positive number of Hz, got {rate}")
        self.cycle, self.rate, self.clock = cycle, float(rate), clock
        self._on_start = on_start
        self.overruns = 0
        self.cycles = 0
        self._periods = np.zeros(record)  # measured periods [s], first ``record`` cycles (for the benchmark)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="control_loop", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    @property
    def periods(self) -> np.ndarray:
        return self._periods[: min(self.cycles - 1, len(self._periods))] if self.cycles > 1 else np.zeros(0)

    def _run(self) -> None:
        if self._on_start is not None:
            self._on_start()
        step = 1.0 / self.rate
        previous = _time.monotonic()
        due = previous + step
        try:
            while not self._stop.is_set():
                delay = due - _time.monotonic()
                if delay > 0.0:
                    _time.sleep(delay)
                now = _time.monotonic()
                period = now - previous
                if self.cycles > 0 and self.cycles - 1 < len(self._periods):
                    self._periods[self.cycles - 1] = period
                previous = now
                self.cycle(self.clock(), period if self.cycles > 0 else step)
                self.cycles += 1
                due += step
                if now - due > step:
                    self.overruns += 1
                    due = now + step
        except BaseException as exc:  # reported by the owner; the loop must not die silently
            self.error = exc
            raise
