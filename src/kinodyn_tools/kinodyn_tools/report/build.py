"""`kinodyn report BAG`: read the bag, compute the metrics, write the page (docs/report.md)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kinodyn_common.robot_description import load_urdf

from kinodyn import Model
from kinodyn_tools.report.html import page
from kinodyn_tools.report.metrics import CMD_VEL_TIMEOUT, RunMetrics, run_metrics, summary_lines
from kinodyn_tools.report.series import ReportTopics, RunSeries, read_series


@dataclass(frozen=True)
class Report:
    """What one report run read, computed and wrote."""

    series: RunSeries
    metrics: RunMetrics
    summary: list[str]
    output: Path


def load_model(urdf: str | Path) -> Model:
    """The robot of a URDF file (fixed base: only the joints' names and limits are read); ValueError naming
    the file when it cannot be read or used."""
    try:
        xml = Path(urdf).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read URDF {urdf}: {exc.strerror}") from None
    return Model.from_urdf(load_urdf(xml, f"URDF {str(urdf)!r}"))


def bag_model(run: RunSeries) -> tuple[Model | None, str]:
    """The robot of the bag's robot_description, or None and why not."""
    if run.robot_description is None:
        return None, ("no URDF, so no effort limits: give --urdf, or record "
                      f"{run.found.get('robot_description', '/robot_description')}")
    try:
        return Model.from_urdf(load_urdf(run.robot_description, "the bag's robot_description")), ""
    except ValueError as exc:
        return None, f"no effort limits: {exc}"


def make_report(bag: str | Path, output: str | Path | None = None, model: Model | None = None,
                topics: ReportTopics | None = None, cmd_vel_timeout: float = CMD_VEL_TIMEOUT,
                progress: bool = False) -> Report:
    """Write the report of ``bag`` to ``output`` (default: report.html beside the bag directory). ``model``:
    the robot whose effort limits the torques are judged against (else the bag's robot_description)."""
    started = time.monotonic()
    series = read_series(bag, topics or ReportTopics(), progress)
    note = ""
    if model is None:
        model, note = bag_model(series)
    metrics = run_metrics(series, model, note, cmd_vel_timeout)
    summary = summary_lines(metrics)
    path = Path(output) if output is not None else Path(bag).resolve().parent / "report.html"
    if progress and time.monotonic() - started > 1.0:
        print(f"kinodyn report: drawing the figures ({time.monotonic() - started:.1f} s so far)",
              file=sys.stderr)
    text = page(series, metrics, summary)
    path.write_text(text, encoding="utf-8")
    return Report(series, metrics, summary, path)
