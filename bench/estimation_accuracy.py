"""Accuracy of the legged state estimator against ground truth, ESKF and invariant EKF side by side
(docs/offline-estimation.md, "Accuracy").

Data: kinodyn.estimation.synthetic.trotting_walk on urdf/quadruped.urdf with the IMU moved 12 cm forward,
4 cm right, 6 cm up and rotated (src/kinodyn/test/estimation/robots.py): 1 s standing, then a 36 s trot with
turns (>= 10 m), BMI088 IMU noise and bias random walks, 1 mrad encoder noise; the faulted variant adds
inject_faults' IMU dropouts, accelerometer spikes, NaN readings and contact flicker. Each run is fed to
kinodyn.estimation.LeggedEstimator as the node's pipeline releases it (per sample: IMU, contacts, joint
state; a dropped IMU sample is absent), with the filter told the true noise densities.

Figures per filter: drift (final horizontal error / horizontal path, after the start alignment of
kinodyn.estimation.metrics), roll/pitch RMSE, base velocity RMSE, NEES of the 9-dof navigation error [p, v, θ]
of the IMU state in each filter's own error convention (Robot Dynamics Essential, §5.2; Hartley et al. 2020)
and the NIS per dof of the kinematic updates. NEES consistency is judged as Bar-Shalom (2001) §5.4.2
prescribes: at every estimate stamp the mean over ``--seeds`` Monte-Carlo runs (independent noise) is compared
with the two-sided 95 % chi-square bounds of that mean; a consistent filter has about 95 % of the stamps
inside (time-averaging one run instead would treat strongly correlated samples as independent).

The table goes to the ``estimation_accuracy`` section of bench/RESULTS.md (bench/results.py).

    python bench/estimation_accuracy.py [--seeds 4] [--duration 37] [--filters eskf invariant] [--no-record]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kinodyn.estimation import LeggedEstimator, NoiseParameters
from kinodyn.estimation.consistency import chi2_bounds
from kinodyn.estimation.metrics import AccuracyReport, Trajectory, accuracy
from kinodyn.estimation.synthetic import SyntheticRun, inject_faults, trotting_walk
from kinodyn.spatial import quat_to_matrix

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src" / "kinodyn" / "test" / "estimation"))
from robots import (  # noqa: E402  (the shared test robots)
    QUADRUPED_FEET,
    QUADRUPED_IMU,
    QUADRUPED_STANDING_JOINTS,
    quadruped_offset_imu_model,
)

FILTERS = ("eskf", "invariant")
NEES_DOF = 9
ACCEPTANCE = {"drift": 0.01, "drift_faults": 0.02, "roll_pitch_deg": 0.5, "velocity": 0.05}
"""The estimator's accuracy bounds: drift over distance (clean, with faults), roll/pitch and velocity RMSE."""
FOOT_RANDOM_WALK = 1e-5  # m/sqrt(s): 0.06 mm over a 36 s run; the default 1e-3 models slip the data lack


def matched_noise(run: SyntheticRun) -> NoiseParameters:
    """The filter's noise densities set to those that made the data (a consistency check needs the truth's
    densities): the synthetic feet never slip, so the foot random walk is FOOT_RANDOM_WALK (effectively none);
    the initial uncertainties keep their defaults."""
    n = run.noise
    return NoiseParameters(
        accelerometer_noise_density=n.accelerometer_noise_density,
        gyroscope_noise_density=n.gyroscope_noise_density,
        accelerometer_random_walk=n.accelerometer_random_walk,
        gyroscope_random_walk=n.gyroscope_random_walk,
        encoder_noise=n.encoder_noise,
        foot_random_walk=FOOT_RANDOM_WALK,
    )


