"""Legged state estimation benchmark: the filter step and offline estimation against real time.

Section "filter step": the time of one IMU propagation plus one kinematic update with 4 feet in contact
(``propagate`` + ``update_contacts``), per filter (ESKF and invariant EKF), on a
standing robot swaying with noisy readings at 500 Hz; the foot measurements are built before the timed call
(their forward kinematics belong to the leg model, not to the filter). Prints the median and p99 over
``--ticks`` ticks after an untimed warm-up (the compiled kernels load from the numba cache). Target: median
<= 100 us.

Section "estimator tick": ``LeggedEstimator.process`` of one control cycle's events (IMU sample, contact
flags, joint state), as the state_estimator node and the ``kinodyn_control/LeggedStateEstimator``
controller call it each tick, per filter, on a synthetic trot of the quadruped at 500 Hz
(kinodyn.estimation.synthetic; the feet touch down and lift off, so the ticks that change the filter's feet
are included): median and p99 over the walking part, and the same for the three one-event calls
``add_imu``, ``add_contacts``, ``add_joint_state``.

Section "offline": `kinodyn estimate`'s real-time factor (bag seconds per second of
kinodyn_tools.estimation.offline.estimate_bag, wall and CPU time of this process: the CPU figure does not
count what other processes on a shared machine take; best of 3 runs) on a synthetic trot bag of
``--offline-seconds`` s with 500 Hz Imu, JointState and ContactStates messages
(kinodyn_tools.estimation.synthetic_bag), the real-time factor of reading and decoding the bag's inputs into
arrays alone (kinodyn_tools.estimation.blocks), and the load average before and after. Target: >= 20x real
time.

Both tables go to the ``bench_estimation`` section of bench/RESULTS.md (bench/results.py).

    python bench/bench_estimation.py [--ticks 5000] [--seed 0] [--offline-seconds 10] [--walk-seconds 4]
        [--no-record]
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from estimation_accuracy import synthesize
from kinodyn.estimation import ErrorStateEKF, FootMeasurement, LeggedEstimator, NoiseParameters
from kinodyn.estimation.events import CONTACTS, IMU, JOINTS, EventBatch
from kinodyn.estimation.invariant import InvariantEKF
from kinodyn.estimation.synthetic import trotting_walk
from kinodyn.sim.collision import collision_spheres
from kinodyn_control.estimation.pipeline import EstimatorParameters
from kinodyn_tools.bags.reader import open_bag, select_connections
from kinodyn_tools.estimation.blocks import read_blocks
from kinodyn_tools.estimation.offline import BATCH_MESSAGES, StderrLog, Topics, estimate_bag, load_model
from kinodyn_tools.estimation.synthetic_bag import write_synthetic_bag
from results import add_record_flag, markdown_header, markdown_row, record, shown

import kinodyn as kd

TARGET_US = 100.0
OFFLINE_TARGET = 20.0  # x real time (docs/offline-estimation.md, "Speed")
RATE = 500.0
FEET = {
    "lf": [0.25, 0.15, -0.3],
    "rf": [0.25, -0.15, -0.3],
    "lh": [-0.25, 0.15, -0.3],
    "rh": [-0.25, -0.15, -0.3],
}


FILTERS = {"eskf": ErrorStateEKF, "invariant": InvariantEKF}


def inputs(
    rng: np.random.Generator, ticks: int
) -> list[tuple[np.ndarray, np.ndarray, list[FootMeasurement]]]:
    """Per tick: gyro and accelerometer readings of a gently swaying IMU, and the 4 stance feet it sees."""
    noise = NoiseParameters()
    dt = 1.0 / RATE
    out = []
    for k in range(ticks):
        t = k * dt
        w = np.array(
            [0.3 * np.sin(2 * t), 0.2 * np.cos(3 * t), 0.1]
        ) + noise.gyroscope_noise_density * np.sqrt(RATE) * rng.standard_normal(3)
        a = np.array([0.2 * np.sin(4 * t), 0.1, 9.81]) + noise.accelerometer_noise_density * np.sqrt(
            RATE
        ) * rng.standard_normal(3)
        feet = [
            FootMeasurement(name, np.array(r) + 1e-3 * rng.standard_normal(3), 1e-6 * np.eye(3))
            for name, r in FEET.items()
        ]
        out.append((w, a, feet))
    return out


def filter_step(ticks: int, seed: int) -> list[str]:
    """Section "filter step": median and p99 per filter against the target."""
    data = inputs(np.random.default_rng(seed), ticks)
    dt = 1.0 / RATE
    lines = [f"Filter step: propagate + update_contacts with {len(FEET)} feet, {ticks} ticks at "
             f"{RATE:.0f} Hz, target median <= {TARGET_US:g} us.", "",
             markdown_header("filter", "median [us]", "p99 [us]", "target")]
    print("\n".join(lines), flush=True)
    for name, cls in FILTERS.items():
        f = cls(NoiseParameters())
        f.initialize(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
        for w, a, feet in data[:200]:  # untimed: loads the kernels, feet touch down
            f.propagate(w, a, dt)
            f.update_contacts(feet)
        times = np.empty(ticks)
        for k, (w, a, feet) in enumerate(data):
            t0 = time.perf_counter()
            f.propagate(w, a, dt)
            f.update_contacts(feet)
            times[k] = time.perf_counter() - t0
        median = float(np.median(times)) * 1e6
        verdict = "met" if median <= TARGET_US else "MISSED"
        shown(lines, markdown_row(name, f"{median:.1f}", f"{np.percentile(times, 99) * 1e6:.1f}", verdict))
    return lines


def estimator_tick(seconds: float, seed: int) -> list[str]:
    """Section "estimator tick": the estimator's per-cycle call, per filter."""
    root = Path(__file__).resolve().parents[1]
    model = kd.Model.from_urdf(root / "urdf/quadruped.urdf", floating_base=True)
    feet = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
    standing = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])
    run = trotting_walk(model, "imu_link", feet, duration=seconds, seed=seed, standing_joints=standing)
    walking = run.t >= run.walk_start
    lines = [f"Estimator tick: process() of one cycle's IMU, contacts and joint-state events on a "
             f"{seconds:g} s synthetic trot at {run.rate:.0f} Hz ({int(walking.sum())} walking ticks timed), "
             "and the three add_* calls of the same events.", "",
             markdown_header("filter", "process median [us]", "process p99 [us]", "add_* median [us]",
                             "add_* p99 [us]")]
    print("\n".join(lines), flush=True)
    for name in FILTERS:
        batched, single = [], []
        estimator = LeggedEstimator(model, "imu_link", feet, filter=name)
        one_by_one = LeggedEstimator(model, "imu_link", feet, filter=name)
        for k, t in enumerate(run.t):
            batch = EventBatch.empty(3, len(feet), model.nv - 6)
            batch.kinds[:] = (IMU, CONTACTS, JOINTS)
            batch.stamps[:] = t
            batch.imu[0, :3], batch.imu[0, 3:] = run.imu_angular_velocity[k], run.imu_linear_acceleration[k]
            batch.contacts[1] = run.contacts[k]
            batch.joints[2] = run.joint_positions[k], run.joint_velocities[k], run.joint_efforts[k]
            contacts = dict(zip(feet, run.contacts[k].tolist(), strict=True))
            t0 = time.perf_counter()
            estimator.process(batch)
            t1 = time.perf_counter()
            one_by_one.add_imu(t, run.imu_angular_velocity[k], run.imu_linear_acceleration[k])
            one_by_one.add_contacts(t, contacts)
            one_by_one.add_joint_state(t, run.joint_positions[k], run.joint_velocities[k],
                                       run.joint_efforts[k])
            t2 = time.perf_counter()
            if walking[k]:
                batched.append(t1 - t0)
                single.append(t2 - t1)
        b, s = np.array(batched) * 1e6, np.array(single) * 1e6
        shown(lines, markdown_row(name, f"{np.median(b):.1f}", f"{np.percentile(b, 99):.1f}",
                                  f"{np.median(s):.1f}", f"{np.percentile(s, 99):.1f}"))
    return lines


