"""`kinodyn up`: run the nodes of a graph until Ctrl-C, SIGTERM, a timeout, or the first node that exits.

`up` is the command as a function (the CLI and `kinodyn demo <graph>` call it), `run_graph` runs a loaded
graph, `RunningGraph` starts a graph's nodes for a caller that watches them itself (the closed-loop demo).

Stopping follows ROS 2 launch: SIGINT to every node's process group, then SIGTERM to the groups still alive
after `stop_timeout` seconds, then SIGKILL. Exit codes: 0 when the `--timeout` ran out, 1 when a node exited
(or could not start, or the guard ended), 128 + signal number when the launcher was asked to stop (130:
Ctrl-C, 143: SIGTERM). If the launcher itself is killed, the nodes still stop: see guard.py, node_process.py.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from functools import partial
from typing import IO, TYPE_CHECKING

from kinodyn_tools.launcher.graph import Graph, GraphError, graph_path, load_graph
from kinodyn_tools.launcher.guard import Guard
from kinodyn_tools.launcher.node_process import LinePrinter, NodeProcess, Printer
from kinodyn_tools.launcher.packages import PackageLookupError
from kinodyn_tools.launcher.process_group import POLL_PERIOD, Say, stop_groups

if TYPE_CHECKING:
    from pathlib import Path

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
OUTPUT_DRAIN_TIMEOUT = 1.0  # seconds to wait for the last output lines of a node that has ended
LAUNCHER_PREFIX = "kinodyn"
DEFAULT_STOP_TIMEOUT = 5.0  # seconds after SIGINT, then after SIGTERM, before escalating
USAGE_ERROR = 2


def describe_exit(code: int) -> str:
    """`code N`, naming the signal when the process was killed by one (N < 0)."""
    if code < 0:
        return f"code {code} (killed by {signal.Signals(-code).name})"
    return f"code {code}"


class RunningGraph:
    """The nodes of a graph, each started in its own process group, and the guard that stops them if this
    process dies without doing so. What `kinodyn up` runs and the demo starts next to its scenario; use it as
    a context manager (``stop`` on leaving)."""

    def __init__(self, printer: Printer, stop_timeout: float) -> None:
        self._printer = printer
        self.stop_timeout = stop_timeout
        self.say: Say = partial(printer.line, LAUNCHER_PREFIX)
        self.nodes: list[NodeProcess] = []
        self.guard = Guard.start(os.getpid(), stop_timeout)

    def start(self, graph: Graph) -> bool:
        """Start every node of `graph` in file order; False (said why) when one cannot start."""
        for spec in graph.nodes:
            try:
                node = NodeProcess.start(spec, self._printer)
            except OSError as error:
                self.say(f"cannot start node '{spec.name}' ({spec.executable_path}): {error}; "
                         "stopping the graph")
                return False
            self.nodes.append(node)
            self.guard.watch(spec.name, node.pid, node.output_fd)
            self.say(f"started node '{spec.name}' ({spec.package}/{spec.executable}, pid {node.pid})")
        return True

    def ended(self) -> str | None:
        """Why the graph cannot go on (a node or the guard exited), or None while all run."""
        code = self.guard.exit_code()
        if code is not None:
            return (f"the guard (pid {self.guard.pid}) exited with {describe_exit(code)}; without it a "
                    "killed launcher would leave its nodes running")
        for node in self.nodes:
            code = node.exit_code()
            if code is not None:
                node.finish_output(OUTPUT_DRAIN_TIMEOUT)
                return f"node '{node.node.name}' exited with {describe_exit(code)}"
        return None

    def stop(self) -> dict[str, int | None]:
        """Stop every running node's group (SIGINT, SIGTERM, SIGKILL, `stop_timeout` apart), report how each
        ended, release the guard; each node's exit code."""
        running_before = {node.name for node in self.nodes if node.running()}
        stop_groups(self.nodes, self.stop_timeout, self.say)
        codes: dict[str, int | None] = {}
        for node in self.nodes:
            node.finish_output(OUTPUT_DRAIN_TIMEOUT)
            code = codes[node.name] = node.exit_code()
            if code is None or node.running():
                self.say(f"node '{node.name}' (process group {node.pid}) survived SIGKILL; its processes "
                         "remain")
            elif node.name in running_before:
                self.say(f"node '{node.name}' stopped with {describe_exit(code)}")
        self.guard.release(self.say)
        return codes

    def __enter__(self) -> RunningGraph:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _supervise(running: RunningGraph, timeout: float | None, signals: list[int]) -> int:
    """Wait for a stop request, a node's or the guard's exit, or the timeout; return the exit code."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if signals:
            running.say(f"received {signal.Signals(signals[0]).name}; stopping the graph")
            return 128 + signals[0]
        reason = running.ended()
        if reason is not None:
            running.say(f"{reason}; stopping the graph")
            return 1
        if deadline is not None and time.monotonic() >= deadline:
            running.say(f"timeout of {timeout:g} s reached; stopping the graph")
            return 0
        time.sleep(POLL_PERIOD)


def run_graph(graph: Graph, timeout: float | None, stop_timeout: float, stream: IO[str] | None = None) -> int:
    """Start the guard, then every node of `graph`, each in its own process group; watch them until a stop
    signal, a node's or the guard's exit or `timeout`; stop them; return the exit code. Lines go to `stream`
    (default: `sys.stdout` when called); the guard reports on file descriptor 1, whatever `stream` is."""
    signals: list[int] = []
    previous_handlers = {
        signum: signal.signal(signum, lambda received, _frame: signals.append(received))
        for signum in STOP_SIGNALS
    }
    try:
        with RunningGraph(LinePrinter(stream or sys.stdout), stop_timeout) as running:
            if not running.start(graph):
                return 1
            return _supervise(running, timeout, signals)
    finally:
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)


def up(graph: str | Path, timeout: float | None = None, stop_timeout: float = DEFAULT_STOP_TIMEOUT) -> int:
    """`kinodyn up`: run the graph file `graph` (a path or an installed graph's name) with `run_graph`; a
    graph that cannot be started gives one error line on stderr and USAGE_ERROR. `timeout` and
    `stop_timeout` must be > 0 (``ValueError``)."""
    for name, value in (("timeout", timeout), ("stop-timeout", stop_timeout)):
        if value is not None and not value > 0:
            raise ValueError(f"--{name} must be positive, got {value:g}")
    try:
        loaded = load_graph(graph_path(graph))
    except (GraphError, PackageLookupError) as error:
        print(f"kinodyn: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    return run_graph(loaded, timeout=timeout, stop_timeout=stop_timeout)
