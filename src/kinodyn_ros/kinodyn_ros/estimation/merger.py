"""Header-stamp ordering of several sensor streams for the state estimator (issue 11 item 3).

A message is released once every live stream has delivered a message stamped at or after it (a watermark, as
message_filters' ApproximateTime and robot_localization's history keep order by stamp rather than by arrival).
The decisions are taken per stream, from that stream's own stamps, so the released order depends only on the
order of the messages within each stream, never on how the streams interleave on arrival:

- a message stamped at or before the newest one its stream already delivered is dropped (duplicate or out of
  order, counted in ``dropped``);
- a stream whose newest stamp is more than ``stream_timeout`` behind the newest stamp of any stream is left
  out of the watermark until it catches up (a dead sensor does not stall the others); the messages it then
  delivers stamped before the last released one are dropped (``late``). The one place where arrival matters:
  a stream that lags by more than ``stream_timeout`` on arrival is treated as silent;
- a stream that jumps back by more than ``reset_jump`` (a bag played in a loop, a restarted clock) ends the
  epoch: everything buffered is released, a ``Reset`` follows, and the other streams' messages of the old
  epoch still to come are dropped (``stale``) until they jump back too.

At equal stamps the order is the order of ``streams`` (imu, contacts, joint_states for the estimator: a
kinematic update sees the IMU propagated to its stamp), then arrival within the stream.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Verdict(Enum):
    """What ``StampMerger.push`` did with a message."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"  # stamped at or before the newest message of its stream
    LATE = "late"  # its stream was left out and the merger has released past its stamp
    STALE = "stale"  # a message of an epoch that another stream has already left by a jump back
    RESET = "reset"  # a jump back of more than reset_jump: accepted as the first message of a new epoch


@dataclass(frozen=True)
class Event:
    """One released message; ``dropped`` counts, by cause (a Verdict value or a caller's ``drop`` cause), the
    messages of its stream dropped since the stream's previous accepted one, so counts read in release order
    are as deterministic as the events."""

    stamp_ns: int
    stream: str
    payload: Any
    dropped: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Reset:
    """The epoch ended: ``stream`` jumped back from ``from_ns`` to ``to_ns``."""

    stream: str
    from_ns: int
    to_ns: int


@dataclass
class _Stream:
    rank: int
    epoch: int = 0
    newest_ns: int | None = None
    dropped: Counter[str] = field(default_factory=Counter)  # since the last accepted message


@dataclass
class MergerCounts:
    """Messages not released, by cause, and resets since construction."""

    duplicate: int = 0
    late: int = 0
    stale: int = 0
    resets: int = 0
    by_stream: dict[str, int] = field(default_factory=dict)  # dropped messages (any cause) per stream


