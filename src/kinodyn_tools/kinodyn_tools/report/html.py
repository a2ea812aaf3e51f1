"""The report page: one self-contained HTML file (inline CSS and SVG, no script, no external reference).

The page is also well-formed XML (every element closed, text escaped), so a test can parse it strictly.
"""

from __future__ import annotations

import datetime
import math
from html import escape
from typing import TYPE_CHECKING

from kinodyn_tools.report import figures
from kinodyn_tools.report.metrics import (
    ContactSection,
    EstimateSection,
    Missing,
    RunMetrics,
    TorqueSection,
    TrackingSection,
    WbcSection,
    drift_text,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from kinodyn_tools.report.series import RunSeries

SECTIONS = {
    "estimate": "Base position: estimate vs truth",
    "tracking": "Velocity tracking",
    "contacts": "Contact forces and contact schedule",
    "torques": "Joint torques against their limits",
    "wbc": "WBC solve times and status",
}
NAME_CLASS = ' class="name"'
SYSTEM_TIME = 1e9  # s: a bag starting later is on system time (a date); simulated time starts near 0
CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 62em; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc;
margin-top: 1.8em; } table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
td, th { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: right; } th { background: #f3f3f3; }
td.name, th.name { text-align: left; } .missing { color: #a15c00; font-style: italic; }
.figures svg { max-width: 100%; height: auto; display: block; margin: 0.5em 0; } .warn { color: #c62828;
font-weight: bold; } .note { color: #555; font-size: 0.9em; }
"""


def _f(value: float, digits: int = 3, scale: float = 1.0) -> str:
    return f"{scale * value:.{digits}f}" if math.isfinite(value) else "-"


def table(header: Sequence[str] | None, rows: Iterable[Sequence[str]], names: int = 1) -> str:
    """An HTML table (no header row when ``header`` is None); the first ``names`` columns are left-aligned
    text; cells are escaped."""
    def cells(tag: str, values: Sequence[str]) -> str:
        return "".join(f"<{tag}{NAME_CLASS if i < names else ''}>{escape(str(v))}</{tag}>"
                       for i, v in enumerate(values))
    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    head = f"<tr>{cells('th', header)}</tr>" if header is not None else ""
    return f"<table>{head}{body}</table>"


def _missing(text: str) -> str:
    return f'<p class="missing">{escape(text)}</p>'


def _notes(notes: Iterable[str]) -> str:
    return "".join(f'<p class="note">{escape(n)}</p>' for n in notes)


def _figures(svgs: Iterable[str]) -> str:
    return '<div class="figures">' + "".join(svgs) + "</div>"


def header(run: RunSeries, metrics: RunMetrics) -> str:
    start = f"{run.start:.3f} s"
    if run.start > SYSTEM_TIME:
        date = datetime.datetime.fromtimestamp(run.start, tz=datetime.timezone.utc)
        start += date.strftime(" (%Y-%m-%d %H:%M:%S UTC)")
    used = {topic: role for role, topic in run.found.items()}
    rows = [(t.name, t.msgtype, str(t.count), used.get(t.name, "").replace("_", " ")) for t in run.topics]
    facts = [("bag", str(run.path)), ("start (bag time)", start), ("duration", f"{run.duration:.3f} s"),
             ("messages", str(sum(t.count for t in run.topics))),
             ("time axes", f"s from the header stamp {metrics.t0:.3f} s")]
    skipped = [(why, str(count)) for why, count in run.skipped.items()]
    return (table(None, facts) + table(("topic", "type", "messages", "used as"), rows, names=2)
            + (table(("messages left out", "count"), skipped) if skipped else ""))


def estimate_body(s: EstimateSection) -> str:
    a = s.accuracy
    rows = [("drift (final horizontal error / path)", drift_text(a)),
            ("path travelled (truth)", f"{a.path_length:.3f} m"),
            ("final horizontal error", f"{a.final_horizontal_error:.4f} m"),
            ("position RMSE", f"{a.position_rmse:.4f} m"),
            ("roll / pitch RMSE", f"{a.roll_rmse_deg:.3f} / {a.pitch_rmse_deg:.3f} deg"),
            ("final yaw error", f"{a.final_yaw_error_deg:.3f} deg"),
            ("velocity RMSE (base frame)", f"{a.velocity_rmse:.4f} m/s"), ("stamps paired", str(a.samples))]
    note = _notes(["The truth is expressed in the estimate's odom frame: the x, y, z, yaw transform that "
                   "makes the first paired poses coincide (position and yaw are unobservable)."])
    return table(None, rows) + note + _figures(figures.estimate_figures(s))


def tracking_body(s: TrackingSection) -> str:
    rows = [(name, _f(s.rmse[k]), _f(s.max_error[k]), unit)
            for k, (name, unit) in enumerate((("vx", "m/s"), ("vy", "m/s"), ("wz", "rad/s")))]
    note = _notes([f"Measured: {s.source}, rotated into the heading frame. Commanded: each cmd_vel held "
                   "until the next, zero once older than the wbc node's cmd_vel_timeout; from the first "
                   "command on."])
    return table(("", "RMSE", "max |error|", "unit"), rows) + note + _figures([figures.tracking_figure(s)])


def contacts_body(s: ContactSection) -> str:
    rows = [(f.name, _f(f.peak_force, 1), _f(f.mean_stance_force, 1), _f(f.planned_stance, 1, 100.0),
             _f(f.measured_contact, 1, 100.0), _f(f.agreement, 1, 100.0)) for f in s.feet]
    head = ("foot", "peak normal force [N]", "mean in stance [N]", "planned stance [%]",
            "measured contact [%]", "schedule agreement [%]")
    return _notes(s.notes) + table(head, rows) + _figures([figures.contact_figure(s)])


def torques_body(s: TorqueSection) -> str:
    rows = []
    for j in s.joints:
        ratio = _f(j.ratio, 1, 100.0)
        rows.append((j.name, _f(j.max_abs, 2), f"{j.at:.3f}", _f(j.limit, 1), ratio, _f(j.max_commanded, 2)))
    head = ("joint", "max |tau| (joint_states)", "at [s]", "URDF limit", "max |tau| / limit [%]",
            "max |feed-forward| (commands)")
    return _notes(s.notes) + table(head, rows) + _figures([figures.torque_figure(s)])


def wbc_body(s: WbcSection) -> str:
    names = list(s.timings)
    rows = [(stat, *(_f(getattr(s.timings[n], stat)) for n in names)) for stat in ("median", "p99", "max")]
    notes = [f"{name}: the bag's diagnostics carry each window's median and maximum, not every tick's time: "
             "the median is the tick-weighted median of the windows' medians, and the p99 is not in the bag"
             for name, times in s.timings.items() if times.per_tick is None]
    counts = [(k, str(v)) for k, v in s.counts.items()]
    statuses = [(k, str(v)) for k, v in s.statuses.items()]
    return (table(("[ms]", *names), rows) + _notes(notes) + table(("WBC ticks", "count"), counts)
            + table(("status at the end of a window", "windows"), statuses)
            + _figures(figures.wbc_figures(s)))


BODIES: dict[str, Callable[..., str]] = {
    "estimate": estimate_body, "tracking": tracking_body, "contacts": contacts_body, "torques": torques_body,
    "wbc": wbc_body}


def page(run: RunSeries, metrics: RunMetrics, summary: Sequence[str]) -> str:
    """The whole HTML document."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"/>',
             f"<title>kinodyn run report: {escape(run.path.name)}</title>",
             f"<style>{CSS}</style></head><body>",
             f"<h1>Run report: {escape(run.path.name)}</h1>", header(run, metrics),
             '<h2 id="summary">Summary</h2>', "<pre>" + escape("\n".join(summary)) + "</pre>"]
    for key, title in SECTIONS.items():
        section = getattr(metrics, key)
        parts.append(f'<h2 id="{key}">{escape(title)}</h2>')
        parts.append(_missing(section.reason) if isinstance(section, Missing) else BODIES[key](section))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
