"""`kinodyn bag reindex`: rebuild a bag's metadata.yaml and its MCAP summary from what is on the disk, as
`ros2 bag reindex` rebuilds metadata.yaml (docs/bags.md).

Each MCAP file is scanned from its start (``kinodyn_tools.bags.mcap_reader``: a record cut by the end of the
file ends the scan, a chunk that fails its CRC or structure is skipped and named, unreadable bytes are skipped
to the next good chunk). A file whose summary lists exactly what the scan found stays as it is; any other is
written again from the messages the scan could read (new chunks with CRCs, summary and footer) and the
original is kept beside it as ``<file>.orig``. An sqlite3 file is opened once for writing, which rolls back
a transaction a crash left half done. Then metadata.yaml is written from the files' content.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kinodyn_tools.bags.directory import BagError, StorageBag, read_metadata_file, storage_files
from kinodyn_tools.bags.mcap_reader import McapFile
from kinodyn_tools.bags.mcap_storage import McapStorage
from kinodyn_tools.bags.metadata import bag_metadata, write_metadata

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable


def _intact(path: Path, scanned: McapFile) -> bool:
    """Whether the file's summary checks out and counts what the scan found, with nothing cut or skipped."""
    if scanned.damage or scanned.cut_at is not None:
        return False
    indexed = McapFile(path, lambda line: None)
    try:
        return indexed.indexed and indexed.counts == scanned.counts
    finally:
        indexed.close()


def _rewrite(bag: StorageBag, index: int, metadata_text: str) -> Path:
    """Write file ``index`` of the scanned bag again from its readable messages; the original's new name."""
    storage, connections = bag.opened[index]
    path = bag.files[index]
    kept = path.with_name(path.name + ".orig")
    if kept.exists():
        raise BagError(f"{kept} exists from an earlier reindex: move it away first")
    name = path.name.removesuffix(".mcap")
    out = McapStorage(path.parent, name=f"{name}.reindexing")
    try:
        known: set[str] = set()
        for channel_id, connection in sorted(connections.items()):
            if connection.msgtype not in known:
                out.add_msgtype(connection)
                known.add(connection.msgtype)
            qos = storage.channels[channel_id].metadata.get("offered_qos_profiles", "")
            out.add_connection(connection, qos)
        for channel_id, t_ns, data in storage.messages(connections):
            out.write(connections[channel_id], t_ns, data)
    except BaseException:
        out.abort()
        out.path.unlink()
        raise
    out.close(9, metadata_text)
    if out.error is not None:
        out.path.unlink()
        raise BagError(f"cannot write {out.path}: {out.error.strerror}; free some space and run it again")
    path.replace(kept)
    out.path.replace(path)
    return kept


def reindex(path: str | Path, say: Callable[[str], None] = print) -> dict[str, Any]:  # Any: YAML values
    """Reindex the bag directory ``path`` (see the module docstring); the metadata written."""
    path = Path(path)
    storage_id, files = storage_files(path, read_metadata_file(path))
    if storage_id == "sqlite3":
        for file in files:
            with closing(sqlite3.connect(file)) as db:  # opening for writing rolls a hot journal back
                db.execute("PRAGMA quick_check").fetchall()
    else:
        with StorageBag(path, lambda line: say(f"  {line}"), use_summary=False) as bag:
            text = yaml.safe_dump(bag_metadata(bag), default_flow_style=False, sort_keys=False)
            for index, (file, scanned) in enumerate(zip(bag.files, bag.mcap_files, strict=True)):
                count = sum(scanned.counts.values())
                if _intact(file, scanned):
                    say(f"{file.name}: intact ({count} messages): kept as it is")
                    continue
                kept = _rewrite(bag, index, text)
                say(f"{file.name}: written again with the {count} messages it holds readable "
                    f"({scanned.skipped} in chunks that failed their check skipped); the original is "
                    f"{kept.name}")
    meta = write_metadata(path, report=lambda line: None)
    say(f"{path / 'metadata.yaml'} written: {meta['message_count']} messages of "
        f"{len(meta['topics_with_message_count'])} topics over {meta['duration']['nanoseconds'] / 1e9:.3f} s")
    return meta


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bag", help="bag directory (the one holding the .mcap or .db3 file)")


def run(args: argparse.Namespace) -> int:
    """Reindex the bag; exit code 2 for a path that is no bag or a file that cannot be written."""
    try:
        reindex(args.bag)
    except BagError as error:
        print(f"kinodyn bag reindex: error: {error}", flush=True)
        return 2
    except OSError as error:
        print(f"kinodyn bag reindex: error: cannot write {error.filename or args.bag}: {error.strerror}; "
              "the bag is as it was", flush=True)
        return 2
    return 0
