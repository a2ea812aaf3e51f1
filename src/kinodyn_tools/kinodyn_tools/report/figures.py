"""The report's plots as inline SVG (matplotlib's Agg-free SVG backend, no pyplot state).

Text stays text (``svg.fonttype: none``: small, searchable), every element id of a figure is prefixed with
the figure's name so that the SVGs of one page never share an id, and long series are cut to at most
``MAX_POINTS`` per line by keeping each bucket's minimum and maximum, so a spike stays visible and a 30 s
run at 500 Hz stays a few hundred kB.
"""

from __future__ import annotations

import io
import math
import re
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from kinodyn_tools.report.metrics import (
    ContactSection,
    EstimateSection,
    TorqueSection,
    TrackingSection,
    WbcSection,
    drift_text,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.typing import RcKeyType

MAX_POINTS = 1500
PLAIN = FuncFormatter(lambda value, _: f"{value:g}")  # log axes labelled 0.1, 1, 10 rather than 10^k
MIN_SPAN_M = 0.2  # m, the smallest extent of the path plot (a tenth of it for x/y/z against time)
NO_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}
"""No RDF block: no date (two reports of one bag are identical) and no URIs in the page."""
TRUTH, ESTIMATE, COMMAND, MEASURED, LIMIT = "#222222", "#1f77b4", "#ff7f0e", "#1f77b4", "#d62728"
STANCE = "#2ca02c"
ID = re.compile(r'\bid="([^"]+)"')
REFERENCE = re.compile(r'(href="#|url\(#)([^")]+)')
STYLE: dict[RcKeyType, Any] = {  # Any: matplotlib rcParams values
    "svg.fonttype": "none", "font.size": 9, "axes.grid": True, "grid.alpha": 0.3, "axes.titlesize": 10,
    "legend.fontsize": 8, "legend.framealpha": 0.8}


NEAR_LIMIT_PERCENT = 90.0  # a peak torque drawn in the limit colour from this share of its limit


