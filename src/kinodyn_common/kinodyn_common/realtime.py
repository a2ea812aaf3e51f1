"""Real-time scheduling of a node's executor thread (``SCHED_FIFO``), as ros2_control's ``control_node`` does
for its loop: on a loaded machine a time-shared thread waits for a core behind every other runnable thread,
which is what a node's worst ticks are made of (docs/nodes/wbc.md, "Speed"); and a warm node's heap moved out
of the garbage collector's reach (``HeapFreeze``)."""

from __future__ import annotations

import gc
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

_FIFO_MAX_PRIORITY = 99  # Linux SCHED_FIFO priorities are 1-99


def set_fifo_priority(priority: int) -> str | None:
    """Put the calling thread under ``SCHED_FIFO`` at ``priority`` (1-99; 0 leaves the time-sharing policy).
    Returns None, or why it could not (e.g. no CAP_SYS_NICE / rtprio limit), for the caller to log."""
    if not 0 <= priority <= _FIFO_MAX_PRIORITY:
        raise ValueError(f"parameter realtime_priority must be 0 (off) or a SCHED_FIFO priority 1-99, got "
                         f"{priority}")
    if priority == 0:
        return None
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError as exc:
        return (f"cannot run under SCHED_FIFO {priority} ({exc.strerror}): give the process CAP_SYS_NICE or "
                "an rtprio limit (ulimit -r), or set realtime_priority 0; running time-shared")
    return None


def process_threads() -> set[int]:
    """The OS ids of this process's threads now."""
    return {int(entry) for entry in os.listdir("/proc/self/task")}


def set_fifo_priority_of_other_threads(priority: int, skip: Collection[int] = ()) -> str | None:
    """Put every other time-shared thread of this process but those in ``skip`` (threads they start later
    inherit it) under ``SCHED_FIFO`` at ``priority`` (1-99). A real-time thread waits for whatever lock
    another thread of its process holds (the GIL; a DDS reader's or writer's mutex, taken by the
    middleware's own threads): a time-shared holder that the kernel preempts for other processes' work would
    keep it waiting for milliseconds (priority inversion). ``skip``: threads that must stay time-shared, e.g.
    a BLAS library's worker pool, whose threads spin while they wait for work: under ``SCHED_FIFO`` they
    would hold a core against every time-shared thread, and a FIFO caller waiting for a worker queued behind
    another spinner would wait for seconds. Returns None, or why it could not, for the caller to log."""
    if not 1 <= priority <= _FIFO_MAX_PRIORITY:
        raise ValueError(f"a SCHED_FIFO priority is 1-99, got {priority}")
    me = threading.get_native_id()
    for thread in process_threads() - {me, *skip}:
        try:
            if os.sched_getscheduler(thread) == os.SCHED_OTHER:
                os.sched_setscheduler(thread, os.SCHED_FIFO, os.sched_param(priority))
        except ProcessLookupError:
            continue  # the thread ended meanwhile
        except OSError as exc:
            return (f"cannot run the process's other threads under SCHED_FIFO {priority} ({exc.strerror}); "
                    "they stay time-shared")
    return None


WARM_TICKS = 10
"""Ticks (control cycles, controlled ticks, estimates) after which a node is warm: every compiled kernel,
cache and buffer it uses exists."""


class HeapFreeze:
    """``gc.freeze()`` once, when a node is warm. A full collection walks every object the collector tracks:
    after the imports and the compiled kernels some 100 000, tens of milliseconds that a control period cannot
    absorb. Frozen, they are never walked again, and a collection during operation sees only what was made
    since (the nodes allocate per tick only objects freed by reference counting)."""

    def __init__(self, warm_ticks: int = WARM_TICKS) -> None:
        self.warm_ticks = warm_ticks
        self.frozen = False

    def after(self, ticks: int) -> None:
        """Freeze once ``ticks`` reaches the warm count; nothing after that."""
        if not self.frozen and ticks >= self.warm_ticks:
            gc.freeze()
            self.frozen = True
