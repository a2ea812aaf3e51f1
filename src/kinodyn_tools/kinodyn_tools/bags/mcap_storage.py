"""The MCAP storage file of a bag being recorded, written so that a crash keeps what it wrote (docs/bags.md).

A rosbags storage writer (``rosbags.rosbag2.Writer`` calls ``add_msgtype``, ``add_connection``, ``write``,
``close``) laid out as rosbag2's MCAP plugin writes (``ros2`` profile, ``ros2msg`` schemas, ``cdr`` channels
whose metadata holds ``offered_qos_profiles`` and ``topic_type_hash``), with these differences in how bytes
reach the disk:

- each schema and channel is written as soon as it is added, before any message of it, in a chunk of its own
  (so that its CRC covers it; the summary lists no index of such a chunk, and repeats the definitions);
- messages gather in a chunk that is written (with its CRC and message indexes) and synced to the disk when it
  holds ``chunk_size`` bytes or, given a ``chunk_period``, when its first message is that many seconds old
  (``flush_due`` closes it when no further message comes), so a SIGKILL or a power cut loses at most that
  chunk. Without a period (files written offline) the chunks, and so the bytes, depend on the messages alone;
- a failed write (a full disk: any ``OSError``) cuts the file back to the last complete record and puts the
  storage in a failed state: ``write`` raises ``StorageError`` from then on, and ``close`` finishes the file
  (summary and footer) with what it holds; where even that does not fit, the file stays without its summary,
  which kinodyn's readers read and ``kinodyn bag reindex`` completes.
"""

from __future__ import annotations

import io
import os
import struct
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, cast
from zlib import crc32

from rosbags.interfaces import Connection, MessageDefinitionFormat
from rosbags.rosbag2.enums import CompressionMode

from kinodyn_tools.bags import mcap_format as fmt

if TYPE_CHECKING:
    from collections.abc import Callable

    from rosbags.interfaces import ConnectionExtRosbag2

DEFAULT_CHUNK_SIZE = 1 << 20  # bytes of message records per chunk
DEFAULT_CHUNK_PERIOD = 1.0  # s (monotonic) from a chunk's first message to its write, when recording
LIBRARY = "kinodyn"


_MESSAGE_RECORD = struct.Struct("<BQHIQQ")  # opcode, length, then the message head (channel, sequence, times)


class _Chunk:
    """The chunk being filled: its records, ``(channel id, log time, offset)`` per message, the monotonic time
    of its first message and its log time range."""

    __slots__ = ("end", "index", "opened", "records", "start")

    def __init__(self) -> None:
        self.records = bytearray()
        self.index: list[tuple[int, int, int]] = []
        self.opened = 0.0
        self.start, self.end = 2**63 - 1, 0


def check_limits(chunk_size: int, chunk_period: float | None) -> None:
    """ValueError unless the chunk size is positive and the period (if given) positive and finite."""
    if not chunk_size > 0 or (chunk_period is not None and not 0 < chunk_period < float("inf")):
        raise ValueError(f"chunk size {chunk_size} must be positive and chunk period {chunk_period} positive "
                         "and finite")


def _sync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _chunk_record(start_ns: int, end_ns: int, records: bytes) -> bytes:
    """An uncompressed chunk record of ``records`` with their CRC32."""
    content = fmt.CHUNK_HEAD.pack(start_ns, end_ns, len(records), crc32(records)) + fmt.string("") \
        + fmt.U64.pack(len(records)) + records
    return fmt.record(fmt.CHUNK, content)


class StorageError(OSError):
    """The storage file could not be written (the OS error says why); what it holds stays readable."""


def open_storage_file(path: Path) -> io.FileIO:
    """The new storage file, unbuffered: every write goes to the OS as it is made."""
    return io.FileIO(path, "xb")


