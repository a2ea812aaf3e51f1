"""`kinodyn up`: run the nodes of a graph until Ctrl-C, SIGTERM, a timeout, or the first node that exits.

Stopping follows ROS 2 launch: SIGINT to every node's process group, then SIGTERM to the groups still alive
after `stop_timeout` seconds, then SIGKILL. Exit codes: 0 when the `--timeout` ran out, 1 when a node exited
(or could not start), 128 + signal number when the launcher was asked to stop (130: Ctrl-C, 143: SIGTERM).
"""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import IO

from kinodyn_ros.launcher.graph import Graph
from kinodyn_ros.launcher.node_process import LinePrinter, NodeProcess

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
ESCALATION = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
POLL_PERIOD = 0.05  # seconds between checks of the nodes, the signals and the timeout
OUTPUT_DRAIN_TIMEOUT = 1.0  # seconds to wait for the last output lines of a node that has ended
LAUNCHER_PREFIX = "kinodyn"

Say = Callable[[str], None]


def describe_exit(code: int) -> str:
    """`code N`, naming the signal when the process was killed by one (N < 0)."""
    if code < 0:
        return f"code {code} (killed by {signal.Signals(-code).name})"
    return f"code {code}"


def _wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_PERIOD)
    return True


def _supervise(nodes: list[NodeProcess], timeout: float | None, signals: list[int], say: Say) -> int:
    """Wait for a stop request, a node's exit or the timeout; return the launcher's exit code."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if signals:
            say(f"received {signal.Signals(signals[0]).name}; stopping the graph")
            return 128 + signals[0]
        for node in nodes:
            code = node.exit_code()
            if code is not None:
                node.finish_output(OUTPUT_DRAIN_TIMEOUT)
                say(f"node '{node.node.name}' exited with {describe_exit(code)}; stopping the graph")
                return 1
        if deadline is not None and time.monotonic() >= deadline:
            say(f"timeout of {timeout:g} s reached; stopping the graph")
            return 0
        time.sleep(POLL_PERIOD)


def _stop_all(nodes: list[NodeProcess], stop_timeout: float, say: Say) -> None:
    """Signal every running node's group with SIGINT, then SIGTERM, then SIGKILL, until none is left."""
    running_before = {node.node.name for node in nodes if node.running()}
    previous: signal.Signals | None = None
    for signum in ESCALATION:
        running = [node for node in nodes if node.running()]
        if not running:
            break
        if previous is not None:
            names = ", ".join(f"'{node.node.name}'" for node in running)
            say(f"node(s) {names} still running {stop_timeout:g} s after {previous.name}; "
                f"sending {signum.name}")
        for node in running:
            node.signal(signum)
        _wait_until(lambda running=running: not any(node.running() for node in running), stop_timeout)
        previous = signum
    for node in nodes:
        node.finish_output(OUTPUT_DRAIN_TIMEOUT)
        if node.running():
            say(f"node '{node.node.name}' (process group {node.pid}) survived SIGKILL; its processes remain")
        elif node.node.name in running_before:
            say(f"node '{node.node.name}' stopped with {describe_exit(node.exit_code())}")


def run_graph(graph: Graph, timeout: float | None, stop_timeout: float, stream: IO[str] = sys.stdout) -> int:
    """Start every node of `graph`, each in its own process group, and watch them; return the exit code."""
    printer = LinePrinter(stream)
    say: Say = partial(printer.line, LAUNCHER_PREFIX)
    signals: list[int] = []
    previous_handlers = {
        signum: signal.signal(signum, lambda received, _frame: signals.append(received))
        for signum in STOP_SIGNALS
    }
    nodes: list[NodeProcess] = []
    try:
        with tempfile.TemporaryDirectory(prefix="kinodyn-params-") as parameter_dir:
            try:
                for spec in graph.nodes:
                    try:
                        nodes.append(NodeProcess.start(spec, Path(parameter_dir), printer))
                    except OSError as error:
                        say(f"cannot start node '{spec.name}' ({spec.executable_path}): {error}; "
                            "stopping the graph")
                        return 1
                    say(f"started node '{spec.name}' ({spec.package}/{spec.executable}, pid {nodes[-1].pid})")
                return _supervise(nodes, timeout, signals, say)
            finally:
                _stop_all(nodes, stop_timeout, say)
    finally:
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
