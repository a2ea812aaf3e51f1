"""Lockstep: every control cycle waits for the external commands that answer its state (docs/simulator.md).

Protocol, cycle k at simulated time ``t_k = k / update_rate``:

1. ``read`` (the state of step k); the controllers that take no external commands run (the broadcasters
   publish ``/joint_states``, the IMU, ... stamped ``t_k``);
2. the manager waits until every active controller that takes external commands holds the command whose
   ``header.stamp`` is exactly ``t_k`` (the external process copies the stamp of the joint states it
   answers; a controller refuses a command of any other stamp with one line: manager.py,
   ``_stamp_problem``);
3. those controllers run, then ``write`` advances the hardware by exactly ``1 / update_rate``.

The loop is paced by the commands, not by the wall clock, so a run is the same whatever the CPU load. A wait
longer than ``lockstep_timeout`` (wall seconds) is logged once per stall; the manager then keeps waiting (the
simulation stays paused: it never steps on a stale command) and re-publishes the state of step k every
``lockstep_timeout``, so a process that joined late (before DDS discovery matched it) still gets it. No ROS
here.
"""

from __future__ import annotations

import math
import threading
import time as _time
from typing import TYPE_CHECKING, Protocol

import numpy as np
from kinodyn_common.stamps import NS

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn_control.controllers.base import Logger


class LockstepCycle(Protocol):
    def __call__(self, time: float, period: float, gate: LockstepGate) -> bool: ...


class LockstepGate:
    """Blocks the control thread until ``ready()``; command callbacks (other threads) call ``notify``."""

    def __init__(self, timeout: float, logger: Logger) -> None:
        if not (np.isfinite(timeout) and timeout > 0.0):
            raise ValueError(f"lockstep_timeout must be a positive number of seconds, got {timeout}")
        self.timeout, self.logger = float(timeout), logger
        self.stalls = 0
        self._condition = threading.Condition()
        self._stopped = False

    def notify(self) -> None:
        with self._condition:
            self._condition.notify_all()

    def stop(self) -> None:
        """Make the current and every later ``wait`` return False."""
        with self._condition:
            self._stopped = True
            self._condition.notify_all()

    def wait(
        self,
        ready: Callable[[], bool],
        missing: Callable[[], str],
        republish: Callable[[], None],
        time: float,
    ) -> bool:
        """True once ``ready()``, False if stopped first. After each ``timeout`` without it: the first time a
        warning naming ``missing()``, every time ``republish()`` (outside the lock)."""
        start = _time.monotonic()
        deadline = start + self.timeout
        stalled = False
        while True:
            with self._condition:
                if self._stopped:
                    return False
                if ready():
                    break
                self._condition.wait(max(0.0, deadline - _time.monotonic()))
            if _time.monotonic() < deadline:
                continue
            if not stalled:
                stalled = True
                self.stalls += 1
                self.logger.warning(
                    f"lockstep: no command answering t = {time:.6f} s after {self.timeout} s "
                    f"(lockstep_timeout) from {missing()}; the simulation waits for it and re-publishes the "
                    f"state every {self.timeout} s"
                )
            republish()
            deadline = _time.monotonic() + self.timeout
        if stalled:
            self.logger.info(
                f"lockstep: the command for t = {time:.6f} s arrived after "
                f"{_time.monotonic() - start:.3f} s; stepping again"
            )
        return True


def lockstep_period_ns(rate: int) -> int:
    """The control period 1/rate in whole nanoseconds (simulated time must advance exactly)."""
    if NS % rate:
        raise ValueError(
            f"lockstep needs update_rate to divide 1e9 (a period of whole nanoseconds), got {rate} Hz"
        )
    return NS // rate


class LockstepLoop:
    """Runs ``cycle(t_k, period, gate)`` on a dedicated thread, ``t_k = k * period`` from 0: back to back, or
    with ``max_speed > 0`` at most ``max_speed`` times as fast as the wall clock (a process outside the loop,
    such as a scenario runner, a teleop or an estimator the loop does not wait for, then sees simulated time
    advance at a pace it can follow; the cycles and their results are the same either way). A loop that fell
    behind that pace (a stall) goes on from where it is instead of hurrying to catch up: it is never more than
    one period ahead of the pace over any stretch."""

    def __init__(self, cycle: LockstepCycle, rate: int, gate: LockstepGate, max_speed: float = 0.0) -> None:
        if not (math.isfinite(max_speed) and max_speed >= 0.0):
            raise ValueError(f"max_speed must be a finite number >= 0 (0: unbounded), got {max_speed}")
        self.cycle, self.gate, self.max_speed = cycle, gate, float(max_speed)
        self.period_ns = lockstep_period_ns(rate)
        self.time = 0.0  # simulated time of the cycle in progress [s]
        self.cycles = 0
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="lockstep_loop", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self.gate.stop()
        self._thread.join(timeout)

    def _run(self) -> None:
        period = self.period_ns / NS
        start = _time.monotonic()  # wall time at which simulated time 0 is due at the pace
        try:
            while True:
                self.time = self.cycles * self.period_ns / NS
                if self.max_speed > 0.0:
                    ahead = start + self.time / self.max_speed - _time.monotonic()
                    if ahead > 0.0:
                        _time.sleep(ahead)
                    elif ahead < -period / self.max_speed:  # behind the pace: this cycle is due now
                        start -= ahead
                if not self.cycle(self.time, period, self.gate):
                    return
                self.cycles += 1
        except BaseException as exc:  # reported by the owner; the loop must not die silently
            self.error = exc
            raise
