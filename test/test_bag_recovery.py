"""Bags survive crashes (docs/bags.md, "Crashes and damaged bags"): what BagWriter takes reaches the disk
within a chunk period or size; a power cut (the file truncated at any byte), a flipped byte in a chunk, a lost
footer or a full disk leaves a bag that reads (the damaged chunk skipped, counted and named) and that
`kinodyn bag reindex` makes whole again.

Second source: rosbags' own MCAP reader (which needs a complete file with footer and stops at a bad chunk)
gives the chunk layout of the intact file and reads the files that reindex and a full disk leave.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from kinodyn.estimation.synthetic import trotting_walk
from kinodyn_tools.bags import (
    BagError,
    BagWriter,
    installed_typestore,
    mcap_format,
    mcap_storage,
    open_bag,
    read_messages,
)
from kinodyn_tools.bags.info import format_info
from kinodyn_tools.bags.mcap_format import FOOTER_SIZE
from kinodyn_tools.bags.reindex import reindex
from kinodyn_tools.estimation.synthetic_bag import write_synthetic_bag
from kinodyn_tools.launcher.cli import main as kinodyn
from rclpy.serialization import serialize_message
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapReader
from sensor_msgs.msg import Imu, JointState

import kinodyn as kd

START_NS = 1_700_000_000_000_000_000
STEP_NS = 10_000_000
PERIOD = 0.1  # s of the fake clock: a chunk per 10 steps
HEADER_END = 8 + 9 + 8 + 11  # magic, header record with the profile "ros2" and library "kinodyn"


class FakeClock:
    """The writer's monotonic clock, advanced by the test (one step = 10 ms)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def imu(step: int) -> Imu:
    message = Imu()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(step, 1_000_000_000)
    message.linear_acceleration.z = 9.81 + step * 1e-3
    return message


def write_steps(writer: BagWriter, clock: FakeClock, steps: range) -> list[tuple[str, int]]:
    """One Imu per step and a JointState every second step, at bag time START + step * 10 ms; ``(topic, t)``
    in the order written."""
    written = []
    for step in steps:
        clock.now = step * STEP_NS * 1e-9
        t_ns = START_NS + step * STEP_NS
        writer.write("/imu/data", t_ns, imu(step))
        written.append(("/imu/data", t_ns))
        if step % 2 == 0:
            writer.write("/joint_states", t_ns, JointState(name=["hip"], position=[step * 1e-3]))
            written.append(("/joint_states", t_ns))
    return written


def open_writer(path: Path, clock: FakeClock, **limits: Any) -> BagWriter:  # noqa: ANN401  (BagWriter's keywords)
    writer = BagWriter(path, chunk_period=limits.pop("chunk_period", PERIOD), clock=clock, **limits)
    writer.add_topic("/imu/data", "sensor_msgs/msg/Imu")
    writer.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    return writer


def write_bag(path: Path, steps: int = 100, chunk_period: float = PERIOD) -> list[tuple[str, int]]:
    clock = FakeClock()
    with open_writer(path, clock, chunk_period=chunk_period) as writer:
        return write_steps(writer, clock, range(steps))


def read(path: Path, lines: list[str] | None = None) -> list[tuple[str, int]]:
    report = (lines.append if lines is not None else lambda line: None)
    return [(topic, t_ns) for topic, _, t_ns, _ in read_messages(path, report=report)]


def chunk_layout(file: Path) -> list:
    """rosbags' reading of the intact file's chunk indexes: offset, length and message count of each chunk."""
    reader = McapReader(file)
    reader.open()
    try:
        return [(c.chunk_start_offset, c.chunk_length, sum(c.channel_count.values())) for c in reader.chunks]
    finally:
        reader.close()


def copy_storage(source: Path, target: Path, size: int | None = None, metadata: bool = False) -> Path:
    """A bag directory holding the first ``size`` bytes of ``source``'s MCAP file (all when None)."""
    target.mkdir()
    data = (source / f"{source.name}.mcap").read_bytes()
    (target / f"{source.name}.mcap").write_bytes(data if size is None else data[:size])
    if metadata:
        shutil.copy(source / "metadata.yaml", target / "metadata.yaml")
    return target


def rosbags_read(path: Path) -> list[tuple[str, int]]:
    with Reader(path) as reader:
        return [(connection.topic, t_ns) for connection, t_ns, _ in reader.messages()]


# ---------------------------------------------------------------- what reaches the disk while recording


