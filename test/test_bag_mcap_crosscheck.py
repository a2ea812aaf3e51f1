"""kinodyn's MCAP files against Foxglove's `mcap` library (docs/bags.md): a second, independent reading of
what `kinodyn bag record`'s writer writes and of what kinodyn's reader recovers, and the other direction,
files of Foxglove's writer read by kinodyn.

- a bag written by BagWriter with a chunk period (several topics, latched ones, a topic added mid-recording)
  reads completely through `mcap.reader.make_reader` and `StreamReader` (both with validate_crcs): header,
  schemas, channels (metadata as rosbag2 writes it), every message, statistics, chunk and message indexes,
  summary offsets and the summary CRC;
- a file cut at many offsets: Foxglove's StreamReader reads, before it stops at the cut, exactly the messages
  kinodyn's reader recovers; `kinodyn bag reindex` makes the cut files valid MCAP files again;
- a byte flipped inside a chunk: Foxglove's reader raises its CRC error on that chunk (the stored CRC is the
  one it computes for the intact chunk), kinodyn's reader skips that chunk only and counts it;
- files of Foxglove's writers (`mcap.writer.Writer` with rclpy's CDR and rosbag2's channel metadata;
  `mcap_ros2.writer.Writer` with its own CDR encoder) read with kinodyn's reader through their summary, by a
  scan without it, and in `kinodyn bag info`.
"""

from __future__ import annotations

import io
import struct
from collections import Counter
from typing import TYPE_CHECKING
from zlib import crc32

import pytest
import yaml
from geometry_msgs.msg import TransformStamped
from kinodyn_tools.bags import BagWriter, installed_typestore, open_bag, read_messages
from kinodyn_tools.bags.mcap_format import FOOTER_SIZE
from kinodyn_tools.bags.reindex import reindex
from kinodyn_tools.bags.typestore import deserialize_cdr
from kinodyn_tools.launcher.cli import main as kinodyn
from mcap.exceptions import EndOfFile, McapError
from mcap.opcode import Opcode
from mcap.reader import make_reader
from mcap.records import (
    AttachmentIndex,
    Channel,
    Chunk,
    ChunkIndex,
    DataEnd,
    Footer,
    Message,
    MessageIndex,
    MetadataIndex,
    Schema,
    Statistics,
    SummaryOffset,
)
from mcap.stream_reader import CRCValidationError, StreamReader, breakup_chunk
from mcap.writer import CompressionType
from mcap.writer import Writer as FoxgloveWriter
from mcap_ros2.writer import Writer as Ros2Writer
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from kinodyn_interfaces.msg import ContactStates
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from pathlib import Path

    from mcap.records import McapRecord

START_NS = 1_700_000_000_000_000_000
STEP_NS = 7_812_500  # one step: 1/128 s of bag time and of the writer's clock (exact in binary)
PERIOD = 0.125  # s of the writer's clock: a chunk at least every 16 steps
STEPS = 120
LATCHED = {"/tf_static", "/robot_description"}
TYPES = {"/imu/data": "sensor_msgs/msg/Imu", "/joint_states": "sensor_msgs/msg/JointState",
         "/tf_static": "tf2_msgs/msg/TFMessage", "/robot_description": "std_msgs/msg/String",
         "/contacts": "kinodyn_interfaces/msg/ContactStates"}

Written = list[tuple[str, int, object]]  # topic, bag time, rclpy message


