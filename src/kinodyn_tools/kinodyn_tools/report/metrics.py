"""The figures of a run report, from the series of one bag (docs/report.md, "Sections and metrics").

- Base estimate vs truth: ``kinodyn.estimation.metrics`` (drift over the true path, RMSEs), the truth
  expressed in the estimate's odom frame from the first paired pose (position and yaw are unobservable).
- Velocity tracking: the body twist command (vx, vy, wz in the heading frame, as the locomotion controller
  reads it) held from each cmd_vel until the next, or zero once older than ``cmd_vel_timeout`` (the wbc node's
  rule), against the measured base velocity rotated into the heading frame; RMSE per component.
- Contacts: per foot, the measured normal force (the sum over the link's contact spheres) and the planned
  stance; agreement = share of the force samples whose measured contact equals the planned stance in force.
- Joint torques: max |effort| of joint_states per joint against the URDF's effort limit.
- WBC: the wbc node's diagnostics windows summed (ticks, held, damped, QP failures, saturated), its QP solve
  times and tick latencies (per tick when the diagnostics carry them, else the per-window medians and
  maxima).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from kinodyn.estimation.metrics import AccuracyReport, accuracy, align

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn import Model
    from kinodyn_tools.report.series import RunSeries, StampedRows, WbcWindows

SectionT = TypeVar("SectionT")

CMD_VEL_TIMEOUT = 0.5  # s, the wbc node's default cmd_vel_timeout
MIN_DRIFT_PATH = 0.5  # m: over a shorter true path, drift (error / path) is no figure of merit
TWIST = ("vx", "vy", "wz")
TIMINGS = {"QP solve time": ("solve_time", "solve_times_us"),
           "tick latency": ("tick_latency", "tick_latencies_us")}
"""Per timing of the wbc's diagnostics (docs/nodes/wbc.md): the window keys' prefix and the per-tick key. The
tick latency runs from the joint state's arrival to its command (the wait for the base state included)."""


CONTACT_THRESHOLD = 0.5  # a 0/1 contact or stance value above this is in contact


@dataclass(frozen=True)
class Missing:
    """A section that cannot be made: one line saying why."""

    reason: str


@dataclass(frozen=True, eq=False)
class EstimateSection:
    """Paired stamps ``t`` (s from the run's start), estimated and aligned true positions (M, 3), the
    horizontal error (M,) and the distance the true base travelled (M,)."""

    accuracy: AccuracyReport
    t: np.ndarray
    estimate: np.ndarray
    truth: np.ndarray
    horizontal_error: np.ndarray
    distance: np.ndarray


@dataclass(frozen=True, eq=False)
class TrackingSection:
    """``commanded`` and ``measured`` (N, 3): vx, vy [m/s] in the heading frame and wz [rad/s], at the
    measured stamps ``t`` from the first command on; ``rmse`` and ``max_error`` per component."""

    source: str
    t: np.ndarray
    commanded: np.ndarray
    measured: np.ndarray
    rmse: np.ndarray
    max_error: np.ndarray


@dataclass(frozen=True)
class FootContact:
    name: str
    peak_force: float  # N
    mean_stance_force: float  # N, over the samples in planned (else measured) stance
    planned_stance: float  # share of the run, nan without a schedule
    measured_contact: float  # share of the run, nan without measured contacts
    agreement: float  # share of the force samples, nan unless both


@dataclass(frozen=True, eq=False)
class ContactSection:
    feet: list[FootContact]
    force_t: np.ndarray  # (N,)
    force: np.ndarray  # (N, feet), nan where a foot has no measurement
    stance_t: np.ndarray  # (M,)
    stance: np.ndarray  # (M, feet) bool, planned stance
    notes: list[str]


