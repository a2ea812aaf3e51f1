"""Write a rosbag2 bag (metadata.yaml version 9, MCAP or sqlite3 storage) through rosbags.

Each topic stores its message definition (ros2msg, dependencies included) and RIHS01 type hash from the
installed typestore, and its offered QoS profiles, so `ros2 bag`, Foxglove and `kinodyn bag play` read it.
What is written reaches the disk every ``chunk_size`` bytes and, given a ``chunk_period`` (`kinodyn bag
record`), within that many seconds (MCAP: a chunk with its CRC, ``kinodyn_tools.bags.mcap_storage``; sqlite3:
a committed transaction); ``flush_due()`` writes what is due when no further message comes. Without a period
the file's bytes depend on the messages alone. A failed write (a full disk) leaves the bag closed with what it
holds: ``error`` says why, and metadata.yaml counts what the file holds.

    with BagWriter("out", storage="mcap") as bag:
        bag.add_topic("/tf_static", "tf2_msgs/msg/TFMessage", qos="transient_local")
        bag.write("/tf_static", t_ns, message_or_cdr_bytes)
"""

from __future__ import annotations

import errno
import sqlite3
import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from kinodyn_common.cdr import ENCODERS
from rclpy.serialization import serialize_message
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_sqlite3 import Sqlite3Writer

from kinodyn_tools.bags.mcap_storage import DEFAULT_CHUNK_SIZE, McapStorage, StorageError, check_limits
from kinodyn_tools.bags.metadata import write_metadata
from kinodyn_tools.bags.qos import PRESETS
from kinodyn_tools.bags.typestore import deserialize_cdr, installed_typestore

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import TracebackType

    from rosbags.interfaces import Connection, Qos
    from rosbags.rosbag2.enums import CompressionMode
    from rosbags.typesys.store import Typestore

#: rosbag2 metadata version written (Jazzy and later).
METADATA_VERSION: Literal[9] = 9
STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


class Sqlite3Storage(Sqlite3Writer):
    """rosbags' sqlite3 storage committing its transaction every ``chunk_size`` bytes of messages or
    ``chunk_period`` s (rosbags' own commits only when the bag is closed, so a crash lost everything). An
    sqlite3 error (a full disk) becomes a ``StorageError`` kept in ``error``; what was committed stays."""

    def __init__(self, path: Path, compression: CompressionMode, *, chunk_size: int,
                 chunk_period: float | None, clock: Callable[[], float]) -> None:
        super().__init__(path, compression)
        self._chunk_size, self._period, self._clock = chunk_size, chunk_period, clock
        self._opened: float | None = None
        self._size = 0
        self._pending: Counter[int] = Counter()
        self.counts: Counter[int] = Counter()  # committed messages per connection id
        self.error: OSError | None = None
        self.lost = 0

    def write(self, connection: Connection, timestamp: int, data: bytes | memoryview) -> None:
        if self.error is not None:
            raise self.error
        try:
            super().write(connection, timestamp, data)
        except sqlite3.Error as error:
            raise self._failed(error) from None
        self._pending[connection.id] += 1
        if self._opened is None:
            self._opened = self._clock()
        self._size += len(data)
        if self._size >= self._chunk_size:
            self._commit()
        else:
            self.flush_due()

    def flush_due(self) -> None:
        if self.error is None and self._period is not None and self._opened is not None \
                and self._clock() - self._opened >= self._period:
            self._commit()

    def close(self, version: int, metadata: str) -> None:
        if self.error is None:
            try:
                super().close(version, metadata)
                return
            except sqlite3.Error as error:
                self._failed(error)
        self.conn.rollback()
        self.conn.close()

    def _commit(self) -> None:
        try:
            self.conn.commit()
        except sqlite3.Error as error:
            raise self._failed(error) from None
        self.counts.update(self._pending)
        self._pending.clear()
        self._opened, self._size = None, 0

    def _failed(self, error: sqlite3.Error) -> StorageError:
        """Keep the first failure as an OSError (ENOSPC for a full disk, else EIO) and count what is lost."""
        if self.error is None:
            code = errno.ENOSPC if "full" in str(error) else errno.EIO
            self.error = StorageError(code, str(error), str(self.path))
            self.lost = sum(self._pending.values())
        return self.error  # type: ignore[return-value]


