"""`kinodyn bag record`: record topics into a rosbag2 bag as `ros2 bag record` does.

Each topic is subscribed raw (the CDR bytes as received, never deserialised) with the type the graph reports,
once a publisher offers it; the subscription requests what every publisher offers (rosbag2's
adapt_request_to_offers: transient_local is kept for /tf_static and /robot_description) and the offered
profiles are stored with the topic. The middleware keeps what arrives (kinodyn_common.polled: no callback, no
executor wake-up per message) and every ``POLL_PERIOD`` the recorder takes all of it, each message with the
time the middleware received it, and writes it in the order of reception. A message's bag time is the
recorder's clock at its reception (bags.reception_clock): the system clock, or with ``--use-sim-time`` the
newest /clock received before it. With ``--use-sim-time`` no topic is subscribed before the first /clock (as
rosbag2 since Jazzy): a latched topic (/tf_static, /robot_description, any transient_local publisher) delivers
its messages when the subscription matches, and before the first /clock they would have no bag time and be
dropped.
SIGINT, SIGTERM or SIGHUP (or ``--duration`` seconds of that clock) closes the bag and writes metadata.yaml,
after the messages already received are written.
What is recorded reaches the disk within ``--chunk-period`` seconds or ``--chunk-size`` bytes, so a SIGKILL or
a power cut loses at most that. A failed write (a full disk) stops the recording with one error line and
leaves the bag closed with what it holds (exit code 1).
"""

from __future__ import annotations

import signal
import time
from bisect import bisect_right
from collections import Counter
from datetime import datetime
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

import rclpy
from kinodyn_common.node_runner import make_executor
from kinodyn_common.polled import PolledSubscriptions
from kinodyn_common.problem_log import DistinctProblemLog
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from kinodyn_tools.bags.mcap_storage import DEFAULT_CHUNK_PERIOD, DEFAULT_CHUNK_SIZE
from kinodyn_tools.bags.message_types import message_class
from kinodyn_tools.bags.qos import from_rclpy, request_for_offers
from kinodyn_tools.bags.reception_clock import ReceptionClock
from kinodyn_tools.bags.writer import STORAGES, BagWriter

if TYPE_CHECKING:
    import argparse
    from types import FrameType

    from rclpy.executors import Executor
    from rclpy.subscription import Subscription

DISCOVERY_PERIOD = 0.1  # s of wall time between looks at the graph (rosbag2 polls every 100 ms)
POLL_PERIOD = 0.01  # s of wall time between two takes of what the middleware holds
_RECEIVED = itemgetter(0)


MAX_CHUNK_PERIOD = 3600.0  # seconds: the longest --chunk-period