def offline(seconds: float, seed: int) -> list[str]:
    """Section "offline": real-time factor of `kinodyn estimate` (ESKF and invariant) against the target."""
    root = Path(__file__).resolve().parents[1]
    urdf = root / "src/kinodyn/test/estimation/quadruped_offset_imu.urdf"
    model = load_model(urdf)
    with tempfile.TemporaryDirectory() as tmp:
        bag = Path(tmp) / "bag"
        write_synthetic_bag(synthesize(seconds, seed), bag)
        before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"\noffline: load average {before} at the start", flush=True)
        decode = []
        for _ in range(3):
            cpu = time.process_time()
            with open_bag(bag) as reader:
                streams = {"/imu/data": "imu", "/joint_states": "joint_states", "/contacts": "contacts"}
                blocks = read_blocks(reader, select_connections(reader, list(streams)),
                                     ("imu", "contacts", "joint_states"), streams, model.joint_names,
                                     BATCH_MESSAGES)
                assert all(block.inputs is not None for block in blocks)
            decode.append(time.process_time() - cpu)
        lines = [f"Offline: kinodyn estimate, a {seconds:g} s bag (500 Hz Imu, JointState, ContactStates), "
                 f"best of 3 runs, target >= {OFFLINE_TARGET:g}x real time (CPU). Reading and decoding the "
                 f"inputs into arrays alone: {seconds / min(decode):.1f}x real time (CPU).", "",
                 markdown_header("filter", "x real time (wall)", "x real time (CPU)", "CPU us per IMU sample",
                                 "target")]
        print("\n".join(lines), flush=True)
        for name in FILTERS:
            runs = []
            for k in range(3):
                out = Path(tmp) / f"out-{name}-{k}"
                cpu = time.process_time()
                result = estimate_bag(bag, model, EstimatorParameters(filter=name), out, Topics(),
                                      log=StderrLog(io.StringIO()),  # its log lines are not the bench's
                                      spheres=collision_spheres(urdf))  # as kinodyn estimate: rolling feet
                runs.append((time.process_time() - cpu, result.wall_time, result.duration,
                             result.inputs["/imu/data"].count))
            cpu, wall = min(r[0] for r in runs), min(r[1] for r in runs)
            duration, count = runs[0][2], runs[0][3]
            factor = duration / cpu
            verdict = "met" if factor >= OFFLINE_TARGET else "MISSED"
            shown(lines, markdown_row(name, f"{duration / wall:.1f}", f"{factor:.1f}",
                                      f"{cpu / count * 1e6:.0f}", verdict))
    lines.append(f"\nLoad average {before} at the start of the offline runs.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--offline-seconds", type=float, default=10.0, help="bag length of section offline")
    parser.add_argument("--walk-seconds", type=float, default=4.0, help="trot of section estimator tick")
    add_record_flag(parser)
    args = parser.parse_args()
    lines = [*filter_step(args.ticks, args.seed), "", *estimator_tick(args.walk_seconds, args.seed), "",
             *offline(args.offline_seconds, args.seed)]
    record("bench_estimation", "\n".join(lines), no_record=args.no_record)


if __name__ == "__main__":
    main()