class BagWriter:
    """A rosbag2 directory being written; `close()` (or leaving the `with` block) writes metadata.yaml.

    ``chunk_size`` (bytes) and ``chunk_period`` (s of ``clock``, monotonic; None: by size only) bound what a
    crash can lose."""

    def __init__(self, path: str | Path, storage: str = "mcap", typestore: Typestore | None = None, *,
                 chunk_size: int = DEFAULT_CHUNK_SIZE, chunk_period: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if storage not in STORAGES:
            raise ValueError(f"storage '{storage}' is not one of {', '.join(STORAGES)}")
        check_limits(chunk_size, chunk_period)
        self.path = Path(path)
        self.storage = storage
        self.typestore = typestore if typestore is not None else installed_typestore()
        self._writer = Writer(self.path, version=METADATA_VERSION, storage_plugin=STORAGES[storage])
        limits = {"chunk_size": chunk_size, "chunk_period": chunk_period, "clock": clock}
        # rosbags types STORAGE_PLUGINS as storage classes; a partial of one is called the same way
        self._writer.STORAGE_PLUGINS = {StoragePlugin.MCAP: partial(McapStorage, **limits),  # type: ignore[dict-item, arg-type]
                                        StoragePlugin.SQLITE3: partial(Sqlite3Storage, **limits)}  # type: ignore[dict-item, arg-type]
        self._writer.open()
        self._storage: McapStorage | Sqlite3Storage = self._writer.storage  # type: ignore[assignment]
        self._connections: dict[str, Connection] = {}

    def add_topic(
        self,
        name: str,
        msgtype: str,
        qos: str | Sequence[Qos] = "default",
        type_hash: str | None = None,
    ) -> None:
        """Declare a topic: ``msgtype`` as ``pkg/msg/Name``, ``qos`` a preset name (default, transient_local,
        sensor) or the offered profiles as recorded; ``type_hash`` the RIHS01 hash the graph reports (else
        the typestore's, which equals it for the same definition)."""
        if name in self._connections:
            raise ValueError(f"topic {name} is already in the bag")
        if msgtype not in self.typestore.fielddefs:
            raise ValueError(f"type {msgtype} of {name} is not installed (no .msg in AMENT_PREFIX_PATH)")
        if isinstance(qos, str):
            if qos not in PRESETS:
                raise ValueError(f"QoS preset '{qos}' is not one of {', '.join(PRESETS)}")
            qos = [PRESETS[qos]]
        msgdef, _ = self.typestore.generate_msgdef(msgtype, ros_version=2)
        self._connections[name] = self._writer.add_connection(
            name, msgtype, msgdef=msgdef, rihs01=type_hash or self.typestore.hash_rihs01(msgtype),
            offered_qos_profiles=list(qos),
        )

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(self._connections)

    def write(self, topic: str, t_ns: int, message: bytes | memoryview | Any) -> None:  # noqa: ANN401  (an rclpy or rosbags message of any type)
        """Store one message received at ``t_ns`` (bag time, ns): CDR bytes as received (stored unchanged), an
        rclpy message, or a rosbags message object of the topic's type.

        Message objects are serialised by rosbags, whose CDR padding bytes are zero: rclpy's
        serialize_message leaves alignment padding uninitialised (the same JointState twice can give two
        byte strings), and two runs writing the same messages must give the same bag. Types in
        ``kinodyn_common.cdr.ENCODERS`` (nav_msgs/Odometry) are packed directly into those same bytes."""
        connection = self._connections[topic]
        if not isinstance(message, bytes | memoryview):
            from_rclpy = hasattr(type(message), "get_fields_and_field_types")
            encoder = ENCODERS.get(connection.msgtype) if from_rclpy else None
            if encoder is not None:
                message = encoder(message)  # the bytes of the round trip below, without it
            else:
                if from_rclpy:
                    # rclpy's buffer can end with unused bytes, which deserialize_cdr ignores
                    message = deserialize_cdr(self.typestore, serialize_message(message), connection.msgtype)
                message = self.typestore.serialize_cdr(message, connection.msgtype)
        self._writer.write(connection, int(t_ns), message)


    def flush_due(self) -> None:
        """Write the messages held for ``chunk_period`` s or longer (call it regularly while recording)."""
        if self._writer.storage is not None:
            self._storage.flush_due()

    @property
    def error(self) -> OSError | None:
        """The failed write that stopped the storage file (a full disk), None while all went to the disk."""
        return self._storage.error

    @property
    def lost(self) -> int:
        """Messages taken but not on the disk because a write failed."""
        return self._storage.lost

    @property
    def on_disk(self) -> int:
        """Messages written to the disk (MCAP: in complete chunks) so far."""
        return sum(self._storage.counts.values())

    @property
    def finished(self) -> bool:
        """Whether the storage file was closed complete (MCAP: with its summary and footer)."""
        return getattr(self._storage, "finished", True)

    def close(self) -> None:
        """Finish the storage file and write metadata.yaml; after a failed write the storage file ends with
        what it holds and metadata.yaml counts that (as `kinodyn bag reindex` would)."""
        if self._writer.storage is None:
            return
        try:
            self._writer.close()
        finally:
            if self.error is not None:
                write_metadata(self.path, report=lambda line: None)

    def __enter__(self) -> BagWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Close in every case, so that what was written stays a readable bag."""
        self.close()
