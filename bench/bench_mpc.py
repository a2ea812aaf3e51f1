"""Solve time of the centroidal MPC (``kinodyn.control.mpc``) on the project quadruped, both solvers.

A 16-step horizon of 0.03 s (``MpcParameters`` defaults). The inputs are recorded once in closed loop on the
MPC's own prediction (each tick's state is the previous solve's ``x_1``): standing ``--stand`` ticks, then
trotting (period 16 steps, duty 10/16) at ``--speed`` m/s with footholds from the Raibert heuristic; then
every solver replays the same inputs ``--passes`` times in sequence (warm starts carry over as in a loop).
Printed per solver, standing and trotting apart: median / p99 / max of ``CentroidalMpc.solve``'s wall time
(input checks, problem build, solve), the solver's iterations, failed solves, the largest force difference
to the other solver, the ratio of medians, and the load average before and after. The budget is a median
<= 2 ms and a p99 <= 5 ms.

    python bench/bench_mpc.py [--ticks 300] [--stand 50] [--passes 3] [--speed 0.5] [--no-record]

The table goes to the ``bench_mpc`` section of bench/RESULTS.md (``--no-record``: printed only). The machine
may be shared: compare figures from one run.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import results
from kinodyn.control.locomotion import GaitScheduler, raibert_foothold, trot
from kinodyn.control.mpc import (
    SOLVERS,
    CentroidalMpc,
    MpcParameters,
    SingleRigidBody,
    contact_schedule,
    foothold_plan,
    velocity_reference,
)

import kinodyn as kd

URDF = Path(__file__).resolve().parents[1] / "urdf" / "quadruped.urdf"
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
PAIRS = (("LF_FOOT", "RH_FOOT"), ("LH_FOOT", "RF_FOOT"))
FOOT_RADIUS = 0.03  # m, urdf/README.md: the contact point is this far below the foot frame
BUDGET_MEDIAN, BUDGET_P99 = 2.0, 5.0  # ms


def standing(model: kd.Model) -> tuple[np.ndarray, np.ndarray]:
    """The nominal stance of urdf/README.md (HFE +-0.6, KFE -+1.2, feet on the ground) and its contacts."""
    q = model.neutral()
    for leg, sign in (("LF", 1.0), ("RF", 1.0), ("LH", -1.0), ("RH", -1.0)):
        q[7 + model.joint_id(f"{leg}_HFE")] = 0.6 * sign
        q[7 + model.joint_id(f"{leg}_KFE")] = -1.2 * sign
    contacts = np.array([model.frame_placement(q, foot)[:3, 3] for foot in FEET])
    q[2] = FOOT_RADIUS - contacts[:, 2].min()
    contacts[:, 2] -= contacts[:, 2].min()
    return q, contacts


@dataclass
class Recording:
    """Every tick's ``solve`` arguments."""

    inputs: list[tuple[np.ndarray, ...]] = field(default_factory=list)
    trotting: list[bool] = field(default_factory=list)


def record(body: SingleRigidBody, contacts: np.ndarray, x0: np.ndarray, ticks: int, stand_ticks: int,
           speed: float) -> Recording:
    params = MpcParameters()
    dt, N = params.dt, params.horizon
    mpc = CentroidalMpc(body, FEET, params)
    hips = contacts[:, :2] - x0[3:5]
    height, x, feet = x0[5], x0.copy(), contacts.copy()
    scheduler, rec = GaitScheduler(FEET), Recording()
    was_stance = np.ones(len(FEET), dtype=bool)
    for tick in range(ticks):
        if tick == stand_ticks:
            scheduler.set_gait(trot(PAIRS, period=N * dt, duty=10 / 16))
        state = scheduler.update(tick * dt)
        command = np.array([speed, 0.0, 0.0]) if scheduler.gait.moves else np.zeros(3)
        stance = contact_schedule(state, FEET, dt, N)
        landing, was_stance = stance[0] & ~was_stance, stance[0]
        planned = feet.copy()
        for i, foot in enumerate(FEET):
            p = state.feet[foot]
            if p.lifts_next:
                tau = (p.time_left - 0.5 * p.stance_duration if landing[i] else
                       p.time_left + (p.swing_duration if p.in_stance else 0.0) + 0.5 * p.stance_duration)
                planned[i, :2] = raibert_foothold(x[3:5], x[2], hips[i], x[9:11], command, tau, height,
                                                  float(np.linalg.norm(body.gravity)), 0.6, 0.15)
        feet[landing] = planned[landing]
        reference = velocity_reference(x, command, height, dt, N)
        args = (x.copy(), reference, stance, foothold_plan(stance, feet, planned, reference))
        solution = mpc.solve(*args)
        if not solution.ok:
            raise RuntimeError(f"recording: tick {tick} failed: {solution.message}")
        rec.inputs.append(args)
        rec.trotting.append(bool(scheduler.gait.moves))
        x = solution.states[1]
    return rec