class FakeClock:
    """The writer's monotonic clock, set by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def imu(step: int) -> Imu:
    message = Imu()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(START_NS + step * STEP_NS, 10**9)
    message.header.frame_id = "imu_link"
    message.linear_acceleration.z = 9.81 + step * 1e-3
    message.angular_velocity.x = -step * 1e-4
    return message


def transforms() -> TFMessage:
    transform = TransformStamped(child_frame_id="imu_link")
    transform.header.frame_id = "base_link"
    transform.transform.translation.z = 0.12
    transform.transform.rotation.w = 1.0
    return TFMessage(transforms=[transform])


def record(path: Path) -> Written:
    """What `kinodyn bag record` does with a chunk period: latched topics first, a 500 Hz-like stream, a topic
    that appears mid-recording; ``(topic, bag time, message)`` in the order written."""
    clock = FakeClock()
    written: Written = []
    with BagWriter(path, chunk_period=PERIOD, clock=clock) as writer:
        for topic in ("/tf_static", "/robot_description", "/imu/data", "/joint_states"):
            writer.add_topic(topic, TYPES[topic], qos="transient_local" if topic in LATCHED else "default")
        for step in range(STEPS):
            clock.now = step / 128
            t_ns = START_NS + step * STEP_NS
            messages: list[tuple[str, object]] = []
            if step == 0:
                messages += [("/tf_static", transforms()), ("/robot_description", String(data="<robot/>"))]
            if step == STEPS // 2:
                writer.add_topic("/contacts", TYPES["/contacts"], qos="sensor")
            messages.append(("/imu/data", imu(step)))
            if step % 2 == 0:
                joints = JointState(name=["hip", "knee"], position=[step * 1e-3, 0.5])
                messages.append(("/joint_states", joints))
            if step >= STEPS // 2 and step % 5 == 0:
                messages.append(("/contacts", ContactStates(names=["lf"], in_contact=[step % 10 == 0])))
            for topic, message in messages:
                writer.write(topic, t_ns, message)
                written.append((topic, t_ns, message))
    return written


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Written]:
    bag = tmp_path_factory.mktemp("recorded") / "walk"
    return bag, record(bag)


def ours(bag: Path, lines: list[str] | None = None) -> list[tuple[str, int, bytes]]:
    """kinodyn's reading of a bag: ``(topic, bag time, CDR bytes)`` in bag-time order."""
    with open_bag(bag, report=lines.append if lines is not None else lambda line: None) as reader:
        return [(c.topic, t_ns, bytes(raw)) for c, t_ns, raw in reader.messages()]


def foxglove_messages(path: Path) -> list[tuple[str, int, bytes]]:
    """Foxglove's indexed reading (chunk CRCs checked), in log-time order."""
    with path.open("rb") as stream:
        return [(channel.topic, message.log_time, message.data)
                for _, channel, message in make_reader(stream, validate_crcs=True).iter_messages()]


def stream_records(data: bytes) -> list:
    """Foxglove's streaming reading of a whole file (magic, every record, chunk and data CRCs checked)."""
    return list(StreamReader(io.BytesIO(data), validate_crcs=True).records)


def records_in(data: bytes) -> list:
    """The records of a stretch of an MCAP file (no magic, no footer) as Foxglove parses them."""
    found = []
    try:
        for item in StreamReader(io.BytesIO(data), skip_magic=True, emit_chunks=True).records:
            found.append(item)
    except EndOfFile:
        pass
    return found


SUMMARY_GROUPS = {Schema: Opcode.SCHEMA, Channel: Opcode.CHANNEL, ChunkIndex: Opcode.CHUNK_INDEX,
                  MetadataIndex: Opcode.METADATA_INDEX, AttachmentIndex: Opcode.ATTACHMENT_INDEX,
                  Statistics: Opcode.STATISTICS}


def record_at(data: bytes, offset: int) -> McapRecord:
    """The record at ``offset`` as Foxglove parses it (a chunk as it is)."""
    return next(StreamReader(io.BytesIO(data[offset:]), skip_magic=True, emit_chunks=True).records)


