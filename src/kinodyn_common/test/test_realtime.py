"""kinodyn_common.realtime: SCHED_FIFO for the calling thread (run in a thread of its own here) and for the
process's other threads (in a process of its own); the heap frozen once a node is warm."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading

import pytest
from kinodyn_common.realtime import HeapFreeze, set_fifo_priority, set_fifo_priority_of_other_threads


def _in_thread(priority: int) -> tuple[str | None, int]:
    out: list[tuple[str | None, int]] = []
    thread = threading.Thread(
        target=lambda: out.append((set_fifo_priority(priority), os.sched_getscheduler(0))))
    thread.start()
    thread.join()
    return out[0]


def test_fifo_priority_is_set_on_the_calling_thread_or_the_reason_is_returned() -> None:
    problem, policy = _in_thread(10)
    if problem is None:
        assert policy == os.SCHED_FIFO
    else:  # no CAP_SYS_NICE here: the thread keeps its policy and the reason says what to do
        assert policy == os.SCHED_OTHER
        assert "CAP_SYS_NICE" in problem
        assert "realtime_priority 0" in problem
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # this thread untouched
    assert _in_thread(0) == (None, os.SCHED_OTHER)
    for bad in (-1, 100):
        with pytest.raises(ValueError, match="realtime_priority must be 0"):
            set_fifo_priority(bad)


# In a process of its own (it changes every thread of the process): threads "skipped" and "swept" wait on an
# event; the calling thread sweeps from a thread of its own; every thread's policy and priority come back.
_SWEEP = """
import json, os, threading
from kinodyn_common.realtime import set_fifo_priority_of_other_threads
done = threading.Event()
threads = {name: threading.Thread(target=done.wait) for name in ("skipped", "swept")}
for thread in threads.values():
    thread.start()
ids = {name: thread.native_id for name, thread in threads.items()}
result = {}
def sweep():
    ids["caller"] = threading.get_native_id()
    result["problem"] = set_fifo_priority_of_other_threads(5, skip=[ids["skipped"]])
    result["caller"] = os.sched_getscheduler(0)
caller = threading.Thread(target=sweep)
caller.start()
caller.join()
ids["main"] = threading.main_thread().native_id
late = threading.Thread(target=done.wait)  # started by the main thread after the sweep: inherits it
late.start()
ids["late"] = late.native_id
result["threads"] = {name: [os.sched_getscheduler(t), os.sched_getparam(t).sched_priority]
                     for name, t in ids.items() if name != "caller"}
done.set()
print(json.dumps(result))
"""


def test_the_other_threads_but_the_skipped_ones_go_under_sched_fifo() -> None:
    out = subprocess.run([sys.executable, "-c", _SWEEP], capture_output=True, check=True, text=True)
    result = json.loads(out.stdout)
    fifo, other = [os.SCHED_FIFO, 5], [os.SCHED_OTHER, 0]
    assert result["caller"] == os.SCHED_OTHER  # the calling thread untouched
    if result["problem"] is None:
        assert result["threads"] == {"main": fifo, "swept": fifo, "late": fifo, "skipped": other}
    else:  # no CAP_SYS_NICE here: every thread keeps its policy and the reason says so
        assert "stay time-shared" in result["problem"]
        assert set(map(tuple, result["threads"].values())) == {tuple(other)}
    with pytest.raises(ValueError, match="a SCHED_FIFO priority is 1-99"):
        set_fifo_priority_of_other_threads(0)


def test_the_heap_is_frozen_once_when_the_node_is_warm() -> None:
    gc.unfreeze()  # a node built earlier in this process (another test) may have frozen it already
    assert gc.get_freeze_count() == 0
    heap = HeapFreeze(warm_ticks=3)
    try:
        heap.after(2)
        assert not heap.frozen
        assert gc.get_freeze_count() == 0
        heap.after(3)
        assert heap.frozen
        frozen = gc.get_freeze_count()
        assert frozen > 1000  # the interpreter's, pytest's and numpy's objects: out of the collector's reach
        made_since = [[k] for k in range(100)]  # noqa: F841  (tracked objects made after the freeze)
        heap.after(4)  # once: nothing made since is frozen
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