def test_chunks_reach_the_disk_within_the_chunk_period(tmp_path: Path) -> None:
    """While the writer is open, a copy of its file (a SIGKILL now) holds every message taken more than one
    chunk period ago; ``flush_due`` writes the rest once it is due, with no further message."""
    clock = FakeClock()
    writer = open_writer(tmp_path / "bag", clock)
    written = write_steps(writer, clock, range(57))
    taken_at = {item: (item[1] - START_NS) * 1e-9 for item in written}
    on_disk = read(copy_storage(tmp_path / "bag", tmp_path / "killed"))
    assert on_disk == written[:len(on_disk)]
    assert all(taken_at[item] > clock.now - PERIOD for item in written[len(on_disk):])
    assert len(written) - len(on_disk) < len(written) // 2  # chunks closed on the way
    clock.now += PERIOD
    writer.flush_due()
    assert read(copy_storage(tmp_path / "bag", tmp_path / "flushed")) == written
    writer.close()
    assert read(tmp_path / "bag") == written == rosbags_read(tmp_path / "bag")


def test_chunks_reach_the_disk_within_the_chunk_size(tmp_path: Path) -> None:
    """With an hour-long period, what is not on disk yet is less than one chunk size of message records."""
    clock = FakeClock()
    writer = open_writer(tmp_path / "bag", clock, chunk_period=3600.0, chunk_size=4000)
    written = write_steps(writer, clock, range(80))
    on_disk = read(copy_storage(tmp_path / "bag", tmp_path / "killed"))
    assert on_disk == written[:len(on_disk)]
    writer.close()
    with open_bag(tmp_path / "bag") as reader:  # message record: opcode, length, 22-byte head, CDR
        record_size = {(c.topic, t_ns): 9 + 22 + len(raw) for c, t_ns, raw in reader.messages()}
    assert 0 < sum(record_size[item] for item in written[len(on_disk):]) < 4000


def test_sqlite3_commits_within_the_chunk_period(tmp_path: Path) -> None:
    """sqlite3 storage: what was taken a chunk period ago is committed, so a copy of the .db3 file (a SIGKILL
    now) reads it without metadata.yaml, and reindex writes the metadata.yaml of what it holds."""
    clock = FakeClock()
    writer = BagWriter(tmp_path / "bag", storage="sqlite3", chunk_period=PERIOD, clock=clock)
    writer.add_topic("/imu/data", "sensor_msgs/msg/Imu")
    writer.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    written = write_steps(writer, clock, range(57))
    clock.now += PERIOD
    writer.flush_due()
    (tmp_path / "killed").mkdir()
    shutil.copy(tmp_path / "bag" / "bag.db3", tmp_path / "killed" / "killed.db3")
    assert read(tmp_path / "killed") == written
    meta = reindex(tmp_path / "killed", say=lambda line: None)
    assert meta["message_count"] == len(written)
    assert meta["storage_identifier"] == "sqlite3"
    assert rosbags_read(tmp_path / "killed") == written
    writer.close()


