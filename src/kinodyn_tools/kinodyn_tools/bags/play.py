"""`kinodyn bag play`: publish a bag's messages again as `ros2 bag play` does.

Messages go out raw (the stored CDR bytes) in bag-time order at their recorded receive timing scaled by
``--rate``, from ``--start-offset`` seconds after the bag's start. Each topic's publisher offers the recorded
profile when every recorded offer agrees (rosbag2's adapt_offer_to_recorded_offers: a latched /tf_static stays
transient_local), else rosbag2's default (reliable, volatile, keep_last 10). ``--clock [HZ]`` publishes
/clock at HZ (40 when given without a value) with the bag time being played; a recorded /clock is then not
replayed. The command ends when the last message is out (or on SIGINT/SIGTERM/SIGHUP).
"""

from __future__ import annotations

import signal
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Any, cast

import rclpy
from kinodyn_common.stamps import ns_to_stamp, seconds_to_ns
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.signals import SignalHandlerOptions
from rosgraph_msgs.msg import Clock

from kinodyn_tools.bags.message_types import message_class
from kinodyn_tools.bags.qos import offer_for_recorded
from kinodyn_tools.bags.reader import BagError, open_bag, select_connections

if TYPE_CHECKING:
    import argparse
    from types import FrameType

    from rclpy.publisher import Publisher
    from rosbags.interfaces import Connection, ConnectionExtRosbag2

    from kinodyn_tools.bags.reader import BagReader

DEFAULT_CLOCK_RATE = 40.0  # Hz of /clock for `--clock` without a value (ros2 bag play)
CLOCK_QOS = QoSProfile(depth=1)  # reliable keep_last 1: matches best-effort and reliable /clock subscribers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag", help="bag directory (the one holding metadata.yaml)")
    parser.add_argument("-r", "--rate", type=float, default=1.0, help="playback speed factor (default 1)")
    parser.add_argument(
        "--clock", type=float, nargs="?", const=DEFAULT_CLOCK_RATE, default=0.0, metavar="HZ",
        help=f"publish /clock at HZ (default {DEFAULT_CLOCK_RATE:g} when given without a value); "
        "a recorded /clock is then not replayed",
    )
    parser.add_argument("--topics", nargs="+", metavar="TOPIC", help="play only these topics")
    parser.add_argument(
        "--start-offset", type=float, default=0.0, metavar="SECONDS", help="start this far into the bag"
    )
    parser.add_argument(
        "-d", "--delay", type=float, default=0.0, metavar="SECONDS", help="wait this long before playing"
    )
    parser.add_argument(
        "--wait-for-subscribers", type=float, default=0.0, metavar="SECONDS",
        help="before playing, wait up to this long until every topic has a matched subscriber",
    )
    parser.add_argument(
        "--wait-for-all-acked", type=float, default=2.0, metavar="SECONDS",
        help="after playing, wait up to this long until every reliable subscriber has acknowledged every "
             "message (0: exit at once; a subscriber still catching up would lose the last messages)",
    )


def _check(args: argparse.Namespace) -> str | None:
    if not args.rate > 0:
        return f"--rate must be positive, got {args.rate:g}"
    for option in ("clock", "start_offset", "delay", "wait_for_subscribers", "wait_for_all_acked"):
        value = getattr(args, option)
        if not value >= 0:
            return f"--{option.replace('_', '-')} must be >= 0, got {value:g}"
    return None


def _clock_message(t_ns: int) -> Clock:
    return Clock(clock=ns_to_stamp(t_ns))


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