@dataclass(frozen=True)
class JointTorque:
    name: str
    max_abs: float  # N m (N), max |effort| of joint_states
    at: float  # s from the run's start
    limit: float  # URDF effort limit, nan when unknown
    max_commanded: float  # max |feed-forward effort| of the commands, nan without them

    @property
    def ratio(self) -> float:
        return self.max_abs / self.limit if self.limit > 0.0 else math.nan


@dataclass(frozen=True)
class TorqueSection:
    joints: list[JointTorque]
    notes: list[str]


@dataclass(frozen=True, eq=False)
class TickTimes:
    """One timing of the wbc's ticks [ms]: per tick when the diagnostics carry it (else None, and the median
    is the tick-weighted median of the windows' medians, the p99 nan), and per window."""

    per_tick: np.ndarray | None
    median: float
    p99: float
    max: float
    window_median: np.ndarray
    window_max: np.ndarray


@dataclass(frozen=True, eq=False)
class WbcSection:
    t: np.ndarray  # window stamps, s from the run's start
    counts: dict[str, int]  # ticks: all, solved, held, damped, QP failures, saturated
    statuses: dict[str, int]  # the status at the end of each window: windows per status
    timings: dict[str, TickTimes]  # TIMINGS' names


@dataclass(frozen=True)
class RunMetrics:
    t0: float  # s, the stamp every section's time axis starts from
    estimate: EstimateSection | Missing
    tracking: TrackingSection | Missing
    contacts: ContactSection | Missing
    torques: TorqueSection | Missing
    wbc: WbcSection | Missing


def _why(run: RunSeries, role: str) -> str:
    return f"{role.replace('_', ' ')}: {run.missing.get(role, 'no message on ' + run.found.get(role, '?'))}"


def start_stamp(run: RunSeries) -> float:
    """The earliest header stamp of the series (the time axes' zero)."""
    firsts = [min(s.t) for s in (run.estimate, run.truth, run.cmd_vel, run.efforts, run.commanded,
                                 run.contact_force, run.stance, run.wbc) if len(s)]
    return min(firsts) if firsts else 0.0


def estimate_section(run: RunSeries, t0: float) -> EstimateSection | Missing:
    for role, series in (("estimate", run.estimate), ("truth", run.truth)):
        if not len(series):
            return Missing(_why(run, role))
    try:
        truth, estimate = run.truth.trajectory(), run.estimate.trajectory()
        aligned = align(truth, estimate)
        report = accuracy(truth, estimate)
    except ValueError as exc:
        return Missing(f"estimate vs truth: {exc}")
    horizontal = np.linalg.norm(aligned.position_error[:, :2], axis=1)
    steps = np.linalg.norm(np.diff(truth.position[aligned.truth_index, :2], axis=0), axis=1)
    return EstimateSection(report, truth.t[aligned.truth_index] - t0,
                           estimate.position[aligned.estimate_index], aligned.true_position, horizontal,
                           np.concatenate([[0.0], np.cumsum(steps)]))


def heading_velocity(run: RunSeries) -> tuple[str, np.ndarray, np.ndarray] | None:
    """``(topic, t, (N, 3) vx vy wz)`` of the true base (else the estimate) in the heading frame."""
    role = "truth" if len(run.truth) else "estimate" if len(run.estimate) else None
    if role is None:
        return None
    series = run.truth if role == "truth" else run.estimate
    trajectory = series.trajectory()
    return run.found[role], trajectory.t, heading_twist(trajectory.rotation, trajectory.linear_velocity,
                                                        series.angular_velocity())


def heading_twist(C: np.ndarray, linear: np.ndarray, angular: np.ndarray) -> np.ndarray:
    """(N, 3) vx, vy in the heading frame (world axes turned by the base's yaw) and the world wz, from the
    base orientations ``C`` (N, 3, 3) ``C_WB`` and the base-frame linear and angular velocities (N, 3)."""
    v_world = np.einsum("nij,nj->ni", C, linear)
    w_world = np.einsum("nij,nj->ni", C, angular)
    yaw = np.arctan2(C[:, 1, 0], C[:, 0, 0])
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack([c * v_world[:, 0] + s * v_world[:, 1], -s * v_world[:, 0] + c * v_world[:, 1],
                     w_world[:, 2]], axis=1)


