"""kinodyn_tools.bags: the files are rosbag2's format, messages round-trip, a bag reads by the
definitions it stores, the QoS rules are rosbag2's, `kinodyn bag info` prints as `ros2 bag info`.

Second sources: rosbag2's metadata keys and sqlite3 schema (sqlite_storage.cpp), the MCAP
specification (parsed here by hand, not through rosbags), the RIHS01 hashes rosidl generated into the
installed share/*/msg/*.json, rclpy's own serialisation.
"""

from __future__ import annotations

import json
import os
import sqlite3
import struct
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, TransformStamped, Vector3
from kinodyn_common.cdr import fixed_layout, odometry_cdr, odometry_rows_cdr
from kinodyn_control.estimation.messages import estimate_fields, odometry_message
from kinodyn_tools.bags import BagWriter, installed_typestore, open_bag, read_messages
from kinodyn_tools.bags.info import format_info, format_seconds, format_size
from kinodyn_tools.bags.qos import PRESETS, from_rclpy, offer_for_recorded, request_for_offers
from kinodyn_tools.bags.reader import fast_decoder
from kinodyn_tools.launcher.cli import main as kinodyn
from nav_msgs.msg import Odometry
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.interfaces import QosDurability, QosReliability
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from kinodyn_interfaces.msg import ContactStates
from tf2_msgs.msg import TFMessage

STORAGES = ("mcap", "sqlite3")
# rosbag2 Jazzy metadata.yaml (rosbag2_storage yaml.hpp for version 9)
METADATA_KEYS = {
    "version",
    "storage_identifier",
    "duration",
    "starting_time",
    "message_count",
    "topics_with_message_count",
    "compression_format",
    "compression_mode",
    "relative_file_paths",
    "files",
    "custom_data",
    "ros_distro",
}
TOPIC_KEYS = {"name", "type", "serialization_format", "offered_qos_profiles", "type_description_hash"}
QOS_KEYS = {
    "history",
    "depth",
    "reliability",
    "durability",
    "deadline",
    "lifespan",
    "liveliness",
    "liveliness_lease_duration",
    "avoid_ros_namespace_conventions",
}
MCAP_MAGIC = b"\x89MCAP0\r\n"
INFINITE = 9223372036854775807  # RMW_DURATION_INFINITE in ns


def _stamp(rng: np.random.Generator) -> Time:
    return Time(sec=int(rng.integers(0, 2**31 - 1)), nanosec=int(rng.integers(0, 10**9)))


def sample_messages(rng: np.random.Generator) -> dict[str, tuple[str, object]]:
    """One message with random content of every type the suite records or writes."""
    imu = Imu()
    imu.header.stamp, imu.header.frame_id = _stamp(rng), "imu_link"
    imu.angular_velocity = Vector3(x=rng.normal(), y=rng.normal(), z=rng.normal())
    imu.linear_acceleration = Vector3(x=rng.normal(), y=rng.normal(), z=9.81 + rng.normal())
    imu.orientation_covariance[0] = -1.0
    joints = JointState(
        name=["hip", "knee"],
        position=list(rng.normal(size=2)),
        velocity=list(rng.normal(size=2)),
        effort=list(rng.normal(size=2)),
    )
    joints.header.stamp = _stamp(rng)
    contacts = ContactStates(
        names=["lf_foot", "rh_foot"],
        in_contact=[True, False],
        points=[Point(x=rng.normal()), Point(y=rng.normal())],
        forces=[Vector3(z=abs(rng.normal()) * 100), Vector3()],
    )
    contacts.header.stamp = _stamp(rng)
    odometry = Odometry(child_frame_id="base_link")
    odometry.header.frame_id = "odom"
    odometry.pose.pose.position.x = rng.normal()
    odometry.pose.covariance = list(rng.normal(size=36))
    odometry.twist.covariance = list(rng.normal(size=36))
    transform = TransformStamped(child_frame_id="imu_link")
    transform.header.frame_id = "base_link"
    transform.transform.translation.x = rng.normal()
    diagnostics = DiagnosticArray(
        status=[
            DiagnosticStatus(
                level=DiagnosticStatus.WARN,
                name="state_estimator",
                message="ok",
                values=[KeyValue(key="nis", value=f"{rng.normal():.6f}")],
            )
        ]
    )
    return {
        "/imu/data": ("sensor_msgs/msg/Imu", imu),
        "/joint_states": ("sensor_msgs/msg/JointState", joints),
        "/contacts": ("kinodyn_interfaces/msg/ContactStates", contacts),
        "/odometry/filtered": ("nav_msgs/msg/Odometry", odometry),
        "/tf_static": ("tf2_msgs/msg/TFMessage", TFMessage(transforms=[transform])),
        "/diagnostics": ("diagnostic_msgs/msg/DiagnosticArray", diagnostics),
        "/clock": ("rosgraph_msgs/msg/Clock", Clock(clock=_stamp(rng))),
    }