def replay(solver: str, body: SingleRigidBody, rec: Recording,
           passes: int) -> tuple[np.ndarray, np.ndarray, int, list[np.ndarray]]:
    """Per-solve times [ms] and iterations over all passes, failed solves, the last pass's first forces."""
    mpc = CentroidalMpc(body, FEET, MpcParameters(solver=solver))
    times, iterations, failed, forces = [], [], 0, []
    for k in range(passes):
        for args in rec.inputs:
            solution = mpc.solve(*args)
            times.append(solution.solve_time * 1e3)
            iterations.append(solution.iterations)
            failed += not solution.ok
            if k == passes - 1:
                forces.append(solution.forces[0] if solution.ok else np.full((len(FEET), 3), np.nan))
    return np.array(times), np.array(iterations), failed, forces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--stand", type=int, default=50, help="standing ticks before the trot")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--speed", type=float, default=0.5)
    results.add_record_flag(parser)
    args = parser.parse_args()
    load_before = os.getloadavg()
    model = kd.Model.from_urdf(URDF, floating_base=True)
    q, contacts = standing(model)
    body = SingleRigidBody.from_model(model, q)
    x0 = body.state_from_floating_base(q, np.zeros(model.nv))
    rec = record(body, contacts, x0, args.ticks, args.stand, args.speed)
    trotting = np.tile(np.array(rec.trotting), args.passes)
    params = MpcParameters()
    title = (f"quadruped (urdf/quadruped.urdf), horizon {params.horizon} x {params.dt} s, "
             f"{args.stand} standing + {args.ticks - args.stand} trotting ticks at {args.speed} m/s, "
             f"{args.passes} passes")
    runs = {name: replay(name, body, rec, args.passes) for name in SOLVERS}
    fastest = min(float(np.median(t)) for t, _, _, _ in runs.values())
    a, b = (np.array(runs[name][3]) for name in SOLVERS)
    difference = float(np.nanmax(np.abs(a - b)))
    lines = ["| solver | phase | median [ms] | p99 [ms] | max [ms] | iterations (median) | failed |",
             "|---|---|---|---|---|---|---|"]
    verdicts = []
    for name, (times, iterations, failed, _) in runs.items():
        for phase, mask in (("standing", ~trotting), ("trotting", trotting), ("all", np.ones_like(trotting))):
            t = times[mask]
            lines.append(f"| {name} | {phase} | {np.median(t):.3f} | {np.percentile(t, 99):.3f} "
                         f"| {t.max():.3f} | {np.median(iterations[mask]):.0f} "
                         f"| {failed if phase == 'all' else ''} |")
        median, p99 = float(np.median(times)), float(np.percentile(times, 99))
        met = "met" if median <= BUDGET_MEDIAN and p99 <= BUDGET_P99 else "missed"
        verdicts.append(f"{name}: median/fastest {median / fastest:.2f}; budget (median <= {BUDGET_MEDIAN} "
                        f"ms, p99 <= {BUDGET_P99} ms) {met}")
    load_after = os.getloadavg()
    load = (f"load average before {', '.join(f'{v:.2f}' for v in load_before)}, after "
            f"{', '.join(f'{v:.2f}' for v in load_after)}")
    agreement = f"largest first-step force difference between the solvers: {difference:.2e} N"
    body_text = "\n".join([f"{title}.", "", *lines, "", *verdicts, "", agreement, load])
    print(body_text)
    if not args.no_record:
        results.record("bench_mpc", body_text)


if __name__ == "__main__":
    main()
