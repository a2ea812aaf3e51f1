"""Write a rosbag2 bag (metadata.yaml version 9, MCAP or sqlite3 storage) through rosbags (ANCHORS.md §6).

Each topic stores its message definition (ros2msg, dependencies included) and RIHS01 type hash from the
installed typestore, and its offered QoS profiles, so `ros2 bag`, Foxglove and `kinodyn bag play` read it.

    with BagWriter("out", storage="mcap") as bag:
        bag.add_topic("/tf_static", "tf2_msgs/msg/TFMessage", qos="transient_local")
        bag.write("/tf_static", t_ns, message_or_cdr_bytes)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from rclpy.serialization import serialize_message
from rosbags.interfaces import Connection, Qos
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys.store import Typestore

from kinodyn_ros.bags.cdr import ENCODERS
from kinodyn_ros.bags.qos import PRESETS
from kinodyn_ros.bags.typestore import installed_typestore

#: rosbag2 metadata version written (Jazzy and later).
METADATA_VERSION = 9
STORAGES = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}


class BagWriter:
    """A rosbag2 directory being written; `close()` (or leaving the `with` block) writes metadata.yaml."""

    def __init__(self, path: str | Path, storage: str = "mcap", typestore: Typestore | None = None) -> None:
        if storage not in STORAGES:
            raise ValueError(f"storage '{storage}' is not one of {', '.join(STORAGES)}")
        self.path = Path(path)
        self.storage = storage
        self.typestore = typestore if typestore is not None else installed_typestore()
        self._writer = Writer(self.path, version=METADATA_VERSION, storage_plugin=STORAGES[storage])
        self._writer.open()
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

    def write(self, topic: str, t_ns: int, message: bytes | memoryview | Any) -> None:
        """Store one message received at ``t_ns`` (bag time, ns): CDR bytes as received (stored unchanged), an
        rclpy message, or a rosbags message object of the topic's type.

        Message objects are serialised by rosbags, whose CDR padding bytes are zero: rclpy's
        serialize_message leaves alignment padding uninitialised (the same JointState twice can give two
        byte strings), and two runs writing the same messages must give the same bag. Types in
        ``kinodyn_ros.bags.cdr.ENCODERS`` (nav_msgs/Odometry) are packed directly into those same bytes."""
        connection = self._connections[topic]
        if not isinstance(message, bytes | memoryview):
            from_rclpy = hasattr(type(message), "get_fields_and_field_types")
            encoder = ENCODERS.get(connection.msgtype) if from_rclpy else None
            if encoder is not None:
                message = encoder(message)  # the bytes of the round trip below, without it
            else:
                if from_rclpy:
                    message = self._from_rclpy(serialize_message(message), connection.msgtype)
                message = self.typestore.serialize_cdr(message, connection.msgtype)
        self._writer.write(connection, int(t_ns), message)

    def _from_rclpy(self, raw: bytes, msgtype: str) -> Any:
        """The rosbags object of rclpy's CDR. rclpy's buffer can end with unused bytes past the message (8
        after an empty JointState), which rosbags' ``deserialize_cdr`` refuses: decode by the definition and
        ignore them."""
        if raw[:2] != b"\x00\x01":
            raise ValueError(f"rclpy gave {msgtype} as CDR that is not little endian")
        msgdef = self.typestore.get_msgdef(msgtype)
        return msgdef.deserialize_cdr_le(raw[4:], 0, msgdef.cls, self.typestore)[0]

    def close(self) -> None:
        """Finish the storage file and write metadata.yaml."""
        self._writer.close()

    def __enter__(self) -> BagWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Close in every case, so that what was written stays a readable bag."""
        self.close()
