"""The one bench results file: every bench writes its section of ``bench/RESULTS.md`` here.

A section is the bench's own text (Markdown) under a ``## <name>`` heading, preceded by one line saying when,
where and under what load it was measured. Running a bench replaces its section and leaves the others, so the
file always holds the latest run of each bench. Docs and the README point at this file instead of quoting
figures. Every bench takes ``--no-record`` (``add_record_flag``): a check run prints its figures and leaves
the file as it is.
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = (
    "# Bench results\n\n"
    "Written by the benches in `bench/` (each replaces its own section when it runs); not edited by hand.\n"
    "Every figure is from one run, with the reference library measured in the same run where one exists.\n"
)


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=RESULTS.parent, capture_output=True,
                             text=True, check=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown commit"
    return out.stdout.strip()


def conditions() -> str:
    """One line: date, commit, cores, CPU model and the load average (1, 5, 15 min) right now."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    cpu = platform.processor() or platform.machine()
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{day}, commit {_commit()}, {os.cpu_count()} cores ({cpu}), load average {load}"


def add_record_flag(parser: argparse.ArgumentParser) -> None:
    """Give a bench's command line ``--no-record`` (``args.no_record``), to pass on to ``record``."""
    parser.add_argument("--no-record", action="store_true",
                        help="print the figures only; leave bench/RESULTS.md as it is")


def shown(lines: list[str], line: str) -> None:
    """Print ``line`` as the bench goes and keep it in ``lines``, the body it records."""
    print(line, flush=True)
    lines.append(line)


def markdown_header(*titles: str) -> str:
    """The first two lines of a Markdown table with these column titles."""
    return markdown_row(*titles) + "\n" + markdown_row(*("---",) * len(titles))


def markdown_row(*cells: object) -> str:
    """One line of a Markdown table."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def record(name: str, body: str, path: Path = RESULTS, *, no_record: bool = False) -> None:
    """Replace (or add) section ``name`` of the results file with ``body`` and the measuring conditions;
    with ``no_record`` (the bench's ``--no-record``), say so and leave the file as it is."""
    if no_record:
        print(f"[bench] --no-record: section '{name}' of {path} not written")
        return
    text = path.read_text() if path.is_file() else HEADER
    section = f"## {name}\n\n_{conditions()}_\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(name)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text.rstrip("\n") + "\n")
    print(f"[bench] wrote section '{name}' of {path}")
