"""The figures of a scenario run, from what the runner recorded (docs/closed-loop.md, "What is measured").

- Velocity tracking per step: the simulator's ground-truth twist turned into the heading frame
  (``kinodyn_tools.report.metrics.heading_twist``: vx, vy along the base's yaw, wz about the world vertical)
  against the step's command, from ``settle`` s after the step's start to its end; RMSE of the planar velocity
  error's norm [m/s] and of the yaw-rate error [rad/s].
- Falls: the true base height below ``FALL_HEIGHT_RATIO`` of the nominal (the true height at the first state:
  the simulator places the robot on its contact spheres in the standing posture), or a contact sphere that is
  not on a foot touching the ground (the simulator's contacts topic).
- Estimator drift: ``kinodyn.estimation.metrics.accuracy`` of ``odometry/filtered`` against the truth over the
  whole run (final horizontal error / horizontal path, after the start alignment of position and yaw).
- WBC: tick latency (joint state in to command out) and QP solve time per tick, QP failures, damped and held
  ticks, from the wbc node's diagnostics (``tick_latencies_us``, ``solve_times_us``, window counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from kinodyn.estimation.metrics import AccuracyReport, Trajectory, accuracy

from kinodyn_tools.report.metrics import heading_twist

if TYPE_CHECKING:
    from kinodyn_tools.scenario.steps import Step

FALL_HEIGHT_RATIO = 0.6


RATE_SAMPLES = 2  # the fewest diagnostics windows a tick rate is taken from


@dataclass
class BaseSeries:
    """Stamped base states as received: t [s], position, quaternion (x, y, z, w), base-frame linear and
    angular velocity."""

    t: list[float] = field(default_factory=list)
    position: list[tuple[float, float, float]] = field(default_factory=list)
    quaternion: list[tuple[float, float, float, float]] = field(default_factory=list)
    linear: list[tuple[float, float, float]] = field(default_factory=list)
    angular: list[tuple[float, float, float]] = field(default_factory=list)

    def trajectory(self) -> Trajectory:
        return Trajectory(np.array(self.t), np.array(self.position), np.array(self.quaternion),
                          np.array(self.linear))

    def heading(self) -> np.ndarray:
        """(N, 3) heading-frame vx, vy and world wz."""
        return heading_twist(self.trajectory().rotation, np.array(self.linear), np.array(self.angular))


@dataclass
class Recording:
    """Everything the runner received, and when each step ran (simulated time)."""

    truth: BaseSeries = field(default_factory=BaseSeries)
    estimate: BaseSeries = field(default_factory=BaseSeries)
    body_contacts: list[tuple[float, str]] = field(default_factory=list)  # (t, link) of non-foot contacts
    diagnostics: list[tuple[float, dict[str, str]]] = field(default_factory=list)
    windows: list[tuple[Step, float, float]] = field(default_factory=list)  # step, start, end
    refusals: list[str] = field(default_factory=list)  # a push or mode request refused


@dataclass(frozen=True)
class StepResult:
    name: str
    start: float
    end: float
    cmd_vel: tuple[float, float, float]
    linear_rmse: float  # m/s, nan when not tracked
    yaw_rmse: float  # rad/s, nan when not tracked
    mean_velocity: tuple[float, float, float]  # measured heading-frame vx, vy, wz over the judged span
    min_height: float  # m, true base
    body_contact: str  # first link not a foot touching the ground, "" if none
    qp_failures: int
    damped_ticks: int
    tracked: bool


@dataclass(frozen=True)
class Timing:
    median_ms: float
    p99_ms: float
    max_ms: float
    count: int


@dataclass(frozen=True)
class ScenarioResult:
    backend: str
    steps: list[StepResult]
    nominal_height: float
    falls: list[str]  # one line per fall
    refusals: list[str]  # one line per push or mode request refused
    drift: AccuracyReport | None
    tick_latency: Timing
    solve_time: Timing
    qp_failures: int
    damped_ticks: int
    held_ticks: int
    tick_rate: float  # wbc ticks per s of simulated time, over the diagnostics windows received (nan: < 2)
    sim_time: float  # s of simulated time the steps took
    wall_time: float  # s

    def failures(self, max_linear_rmse: float = 0.1, max_yaw_rmse: float = 0.1) -> list[str]:
        """What breaks the acceptance: a tracked step over a velocity-tracking bound, a fall, a refusal."""
        out = self.falls + self.refusals
        for s in self.steps:
            if s.tracked and not s.linear_rmse <= max_linear_rmse:
                out.append(f"{s.name}: velocity RMSE {s.linear_rmse:.3f} m/s > {max_linear_rmse}")
            if s.tracked and not s.yaw_rmse <= max_yaw_rmse:
                out.append(f"{s.name}: yaw-rate RMSE {s.yaw_rmse:.3f} rad/s > {max_yaw_rmse}")
        return out

    def summary_table(self) -> str:
        """One line per step, then the run's figures."""
        head = (f"{'step':<18}{'t [s]':>8}{'cmd vx vy wz':>20}{'measured vx vy wz':>22}{'RMSE m/s':>10}"
                f"{'rad/s':>8}{'min z':>8}{'QP fail':>8}")
        lines = [f"backend {self.backend}: {self.sim_time:.1f} s simulated in {self.wall_time:.1f} s wall",
                 head]
        for s in self.steps:
            cmd = " ".join(f"{x:+.2f}" for x in s.cmd_vel)
            mean = " ".join(f"{x:+.2f}" for x in s.mean_velocity)
            rmse = f"{s.linear_rmse:10.3f}{s.yaw_rmse:8.3f}" if s.tracked else f"{'-':>10}{'-':>8}"
            contact = f"  body contact: {s.body_contact}" if s.body_contact else ""
            lines.append(f"{s.name:<18}{s.start:8.2f}{cmd:>20}{mean:>22}{rmse}{s.min_height:8.3f}"
                         f"{s.qp_failures:8d}{contact}")
        d = self.drift
        lines.append("falls: " + ("; ".join(self.falls) if self.falls else "none") +
                     f" (nominal height {self.nominal_height:.4f} m)")
        lines.append("estimator drift: " + ("no estimate" if d is None else
                     f"{100 * d.drift:.2f} % of {d.path_length:.2f} m (final horizontal error "
                     f"{d.final_horizontal_error:.3f} m, position RMSE {d.position_rmse:.3f} m, yaw "
                     f"{d.final_yaw_error_deg:+.2f} deg)"))
        for label, tm in (("wbc tick latency", self.tick_latency), ("wbc QP solve", self.solve_time)):
            lines.append(f"{label}: median {tm.median_ms:.2f} ms, p99 {tm.p99_ms:.2f} ms, max "
                         f"{tm.max_ms:.2f} ms over {tm.count} ticks")
        lines.append(f"QP failures {self.qp_failures}, damped ticks {self.damped_ticks}, held ticks "
                     f"{self.held_ticks}, {self.tick_rate:.0f} ticks per simulated second")
        return "\n".join(lines)


