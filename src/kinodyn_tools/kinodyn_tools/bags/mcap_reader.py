"""Read an MCAP storage file that may be cut short or damaged (docs/bags.md, "Damaged bags").

A file with a valid footer and summary (its CRC checked) is read through its chunk indexes. Any other file (no
footer: the recording was killed or the power cut; a summary whose CRC fails) is scanned record by record from
the start, as ``mcap recover`` does: a record cut by the end of the file ends the scan; a chunk whose CRC or
structure fails is skipped; bytes that are no record are skipped up to the next chunk that checks out.

Every chunk's CRC (when written: rosbag2 writes none by default) is checked when it is read. A skipped chunk
is counted (``skipped``) and reported once through ``report``: the messages it held per topic and their bag
times, from the message indexes after it where those survive.
"""

from __future__ import annotations

import mmap
import struct
from collections import Counter
from dataclasses import dataclass, field
from heapq import heappop, heappush
from pathlib import Path
from typing import TYPE_CHECKING
from zlib import crc32

from kinodyn_common.stamps import split_ns

from kinodyn_tools.bags import mcap_format as fmt
from kinodyn_tools.bags.mcap_format import Cursor, RecordError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator


@dataclass(frozen=True)
class Schema:
    id: int
    name: str
    encoding: str
    data: str


@dataclass(frozen=True)
class Channel:
    id: int
    schema_id: int
    topic: str
    encoding: str
    metadata: dict[str, str]


@dataclass
class ChunkRef:
    """Where one chunk record is, the log times it covers and the channels it holds (None: not known)."""

    offset: int
    end: int
    start_ns: int
    end_ns: int
    channels: frozenset[int] | None
    indexes: list[int] = field(default_factory=list)  # offsets of its message index records


Message = tuple[int, int, bytes]  # channel id, log time (ns), CDR payload


def _ns(t: int) -> str:
    sec, nanosec = split_ns(t)
    return f"{sec}.{nanosec:09d}"


