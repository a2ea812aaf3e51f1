"""`kinodyn bag record` and `kinodyn bag play` as processes over DDS (docs/bags.md).

A talker in the test process publishes simulated time on /clock and, per 10 ms step, an Imu stamped with that
time (its content encodes the step), contacts every fifth step and a latched /tf_static once before the
recorder starts. The recorder runs with --use-sim-time for one simulated second; the bag is judged by its
content: every Imu step after the first one recorded, bag times on the simulated clock, /tf_static kept with
its transient_local offer. Then `bag play --clock` replays it to a listener: the same messages in the same
order, /tf_static offered transient_local again, /clock from the player (bag time, not the recorded /clock).

Crashes: a recorder killed with SIGKILL keeps every message it took before the publisher went quiet (its
file read as it is, then reindexed); SIGHUP closes the bag as SIGINT does; a file size limit (the OS's EFBIG,
a full disk as the recorder sees it) stops it with one line and a closed bag of what fit. On simulated time
the latched /tf_static and /robot_description published before the first /clock are recorded.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import time
from typing import TYPE_CHECKING

import pytest
import yaml
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from kinodyn_tools.bags import BagError, read_messages
from kinodyn_tools.bags.mcap_reader import McapFile
from kinodyn_tools.bags.reindex import reindex
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosbags.rosbag2 import Reader
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu
from std_msgs.msg import String

from kinodyn_interfaces.msg import ContactStates
from test.conftest import PYTHON, wait_for
from test.ros_listener import Listener
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from pathlib import Path

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

KINODYN = [PYTHON, "-m", "kinodyn_tools.launcher.cli"]
STEP_NS = 10_000_000
START_NS = 1000 * 1_000_000_000
TOPICS = ["/clock", "/imu/data", "/tf_static", "/contacts"]
RELIABLE = QoSProfile(depth=1000)
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def stamp(t_ns: int) -> Time:
    return Time(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000)


def nanoseconds(time_msg: Time) -> int:
    return time_msg.sec * 1_000_000_000 + time_msg.nanosec


def imu_at(step: int) -> Imu:
    imu = Imu()
    imu.header.stamp = stamp(START_NS + step * STEP_NS)
    imu.header.frame_id = "imu_link"
    imu.linear_acceleration.z = 9.81 + step * 1e-3
    return imu


def record(bag: Path, spawn: ProcessSpawner) -> None:
    talker = Listener("bag_test_talker")
    try:
        node = talker.node
        clock = node.create_publisher(Clock, "/clock", RELIABLE)
        imu = node.create_publisher(Imu, "/imu/data", RELIABLE)
        contacts = node.create_publisher(ContactStates, "/contacts", RELIABLE)
        static = node.create_publisher(TFMessage, "/tf_static", LATCHED)
        static.publish(TFMessage(transforms=[TransformStamped(child_frame_id="imu_link")]))
        recorder = spawn(
            [
                *KINODYN,
                "bag",
                "record",
                "-o",
                str(bag),
                "--use-sim-time",
                "--duration",
                "1.0",
                "--progress-period",
                "1",
                *TOPICS,
            ],
            "record",
        )
        step, deadline = 0, time.monotonic() + 120
        while recorder.poll() is None and time.monotonic() < deadline:
            t_ns = START_NS + step * STEP_NS
            clock.publish(Clock(clock=stamp(t_ns)))
            imu.publish(imu_at(step))
            if step % 5 == 0:
                message = ContactStates(names=["lf_foot"], in_contact=[step % 10 == 0])
                message.header.stamp = stamp(t_ns)
                contacts.publish(message)
            step += 1
            talker.executor.spin_once(timeout_sec=0.005)
        assert wait_for(lambda: recorder.poll() is not None, timeout=30), recorder.log_path.read_text()
        assert recorder.returncode == 0, recorder.log_path.read_text()
    finally:
        talker.close()


def test_record_then_play_with_clock(tmp_path: Path, spawn: ProcessSpawner) -> None:
    bag = tmp_path / "bag"
    record(bag, spawn)
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["version"] == 9
    assert meta["storage_identifier"] == "mcap"
    entries = {e["topic_metadata"]["name"]: e for e in meta["topics_with_message_count"]}
    assert set(entries) == set(TOPICS)
    assert entries["/tf_static"]["message_count"] == 1
    assert (
        entries["/tf_static"]["topic_metadata"]["offered_qos_profiles"][0]["durability"] == "transient_local"
    )
    assert entries["/imu/data"]["topic_metadata"]["offered_qos_profiles"][0]["durability"] == "volatile"
    # one simulated second from the first recorded message (--duration is on the recorder's clock)
    assert STEP_NS * 99 <= meta["duration"]["nanoseconds"] <= STEP_NS * 150
    recorded = [(t, m) for _, _, t, m in read_messages(bag, topics=["/imu/data"])]
    steps = [(nanoseconds(m.header.stamp) - START_NS) // STEP_NS for _, m in recorded]
    assert steps == list(range(steps[0], steps[0] + len(steps)))  # none lost after the first
    assert len(steps) >= 90
    for t_ns, message in recorded:  # bag time = simulated time at reception (not the wall clock's ~1.8e18 ns)
        # a recorder stalled on a loaded machine takes a queued message when /clock (kept last 1) is ahead
        assert -10 * STEP_NS <= t_ns - nanoseconds(message.header.stamp) <= 50 * STEP_NS
        step = (nanoseconds(message.header.stamp) - START_NS) // STEP_NS
        assert message.linear_acceleration.z == imu_at(step).linear_acceleration.z
    times = [t for _, _, t, _ in read_messages(bag)]
    assert times == sorted(times)
    assert times[0] >= START_NS

    listener = Listener("bag_test_listener")
    try:
        node = listener.node
        received: dict[str, list] = {topic: [] for topic in TOPICS}
        static_offers: list = []

        def on_imu(message: Imu) -> None:
            if not static_offers:  # once this process's graph has the player's /tf_static publisher
                static_offers.extend(
                    info.qos_profile for info in node.get_publishers_info_by_topic("/tf_static")
                )
            received["/imu/data"].append(message)

        node.create_subscription(Imu, "/imu/data", on_imu, RELIABLE)
        node.create_subscription(ContactStates, "/contacts", received["/contacts"].append, RELIABLE)
        node.create_subscription(TFMessage, "/tf_static", received["/tf_static"].append, LATCHED)
        node.create_subscription(Clock, "/clock", received["/clock"].append, RELIABLE)
        player = spawn(
            # the player waits (up to 60 s, not its default 2 s) for this reader's acknowledgements before it
            # exits: a reader stalled on a loaded machine keeps the last messages
            [*KINODYN, "bag", "play", str(bag), "--clock", "20", "--wait-for-subscribers", "60",
             "--wait-for-all-acked", "60"], "play"
        )
        # every stream judged below (each topic's reader matches on its own; the last contacts go out with
        # the last Imu)
        assert listener.spin_until(
            lambda: player.poll() is not None and len(received["/imu/data"]) >= len(recorded)
            and len(received["/contacts"]) >= entries["/contacts"]["message_count"]
            and bool(received["/tf_static"]) and len(received["/clock"]) >= 2, timeout=120
        ), player.log_path.read_text()
        assert player.wait(timeout=10) == 0
        listener.spin_for(0.5)
    finally:
        listener.close()
    played = [(nanoseconds(m.header.stamp), m.linear_acceleration.z) for m in received["/imu/data"]]
    assert played == [(nanoseconds(m.header.stamp), m.linear_acceleration.z) for _, m in recorded]
    assert len(received["/contacts"]) == entries["/contacts"]["message_count"]
    assert (
        len(received["/tf_static"]) == 1
    )
    assert (
        received["/tf_static"][0].transforms[0].child_frame_id == "imu_link"
    )
    assert static_offers
    assert all(qos.durability == DurabilityPolicy.TRANSIENT_LOCAL for qos in static_offers)
    clocks = [nanoseconds(m.clock) for m in received["/clock"]]
    assert clocks == sorted(clocks)
    assert clocks[0] >= meta["starting_time"]["nanoseconds_since_epoch"]
    # the player's clock (bag time of the wall instant), not the recorded one (whole 10 ms steps)
    assert sum(clock % STEP_NS == 0 for clock in clocks) <= 1 < len(clocks)


# ---------------------------------------------------------------- crashes, latched topics on simulated time


def imu_steps(bag: Path, copy: Path | None = None) -> list[int]:
    """The Imu steps the bag's MCAP file holds now: read as it is on the disk (from a copy while it is being
    written); none before its /imu/data channel is there."""
    if copy is not None:
        copy.mkdir()
        shutil.copy(bag / f"{bag.name}.mcap", copy / f"{bag.name}.mcap")
        bag = copy
    try:
        return [(nanoseconds(m.header.stamp) - START_NS) // STEP_NS
                for _, _, _, m in read_messages(bag, ["/imu/data"], report=lambda line: None)]
    except (BagError, FileNotFoundError):
        return []


class Talker:
    """/clock and one Imu per 10 ms step of simulated time, published from the test process."""

    def __init__(self, name: str) -> None:
        self.listener = Listener(name)
        self.node = self.listener.node
        self.clock = self.node.create_publisher(Clock, "/clock", RELIABLE)
        self.imu = self.node.create_publisher(Imu, "/imu/data", RELIABLE)
        self.step = 0

    def publish(self, steps: int = 1) -> None:
        for _ in range(steps):
            self.clock.publish(Clock(clock=stamp(START_NS + self.step * STEP_NS)))
            self.imu.publish(imu_at(self.step))
            self.step += 1
            self.listener.executor.spin_once(timeout_sec=0.002)


def test_sigkill_keeps_what_was_written(tmp_path: Path, spawn: ProcessSpawner) -> None:
    """SIGKILL after the publisher went quiet for a while: every step from the first recorded one to the last
    published before the pause is in the file (no metadata.yaml: the recorder never closed), which reads as it
    is and, after `kinodyn bag reindex`, with rosbags' reader."""
    bag = tmp_path / "bag"
    talker = Talker("bag_kill_talker")
    try:
        recorder = spawn([*KINODYN, "bag", "record", "-o", str(bag), "--use-sim-time", "/clock", "/imu/data"],
                         "record")
        deadline = time.monotonic() + 120
        while talker.imu.get_subscription_count() == 0 and time.monotonic() < deadline:
            talker.publish()
        assert talker.imu.get_subscription_count() > 0, recorder.log_path.read_text()
        talker.publish(200)
        quiet_after = talker.step - 1
        polls = iter(range(10**6))
        assert wait_for(lambda: quiet_after in imu_steps(bag, tmp_path / f"poll{next(polls)}"), timeout=60,
                        interval=0.5), recorder.log_path.read_text()
        talker.publish(100)
        os.kill(recorder.pid, signal.SIGKILL)
        assert recorder.wait(timeout=30) == -signal.SIGKILL
    finally:
        talker.listener.close()
    assert not (bag / "metadata.yaml").exists()
    steps = imu_steps(bag)
    assert steps == list(range(steps[0], steps[0] + len(steps)))
    assert steps[-1] >= quiet_after
    reindex(bag, say=lambda line: None)
    with Reader(bag) as reader:
        assert sum(1 for c, _, _ in reader.messages() if c.topic == "/imu/data") == len(steps)


