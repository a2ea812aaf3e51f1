"""Header-stamp ordering of several sensor streams for the state estimator.

A message is released once every live stream has delivered a message stamped at or after it (a watermark, as
message_filters' ApproximateTime and robot_localization's history keep order by stamp rather than by arrival).
The decisions are taken per stream, from that stream's own stamps, so the released order depends only on the
order of the messages within each stream, never on how the streams interleave on arrival:

- a message stamped at or before the newest one its stream already delivered is dropped (duplicate or out of
  order; counted with the stream's next released event, ``Event.dropped``);
- a stream is silent when its newest stamp is more than ``stream_timeout`` behind the newest stamp of any
  stream and, when the caller gives arrival times, nothing of it has arrived for ``stream_timeout`` either (a
  stream queued behind the others in a busy executor is late, not silent). A silent stream is left out of the
  watermark until it speaks again (a dead sensor does not stall the others); the messages it then delivers
  stamped before the last released one are dropped (``late``);
- a stream that jumps back by more than ``reset_jump`` (a bag played in a loop, a restarted clock) leaves the
  epoch: its new messages wait while the others finish the old epoch. Once every stream has jumped or is
  silent, the old epoch is released, then a ``Reset``, then the new epoch. A stream still in the old epoch
  after that (it was silent) has its old messages dropped (``stale``) until it jumps back too.

At equal stamps the order is the order of ``streams`` (imu, contacts, joint_states for the estimator: a
kinematic update sees the IMU propagated to its stamp), then arrival within the stream.

``push_block`` takes many messages of a log at once, in arrays: while no message of the block makes a stream
silent, jumps back or comes late, each stream's accepted messages are those stamped after its running
maximum, the watermark only rises, and every accepted message lies above it, so what ``push`` one by one
would release is the accepted messages up to the final watermark in (stamp, rank, arrival) order: one
stable sort. Where that does not hold it changes nothing and the caller pushes the messages one by one.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence


class Verdict(Enum):
    """What ``StampMerger.push`` did with a message."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"  # stamped at or before the newest message of its stream
    LATE = "late"  # its stream was silent and the merger has released past its stamp
    STALE = "stale"  # a message of an epoch that the other streams have left by a jump back
    RESET = "reset"  # a jump back of more than reset_jump: kept as the first message of the next epoch


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
    """The epoch ended: ``stream`` (the first of the merger's streams that jumped) went from ``from_ns`` back
    to ``to_ns``."""

    stream: str
    from_ns: int
    to_ns: int


@dataclass(frozen=True)
class BlockRelease:
    """What ``push_block`` released, in order: ``order[k] >= 0`` is the block's message ``order[k]``,
    ``order[k] < 0`` the event ``carried[-1 - order[k]]`` accepted before the block; ``dropped`` the
    ``Event.dropped`` counts of the released block messages that have any (by block index); ``duplicates``
    the block indices dropped as DUPLICATE, in arrival order."""

    order: np.ndarray
    carried: list[Event]
    dropped: dict[int, dict[str, int]]
    duplicates: np.ndarray


_NONE = np.iinfo(np.int64).min  # "no stamp" in the block arrays (below every stamp)


@dataclass
class _Stream:
    rank: int
    epoch: int = 0
    newest_ns: int | None = None
    arrival_ns: int | None = None  # caller's arrival time of the newest message
    dropped: Counter[str] = field(default_factory=Counter)  # since the last accepted message
    next_epoch: list[tuple[int, Any]] | None = None  # messages after a jump back, waiting for the others
    jumped_from_ns: int = 0


