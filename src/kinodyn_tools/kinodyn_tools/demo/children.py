"""The demo's child processes besides its graphs' nodes (`kinodyn bag record`): each in its own session,
asked to stop (SIGINT) if the demo dies, its output read line by line so the demo can print and watch it.

Stopping reuses the launcher's escalation (`process_group.stop_groups`: SIGINT, SIGTERM, SIGKILL to the
whole group), with the patience the caller gives (the recorder closes its bag on SIGINT).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Sequence

from kinodyn_tools.launcher.node_process import stop_with_launcher
from kinodyn_tools.launcher.process_group import ProcessGroup, Say, stop_groups

LineHandler = Callable[[str], None]


class Child:
    """A started command: leader of its own process group; every output line goes to `on_line`."""

    def __init__(self, name: str, argv: Sequence[str], on_line: LineHandler) -> None:
        self.name = name
        self._process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=stop_with_launcher(),  # noqa: PLW1509  (only prctl runs there; no other way to set the parent-death signal)
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
        self.group = ProcessGroup(name, self._process.pid)
        self._pump = threading.Thread(target=self._copy, args=(on_line,), daemon=True)
        self._pump.start()

    def _copy(self, on_line: LineHandler) -> None:
        assert self._process.stdout is not None
        for raw in self._process.stdout:
            on_line(raw.decode(errors="replace").rstrip("\r\n"))

    def exit_code(self) -> int | None:
        """The leader's exit code (negative: killed by that signal), or None while it runs."""
        return self._process.poll()

    def running(self) -> bool:
        """True while the leader is not reaped or any process of its group is alive (process_group.py)."""
        return self._process.poll() is None or self.group.running()

    def signal(self, signum: int) -> None:
        """Send `signum` to every process of the child's group."""
        self.group.signal(signum)

    def wait_output(self, timeout: float) -> None:
        """Wait (at most `timeout` s) until the last output line was handed on."""
        self._pump.join(timeout)


def stop_children(children: Sequence[Child], stop_timeout: float, say: Say) -> dict[str, int | None]:
    """Stop every child still running (SIGINT first, as Ctrl-C would); return each one's exit code."""
    stop_groups(children, stop_timeout, say)
    codes = {}
    for child in children:
        child.wait_output(2.0)
        codes[child.name] = child.exit_code()
    return codes
