"""kinodyn_common.realtime_publisher: a RealtimePublisher queues, the publishing thread publishes in order
(the bytes a subscriber gets are the message's), ``stop`` publishes what is queued first, a message for a
destroyed publisher and a backlog beyond MAX_BACKLOG are dropped (the backlog with one line), and without a
publishing thread the caller publishes."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import pytest
import rclpy
from kinodyn_common.realtime_publisher import MAX_BACKLOG, PublishingThread, RealtimePublisher
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.serialization import serialize_message
from std_msgs.msg import String

from kinodyn_common import realtime_publisher

if TYPE_CHECKING:
    from collections.abc import Iterator


class Lines:
    """A logger recording its lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def warning(self, message: str, /) -> None:
        self.lines.append(message)

    def error(self, message: str, /) -> None:
        self.lines.append(message)


class Graph:
    """A publishing node and a subscribing node in this process, spun on demand."""

    def __init__(self) -> None:
        self.node = Node("realtime_publisher_test")
        self.received: list[str] = []
        self.node.create_subscription(String, "rt_topic", lambda m: self.received.append(m.data), 1000)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)

    def publisher(self) -> RealtimePublisher[String]:
        publisher = self.node.create_publisher(String, "rt_topic", 1000, publisher_class=RealtimePublisher)
        assert isinstance(publisher, RealtimePublisher)
        deadline = time.monotonic() + 10.0
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
        return publisher

    def receive(self, count: int, timeout: float = 10.0) -> list[str]:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
        return self.received


@pytest.fixture
def graph() -> Iterator[Graph]:
    rclpy.init()
    try:
        yield Graph()
    finally:
        rclpy.try_shutdown()


def test_the_publishing_thread_publishes_in_order_and_stop_drains_the_queue(graph: Graph) -> None:
    publisher = graph.publisher()
    thread = PublishingThread(Lines())
    thread.start()
    try:
        with pytest.raises(RuntimeError, match="already runs a publishing thread"):
            PublishingThread(Lines()).start()
        sent = [str(k) for k in range(300)]

        def publish_all() -> None:
            for text in sent:
                publisher.publish(String(data=text))

        publish_thread = threading.Thread(target=publish_all)
        publish_thread.start()  # from another thread, as the control loop does
        publish_thread.join()
        publisher.publish(serialize_message(String(data="as bytes")))
        with pytest.raises(TypeError, match="Expected"):
            publisher.publish(42)
    finally:
        thread.stop()
    assert thread.published == len(sent) + 1  # every one published before stop returned
    assert graph.receive(len(sent) + 1) == [*sent, "as bytes"]
    publisher.publish(String(data="after stop"))  # no publishing thread: published by the caller
    assert thread.published == len(sent) + 1
    assert graph.receive(len(sent) + 2)[-1] == "after stop"


def test_a_destroyed_publisher_s_messages_and_a_backlog_are_dropped(graph: Graph) -> None:
    gone, kept = graph.publisher(), graph.publisher()
    lines = Lines()
    thread = PublishingThread(lines)
    thread.put(gone, serialize_message(String(data="for a destroyed publisher")))
    for k in range(MAX_BACKLOG + 4):
        thread.put(kept, serialize_message(String(data=str(k))))  # queued before the thread runs
    graph.node.destroy_publisher(gone)
    thread.start()
    thread.stop()
    assert thread.published == MAX_BACKLOG - 1  # the queue held MAX_BACKLOG messages, one for `gone`
    assert thread.dropped == 5
    assert any("dropped 5 message(s)" in line for line in lines.lines), lines.lines
    received = graph.receive(MAX_BACKLOG - 1)
    assert received == [str(k) for k in range(MAX_BACKLOG - 1)]
    assert realtime_publisher._active is None  # noqa: SLF001  (stopped: no publishing thread in the process)
