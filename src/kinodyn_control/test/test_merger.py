"""StampMerger: header-stamp order, independence of the arrival interleaving, dead streams, jumps back.

The expected order is computed by a second, direct route: drop every message not stamped after the newest of
its own stream, then ``sorted`` by (stamp, stream rank, index in the stream).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from kinodyn_control.estimation.merger import Event, Reset, StampMerger, Verdict

STREAMS = ("imu", "contacts", "joint_states")
MS = 1_000_000
NEVER = 10**18  # a stream timeout no test reaches: only the watermark releases


def streams_with_faults(seed: int) -> dict[str, list[int]]:
    """Per-stream stamps (ns): 500 Hz IMU, 100 Hz contacts, 250 Hz joints, each with duplicated and swapped
    messages and a gap, on a common time base with equal stamps across streams."""
    rng = random.Random(seed)
    result = {}
    for name, period in (("imu", 2 * MS), ("contacts", 10 * MS), ("joint_states", 4 * MS)):
        stamps = [1_000 * MS + k * period for k in range(300)]
        for _ in range(8):
            i = rng.randrange(1, len(stamps) - 1)
            if rng.random() < 0.5:
                stamps.insert(i, stamps[i])  # duplicate
            else:
                stamps[i], stamps[i + 1] = stamps[i + 1], stamps[i]  # out of order
        gap = rng.randrange(50, 250)
        del stamps[gap : gap + 5]  # a dropout of five periods (at most 50 ms)
        result[name] = stamps
    return result


def expected_order(streams: dict[str, list[int]]) -> list[tuple[int, str, int]]:
    kept = []
    for rank, name in enumerate(STREAMS):
        newest = None
        for index, stamp in enumerate(streams[name]):
            if newest is None or stamp > newest:
                kept.append((stamp, rank, index, name))
                newest = stamp
    return [(stamp, name, index) for stamp, _, index, name in sorted(kept)]


def feed(merger: StampMerger, arrivals: list[tuple[str, int, int]]) -> tuple[list, list[Verdict]]:
    released: list = []
    verdicts = []
    for name, index, stamp in arrivals:
        verdicts.append(merger.push(name, stamp, index))
        released.extend(merger.ready())
    released.extend(merger.flush())
    return [(e.stamp_ns, e.stream, e.payload) for e in released], verdicts


def interleave(streams: dict[str, list[int]], rng: random.Random, max_lag_ns: int | None) -> list:
    """One arrival order keeping each stream's own order: fully random when ``max_lag_ns`` is None, else
    each message arriving at its nominal stamp plus a random lag below ``max_lag_ns``."""
    if max_lag_ns is None:
        queues = {name: list(enumerate(stamps)) for name, stamps in streams.items()}
        arrivals = []
        while any(queues.values()):
            name = rng.choice([n for n, q in queues.items() if q])
            index, stamp = queues[name].pop(0)
            arrivals.append((name, index, stamp))
        return arrivals
    timed = []
    for name, stamps in streams.items():
        clock = 0
        for index, stamp in enumerate(stamps):
            clock = max(clock + 1, stamp + rng.randrange(max_lag_ns))  # a stream arrives in its own order
            timed.append((clock, rng.random(), name, index, stamp))
    return [(name, index, stamp) for _, _, name, index, stamp in sorted(timed)]


@pytest.mark.parametrize("seed", range(3))
def test_output_depends_only_on_each_streams_order(seed: int) -> None:
    streams = streams_with_faults(seed)
    expected = expected_order(streams)
    rng = random.Random(100 + seed)
    outputs = []
    # with a timeout, a stream must not fall stream_timeout behind on arrival: its gaps (at most 70 ms of
    # stamps) plus the arrival lag stay below the 100 ms timeout
    for max_lag in (None, None, None, 20 * MS, 25 * MS):
        merger = StampMerger(STREAMS, NEVER if max_lag is None else 100 * MS, 1_000 * MS)
        released, _ = feed(merger, interleave(streams, rng, max_lag))
        outputs.append(released)
        assert merger.counts.late == merger.counts.stale == merger.counts.resets == 0
        assert merger.counts.duplicate == sum(len(s) for s in streams.values()) - len(expected)
    assert all(out == expected for out in outputs)
    stamps = [stamp for stamp, _, _ in expected]
    assert stamps == sorted(stamps)
    assert len(set(stamps)) < len(stamps)  # equal stamps across streams occur


def test_equal_stamps_release_imu_then_contacts_then_joint_states() -> None:
    merger = StampMerger(STREAMS, NEVER, 1_000 * MS)
    for name in ("joint_states", "contacts", "imu"):
        assert merger.push(name, 5 * MS, name) is Verdict.ACCEPTED
    assert [e.stream for e in merger.ready()] == ["imu", "contacts", "joint_states"]


def test_release_waits_for_every_live_stream() -> None:
    merger = StampMerger(("imu", "joint_states"), 100 * MS, 1_000 * MS)
    for k in range(5):
        merger.push("imu", k * 2 * MS, k)
    assert merger.ready() == []
    assert merger.pending == 5  # joints not heard yet, within the timeout
    merger.push("joint_states", 4 * MS, "j")
    assert [(e.stamp_ns, e.stream) for e in merger.ready()] == [
        (0, "imu"), (2 * MS, "imu"), (4 * MS, "imu"), (4 * MS, "joint_states")
    ]


def test_a_silent_stream_is_left_out_after_the_timeout_and_its_late_messages_dropped() -> None:
    merger = StampMerger(("imu", "joint_states"), 100 * MS, 1_000 * MS)
    merger.push("joint_states", 0, "j0")
    for k in range(1, 60):  # imu to 118 ms: the joints (newest 0) fall more than 100 ms behind at 102 ms
        merger.push("imu", 2 * k * MS, k)
    assert merger.excluded == {"joint_states"}
    released = merger.ready()
    assert released[-1].stamp_ns == 118 * MS
    assert len(released) == 60
    assert merger.push("joint_states", 50 * MS, "late") is Verdict.LATE
    assert merger.counts.late == 1
    assert merger.counts.by_stream == {"imu": 0, "joint_states": 1}
    assert merger.excluded == {"joint_states"}  # 50 ms was not taken: the stream is still behind
    assert merger.push("joint_states", 120 * MS, "back") is Verdict.ACCEPTED
    assert merger.excluded == frozenset()
    merger.push("imu", 122 * MS, "after")
    assert [e.payload for e in merger.ready()] == ["back"]  # 122 ms waits for the joints again


def test_a_jump_back_waits_for_every_stream_then_resets_once() -> None:
    merger = StampMerger(("imu", "joint_states"), 100 * MS, 1_000 * MS)
    for k in range(10):
        merger.push("imu", (5_000 + 2 * k) * MS, ("imu", k))
        merger.push("joint_states", (5_000 + 2 * k) * MS, ("joint_states", k))
    merger.push("imu", 5_020 * MS, "last of the old epoch")
    merger.ready()
    assert merger.push("imu", 3 * MS, "first of the new epoch") is Verdict.RESET
    assert merger.push("imu", 5 * MS, "second of the new epoch") is Verdict.ACCEPTED
    assert merger.push("joint_states", 5_020 * MS, "joints finish the old epoch") is Verdict.ACCEPTED
    assert merger.push("joint_states", 3 * MS, "joints jump too") is Verdict.RESET
    released = merger.ready()
    assert [r.payload if isinstance(r, Event) else r for r in released] == [
        "last of the old epoch",
        "joints finish the old epoch",
        Reset("imu", 5_020 * MS, 3 * MS),
        "first of the new epoch",
        "joints jump too",
    ]
    assert merger.counts.resets == 1
    assert merger.pending == 1  # the imu at 5 ms waits for the joints


def test_a_stream_silent_at_the_jump_is_left_behind_and_its_old_messages_are_stale() -> None:
    merger = StampMerger(("imu", "joint_states"), 100 * MS, 1_000 * MS)
    merger.push("joint_states", 5_000 * MS, "j", arrival_ns=0)
    merger.push("imu", 5_000 * MS, "i", arrival_ns=0)
    assert [e.payload for e in merger.ready()] == ["i", "j"]
    merger.push("imu", 3 * MS, "new epoch", arrival_ns=50 * MS)
    assert merger.ready() == []  # the joints arrived 50 ms ago: they may still finish the old epoch
    merger.push("imu", 5 * MS, "new epoch 2", arrival_ns=150 * MS)  # 150 ms without joints: silent
    assert merger.ready() == [Reset("imu", 5_000 * MS, 3 * MS)]  # the new epoch waits for the joints...
    merger.push("imu", 200 * MS, "new epoch 3", arrival_ns=300 * MS)  # ...for stream_timeout again
    assert [e.payload for e in merger.ready()] == ["new epoch", "new epoch 2", "new epoch 3"]
    assert merger.push("joint_states", 5_002 * MS, "old", arrival_ns=310 * MS) is Verdict.STALE
    assert merger.push("joint_states", 7 * MS, "back, too late", arrival_ns=320 * MS) is Verdict.LATE
    assert merger.push("joint_states", 300 * MS, "back", arrival_ns=330 * MS) is Verdict.ACCEPTED
    assert merger.counts.resets == 1


def test_with_arrival_times_a_stream_behind_in_stamps_but_arriving_is_waited_for() -> None:
    """A busy executor hands each topic one message per round: the 100 Hz stream runs ahead in stamps.
    Nothing is left out while every stream keeps arriving, so the order stays the stamp order."""
    merger = StampMerger(("imu", "contacts"), 100 * MS, 1_000 * MS)
    released = []
    for k in range(200):  # one message of each per round, arrival 1 ms apart
        merger.push("imu", 2 * k * MS, k, arrival_ns=2 * k * MS)
        merger.push("contacts", 10 * k * MS, k, arrival_ns=2 * k * MS + MS)
        released += merger.ready()
    assert merger.excluded == frozenset()
    assert merger.counts.late == 0
    assert [e.stamp_ns for e in released] == sorted(e.stamp_ns for e in released)
    assert released[-1].stamp_ns == 398 * MS  # the imu's newest: contacts beyond it wait
    for k in range(200, 1045):  # the contacts stopped at 1990 ms: silent once 100 ms behind (2090 ms)
        merger.push("imu", 2 * k * MS, k, arrival_ns=2 * k * MS)
        assert merger.excluded == (frozenset({"contacts"}) if 2 * k > 2090 else frozenset())


def test_a_small_step_back_is_a_dropped_message_not_a_reset() -> None:
    merger = StampMerger(("imu",), 100 * MS, 1_000 * MS)
    merger.push("imu", 2_000 * MS, 0)
    assert merger.push("imu", 1_500 * MS, 1) is Verdict.DUPLICATE
    assert merger.push("imu", 999 * MS, 2) is Verdict.RESET


@pytest.mark.parametrize(
    ("streams", "timeout", "jump"), [((), 1, 1), (("a", "a"), 1, 1), (("a",), 0, 1), (("a",), 1, -1)]
)
def test_bad_construction_is_refused(streams: tuple[str, ...], timeout: int, jump: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        StampMerger(streams, timeout, jump)


def test_flush_ends_a_waiting_epoch_old_events_first() -> None:
    merger = StampMerger(("imu", "joint_states"), 100 * MS, 1_000 * MS)
    merger.push("imu", 5_000 * MS, "old imu")
    merger.push("joint_states", 4_998 * MS, "old joints")
    assert merger.push("imu", 2 * MS, "new imu") is Verdict.RESET  # the joints never jump (the bag ended)
    assert merger.pending == 2
    assert [r.payload if isinstance(r, Event) else r for r in merger.flush()] == [
        "old joints", "old imu", Reset("imu", 5_000 * MS, 2 * MS), "new imu"
    ]
    assert merger.pending == 0


@pytest.mark.parametrize("seed", range(2))
def test_arrival_times_do_not_change_the_output_while_every_stream_arrives(seed: int) -> None:
    """As test_output_depends_only_on_each_streams_order, with arrival times given (a live node): the IMU
    falls behind by up to 300 ms (a backlog building up: more than stream_timeout in stamps) but keeps
    arriving, so nothing is left out. (At start-up a stream not heard for stream_timeout is taken for silent:
    one that never comes cannot be told from a late one.)"""
    streams = streams_with_faults(seed)
    rng = random.Random(200 + seed)
    arrivals = []
    for name, stamps in streams.items():
        clock = 0
        for index, stamp in enumerate(stamps):
            backlog = min(index * 3 * MS // 2, 300 * MS) if name == "imu" else 0
            clock = max(clock + 1, stamp + backlog + rng.randrange(2 * MS))
            arrivals.append((clock, name, index, stamp))
    arrivals.sort()
    merger = StampMerger(STREAMS, 100 * MS, 1_000 * MS)
    released = []
    for clock, name, index, stamp in arrivals:
        merger.push(name, stamp, index, arrival_ns=clock)
        released += merger.ready()
    released += merger.flush()
    assert [(e.stamp_ns, e.stream, e.payload) for e in released] == expected_order(streams)
    assert merger.counts.late == 0  # (the streams end at different stamps: only then is one left out)
    without_arrival = StampMerger(STREAMS, 100 * MS, 1_000 * MS)
    for _, name, index, stamp in arrivals:
        without_arrival.push(name, stamp, index)
    assert without_arrival.counts.late > 0  # judged by stamps alone, the backlog would have cost messages


def push_in_blocks(merger: StampMerger, arrivals: list[tuple[str, int, int]], sizes: list[int]
                   ) -> tuple[list, list[bool]]:
    """``arrivals`` through ``push_block`` in blocks of the given sizes, each block one message after the
    other with ``push`` where push_block declines; the released events and resets, and whether each block
    went through the arrays."""
    names = list(STREAMS)
    released: list = []
    used: list[bool] = []
    start = 0
    for size in sizes:
        block = arrivals[start:start + size]
        start += size
        ranks = np.array([names.index(name) for name, _, _ in block], np.int8)
        stamps = np.array([stamp for _, _, stamp in block], np.int64)
        result = merger.push_block(ranks, stamps, lambda i, block=block: block[i][1])
        used.append(result is not None)
        if result is None:
            for name, index, stamp in block:
                merger.push(name, stamp, index)
            released.extend(merger.ready())
            continue
        for k in result.order.tolist():
            if k < 0:
                released.append(result.carried[-1 - k])
            else:
                name, index, stamp = block[k]
                released.append(Event(stamp, name, index, result.dropped.get(k, {})))
    released.extend(merger.flush())
    return released, used


def arrivals_with(streams: dict[str, list[int]], rng: random.Random) -> list[tuple[str, int, int]]:
    """Each stream in its own order up to 1.55 s (where the IMU ends), arriving at its stamps plus a random
    lag below 30 ms."""
    return [a for a in interleave(streams, rng, 30 * MS) if a[2] <= 1_550 * MS]


@pytest.mark.parametrize("seed", range(4))
def test_push_block_releases_what_push_releases_one_by_one(seed: int) -> None:
    """Blocks of random sizes over streams with duplicates and swaps, then with a stream falling silent and
    a jump back: the arrays release exactly what ``push`` releases (events, their dropped counts, resets)
    and leave the same state; they decline the blocks holding the silence or the jump."""
    rng = random.Random(300 + seed)
    streams = streams_with_faults(seed)
    clean = arrivals_with(streams, rng)
    silent = [a for a in clean if not (a[0] == "contacts" and 1_200 * MS <= a[2] < 1_400 * MS)]
    looped = clean + [(name, index + 1000, stamp) for name, index, stamp in clean]  # jumps back 550 ms
    for arrivals in (clean, silent, looped):
        sizes = []
        while sum(sizes) < len(arrivals):
            sizes.append(rng.choice([1, 2, 7, 50, 400]))
        merger = StampMerger(STREAMS, 100 * MS, 300 * MS)
        released, used = push_in_blocks(merger, arrivals, sizes)
        reference_all = StampMerger(STREAMS, 100 * MS, 300 * MS)
        one_by_one, silent_pushes = [], 0
        for name, index, stamp in arrivals:
            reference_all.push(name, stamp, index)
            one_by_one.extend(reference_all.ready())
            silent_pushes += bool(reference_all.silent)
        one_by_one.extend(reference_all.flush())
        assert released == one_by_one
        assert merger.counts == reference_all.counts
        assert merger.pending == 0
        assert sum(used) >= len(used) // 2  # most blocks go through the arrays
        if arrivals is clean:
            assert all(used)
            assert reference_all.counts.duplicate > 0
        else:
            assert reference_all.counts.resets == 1 if arrivals is looped else silent_pushes > 0
            assert not all(used)  # the silence or the jump was handed over to push


def test_push_block_attaches_drops_to_the_next_released_message_of_the_stream() -> None:
    merger = StampMerger(("imu", "joint_states"), 100 * MS, 1_000 * MS)
    merger.push("imu", 10 * MS, "i0")
    merger.drop("imu", "bad")  # counted before the block: goes with the next accepted imu message
    ranks = np.array([0, 0, 1, 0, 0, 1], np.int8)
    stamps = np.array([10, 12, 12, 11, 14, 13], np.int64) * MS
    result = merger.push_block(ranks, stamps, lambda i: f"m{i}")
    assert result is not None
    assert result.order.tolist() == [-1, 1, 2, 5]  # i0, imu 12, joints 12 and 13 ms; imu 14 ms waits
    assert result.duplicates.tolist() == [0, 3]
    assert result.dropped == {1: {"bad": 1, "duplicate": 1}}
    assert merger.pending == 1
    assert merger.counts.duplicate == 2
    later = merger.push_block(np.array([1], np.int8), np.array([20 * MS]), lambda i: "j20")
    assert later is not None
    assert [(e.payload, e.dropped) for e in later.carried] == [("m4", {"duplicate": 1})]
    assert later.order.tolist() == [-1]
    assert merger.pending == 1  # joints 20 ms wait for the imu


def merger_state(merger: StampMerger) -> tuple:
    """What decides a merger's next verdicts and releases (its private state)."""
    streams = [(s.epoch, s.newest_ns, s.arrival_ns, dict(s.dropped), s.next_epoch)
               for s in merger._streams.values()]  # noqa: SLF001  (the merger's private state under test)
    return (streams, merger._epoch, merger._released_ns, merger._epoch_start_ns, merger._newest_ns,  # noqa: SLF001
            merger._sequence, [entry[:3] for entry in merger._heap], merger.pending)  # noqa: SLF001


