"""The process groups of a graph's nodes: which processes live in one; stopping several as ROS 2 launch does.

Each node runs in its own session, so its process group holds the node and everything it starts; signals go
to the whole group, and a node counts as stopped only when no live process is left in its group (so a node
that re-executes itself or leaves a child behind is still stopped completely). Group membership is read from
/proc: Linux, where the ROS 2 wheels exist. Used by the launcher (supervisor.py) and by its guard (guard.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

ESCALATION = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
POLL_PERIOD = 0.05  # seconds between checks of a condition

Say = Callable[[str], None]


def _state_and_group(stat_file: Path) -> tuple[str, int]:
    """State letter and process group of a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat file."""
    state, _ppid, group = stat_file.read_text().rsplit(")", 1)[1].split()[:3]
    return state, int(group)


def _threads_alive(process: Path) -> bool:
    """True when a thread of the process is not a zombie. A process whose main thread ended shows the state Z
    while its other threads run (and its parent cannot reap it yet): it is alive."""
    try:
        tasks = list((process / "task").iterdir())
    except OSError:
        return False
    for task in tasks:
        try:
            if _state_and_group(task / "stat")[0] != "Z":
                return True
        except OSError:  # the thread ended while we looked
            continue
    return False


def group_members(pgid: int) -> list[int]:
    """Pids of the live processes in process group `pgid`: any thread of theirs not a zombie."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state, group = _state_and_group(entry / "stat")
        except OSError:  # the process ended while we looked
            continue
        if group == pgid and (state != "Z" or _threads_alive(entry)):
            members.append(int(entry.name))
    return members


def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    """Poll `condition` until it holds (True) or `timeout` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_PERIOD)
    return True


class Stoppable(Protocol):
    """A node's process group as `stop_groups` sees it."""

    @property
    def name(self) -> str: ...

    def running(self) -> bool: ...

    def signal(self, signum: int) -> None: ...


@dataclass(frozen=True)
class ProcessGroup:
    """The process group `pgid` of the node `name` (its leader's pid is the group id)."""

    name: str
    pgid: int

    def running(self) -> bool:
        """True while any process of the group is alive."""
        return bool(group_members(self.pgid))

    def signal(self, signum: int) -> None:
        """Send `signum` to every process of the group."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, signum)


def _none_running(groups: Sequence[Stoppable]) -> bool:
    return not any(group.running() for group in groups)


def stop_groups(groups: Sequence[Stoppable], stop_timeout: float, say: Say) -> None:
    """SIGINT to every running group, then SIGTERM to those alive `stop_timeout` s later, then SIGKILL."""
    previous: signal.Signals | None = None
    for signum in ESCALATION:
        running = [group for group in groups if group.running()]
        if not running:
            return
        if previous is not None:
            names = ", ".join(f"'{group.name}'" for group in running)
            say(f"node(s) {names} still running {stop_timeout:g} s after {previous.name}; "
                f"sending {signum.name}")
        for group in running:
            group.signal(signum)
        wait_until(partial(_none_running, running), stop_timeout)
        previous = signum
