"""A bag directory's storage files read as one bag, with or without its metadata.yaml (docs/bags.md).

The files are the ones metadata.yaml lists; where it is missing or unreadable (a recording that was killed
writes none), the directory's ``*.mcap`` or ``*.db3`` files. Topics, types, definitions, QoS and counts come
from the storage files themselves (MCAP: ``kinodyn_tools.bags.mcap_reader``, which checks chunk CRCs and
reads a file without its summary; sqlite3: rosbags' reader), the RIHS01 type hash from the MCAP channel's
``topic_type_hash`` or else metadata.yaml. ``StorageBag`` is a sub-reader of rosbags' ``AnyReader`` (its
``connections`` and ``messages``), which builds the typestore from the stored definitions.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from rosbags.interfaces import Connection, ConnectionExtRosbag2, MessageDefinition, MessageDefinitionFormat
from rosbags.rosbag2.errors import ReaderError
from rosbags.rosbag2.metadata import parse_qos
from rosbags.rosbag2.storage_sqlite3 import Sqlite3Reader

from kinodyn_tools.bags.mcap_format import RecordError
from kinodyn_tools.bags.mcap_reader import McapFile

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator
    from types import TracebackType

SUFFIXES = {".mcap": "mcap", ".db3": "sqlite3"}
_FORMATS = {"ros2msg": MessageDefinitionFormat.MSG, "ros2idl": MessageDefinitionFormat.IDL}


class BagError(RuntimeError):
    """A path that is no readable rosbag2 bag, or a topic it lacks; the message says which and what to do."""


def read_metadata_file(bag: Path) -> dict[str, Any] | None:  # Any: YAML values
    """The ``rosbag2_bagfile_information`` mapping of ``bag/metadata.yaml``; None when there is none or it is
    no such file."""
    path = bag / "metadata.yaml"
    try:
        meta = yaml.safe_load(path.read_text(encoding="utf-8"))["rosbag2_bagfile_information"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return None
    return meta if isinstance(meta, dict) else None


def storage_files(bag: Path, meta: dict[str, Any] | None) -> tuple[str, list[Path]]:
    """The storage id and files of a bag directory: metadata.yaml's list where it names files that exist,
    else the directory's ``*.mcap`` or ``*.db3`` files."""
    if not bag.is_dir():
        raise BagError(f"{bag} is no rosbag2 bag: give the bag directory (the one holding the .mcap or .db3 "
                       "file)")
    if meta is not None:
        try:
            files = [bag / Path(name).name for name in meta["relative_file_paths"]]
            storage = str(meta["storage_identifier"])
        except (KeyError, TypeError):
            files, storage = [], ""
        if files and storage in SUFFIXES.values() and all(f.is_file() for f in files):
            return storage, files
    found = {kind: sorted(bag.glob(f"*{suffix}")) for suffix, kind in SUFFIXES.items()}
    kinds = [kind for kind, files in found.items() if files]
    if len(kinds) != 1:
        what = "both .mcap and .db3 files" if kinds else \
            "no metadata.yaml naming its files and no .mcap or .db3 file"
        raise BagError(f"{bag} is no rosbag2 bag: it has {what}")
    return kinds[0], found[kinds[0]]


@dataclass(frozen=True)
class FileSummary:
    """One storage file's messages: its name, first and last bag time (ns) and count."""

    name: str
    start_ns: int
    end_ns: int
    count: int