def odom_alignment(run: SyntheticRun) -> tuple[np.ndarray, np.ndarray]:
    """``(C_OW, p0)``: the estimator starts with the base at the odom origin and zero yaw (REP-105) while the
    robot stands, so odom is the world turned by minus the standing base yaw about z, at its position."""
    C = quat_to_matrix(run.quaternion[0])
    yaw = math.atan2(C[1, 0], C[0, 0])
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]), run.position[0].copy()


@dataclass
class FilterRun:
    """One estimator over one run: estimates (base), NEES per estimate, NIS per dof per update."""

    filter: str
    index: np.ndarray  # sample index of each estimate
    trajectory: Trajectory
    nees: np.ndarray
    nis_per_dof: np.ndarray
    counters: dict[str, int]
    seconds: float

    def report(self, run: SyntheticRun) -> AccuracyReport:
        truth = Trajectory(run.t, run.position, run.quaternion, run.linear_velocity)
        return accuracy(truth, self.trajectory)


def estimate_run(run: SyntheticRun, filter_name: str) -> FilterRun:
    """Feed ``run`` to a LeggedEstimator sample by sample (IMU, contacts, joint state at each stamp, the
    merger's tie order) and collect its estimates and consistency figures."""
    est = LeggedEstimator(run.model, run.imu_frame, run.feet, filter=filter_name, noise=matched_noise(run))
    C_ow, p0 = odom_alignment(run)
    imu_C = np.array([C_ow @ quat_to_matrix(q) for q in run.imu_quaternion])
    imu_p = (run.imu_position - p0) @ C_ow.T
    imu_v = run.imu_velocity @ C_ow.T
    dropped = run.faults.imu_dropped if run.faults is not None else np.zeros(len(run.t), dtype=bool)
    index, t, position, quaternion, velocity, nees, nis = [], [], [], [], [], [], []
    start = time.perf_counter()
    for i, ti in enumerate(run.t):
        if not dropped[i]:
            e = est.add_imu(ti, run.imu_angular_velocity[i], run.imu_linear_acceleration[i])
            if e is not None:
                index.append(i)
                t.append(ti)
                position.append(e.position)
                quaternion.append(e.orientation)
                velocity.append(e.linear_velocity)
                nees.append(est.filter.nees(imu_p[i], imu_v[i], imu_C[i]))
        est.add_contacts(ti, dict(zip(run.feet, run.contacts[i], strict=True)))
        report = est.add_joint_state(ti, run.joint_positions[i], run.joint_velocities[i],
                                     run.joint_efforts[i])
        if report is not None and report.dof:
            nis.append(report.nis / report.dof)
    seconds = time.perf_counter() - start
    trajectory = Trajectory(np.array(t), np.array(position), np.array(quaternion), np.array(velocity))
    return FilterRun(filter_name, np.array(index), trajectory, np.array(nees), np.array(nis),
                     dict(est.counters), seconds)


@dataclass(frozen=True)
class NeesCheck:
    """Monte-Carlo NEES: mean over runs and stamps, the 95 % bounds of a per-stamp mean over ``runs``, the
    fraction of stamps whose mean is inside them (0.95 when consistent) and below the lower bound."""

    mean: float
    lower: float
    upper: float
    inside: float
    below: float
    runs: int


def nees_check(runs: list[FilterRun]) -> NeesCheck:
    """Per-stamp NEES averaged over the runs (stamps every run estimated), against chi2_bounds(9, runs)."""
    common = set(runs[0].index.tolist())
    for r in runs[1:]:
        common &= set(r.index.tolist())
    stamps = np.array(sorted(common))
    per_run = np.array([r.nees[np.searchsorted(r.index, stamps)] for r in runs])
    mean_over_runs = per_run.mean(axis=0)
    lower, upper = chi2_bounds(NEES_DOF, len(runs))
    return NeesCheck(float(mean_over_runs.mean()), lower, upper,
                     float(np.mean((mean_over_runs >= lower) & (mean_over_runs <= upper))),
                     float(np.mean(mean_over_runs < lower)), len(runs))


