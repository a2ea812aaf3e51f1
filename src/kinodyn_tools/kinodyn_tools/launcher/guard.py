"""The launcher's guard: a small process that stops the graph's nodes when the launcher dies without doing so.

A launcher killed with SIGKILL (or crashing) cannot stop its nodes, and each node runs in its own session, so
nothing else would. `kinodyn up` therefore starts this guard first, in a session of its own, with one end of
a Unix socket pair (SOCK_SEQPACKET) as its stdin. For each node it starts, the launcher sends `<pgid> <name>`
with a copy of the read end of the node's output pipe attached (SCM_RIGHTS); once it has stopped every node it
sends `done`, and the guard ends. When the socket reaches its end without `done` (the kernel closes it
however the launcher ended), the guard copies the nodes' remaining output to the launcher's standard output
(so a node's last lines are kept and its writes never fail on a broken pipe), stops every node group still
alive exactly as the launcher would (SIGINT, SIGTERM, SIGKILL, `--stop-timeout` apart), and reports it as
`[kinodyn-guard] ...`.

Run by the launcher as `python -m kinodyn_tools.launcher.guard --launcher-pid PID --stop-timeout SECONDS`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import threading
from functools import partial

from kinodyn_tools.launcher.node_process import LinePrinter, copy_lines
from kinodyn_tools.launcher.process_group import ProcessGroup, Say, stop_groups

DONE = b"done"
PREFIX = "kinodyn-guard"
MODULE = "kinodyn_tools.launcher.guard"
MESSAGE_SIZE = 4096  # bytes: more than `<pgid> <name>` can take
EXIT_TIMEOUT = 10.0  # seconds the launcher waits for its guard to end after `done`
OUTPUT_DRAIN_TIMEOUT = 1.0  # seconds the guard waits for the last output of nodes that have stopped


class Guard:
    """The launcher's end of the guard: start it, hand it each node, release it once all are stopped."""

    def __init__(self, process: subprocess.Popen[bytes], channel: socket.socket) -> None:
        self._process = process
        self._channel = channel

    @classmethod
    def start(cls, launcher_pid: int, stop_timeout: float) -> Guard:
        """Start the guard process in its own session (a Ctrl-C to the launcher's group does not reach it)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            process = subprocess.Popen(
                [sys.executable, "-m", MODULE, "--launcher-pid", str(launcher_pid),
                 "--stop-timeout", repr(stop_timeout)],
                stdin=theirs.fileno(),
                start_new_session=True,
            )
        return cls(process, ours)

    @property
    def pid(self) -> int:
        return self._process.pid

    def exit_code(self) -> int | None:
        """The guard's exit code, or None while it runs (it runs until `release` or the launcher's end)."""
        return self._process.poll()

    def _send(self, message: bytes, fds: list[int]) -> None:
        # A guard that has ended refuses the message; the supervision loop reports that and stops the graph.
        with contextlib.suppress(ConnectionError):
            socket.send_fds(self._channel, [message], fds)

    def watch(self, name: str, pgid: int, output_fd: int) -> None:
        """Have the guard stop process group `pgid` (node `name`) and copy its output if the launcher dies."""
        self._send(f"{pgid} {name}".encode(), [output_fd])

    def release(self, say: Say) -> None:
        """Tell the guard that every node is stopped, and wait until it has ended."""
        self._send(DONE, [])
        self._channel.close()
        try:
            self._process.wait(EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            say(f"the guard (pid {self.pid}) did not end {EXIT_TIMEOUT:g} s after 'done'; killing it")
            self._process.kill()
            self._process.wait()


def _receive(channel: socket.socket) -> tuple[list[tuple[ProcessGroup, int]], bool]:
    """The node groups with their output pipes, and whether the launcher said `done` (else it ended)."""
    watched: list[tuple[ProcessGroup, int]] = []
    while True:
        message, fds, _flags, _address = socket.recv_fds(channel, MESSAGE_SIZE, 1)
        if message in (b"", DONE):
            return watched, message == DONE
        pgid, name = message.decode().split(maxsplit=1)
        watched.append((ProcessGroup(name, int(pgid)), fds[0]))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kinodyn-guard", description=__doc__.splitlines()[0])
    parser.add_argument("--launcher-pid", type=int, required=True)
    parser.add_argument("--stop-timeout", type=float, required=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Take node groups from the launcher until `done` (exit) or the launcher's end (stop them all)."""
    args = _parser().parse_args(argv)
    with socket.socket(fileno=os.dup(sys.stdin.fileno())) as channel:
        watched, done = _receive(channel)
    if done:
        return 0
    printer = LinePrinter(sys.stdout)
    say: Say = partial(printer.line, PREFIX)
    copies = [
        threading.Thread(target=copy_lines, args=(os.fdopen(fd, "rb"), printer, group.name), daemon=True)
        for group, fd in watched
    ]
    for copy in copies:
        copy.start()
    groups = [group for group, _fd in watched]
    if groups:
        names = ", ".join(f"'{group.name}'" for group in groups)
        say(f"the launcher (pid {args.launcher_pid}) ended without stopping its nodes; stopping {names}")
    stop_groups(groups, args.stop_timeout, say)
    for copy in copies:
        copy.join(OUTPUT_DRAIN_TIMEOUT)
    for group in groups:
        if group.running():
            say(f"node '{group.name}' (process group {group.pgid}) survived SIGKILL; its processes remain")
        else:
            say(f"node '{group.name}' stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