class FullDatabase:
    """An sqlite3 connection whose commit fails as on a full disk."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def commit(self) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    def __getattr__(self, name: str) -> Any:  # noqa: ANN401  (sqlite3.Connection's attribute of that name)
        return getattr(self._connection, name)


def test_sqlite3_full_disk_keeps_the_committed_messages(tmp_path: Path) -> None:
    clock = FakeClock()
    writer = BagWriter(tmp_path / "bag", storage="sqlite3", chunk_period=PERIOD, clock=clock)
    writer.add_topic("/imu/data", "sensor_msgs/msg/Imu")
    writer.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    written = write_steps(writer, clock, range(40))
    clock.now += PERIOD
    writer.flush_due()
    storage = writer._storage  # noqa: SLF001  (the sqlite3 storage whose connection this test fails)
    storage.conn = FullDatabase(storage.conn)
    with pytest.raises(OSError, match="disk is full") as raised:
        write_steps(writer, clock, range(40, 80))
    assert raised.value.errno == errno.ENOSPC
    assert writer.error is raised.value
    assert writer.on_disk == len(written)
    assert writer.lost > 0
    writer.close()
    assert read(tmp_path / "bag") == written
    meta = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["message_count"] == len(written)


# ---------------------------------------------------------------- a power cut: the file truncated anywhere


def test_a_file_truncated_at_any_byte_reads_the_complete_chunks(tmp_path: Path) -> None:
    written = write_bag(tmp_path / "bag")
    file = tmp_path / "bag" / "bag.mcap"
    layout = chunk_layout(file)
    assert len(layout) >= 9
    size = file.stat().st_size
    boundaries = {o + d for o, n, _ in layout for d in (-1, 0, 1, n - 1, n)}
    cuts = sorted({*range(0, size, max(1, size // 60)), *boundaries, size - FOOTER_SIZE, size - 1})
    for k, cut in enumerate(cuts):
        bag = copy_storage(tmp_path / "bag", tmp_path / f"cut{k}", cut, metadata=k % 2 == 0)
        if cut < HEADER_END:  # inside the magic and header: no MCAP file
            with pytest.raises(BagError):
                read(bag)
            continue
        complete = sum(n for offset, length, n in layout if offset + length <= cut)
        assert read(bag) == written[:complete], cut


def test_reindex_makes_a_truncated_file_whole(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    written = write_bag(tmp_path / "bag")
    file = tmp_path / "bag" / "bag.mcap"
    layout = chunk_layout(file)
    offset, length, _ = layout[5]
    bag = copy_storage(tmp_path / "bag", tmp_path / "cut", offset + length // 2)
    assert not (bag / "metadata.yaml").exists()  # killed: none written
    assert kinodyn(["bag", "reindex", str(bag)]) == 0
    out = capsys.readouterr().out
    assert "written again" in out
    assert "bag.mcap.orig" in out
    expected = written[:sum(n for _, _, n in layout[:5])]
    assert rosbags_read(bag) == expected == read(bag)  # a complete file with footer, as rosbags needs
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    original = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["message_count"] == len(expected)
    assert meta["starting_time"] == original["starting_time"]
    assert meta["duration"]["nanoseconds"] == expected[-1][1] - START_NS
    topics = {e["topic_metadata"]["name"]: e for e in meta["topics_with_message_count"]}
    for entry in original["topics_with_message_count"]:  # everything but the counts as the writer wrote it
        assert topics[entry["topic_metadata"]["name"]]["topic_metadata"] == entry["topic_metadata"]
    assert (bag / "bag.mcap.orig").stat().st_size == offset + length // 2
    assert kinodyn(["bag", "reindex", str(bag)]) == 0  # now intact: kept as it is
    assert "intact" in capsys.readouterr().out


# ---------------------------------------------------------------- corrupted bytes


@pytest.mark.parametrize("footer", [True, False])
def test_a_flipped_byte_in_a_chunk_skips_that_chunk_only(tmp_path: Path, footer: bool,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A byte flipped inside chunk 4's records fails its CRC: its messages are skipped, counted and named
    (file, topics, bag times) and every other message reads, through the summary or (no footer) a scan;
    info, reindex and rosbags' reader of the reindexed file go on."""
    written = write_bag(tmp_path / "bag")
    layout = chunk_layout(tmp_path / "bag" / "bag.mcap")
    offset, length, count = layout[4]
    bag = copy_storage(tmp_path / "bag", tmp_path / "flipped", None if footer else -FOOTER_SIZE,
                       metadata=footer)
    data = bytearray((bag / "bag.mcap").read_bytes())
    data[offset + length // 2] ^= 0x40
    (bag / "bag.mcap").write_bytes(bytes(data))
    before = sum(n for _, _, n in layout[:4])
    lost = written[before:before + count]
    lines: list[str] = []
    assert read(bag, lines) == written[:before] + written[before + count:]
    (line,) = [line for line in lines if "fails its check" in line]
    assert str(bag / "bag.mcap") in line
    assert f"chunk at byte {offset}" in line
    assert "CRC mismatch" in line
    for topic in ("/imu/data", "/joint_states"):
        assert f"{sum(t == topic for t, _ in lost)} of {topic}" in line
    first, last = lost[0][1], lost[-1][1]
    assert f"from bag time {first // 10**9}.{first % 10**9:09d} to {last // 10**9}.{last % 10**9:09d}" in line
    with open_bag(bag, report=lambda line: None) as reader:
        assert sum(1 for _ in reader.messages()) == len(written) - count
        assert reader.skipped == count
    assert "Messages:" in format_info(bag)
    reindex(bag, say=lambda line: None)
    assert rosbags_read(bag) == written[:before] + written[before + count:]
    del capsys


def test_a_flipped_byte_in_a_channel_record_is_caught_by_its_chunk_crc(tmp_path: Path) -> None:
    """Each channel record sits in a chunk of its own: a byte flipped in /joint_states' channel fails that
    chunk's CRC in a file without footer (scanned): the Imu messages read, the JointState ones are named as
    not read (their channel is lost) instead of being decoded by a damaged record."""
    written = write_bag(tmp_path / "bag")
    bag = copy_storage(tmp_path / "bag", tmp_path / "channel", -FOOTER_SIZE)
    data = bytearray((bag / "bag.mcap").read_bytes())
    topic = data.index(b"/joint_states")
    data[topic + 3] ^= 0x01
    (bag / "bag.mcap").write_bytes(bytes(data))
    lines: list[str] = []
    assert read(bag, lines) == [item for item in written if item[0] == "/imu/data"]
    joints = sum(topic == "/joint_states" for topic, _ in written)
    assert any("fails its check (CRC mismatch)" in line for line in lines)
    assert any(f"{joints} messages of channel 2, whose channel or schema record is lost" in line
               for line in lines)


def test_a_broken_record_length_is_skipped_to_the_next_good_chunk(tmp_path: Path) -> None:
    """Chunk 3's length field overwritten (the file has no footer, so it is scanned): the scan skips from
    there to the next chunk whose CRC checks out and reads on."""
    written = write_bag(tmp_path / "bag")
    layout = chunk_layout(tmp_path / "bag" / "bag.mcap")
    bag = copy_storage(tmp_path / "bag", tmp_path / "broken", -FOOTER_SIZE)
    data = bytearray((bag / "bag.mcap").read_bytes())
    offset = layout[3][0]
    data[offset + 1:offset + 9] = struct.pack("<Q", 2**40)
    (bag / "bag.mcap").write_bytes(bytes(data))
    lines: list[str] = []
    before, count = sum(n for _, _, n in layout[:3]), layout[3][2]
    assert read(bag, lines) == written[:before] + written[before + count:]
    assert any(f"at byte {offset}" in line and f"next good chunk at byte {layout[4][0]}" in line
               for line in lines)


def test_a_file_missing_its_footer_or_summary_reads_directly(tmp_path: Path) -> None:
    written = write_bag(tmp_path / "bag")
    data = (tmp_path / "bag" / "bag.mcap").read_bytes()
    layout = chunk_layout(tmp_path / "bag" / "bag.mcap")
    last_index_end = layout[-1][0] + layout[-1][1]
    for opcode, _, end in mcap_format.records(data, last_index_end):  # the message indexes after the chunk
        if opcode != mcap_format.MESSAGE_INDEX:
            break
        last_index_end = end
    for name, size in (("footer", len(data) - FOOTER_SIZE), ("magic", len(data) - 8),
                       ("summary", last_index_end)):
        bag = copy_storage(tmp_path / "bag", tmp_path / name, size, metadata=True)
        lines: list[str] = []
        assert read(bag, lines) == written, name
        assert any("no valid summary" in line for line in lines)


def test_a_summary_failing_its_crc_is_not_trusted(tmp_path: Path) -> None:
    """A byte flipped in the summary (a chunk index's message count region): its CRC fails, the file is read
    by a scan instead, and every message is there."""
    written = write_bag(tmp_path / "bag")
    layout = chunk_layout(tmp_path / "bag" / "bag.mcap")
    bag = copy_storage(tmp_path / "bag", tmp_path / "summary", metadata=True)
    data = bytearray((bag / "bag.mcap").read_bytes())
    first_chunk_index = data.index(struct.pack("<Q", layout[0][0]), layout[-1][0] + layout[-1][1])
    data[first_chunk_index] ^= 0x10  # the chunk's offset in its index now points elsewhere
    (bag / "bag.mcap").write_bytes(bytes(data))
    lines: list[str] = []
    assert read(bag, lines) == written
    assert any("summary fails its CRC" in line for line in lines)


def test_a_garbled_metadata_file_does_not_stop_reading(tmp_path: Path) -> None:
    """metadata.yaml that is no YAML mapping, or names files outside the bag: the directory's .mcap file is
    read all the same."""
    written = write_bag(tmp_path / "bag")
    for k, text in enumerate(("{{{ not yaml", "rosbag2_bagfile_information: 3\n",
                              "rosbag2_bagfile_information: {storage_identifier: mcap, relative_file_paths: "
                              "[../../../etc/passwd]}\n")):
        bag = copy_storage(tmp_path / "bag", tmp_path / f"garbled{k}")
        (bag / "metadata.yaml").write_text(text)
        assert read(bag) == written, text


def test_bags_of_rosbags_own_writer_read_with_and_without_footer(tmp_path: Path) -> None:
    """A bag from rosbags' MCAP writer (definitions inside the first chunk, chunk CRC 0, no topic_type_hash in
    the channels: the hash comes from metadata.yaml) reads through its summary and, footer cut, by a scan."""
    typestore = installed_typestore()
    written = []
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/imu/data", "sensor_msgs/msg/Imu", typestore=typestore)
        for step in range(30):
            message = typestore.deserialize_cdr(serialize_message(imu(step)), "sensor_msgs/msg/Imu")
            cdr = typestore.serialize_cdr(message, "sensor_msgs/msg/Imu")
            writer.write(connection, START_NS + step * STEP_NS, cdr)
            written.append(("/imu/data", START_NS + step * STEP_NS))
    assert read(tmp_path / "bag") == written
    bag = copy_storage(tmp_path / "bag", tmp_path / "cut", -FOOTER_SIZE, metadata=True)
    assert read(bag) == written
    with open_bag(bag) as reader:
        assert reader.connections[0].digest == typestore.hash_rihs01("sensor_msgs/msg/Imu")


def test_messages_outside_chunks_are_read(tmp_path: Path) -> None:
    """An unchunked MCAP file (rosbag2's fastwrite preset) ending without footer: its message records are read
    in log-time order (written here out of order)."""
    f = mcap_format
    typestore = installed_typestore()
    msgdef, _ = typestore.generate_msgdef("sensor_msgs/msg/Imu", ros_version=2)
    data = f.MAGIC + f.record(f.HEADER, f.string("ros2") + f.string("test"))
    data += f.record(f.SCHEMA, f.U16.pack(1) + f.string("sensor_msgs/msg/Imu") + f.string("ros2msg")
                     + f.byte_array(msgdef.encode()))
    data += f.record(f.CHANNEL, f.U16.pack(1) + f.U16.pack(1) + f.string("/imu/data") + f.string("cdr")
                     + f.string_map({}))
    for step in (0, 2, 1, 3):
        t_ns = START_NS + step * STEP_NS
        data += f.record(f.MESSAGE, f.MESSAGE_HEAD.pack(1, 0, t_ns, t_ns) + serialize_message(imu(step)))
    (tmp_path / "bag").mkdir()
    (tmp_path / "bag" / "bag.mcap").write_bytes(data + f.record(f.DATA_END, f.U32.pack(0)))
    steps = [(nanoseconds - START_NS) // STEP_NS for _, _, nanoseconds, _ in
             read_messages(tmp_path / "bag", report=lambda line: None)]
    assert steps == [0, 1, 2, 3]


def test_damaged_bags_give_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert kinodyn(["bag", "reindex", str(tmp_path / "empty")]) == 2
    assert "no .mcap or .db3 file" in capsys.readouterr().out
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "garbage.mcap").write_bytes(b"not an mcap file at all")
    assert kinodyn(["bag", "info", str(tmp_path / "garbage")]) == 2
    assert "no MCAP magic" in capsys.readouterr().out
    assert kinodyn(["bag", "play", str(tmp_path / "garbage")]) == 2


