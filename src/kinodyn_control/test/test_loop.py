"""The wall-clock control loop's start hook and control_node's ``realtime_priority``
(docs/nodes/control_node.md).

The node tests run control_node on the mock quadruped (urdf/quadruped.urdf, no controllers), as a process of
its own (``realtime_priority`` changes every thread of its process), and read the scheduling policy of each
of its threads from the kernel; an out-of-range priority is refused as the node is built, here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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


def thread_policies(pid: int) -> dict[int, tuple[int, int]]:
    """``thread id: (policy, priority)`` of every thread of process ``pid``."""
    out = {}
    for entry in (Path("/proc") / str(pid) / "task").iterdir():
        try:
            out[int(entry.name)] = (os.sched_getscheduler(int(entry.name)),
                                    os.sched_getparam(int(entry.name)).sched_priority)
        except ProcessLookupError:
            continue
    return out


def library_threads() -> int:
    """The threads a process has before control_node's node is built, besides its main thread: those of the
    imports (a BLAS library's worker pool) and of ``rclpy.init``. control_node leaves them time-shared."""
    script = ("import os, rclpy, kinodyn_control.control_node; rclpy.init(args=[]); "
              "print(len(os.listdir('/proc/self/task')) - 1)")
    return int(subprocess.run([sys.executable, "-c", script], capture_output=True, check=True).stdout)


def thread_names(pid: int) -> dict[int, str]:
    """``thread id: name`` of every thread of process ``pid``."""
    tasks = (Path("/proc") / str(pid) / "task").iterdir()
    return {int(t.name): (t / "comm").read_text().strip() for t in tasks}


@pytest.mark.parametrize("priority", [0, 1, 7])
def test_realtime_priority_puts_the_loop_thread_and_the_process_s_other_threads_under_sched_fifo(
        priority: int) -> None:
    """control_node as a process (its executor is the main thread): with ``realtime_priority`` the loop's
    thread runs SCHED_FIFO at it, every thread started since the node was built (the DDS threads, the
    publishing thread) and the executor's one below (1 at least), the threads from before (the imports',
    rclpy.init's) time-shared; with 0 every thread stays time-shared."""
    command = [sys.executable, "-m", "kinodyn_control.control_node", "--ros-args",
               "-p", f"robot_description_file:={URDF}", "-p", "update_rate:=100",
               "-p", f"realtime_priority:={priority}"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline, policies, names = time.monotonic() + 60.0, {}, {}
        while time.monotonic() < deadline and proc.poll() is None:
            policies = thread_policies(proc.pid)
            # running once the main thread (the executor's) has its policy (set by the loop as it starts)
            if len(policies) > 10 and (priority == 0 or policies.get(proc.pid, (0, 0))[0] == os.SCHED_FIFO):
                time.sleep(0.5)  # a few cycles more: nothing changes after the loop's start
                policies, names = thread_policies(proc.pid), thread_names(proc.pid)
                break
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=20.0)[0].decode(errors="replace")
    assert proc.returncode == 0, output
    assert "loop at 100 Hz" in output, output
    assert len(policies) > 10, policies
    if priority and fifo_permitted():
        below = max(priority - 1, 1)
        assert policies[proc.pid] == (os.SCHED_FIFO, below)  # the main thread: the executor's
        middleware = [t for t, name in names.items() if name.startswith("dds.")]  # Fast DDS's threads
        assert middleware
        assert all(policies[t] == (os.SCHED_FIFO, below) for t in middleware), (policies, names)
        shared = [t for t, p in policies.items() if p[0] == os.SCHED_OTHER]
        assert len(shared) == library_threads(), (policies, names)
        assert set(policies.values()) - {(os.SCHED_OTHER, 0)} <= {(os.SCHED_FIFO, priority),
                                                                 (os.SCHED_FIFO, below)}
        if priority > below:
            assert list(policies.values()).count((os.SCHED_FIFO, priority)) == 1  # the loop's thread only
    else:  # 0, or not permitted here: time-shared (one warning says why)
        assert {policy for policy, _ in policies.values()} == {os.SCHED_OTHER}


@pytest.mark.parametrize("priority", [-1, 100])
def test_realtime_priority_out_of_range_is_refused(priority: int) -> None:
    try:
        with pytest.raises(ValueError, match=r"realtime_priority must be 0 \(off\) or a SCHED_FIFO"):
            make_node(priority)
    finally:
        rclpy.try_shutdown()