def test_push_cycle_releases_what_push_releases_one_by_one() -> None:
    """Cycles of 2 ms (one message of each stream at the cycle's stamp), with a cycle missing its contacts,
    a message counted as dropped, a stall longer than the stream timeout, a repeated cycle and a jump back:
    ``push_cycle`` (falling back to ``push`` when it declines) takes the same events with the same dropped
    counts, and the same resets, as ``push`` alone releases, leaves the same state after every cycle, and
    declines exactly the cycles it cannot take as one."""
    stamps = [1_000 * MS + 2 * MS * k for k in range(200)]
    stamps[120:] = [s + 300 * MS for s in stamps[120:]]  # a stall: 302 ms between two cycles
    stamps.insert(150, stamps[149])  # a cycle repeated (its messages are duplicates)
    stamps += [500 * MS + 2 * MS * k for k in range(30)]  # a jump back (a restarted clock)
    missing_contacts, dropped_at = {40, 41, 170}, 60
    cycled = StampMerger(STREAMS, 100 * MS, 1_000 * MS)
    reference = StampMerger(STREAMS, 100 * MS, 1_000 * MS)
    got, expected, declined = [], [], []
    for k, stamp in enumerate(stamps):
        names = [n for n in STREAMS if not (n == "contacts" and k in missing_contacts)]
        if k == dropped_at:
            cycled.drop("joint_states", "bad")
            reference.drop("joint_states", "bad")
        dropped = cycled.push_cycle(stamp, len(names))
        if dropped is None:
            declined.append(k)
            for name in names:
                cycled.push(name, stamp, f"{name}{k}")
            events = cycled.ready()
        else:  # the events push_cycle took, built from its dropped counts as the pipeline builds its batch
            events = [Event(stamp, n, f"{n}{k}", d) for n, d in zip(STREAMS, dropped, strict=True)]
        got.extend(events)
        for name in names:
            reference.push(name, stamp, f"{name}{k}")
        expected.extend(reference.ready())
        assert merger_state(cycled) == merger_state(reference), k
    got.extend(cycled.flush())
    expected.extend(reference.flush())
    assert got == expected
    assert cycled.counts == reference.counts
    assert reference.counts.resets == 1
    assert any(e.dropped == {"bad": 1} for e in got if e.stream == "joint_states")
    # the first cycle (no stream heard yet), the cycles with no contacts and the one after them (contacts
    # behind), the first after the stall (every stream more than the timeout behind), the repeated one
    # (duplicates) and the first after the jump back (a reset)
    assert declined == [0, 40, 41, 42, 120, 150, 170, 171, 201]


