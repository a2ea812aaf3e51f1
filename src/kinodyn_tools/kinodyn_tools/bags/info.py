"""`kinodyn bag info`: a bag's metadata.yaml printed as `ros2 bag info` prints it (rosbag2_py
format_bag_metadata.cpp: 19-column labels, durations as seconds.nanoseconds, local-time start and end, topics
sorted by name; service event topics counted apart)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kinodyn_common.stamps import split_ns

from kinodyn_tools.bags.directory import BagError, StorageBag, read_metadata_file
from kinodyn_tools.bags.metadata import bag_metadata
from kinodyn_tools.bags.reader import warn

if TYPE_CHECKING:
    import argparse

LABEL_WIDTH = 19
_SIZE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


UNIT_STEP = 1024  # bytes per KiB, KiB per MiB, ...


def format_size(size_bytes: int) -> str:
    """1024-based with one decimal (none for bytes), as rosbag2's format_file_size."""
    size, unit = float(size_bytes), 0
    while size >= UNIT_STEP and unit < len(_SIZE_UNITS) - 1:
        size /= UNIT_STEP
        unit += 1
    return f"{size:.{0 if unit == 0 else 1}f} {_SIZE_UNITS[unit]}"


def format_seconds(ns: int) -> str:
    """``seconds.nanoseconds`` with nine decimals."""
    seconds, fraction = split_ns(ns)
    return f"{seconds}.{fraction:09d}"


def format_time_point(ns: int) -> str:
    """``Mon dd YYYY HH:MM:SS.nnnnnnnnn (seconds.nanoseconds)`` in local time."""
    seconds, fraction = split_ns(ns)
    local = time.localtime(seconds)
    return f"{time.strftime('%b %e %Y', local)} {time.strftime('%H:%M:%S', local)}.{fraction:09d} " \
        f"({format_seconds(ns)})"


def _is_service_event(topic: dict[str, str]) -> bool:
    return topic["name"].endswith("/_service_event") and topic["type"].endswith("_Event")


def read_metadata(bag: str | Path) -> dict[str, Any]:  # Any: YAML values
    """The ``rosbag2_bagfile_information`` mapping of a bag directory's metadata.yaml; for a bag without a
    readable one (a recording that was killed), the same figures from its storage files, with one line on
    stderr that says so."""
    meta = read_metadata_file(Path(bag))
    if meta is not None:
        return meta
    with StorageBag(bag, warn) as storage:
        print(f"kinodyn bag info: {bag} has no readable metadata.yaml: the figures below are read from its "
              "storage files; `kinodyn bag reindex` writes it", file=sys.stderr, flush=True)
        return bag_metadata(storage)


def format_info(bag: str | Path) -> str:
    """The text `ros2 bag info BAG` prints."""
    meta = read_metadata(bag)
    files = meta.get("relative_file_paths") or []
    size = sum((Path(bag) / name).stat().st_size for name in files if (Path(bag) / name).is_file())
    start = meta["starting_time"]["nanoseconds_since_epoch"]
    duration = meta["duration"]["nanoseconds"]
    entries = sorted(meta.get("topics_with_message_count") or [], key=lambda e: e["topic_metadata"]["name"])
    topics = [e for e in entries if not _is_service_event(e["topic_metadata"])]
    services = [e for e in entries if _is_service_event(e["topic_metadata"])]
    service_messages = sum(e["message_count"] for e in services)
    indent = " " * LABEL_WIDTH

    def rows(label: str, items: list[str]) -> list[str]:
        first = label.ljust(LABEL_WIDTH) + (items[0] if items else "")
        return [first] + [indent + item for item in items[1:]]

    lines = [""]
    lines += rows("Files:", files)
    lines += [
        "Bag size:".ljust(LABEL_WIDTH) + format_size(size),
        "Storage id:".ljust(LABEL_WIDTH) + str(meta["storage_identifier"]),
        "ROS Distro:".ljust(LABEL_WIDTH) + (meta.get("ros_distro") or "unknown"),
        "Duration:".ljust(LABEL_WIDTH) + format_seconds(duration) + "s",
        "Start:".ljust(LABEL_WIDTH) + format_time_point(start),
        "End:".ljust(LABEL_WIDTH) + format_time_point(start + duration),
        "Messages:".ljust(LABEL_WIDTH) + str(meta["message_count"] - service_messages),
    ]
    lines += rows("Topic information:", [
        f"Topic: {e['topic_metadata']['name']} | Type: {e['topic_metadata']['type']} | "
        f"Count: {e['message_count']} | Serialization Format: {e['topic_metadata']['serialization_format']}"
        for e in topics
    ])
    lines.append("Service:".ljust(LABEL_WIDTH) + str(len(services)))
    service_rows = [
        f"Service: {e['topic_metadata']['name'].removesuffix('/_service_event')} | "
        f"Type: {e['topic_metadata']['type'].removesuffix('_Event')} | Event Count: {e['message_count']} | "
        f"Serialization Format: {e['topic_metadata']['serialization_format']}"
        for e in services
    ]
    lines.append("Service information: " + (service_rows[0] if service_rows else ""))
    lines += [" " * (LABEL_WIDTH + 2) + row for row in service_rows[1:]]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag", help="bag directory (the one holding metadata.yaml)")


def run(args: argparse.Namespace) -> int:
    """Print the bag's summary; exit code 2 for a path that is no bag."""
    try:
        print(format_info(args.bag), end="")
    except BagError as error:
        print(f"kinodyn bag info: error: {error}", flush=True)
        return 2
    return 0