def test_sim_time_records_latched_topics_published_before_the_clock(
    tmp_path: Path, spawn: ProcessSpawner,
) -> None:
    """/tf_static and /robot_description are latched before any /clock exists; the recorder (on simulated
    time) subscribes them only once /clock runs, so both are in the bag with their transient_local offers, at
    a simulated bag time, and with the type hashes the publishers announce. SIGHUP then closes the bag
    cleanly."""
    bag = tmp_path / "bag"
    talker = Talker("bag_latched_talker")
    node = talker.node
    static = node.create_publisher(TFMessage, "/tf_static", LATCHED)
    description = node.create_publisher(String, "/robot_description", LATCHED)
    try:
        static.publish(TFMessage(transforms=[TransformStamped(child_frame_id="imu_link")]))
        description.publish(String(data="<robot name='quadruped'/>"))
        recorder = spawn([*KINODYN, "bag", "record", "-o", str(bag), "--use-sim-time", "/clock", "/imu/data",
                          "/tf_static", "/robot_description"], "record")
        assert talker.listener.spin_until(lambda: "kinodyn_bag_recorder" in node.get_node_names(),
                                          timeout=120)
        talker.listener.spin_for(2.0)  # many discovery rounds of the recorder (one per 0.1 s)
        assert static.get_subscription_count() == 0  # nothing subscribed before the first /clock
        polls = iter(range(10**6))
        deadline = time.monotonic() + 120
        while len(imu_steps(bag, tmp_path / f"poll{next(polls)}")) < 100 and time.monotonic() < deadline:
            talker.publish(50)
        hashes = {topic: str(node.get_publishers_info_by_topic(topic)[0].topic_type_hash)
                  for topic in ("/tf_static", "/robot_description", "/imu/data")}
        os.kill(recorder.pid, signal.SIGHUP)
        assert recorder.wait(timeout=60) == 0, recorder.log_path.read_text()
    finally:
        talker.listener.close()
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    entries = {e["topic_metadata"]["name"]: e for e in meta["topics_with_message_count"]}
    for topic in ("/tf_static", "/robot_description"):
        assert entries[topic]["message_count"] == 1, topic
        assert entries[topic]["topic_metadata"]["offered_qos_profiles"][0]["durability"] == "transient_local"
    latched = {topic: (t_ns, m)
               for topic, _, t_ns, m in read_messages(bag, ["/tf_static", "/robot_description"])}
    assert latched["/tf_static"][1].transforms[0].child_frame_id == "imu_link"
    assert latched["/robot_description"][1].data == "<robot name='quadruped'/>"
    assert all(t_ns >= START_NS for t_ns, _ in latched.values())  # simulated bag time, after the first /clock
    storage = McapFile(bag / "bag.mcap", report=lambda line: None)
    try:
        assert storage.indexed  # closed by SIGHUP: summary and footer written
        channel_hashes = {c.topic: c.metadata["topic_type_hash"] for c in storage.channels.values()}
    finally:
        storage.close()
    for topic, announced in hashes.items():
        assert announced.startswith("RIHS01_"), topic
        assert channel_hashes[topic] == announced, topic
    with Reader(bag) as reader:  # rosbags' reader: a complete file
        assert {c.topic for c, _, _ in reader.messages()} >= {"/tf_static", "/robot_description", "/imu/data"}


