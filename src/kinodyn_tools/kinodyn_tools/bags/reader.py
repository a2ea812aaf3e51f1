"""Read a rosbag2 bag by the message definitions it stores (docs/bags.md).

The bag's storage files are read by ``kinodyn_tools.bags.directory`` (with or without metadata.yaml; MCAP
chunk
CRCs checked, a chunk that fails skipped, counted and reported once on stderr naming the file, topics and bag
times, and the reading goes on; a file without its summary read by a scan). rosbags' AnyReader builds the
typestore from each topic's stored definition (ros2msg or ros2idl) and checks it against the stored RIHS01
hash, so a bag recorded before a message changed reads with its own layout. A bag that stores no definitions
is read with the installed types. Where the stored definition is the installed one (equal RIHS01 hash), the
estimator's 500 Hz inputs are decoded by ``kinodyn_common.cdr`` into the same objects, ~10x faster.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from kinodyn_common.cdr import DECODERS
from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.typesys import Stores, get_typestore

from kinodyn_tools.bags.directory import BagError, StorageBag
from kinodyn_tools.bags.typestore import deserialize_cdr, installed_typestore

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from rosbags.interfaces import Connection
    from rosbags.typesys.store import Typestore

__all__ = ["BagError", "BagReader", "open_bag", "read_messages", "reader_messages", "select_connections"]


def warn(line: str) -> None:
    """A reader's report of a damaged or cut storage file: one line on stderr."""
    print(f"kinodyn bag: warning: {line}", file=sys.stderr, flush=True)


class BagReader(AnyReader):
    """rosbags' AnyReader over one bag directory read by ``StorageBag`` (see the module docstring);
    ``skipped`` counts the messages of chunks that failed their check."""

    default_typestore: Typestore

    def __init__(self, path: Path, default_typestore: Typestore,
                 report: Callable[[str], None] = warn) -> None:
        # AnyReader.__init__ would open the directory with rosbags' reader, which needs metadata.yaml and
        # stops at the first bad chunk; the rest of AnyReader (typestore, hash check, merge) is used as it is.
        self.paths = [path]
        self.is2 = True
        self.stack = None
        self.connections = []
        self.default_typestore = default_typestore
        self.typestore = get_typestore(Stores.EMPTY)
        self.storage = StorageBag(path, report)
        # rosbags types AnyReader.readers as its own Reader classes; StorageBag has their interface
        self.readers = [self.storage]  # type: ignore[assignment]

    @property
    def skipped(self) -> int:
        return self.storage.skipped


@contextmanager
def open_bag(path: str | Path, report: Callable[[str], None] = warn) -> Iterator[BagReader]:
    """The opened bag directory (storage files, metadata.yaml where there is one) as an AnyReader."""
    try:
        reader = BagReader(Path(path), installed_typestore(), report)
        reader.open()
    except AnyReaderError as error:
        raise BagError(f"cannot read bag {path}: {error}") from None
    try:
        yield reader
    finally:
        reader.close()


def select_connections(reader: BagReader, topics: Iterable[str] | None) -> list[Connection]:
    """The bag's connections on ``topics`` (all when None); a topic the bag does not have is an error."""
    if topics is None:
        return list(reader.connections)
    wanted = set(topics)
    missing = wanted - {connection.topic for connection in reader.connections}
    if missing:
        raise BagError(f"bag has no topic {', '.join(sorted(missing))} (see `kinodyn bag info`)")
    return [connection for connection in reader.connections if connection.topic in wanted]


def read_messages(
    path: str | Path, topics: Iterable[str] | None = None, report: Callable[[str], None] = warn
) -> Iterator[tuple[str, str, int, object]]:
    """``(topic, msgtype, t_ns, message)`` in bag-time order; ``message`` is a rosbags object with the ROS
    field names, deserialised by the definition stored in the bag. ``report`` takes the line of each damaged
    stretch skipped (default: stderr)."""
    with open_bag(path, report) as reader:
        yield from reader_messages(reader, select_connections(reader, topics))


def reader_messages(reader: BagReader, connections: list[Connection]
                    ) -> Iterator[tuple[str, str, int, object]]:
    """``read_messages`` of an opened bag (``open_bag``) on ``connections`` (``select_connections``)."""
    if not connections:  # reader.messages takes no connections as all of them
        return
    decoders = {id(c): message_decoder(reader, c) for c in connections}
    for connection, t_ns, raw in reader.messages(connections=connections):
        yield connection.topic, connection.msgtype, t_ns, decoders[id(connection)](raw)


def stores_installed_definition(reader: BagReader, connection: Connection) -> bool:
    """Whether the bag stores the installed definition of the connection's type (equal RIHS01 hash): its
    CDR is then laid out as ``kinodyn_common.cdr`` expects."""
    return connection.digest == reader.default_typestore.hash_rihs01(connection.msgtype)


def fast_decoder(reader: BagReader, connection: Connection) -> Callable[[bytes | memoryview], object] | None:
    """``kinodyn_common.cdr``'s decoder of the connection's type when the bag stores the installed
    definition, else None (rosbags decodes by the stored one)."""
    decoder = DECODERS.get(connection.msgtype)
    if decoder is None or not stores_installed_definition(reader, connection):
        return None
    types = reader.typestore.types
    return lambda raw: decoder(raw, types)


def message_decoder(reader: BagReader, connection: Connection) -> Callable[[bytes | memoryview], object]:
    """Raw CDR of the connection -> message object: ``fast_decoder`` where there is one, else rosbags by the
    definition the bag stores (bytes after the message ignored: ``deserialize_cdr``)."""
    return fast_decoder(reader, connection) or partial(deserialize_cdr, reader.typestore,
                                                       msgtype=connection.msgtype)
