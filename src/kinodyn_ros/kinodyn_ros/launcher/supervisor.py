"""`kinodyn up`: run the nodes of a graph until Ctrl-C, SIGTERM, a timeout, or the first node that exits.

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
from typing import IO

from kinodyn_ros.launcher.graph import Graph
from kinodyn_ros.launcher.guard import Guard
from kinodyn_ros.launcher.node_process import LinePrinter, NodeProcess
from kinodyn_ros.launcher.process_group import POLL_PERIOD, Say, stop_groups

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
OUTPUT_DRAIN_TIMEOUT = 1.0  # seconds to wait for the last output lines of a node that has ended
LAUNCHER_PREFIX = "kinodyn"


def describe_exit(code: int) -> str:
    """`code N`, naming the signal when the process was killed by one (N < 0)."""
    if code < 0:
        return f"code {code} (killed by {signal.Signals(-code).name})"
    return f"code {code}"


def _supervise(
    nodes: list[NodeProcess], guard: Guard, timeout: float | None, signals: list[int], say: Say
) -> int:
    """Wait for a stop request, a node's or the guard's exit, or the timeout; return the exit code."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if signals:
            say(f"received {signal.Signals(signals[0]).name}; stopping the graph")
            return 128 + signals[0]
        code = guard.exit_code()
        if code is not None:
            say(f"the guard (pid {guard.pid}) exited with {describe_exit(code)}; without it a killed "
                "launcher would leave its nodes running; stopping the graph")
            return 1
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
    """Stop every running node's group (SIGINT, SIGTERM, SIGKILL) and report how each node ended."""
    running_before = {node.name for node in nodes if node.running()}
    stop_groups(nodes, stop_timeout, say)
    for node in nodes:
        node.finish_output(OUTPUT_DRAIN_TIMEOUT)
        code = node.exit_code()
        if code is None or node.running():
            say(f"node '{node.name}' (process group {node.pid}) survived SIGKILL; its processes remain")
            continue
        if node.name in running_before:
            say(f"node '{node.name}' stopped with {describe_exit(code)}")


def run_graph(graph: Graph, timeout: float | None, stop_timeout: float, stream: IO[str] = sys.stdout) -> int:
    """Start the guard, then every node of `graph`, each in its own process group; watch them; return the exit
    code. The guard reports on the launcher's standard output (file descriptor 1), whatever `stream` is."""
    printer = LinePrinter(stream)
    say: Say = partial(printer.line, LAUNCHER_PREFIX)
    signals: list[int] = []
    previous_handlers = {
        signum: signal.signal(signum, lambda received, _frame: signals.append(received))
        for signum in STOP_SIGNALS
    }
    nodes: list[NodeProcess] = []
    try:
        guard = Guard.start(os.getpid(), stop_timeout)
        try:
            for spec in graph.nodes:
                try:
                    nodes.append(NodeProcess.start(spec, printer))
                except OSError as error:
                    say(f"cannot start node '{spec.name}' ({spec.executable_path}): {error}; "
                        "stopping the graph")
                    return 1
                guard.watch(spec.name, nodes[-1].pid, nodes[-1].output_fd)
                say(f"started node '{spec.name}' ({spec.package}/{spec.executable}, pid {nodes[-1].pid})")
            return _supervise(nodes, guard, timeout, signals, say)
        finally:
            _stop_all(nodes, stop_timeout, say)
            guard.release(say)
    finally:
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