def _timing(values_us: list[float]) -> Timing:
    if not values_us:
        return Timing(math.nan, math.nan, math.nan, 0)
    a = np.array(values_us) / 1e3
    return Timing(float(np.median(a)), float(np.percentile(a, 99)), float(a.max()), len(a))


def _per_tick(values: dict[str, str], key: str) -> list[float]:
    return [float(x) for x in values.get(key, "").split()]


def step_result(rec: Recording, step: Step, start: float, end: float, t: np.ndarray, heading: np.ndarray,
                height: np.ndarray) -> StepResult:
    in_step = (t >= start) & (t <= end)
    judged = in_step & (t >= start + step.settle)
    cmd = np.array(step.cmd_vel)
    error = heading[judged] - cmd
    linear = yaw = math.nan
    mean = (math.nan,) * 3
    if np.any(judged):
        mean_x, mean_y, mean_z = (float(x) for x in heading[judged].mean(axis=0))
        mean = (mean_x, mean_y, mean_z)
        if step.track:
            linear = float(np.sqrt(np.mean(np.sum(error[:, :2] ** 2, axis=1))))
            yaw = float(np.sqrt(np.mean(error[:, 2] ** 2)))
    contact = next((link for tc, link in rec.body_contacts if start <= tc <= end), "")
    windows = [v for td, v in rec.diagnostics if start < td <= end]
    return StepResult(step.name, start, end, step.cmd_vel, linear, yaw, mean,
                      float(height[in_step].min()) if np.any(in_step) else math.nan, contact,
                      sum(int(v.get("qp_failures", 0)) for v in windows),
                      sum(int(v.get("damped_ticks", 0)) for v in windows), step.track)


def scenario_result(rec: Recording, backend: str, wall_time: float) -> ScenarioResult:
    """The figures of a recorded run (module doc). ValueError when the truth was never received."""
    if not rec.truth.t:
        raise ValueError("no ground-truth odometry was received: is the simulator running?")
    t = np.array(rec.truth.t)
    heading = rec.truth.heading()
    height = np.array(rec.truth.position)[:, 2]
    nominal = float(height[0])
    steps = [step_result(rec, step, start, end, t, heading, height) for step, start, end in rec.windows]
    falls = []
    if rec.windows:
        t0, t1 = rec.windows[0][1], rec.windows[-1][2]
        span = (t >= t0) & (t <= t1)
        low = span & (height < FALL_HEIGHT_RATIO * nominal)
        if np.any(low):
            falls.append(f"base at {height[low].min():.3f} m (< {FALL_HEIGHT_RATIO:.0%} of {nominal:.3f} m) "
                         f"from t = {t[low][0]:.3f} s")
        touched = [(tc, link) for tc, link in rec.body_contacts if t0 <= tc <= t1]
        if touched:
            falls.append(f"{touched[0][1]} touched the ground at t = {touched[0][0]:.3f} s "
                         f"({len(touched)} contact samples of non-foot spheres)")
    drift = None
    if rec.estimate.t:
        drift = accuracy(rec.truth.trajectory(), rec.estimate.trajectory())
    values = [v for _, v in rec.diagnostics]
    sim = rec.windows[-1][2] - rec.windows[0][1] if rec.windows else 0.0
    return ScenarioResult(
        backend, steps, nominal, falls,
        list(rec.refusals), drift,
        _timing([x for v in values for x in _per_tick(v, "tick_latencies_us")]),
        _timing([x for v in values for x in _per_tick(v, "solve_times_us")]),
        sum(int(v.get("qp_failures", 0)) for v in values), sum(int(v.get("damped_ticks", 0)) for v in values),
        sum(int(v.get("held_ticks", 0)) for v in values), _tick_rate(rec.diagnostics), sim, wall_time)


def _tick_rate(diagnostics: list[tuple[float, dict[str, str]]]) -> float:
    """Ticks per simulated second: the windows after the first received (whose start is unknown: the ones
    before it may have gone out before the subscription matched) over the stamps' span."""
    if len(diagnostics) < RATE_SAMPLES or diagnostics[-1][0] <= diagnostics[0][0]:
        return math.nan
    ticks = sum(int(v.get("ticks", 0)) for _, v in diagnostics[1:])
    return ticks / (diagnostics[-1][0] - diagnostics[0][0])