class McapStorage:
    """One MCAP file of a bag directory (see the module docstring)."""

    def __init__(self, path: Path, compression: CompressionMode = CompressionMode.NONE, *,
                 name: str | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE,
                 chunk_period: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if compression != CompressionMode.NONE:
            raise ValueError("kinodyn's MCAP storage writes uncompressed chunks")
        check_limits(chunk_size, chunk_period)
        self.path = Path(path) / f"{name or Path(path).name}.mcap"
        self.chunk_size, self.chunk_period, self._clock = int(chunk_size), chunk_period, clock
        self.error: OSError | None = None  # the first failed write
        self.finished = False  # summary and footer written
        self.lost = 0  # messages taken but not on disk because a write failed
        self.counts: Counter[int] = Counter()  # messages per channel on disk
        self.start_ns, self.end_ns = 2**63 - 1, 0  # log times of the messages on disk
        self._schemas: dict[str, int] = {}  # msgtype -> schema id
        self._schema_records: list[bytes] = []
        self._channel_records: list[bytes] = []
        self._chunk_indexes: list[bytes] = []
        self._file = open_storage_file(self.path)
        self._end = 0  # bytes of complete records on disk
        self._new_chunk()
        self._commit(fmt.MAGIC + fmt.record(fmt.HEADER, fmt.string("ros2") + fmt.string(LIBRARY)))
        _sync_directory(self.path.parent)  # the new file's entry survives a power cut too

    # ---------------------------------------------------------------- the rosbags storage interface

    def add_msgtype(self, connection: Connection) -> None:
        """A schema record for the connection's type, on disk before any channel of it."""
        encoding = "ros2msg" if connection.msgdef.format == MessageDefinitionFormat.MSG else "ros2idl"
        schema_id = len(self._schemas) + 1
        content = fmt.U16.pack(schema_id) + fmt.string(connection.msgtype) + fmt.string(encoding) \
            + fmt.byte_array(connection.msgdef.data.encode())
        self._write_definition(fmt.record(fmt.SCHEMA, content), self._schema_records)
        self._schemas[connection.msgtype] = schema_id

    def add_connection(self, connection: Connection, offered_qos_profiles: str) -> None:
        """A channel record (offered QoS and RIHS01 type hash in its metadata, as rosbag2), on disk now."""
        metadata = {"offered_qos_profiles": offered_qos_profiles, "topic_type_hash": connection.digest}
        ext = cast("ConnectionExtRosbag2", connection.ext)  # rosbag2 connections only
        content = fmt.U16.pack(connection.id) + fmt.U16.pack(self._schemas[connection.msgtype]) \
            + fmt.string(connection.topic) + fmt.string(ext.serialization_format) \
            + fmt.string_map(metadata)
        self._write_definition(fmt.record(fmt.CHANNEL, content), self._channel_records)

    def write(self, connection: Connection, timestamp: int, data: bytes | memoryview) -> None:
        """Add one message (log time = publish time = ``timestamp``) to the open chunk; write the chunk when
        it is full or old enough."""
        if self.error is not None:
            self._check()
        chunk = self._chunk
        records = chunk.records
        period = self.chunk_period
        now = self._clock() if period is not None else 0.0
        if not records:
            chunk.opened = now
        chunk.index.append((connection.id, timestamp, len(records)))
        records += _MESSAGE_RECORD.pack(fmt.MESSAGE, fmt.MESSAGE_HEAD.size + len(data), connection.id, 0,
                                        timestamp, timestamp)
        records += data
        chunk.start = min(chunk.start, timestamp)
        chunk.end = max(chunk.end, timestamp)
        if len(records) >= self.chunk_size or (period is not None and now - chunk.opened >= period):
            self._close_chunk()

    def flush_due(self) -> None:
        """Write the open chunk if its first message is ``chunk_period`` old (call it regularly)."""
        period = self.chunk_period
        if self._chunk.records and self.error is None and period is not None \
                and self._clock() - self._chunk.opened >= period:
            self._close_chunk()

    def close(self, version: int, metadata: str) -> None:
        """Write the open chunk, rosbag2's metadata record, the summary and the footer. Never raises for a
        failed write: the file then ends after its last complete record and ``error`` says why."""
        del version
        try:
            if self.error is None:
                self._close_chunk()
        except OSError:
            pass  # kept in self.error; the summary may still fit where the chunk did not
        try:
            self._commit(self._summary(metadata))
            self.finished = True
        except OSError:
            pass  # kept in self.error; the file ends after its last complete record
        finally:
            self._file.close()

    def abort(self) -> None:
        """Close without a summary (the file stays readable up to its last complete record)."""
        self._file.close()

    # ---------------------------------------------------------------- internals

    def _new_chunk(self) -> None:
        self._chunk = _Chunk()

    def _check(self) -> None:
        if self.error is not None:
            raise StorageError(self.error.errno,
                               f"{self.path} could not be written earlier: {self.error.strerror}")

    def _write_definition(self, data: bytes, kept: list[bytes]) -> None:
        """A schema or channel record in a chunk of its own after the messages so far (the open chunk is
        written first)."""
        self._check()
        if self._chunk.records:
            self._close_chunk()
        self._commit(_chunk_record(0, 0, data))
        kept.append(data)

    def _commit(self, data: bytes) -> None:
        """Append ``data`` and sync it to the disk; on an OSError cut the file back to its last complete
        record, keep the (first) error and raise it."""
        try:
            view = memoryview(data)
            while view:
                written = self._file.write(view)
                if not written:
                    raise OSError(28, os.strerror(28))
                view = view[written:]
            os.fsync(self._file.fileno())
        except OSError as error:
            self.error = self.error or error
            try:
                self._file.truncate(self._end)
                self._file.seek(self._end)
            except OSError:
                pass  # a reader stops at the cut record all the same
            raise
        self._end += len(data)

    def _close_chunk(self) -> None:
        """Write the open chunk (CRC of its records) and one message index per channel after it."""
        chunk = self._chunk
        if not chunk.records:
            return
        self._new_chunk()
        records = bytes(chunk.records)
        chunk_record = _chunk_record(chunk.start, chunk.end, records)
        entries: dict[int, list[int]] = defaultdict(list)
        for channel_id, t_ns, offset in chunk.index:
            entries[channel_id] += (t_ns, offset)
        counts = Counter({channel_id: len(flat) // 2 for channel_id, flat in entries.items()})
        indexes, offsets, position = [], [], self._end + len(chunk_record)
        for channel_id, flat in sorted(entries.items()):
            body = struct.pack(f"<{len(flat)}Q", *flat)  # (log time, offset in the records) per message
            index = fmt.record(fmt.MESSAGE_INDEX, fmt.U16.pack(channel_id) + fmt.byte_array(body))
            offsets.append(fmt.U16.pack(channel_id) + fmt.U64.pack(position))
            indexes.append(index)
            position += len(index)
        start = self._end
        try:
            self._commit(chunk_record + b"".join(indexes))
        except OSError:
            self.lost += len(chunk.index)
            raise
        offset_map = b"".join(offsets)
        self._chunk_indexes.append(fmt.record(fmt.CHUNK_INDEX, b"".join((
            fmt.U64.pack(chunk.start), fmt.U64.pack(chunk.end), fmt.U64.pack(start),
            fmt.U64.pack(len(chunk_record)), fmt.U32.pack(len(offset_map)), offset_map,
            fmt.U64.pack(position - start - len(chunk_record)), fmt.string(""),
            fmt.U64.pack(len(records)), fmt.U64.pack(len(records))))))
        self.counts.update(counts)
        self.start_ns, self.end_ns = min(self.start_ns, chunk.start), max(self.end_ns, chunk.end)

    def _summary(self, metadata: str) -> bytes:
        """rosbag2's metadata record, data end, the summary section (schemas, channels, chunk indexes,
        metadata index, statistics, summary offsets) and the footer with the summary's CRC."""
        metadata_record = fmt.record(fmt.METADATA, fmt.string("rosbag2")
                                     + fmt.string_map({"serialized_metadata": metadata}))
        head = metadata_record + fmt.record(fmt.DATA_END, fmt.U32.pack(0))
        summary_start = self._end + len(head)
        metadata_index = fmt.record(fmt.METADATA_INDEX, fmt.U64.pack(self._end)
                                    + fmt.U64.pack(len(metadata_record)) + fmt.string("rosbag2"))
        groups = [(fmt.SCHEMA, b"".join(self._schema_records)),
                  (fmt.CHANNEL, b"".join(self._channel_records)),
                  (fmt.CHUNK_INDEX, b"".join(self._chunk_indexes)),
                  (fmt.METADATA_INDEX, metadata_index),
                  (fmt.STATISTICS, fmt.record(fmt.STATISTICS, self._statistics()))]
        summary, offsets, position = bytearray(), bytearray(), summary_start
        for opcode, group in groups:
            if group:
                offsets += fmt.record(fmt.SUMMARY_OFFSET, bytes([opcode]) + fmt.U64.pack(position)
                                      + fmt.U64.pack(len(group)))
                summary += group
                position += len(group)
        footer_head = fmt.RECORD_HEAD.pack(fmt.FOOTER, 20) + fmt.U64.pack(summary_start) \
            + fmt.U64.pack(position)
        summary_crc = crc32(bytes(summary) + bytes(offsets) + footer_head)
        return head + bytes(summary) + bytes(offsets) + footer_head + fmt.U32.pack(summary_crc) + fmt.MAGIC

    def _statistics(self) -> bytes:
        count_map = b"".join(fmt.U16.pack(cid) + fmt.U64.pack(n) for cid, n in sorted(self.counts.items()))
        total = sum(self.counts.values())
        return b"".join((fmt.U64.pack(total), fmt.U16.pack(len(self._schema_records)),
                         fmt.U32.pack(len(self._channel_records)), fmt.U32.pack(0), fmt.U32.pack(1),
                         fmt.U32.pack(len(self._chunk_indexes)),
                         fmt.U64.pack(self.start_ns if total else 0), fmt.U64.pack(self.end_ns),
                         fmt.U32.pack(len(count_map)), count_map))