class McapFile:
    """An opened MCAP file: ``schemas``, ``channels``, ``counts`` per channel, ``start_ns``/``end_ns`` of its
    messages, ``indexed`` (read through a valid summary), ``metadata`` records by name; ``messages()`` yields
    them in log-time order."""

    def __init__(self, path: str | Path, report: Callable[[str], None], use_summary: bool = True) -> None:
        self.path = Path(path)
        self._report = report
        self.schemas: dict[int, Schema] = {}
        self.channels: dict[int, Channel] = {}
        self.chunks: list[ChunkRef] = []
        self.loose: list[tuple[int, int]] = []  # (log time, record offset) of messages outside chunks
        self.counts: Counter[int] = Counter()
        self.metadata: dict[str, dict[str, str]] = {}
        self.indexed = False
        self.unchunked = False  # a valid summary without chunk indexes: its messages are found by a scan
        self.cut_at: int | None = None  # where a record cut by the end of the file starts
        self.skipped = 0  # messages in chunks that failed their check (where the count is known)
        self.damage: list[str] = []  # one line per skipped chunk or unreadable stretch
        self._reported: set[int] = set()
        with self.path.open("rb") as stream:
            size = stream.seek(0, 2)
            self._data: bytes | mmap.mmap = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) if size \
                else b""
        if self._data[:8] != fmt.MAGIC:
            self.close()
            raise RecordError(f"{self.path} is no MCAP file (no MCAP magic at its start)")
        try:
            self.header_end = self._header_end()
            if not (use_summary and self._read_summary()):
                if use_summary and not self.unchunked:
                    self._note(f"{self.path} has no valid summary (a recording that did not end cleanly?): "
                               "read by a scan; `kinodyn bag reindex` rebuilds it")
                self._scan()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if isinstance(self._data, mmap.mmap):
            self._data.close()

    @property
    def start_ns(self) -> int:
        times = [c.start_ns for c in self.chunks] + [t for t, _ in self.loose]
        return min(times) if times else 0

    @property
    def end_ns(self) -> int:
        times = [c.end_ns for c in self.chunks] + [t for t, _ in self.loose]
        return max(times) if times else 0

    # ---------------------------------------------------------------- opening

    def _header_end(self) -> int:
        opcode, start, end = fmt.first_record(self._data, 8, min(len(self._data), 8 + (1 << 20)))
        if opcode != fmt.HEADER or Cursor(self._data, start, end).string() != "ros2":
            raise RecordError(f"{self.path} is no ROS 2 MCAP file (no header with the ros2 profile)")
        return end

    def _read_summary(self) -> bool:
        """Index the file through its footer and summary; False when they are missing or do not check out."""
        data = self._data
        footer = len(data) - fmt.FOOTER_SIZE
        if footer < self.header_end or data[-8:] != fmt.MAGIC or data[footer] != fmt.FOOTER:
            return False
        try:
            cursor = Cursor(data, footer + fmt.RECORD_HEAD.size, len(data) - 8)
            summary_start, offsets_start, summary_crc = cursor.u64(), cursor.u64(), cursor.u32()
            if summary_start == 0 or not self.header_end <= summary_start <= footer:
                return False
            if summary_crc and crc32(data[summary_start:footer + fmt.RECORD_HEAD.size + 16]) != summary_crc:
                self._note(f"{self.path}: the summary fails its CRC: reading the file by a scan")
                return False
            total = None
            for opcode, start, end in fmt.records(data, summary_start, offsets_start or footer):
                cursor = Cursor(data, start, end)
                if opcode == fmt.SCHEMA:
                    self._add_schema(cursor)
                elif opcode == fmt.CHANNEL:
                    self._add_channel(cursor)
                elif opcode == fmt.CHUNK_INDEX:
                    self.chunks.append(self._chunk_ref(cursor, summary_start))
                elif opcode == fmt.STATISTICS:
                    total = self._statistics(cursor)
                elif opcode == fmt.METADATA_INDEX:
                    offset, length = cursor.u64(), cursor.u64()
                    self._add_metadata(offset, offset + length)
        except (RecordError, struct.error):
            self._reset()
            return False
        if total is None or (total and not self.chunks):
            self.unchunked = total is not None
            self._reset()  # no statistics, or messages outside chunks: only a scan finds them
            return False
        self.indexed = True
        return True

    def _chunk_ref(self, cursor: Cursor, data_end: int) -> ChunkRef:
        start_ns, end_ns, offset, length = cursor.u64(), cursor.u64(), cursor.u64(), cursor.u64()
        index_map = Cursor(cursor.byte_array())
        indexes: dict[int, int] = {}
        while index_map.pos < index_map.end:
            channel_id = index_map.u16()
            indexes[channel_id] = index_map.u64()
        if not self.header_end <= offset < offset + length <= data_end:
            raise RecordError(f"chunk index points outside the data section (byte {offset})")
        return ChunkRef(offset, offset + length, start_ns, end_ns, frozenset(indexes) or None,
                        sorted(indexes.values()))

    def _statistics(self, cursor: Cursor) -> int:
        total = cursor.u64()
        cursor.take(2 + 4 * 4 + 16)  # schema, channel, attachment, metadata, chunk counts; start, end
        counts = Cursor(cursor.byte_array())
        while counts.pos < counts.end:
            channel_id = counts.u16()
            self.counts[channel_id] = counts.u64()
        return total

    def _reset(self) -> None:
        self.schemas.clear()
        self.channels.clear()
        self.chunks.clear()
        self.counts.clear()
        self.metadata.clear()

    def _scan(self) -> None:
        """Index the data section record by record (see the module docstring)."""
        data, pos, end = self._data, self.header_end, len(self._data)
        while pos < end:
            if pos + fmt.RECORD_HEAD.size > end:
                self._cut(pos)
                return
            opcode, length = fmt.RECORD_HEAD.unpack_from(data, pos)
            content, after = pos + fmt.RECORD_HEAD.size, pos + fmt.RECORD_HEAD.size + length
            if (opcode not in fmt.KNOWN_OPCODES and opcode < fmt.FIRST_USER_OPCODE) or opcode == 0:
                pos = self._skip_to_chunk(pos, "a byte that starts no record")
                continue
            if after > end:
                if opcode == fmt.CHUNK and self._resync(pos + 1) is not None:
                    pos = self._skip_to_chunk(pos, "a chunk record longer than the file")
                    continue
                self._cut(pos)
                return
            if opcode in (fmt.DATA_END, fmt.FOOTER):
                return
            try:
                self._scan_record(opcode, Cursor(data, content, after), pos, after)
            except (RecordError, struct.error) as error:
                pos = self._skip_to_chunk(pos, f"a record that does not parse ({error})")
                continue
            pos = after

    def _scan_record(self, opcode: int, cursor: Cursor, pos: int, after: int) -> None:
        if opcode == fmt.SCHEMA:
            self._add_schema(cursor)
        elif opcode == fmt.CHANNEL:
            self._add_channel(cursor)
        elif opcode == fmt.MESSAGE:
            channel_id, _, log_time, _ = cursor.unpack(fmt.MESSAGE_HEAD)
            self.loose.append((log_time, pos))
            self.counts[channel_id] += 1
        elif opcode == fmt.CHUNK:
            start_ns, end_ns = cursor.unpack(fmt.CHUNK_HEAD)[:2]  # the header's claim, until the records tell
            ref = ChunkRef(pos, after, start_ns, end_ns, None)
            ref.indexes = self._following_indexes(after)
            messages = self._load(ref)
            if messages is not None:
                ref.start_ns = min((t for t, *_ in messages), default=0)
                ref.end_ns = max((t for t, *_ in messages), default=0)
                ref.channels = frozenset(cid for _, _, cid, _ in messages)
                self.counts.update(cid for _, _, cid, _ in messages)
                if messages:
                    self.chunks.append(ref)
        elif opcode == fmt.METADATA:
            self._add_metadata(pos, after)

    def _following_indexes(self, pos: int) -> list[int]:
        """Offsets of the message index records right after a chunk."""
        found = []
        try:
            for opcode, _, end in fmt.records(self._data, pos):
                if opcode != fmt.MESSAGE_INDEX:
                    break
                found.append(pos)
                pos = end
        except RecordError:
            pass
        return found

    def _cut(self, pos: int) -> None:
        self.cut_at = pos
        self._note(f"{self.path} ends inside a record at byte {pos}: the {len(self._data) - pos} bytes after "
                   "it are a record cut short (the recording stopped while writing it)")

    def _skip_to_chunk(self, pos: int, what: str) -> int:
        """The offset of the next chunk that checks out after a bad record at ``pos`` (else the end)."""
        found = self._resync(pos + 1)
        resume = len(self._data) if found is None else found
        self._damaged(pos, f"{self.path}: {what} at byte {pos}: skipped {resume - pos} bytes up to "
                      + ("the end of the file" if found is None else f"the next good chunk at byte {found}"))
        return resume

    def _resync(self, pos: int) -> int | None:
        data = self._data
        while True:
            pos = data.find(bytes([fmt.CHUNK]), pos)
            if pos < 0 or pos + fmt.RECORD_HEAD.size + fmt.CHUNK_HEAD.size > len(data):
                return None
            (length,) = fmt.U64.unpack_from(data, pos + 1)
            if length <= len(data) - pos - fmt.RECORD_HEAD.size and \
                    self._chunk_records(pos, pos + fmt.RECORD_HEAD.size + length, quiet=True) is not None:
                return pos
            pos += 1

    # ---------------------------------------------------------------- definitions and metadata

    def _add_schema(self, cursor: Cursor) -> None:
        schema_id = cursor.u16()
        name, encoding, data = cursor.string(), cursor.string(), cursor.byte_array()
        self.schemas[schema_id] = Schema(schema_id, name, encoding, data.decode(errors="replace"))

    def _add_channel(self, cursor: Cursor) -> None:
        channel_id, schema_id = cursor.u16(), cursor.u16()
        topic, encoding, metadata = cursor.string(), cursor.string(), cursor.string_map()
        self.channels[channel_id] = Channel(channel_id, schema_id, topic, encoding, metadata)

    def _add_metadata(self, start: int, end: int) -> None:
        opcode, content, after = fmt.first_record(self._data, start, end)
        if opcode == fmt.METADATA:
            cursor = Cursor(self._data, content, after)
            name = cursor.string()
            self.metadata[name] = cursor.string_map()

    # ---------------------------------------------------------------- messages

    def _chunk_records(self, start: int, end: int, quiet: bool = False) -> bytes | str | None:
        """The records of the chunk record at ``start`` (CRC checked), else why not (``quiet``: None)."""
        try:
            opcode, content, after = fmt.first_record(self._data, start, end)
            if opcode != fmt.CHUNK or after != end:
                raise RecordError("no chunk record there")
            cursor = Cursor(self._data, content, after)
            _, _, size, crc = cursor.unpack(fmt.CHUNK_HEAD)
            compression = cursor.string()
            stored = cursor.take(cursor.u64())
            if compression not in fmt.DECOMPRESSORS:
                raise RecordError(f"unknown compression '{compression}'")
            try:
                raw = fmt.DECOMPRESSORS[compression](stored)
            except Exception as error:  # noqa: BLE001  (lz4 and zstd raise their own types for corrupt data)
                raise RecordError(f"{compression} data that does not decompress ({error})") from None
            if len(raw) != size:
                raise RecordError(f"{len(raw)} bytes of records where the chunk says {size}")
            if crc and crc32(raw) != crc:
                raise RecordError("CRC mismatch")
            if quiet:
                list(fmt.records(raw))
            return raw
        except (RecordError, ValueError, struct.error) as error:
            return None if quiet else str(error)

    def _load(self, ref: ChunkRef) -> list[tuple[int, int, int, bytes]] | None:
        """``(log time, offset, channel id, payload)`` of a chunk's messages; None (reported) if it fails."""
        raw = self._chunk_records(ref.offset, ref.end)
        if isinstance(raw, bytes):
            try:
                messages = []
                for opcode, start, end in fmt.records(raw):
                    cursor = Cursor(raw, start, end)
                    if opcode == fmt.MESSAGE:
                        channel_id, _, log_time, _ = cursor.unpack(fmt.MESSAGE_HEAD)
                        messages.append((log_time, ref.offset + start, channel_id, cursor.rest()))
                    elif opcode == fmt.SCHEMA:
                        self._add_schema(cursor)
                    elif opcode == fmt.CHANNEL:
                        self._add_channel(cursor)
                return messages
            except (RecordError, struct.error) as error:
                raw = f"records that do not parse ({error})"
        self._damaged(ref.offset, self._chunk_damage(ref, str(raw)))
        return None

    def _chunk_damage(self, ref: ChunkRef, why: str) -> str:
        """The line that names a skipped chunk: its messages per topic and their times where the message
        indexes after it tell them, else the times its header or chunk index gives."""
        topics: Counter[str] = Counter()
        times: list[int] = []
        for offset in ref.indexes:
            try:
                opcode, start, end = fmt.first_record(self._data, offset)
                cursor = Cursor(self._data, start, end)
                channel_id, entries = cursor.u16(), Cursor(cursor.byte_array())
                if opcode != fmt.MESSAGE_INDEX:
                    continue
                while entries.pos < entries.end:
                    times.append(entries.u64())
                    entries.u64()
                    topics[self._topic(channel_id)] += 1
            except (RecordError, struct.error):
                continue
        if not times and ref.end_ns:
            times = [ref.start_ns, ref.end_ns]
        self.skipped += sum(topics.values())
        what = ", ".join(f"{n} of {topic}" for topic, n in sorted(topics.items())) \
            or "its messages (count unknown)"
        when = f" from bag time {_ns(min(times))} to {_ns(max(times))}" if times else ""
        return f"{self.path}: chunk at byte {ref.offset} fails its check ({why}): skipped {what}{when}"

    def _topic(self, channel_id: int) -> str:
        channel = self.channels.get(channel_id)
        return channel.topic if channel else f"channel {channel_id}"

    def _damaged(self, offset: int, line: str) -> None:
        if offset not in self._reported:
            self._reported.add(offset)
            self.damage.append(line)
            self._report(line)

    def _note(self, line: str) -> None:
        self._report(line)

    def _loose_messages(self, wanted: frozenset[int]) -> list[tuple[int, int, int, bytes]]:
        out = []
        for _, offset in self.loose:
            _, start, end = fmt.first_record(self._data, offset)
            channel_id, _, log_time, _ = fmt.MESSAGE_HEAD.unpack_from(self._data, start)
            if channel_id in wanted:
                payload = bytes(self._data[start + fmt.MESSAGE_HEAD.size:end])
                out.append((log_time, offset, channel_id, payload))
        return out

    def messages(self, channel_ids: Iterable[int], start: int | None = None, stop: int | None = None
                 ) -> Iterator[Message]:
        """``(channel id, log time, payload)`` of the wanted channels with ``start <= log time < stop``, in
        log-time order (file order among equal times); a chunk that fails its check is skipped, reported."""
        wanted = frozenset(channel_ids)
        low, high = start if start is not None else 0, stop if stop is not None else 2**64
        sources = [(c.start_ns, k, c) for k, c in enumerate(self.chunks)
                   if c.end_ns >= low and c.start_ns < high and (c.channels is None or c.channels & wanted)]
        sources.sort(key=lambda source: source[:2])
        heap: list[tuple[int, int, int, bytes]] = []
        if self.loose:
            for item in self._loose_messages(wanted):
                heappush(heap, item)
        k = 0
        while True:
            while k < len(sources) and (not heap or sources[k][0] <= heap[0][0]):
                for item in self._load(sources[k][2]) or ():
                    if item[2] in wanted:
                        heappush(heap, item)
                k += 1
            if not heap:
                return
            log_time, _, channel_id, payload = heappop(heap)
            if low <= log_time < high:
                yield channel_id, log_time, payload