def test_info_reads_a_bag_without_metadata(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    written = write_bag(tmp_path / "bag")
    bag = copy_storage(tmp_path / "bag", tmp_path / "killed", -FOOTER_SIZE)
    assert kinodyn(["bag", "info", str(bag)]) == 0
    captured = capsys.readouterr()
    assert f"Messages:          {len(written)}" in captured.out
    assert "no readable metadata.yaml" in captured.err


# ---------------------------------------------------------------- a full disk


class FullDisk(io.FileIO):
    """A file on a disk with ``capacity`` bytes: a write past it writes what fits, the next one fails with
    ENOSPC, as the OS does; truncating frees the space again."""

    capacity = 0

    def write(self, data: bytes) -> int:  # type: ignore[override]
        room = self.capacity - self.tell()
        if room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.name)
        return super().write(bytes(data)[:room])


def full_disk(monkeypatch: pytest.MonkeyPatch, capacity: int) -> None:
    def open_on_full_disk(path: Path) -> io.FileIO:
        file = FullDisk(path, "xb")
        file.capacity = capacity
        return file
    monkeypatch.setattr(mcap_storage, "open_storage_file", open_on_full_disk)


def test_a_full_disk_leaves_a_closed_bag_of_what_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills during chunk 5: the write raises, the partial chunk is cut away, and the summary still
    fits in its place: a complete file (rosbags reads it) of the first 4 chunks, metadata.yaml counting
    them."""
    written = write_bag(tmp_path / "reference", 300, chunk_period=0.5)
    layout = chunk_layout(tmp_path / "reference" / "reference.mcap")
    full_size = (tmp_path / "reference" / "reference.mcap").stat().st_size
    summary = full_size - (layout[-1][0] + layout[-1][1])  # at most this, message indexes included
    assert summary + 200 < layout[4][1]
    full_disk(monkeypatch, layout[4][0] + summary + 200)  # chunk 4 starts after chunk 3's message indexes
    clock = FakeClock()
    writer = open_writer(tmp_path / "bag", clock, chunk_period=0.5)
    with pytest.raises(OSError, match="No space left"), writer:
        write_steps(writer, clock, range(300))
    assert writer.error is not None
    assert writer.error.errno == errno.ENOSPC
    assert writer.finished
    expected = written[:sum(n for _, _, n in layout[:4])]
    assert writer.on_disk == len(expected)
    assert writer.lost > 0
    assert rosbags_read(tmp_path / "bag") == expected == read(tmp_path / "bag")
    meta = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["message_count"] == len(expected)


def test_a_full_disk_without_room_for_the_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No room even for the summary: the file ends after its last complete chunk, reads as it is, and once
    there is space again `kinodyn bag reindex` completes it."""
    written = write_bag(tmp_path / "reference")
    layout = chunk_layout(tmp_path / "reference" / "reference.mcap")
    full_disk(monkeypatch, layout[4][0] + 50)
    clock = FakeClock()
    writer = open_writer(tmp_path / "bag", clock)
    with pytest.raises(OSError, match="No space left"):
        write_steps(writer, clock, range(100))
    with pytest.raises(OSError, match="could not be written earlier"):
        write_steps(writer, clock, range(100, 101))
    writer.close()
    assert not writer.finished
    expected = written[:sum(n for _, _, n in layout[:4])]
    assert read(tmp_path / "bag") == expected
    monkeypatch.undo()
    reindex(tmp_path / "bag", say=lambda line: None)
    assert rosbags_read(tmp_path / "bag") == expected