def write_sample_bag(path: Path, storage: str, rng: np.random.Generator) -> dict[str, tuple[str, object]]:
    messages = sample_messages(rng)
    with BagWriter(path, storage=storage) as bag:
        for topic, (msgtype, _) in messages.items():
            bag.add_topic(topic, msgtype, qos="transient_local" if topic == "/tf_static" else "default")
        for k, (topic, (_, message)) in enumerate(messages.items()):
            bag.write(topic, 1_700_000_000_000_000_000 + k * 10_000_000, message)
    return messages


def installed_hash(msgtype: str) -> str:
    """The RIHS01 hash rosidl generated for ``msgtype`` (share/<pkg>/msg/<Name>.json in AMENT_PREFIX_PATH)."""
    package, _, name = msgtype.split("/")
    for prefix in os.environ["AMENT_PREFIX_PATH"].split(os.pathsep):
        path = Path(prefix, "share", package, "msg", f"{name}.json")
        if path.is_file():
            hashes = json.loads(path.read_text())["type_hashes"]
            return next(h["hash_string"] for h in hashes if h["type_name"] == msgtype)
    raise FileNotFoundError(msgtype)


# ---------------------------------------------------------------- metadata.yaml


@pytest.mark.parametrize("storage", STORAGES)
def test_metadata_is_rosbag2_version_9(tmp_path: Path, storage: str) -> None:
    messages = write_sample_bag(tmp_path / "bag", storage, np.random.default_rng(0))
    meta = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert set(meta) == METADATA_KEYS
    assert meta["version"] == 9
    assert meta["storage_identifier"] == storage
    suffix = ".mcap" if storage == "mcap" else ".db3"
    assert meta["relative_file_paths"] == [f"bag{suffix}"]
    assert (tmp_path / "bag" / f"bag{suffix}").is_file()
    assert meta["message_count"] == len(messages)
    assert meta["starting_time"]["nanoseconds_since_epoch"] == 1_700_000_000_000_000_000
    assert meta["duration"]["nanoseconds"] == (len(messages) - 1) * 10_000_000
    assert meta["files"][0]["message_count"] == len(messages)
    entries = {e["topic_metadata"]["name"]: e for e in meta["topics_with_message_count"]}
    assert set(entries) == set(messages)
    for topic, (msgtype, _) in messages.items():
        metadata = entries[topic]["topic_metadata"]
        assert set(metadata) == TOPIC_KEYS
        assert entries[topic]["message_count"] == 1
        assert metadata["type"] == msgtype
        assert metadata["serialization_format"] == "cdr"
        assert metadata["type_description_hash"] == installed_hash(msgtype)
        (qos,) = metadata["offered_qos_profiles"]  # version 9: a YAML list with policy names, not numbers
        assert set(qos) == QOS_KEYS
        assert qos["durability"] == ("transient_local" if topic == "/tf_static" else "volatile")
        assert qos["reliability"] == "reliable"
        assert qos["history"] == "keep_last"


def test_typestore_hashes_equal_rosidl_hashes() -> None:
    store = installed_typestore()
    for msgtype in (
        "kinodyn_interfaces/msg/ContactStates",
        "kinodyn_interfaces/msg/JointPDCommand",
        "kinodyn_interfaces/msg/ControllerState",
        "tf2_msgs/msg/TFMessage",
        "sensor_msgs/msg/Imu",
        "nav_msgs/msg/Odometry",
        "diagnostic_msgs/msg/DiagnosticArray",
    ):
        assert store.hash_rihs01(msgtype) == installed_hash(msgtype), msgtype