class StampMerger:
    """Merges named streams into header-stamp order; see the module docstring for the rules."""

    def __init__(self, streams: Sequence[str], stream_timeout_ns: int, reset_jump_ns: int) -> None:
        if not streams or len(set(streams)) != len(streams):
            raise ValueError(f"streams must be distinct names, at least one, got {list(streams)}")
        if stream_timeout_ns <= 0 or reset_jump_ns <= 0:
            raise ValueError(
                f"stream_timeout_ns and reset_jump_ns must be positive, got {stream_timeout_ns} and "
                f"{reset_jump_ns}"
            )
        self._streams = {name: _Stream(rank) for rank, name in enumerate(streams)}
        self._timeout_ns = int(stream_timeout_ns)
        self._jump_ns = int(reset_jump_ns)
        self.counts = MergerCounts(by_stream={name: 0 for name in streams})
        self._epoch = 0
        self._clear()

    def _clear(self) -> None:
        self._heap: list[tuple[int, int, int, Event]] = []
        self._sequence = 0
        self._released_ns: int | None = None  # stamp of the last released event of this epoch
        self._epoch_start_ns: int | None = None  # first stamp of this epoch (reference of unheard streams)
        self._newest_ns: int | None = None  # newest stamp of any stream in this epoch
        self._ready: list[Event | Reset] = []

    @property
    def excluded(self) -> frozenset[str]:
        """Streams currently left out of the watermark (silent for more than stream_timeout of stamp time)."""
        if self._newest_ns is None:
            return frozenset()
        return frozenset(
            name
            for name, stream in self._streams.items()
            if self._reference(stream) < self._newest_ns - self._timeout_ns
        )

    def _reference(self, stream: _Stream) -> int:
        """The newest stamp of ``stream`` in this epoch; for a stream not heard yet, just before the epoch's
        first stamp (nothing is released before it is heard or left out)."""
        if stream.epoch == self._epoch and stream.newest_ns is not None:
            return stream.newest_ns
        assert self._epoch_start_ns is not None
        return self._epoch_start_ns - 1

    def push(self, stream_name: str, stamp_ns: int, payload: Any) -> Verdict:
        """Offer one message; released events (and resets) are then available from ``ready``."""
        stream = self._streams[stream_name]
        verdict = self._classify(stream, stamp_ns)
        if verdict is Verdict.RESET:
            ready = [*self._ready, *self._pop_until(None)]
            assert stream.newest_ns is not None
            ready.append(Reset(stream_name, stream.newest_ns, stamp_ns))
            self._epoch += 1
            self._clear()
            self._ready = ready
            self.counts.resets += 1
        elif verdict is not Verdict.ACCEPTED:
            setattr(self.counts, verdict.value, getattr(self.counts, verdict.value) + 1)
            self.drop(stream_name, verdict.value)
            return verdict
        stream.epoch = self._epoch
        stream.newest_ns = stamp_ns
        if self._epoch_start_ns is None:
            self._epoch_start_ns = stamp_ns
        self._newest_ns = stamp_ns if self._newest_ns is None else max(self._newest_ns, stamp_ns)
        event = Event(stamp_ns, stream_name, payload, dict(stream.dropped))
        stream.dropped.clear()
        heapq.heappush(self._heap, (stamp_ns, stream.rank, self._sequence, event))
        self._sequence += 1
        self._ready.extend(self._pop_until(self._watermark()))
        return verdict

    def drop(self, stream_name: str, cause: str) -> None:
        """Count a message of ``stream_name`` dropped for ``cause``; it is reported with the stream's next
        released event (``Event.dropped``)."""
        self._streams[stream_name].dropped[cause] += 1
        self.counts.by_stream[stream_name] += 1

    def _classify(self, stream: _Stream, stamp_ns: int) -> Verdict:
        if stream.newest_ns is None:
            return self._unless_late(stamp_ns)
        if stamp_ns < stream.newest_ns - self._jump_ns:
            # a jump back: the first stream to jump starts the next epoch, the others join it when they jump
            return Verdict.RESET if stream.epoch == self._epoch else self._join(stream, stamp_ns)
        if stream.epoch < self._epoch:
            return Verdict.STALE
        if stamp_ns <= stream.newest_ns:
            return Verdict.DUPLICATE
        return self._unless_late(stamp_ns)

    def _unless_late(self, stamp_ns: int) -> Verdict:
        """LATE when the merger has released past ``stamp_ns`` (its stream was left out), else ACCEPTED."""
        if self._released_ns is not None and stamp_ns < self._released_ns:
            return Verdict.LATE
        return Verdict.ACCEPTED

    def _join(self, stream: _Stream, stamp_ns: int) -> Verdict:
        """A stream of an older epoch jumped back: it joins the current epoch (no second reset)."""
        stream.epoch = self._epoch
        stream.newest_ns = None
        return self._unless_late(stamp_ns)

    def _watermark(self) -> int:
        excluded = self.excluded
        return min(self._reference(s) for name, s in self._streams.items() if name not in excluded)

    def _pop_until(self, watermark: int | None) -> Iterator[Event]:
        while self._heap and (watermark is None or self._heap[0][0] <= watermark):
            event = heapq.heappop(self._heap)[3]
            self._released_ns = event.stamp_ns
            yield event

    def ready(self) -> list[Event | Reset]:
        """The events released since the last call, in stamp order, with any reset in its place."""
        ready, self._ready = self._ready, []
        return ready

    def flush(self) -> list[Event | Reset]:
        """Release everything buffered (the end of a bag: no more messages will come)."""
        self._ready.extend(self._pop_until(None))
        return self.ready()

    @property
    def pending(self) -> int:
        """Messages accepted and not yet released."""
        return len(self._heap)