FILE_LIMIT = 200_000  # bytes: RLIMIT_FSIZE of the recorder, whose writes past it fail with EFBIG


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


def test_a_write_error_stops_the_recorder_with_one_line_and_a_closed_bag(
    tmp_path: Path, spawn: ProcessSpawner,
) -> None:
    """The OS refuses to grow the bag file past a limit (EFBIG, as a full disk refuses with ENOSPC): the
    recorder stops with exit code 1 and one error line, and the bag holds an unbroken run of the steps,
    counted by its metadata.yaml."""
    bag = tmp_path / "bag"
    talker = Talker("bag_full_talker")
    try:
        recorder = spawn([*KINODYN, "bag", "record", "-o", str(bag), "--chunk-period", "0.2", "/imu/data"],
                         "record", preexec_fn=_limit_file_size,
                         env={**os.environ, "ROS_LOG_DIR": str(tmp_path)})
        deadline = time.monotonic() + 180
        while recorder.poll() is None and time.monotonic() < deadline:
            talker.publish(10)
        assert recorder.wait(timeout=30) == 1, recorder.log_path.read_text()
    finally:
        talker.listener.close()
    log = recorder.log_path.read_text()
    (line,) = [line for line in log.splitlines() if "cannot write" in line]
    assert os.strerror(27) in line  # EFBIG
    assert "recording stopped" in line
    assert str(bag) in line
    steps = imu_steps(bag)
    assert steps
    assert steps == list(range(steps[0], steps[0] + len(steps)))
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["message_count"] == len(steps)
    assert f"holds {len(steps)} messages" in line
    assert (bag / "bag.mcap").stat().st_size <= FILE_LIMIT