class Recorder:
    """Subscribes the wanted topics as publishers appear and writes what arrives to ``writer``; bag times on
    simulated time (/clock) with ``sim_time``."""

    def __init__(self, node: Node, writer: BagWriter, topics: list[str], exclude: list[str],
                 sim_time: bool) -> None:
        self.node = node
        self.writer = writer
        self.topics = set(topics)  # empty: every topic
        self.exclude = set(exclude)
        self.counts: Counter[str] = Counter()
        self.before_clock = 0  # messages dropped because /clock had not started (use_sim_time)
        self.failure: OSError | None = None  # the failed write that stopped the recording
        self._polled = PolledSubscriptions(node)
        self.clock = ReceptionClock(self._polled if sim_time else None, DistinctProblemLog(node.get_logger()))
        self._subscriptions: dict[str, Subscription[bytes]] = {}
        self._refused: set[str] = set()
        self._received: list[tuple[int, str, bytes]] = []  # (reception ns, topic, bytes) taken, not written
        self._latest: dict[str, int] = {}  # per topic: the reception time of its newest message taken
        self.first_time_ns: int | None = None

    def clock_started(self) -> bool:
        """Whether the recorder's clock gives bag times: always on system time, after the first /clock on
        simulated time."""
        return self.clock.now() > 0

    def discover(self) -> None:
        """Subscribe every wanted topic that has a publisher now and is not subscribed yet (on simulated time
        only once /clock has started, so that latched messages arrive with a bag time)."""
        every_topic_taken = self.topics and self.topics <= self._subscriptions.keys() | self._refused
        if not self.clock_started() or every_topic_taken:
            return
        for topic, types in self.node.get_topic_names_and_types():
            wanted = topic in self.topics if self.topics else topic not in self.exclude
            if wanted and topic not in self._subscriptions and topic not in self._refused:
                self._subscribe(topic, types)

    def _refuse(self, topic: str, reason: str) -> None:
        self._refused.add(topic)
        self.node.get_logger().error(f"not recording {topic}: {reason}")

    def _subscribe(self, topic: str, types: list[str]) -> None:
        publishers = [
            info for info in self.node.get_publishers_info_by_topic(topic) if info.topic_type == types[0]
        ]
        if not publishers:
            return  # only subscribers so far: the offered QoS is unknown until a publisher appears
        msgtype = types[0]
        if len(types) > 1:
            self.node.get_logger().warning(f"{topic} carries several types {types}; recording {msgtype} only")
        cls = message_class(msgtype)
        if cls is None or msgtype not in self.writer.typestore.fielddefs:
            self._refuse(topic, f"its type {msgtype} is not installed here; source the workspace that has it")
            return
        graph_hash = publishers[0].topic_type_hash
        stored_hash = self.writer.typestore.hash_rihs01(msgtype)
        if str(graph_hash).startswith("RIHS01_") and str(graph_hash) != stored_hash:
            self.node.get_logger().warning(
                f"{topic}: the publisher's {msgtype} ({graph_hash}) differs from the installed definition "
                f"({stored_hash}) that the bag stores; rebuild the interfaces so that they agree"
            )
        offers = [from_rclpy(info.qos_profile) for info in publishers]
        try:
            self.writer.add_topic(topic, msgtype, qos=offers, type_hash=stored_hash)
        except OSError as error:
            self.failure = error
            return
        self._subscriptions[topic] = self._polled.subscribe(cls, topic, request_for_offers(offers), raw=True)

    def take(self, everything: bool = False) -> None:
        """Write what the subscriptions hold, in the order of reception, at its bag time. A topic's messages
        keep the order the middleware delivers them in: one received before the message ahead of it (a
        reliable topic's resent sample) counts as received with that one. A message received after this take
        began waits for the next one (one of another topic received after it may not have been taken yet),
        unless ``everything``: the last take."""
        began = time.time_ns()
        self.clock.take()
        received = self._received
        for topic, subscription in self._subscriptions.items():
            latest = self._latest.get(topic, 0)
            for t_ns, data in self._polled.received(subscription):
                latest = max(latest, t_ns or began)
                received.append((latest, topic, data))
            self._latest[topic] = latest
        received.sort(key=_RECEIVED)  # stable: each topic's messages stay in their order
        ready = len(received) if everything else bisect_right(received, began, key=_RECEIVED)
        for t_ns, topic, data in received[:ready]:
            self._write(topic, self.clock.at(t_ns), data)
        del received[:ready]
        self.clock.forget_before(began)

    def _write(self, topic: str, t_ns: int, data: bytes) -> None:
        if t_ns == 0:
            self.before_clock += 1
            return
        if self.failure is not None:
            return
        if self.first_time_ns is None:
            self.first_time_ns = t_ns
        try:
            self.writer.write(topic, t_ns, data)
        except OSError as error:
            self.failure = error
            return
        self.counts[topic] += 1

    def close(self) -> None:
        """Destroy the subscriptions (the helper node that holds them)."""
        self._polled.destroy()

    def flush_due(self) -> None:
        """Write what has waited ``--chunk-period`` (a failed write stops the recording)."""
        if self.failure is None:
            try:
                self.writer.flush_due()
            except OSError as error:
                self.failure = error

    def elapsed(self) -> float:
        """Seconds of the recorder's clock since the first recorded message (0 before it)."""
        if self.first_time_ns is None:
            return 0.0
        return (self.clock.now() - self.first_time_ns) * 1e-9

    def progress(self) -> str:
        per_topic = ", ".join(f"{topic} {count}" for topic, count in sorted(self.counts.items()))
        waiting = sorted(self.topics - set(self._subscriptions) - self._refused)
        line = f"{sum(self.counts.values())} messages ({per_topic or 'none yet'})"
        if waiting:
            line += f"; waiting for a publisher on {', '.join(waiting)}"
        if self.before_clock:
            line += f"; {self.before_clock} dropped before the first /clock"
        if not self.clock_started():
            line += "; waiting for the first /clock before subscribing"
        return line

    def failure_line(self, output: Path) -> str:
        """The one line that says a write failed, what the bag holds and what was lost."""
        error, writer = self.failure, self.writer
        assert error is not None
        held = writer.on_disk
        summary = "" if writer.finished else (" without its MCAP summary (kinodyn reads it as it is; "
                                               "`kinodyn bag reindex` completes it once there is space)")
        return (f"cannot write {error.filename or output}: {error.strerror or error}; recording stopped. "
                f"The bag {output} is closed{summary} and holds {held} messages; the {writer.lost} taken "
                "after its last write are lost. Free space (or choose another disk with -o) and record again")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topics", nargs="*", help="topics to record (or --all)")
    parser.add_argument("-a", "--all", action="store_true", help="record every topic of the graph")
    parser.add_argument(
        "--exclude", nargs="+", default=[], metavar="TOPIC", help="with --all: topics not to record"
    )
    parser.add_argument("-o", "--output", help="bag directory to create (default rosbag2_<date>-<time>)")
    parser.add_argument("-s", "--storage", choices=sorted(STORAGES), default="mcap", help="default mcap")
    parser.add_argument(
        "--use-sim-time", action="store_true", help="bag time from /clock instead of the system clock"
    )
    parser.add_argument(
        "--duration", type=float, metavar="SECONDS",
        help="stop after this many seconds of the recorder's clock (simulated time with --use-sim-time), "
        "counted from the first recorded message",
    )
    parser.add_argument(
        "--progress-period", type=float, default=5.0, metavar="SECONDS",
        help="wall seconds between progress lines (default 5)",
    )
    parser.add_argument(
        "--chunk-period", type=float, default=DEFAULT_CHUNK_PERIOD, metavar="SECONDS",
        help=f"what is recorded reaches the disk at most this many wall seconds after it arrived "
        f"(default {DEFAULT_CHUNK_PERIOD:g}): the most a crash can lose",
    )
    parser.add_argument(
        "--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, metavar="BYTES",
        help=f"... or once this many bytes are waiting (default {DEFAULT_CHUNK_SIZE})",
    )