def held_command(stamps: np.ndarray, values: np.ndarray, t: np.ndarray, timeout: float) -> np.ndarray:
    """The command in force at each ``t``: the last one stamped at or before it, zero once older than
    ``timeout`` or before the first."""
    index = np.searchsorted(stamps, t, side="right") - 1
    valid = index >= 0
    valid[valid] &= t[valid] - stamps[index[valid]] <= timeout
    out = np.zeros((len(t), values.shape[1]))
    out[valid] = values[index[valid]]
    return out


def tracking_section(run: RunSeries, t0: float,
                     timeout: float = CMD_VEL_TIMEOUT) -> TrackingSection | Missing:
    if not len(run.cmd_vel):
        return Missing(_why(run, "cmd_vel"))
    try:
        measured = heading_velocity(run)
    except ValueError as exc:
        return Missing(f"velocity tracking: {exc}")
    if measured is None:
        return Missing("velocity tracking: no measured base velocity (" + _why(run, "truth") + "; "
                       + _why(run, "estimate") + ")")
    source, t, velocity = measured
    stamps = run.cmd_vel.stamps()
    keep = t >= stamps[0]
    if not np.any(keep):
        return Missing(f"velocity tracking: the first cmd_vel ({stamps[0]:.3f} s) is after the last base "
                       f"state on {source} ({t[-1]:.3f} s): are both stamped by one clock (use_sim_time)?")
    t, velocity = t[keep], velocity[keep]
    commanded = held_command(stamps, run.cmd_vel.array()[:, [run.cmd_vel.names.index(k) for k in TWIST]], t,
                             timeout)
    error = velocity - commanded
    return TrackingSection(source, t - t0, commanded, velocity, np.sqrt(np.mean(error**2, axis=0)),
                           np.max(np.abs(error), axis=0))


def _columns(rows: StampedRows, names: list[str], missing: float) -> np.ndarray:
    """(N, len(names)) of ``rows`` in stamp order with the columns ``names``."""
    if not len(rows):
        return np.zeros((0, len(names)))
    table = rows.array(missing)
    out = np.full((len(table), len(names)), missing)
    for j, name in enumerate(names):
        if name in rows.names:
            out[:, j] = table[:, rows.names.index(name)]
    return out


def contact_section(run: RunSeries, t0: float) -> ContactSection | Missing:
    if not len(run.contact_force) and not len(run.stance):
        return Missing(f"contacts: {_why(run, 'contacts')}; {_why(run, 'schedule')}")
    names = list(run.stance.names) + [n for n in run.contact_force.names if n not in run.stance.names]
    notes = [_why(run, role) for role, rows in (("contacts", run.contact_force), ("schedule", run.stance))
             if not len(rows)]
    force_t = run.contact_force.stamps() if len(run.contact_force) else np.zeros(0)
    force = _columns(run.contact_force, names, np.nan)
    touching = _columns(run.contact_state, names, np.nan)
    stance_t = run.stance.stamps() if len(run.stance) else np.zeros(0)
    stance = _columns(run.stance, names, 0.0) > CONTACT_THRESHOLD
    planned = (held_command(stance_t, stance.astype(float), force_t, math.inf) > CONTACT_THRESHOLD
               if len(stance_t) else np.zeros((len(force_t), len(names)), dtype=bool))
    feet = []
    for j, name in enumerate(names):
        measured = force[:, j]
        has = np.isfinite(measured)
        in_stance = (planned[:, j] if len(stance_t) else touching[:, j] > CONTACT_THRESHOLD) & has
        feet.append(FootContact(
            name, float(np.max(measured[has])) if np.any(has) else math.nan,
            float(np.mean(measured[in_stance])) if np.any(in_stance) else math.nan,
            float(np.mean(stance[:, j])) if len(stance_t) else math.nan,
            float(np.mean(touching[has, j] > CONTACT_THRESHOLD)) if np.any(has) else math.nan,
            float(np.mean((touching[has, j] > CONTACT_THRESHOLD) == planned[has, j]))
            if np.any(has) and len(stance_t) else math.nan))
    return ContactSection(feet, force_t - t0, force, stance_t - t0, stance, notes)