# ---------------------------------------------------------------- storage files


def mcap_records(data: bytes) -> list[tuple[int, bytes]]:
    """``(opcode, content)`` of every record, chunks opened (MCAP specification: opcode u8, length u64)."""
    assert data[:8] == MCAP_MAGIC
    assert data[-8:] == MCAP_MAGIC
    records, position = [], 8
    while position < len(data) - 8:
        opcode, length = struct.unpack_from("<BQ", data, position)
        content = data[position + 9 : position + 9 + length]
        position += 9 + length
        if opcode == 0x06:  # chunk: start, end, uncompressed size, crc, compression, records
            (compression_length,) = struct.unpack_from("<I", content, 28)
            assert content[32 : 32 + compression_length] == b""  # written uncompressed
            inner_start = 32 + compression_length + 8
            records += mcap_records(MCAP_MAGIC + content[inner_start:] + MCAP_MAGIC)
        else:
            records.append((opcode, content))
    return records


def _string(content: bytes, position: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<I", content, position)
    return content[position + 4 : position + 4 + length].decode(), position + 4 + length


def test_mcap_file_follows_the_ros2_profile(tmp_path: Path) -> None:
    messages = write_sample_bag(tmp_path / "bag", "mcap", np.random.default_rng(1))
    records = mcap_records((tmp_path / "bag" / "bag.mcap").read_bytes())
    header = next(content for opcode, content in records if opcode == 0x01)
    assert _string(header, 0)[0] == "ros2"
    schemas = {}
    for opcode, content in records:
        if opcode == 0x03:
            (schema_id,) = struct.unpack_from("<H", content, 0)
            name, position = _string(content, 2)
            encoding, position = _string(content, position)
            schemas[schema_id] = (name, encoding, _string(content, position)[0])
    channels = {}
    for opcode, content in records:
        if opcode == 0x04:
            channel_id, schema_id = struct.unpack_from("<HH", content, 0)
            topic, position = _string(content, 4)
            encoding, position = _string(content, position + 0)
            metadata_length = struct.unpack_from("<I", content, position)[0]
            metadata, inner = {}, position + 4
            while inner < position + 4 + metadata_length:
                key, inner = _string(content, inner)
                metadata[key], inner = _string(content, inner)
            assert inner == position + 4 + metadata_length == len(content)
            channels[channel_id] = (topic, schemas[schema_id], encoding, metadata)
    assert {topic for topic, *_ in channels.values()} == set(messages)
    for topic, (name, schema_encoding, _), encoding, metadata in channels.values():
        assert name == messages[topic][0]
        assert schema_encoding == "ros2msg"
        assert encoding == "cdr"
        assert set(metadata) == {"offered_qos_profiles", "topic_type_hash"}  # rosbag2's mcap_storage.cpp keys
        assert set(yaml.safe_load(metadata["offered_qos_profiles"])[0]) == QOS_KEYS
        assert metadata["topic_type_hash"] == installed_hash(name)  # RIHS01 as rosidl generated it
    contacts_schema = next(s for t, s, *_ in channels.values() if t == "/contacts")[2]
    assert contacts_schema.startswith("std_msgs/Header header\nstring[] names\nbool[] in_contact\n")
    assert "MSG: geometry_msgs/Point" in contacts_schema
    payloads = {}
    for opcode, content in records:
        if opcode == 0x05:
            channel_id, _, log_time, publish_time = struct.unpack_from("<HIQQ", content, 0)
            assert log_time == publish_time
            payloads[channels[channel_id][0]] = content[22:]
    for topic, (_, message) in messages.items():
        assert deserialize_message(payloads[topic], type(message)) == message


def test_sqlite3_file_has_rosbag2_schema(tmp_path: Path) -> None:
    messages = write_sample_bag(tmp_path / "bag", "sqlite3", np.random.default_rng(2))
    with sqlite3.connect(tmp_path / "bag" / "bag.db3") as db:
        columns = {
            table: [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        assert columns == {
            "schema": ["schema_version", "ros_distro"],
            "metadata": ["id", "metadata_version", "metadata"],
            "topics": [
                "id",
                "name",
                "type",
                "serialization_format",
                "offered_qos_profiles",
                "type_description_hash",
            ],
            "message_definitions": [
                "id",
                "topic_type",
                "encoding",
                "encoded_message_definition",
                "type_description_hash",
            ],
            "messages": ["id", "topic_id", "timestamp", "data"],
        }
        topics = {
            name: (topic_id, qos)
            for topic_id, name, qos in db.execute("SELECT id, name, offered_qos_profiles FROM topics")
        }
        assert set(topics) == set(messages)
        assert "durability: transient_local" in topics["/tf_static"][1]
        encodings = {encoding for (encoding,) in db.execute("SELECT encoding FROM message_definitions")}
        assert encodings == {"ros2msg"}
        rows = dict(db.execute("SELECT topic_id, data FROM messages"))
        for topic, (_, message) in messages.items():
            assert deserialize_message(rows[topics[topic][0]], type(message)) == message


# ---------------------------------------------------------------- reading


@pytest.mark.parametrize("storage", STORAGES)
def test_every_message_type_round_trips(tmp_path: Path, storage: str) -> None:
    messages = write_sample_bag(tmp_path / "bag", storage, np.random.default_rng(3))
    with open_bag(tmp_path / "bag") as reader:
        raw = {connection.topic: bytes(data) for connection, _, data in reader.messages()}
    for topic, (_, message) in messages.items():
        assert deserialize_message(raw[topic], type(message)) == message, topic
    objects = {topic: message for topic, _, _, message in read_messages(tmp_path / "bag")}
    imu = messages["/imu/data"][1]
    assert objects["/imu/data"].linear_acceleration.z == imu.linear_acceleration.z
    assert objects["/imu/data"].header.frame_id == "imu_link"
    contacts = messages["/contacts"][1]
    assert list(objects["/contacts"].in_contact) == list(contacts.in_contact)
    assert objects["/contacts"].forces[0].z == contacts.forces[0].z
    np.testing.assert_array_equal(
        objects["/odometry/filtered"].pose.covariance, messages["/odometry/filtered"][1].pose.covariance
    )
    assert (
        objects["/diagnostics"].status[0].values[0].value
        == messages["/diagnostics"][1].status[0].values[0].value
    )
    times = [t for _, _, t, _ in read_messages(tmp_path / "bag", topics=["/clock", "/imu/data"])]
    assert times == sorted(times)
    assert len(times) == 2


def test_written_bytes_do_not_depend_on_the_run(tmp_path: Path) -> None:
    """rclpy leaves CDR padding uninitialised; the writer's bytes are the same every time."""
    message = JointState(name=["a"], position=[1.0], velocity=[2.0], effort=[3.0])
    message.header.frame_id = "x"
    payloads = set()
    for k in range(20):
        with BagWriter(tmp_path / f"bag{k}") as bag:
            bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
            bag.write("/joint_states", 1, message)
        with open_bag(tmp_path / f"bag{k}") as reader:
            payloads.add(bytes(next(reader.messages())[2]))
    assert len(payloads) == 1
    assert deserialize_message(payloads.pop(), JointState) == message
    rclpy_payloads = {serialize_message(message) for _ in range(200)}
    assert all(deserialize_message(raw, JointState) == message for raw in rclpy_payloads)


@pytest.mark.parametrize(
    "frames", [("", ""), ("odom", "base_link"), ("o", "ab"), ("odom_x", "b"), ("abc", "trunk")]
)
def test_odometry_encoder_writes_the_bytes_of_rosbags(frames: tuple[str, str]) -> None:
    """The packed nav_msgs/Odometry (BagWriter's fast path) equals rosbags' serialisation of the same message
    byte for byte (padding after both strings at every length mod 4 and 8) and decodes to it with rclpy."""
    typestore = installed_typestore()
    rng = np.random.default_rng(len(frames[0]) + 7 * len(frames[1]))
    message = Odometry(child_frame_id=frames[1])
    message.header.frame_id = frames[0]
    message.header.stamp = Time(sec=-3, nanosec=999_999_999)
    p, q = message.pose.pose.position, message.pose.pose.orientation
    p.x, p.y, p.z, q.x, q.y, q.z, q.w = rng.normal(size=7)
    v, w = message.twist.twist.linear, message.twist.twist.angular
    v.x, v.y, v.z, w.x, w.y, w.z = rng.normal(size=6)
    message.pose.covariance = rng.normal(size=36)
    message.twist.covariance = rng.normal(size=36)
    msgtype = "nav_msgs/msg/Odometry"
    rosbags_message = typestore.deserialize_cdr(serialize_message(message), msgtype)
    reference = typestore.serialize_cdr(rosbags_message, msgtype)
    packed = odometry_cdr(message)
    assert packed == bytes(reference)
    assert deserialize_message(packed, Odometry) == message


@pytest.mark.parametrize("frames", [("odom", "trunk"), ("o", "base_link"), ("odom_x", "")])
def test_odometry_of_estimate_rows_is_packed_like_their_messages(frames: tuple[str, str]) -> None:
    """``odometry_rows_cdr`` (kinodyn estimate's writer) gives, row by row, the bytes of ``odometry_cdr`` of
    the Odometry that ``odometry_message`` builds from the same estimate row."""
    rows = np.random.default_rng(3).normal(size=(5, 85))
    stamps = 1_700_000_000_123_456_789 + np.array([0, 1, 999_999_999, 10**12, 3 * 10**9 + 7])
    packed = odometry_rows_cdr(stamps, *frames, rows)
    for stamp_ns, row, cdr in zip(stamps.tolist(), rows, packed, strict=True):
        assert cdr == odometry_cdr(odometry_message(estimate_fields(row), stamp_ns, *frames))


OLD_CONTACT_STATES = "std_msgs/Header header\nstring[] names\nbool[] in_contact\n"


def test_a_bag_reads_by_its_stored_definition(tmp_path: Path) -> None:
    """A ContactStates bag from before `points` and `forces` existed reads with its own layout."""
    old = get_typestore(Stores.ROS2_KILTED)
    old.register(get_types_from_msg(OLD_CONTACT_STATES, "kinodyn_interfaces/msg/ContactStates"))
    message = old.types["kinodyn_interfaces/msg/ContactStates"](
        header=old.types["std_msgs/msg/Header"](
            stamp=old.types["builtin_interfaces/msg/Time"](sec=3, nanosec=4), frame_id="odom"
        ),
        names=["lf_foot", "rf_foot", "lh_foot"],
        in_contact=np.array([True, False, True]),
    )
    with BagWriter(tmp_path / "old", typestore=old) as bag:
        bag.add_topic("/contacts", "kinodyn_interfaces/msg/ContactStates")
        bag.write("/contacts", 5, message)
    stored_hash = yaml.safe_load((tmp_path / "old" / "metadata.yaml").read_text())[
        "rosbag2_bagfile_information"
    ]["topics_with_message_count"][0]["topic_metadata"]["type_description_hash"]
    assert stored_hash != installed_hash("kinodyn_interfaces/msg/ContactStates")
    ((topic, msgtype, t_ns, read),) = list(read_messages(tmp_path / "old"))
    assert (topic, msgtype, t_ns) == ("/contacts", "kinodyn_interfaces/msg/ContactStates", 5)
    assert read.names == ["lf_foot", "rf_foot", "lh_foot"]
    assert list(read.in_contact) == [True, False, True]
    assert (read.header.stamp.sec, read.header.stamp.nanosec, read.header.frame_id) == (3, 4, "odom")
    assert not hasattr(read, "points")
    with open_bag(tmp_path / "old") as reader:  # the installed definition cannot decode these bytes
        raw = bytes(next(reader.messages())[2])
    with pytest.raises(Exception):  # noqa: B017, PT011  (rosbags raises its SerdeError, rclpy a RuntimeError)
        installed_typestore().deserialize_cdr(raw, "kinodyn_interfaces/msg/ContactStates")


def test_writer_refusals(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="storage 'rosbag1'"):
        BagWriter(tmp_path / "a", storage="rosbag1")
    with BagWriter(tmp_path / "b") as bag:
        with pytest.raises(ValueError, match="not installed"):
            bag.add_topic("/x", "missing_msgs/msg/Nothing")
        with pytest.raises(ValueError, match="QoS preset"):
            bag.add_topic("/x", "std_msgs/msg/String", qos="latched")
        bag.add_topic("/x", "std_msgs/msg/String")
        with pytest.raises(ValueError, match="already in the bag"):
            bag.add_topic("/x", "std_msgs/msg/String")


# ---------------------------------------------------------------- QoS


def test_recorded_qos_of_an_endpoint() -> None:
    reported = QoSProfile(depth=0, history=HistoryPolicy.UNKNOWN, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    for name in ("deadline", "lifespan", "liveliness_lease_duration"):
        setattr(reported, name, Duration(nanoseconds=INFINITE))
    qos = from_rclpy(reported)
    assert qos.durability == QosDurability.TRANSIENT_LOCAL
    assert qos.reliability == QosReliability.RELIABLE
    assert (qos.deadline.sec, qos.deadline.nsec) == (9223372036, 854775807)  # as rosbag2's sample metadata
    assert offer_for_recorded([qos]).deadline.nanoseconds == INFINITE


def test_request_and_offer_follow_rosbag2() -> None:
    latched, default, sensor = PRESETS["transient_local"], PRESETS["default"], PRESETS["sensor"]
    request = request_for_offers([latched, latched])
    assert (
        request.durability == DurabilityPolicy.TRANSIENT_LOCAL
    )
    assert (
        request.history == HistoryPolicy.KEEP_ALL
    )
    mixed = request_for_offers([default, sensor])
    assert (
        mixed.reliability == ReliabilityPolicy.BEST_EFFORT
    )
    assert (
        mixed.durability == DurabilityPolicy.VOLATILE
    )
    assert mixed.history == HistoryPolicy.KEEP_LAST
    assert mixed.depth == 10
    offer = offer_for_recorded([latched])
    assert offer.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert offer.depth == 10
    fallback = offer_for_recorded([latched, sensor])
    assert (
        fallback.reliability == ReliabilityPolicy.RELIABLE
    )
    assert (
        fallback.durability == DurabilityPolicy.VOLATILE
    )
    assert offer_for_recorded([sensor]).reliability == ReliabilityPolicy.BEST_EFFORT


# ---------------------------------------------------------------- info and the command line


def test_info_prints_as_ros2_bag_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        write_sample_bag(tmp_path / "bag", "mcap", np.random.default_rng(4))
        text = format_info(tmp_path / "bag")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    size = format_size((tmp_path / "bag" / "bag.mcap").stat().st_size)
    topics = sorted(sample_messages(np.random.default_rng(4)).items())
    topic_lines = [f"Topic: {t} | Type: {m} | Count: 1 | Serialization Format: cdr" for t, (m, _) in topics]
    assert text.splitlines() == [
        "",
        "Files:             bag.mcap",
        f"Bag size:          {size}",
        "Storage id:        mcap",
        "ROS Distro:        rosbags",
        "Duration:          0.060000000s",
        "Start:             Nov 14 2023 22:13:20.000000000 (1700000000.000000000)",
        "End:               Nov 14 2023 22:13:20.060000000 (1700000000.060000000)",
        "Messages:          7",
        "Topic information: " + topic_lines[0],
        *("                   " + line for line in topic_lines[1:]),
        "Service:           0",
        "Service information: ",
    ]
    assert (format_size(1023), format_size(1024), format_size(5 * 1024**2 + 1)) == (
        "1023 B",
        "1.0 KiB",
        "5.0 MiB",
    )
    assert format_seconds(12_000_000_345) == "12.000000345"


def test_command_line_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert kinodyn(["bag", "info", str(tmp_path)]) == 2
    assert "no rosbag2 bag" in capsys.readouterr().out
    assert kinodyn(["bag", "play", str(tmp_path / "nothing")]) == 2
    assert kinodyn(["bag", "play", str(tmp_path), "--rate", "0"]) == 2
    assert "--rate must be positive" in capsys.readouterr().out
    assert kinodyn(["bag", "play", str(tmp_path), "--wait-for-all-acked", "-1"]) == 2
    assert "--wait-for-all-acked must be >= 0" in capsys.readouterr().out
    assert kinodyn(["bag", "record"]) == 2
    assert "give the topics to record, or --all" in capsys.readouterr().out
    assert kinodyn(["bag", "record", "/a", "--duration", "-1"]) == 2
    for option, value in (("--chunk-period", "nan"), ("--chunk-period", "inf"), ("--chunk-period", "0"),
                          ("--chunk-size", "0"), ("--chunk-size", "-5")):
        assert kinodyn(["bag", "record", "/a", option, value]) == 2
        assert f"{option} must be in" in capsys.readouterr().out
    write_sample_bag(tmp_path / "bag", "mcap", np.random.default_rng(5))
    assert kinodyn(["bag", "record", "/a", "-o", str(tmp_path / "bag")]) == 2
    assert "exists" in capsys.readouterr().out
    assert kinodyn(["bag", "play", str(tmp_path / "bag"), "--topics", "/nothing"]) == 2
    assert "bag has no topic /nothing" in capsys.readouterr().out


def _same(a: object, b: object) -> None:
    """Field-by-field equality of two rosbags message objects (arrays by value)."""
    assert type(a) is type(b)
    for name in a.__dataclass_fields__:  # type: ignore[attr-defined]
        x, y = getattr(a, name), getattr(b, name)
        if hasattr(x, "__dataclass_fields__"):
            _same(x, y)
        elif isinstance(x, list) and x and hasattr(x[0], "__dataclass_fields__"):
            assert len(x) == len(y)
            for u, w in zip(x, y, strict=True):
                _same(u, w)
        else:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _varied_bag(path: Path) -> list[tuple[str, Any]]:
    """A bag of Imu, JointState and ContactStates whose frame ids take every padding, with empty and
    repeated lists and names that change between messages; returns ``(topic, message)`` as written."""
    rng = np.random.default_rng(11)
    messages = []
    for k in range(12):
        frame = "f" * (k % 9)
        imu = Imu()
        imu.header.frame_id, imu.header.stamp = frame, Time(sec=k, nanosec=7 * k)
        imu.angular_velocity = Vector3(x=rng.normal(), y=rng.normal(), z=rng.normal())
        imu.linear_acceleration.z = rng.normal()
        imu.orientation.w, imu.orientation_covariance[0] = rng.normal(), -1.0
        imu.linear_acceleration_covariance = rng.normal(size=9)
        count = (k // 3) % 3 * 2  # 0, 2, 4 joints: empty lists and a name list that changes
        names = [f"joint_{j}" + "x" * (k % 2) for j in range(count)]
        joints = JointState(name=names, position=list(rng.normal(size=count)),
                            velocity=list(rng.normal(size=count)) if k % 2 else [], effort=[])
        joints.header.frame_id = frame
        contacts = ContactStates(names=names, in_contact=[bool(j % 2) for j in range(count)],
                                 points=[Point(x=rng.normal()) for _ in range(count)],
                                 forces=[Vector3(z=rng.normal()) for _ in range(count)])
        contacts.header.frame_id = frame
        messages += [("/imu/data", imu), ("/joint_states", joints), ("/contacts", contacts)]
    with BagWriter(path) as bag:
        bag.add_topic("/imu/data", "sensor_msgs/msg/Imu")
        bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        bag.add_topic("/contacts", "kinodyn_interfaces/msg/ContactStates")
        for t, (topic, message) in enumerate(messages):
            bag.write(topic, t + 1, message)
    return messages


def test_fast_decoders_give_rosbags_objects(tmp_path: Path) -> None:
    """The reader's decoders of Imu, JointState and ContactStates (used when the stored hash is the installed
    one) give exactly what rosbags' deserializer gives, for frame ids of every padding, empty and repeated
    lists, and names that change between messages; a truncated payload is refused."""
    messages = _varied_bag(tmp_path / "bag")
    with open_bag(tmp_path / "bag") as reader:
        decoders = {c.topic: fast_decoder(reader, c) for c in reader.connections}
        assert all(decoders.values())
        for connection, _, raw in reader.messages():
            decoded = decoders[connection.topic](raw)
            _same(decoded, reader.deserialize(raw, connection.msgtype))
            with pytest.raises((ValueError, struct.error)):
                decoders[connection.topic](raw[:-5] if len(raw) > 40 else raw[:10])
    fast = [m for _, _, _, m in read_messages(tmp_path / "bag")]
    assert [m.header.stamp.sec for m in fast] == [m.header.stamp.sec for _, m in messages]


LAYOUT_FIELDS = {
    "sensor_msgs/msg/Imu": lambda m: [[m.header.stamp.sec, m.header.stamp.nanosec], [
        m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w, *m.orientation_covariance,
        m.angular_velocity.x, m.angular_velocity.y, m.angular_velocity.z, *m.angular_velocity_covariance,
        m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z,
        *m.linear_acceleration_covariance]],
    "sensor_msgs/msg/JointState": lambda m: [[m.header.stamp.sec, m.header.stamp.nanosec], m.position,
                                             m.velocity, m.effort],
    "kinodyn_interfaces/msg/ContactStates": lambda m: [
        [m.header.stamp.sec, m.header.stamp.nanosec], m.in_contact,
        [v for p in m.points for v in (p.x, p.y, p.z)], [v for f in m.forces for v in (f.x, f.y, f.z)]],
}
"""rosbags' message values in the order of a FixedLayout's fields (stamp, then the value fields)."""


def _structure(message: Any) -> tuple:  # noqa: ANN401  (rosbags builds the message classes at run time)
    """What a FixedLayout fixes: the strings and every sequence length."""
    texts = [message.header.frame_id, *getattr(message, "name", getattr(message, "names", []))]
    lengths = [len(v) for k, v in vars(message).items() if isinstance(v, list | np.ndarray) and k != "name"]
    return tuple(texts), tuple(lengths)


def test_fixed_layouts_decode_every_message_of_their_layout_as_rosbags(tmp_path: Path) -> None:
    """``fixed_layout`` of each message, applied to all messages of its type, picks exactly those with the
    same frame id, names and lengths, and gives their values as rosbags' deserializer does; uninitialised
    padding (rclpy) does not matter, a changed name or a truncated payload does."""
    _varied_bag(tmp_path / "bag")
    with open_bag(tmp_path / "bag") as reader:
        raws: dict[str, list[bytes]] = {}
        for connection, _, raw in reader.messages():
            raws.setdefault(connection.msgtype, []).append(bytes(raw))
        for msgtype, payloads in raws.items():
            objects = [reader.deserialize(raw, msgtype) for raw in payloads]
            for template, template_object in zip(payloads, objects, strict=True):
                layout = fixed_layout(msgtype, template)
                matches, records = layout.decode(payloads)
                expected = [_structure(o) == _structure(template_object) for o in objects]
                assert matches.tolist() == expected
                assert len(records) == sum(expected)
                for record, o in zip(records, [o for o, m in zip(objects, expected, strict=True) if m],
                                     strict=True):
                    values = LAYOUT_FIELDS[msgtype](o)
                    names = layout.dtype.names
                    assert [record[names[0]], record[names[1]]] == values[0]
                    for name, value in zip(names[2:], values[1:], strict=True):
                        got = record[name]
                        np.testing.assert_array_equal(got, np.asarray(value, dtype=got.dtype))
                with pytest.raises(ValueError, match="CDR"):
                    fixed_layout(msgtype, template[:-5] if len(template) > 40 else template[:10])
        joint_states = raws["sensor_msgs/msg/JointState"]
        layout = fixed_layout("sensor_msgs/msg/JointState", joint_states[-1])  # names and lengths given
        padded = bytearray(joint_states[-1])
        padding = [k for k in range(4, len(padded)) if k not in set(layout.constant.tolist())
                   and all(k not in range(o, o + d.itemsize) for d, o in
                           (layout.dtype.fields[n][:2] for n in layout.dtype.names))]
        assert padding  # the doubles are 8-aligned after the names
        padded[padding[0]] = 0xAB
        renamed = bytearray(joint_states[-1])
        renamed[layout.constant[-1]] ^= 1  # a byte of the last length or name
        assert layout.decode([bytes(padded), bytes(renamed)])[0].tolist() == [True, False]