class StorageBag:
    """The storage files of a bag directory as one reader (see the module docstring)."""

    def __init__(self, path: str | Path, report: Callable[[str], None], use_summary: bool = True) -> None:
        self.path = Path(path)
        self.meta = read_metadata_file(self.path)
        self.storage_id, self.files = storage_files(self.path, self.meta)
        self._report, self._use_summary = report, use_summary
        self.connections: list[Connection] = []
        self.mcap_files: list[McapFile] = []
        self.opened: list[tuple[Any, dict[int, Connection]]] = []  # storage reader, its ids -> connections
        self.file_summaries: list[FileSummary] = []

    def __enter__(self) -> StorageBag:
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def open(self) -> None:
        stored_hashes = {}
        for entry in (self.meta or {}).get("topics_with_message_count") or []:
            try:
                stored_hashes[entry["topic_metadata"]["name"]] = entry["topic_metadata"].get(
                    "type_description_hash", "")
            except (KeyError, TypeError, AttributeError):
                continue
        by_key: dict[tuple[str, str], Connection] = {}
        for path in self.files:
            storage: McapFile | Sqlite3Reader
            if self.storage_id == "mcap":
                storage, found = self._open_mcap(path, stored_hashes)
            else:
                storage, found = self._open_sqlite(path)
            ids = {}
            for storage_id, connection in found.items():
                key = (connection.topic, connection.msgtype)
                if key not in by_key:
                    by_key[key] = connection._replace(id=len(by_key) + 1, msgcount=0, owner=self)
                known = by_key[key]
                by_key[key] = known._replace(msgcount=known.msgcount + connection.msgcount)
                ids[storage_id] = key
            self.opened.append((storage, ids))  # type: ignore[arg-type]  # ids: (topic, type) keys until all are read
        self.connections = list(by_key.values())
        self.opened = [(storage, {i: by_key[key] for i, key in ids.items()})  # type: ignore[index]  # keys, above
                       for storage, ids in self.opened]

    def _open_mcap(self, path: Path, stored_hashes: dict[str, str]) -> tuple[McapFile, dict[int, Connection]]:
        try:
            file = McapFile(path, self._report, self._use_summary)
        except (RecordError, OSError) as error:
            raise BagError(f"cannot read {path}: {error}") from None
        self.mcap_files.append(file)
        found = {}
        for channel in file.channels.values():
            schema = file.schemas.get(channel.schema_id)
            if schema is None:
                self._report(f"{path}: topic {channel.topic} has no schema (type) in the file: not read")
                continue
            msgdef = MessageDefinition(_FORMATS.get(schema.encoding, MessageDefinitionFormat.NONE),
                                       schema.data)
            try:
                qos = parse_qos(channel.metadata.get("offered_qos_profiles", ""))
            except (ReaderError, KeyError, TypeError, ValueError, AttributeError) as error:
                self._report(f"{path}: topic {channel.topic}: its offered_qos_profiles do not parse as QoS "
                             f"profiles ({error!r}): played with rosbag2's default offer")
                qos = []
            digest = channel.metadata.get("topic_type_hash") or stored_hashes.get(channel.topic, "")
            found[channel.id] = Connection(channel.id, channel.topic, schema.name, msgdef, digest,
                                           file.counts.get(channel.id, 0),
                                           ConnectionExtRosbag2(channel.encoding, qos), self)
        for channel_id in sorted(set(file.counts) - set(found)):
            self._report(f"{path}: {file.counts[channel_id]} messages of channel {channel_id}, whose channel "
                         "or schema record is lost: not read")
        total = sum(file.counts.values())
        self.file_summaries.append(FileSummary(path.name, file.start_ns, file.end_ns, total))
        return file, found

    def _open_sqlite(self, path: Path) -> tuple[Sqlite3Reader, dict[int, Connection]]:
        storage = Sqlite3Reader(path)
        try:
            storage.open()
        except ReaderError as error:
            raise BagError(f"cannot read {path}: {error}") from None
        meta = storage.metadata
        count = meta.message_count
        self.file_summaries.append(FileSummary(path.name, meta.start_time if count else 0,
                                               meta.end_time - 1 if count else 0, count))
        return storage, {connection.id: connection for connection in storage.connections}

    def close(self) -> None:
        for storage, _ in self.opened:
            storage.close()
        for file in self.mcap_files:
            file.close()
        self.opened.clear()
        self.mcap_files.clear()

    @property
    def message_count(self) -> int:
        return sum(f.count for f in self.file_summaries)

    @property
    def start_time(self) -> int:
        """Bag time (ns) of the first message (2**63 - 1 without messages), as rosbags."""
        return min((f.start_ns for f in self.file_summaries if f.count), default=2**63 - 1)

    @property
    def end_time(self) -> int:
        """Bag time (ns) just after the last message (0 without messages), as rosbags."""
        return max((f.end_ns + 1 for f in self.file_summaries if f.count), default=0)

    @property
    def skipped(self) -> int:
        """Messages skipped so far because their chunk failed its check."""
        return sum(file.skipped for file in self.mcap_files)

    @property
    def damage(self) -> list[str]:
        return [line for file in self.mcap_files for line in file.damage]

    def messages(self, connections: Collection[Connection] = (), start: int | None = None,
                 stop: int | None = None) -> Iterator[tuple[Connection, int, bytes]]:
        """``(connection, bag time, CDR bytes)`` of ``connections`` (all when empty) in bag-time order."""
        wanted = {c.id for c in connections} if connections else {c.id for c in self.connections}
        streams = []
        for storage, ids in self.opened:
            mine = {i: c for i, c in ids.items() if c.id in wanted}
            if not mine:
                continue
            if isinstance(storage, McapFile):
                stream = storage.messages(mine, start, stop)
            else:
                chosen = [c for c in storage.connections if c.id in mine]
                stream = ((c.id, t, data) for c, t, data in storage.messages(chosen, start, stop))
            streams.append(_tagged(stream, mine))
        yield from heapq.merge(*streams, key=lambda item: item[1])


def _tagged(stream: Iterator[tuple[int, int, bytes]], connections: dict[int, Connection]
            ) -> Iterator[tuple[Connection, int, bytes]]:
    """A storage's ``(id, time, data)`` with the bag's connection of each storage id."""
    for storage_id, t_ns, data in stream:
        yield connections[storage_id], t_ns, data