def effort_limits(model: Model) -> dict[str, float]:
    """URDF effort limit per joint name (nan where none is given)."""
    limits = {}
    for j, name in enumerate(model.joint_names):
        value = float(model.effort_limit[model.idx_v[model.joint_body[j]]])
        limits[name] = value if math.isfinite(value) and value > 0.0 else math.nan
    return limits


def torque_section(run: RunSeries, t0: float, model: Model | None,
                   model_note: str) -> TorqueSection | Missing:
    if not len(run.efforts):
        why = (_why(run, "joint_states") if "joint_states" not in run.found
               else f"joint states: no message on {run.found['joint_states']} carries efforts")
        return Missing(why)
    limits = effort_limits(model) if model is not None else {}
    notes = [] if model is not None else [model_note]
    table, stamps = run.efforts.array(), run.efforts.stamps()
    commanded = np.abs(_columns(run.commanded, run.efforts.names, np.nan))
    if not len(run.commanded):
        notes.append(_why(run, "commands"))
    joints = []
    for j, name in enumerate(run.efforts.names):
        column = np.abs(table[:, j])
        i = int(np.nanargmax(column))
        joints.append(JointTorque(name, float(column[i]), float(stamps[i] - t0), limits.get(name, math.nan),
                                  float(np.nanmax(commanded[:, j])) if np.any(np.isfinite(commanded[:, j]))
                                  else math.nan))
    unknown = [j.name for j in joints if model is not None and j.name not in limits]
    if unknown:
        notes.append(f"joints not in the URDF (no limit): {', '.join(unknown)}")
    return TorqueSection(joints, notes)


def tick_times(w: WbcWindows, prefix: str, per_tick_key: str) -> TickTimes:
    """One timing of the windows: per tick from ``per_tick_key`` (whitespace-separated integer microseconds)
    when every window carries it, else from the windows' ``<prefix>_median_ms`` and ``<prefix>_max_ms``."""
    medians, maxima = w.column(f"{prefix}_median_ms"), w.column(f"{prefix}_max_ms")
    per_tick = None
    if all(per_tick_key in v for v in w.values):
        per_tick = np.array([float(x) for v in w.values for x in v[per_tick_key].split()]) / 1e3
    if per_tick is not None and len(per_tick):
        median, p99, peak = (float(x) for x in np.percentile(per_tick, [50, 99, 100]))
        return TickTimes(per_tick, median, p99, peak, medians, maxima)
    finite = np.isfinite(medians)
    median = _weighted_median(medians[finite], w.column("ticks")[finite]) if np.any(finite) else math.nan
    peak = float(np.nanmax(maxima)) if np.any(np.isfinite(maxima)) else math.nan
    return TickTimes(None, median, math.nan, peak, medians, maxima)