@pytest.mark.parametrize("seed", range(20))
def test_silence_decided_at_once_agrees_with_each_stream(seed: int) -> None:
    """``silent``, ``excluded`` and the watermark skip the stream-by-stream test when no stream is behind
    and no epoch ends: after every push of random streams (steps, duplicates, gaps past the timeout, jumps
    back, with and without arrival times) they equal that test applied to each stream, and both cases
    occur."""
    rng = random.Random(seed)
    merger = StampMerger(STREAMS, 250, 1_000)
    stamps, arrival, seen = dict.fromkeys(STREAMS, 0), 0, set()
    use_arrival = seed % 3 != 0
    for i in range(400):
        name, r = rng.choice(STREAMS), rng.random()
        if r < 0.02:
            stamps[name] -= rng.randint(1_001, 3_000)  # a jump back
        elif r < 0.06:
            stamps[name] -= rng.randint(0, 20)  # duplicate or out of order
        elif r < 0.10:
            stamps[name] += rng.randint(200, 600)  # a gap: the others may fall behind
        else:
            stamps[name] += rng.randint(1, 30)
        arrival += rng.randint(0, 120)
        merger.push(name, stamps[name], i, arrival if use_arrival else None)
        # the merger's private silence test, against its public silent / excluded
        ending = merger._ending  # noqa: SLF001  (the merger's private state under test)
        each = {n: merger._silent(s, ending) for n, s in merger._streams.items()}  # noqa: SLF001
        waiting = {n for n, s in merger._streams.items() if s.next_epoch is not None}  # noqa: SLF001
        assert merger.silent == frozenset(n for n, silent in each.items() if silent and n not in waiting)
        assert merger.excluded == frozenset(n for n, silent in each.items() if silent or n in waiting)
        seen.add(bool(merger.excluded))
        merger.ready()
    assert seen == {False, True}
