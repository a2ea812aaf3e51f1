"""metadata.yaml (rosbag2 version 9) of what a bag's storage files hold: written by `kinodyn bag reindex` and
after a failed write, shown by `kinodyn bag info` for a bag without one (docs/bags.md)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import yaml
from rosbags.rosbag2.metadata import dump_qos_v9

from kinodyn_tools.bags.directory import StorageBag

if TYPE_CHECKING:
    from collections.abc import Callable

    from rosbags.interfaces import ConnectionExtRosbag2

METADATA_VERSION = 9


def _ros_distro(bag: StorageBag) -> str:
    """The distribution the bag names: rosbag2's metadata record in an MCAP file, else its metadata.yaml."""
    for file in bag.mcap_files:
        try:
            stored = yaml.safe_load(file.metadata.get("rosbag2", {}).get("serialized_metadata", ""))
            return str(stored["ros_distro"])
        except (yaml.YAMLError, KeyError, TypeError):
            continue
    return str((bag.meta or {}).get("ros_distro") or "")


def bag_metadata(bag: StorageBag) -> dict[str, Any]:  # Any: YAML values
    """The ``rosbag2_bagfile_information`` mapping of an opened bag, from its storage files' content."""
    count = bag.message_count
    start = bag.start_time
    end = bag.end_time - 1 if count else start
    return {
        "version": METADATA_VERSION,
        "storage_identifier": bag.storage_id,
        "duration": {"nanoseconds": max(0, end - start)},
        "starting_time": {"nanoseconds_since_epoch": start},
        "message_count": count,
        "topics_with_message_count": [
            {
                "topic_metadata": {
                    "name": c.topic,
                    "type": c.msgtype,
                    "serialization_format": cast("ConnectionExtRosbag2", c.ext).serialization_format,
                    "offered_qos_profiles": dump_qos_v9(
                        cast("ConnectionExtRosbag2", c.ext).offered_qos_profiles),
                    "type_description_hash": c.digest,
                },
                "message_count": c.msgcount,
            }
            for c in bag.connections
        ],
        "compression_format": "",
        "compression_mode": "",
        "relative_file_paths": [f.name for f in bag.file_summaries],
        "files": [
            {
                "path": f.name,
                "starting_time": {"nanoseconds_since_epoch": f.start_ns if f.count else start},
                "duration": {"nanoseconds": f.end_ns - f.start_ns if f.count else 0},
                "message_count": f.count,
            }
            for f in bag.file_summaries
        ],
        "custom_data": (bag.meta or {}).get("custom_data"),
        "ros_distro": _ros_distro(bag),
    }


def write_metadata_file(path: Path, meta: dict[str, Any]) -> None:
    """``path/metadata.yaml`` replaced in one step (a crash leaves the old or the new one, never half)."""
    text = yaml.safe_dump({"rosbag2_bagfile_information": meta}, default_flow_style=False, sort_keys=False)
    tmp = path / "metadata.yaml.tmp"
    with tmp.open("w", encoding="utf-8") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    tmp.replace(path / "metadata.yaml")


def write_metadata(path: str | Path, report: Callable[[str], None]) -> dict[str, Any]:
    """Rebuild ``path/metadata.yaml`` from the bag's storage files; the mapping written."""
    with StorageBag(path, report) as bag:
        meta = bag_metadata(bag)
    write_metadata_file(Path(path), meta)
    return meta
