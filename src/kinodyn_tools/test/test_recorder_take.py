"""`kinodyn bag record`'s takes in one process over DDS: what the polled subscriptions hold is written in the
order of reception at the recorder's clock of its reception (bags.reception_clock), and /clock bytes are
read as rclpy writes them. Second sources: rclpy's serialize_message for the /clock bytes, this process's
clock around the publish calls for reception times, the bag read back by kinodyn's reader."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from kinodyn_common.problem_log import DistinctProblemLog
from kinodyn_common.stamps import NS, ns_to_stamp
from kinodyn_tools.bags import read_messages
from kinodyn_tools.bags.reception_clock import ReceptionClock, clock_ns
from kinodyn_tools.bags.record import Recorder
from kinodyn_tools.bags.writer import BagWriter
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.serialization import serialize_message
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Int32

if TYPE_CHECKING:
    from pathlib import Path

    from rclpy.context import Context
    from rclpy.publisher import Publisher

    from conftest import RecordingLogger

MATCH_TIMEOUT = 10.0  # s of wall time for discovery within the process
QOS = QoSProfile(depth=100)


def _clock(t_ns: int) -> Clock:
    return Clock(clock=ns_to_stamp(t_ns))


def test_clock_bytes_read_as_rclpy_writes_them() -> None:
    for t_ns in (0, 1, 12 * NS + 345_678_901, (2**31 - 1) * NS + NS - 1):
        assert clock_ns(serialize_message(_clock(t_ns))) == t_ns
    big_endian = b"\x00\x00\x00\x00" + (7).to_bytes(4, "big") + (5).to_bytes(4, "big")
    assert clock_ns(big_endian) == 7 * NS + 5


@pytest.mark.parametrize("data", [b"", b"\x00\x01\x00\x00\x01\x00", b"\x07\x07\x00\x00" + bytes(8),
                                  b"\x00\x01\x00\x00" + (-1).to_bytes(4, "little", signed=True) + bytes(4),
                                  b"\x00\x01\x00\x00" + bytes(4) + NS.to_bytes(4, "little")])
def test_clock_bytes_that_are_no_time_are_refused(data: bytes) -> None:
    with pytest.raises(ValueError, match=r"Clock|not a time"):
        clock_ns(data)


class _Held:
    """Stands in for the polled /clock subscription: what a test feeds is what the next take gets."""

    def __init__(self) -> None:
        self.queue: list[tuple[int, bytes]] = []

    def subscribe(self, *args: object, **kwargs: object) -> str:
        return "/clock"

    def received(self, subscription: str) -> list[tuple[int, bytes]]:
        taken, self.queue = self.queue, []
        return taken


def test_reception_clock_gives_the_newest_clock_received_before(logger: RecordingLogger) -> None:
    held = _Held()
    clock = ReceptionClock(held, DistinctProblemLog(logger))  # type: ignore[arg-type]
    assert clock.now() == 0
    held.queue = [(100, serialize_message(_clock(5 * NS))), (200, b"\x00\x01"),
                  (300, serialize_message(_clock(6 * NS)))]
    clock.take()
    assert len(logger.lines) == 1
    assert "ignoring a /clock message" in logger.lines[0][1]
    assert [clock.at(t) for t in (99, 100, 299, 300, 10**6)] == [0, 5 * NS, 5 * NS, 6 * NS, 6 * NS]
    assert clock.now() == 6 * NS
    clock.forget_before(350)  # the /clock of 300 is kept: messages of 300 and later need it
    assert [clock.at(t) for t in (150, 300, 400)] == [5 * NS, 6 * NS, 6 * NS]
    system = ReceptionClock(None, DistinctProblemLog(logger))
    assert system.at(1234) == 1234
    assert abs(system.now() - time.time_ns()) < NS


def _data(message: Any) -> int:  # noqa: ANN401  (rosbags builds the message classes at run time)
    return int(message.data)


def _matched(publishers: list[Publisher[Int32]]) -> None:
    deadline = time.monotonic() + MATCH_TIMEOUT
    while any(p.get_subscription_count() == 0 for p in publishers):
        assert time.monotonic() < deadline, "the recorder never subscribed"
        time.sleep(0.01)


def _close(recorder: Recorder, *nodes: Node) -> None:
    """The recorder and its bag closed, then ``nodes`` destroyed."""
    recorder.close()
    recorder.writer.close()
    for node in nodes:
        node.destroy_node()


def test_take_writes_in_reception_order_at_the_clock_of_reception(ros_context: Context,
                                                                  tmp_path: Path) -> None:
    """Two topics and /clock published in turn: the bag holds them interleaved as published, each at the
    /clock published just before it; nothing is subscribed before the first /clock."""
    node = Node("recorder", context=ros_context)
    source = Node("source", context=ros_context)
    clock = source.create_publisher(Clock, "/clock", QOS)
    topics = {name: source.create_publisher(Int32, name, QOS) for name in ("/a", "/b")}
    recorder = Recorder(node, BagWriter(tmp_path / "bag"), list(topics), [], sim_time=True)
    try:
        time.sleep(0.5)  # the graph shows the publishers
        recorder.discover()
        assert all(p.get_subscription_count() == 0 for p in topics.values())
        clock.publish(_clock(NS))
        deadline = time.monotonic() + MATCH_TIMEOUT
        while not recorder.clock_started():
            assert time.monotonic() < deadline, "no /clock taken"
            recorder.take()
            time.sleep(0.01)
        recorder.discover()
        _matched(list(topics.values()))
        for k in range(1, 21):
            clock.publish(_clock(NS + k * 10_000_000))
            topics["/a"].publish(Int32(data=k))
            topics["/b"].publish(Int32(data=100 + k))
            if k == 10:
                time.sleep(0.1)
                recorder.take()
        time.sleep(0.2)  # delivery within the process
        recorder.take(everything=True)
    finally:
        _close(recorder, source, node)
    written = [(topic, t_ns, _data(message)) for topic, _, t_ns, message in read_messages(tmp_path / "bag")]
    assert written == [(topic, NS + k * 10_000_000, value) for k in range(1, 21)
                       for topic, value in (("/a", k), ("/b", 100 + k))]
    assert recorder.counts == {"/a": 20, "/b": 20}
    assert recorder.before_clock == 0


def test_on_the_system_clock_the_bag_time_is_the_reception_time(ros_context: Context, tmp_path: Path) -> None:
    node = Node("recorder", context=ros_context)
    source = Node("source", context=ros_context)
    publisher = source.create_publisher(Int32, "/a", QOS)
    recorder = Recorder(node, BagWriter(tmp_path / "bag"), ["/a"], [], sim_time=False)
    try:
        deadline = time.monotonic() + MATCH_TIMEOUT
        while publisher.get_subscription_count() == 0:
            assert time.monotonic() < deadline, "the recorder never subscribed"
            recorder.discover()
            time.sleep(0.05)
        before = time.time_ns()
        for k in range(5):
            publisher.publish(Int32(data=k))
        after = time.time_ns()
        time.sleep(0.2)
        recorder.take(everything=True)
    finally:
        _close(recorder, source, node)
    written = [(t_ns, _data(message)) for _, _, t_ns, message in read_messages(tmp_path / "bag")]
    assert [value for _, value in written] == list(range(5))
    times = [t_ns for t_ns, _ in written]
    assert times == sorted(times)
    assert before <= times[0]
    assert times[-1] <= after


class _Topics:
    """Stands in for the recorder's polled subscriptions: per subscription, what its next take gets."""

    def __init__(self, held: dict[str, list[tuple[int, bytes]]]) -> None:
        self.held = held

    def received(self, subscription: str) -> list[tuple[int, bytes]]:
        taken, self.held[subscription] = self.held[subscription], []
        return taken


def test_a_topic_keeps_its_delivery_order(ros_context: Context, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A reliable topic's resent sample is delivered after a later one it was received before: it keeps its
    place, with the reception time of the one ahead of it; the other topic's message falls in between."""
    node = Node("recorder", context=ros_context)
    writer = BagWriter(tmp_path / "bag")
    recorder = Recorder(node, writer, ["/a", "/b"], [], sim_time=False)
    try:
        for topic in ("/a", "/b"):
            writer.add_topic(topic, "std_msgs/msg/Int32")
        data = {k: serialize_message(Int32(data=k)) for k in (1, 2, 3)}
        monkeypatch.setattr(recorder, "_subscriptions", {"/a": "/a", "/b": "/b"})
        monkeypatch.setattr(recorder, "_polled", _Topics({"/a": [(300, data[1]), (200, data[2])],
                                                          "/b": [(250, data[3])]}))
        recorder.take()
    finally:
        writer.close()
        node.destroy_node()
    written = [(topic, t_ns, _data(message)) for topic, _, t_ns, message in read_messages(tmp_path / "bag")]
    assert written == [("/b", 250, 3), ("/a", 300, 1), ("/a", 300, 2)]