def wbc_section(run: RunSeries, t0: float) -> WbcSection | Missing:
    if not len(run.wbc):
        if "diagnostics" in run.found:
            return Missing(f"WBC: {run.found['diagnostics']} has no status named {run.wbc_name!r} (name the "
                           "wbc node's status with --wbc-name)")
        return Missing(_why(run, "diagnostics"))
    w = run.wbc
    total = {k: int(np.nansum(w.column(k))) for k in ("ticks", "held_ticks", "damped_ticks", "qp_failures",
                                                      "saturated_ticks")}
    counts = {"all": total["ticks"], "solved": total["ticks"] - total["held_ticks"] - total["damped_ticks"],
              "held (no base state)": total["held_ticks"], "damped (fallback)": total["damped_ticks"],
              "QP failures": total["qp_failures"], "saturated": total["saturated_ticks"]}
    statuses = dict(Counter(v.get("status", "?") for v in w.values).most_common())
    timings = {name: tick_times(w, prefix, key) for name, (prefix, key) in TIMINGS.items()}
    return WbcSection(np.array(w.t) - t0, counts, statuses, timings)


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The median of ``values`` each counted ``weights`` times (windows of different tick counts)."""
    order = np.argsort(values)
    cumulative = np.cumsum(np.where(np.isfinite(weights), weights, 1.0)[order])
    return float(values[order][np.searchsorted(cumulative, 0.5 * cumulative[-1])])


def run_metrics(run: RunSeries, model: Model | None, model_note: str = "",
                cmd_vel_timeout: float = CMD_VEL_TIMEOUT) -> RunMetrics:
    """Every section of the report (a ``Missing`` where its topics are not in the bag)."""
    t0 = start_stamp(run)
    return RunMetrics(t0, estimate_section(run, t0), tracking_section(run, t0, cmd_vel_timeout),
                      contact_section(run, t0), torque_section(run, t0, model, model_note),
                      wbc_section(run, t0))


def drift_text(a: AccuracyReport) -> str:
    """``x.xx % of y.yy m``, or why not: a path shorter than MIN_DRIFT_PATH (a robot standing still)."""
    if a.path_length < MIN_DRIFT_PATH:
        return f"none: the base travelled {a.path_length:.2f} m (under {MIN_DRIFT_PATH} m)"
    return f"{100.0 * a.drift:.2f} % of {a.path_length:.2f} m"


def _section_line(label: str, section: SectionT | Missing, text: Callable[[SectionT], str]) -> str:
    """``label`` in an 18-character column, then the section's ``text`` or the reason it is missing."""
    return f"{label:<18}{section.reason if isinstance(section, Missing) else text(section)}"


def _drift_summary(e: EstimateSection) -> str:
    return f"{drift_text(e.accuracy)} (final horizontal error {e.accuracy.final_horizontal_error:.4f} m)"


def _tracking_summary(v: TrackingSection) -> str:
    return (f"vx {v.rmse[0]:.3f} m/s, vy {v.rmse[1]:.3f} m/s, wz {v.rmse[2]:.3f} rad/s "
            f"(measured on {v.source})")


def _torque_summary(tq: TorqueSection) -> str:
    worst = max(tq.joints, key=lambda j: (j.ratio if math.isfinite(j.ratio) else -1.0, j.max_abs))
    ratio = f" = {100.0 * worst.ratio:.1f} % of its limit" if math.isfinite(worst.ratio) else ""
    return f"max |tau| {worst.max_abs:.2f} on {worst.name}{ratio}"


def summary_lines(metrics: RunMetrics) -> list[str]:
    """The headline figures, one line each (what `kinodyn report` prints and the demo's summary shows)."""
    lines = [_section_line("estimator drift", metrics.estimate, _drift_summary),
             _section_line("velocity RMSE", metrics.tracking, _tracking_summary),
             _section_line("joint torques", metrics.torques, _torque_summary)]
    w = metrics.wbc
    if isinstance(w, Missing):
        lines.append("WBC               " + w.reason)
        return lines
    for name, times in w.timings.items():
        p99 = f"p99 {times.p99:.3f} ms, " if math.isfinite(times.p99) else "p99 not in the bag, "
        lines.append(f"WBC {name:<14}median {times.median:.3f} ms, {p99}max {times.max:.3f} ms")
    lines.append(f"WBC ticks         {w.counts['all']}, {w.counts['QP failures']} QP failures, "
                 f"{w.counts['damped (fallback)']} damped, {w.counts['held (no base state)']} held")
    return lines
