"""Run one node as a process: a bad configuration is one error line and exit code 1, Ctrl-C is exit code 0."""

from __future__ import annotations

import faulthandler
import signal
from typing import TYPE_CHECKING

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.experimental.events_executor import EventsExecutor
from rclpy.signals import SignalHandlerOptions

from kinodyn_common.parameters import reject_undeclared_parameters
from kinodyn_common.robot_description import RobotDescriptionError

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

    from rclpy.node import Node

CONFIGURATION_ERRORS = (RobotDescriptionError, ValueError, ParameterException)
"""What a node constructor raises for bad parameters (wrong value or type) or a bad URDF (kinodyn's
URDFError is a ValueError)."""

STOP_POLL_PERIOD = 0.1
"""Longest time (s) between SIGINT/SIGTERM and the spin loop seeing it: the executor wakes this often."""

TEARDOWN_TIMEOUT = 4.0
"""Longest time (s) the node's teardown (executor, node, context) may take once the spin loop has ended:
past it the stacks of every thread go to stderr and the process exits with code 1, inside the launcher's
5 s before it escalates to SIGTERM."""


class _StopRequest:
    """SIGINT and SIGTERM set a flag that the spin loop reads; nothing is raised inside a callback.

    rclpy's own handler shuts the context down before the node is destroyed (a node whose threads publish
    then publishes on a dead context), and a ``KeyboardInterrupt`` raised by a Python handler can land inside
    rclpy's C++ message conversion, where pybind11 turns it into ``RuntimeError: Unable to convert call
    argument`` and the node exits with code 1. A flag does neither.

    A SIGTERM also writes the stack of every thread to stderr at once, from C (``faulthandler``, which then
    calls this handler): a node that did not stop on SIGINT, and that a launcher therefore escalates, tells
    where it was stuck even when its main thread runs no Python.
    """

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGINT, self._request)
        signal.signal(signal.SIGTERM, self._request)
        faulthandler.register(signal.SIGTERM, all_threads=True, chain=True)

    def _request(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True


def extra_nodes(node: Node) -> list[Node]:
    """Further nodes of the process that the executor spinning ``node`` must spin too: what ``node``'s
    ``extra_nodes()`` returns, if it has that method (control_node: its controllers' nodes; a node it creates
    later it adds itself, through ``node.executor``). Whatever executor run_node uses keeps this hook."""
    hook = getattr(node, "extra_nodes", None)
    return list(hook()) if hook is not None else []


def spin_check(node: Node) -> Callable[[], None] | None:
    """``node``'s ``spin_check`` method, if it has one: run_node calls it after every ``spin_once``, in the
    executor's thread, and an exception it raises ends the spin as one raised by a callback does. A node whose
    other threads must end it (control_node: a hardware fault reported from its control loop) sets a flag
    there that this method reads, where a guard condition would cost the process the EventsExecutor. It is
    called at least every ``STOP_POLL_PERIOD``."""
    return getattr(node, "spin_check", None)


def make_executor(nodes: list[Node]) -> Executor:
    """The executor that spins ``nodes``: rclpy's ``EventsExecutor``, or its ``SingleThreadedExecutor`` when a
    node has a guard condition (the EventsExecutor refuses them).

    The EventsExecutor takes each message in C++ when the middleware reports it (no wait set to fill and wait
    on) and runs the callbacks in that order, all of them in the thread calling ``spin_once``. The
    SingleThreadedExecutor gathers every entity of every node into a new rcl wait set for each callback it
    runs, at more than twice the CPU per message (bench/bench_executors.py).
    """
    context = nodes[0].context
    if any(True for node in nodes for _ in node.guards):
        return SingleThreadedExecutor(context=context)
    return EventsExecutor(context=context)


def run_node(name: str, make_node: Callable[[], Node], args: list[str] | None = None) -> int:
    """Create the node with ``make_node`` and spin it until SIGINT/SIGTERM; returns the process exit code.

    A configuration error raised while the node is built, or a parameter given to it that it does not declare
    (``reject_undeclared_parameters``), is logged as one line under ``name`` (no traceback) and gives exit
    code 1. The node's ``spin_check`` (if any) runs after each ``spin_once``. On SIGINT or SIGTERM the node is
    destroyed (stopping any threads of its own) and only then is the context shut down; a teardown longer than
    ``TEARDOWN_TIMEOUT`` writes every thread's stack to stderr and exits with code 1.
    """
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = _StopRequest()
    node: Node | None = None
    try:
        try:
            node = make_node()
            reject_undeclared_parameters(node)
        except CONFIGURATION_ERRORS as exc:
            rclpy.logging.get_logger(name).error(f"{exc}; exiting")
            return 1
        nodes = [node, *extra_nodes(node)]
        executor = make_executor(nodes)
        for each in nodes:
            executor.add_node(each)
        check = spin_check(node)
        try:
            while not stop.requested:
                executor.spin_once(timeout_sec=STOP_POLL_PERIOD)
                if check is not None:
                    check()
        except ExternalShutdownException:
            pass
        finally:
            faulthandler.dump_traceback_later(TEARDOWN_TIMEOUT, exit=True)
            executor.shutdown()
        return 0
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
        faulthandler.cancel_dump_traceback_later()
