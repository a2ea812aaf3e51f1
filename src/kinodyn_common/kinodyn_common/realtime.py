"""Real-time scheduling of a node's executor thread (``SCHED_FIFO``), as ros2_control's ``control_node`` does
for its loop: on a loaded machine a time-shared thread waits for a core behind every other runnable thread,
which is what a node's worst ticks are made of (docs/nodes/wbc.md, "Speed")."""

from __future__ import annotations

import os

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