# ---------------------------------------------------------------- the tools go on past a damaged chunk

URDF = Path(__file__).resolve().parents[1] / "urdf" / "quadruped.urdf"


def rechunked(source: Path, target: Path, chunk_size: int) -> None:
    """``source`` written again with chunks of ``chunk_size`` bytes (same topics, types, QoS, hashes)."""
    with open_bag(source) as reader, BagWriter(target, chunk_size=chunk_size) as writer:
        for c in reader.connections:
            writer.add_topic(c.topic, c.msgtype, qos=c.ext.offered_qos_profiles, type_hash=c.digest)
        for c, t_ns, raw in reader.messages():
            writer.write(c.topic, t_ns, raw)


def test_estimate_and_report_go_on_past_a_corrupt_chunk(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """A synthetic trot whose third chunk has a flipped byte: `kinodyn estimate` and `kinodyn report` finish
    (exit 0) with the chunk's messages skipped and named on stderr."""
    model = kd.Model.from_urdf(URDF, floating_base=True)
    standing = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]
    run = trotting_walk(model, "imu_link", ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"], duration=3.0,
                        rate=200.0, standing_joints=np.array(standing))
    write_synthetic_bag(run, tmp_path / "synthetic")
    bag = tmp_path / "bag"
    rechunked(tmp_path / "synthetic", bag, chunk_size=60_000)
    layout = chunk_layout(bag / "bag.mcap")
    assert len(layout) >= 5
    data = bytearray((bag / "bag.mcap").read_bytes())
    offset, length, _ = layout[2]
    data[offset + length // 3] ^= 0x01
    (bag / "bag.mcap").write_bytes(bytes(data))
    result = subprocess.run([sys.executable, "-m", "kinodyn_tools.launcher.cli", "estimate", str(bag),
                             "--urdf", str(URDF), "--output", str(tmp_path / "out"), "--quiet"],
                            check=False, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "fails its check" in line]
    assert f"chunk at byte {offset}" in line
    assert "/imu/data" in line
    estimates = sum(1 for _ in read_messages(tmp_path / "out", ["/odometry/filtered"]))
    imu_total = sum(1 for _ in read_messages(tmp_path / "synthetic", ["/imu/data"], report=lambda line: None))
    assert 0 < estimates < imu_total
    report = ["report", str(bag), "--urdf", str(URDF), "--output", str(tmp_path / "r.html"), "--quiet"]
    assert kinodyn(report) == 0
    assert "fails its check" in capsys.readouterr().err
    assert (tmp_path / "r.html").is_file()
