"""rosbags typestores for kinodyn's bags: the ROS 2 distribution's standard types plus every
message type installed in the ament prefixes that the distribution store lacks (kinodyn_interfaces, and
tf2_msgs or control_msgs where the store has none).

Writing uses this store (the definitions installed here); reading uses the definitions stored in the bag
(`kinodyn_tools.bags.reader`), so a bag recorded before a message changed still reads.
"""

from __future__ import annotations

import os
import struct
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

if TYPE_CHECKING:
    from rosbags.interfaces.typing import Typesdict
    from rosbags.typesys.store import Typestore

#: The distribution of the ROS 2 wheels used where no native ROS 2 is sourced (requirements/ros-wheels.txt).
WHEELS_DISTRO = "kilted"


CDR_HEADER_SIZE = 4  # bytes: representation identifier and options


def ros_distro() -> str:
    """The sourced ROS 2 distribution (`ROS_DISTRO`), else the one of the PyPI wheels."""
    return os.environ.get("ROS_DISTRO") or WHEELS_DISTRO


def _distro_store() -> Typestore:
    """rosbags' store of the running distribution; the newest store for a distribution rosbags lacks."""
    return get_typestore(getattr(Stores, f"ROS2_{ros_distro().upper()}", Stores.LATEST))


def _package_message_files() -> dict[str, list[Path]]:
    """`share/<package>/msg/*.msg` per package over AMENT_PREFIX_PATH, the first prefix winning (as ament)."""
    packages: dict[str, list[Path]] = {}
    for prefix in filter(None, os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        for directory in sorted(Path(prefix, "share").glob("*/msg")):
            packages.setdefault(directory.parent.name, sorted(directory.glob("*.msg")))
    return packages


@cache
def _installed_additions(known: frozenset[str]) -> Typesdict:
    """Parsed definitions of the installed packages that have a message type outside ``known``."""
    types: Typesdict = {}
    for package, files in _package_message_files().items():
        names = [f"{package}/msg/{path.stem}" for path in files]
        if set(names) <= known:
            continue
        for name, path in zip(names, files, strict=True):
            types.update(get_types_from_msg(path.read_text(encoding="utf-8"), name))
    return types


def installed_typestore() -> Typestore:
    """A new typestore: the distribution's standard types and the installed packages' types it lacks.

    Where an installed package redefines a type the store already has (e.g. std_msgs/Empty, whose generated
    placeholder member differs in rosbags' parse), the distribution store's definition is kept."""
    store = _distro_store()
    additions = _installed_additions(frozenset(store.fielddefs))
    store.register({name: value for name, value in additions.items() if name not in store.fielddefs})
    return store


def deserialize_cdr(store: Typestore, raw: bytes | memoryview, msgtype: str) -> object:
    """``store.deserialize_cdr`` without rosbags' check that nothing follows the message: the bytes after it
    are ignored, as rclpy's and Foxglove's decoders ignore them. rclpy's buffer carries 4 unused bytes per
    empty sequence of doubles (8 after a JointState without velocity and effort), and rosbag2 and kinodyn
    record the bytes as received. SerdeError for bytes that are no CDR of the type."""
    if len(raw) < CDR_HEADER_SIZE or bytes(raw[:2]) not in (b"\x00\x00", b"\x00\x01"):
        raise SerdeError(f"{msgtype}: no CDR encapsulation header")
    msgdef = store.get_msgdef(msgtype)
    decode = msgdef.deserialize_cdr_le if raw[1] else msgdef.deserialize_cdr_be
    try:
        return decode(raw[4:], 0, msgdef.cls, store)[0]
    except (struct.error, UnicodeDecodeError, ValueError, IndexError) as error:
        raise SerdeError(f"could not deserialize {msgtype}: {error}") from error
