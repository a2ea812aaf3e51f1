"""`kinodyn bag record` and `kinodyn bag play` as processes over DDS (issue 11 item 4, docs/bags.md).

A talker in the test process publishes simulated time on /clock and, per 10 ms step, an Imu stamped with that
time (its content encodes the step), contacts every fifth step and a latched /tf_static once before the
recorder starts. The recorder runs with --use-sim-time for one simulated second; the bag is judged by its
content: every Imu step after the first one recorded, bag times on the simulated clock, /tf_static kept with
its transient_local offer. Then `bag play --clock` replays it to a listener: the same messages in the same
order, /tf_static offered transient_local again, /clock from the player (bag time, not the recorded /clock).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from kinodyn_ros.bags import read_messages
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu

from kinodyn_interfaces.msg import ContactStates
from test.conftest import PYTHON, wait_for
from test.ros_listener import Listener
from tf2_msgs.msg import TFMessage

pytestmark = pytest.mark.system

KINODYN = [PYTHON, "-m", "kinodyn_ros.launcher.cli"]
STEP_NS = 10_000_000
START_NS = 1000 * 1_000_000_000
TOPICS = ["/clock", "/imu/data", "/tf_static", "/contacts"]
RELIABLE = QoSProfile(depth=1000)
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def stamp(t_ns: int) -> Time:
    return Time(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000)


def nanoseconds(time_msg) -> int:
    return time_msg.sec * 1_000_000_000 + time_msg.nanosec


def imu_at(step: int) -> Imu:
    imu = Imu()
    imu.header.stamp = stamp(START_NS + step * STEP_NS)
    imu.header.frame_id = "imu_link"
    imu.linear_acceleration.z = 9.81 + step * 1e-3
    return imu


def record(bag: Path, spawn) -> None:
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


def test_record_then_play_with_clock(tmp_path: Path, spawn) -> None:
    bag = tmp_path / "bag"
    record(bag, spawn)
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["version"] == 9 and meta["storage_identifier"] == "mcap"
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
    assert times == sorted(times) and times[0] >= START_NS

    listener = Listener("bag_test_listener")
    try:
        node = listener.node
        received: dict[str, list] = {topic: [] for topic in TOPICS}
        static_offers: list = []

        def on_imu(message: Imu) -> None:
            if not received["/imu/data"]:
                static_offers.extend(
                    info.qos_profile for info in node.get_publishers_info_by_topic("/tf_static")
                )
            received["/imu/data"].append(message)

        node.create_subscription(Imu, "/imu/data", on_imu, RELIABLE)
        node.create_subscription(ContactStates, "/contacts", received["/contacts"].append, RELIABLE)
        node.create_subscription(TFMessage, "/tf_static", received["/tf_static"].append, LATCHED)
        node.create_subscription(Clock, "/clock", received["/clock"].append, RELIABLE)
        player = spawn(
            [*KINODYN, "bag", "play", str(bag), "--clock", "20", "--wait-for-subscribers", "60"], "play"
        )
        assert listener.spin_until(
            lambda: player.poll() is not None and len(received["/imu/data"]) >= len(recorded), timeout=120
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
        and received["/tf_static"][0].transforms[0].child_frame_id == "imu_link"
    )
    assert static_offers and all(qos.durability == DurabilityPolicy.TRANSIENT_LOCAL for qos in static_offers)
    clocks = [nanoseconds(m.clock) for m in received["/clock"]]
    assert clocks == sorted(clocks) and clocks[0] >= meta["starting_time"]["nanoseconds_since_epoch"]
    # the player's clock (bag time of the wall instant), not the recorded one (whole 10 ms steps)
    assert sum(clock % STEP_NS == 0 for clock in clocks) <= 1 < len(clocks)
