"""The recorder's clock at each message's reception: the system clock, or simulated time from /clock.

`kinodyn bag record` takes its messages in batches (kinodyn_common.polled), each with the time the middleware
received it (``received_timestamp``, system clock). On the system clock that time is the bag time. On
simulated time every /clock message is taken the same way, with its reception time, and a message received at
t gets the value of the newest /clock received at or before t: the recorder's clock at the message's
reception, as a clock moved by each /clock as it arrives reads it, whenever the batch is taken. Before the
first /clock the value is 0 (no bag time). Where the middleware gives no reception time, the time of the take
stands for it.

/clock bytes that are not a rosgraph_msgs/Clock (cut short) or a negative time are one throttled line and
ignored; the clock keeps its value.
"""

from __future__ import annotations

import struct
import time
from bisect import bisect_right
from typing import TYPE_CHECKING

from kinodyn_common.stamps import NS
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

if TYPE_CHECKING:
    from kinodyn_common.polled import PolledSubscriptions
    from kinodyn_common.problem_log import DistinctProblemLog

CLOCK_DEPTH = 1000
"""/clock messages the middleware keeps between two takes (2 s of a 500 Hz clock; best effort matches every
publisher)."""
CLOCK_QOS = QoSProfile(depth=CLOCK_DEPTH, reliability=ReliabilityPolicy.BEST_EFFORT)
_TIME = {b"\x00\x01": struct.Struct("<iI"), b"\x00\x00": struct.Struct(">iI")}  # CDR LE / BE: sec, nanosec
_CDR_HEADER = 4  # bytes of encapsulation and options before the message


def clock_ns(data: bytes) -> int:
    """The time [ns] of a serialized rosgraph_msgs/Clock; ValueError for bytes that are not one, or a time
    before 0."""
    layout = _TIME.get(data[:2])
    if layout is None or len(data) < _CDR_HEADER + layout.size:
        raise ValueError(f"{len(data)} bytes that are not a CDR rosgraph_msgs/Clock")
    sec, nanosec = layout.unpack_from(data, _CDR_HEADER)
    if sec < 0 or nanosec >= NS:
        raise ValueError(f"time {sec} s {nanosec} ns is not a time (negative, or nanoseconds >= 1e9)")
    return int(sec) * NS + int(nanosec)


class ReceptionClock:
    """Bag times by reception time (module docstring); ``polled`` None: the system clock."""

    def __init__(self, polled: PolledSubscriptions | None, problems: DistinctProblemLog) -> None:
        self.simulated = polled is not None
        self._polled = polled
        self._subscription = None if polled is None else polled.subscribe(Clock, "/clock", CLOCK_QOS,
                                                                           raw=True)
        self._problems = problems
        self._received: list[int] = []  # reception times [ns, system clock] of the /clock messages kept
        self._values: list[int] = []  # their times [ns]
        self._forgotten = 0  # the time of the newest /clock no longer kept (0: none)

    def take(self) -> None:
        """Take the /clock messages that arrived since the last take (simulated time only)."""
        if self._polled is None or self._subscription is None:
            return
        taken = time.time_ns()
        for received, data in self._polled.received(self._subscription):
            try:
                value = clock_ns(data)
            except ValueError as exc:
                self._problems.warn(("clock",), f"ignoring a /clock message: {exc}")
                continue
            self._received.append(received or taken)
            self._values.append(value)

    def at(self, received_ns: int) -> int:
        """The recorder's clock [ns] when a message was received at ``received_ns`` (system clock); 0 before
        the first /clock."""
        if not self.simulated:
            return received_ns
        index = bisect_right(self._received, received_ns)
        return self._values[index - 1] if index else self._forgotten

    def now(self) -> int:
        """The recorder's clock now [ns]: the newest /clock taken (0 before the first), or the system
        clock."""
        if not self.simulated:
            return time.time_ns()
        return self._values[-1] if self._values else self._forgotten

    def forget_before(self, received_ns: int) -> None:
        """Drop the /clock messages no message received at ``received_ns`` or later needs (the newest one
        received by then is kept)."""
        drop = bisect_right(self._received, received_ns) - 1
        if drop > 0:
            self._forgotten = self._values[drop - 1]
            del self._received[:drop], self._values[:drop]
