"""kinodyn_common.realtime: SCHED_FIFO for the calling thread (run in a thread of its own here); the heap
frozen once a node is warm."""

from __future__ import annotations

import gc
import os
import threading

import pytest
from kinodyn_common.realtime import HeapFreeze, set_fifo_priority


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
