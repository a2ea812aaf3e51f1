"""The wall-clock control loop's start hook and control_node's ``realtime_priority``
(docs/nodes/control_node.md).

The node tests build ``ControlNode`` in this process on the mock quadruped (urdf/quadruped.urdf, no
controllers) and read the scheduling policy of its loop thread from the kernel.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
import rclpy
from kinodyn_control.control_node import ControlNode
from kinodyn_control.loop import ControlLoop

URDF = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"


def fifo_permitted() -> bool:
    """Whether this process may put a thread under SCHED_FIFO (probed on a thread of its own)."""
    result: list[bool] = []

    def probe() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return result[0]


def test_on_start_runs_in_the_loop_thread_before_the_first_cycle() -> None:
    seen: list[tuple[str, int]] = []
    loop: ControlLoop

    def on_start() -> None:
        seen.append((threading.current_thread().name, loop.cycles))

    loop = ControlLoop(lambda t, dt: None, 200.0, time.monotonic, on_start=on_start)
    loop.start()
    deadline = time.monotonic() + 10.0
    while loop.cycles < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    loop.stop()
    assert loop.cycles >= 3
    assert seen == [("control_loop", 0)]


def make_node(priority: int) -> ControlNode:
    rclpy.init(args=["test", "--ros-args", "-p", f"robot_description_file:={URDF}", "-p", "update_rate:=100",
                     "-p", f"realtime_priority:={priority}"])
    return ControlNode()


@pytest.mark.parametrize("priority", [0, 7])
def test_realtime_priority_puts_the_loop_thread_under_sched_fifo(priority: int) -> None:
    try:
        node = make_node(priority)
        loop = node.loop
        assert isinstance(loop, ControlLoop)
        deadline = time.monotonic() + 10.0
        while loop.cycles < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        native = loop._thread.native_id  # noqa: SLF001  (the loop thread's OS id: its scheduling is the point)
        assert native is not None
        policy, param = os.sched_getscheduler(native), os.sched_getparam(native)
        node.destroy_node()
    finally:
        rclpy.try_shutdown()
    if priority and fifo_permitted():
        assert (policy, param.sched_priority) == (os.SCHED_FIFO, priority)
    else:  # 0, or not permitted here: time-shared (one warning says why)
        assert policy == os.SCHED_OTHER
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # only the loop's thread, not the executor's


@pytest.mark.parametrize("priority", [-1, 100])
def test_realtime_priority_out_of_range_is_refused(priority: int) -> None:
    try:
        with pytest.raises(ValueError, match=r"realtime_priority must be 0 \(off\) or a SCHED_FIFO"):
            make_node(priority)
    finally:
        rclpy.try_shutdown()
