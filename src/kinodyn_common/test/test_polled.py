"""Polled subscriptions over DDS in one process: what the owner's topic carries is taken when asked (newest,
or all in order), nothing is taken twice, the owner's executor never runs for them, and the owner's
namespace resolves the topic."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from kinodyn_common.node_runner import make_executor
from kinodyn_common.polled import PolledSubscriptions
from rclpy.node import Node
from rclpy.qos import QoSProfile
from std_msgs.msg import Int32

if TYPE_CHECKING:
    from rclpy.context import Context
    from rclpy.publisher import Publisher

MATCH_TIMEOUT = 10.0  # s of wall time for discovery within the process


def _matched(publisher: Publisher[Int32], count: int) -> None:
    deadline = time.monotonic() + MATCH_TIMEOUT
    while publisher.get_subscription_count() < count:
        assert time.monotonic() < deadline, "the polled subscriptions never matched the publisher"
        time.sleep(0.01)


def _publish(publisher: Publisher[Int32], values: range) -> None:
    for value in values:
        publisher.publish(Int32(data=value))
    time.sleep(0.2)  # delivery within the process


def test_newest_and_all_take_what_arrived_once_and_no_callback_runs(ros_context: Context) -> None:
    owner = Node("owner", namespace="/robot", context=ros_context)
    source = Node("source", context=ros_context)
    polled = PolledSubscriptions(owner)
    latest = polled.subscribe(Int32, "counter", QoSProfile(depth=1), raw=True)
    every = polled.subscribe(Int32, "counter", QoSProfile(depth=100))
    assert latest.topic_name == every.topic_name == "/robot/counter"
    publisher = source.create_publisher(Int32, "/robot/counter", QoSProfile(depth=100))
    executor = make_executor([owner])
    executor.add_node(owner)
    try:
        _matched(publisher, 2)
        assert polled.newest(latest) is None
        assert polled.all(every) == []
        _publish(publisher, range(5))
        for _ in range(20):  # the owner spun: the helper's subscriptions are not its
            executor.spin_once(timeout_sec=0.01)
        newest = polled.newest(latest)
        assert isinstance(newest, bytes)
        assert newest[-4:] == (4).to_bytes(4, "little")  # CDR little endian: the int32 4
        assert polled.newest(latest) is None
        assert [msg.data for msg in polled.all(every)] == [0, 1, 2, 3, 4]
        assert polled.all(every) == []
        _publish(publisher, range(5, 7))
        assert polled.take(every) == Int32(data=5)
        assert [msg.data for msg in polled.all(every)] == [6]
    finally:
        executor.shutdown()
        polled.destroy()
        source.destroy_node()
        owner.destroy_node()


def test_received_takes_every_message_with_its_reception_time(ros_context: Context) -> None:
    """``received`` gives every held message in order, each stamped by the middleware on the system clock
    between the publish call and the take (a second source: this process's own clock around them)."""
    owner = Node("owner", context=ros_context)
    source = Node("source", context=ros_context)
    polled = PolledSubscriptions(owner)
    every = polled.subscribe(Int32, "counter", QoSProfile(depth=100), raw=True)
    publisher = source.create_publisher(Int32, "/counter", QoSProfile(depth=100))
    try:
        _matched(publisher, 1)
        assert polled.received(every) == []
        before = time.time_ns()
        _publish(publisher, range(3))
        after = time.time_ns()
        taken = polled.received(every)
        assert [data[-4:] for _, data in taken] == [k.to_bytes(4, "little") for k in range(3)]
        times = [t_ns for t_ns, _ in taken]
        assert times == sorted(times)
        assert before <= times[0]
        assert times[-1] <= after
        assert polled.received(every) == []
    finally:
        polled.destroy()
        source.destroy_node()
        owner.destroy_node()
