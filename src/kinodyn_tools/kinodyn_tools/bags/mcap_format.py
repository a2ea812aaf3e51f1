"""MCAP records as bytes (the MCAP specification, format version 0): the opcodes, the encoders the writer uses
and the parsers the reader uses. Little endian; strings and byte arrays carry a u32 length, maps a u32 byte
length.
"""

from __future__ import annotations

import struct
import sys
from typing import TYPE_CHECKING, Any

from lz4.frame import decompress as lz4_decompress  # rosbags' dependency

if TYPE_CHECKING:
    import mmap
    from collections.abc import Callable, Iterator, Mapping

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

MAGIC = b"\x89MCAP0\r\n"
HEADER, FOOTER, SCHEMA, CHANNEL, MESSAGE, CHUNK, MESSAGE_INDEX, CHUNK_INDEX = range(1, 9)
STATISTICS, METADATA, METADATA_INDEX, SUMMARY_OFFSET, DATA_END = 0x0B, 0x0C, 0x0D, 0x0E, 0x0F
KNOWN_OPCODES = frozenset(range(0x01, 0x10))
FIRST_USER_OPCODE = 0x80  # 0x80 and up: records an application defines (skipped by readers)
RECORD_HEAD = struct.Struct("<BQ")  # opcode, content length
FOOTER_SIZE = RECORD_HEAD.size + 20 + len(MAGIC)  # footer record (summary start, offset start, crc) + magic
MESSAGE_HEAD = struct.Struct("<HIQQ")  # channel id, sequence, log time, publish time
CHUNK_HEAD = struct.Struct("<QQQI")  # message start time, end time, uncompressed size, uncompressed crc
U16, U32, U64 = struct.Struct("<H"), struct.Struct("<I"), struct.Struct("<Q")

DECOMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "": lambda data: data,
    "lz4": lz4_decompress,
    "zstd": zstd.decompress,
}


class RecordError(ValueError):
    """Bytes that are not the record they should be (truncated, a length past the end, a bad field)."""


def record(opcode: int, content: bytes) -> bytes:
    """One record: opcode, u64 content length, content."""
    return RECORD_HEAD.pack(opcode, len(content)) + content


def string(text: str) -> bytes:
    data = text.encode()
    return U32.pack(len(data)) + data


def byte_array(data: bytes) -> bytes:
    return U32.pack(len(data)) + data


def string_map(values: Mapping[str, str]) -> bytes:
    """A map<string, string> with its u32 byte length (keys sorted, as the specification asks)."""
    body = b"".join(string(key) + string(values[key]) for key in sorted(values))
    return U32.pack(len(body)) + body


class Cursor:
    """Reads the fields of one record's content; every read past its end raises RecordError."""

    __slots__ = ("data", "end", "pos")

    def __init__(self, data: bytes | memoryview | mmap.mmap, pos: int = 0, end: int | None = None) -> None:
        self.data, self.pos = data, pos
        self.end = len(data) if end is None else end

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > self.end:
            raise RecordError(f"field of {size} bytes past the record's end")
        value = bytes(self.data[self.pos:self.pos + size])
        self.pos += size
        return value

    def unpack(self, layout: struct.Struct) -> tuple[Any, ...]:  # Any: struct.unpack's fields
        return layout.unpack(self.take(layout.size))

    def u16(self) -> int:
        value: int = self.unpack(U16)[0]
        return value

    def u32(self) -> int:
        value: int = self.unpack(U32)[0]
        return value

    def u64(self) -> int:
        value: int = self.unpack(U64)[0]
        return value

    def string(self) -> str:
        try:
            return self.take(self.u32()).decode()
        except UnicodeDecodeError as error:
            raise RecordError(f"string that is not UTF-8 ({error})") from None

    def byte_array(self) -> bytes:
        return self.take(self.u32())

    def string_map(self) -> dict[str, str]:
        inner = Cursor(self.take(self.u32()))
        values = {}
        while inner.pos < inner.end:
            key = inner.string()
            values[key] = inner.string()
        return values

    def rest(self) -> bytes:
        return self.take(self.end - self.pos)


def records(data: bytes | memoryview | mmap.mmap, start: int = 0, end: int | None = None
            ) -> Iterator[tuple[int, int, int]]:
    """``(opcode, content start, content end)`` of the records in ``data[start:end]``; RecordError at a record
    that does not fit."""
    end = len(data) if end is None else end
    pos = start
    while pos < end:
        if pos + RECORD_HEAD.size > end:
            raise RecordError(f"record head cut at byte {pos}")
        opcode, length = RECORD_HEAD.unpack_from(data, pos)
        content = pos + RECORD_HEAD.size
        if length > end - content:
            raise RecordError(f"record at byte {pos} claims {length} bytes, {end - content} left")
        yield opcode, content, content + length
        pos = content + length


def first_record(data: bytes | memoryview | mmap.mmap, start: int, end: int | None = None
                 ) -> tuple[int, int, int]:
    """``(opcode, content start, content end)`` of the record at ``start``; RecordError when none fits."""
    for found in records(data, start, end):
        return found
    raise RecordError(f"no record at byte {start}")