def assert_valid_mcap(path: Path) -> None:
    """The file is a complete MCAP file for Foxglove's reader: magic at both ends, footer, summary whose
    groups sit where the summary offsets say and whose CRC the footer holds (mcap 1.6.0 does not check it:
    computed here by the specification), chunk and message indexes that point at the records they describe,
    statistics that count what the chunks hold."""
    data = path.read_bytes()
    records = stream_records(data)  # raises on a bad magic, record or CRC
    footer = records[-1]
    assert isinstance(footer, Footer)
    assert isinstance(records[-2], SummaryOffset)
    assert any(isinstance(r, DataEnd) for r in records)
    footer_at = len(data) - FOOTER_SIZE
    assert footer.summary_crc == crc32(data[footer.summary_start:footer_at + 9 + 16])
    for offset in (r for r in records if isinstance(r, SummaryOffset)):
        group = records_in(data[offset.group_start:offset.group_start + offset.group_length])
        assert group, offset
        assert all(SUMMARY_GROUPS[type(r)] == offset.group_opcode for r in group), offset
    with path.open("rb") as stream:
        reader = make_reader(stream, validate_crcs=True)
        assert reader.get_header().profile == "ros2"
        summary = reader.get_summary()
    assert summary is not None
    assert summary.statistics is not None
    counts: Counter[int] = Counter()
    times = []
    for index in summary.chunk_indexes:
        chunk = record_at(data, index.chunk_start_offset)
        assert isinstance(chunk, Chunk)
        assert index.chunk_length == 9 + 28 + 4 + len(chunk.compression) + 8 + len(chunk.data)
        assert (index.compression, index.compressed_size, index.uncompressed_size) == \
            (chunk.compression, len(chunk.data), chunk.uncompressed_size)
        assert chunk.compression == ""
        assert chunk.uncompressed_crc == crc32(chunk.data)
        in_chunk = [m for m in breakup_chunk(chunk, validate_crc=True) if isinstance(m, Message)]
        assert in_chunk, "a chunk listed in the summary holds messages"
        assert index.message_start_time == chunk.message_start_time == min(m.log_time for m in in_chunk)
        assert index.message_end_time == chunk.message_end_time == max(m.log_time for m in in_chunk)
        assert set(index.message_index_offsets) == {m.channel_id for m in in_chunk}
        indexed = 0
        for channel_id, offset in index.message_index_offsets.items():
            message_index = record_at(data, offset)
            assert isinstance(message_index, MessageIndex)
            assert message_index.channel_id == channel_id
            assert index.chunk_start_offset + index.chunk_length <= offset \
                < index.chunk_start_offset + index.chunk_length + index.message_index_length
            for log_time, inner_offset in message_index.records:
                message = record_at(chunk.data, inner_offset)
                assert isinstance(message, Message)
                assert (message.channel_id, message.log_time) == (channel_id, log_time)
                indexed += 1
        assert indexed == len(in_chunk)
        counts.update(m.channel_id for m in in_chunk)
        times += [m.log_time for m in in_chunk]
    statistics = summary.statistics
    assert dict(statistics.channel_message_counts) == dict(counts)
    assert statistics.message_count == sum(counts.values())
    assert (statistics.message_start_time, statistics.message_end_time) == ((min(times), max(times)) if times
                                                                            else (0, 0))
    assert statistics.chunk_count == len(summary.chunk_indexes)
    assert statistics.schema_count == len(summary.schemas)
    assert statistics.channel_count == len(summary.channels)


# ---------------------------------------------------------------- 1. what the recorder writes


def test_foxglove_reads_every_record_of_a_recorded_bag(recorded: tuple[Path, Written]) -> None:
    bag, written = recorded
    file = bag / "walk.mcap"
    assert_valid_mcap(file)
    with file.open("rb") as stream:
        reader = make_reader(stream, validate_crcs=True)
        header, summary = reader.get_header(), reader.get_summary()
        indexed = [(channel.topic, message) for _, channel, message in reader.iter_messages()]
    assert (header.profile, header.library) == ("ros2", "kinodyn")
    assert summary is not None
    typestore = installed_typestore()
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    offers = {e["topic_metadata"]["name"]: e["topic_metadata"]["offered_qos_profiles"]
              for e in meta["topics_with_message_count"]}
    channels = {c.topic: c for c in summary.channels.values()}
    assert set(channels) == set(TYPES)
    for topic, channel in channels.items():
        schema = summary.schemas[channel.schema_id]
        assert (schema.name, schema.encoding) == (TYPES[topic], "ros2msg")
        assert schema.data.decode() == typestore.generate_msgdef(TYPES[topic], ros_version=2)[0]
        assert channel.message_encoding == "cdr"
        assert set(channel.metadata) == {"offered_qos_profiles", "topic_type_hash"}
        assert channel.metadata["topic_type_hash"] == typestore.hash_rihs01(TYPES[topic])
        (offer,) = yaml.safe_load(channel.metadata["offered_qos_profiles"])
        assert [offer] == offers[topic]
        assert offer["durability"] == ("transient_local" if topic in LATCHED else "volatile")
    # every message: log time = publish time = bag time, the bytes decode (rclpy) to what was written
    assert [(topic, m.log_time) for topic, m in indexed] == [(topic, t_ns) for topic, t_ns, _ in written]
    for (topic, message), (_, _, original) in zip(indexed, written, strict=True):
        assert message.publish_time == message.log_time
        assert deserialize_message(message.data, type(original)) == original, topic
    assert ours(bag) == [(topic, m.log_time, m.data) for topic, m in indexed]
    # statistics against the messages
    statistics = summary.statistics
    per_topic = Counter(topic for topic, _, _ in written)
    assert {channels[t].id: n for t, n in per_topic.items()} == dict(statistics.channel_message_counts)
    assert (statistics.message_start_time, statistics.message_end_time) == (written[0][1], written[-1][1])
    # the chunks are closed by the writer's clock: none spans more than a chunk period of bag time
    assert len(summary.chunk_indexes) >= STEPS / 128 / PERIOD
    assert all(c.message_end_time - c.message_start_time <= PERIOD * 1e9 for c in summary.chunk_indexes)
    # the streaming reading finds the same messages, schemas and channels
    records = stream_records(file.read_bytes())
    streamed = sorted((m.log_time, m.channel_id, m.data) for m in records if isinstance(m, Message))
    assert streamed == sorted((m.log_time, m.channel_id, m.data) for _, m in indexed)
    assert {r.id: r for r in records if isinstance(r, Schema)} == summary.schemas
    assert {r.id: r for r in records if isinstance(r, Channel)} == summary.channels


