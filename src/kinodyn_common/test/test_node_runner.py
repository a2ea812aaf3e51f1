"""run_node's executor: rclpy's EventsExecutor unless a node has a guard condition; callbacks wrapped by
dropping_bad_messages keep the signature an executor inspects; a node's spin_check ends the spin; a stuck
teardown and a SIGTERM leave every thread's stack on stderr."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest
from kinodyn_common.node_runner import STOP_POLL_PERIOD, TEARDOWN_TIMEOUT, make_executor, run_node
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

if TYPE_CHECKING:
    from rclpy.context import Context


def test_events_executor_unless_a_node_has_a_guard_condition(ros_context: Context) -> None:
    plain = Node("runner_plain", context=ros_context)
    guarded = Node("runner_guarded", context=ros_context)
    guarded.create_guard_condition(lambda: None)
    events = make_executor([plain])
    assert type(events).__name__ == "EventsExecutor"
    single = make_executor([plain, guarded])
    assert isinstance(single, SingleThreadedExecutor)
    for executor in (events, single):
        executor.shutdown()
    for node in (plain, guarded):
        node.destroy_node()


@pytest.mark.parametrize("guard", [False, True], ids=["EventsExecutor", "SingleThreadedExecutor"])
def test_a_guarded_timer_callback_is_called_without_an_argument(ros_context: Context, guard: bool) -> None:
    """The EventsExecutor passes a TimerInfo to a callback that takes any argument; the guarded wrapper takes
    ``*args`` but shows the wrapped callback's signature, so a callback without parameters gets none."""
    node = Node("runner_timer", context=ros_context)
    if guard:
        node.create_guard_condition(lambda: None)
    calls: list[tuple[()]] = []
    errors: list[str] = []
    node.get_logger().error = errors.append  # type: ignore[method-assign,assignment]

    def tick() -> None:
        calls.append(())

    problems = DistinctProblemLog(node.get_logger())
    node.create_timer(0.01, dropping_bad_messages(problems, "tick", tick),
                      clock=Clock(clock_type=ClockType.STEADY_TIME))
    executor = make_executor([node])
    executor.add_node(node)
    deadline = time.monotonic() + 10.0
    while len(calls) < 3 and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.1)
    executor.shutdown()
    node.destroy_node()
    assert len(calls) >= 3, errors
    assert not errors, errors


class _EndingError(RuntimeError):
    pass


def test_spin_check_runs_in_the_spin_loop_and_its_exception_ends_run_node() -> None:
    """A node's ``spin_check`` is called after each ``spin_once`` (also with nothing to do, every
    STOP_POLL_PERIOD); what it raises ends the spin and leaves run_node, the node destroyed first."""

    class Checked(Node):
        def __init__(self) -> None:
            super().__init__("runner_checked")
            self.checks = 0
            self.destroyed = False
            made.append(self)

        def spin_check(self) -> None:
            self.checks += 1
            if self.checks == 3:
                raise _EndingError("three checks")

        def destroy_node(self) -> None:
            self.destroyed = True
            super().destroy_node()

    made: list[Checked] = []

    start = time.monotonic()
    with pytest.raises(_EndingError, match="three checks"):
        run_node("runner_checked", Checked, [])
    assert made[0].checks == 3
    assert made[0].destroyed
    assert time.monotonic() - start < 3 * STOP_POLL_PERIOD + 5.0  # three idle polls, plus start-up


_CHILD = """
import sys, time
from rclpy.node import Node
from kinodyn_common.node_runner import run_node

class Child(Node):
    def __init__(self):
        super().__init__("runner_child")
        self.create_timer(0.02, lambda: None)
        print("spinning", flush=True)

    def destroy_node(self):
        if sys.argv[1] == "hang":
            time.sleep(120.0)
        super().destroy_node()

raise SystemExit(run_node("runner_child", Child, []))
"""


def _start_child(teardown: str) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", _CHILD, teardown], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline() == "spinning\n", child.communicate()
    return child


def test_a_teardown_that_hangs_ends_the_process_with_every_threads_stack() -> None:
    """Past TEARDOWN_TIMEOUT after the stop, the process writes where it is stuck and exits with code 1 (the
    launcher would otherwise escalate to SIGTERM and SIGKILL without a word from the node)."""
    child = _start_child("hang")
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=TEARDOWN_TIMEOUT + 60.0)
    assert child.returncode == 1, stderr
    assert "most recent call first" in stderr, stderr
    assert "in destroy_node" in stderr, stderr


def test_sigterm_writes_every_threads_stack_and_stops_the_node() -> None:
    child = _start_child("clean")
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=60.0)
    assert child.returncode == 0, stderr
    assert "most recent call first" in stderr, stderr
    assert "in run_node" in stderr, stderr