def decimate(t: np.ndarray, y: np.ndarray, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_points`` samples of ``(t, y)``: per bucket the first sample, the minimum and the maximum
    of ``y`` in time order (NaN ignored)."""
    if len(t) <= max_points:
        return t, y
    buckets = np.array_split(np.arange(len(t)), max_points // 3)
    keep: list[int] = []
    for b in buckets:
        values = y[b]
        finite = np.isfinite(values)
        picks = {int(b[0])}
        if np.any(finite):
            picks |= {int(b[np.nanargmin(values)]), int(b[np.nanargmax(values)])}
        keep.extend(sorted(picks))
    index = np.array(keep)
    return t[index], y[index]


def intervals(t: np.ndarray, on: np.ndarray) -> list[tuple[float, float]]:
    """``(start, width)`` of each run of ``on`` samples, each sample holding until the next stamp (the last
    until its own stamp)."""
    edges = np.diff(np.concatenate([[0], on.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    end_t = np.append(t[1:], t[-1])
    return [(float(t[a]), float(end_t[b - 1] - t[a])) for a, b in zip(starts, ends, strict=True)]


def _svg(figure: Figure, name: str) -> str:
    """The figure as an ``<svg>`` element (no XML prolog), its ids and references to them prefixed with
    ``name``."""
    buffer = io.StringIO()
    with mpl.rc_context(STYLE):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata=NO_METADATA)
    text = buffer.getvalue()
    text = ID.sub(rf'id="{name}-\1"', text[text.index("<svg"):])
    return REFERENCE.sub(rf"\1{name}-\2", text)


def _figure(rows: int, height: float = 2.2, width: float = 9.0,
            sharex: bool = True) -> tuple[Figure, list[Axes]]:
    with mpl.rc_context(STYLE):
        figure = Figure(figsize=(width, height * rows), layout="constrained")
        axes = figure.subplots(rows, 1, sharex=sharex, squeeze=False)[:, 0]
    return figure, list(axes)


def _min_span(ax: Axes, span: float) -> None:
    """Widen the y axis to at least ``span`` about its centre: a base standing still is a flat line, not
    noise blown up to fill the plot."""
    low, high = ax.get_ylim()
    if high - low < span:
        centre = 0.5 * (low + high)
        ax.set_ylim(centre - span / 2, centre + span / 2)


def _line(ax: Axes, t: np.ndarray, y: np.ndarray, **style: object) -> None:
    ax.plot(*decimate(t, y), linewidth=1.0, **style)  # type: ignore[arg-type]


def estimate_figures(s: EstimateSection) -> list[str]:
    """The x-y path, x/y/z against time, and the horizontal error (the drift) against time."""
    with mpl.rc_context(STYLE):
        path = Figure(figsize=(5.5, 5.0), layout="constrained")
        ax = path.subplots()
    _line(ax, s.truth[:, 0], s.truth[:, 1], color=TRUTH, label="truth (aligned at the start)")
    _line(ax, s.estimate[:, 0], s.estimate[:, 1], color=ESTIMATE, linestyle="--", label="estimate")
    ax.plot(s.estimate[0, 0], s.estimate[0, 1], "o", color=TRUTH, markersize=4, label="start")
    ax.set(xlabel="x [m]", ylabel="y [m]", title="base path (top view, odom frame)")
    points = np.concatenate([s.truth[:, :2], s.estimate[:, :2]])
    low, high = points.min(axis=0), points.max(axis=0)
    half = 0.55 * max(*(high - low), MIN_SPAN_M)  # one scale on both axes, 10 % margin
    (cx, cy) = 0.5 * (low + high)
    ax.set(xlim=(cx - half, cx + half), ylim=(cy - half, cy + half), aspect="equal")
    ax.legend(loc="best")
    series, axes = _figure(3, 1.8)
    for k, (ax, axis) in enumerate(zip(axes, "xyz", strict=True)):
        _line(ax, s.t, s.truth[:, k], color=TRUTH, label="truth")
        _line(ax, s.t, s.estimate[:, k], color=ESTIMATE, linestyle="--", label="estimate")
        ax.set_ylabel(f"{axis} [m]")
        _min_span(ax, MIN_SPAN_M / 10)
    axes[0].legend(loc="best")
    axes[0].set_title("base position against time")
    axes[-1].set_xlabel("time [s]")
    drift, (ax,) = _figure(1, 2.4)
    _line(ax, s.t, 100.0 * s.horizontal_error, color=LIMIT)
    ax.set_ylim(bottom=0.0, top=max(ax.get_ylim()[1], 1.0))
    ax.set(xlabel="time [s]", ylabel="horizontal error [cm]",
           title=f"estimate horizontal error (drift {drift_text(s.accuracy)})")
    return [_svg(path, "path"), _svg(series, "position"), _svg(drift, "drift")]


def tracking_figure(s: TrackingSection) -> str:
    """Commanded against measured vx, vy, wz."""
    figure, axes = _figure(3, 1.8)
    for k, (ax, unit) in enumerate(zip(axes, ("vx [m/s]", "vy [m/s]", "wz [rad/s]"), strict=True)):
        _line(ax, s.t, s.commanded[:, k], color=COMMAND, drawstyle="steps-post", label="commanded")
        _line(ax, s.t, s.measured[:, k], color=MEASURED, label="measured")
        ax.set_ylabel(unit)
        ax.text(0.99, 0.95, f"RMSE {s.rmse[k]:.3f}", transform=ax.transAxes, ha="right", va="top")
    axes[0].legend(loc="upper left")
    axes[0].set_title("body velocity in the heading frame")
    axes[-1].set_xlabel("time [s]")
    return _svg(figure, "tracking")


def contact_figure(s: ContactSection) -> str:
    """Per foot: the measured normal force, the planned stance as shaded bands."""
    figure, axes = _figure(len(s.feet), 1.3)
    for j, (ax, foot) in enumerate(zip(axes, s.feet, strict=True)):
        if len(s.stance_t):
            ax.broken_barh(intervals(s.stance_t, s.stance[:, j]), (0.0, 1.0), color=STANCE, alpha=0.18,
                           linewidth=0, transform=ax.get_xaxis_transform(), label="planned stance")
        if len(s.force_t):
            _line(ax, s.force_t, s.force[:, j], color=TRUTH, label="normal force")
        ax.set_ylim(bottom=min(0.0, ax.get_ylim()[0]))
        ax.set_ylabel(f"{foot.name}\n[N]")
    axes[0].legend(loc="upper right", ncol=2)
    axes[0].set_title("contact normal force and planned stance per foot")
    axes[-1].set_xlabel("time [s]")
    return _svg(figure, "contacts")


def torque_figure(s: TorqueSection) -> str:
    """Per joint: max |tau| as a share of its URDF limit (or in N m when no limit is known)."""
    ratios = np.array([j.ratio for j in s.joints])
    limited = bool(np.all(np.isfinite(ratios)))
    values = 100.0 * ratios if limited else np.array([j.max_abs for j in s.joints])
    height = max(2.0, 0.22 * len(s.joints) + 0.8)
    with mpl.rc_context(STYLE):
        figure = Figure(figsize=(9.0, height), layout="constrained")
        ax = figure.subplots()
    colors = [LIMIT if limited and v >= NEAR_LIMIT_PERCENT else ESTIMATE for v in values]
    ax.barh(range(len(values)), values, color=colors)
    ax.set_yticks(range(len(values)), [j.name for j in s.joints])
    ax.invert_yaxis()
    if limited:
        ax.axvline(100.0, color=LIMIT, linewidth=1.0)
        ax.set(xlabel="max |tau| / URDF effort limit [%]", xlim=(0, max(105.0, math.ceil(values.max() + 5))))
    else:
        ax.set_xlabel("max |tau| [N m or N] (no URDF limits)")
    ax.set_title("peak joint torque")
    return _svg(figure, "torques")


def wbc_figures(s: WbcSection) -> list[str]:
    """Per timing: the per-tick histogram (log bins: times under load span decades), and the per-window
    median and maximum against time."""
    out = []
    per_tick = {name: (t, t.per_tick) for name, t in s.timings.items()
                if t.per_tick is not None and len(t.per_tick)}
    if per_tick:
        figure, axes = _figure(len(per_tick), 2.0, sharex=False)
        for ax, (name, (times, ticks)) in zip(axes, per_tick.items(), strict=True):
            values = np.maximum(ticks, 1e-3)  # 1 us: a log axis has no 0
            bins = np.geomspace(values.min(), values.max() * 1.0001, 60).tolist()
            ax.hist(values, bins=bins, color=ESTIMATE)
            for value, label, style in ((times.median, "median", "-"), (times.p99, "p99", "--")):
                ax.axvline(value, color=LIMIT, linestyle=style, linewidth=1.0,
                           label=f"{label} {value:.3f} ms")
            ax.set(xscale="log", yscale="log", xlabel=f"{name} [ms]", ylabel="ticks")
            ax.xaxis.set_major_formatter(PLAIN)
            ax.legend(loc="upper right")
        axes[0].set_title("WBC timings per tick")
        out.append(_svg(figure, "wbc_histogram"))
    figure, axes = _figure(len(s.timings), 1.8)
    for ax, (name, times) in zip(axes, s.timings.items(), strict=True):
        ax.plot(s.t, times.window_max, ".-", color=LIMIT, linewidth=0.8, markersize=3, label="window max")
        ax.plot(s.t, times.window_median, ".-", color=ESTIMATE, linewidth=0.8, markersize=3,
                label="window median")
        ax.set(ylabel=f"{name}\n[ms]", yscale="log")
        ax.yaxis.set_major_formatter(PLAIN)
    axes[0].legend(loc="upper right")
    axes[0].set_title("WBC timings per diagnostics window")
    axes[-1].set_xlabel("time [s]")
    out.append(_svg(figure, "wbc_windows"))
    return out