# ---------------------------------------------------------------- 2. a crashed recorder's file


def foxglove_until_cut(data: bytes) -> list[tuple[str, int, bytes]]:
    """The messages Foxglove's streaming reader yields (chunk CRCs checked) before the cut stops it."""
    topics: dict[int, str] = {}
    found = []
    try:
        for item in StreamReader(io.BytesIO(data), validate_crcs=True).records:
            if isinstance(item, Channel):
                topics[item.id] = item.topic
            elif isinstance(item, Message):
                found.append((topics[item.channel_id], item.log_time, item.data))
    except (McapError, struct.error):
        pass
    return sorted(found, key=lambda m: m[1])


def test_a_cut_file_reads_as_foxglove_reads_it_and_reindex_completes_it(
        recorded: tuple[Path, Written], tmp_path: Path) -> None:
    bag, _ = recorded
    data = (bag / "walk.mcap").read_bytes()
    with (bag / "walk.mcap").open("rb") as stream:
        chunks = make_reader(stream).get_summary().chunk_indexes  # type: ignore[union-attr]
    header_end = 8 + 9 + 8 + 11  # magic, header with profile "ros2" and library "kinodyn"
    ends = {c.chunk_start_offset + c.chunk_length for c in chunks}
    cuts = sorted({*range(header_end, len(data), max(1, len(data) // 50)),
                   *(end + d for end in ends for d in (-1, 0, 1)), len(data) - FOOTER_SIZE, len(data) - 1})
    complete_counts = set()
    for k, cut in enumerate(cuts):
        target = tmp_path / f"cut{k}"
        target.mkdir()
        (target / f"cut{k}.mcap").write_bytes(data[:cut])
        expected = foxglove_until_cut(data[:cut])
        assert ours(target) == expected, cut
        complete_counts.add(len(expected))
        if k % 7 == 0 or cut == len(data) - FOOTER_SIZE:
            reindex(target, say=lambda line: None)
            assert_valid_mcap(target / f"cut{k}.mcap")
            assert foxglove_messages(target / f"cut{k}.mcap") == expected == ours(target), cut
    assert len(complete_counts) >= len(chunks)  # every run of complete chunks was among the cuts


# ---------------------------------------------------------------- 3. a flipped byte


def test_a_flipped_byte_fails_foxglove_s_crc_check_and_ours(recorded: tuple[Path, Written],
                                                              tmp_path: Path) -> None:
    bag, written = recorded
    data = bytearray((bag / "walk.mcap").read_bytes())
    with (bag / "walk.mcap").open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert summary is not None
    chunk = summary.chunk_indexes[4]
    intact = record_at(bytes(data), chunk.chunk_start_offset)
    gone = {(summary.channels[m.channel_id].topic, m.log_time)
            for m in breakup_chunk(intact, validate_crc=True) if isinstance(m, Message)}
    data[chunk.chunk_start_offset + chunk.chunk_length - 20] ^= 0x08  # inside the chunk's last message
    target = tmp_path / "flipped"
    target.mkdir()
    (target / "flipped.mcap").write_bytes(bytes(data))
    with pytest.raises(CRCValidationError) as raised:
        foxglove_messages(target / "flipped.mcap")
    assert raised.value.expected == intact.uncompressed_crc == crc32(intact.data)
    assert raised.value.actual != raised.value.expected
    with pytest.raises(CRCValidationError):
        stream_records(bytes(data))
    lines: list[str] = []
    with open_bag(target, report=lines.append) as reader:
        read = [(c.topic, t_ns) for c, t_ns, _ in reader.messages()]
        assert reader.skipped == len(gone) > 0
    assert read == [(topic, t_ns) for topic, t_ns, _ in written if (topic, t_ns) not in gone]
    assert [line for line in lines if f"chunk at byte {chunk.chunk_start_offset} fails" in line]


# ---------------------------------------------------------------- 4. files of Foxglove's writers


def foxglove_bag(path: Path, compression: CompressionType, chunked: bool) -> Written:
    """A bag directory without metadata.yaml whose file Foxglove's Writer wrote as rosbag2 does: ros2msg
    schemas, rclpy's CDR, channel metadata with the offered QoS and type hash; a channel added mid-file."""
    path.mkdir()
    typestore = installed_typestore()
    offers = {kind: yaml.safe_dump([{  # as rosbag2 writes them
        "history": "keep_last", "depth": depth, "reliability": "reliable", "durability": durability,
        "deadline": {"sec": 0, "nsec": 0}, "lifespan": {"sec": 0, "nsec": 0}, "liveliness": "automatic",
        "liveliness_lease_duration": {"sec": 0, "nsec": 0}, "avoid_ros_namespace_conventions": False}])
        for kind, depth, durability in (("default", 10, "volatile"), ("latched", 1, "transient_local"))}
    offers["incomplete"] = "- history: keep_last\n  depth: 10\n"  # a profile without its other policies
    written: Written = []
    with (path / f"{path.name}.mcap").open("wb") as stream:
        writer = FoxgloveWriter(stream, chunk_size=4000, compression=compression, use_chunking=chunked)
        writer.start(profile="ros2", library="test")
        channels = {}

        def add(topic: str, offer: str) -> None:
            definition = typestore.generate_msgdef(TYPES[topic], ros_version=2)[0]
            schema = writer.register_schema(TYPES[topic], "ros2msg", definition.encode())
            channels[topic] = writer.register_channel(topic, "cdr", schema, {
                "offered_qos_profiles": offers[offer],
                "topic_type_hash": typestore.hash_rihs01(TYPES[topic])})

        add("/tf_static", "latched")
        add("/imu/data", "default")
        for step in range(60):
            t_ns = START_NS + step * STEP_NS
            messages: list[tuple[str, object]] = [("/imu/data", imu(step))]
            if step == 0:
                messages.insert(0, ("/tf_static", transforms()))
            if step == 30:
                add("/joint_states", "incomplete")
            if step >= 30:
                messages.append(("/joint_states", JointState(name=["hip"], position=[step * 1e-2])))
            for topic, message in messages:
                writer.add_message(channels[topic], t_ns, serialize_message(message), t_ns, sequence=step)
                written.append((topic, t_ns, message))
        writer.finish()
    return written


@pytest.mark.parametrize(("compression", "chunked"), [
    (CompressionType.ZSTD, True), (CompressionType.LZ4, True), (CompressionType.NONE, True),
    (CompressionType.NONE, False)])
def test_files_of_foxglove_s_writer_read_with_and_without_summary(
        tmp_path: Path, compression: CompressionType, chunked: bool,
        capsys: pytest.CaptureFixture[str]) -> None:
    bag = tmp_path / "fox"
    written = foxglove_bag(bag, compression, chunked)
    file = bag / "fox.mcap"
    expected = foxglove_messages(file)
    assert [(topic, t_ns) for topic, t_ns, _ in expected] == [(topic, t_ns) for topic, t_ns, _ in written]
    lines: list[str] = []
    assert ours(bag, lines) == expected
    assert not [line for line in lines if "fails" in line]
    (qos_line,) = [line for line in lines if "offered_qos_profiles do not parse" in line]
    assert "/joint_states" in qos_line
    assert "'deadline'" in qos_line
    decoded = {(topic, t_ns): message
               for topic, _, t_ns, message in read_messages(bag, report=lambda line: None)}
    for topic, t_ns, original in written:  # rosbags' objects by the stored definitions carry rclpy's values
        if topic == "/imu/data":
            assert decoded[topic, t_ns].linear_acceleration.z == original.linear_acceleration.z
        elif topic == "/joint_states":
            assert list(decoded[topic, t_ns].position) == list(original.position)
    with open_bag(bag, report=lambda line: None) as reader:
        # rclpy's JointState without velocity and effort ends with 8 unused bytes, stored as they came: the
        # fast decoder and rosbags' by the stored definition both read past them
        tails, typestore = set(), reader.typestore
        joints = [c for c in reader.connections if c.topic == "/joint_states"]
        for connection, t_ns, raw in reader.messages(joints):
            slow = deserialize_cdr(typestore, raw, connection.msgtype)
            tails.add(len(raw) - len(typestore.serialize_cdr(slow, connection.msgtype)))
            assert list(slow.position) == list(decoded["/joint_states", t_ns].position)
        assert tails == {8}
        by_topic = {c.topic: c for c in reader.connections}
        assert by_topic["/tf_static"].ext.offered_qos_profiles[0].durability.name == "TRANSIENT_LOCAL"
        assert by_topic["/imu/data"].ext.offered_qos_profiles[0].durability.name == "VOLATILE"
        assert by_topic["/joint_states"].ext.offered_qos_profiles == []
        assert by_topic["/imu/data"].digest == installed_typestore().hash_rihs01("sensor_msgs/msg/Imu")
    cut = tmp_path / "cut"  # the summary and footer gone: read by a scan
    cut.mkdir()
    data = file.read_bytes()
    with file.open("rb") as stream:
        summary_start = make_reader(stream).get_summary() and next(
            r for r in StreamReader(io.BytesIO(data[-FOOTER_SIZE:]), skip_magic=True).records).summary_start
    (cut / "cut.mcap").write_bytes(data[:summary_start])
    lines = []
    assert ours(cut, lines) == expected
    assert any("no valid summary" in line for line in lines)
    assert kinodyn(["bag", "info", str(bag)]) == 0
    out = capsys.readouterr().out
    assert f"Messages:          {len(written)}" in out
    for topic, n in Counter(topic for topic, _, _ in written).items():
        line = f"Topic: {topic} | Type: {TYPES[topic]} | Count: {n} |"
        assert any(line in printed for printed in out.splitlines())


def test_files_of_mcap_ros2_support_read_with_its_own_cdr(tmp_path: Path) -> None:
    """mcap-ros2-support encodes the CDR itself from the ros2msg definition (no rclpy, no rosbags): kinodyn
    reads the file and decodes the values it was given, and rclpy decodes the same bytes to the same
    values."""
    bag = tmp_path / "ros2"
    bag.mkdir()
    typestore = installed_typestore()
    with (bag / "ros2.mcap").open("wb") as stream, Ros2Writer(stream, chunk_size=2000) as writer:
        schema = writer.register_msgdef("sensor_msgs/msg/Imu",
                                        typestore.generate_msgdef("sensor_msgs/msg/Imu", ros_version=2)[0])
        for step in range(40):
            t_ns = START_NS + step * STEP_NS
            writer.write_message("/imu/data", schema, {
                "header": {"stamp": {"sec": step, "nanosec": 7}, "frame_id": "imu_link"},
                "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0},
                "angular_velocity": {"x": step * 0.5, "y": 0.0, "z": -1.0},
                "linear_acceleration": {"x": 0.0, "y": 0.0, "z": 9.81},
                "orientation_covariance": [0.0] * 9, "angular_velocity_covariance": [0.0] * 9,
                "linear_acceleration_covariance": [float(step)] * 9}, log_time=t_ns)
    read = list(read_messages(bag, report=lambda line: None))
    assert [t_ns for _, _, t_ns, _ in read] == [START_NS + step * STEP_NS for step in range(40)]
    for step, (topic, msgtype, _, message) in enumerate(read):
        assert (topic, msgtype) == ("/imu/data", "sensor_msgs/msg/Imu")
        assert (message.header.stamp.sec, message.header.frame_id) == (step, "imu_link")
        assert message.angular_velocity.x == step * 0.5
        assert message.linear_acceleration_covariance[8] == step
    for _, t_ns, raw in ours(bag):
        step = (t_ns - START_NS) // STEP_NS
        assert deserialize_message(raw, Imu).angular_velocity.x == step * 0.5