@dataclass(frozen=True)
class Row:
    """One line of the table: worst case over the seeds for the errors, the Monte-Carlo NEES check."""

    filter: str
    faults: bool
    path: float
    drift: float
    roll: float
    pitch: float
    velocity: float
    nees: NeesCheck
    nis: float
    seconds: float


def evaluate(runs: list[SyntheticRun], filter_name: str, faults: bool) -> Row:
    results = [estimate_run(r, filter_name) for r in runs]
    reports = [res.report(r) for res, r in zip(results, runs, strict=True)]
    return Row(
        filter_name, faults, min(rep.path_length for rep in reports),
        max(rep.drift for rep in reports), max(rep.roll_rmse_deg for rep in reports),
        max(rep.pitch_rmse_deg for rep in reports), max(rep.velocity_rmse for rep in reports),
        nees_check(results), float(np.mean(np.concatenate([res.nis_per_dof for res in results]))),
        float(np.mean([res.seconds / r.t[-1] for res, r in zip(results, runs, strict=True)])),
    )


def synthesize(duration: float, seed: int) -> SyntheticRun:
    """The offset-IMU quadruped's trot of ``duration`` s (1 s standing first) with noise seed ``seed``."""
    return trotting_walk(quadruped_offset_imu_model(), QUADRUPED_IMU, QUADRUPED_FEET, duration=duration,
                         seed=seed, standing_joints=QUADRUPED_STANDING_JOINTS)


def table(rows: list[Row]) -> str:
    head = ("| filter | faults | path m | drift % | roll RMSE deg | pitch RMSE deg | vel RMSE m/s | "
            "NEES mean (9 dof) | 95 % bounds (N runs) | stamps inside | NIS/dof | s per s |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        n = r.nees
        lines.append(
            f"| {r.filter} | {'yes' if r.faults else 'no'} | {r.path:.1f} | {100 * r.drift:.3f} | "
            f"{r.roll:.3f} | {r.pitch:.3f} | {r.velocity:.4f} | {n.mean:.2f} | "
            f"{n.lower:.2f}-{n.upper:.2f} ({n.runs}) | "
            f"{100 * n.inside:.0f} % ({100 * n.below:.0f} % below) | {r.nis:.3f} | {r.seconds:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    # bench/ is on the path when this file runs as a script; the tests import this module without it
    from results import add_record_flag, record  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=4, help="Monte-Carlo runs (noise seeds 0..N-1)")
    parser.add_argument("--duration", type=float, default=37.0, help="s per run (1 s standing first)")
    parser.add_argument("--filters", nargs="+", choices=FILTERS, default=list(FILTERS))
    add_record_flag(parser)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    clean = [synthesize(args.duration, seed) for seed in range(args.seeds)]
    faulted = [inject_faults(r, seed=100 + k) for k, r in enumerate(clean)]
    print(f"synthesised {args.seeds} runs of {args.duration:g} s in {time.perf_counter() - start:.0f} s; "
          f"paths {', '.join(f'{r.path_length:.1f}' for r in clean)} m")
    rows = [evaluate(runs, f, faults) for faults, runs in ((False, clean), (True, faulted))
            for f in args.filters]
    body = "\n".join([
        f"{args.seeds} Monte-Carlo runs of {args.duration:g} s per filter, clean and with injected faults; "
        "errors are the worst over the runs.", "", table(rows), "",
        f"Acceptance: drift <= {100 * ACCEPTANCE['drift']:g} % ({100 * ACCEPTANCE['drift_faults']:g} % with "
        f"faults), roll/pitch RMSE <= {ACCEPTANCE['roll_pitch_deg']} deg, velocity RMSE <= "
        f"{ACCEPTANCE['velocity']} m/s, NEES per-stamp mean inside its 95 % bounds at about 95 % of the "
        "stamps."])
    print(body)
    record("estimation_accuracy", body, no_record=args.no_record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