class Player:
    """Publishers for the chosen topics of an open bag, and the timed replay of its messages."""

    def __init__(self, node: Node, reader: BagReader, topics: list[str] | None, clock_rate: float) -> None:
        self.node = node
        self.reader = reader
        connections = select_connections(reader, topics)
        if clock_rate > 0 and any(connection.topic == "/clock" for connection in connections):
            node.get_logger().info("--clock given: the recorded /clock is not replayed")
            connections = [connection for connection in connections if connection.topic != "/clock"]
        by_topic: dict[str, list[Connection]] = defaultdict(list)
        for connection in connections:
            by_topic[connection.topic].append(connection)
        self.publishers: dict[str, Publisher[Any]] = {}  # Any: the message classes found at run time
        for topic, topic_connections in by_topic.items():
            msgtype = topic_connections[0].msgtype
            cls = message_class(msgtype)
            if cls is None:
                node.get_logger().error(f"not playing {topic}: its type {msgtype} is not installed here")
                continue
            offers = [qos for connection in topic_connections
                      for qos in cast("ConnectionExtRosbag2", connection.ext).offered_qos_profiles]
            self.publishers[topic] = node.create_publisher(cls, topic, offer_for_recorded(offers))
        self.connections = [c for c in connections if c.topic in self.publishers]
        self.clock = node.create_publisher(Clock, "/clock", CLOCK_QOS) if clock_rate > 0 else None
        self.clock_period = 1.0 / clock_rate if clock_rate > 0 else 0.0
        self.played = 0

    def wait_for_subscribers(self, timeout: float) -> bool:
        """Wait (wall time) until every publisher has a matched subscriber; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(publisher.get_subscription_count() > 0 for publisher in self.publishers.values()):
                return True
            time.sleep(0.05)
        return False

    def wait_for_all_acked(self, timeout: float) -> bool:
        """Wait (wall time) until every reliable subscriber has acknowledged every message published, as
        ``ros2 bag play --wait-for-all-acked``; False on timeout."""
        deadline = time.monotonic() + timeout
        for publisher in self.publishers.values():
            remaining = max(deadline - time.monotonic(), 0.0)
            if not publisher.wait_for_all_acked(Duration(nanoseconds=seconds_to_ns(remaining))):
                return False
        return True

    def play(self, start_offset: float, rate: float) -> None:
        """Publish the messages from ``start_offset`` s into the bag at ``rate`` times the recorded timing."""
        if not self.connections:
            return
        start_ns = self.reader.start_time + seconds_to_ns(start_offset)
        wall_start = time.monotonic()
        next_clock = wall_start

        def bag_time_ns(wall: float) -> int:
            return start_ns + seconds_to_ns((wall - wall_start) * rate)

        for connection, t_ns, raw in self.reader.messages(connections=self.connections, start=start_ns):
            due = wall_start + (t_ns - start_ns) * 1e-9 / rate
            while True:
                now = time.monotonic()
                if self.clock is not None and next_clock <= now:
                    self.clock.publish(_clock_message(bag_time_ns(now)))
                    next_clock = max(next_clock + self.clock_period, now)  # no burst after a stall
                    continue
                if now >= due:
                    break
                time.sleep((due if self.clock is None else min(due, next_clock)) - now)
            self.publishers[connection.topic].publish(bytes(raw))
            self.played += 1


def run(args: argparse.Namespace) -> int:
    """Play the bag; exit code 0 when done or stopped, 2 on a usage error or an unreadable bag."""
    error = _check(args)
    if error is not None:
        print(f"kinodyn bag play: error: {error}", flush=True)
        return 2
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    node = Node("kinodyn_bag_player")
    log = node.get_logger()
    player = None
    try:
        with open_bag(args.bag) as reader:
            player = Player(node, reader, args.topics, args.clock)
            wait = args.wait_for_subscribers
            if wait > 0 and not player.wait_for_subscribers(wait):
                log.warning(f"not every topic has a subscriber after {wait:g} s; playing anyway")
            time.sleep(args.delay)
            player.play(args.start_offset, args.rate)
            log.info(f"played {player.played} messages of {len(player.publishers)} topics from {args.bag}")
            acked = args.wait_for_all_acked
            if acked > 0 and not player.wait_for_all_acked(acked):
                log.warning(f"not every message acknowledged by each reliable subscriber within {acked:g} s; "
                            "exiting anyway (a slow subscriber may miss the last messages)")
    except BagError as error:
        print(f"kinodyn bag play: error: {error}", flush=True)
        return 2
    except KeyboardInterrupt:
        log.info(f"stopped after {player.played if player else 0} messages")
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
