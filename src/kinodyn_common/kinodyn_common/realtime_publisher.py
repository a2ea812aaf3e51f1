"""Publishing from a real-time thread without waiting on the middleware, as ros2_control's controllers do
with ``realtime_tools::RealtimePublisher``: the real-time thread hands the message over, another thread
publishes it.

A DDS publish takes locks that other threads hold for a moment: the writer's own (Fast DDS's event thread
takes it to send heartbeats) and, over Fast DDS's shared-memory transport, one in each subscribing process
(its port's, taken by that process's listener thread too). A time-shared holder that the kernel preempts on
a loaded machine makes a ``SCHED_FIFO`` publisher wait for it, for milliseconds (priority inversion). And
rclpy holds the GIL through ``rcl_publish``: a thread of the process waiting inside a publish stops every
other Python thread of the process, the real-time one with it.

``RealtimePublisher`` (``node.create_publisher(..., publisher_class=RealtimePublisher)``) serializes the
message in the caller's thread and queues the bytes for the process's ``PublishingThread``, which publishes
them in the order given, with the GIL released (``rcl_publish_serialized_message`` called through ctypes,
which drops the GIL for the length of a foreign call). While the process runs no publishing thread (a tool,
a unit test) it publishes in the caller's thread, as rclpy's publisher does. A message queued for a
publisher destroyed before its turn is dropped (nobody publishes on that topic any more); a backlog beyond
``MAX_BACKLOG`` messages (the publishing thread stuck) drops the newest, and the publishing thread logs how
many once it runs again.
"""

from __future__ import annotations

import ctypes
import threading
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.publisher import Publisher
from rclpy.serialization import serialize_message

from kinodyn_common.problem_log import DistinctProblemLog, ProblemLogger

if TYPE_CHECKING:
    from collections.abc import Callable

MsgT = TypeVar("MsgT")

MAX_BACKLOG = 1000
"""Messages waiting for the publishing thread beyond which a new one is dropped (2 s of a 500 Hz topic)."""

_ERROR_STRING_LENGTH = 1024  # RCUTILS_ERROR_MESSAGE_MAX_LENGTH: rcutils_error_string_t is char[1024]


class _SerializedMessage(ctypes.Structure):
    """rcl_serialized_message_t (rcutils_uint8_array_t): buffer, length, capacity, then an allocator of four
    function pointers and a state pointer, unused by a publish (zero, as rmw's zero-initialized message)."""

    _fields_ = (
        ("buffer", ctypes.c_char_p),
        ("buffer_length", ctypes.c_size_t),
        ("buffer_capacity", ctypes.c_size_t),
        ("allocator", ctypes.c_void_p * 5),
    )


class _ErrorString(ctypes.Structure):
    _fields_ = (("text", ctypes.c_char * _ERROR_STRING_LENGTH),)


class _Rcl:
    """The two rcl/rcutils functions the publishing thread calls, from the libraries rclpy has loaded (a
    library already in the process is found by its name)."""

    def __init__(self) -> None:
        rcl, rcutils = ctypes.CDLL("librcl.so"), ctypes.CDLL("librcutils.so")
        self.publish: Callable[..., int] = rcl.rcl_publish_serialized_message
        self.publish.argtypes = (ctypes.c_void_p, ctypes.POINTER(_SerializedMessage), ctypes.c_void_p)
        self.publish.restype = ctypes.c_int32
        self.error_string: Callable[[], _ErrorString] = rcutils.rcutils_get_error_string
        self.error_string.restype = _ErrorString
        self.reset_error: Callable[[], None] = rcutils.rcutils_reset_error
        self.reset_error.restype = None


class PublishingThread:
    """The process's publishing thread (module doc): ``start`` it (one per process at a time) before the
    real-time thread publishes, ``stop`` it once that thread has stopped; ``stop`` publishes what is queued
    first."""

    def __init__(self, logger: ProblemLogger) -> None:
        self.problems = DistinctProblemLog(logger)
        self.published = 0
        self.dropped = 0  # queued past MAX_BACKLOG (counted by the publishing callers)
        self._reported_drops = 0
        self._queue: SimpleQueue[tuple[Publisher[Any], bytes] | None] = SimpleQueue()
        self._rcl = _Rcl()
        self._thread = threading.Thread(target=self._run, name="realtime_publishing", daemon=True)

    @property
    def native_id(self) -> int | None:
        """The thread's OS id (None before it starts)."""
        return self._thread.native_id

    def start(self) -> None:
        global _active  # noqa: PLW0603  (the process's one publishing thread: module doc)
        if _active is not None:
            raise RuntimeError("this process already runs a publishing thread")
        _active = self
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Publish what is queued, then end the thread; publishers publish in their caller's thread again."""
        global _active  # noqa: PLW0603
        if _active is self:
            _active = None
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)

    def put(self, publisher: Publisher[Any], data: bytes) -> None:
        """Queue ``data`` (a serialized message) for ``publisher``; never waits."""
        if self._queue.qsize() >= MAX_BACKLOG:
            self.dropped += 1
            return
        self._queue.put((publisher, data))

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            self._publish(*item)
            if self.dropped != self._reported_drops:
                self.problems.error("backlog", f"dropped {self.dropped - self._reported_drops} message(s): "
                                               f"more than {MAX_BACKLOG} waited to be published")
                self._reported_drops = self.dropped

    def _publish(self, publisher: Publisher[Any], data: bytes) -> None:
        message = _SerializedMessage(data, len(data), len(data))
        try:
            with publisher.handle:
                ret = self._rcl.publish(publisher.handle.pointer, ctypes.byref(message), None)
        except rclpy_implementation.InvalidHandle:
            return  # the publisher was destroyed while this message waited (module doc)
        if ret != 0:
            text = self._rcl.error_string().text.decode(errors="replace")
            self._rcl.reset_error()
            self.problems.error(("publish", ret), f"publishing on {publisher.topic} failed (rcl error {ret}: "
                                                  f"{text}); the message is dropped")
            return
        self.published += 1


_active: PublishingThread | None = None


class RealtimePublisher(Publisher[MsgT], Generic[MsgT]):
    """An rclpy publisher whose ``publish`` queues the message for the process's publishing thread (module
    doc); the same checks as rclpy's (a message of the publisher's type, or its serialized bytes)."""

    def publish(self, msg: MsgT | bytes) -> None:
        thread = _active
        if thread is None:
            super().publish(msg)
            return
        if isinstance(msg, bytes):
            data = msg
        elif isinstance(msg, self.msg_type):
            data = serialize_message(msg)
        else:
            raise TypeError(f"Expected {self.msg_type}, got {type(msg)}")
        thread.put(self, data)