def _check(args: argparse.Namespace) -> str | None:
    """The usage error of these arguments, None when they are fine."""
    if bool(args.topics) == bool(args.all):
        return "give the topics to record, or --all (not both)"
    if args.exclude and not args.all:
        return "--exclude goes with --all"
    if args.duration is not None and not args.duration > 0:
        return f"--duration must be positive, got {args.duration:g}"
    if not args.progress_period > 0:
        return f"--progress-period must be positive, got {args.progress_period:g}"
    if not 0 < args.chunk_period <= MAX_CHUNK_PERIOD:
        return f"--chunk-period must be in (0, {MAX_CHUNK_PERIOD:g}] seconds, got {args.chunk_period:g}"
    if not 0 < args.chunk_size <= 1 << 30:
        return f"--chunk-size must be in [1, {1 << 30}] bytes, got {args.chunk_size}"
    output = Path(args.output) if args.output else None
    if output is not None and output.exists():
        return f"{output} exists; give a new bag directory with -o"
    return None


def _record(recorder: Recorder, executor: Executor, args: argparse.Namespace, stop: list[int]) -> None:
    """Discover, take messages every ``POLL_PERIOD``, write what is due and log progress until a stop signal,
    ``--duration`` or a failed write; then the messages already received are written too. The executor
    spins the recorder's node in between (its parameter services; the recorded topics are polled)."""
    log = recorder.node.get_logger()
    next_discovery = time.monotonic()
    next_progress = next_discovery + args.progress_period
    while not stop and recorder.failure is None and (
            args.duration is None or recorder.elapsed() < args.duration):
        recorder.flush_due()
        now = time.monotonic()
        if now >= next_discovery:
            recorder.discover()
            next_discovery = now + DISCOVERY_PERIOD
        if now >= next_progress:
            log.info(recorder.progress())
            next_progress = now + args.progress_period
        executor.spin_once(timeout_sec=POLL_PERIOD)
        recorder.take()
    recorder.take(everything=True)


def run(args: argparse.Namespace) -> int:
    """Record until SIGINT/SIGTERM/SIGHUP or --duration; exit code 0 with a closed bag, 2 on a usage error, 1
    when a write failed (the bag is closed with what it holds)."""
    error = _check(args)
    if error is not None:
        print(f"kinodyn bag record: error: {error}", flush=True)
        return 2
    output = Path(args.output or datetime.now().strftime("rosbag2_%Y_%m_%d-%H_%M_%S"))
    stop: list[int] = []

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.append(signum)

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGHUP, request_stop)
    node = Node("kinodyn_bag_recorder")  # its own clock is not used: the recorder's is ReceptionClock
    executor = make_executor([node])
    executor.add_node(node)
    log = node.get_logger()
    try:
        try:
            writer = BagWriter(output, storage=args.storage, chunk_size=args.chunk_size,
                               chunk_period=args.chunk_period)
        except OSError as exc:
            log.error(f"cannot create the bag {output}: {exc.strerror or exc}; choose another place "
                      "with -o")
            return 1
        recorder = Recorder(node, writer, args.topics, args.exclude, args.use_sim_time)
        log.info(f"recording to {output} ({args.storage}); Ctrl-C stops and closes the bag")
        try:
            with writer:
                _record(recorder, executor, args, stop)
        except OSError as error:  # metadata.yaml could not be written on closing
            recorder.failure = recorder.failure or error
        finally:
            recorder.close()
        if recorder.failure is not None:
            log.error(recorder.failure_line(output))
            return 1
        log.info(f"bag {output} closed: {recorder.progress()}")
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