@dataclass
class MergerCounts:
    """Messages not released, by cause, and resets since construction (in arrival order)."""

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
        self._arrival_ns: int | None = None  # newest arrival time the caller gave
        self._ready: list[Event | Reset] = []
        self._clear()

    def _clear(self) -> None:
        self._heap: list[tuple[int, int, int, Event]] = []
        self._sequence = 0
        self._released_ns: int | None = None  # stamp of the last released event of this epoch
        self._epoch_start_ns: int | None = None  # first stamp of this epoch (reference of unheard streams)
        self._epoch_start_arrival_ns = self._arrival_ns
        self._newest_ns: int | None = None  # newest stamp of any stream in this epoch

    # silence -----------------------------------------------------------------------------------------------

    @property
    def excluded(self) -> frozenset[str]:
        """Streams left out of the watermark: silent (module docstring) or waiting in the next epoch."""
        return self._left_out(lambda s, ending: s.next_epoch is not None or self._silent(s, ending))

    @property
    def silent(self) -> frozenset[str]:
        """Streams left out for silence (module docstring)."""
        return self._left_out(lambda s, ending: s.next_epoch is None and self._silent(s, ending))

    def _left_out(self, left_out: Callable[[_Stream, bool], bool]) -> frozenset[str]:
        """The streams ``left_out(stream, ending)`` names; none while every stream is live."""
        ending = self._ending
        if self._all_live(ending) is not None:
            return frozenset()
        return frozenset(name for name, s in self._streams.items() if left_out(s, ending))

    def _all_live(self, ending: bool) -> list[int] | None:
        """The references (``_reference``) of every stream when none is silent or waiting: the epoch is not
        ending and no stream's newest stamp is more than ``stream_timeout`` behind the newest of all (then
        ``_silent`` is False whatever the arrival times). That is the usual case, decided without asking
        stream by stream; otherwise None."""
        if ending or self._newest_ns is None:
            return None
        references = [self._reference(s) for s in self._streams.values()]
        return references if min(references) >= self._newest_ns - self._timeout_ns else None

    def _silent(self, stream: _Stream, ending: bool) -> bool:
        """Whether ``stream`` is silent; ``ending``: the epoch is ending (``_ending``, taken once by the
        caller for all the streams it asks about)."""
        if self._newest_ns is None:
            return False
        behind = self._reference(stream) < self._newest_ns - self._timeout_ns
        if self._arrival_ns is None:
            return behind
        if not (behind or ending):  # at the end of an epoch the stamps stop moving: arrival decides
            return False
        current = stream.epoch == self._epoch and stream.arrival_ns is not None
        arrival = stream.arrival_ns if current else self._epoch_start_arrival_ns
        return arrival is None or arrival < self._arrival_ns - self._timeout_ns

    def _reference(self, stream: _Stream) -> int:
        """The newest stamp of ``stream`` in this epoch; for a stream not heard yet, just before the epoch's
        first stamp (nothing is released before it is heard or left out)."""
        if stream.epoch == self._epoch and stream.newest_ns is not None:
            return stream.newest_ns
        assert self._epoch_start_ns is not None
        return self._epoch_start_ns - 1

    # input -------------------------------------------------------------------------------------------------

    def push(self, stream_name: str, stamp_ns: int, payload: object, arrival_ns: int | None = None
             ) -> Verdict:
        """Offer one message (``arrival_ns``: when it arrived, on any monotonic clock, or None when replaying
        a log: silence is then judged by stamps alone). Released events are then available from ``ready``."""
        stream = self._streams[stream_name]
        if arrival_ns is not None:
            self._arrival_ns = arrival_ns if self._arrival_ns is None else max(self._arrival_ns, arrival_ns)
        verdict = self._classify(stream, stamp_ns)
        if verdict is Verdict.ACCEPTED and stream.next_epoch is not None:
            stream.next_epoch.append((stamp_ns, payload))
            stream.arrival_ns = arrival_ns
        elif verdict is Verdict.RESET:
            assert stream.newest_ns is not None
            stream.next_epoch, stream.jumped_from_ns = [(stamp_ns, payload)], stream.newest_ns
            stream.arrival_ns = arrival_ns
        elif verdict is Verdict.ACCEPTED:
            stream.arrival_ns = arrival_ns
            self._accept(stream_name, stream, stamp_ns, payload)
        else:
            setattr(self.counts, verdict.value, getattr(self.counts, verdict.value) + 1)
            self.drop(stream_name, verdict.value)
        self._release()
        return verdict

    def push_cycle(self, stamp_ns: int, count: int) -> list[dict[str, int]] | None:
        """One message of every stream, all stamped ``stamp_ns`` (``count`` of them, in the order of the
        streams: a control loop's cycle). When no arrival times are in use, nothing waits to be released, and
        every stream has a message of this epoch stamped before ``stamp_ns`` by at most ``stream_timeout``,
        ``push`` one after the other would accept them all, leave no stream silent in between, and release
        exactly them in stream order: they are taken so, and what ``ready`` would return of them is theirs to
        build (the caller holds the payloads): each one's ``Event.dropped``, in stream order, is returned, the
        merger left as ``push`` leaves it. Otherwise None, nothing changed: push them one by one."""
        if self._arrival_ns is not None or self._heap or self._ready or count != len(self._streams):
            return None
        oldest = stamp_ns - self._timeout_ns
        for s in self._streams.values():
            if (s.next_epoch is not None or s.epoch != self._epoch or s.newest_ns is None
                    or not oldest <= s.newest_ns < stamp_ns):
                return None
        dropped = []
        for s in self._streams.values():
            s.newest_ns = stamp_ns
            dropped.append(dict(s.dropped))
            s.dropped.clear()
        self._newest_ns = self._released_ns = stamp_ns
        self._sequence += count
        return dropped

    def push_block(self, ranks: np.ndarray, stamps: np.ndarray, payload: Callable[[int], Any]
                   ) -> BlockRelease | None:
        """Offer the messages of a log (no arrival times) in their arrival order at once: message ``i`` of
        stream ``streams[ranks[i]]`` stamped ``stamps[i]`` (int64 ns); ``payload(i)`` gives the payload of
        a message still buffered after the block. Returns what ``push`` one message after the other would
        have released (module docstring), the merger then in the same state; None, with nothing changed,
        when a message of the block would make a stream silent, reset the epoch or come late, or the merger
        is not in a state the arrays reproduce (live arrival times, an epoch ending, a silent stream)."""
        streams = list(self._streams.values())
        if (self._arrival_ns is not None or self._ending or self.excluded
                or any(s.newest_ns is not None and s.epoch != self._epoch for s in streams)):
            return None
        ranks, stamps = np.asarray(ranks, np.intp), np.asarray(stamps, np.int64)
        accepted = np.zeros(len(stamps), bool)
        for rank, s in enumerate(streams):
            mine = np.flatnonzero(ranks == rank)
            x = stamps[mine]
            before = np.maximum.accumulate(np.r_[_NONE if s.newest_ns is None else s.newest_ns, x])[:-1]
            if np.any((before != _NONE) & (x < before - self._jump_ns)):
                return None  # a jump back: a reset
            accepted[mine] = x > before
        if self._released_ns is not None and np.any(accepted & (stamps < self._released_ns)):
            return None  # late (only after a silence, which push would have reported)
        mark = np.where(accepted, stamps, _NONE)
        first = self._epoch_start_ns
        if first is None and accepted.any():
            first = int(stamps[np.argmax(accepted)])
        newest = np.maximum.accumulate(np.r_[_NONE if self._newest_ns is None else self._newest_ns, mark])
        watermark = None
        for rank, s in enumerate(streams):
            own = np.r_[_NONE if s.newest_ns is None else s.newest_ns, np.where(ranks == rank, mark, _NONE)]
            own = np.maximum.accumulate(own)
            reference = np.where(own == _NONE, -1 if first is None else first - 1, own)
            if np.any((newest != _NONE) & (reference < newest - self._timeout_ns)):
                return None  # a stream falls silent
            if first is not None:
                watermark = int(reference[-1]) if watermark is None else min(watermark, int(reference[-1]))
        return self._release_block(ranks, stamps, accepted, payload, watermark, first)

    def _release_block(self, ranks: np.ndarray, stamps: np.ndarray, accepted: np.ndarray,
                       payload: Callable[[int], Any], watermark: int | None, first: int | None
                       ) -> BlockRelease:
        """``push_block``'s state changes and release, once the block is known to be exact in arrays."""
        names = list(self._streams)
        dropped: dict[int, dict[str, int]] = {}
        for rank, name in enumerate(names):
            s = self._streams[name]
            mine = np.flatnonzero(ranks == rank)
            duplicates = np.cumsum(~accepted[mine])
            kept = np.flatnonzero(accepted[mine])
            since = np.diff(np.r_[0, duplicates[kept]])  # duplicates since the stream's previous accepted one
            for k in np.flatnonzero((since > 0) | ((np.arange(len(kept)) == 0) & bool(s.dropped))):
                if since[k]:
                    s.dropped["duplicate"] += int(since[k])
                dropped[int(mine[kept[k]])] = dict(s.dropped)
                s.dropped.clear()
            trailing = int(duplicates[-1] - (duplicates[kept[-1]] if len(kept) else 0)) if len(mine) else 0
            if trailing:
                s.dropped["duplicate"] += trailing
            total = len(mine) - len(kept)
            self.counts.duplicate += total
            self.counts.by_stream[name] += total
            if len(kept):
                s.epoch, s.newest_ns = self._epoch, int(stamps[mine[kept[-1]]])
        index = np.flatnonzero(accepted)
        self._epoch_start_ns = first
        if len(index):
            top = int(stamps[index].max())
            self._newest_ns = top if self._newest_ns is None else max(self._newest_ns, top)
        carried = [entry[3] for entry in self._heap]
        key_stamps = np.concatenate([np.array([entry[0] for entry in self._heap], np.int64), stamps[index]])
        key_ranks = np.concatenate([np.array([entry[1] for entry in self._heap], np.intp), ranks[index]])
        sequences = np.concatenate([np.array([entry[2] for entry in self._heap], np.int64),
                                    self._sequence + np.arange(len(index), dtype=np.int64)])
        source = np.concatenate([-1 - np.arange(len(carried), dtype=np.intp), index])
        order = np.lexsort((sequences, key_ranks, key_stamps))
        released = order[key_stamps[order] <= watermark] if watermark is not None else order[:0]
        self._heap = []
        for k in order[len(released):].tolist():
            i = int(source[k])
            event = carried[-1 - i] if i < 0 else Event(int(stamps[i]), names[ranks[i]], payload(i),
                                                        dropped.pop(i, {}))
            self._heap.append((int(key_stamps[k]), int(key_ranks[k]), int(sequences[k]), event))
        heapq.heapify(self._heap)
        self._sequence += len(index)
        if len(released):
            self._released_ns = int(key_stamps[released[-1]])
        return BlockRelease(source[released], carried, dropped, np.flatnonzero(~accepted))

    def drop(self, stream_name: str, cause: str) -> None:
        """Count a message of ``stream_name`` dropped for ``cause``; it is reported with the stream's next
        released event (``Event.dropped``)."""
        self._streams[stream_name].dropped[cause] += 1
        self.counts.by_stream[stream_name] += 1

    def _classify(self, stream: _Stream, stamp_ns: int) -> Verdict:
        if stream.next_epoch is not None:  # waiting in the next epoch: only its own order counts there
            return Verdict.ACCEPTED if stamp_ns > stream.next_epoch[-1][0] else Verdict.DUPLICATE
        if stream.newest_ns is None:
            return self._unless_late(stamp_ns)
        if stamp_ns < stream.newest_ns - self._jump_ns:
            if stream.epoch == self._epoch:
                return Verdict.RESET
            stream.epoch, stream.newest_ns = self._epoch, None  # back from an old epoch: joins this one
            return self._unless_late(stamp_ns)
        if stream.epoch < self._epoch:
            return Verdict.STALE
        if stamp_ns <= stream.newest_ns:
            return Verdict.DUPLICATE
        return self._unless_late(stamp_ns)

    def _unless_late(self, stamp_ns: int) -> Verdict:
        """LATE when the merger has released past ``stamp_ns`` (its stream was silent), else ACCEPTED."""
        if self._released_ns is not None and stamp_ns < self._released_ns:
            return Verdict.LATE
        return Verdict.ACCEPTED

    def _accept(self, stream_name: str, stream: _Stream, stamp_ns: int, payload: object) -> None:
        stream.epoch = self._epoch
        stream.newest_ns = stamp_ns
        if self._epoch_start_ns is None:
            self._epoch_start_ns = stamp_ns
        self._newest_ns = stamp_ns if self._newest_ns is None else max(self._newest_ns, stamp_ns)
        event = Event(stamp_ns, stream_name, payload, dict(stream.dropped))
        stream.dropped.clear()
        heapq.heappush(self._heap, (stamp_ns, stream.rank, self._sequence, event))
        self._sequence += 1

    # output ------------------------------------------------------------------------------------------------

    def _release(self) -> None:
        ending = self._ending
        references = self._all_live(ending)
        if references is not None:
            self._ready.extend(self._pop_until(min(references)))
            return
        live = [s for s in self._streams.values() if s.next_epoch is None and not self._silent(s, ending)]
        if live:
            self._ready.extend(self._pop_until(min(self._reference(s) for s in live)))
        elif ending:  # every stream jumped back or is silent: the epoch ends
            self._next_epoch()
            self._release()

    @property
    def _ending(self) -> bool:
        """Some stream jumped back and waits for the others to finish the epoch."""
        return any(s.next_epoch is not None for s in self._streams.values())

    def _next_epoch(self) -> None:
        """Release the old epoch, then a Reset, then take the waiting streams' messages into the next one."""
        jumped = sorted((s.rank, name, s) for name, s in self._streams.items() if s.next_epoch is not None)
        self._ready.extend(self._pop_until(None))
        _, first_name, first = jumped[0]
        assert first.next_epoch is not None
        self._ready.append(Reset(first_name, first.jumped_from_ns, first.next_epoch[0][0]))
        self.counts.resets += 1
        self._epoch += 1
        self._clear()
        for _, name, stream in jumped:
            waiting, stream.next_epoch = stream.next_epoch or [], None
            for stamp_ns, payload in waiting:
                self._accept(name, stream, stamp_ns, payload)

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
        """Release everything buffered, an old epoch before the next (end of a bag: nothing more comes)."""
        while self._ending:
            self._next_epoch()
        self._ready.extend(self._pop_until(None))
        return self.ready()

    @property
    def pending(self) -> int:
        """Messages accepted and not yet released (both epochs)."""
        return len(self._heap) + sum(len(s.next_epoch or ()) for s in self._streams.values())
