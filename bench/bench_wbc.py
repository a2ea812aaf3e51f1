"""Whole-body controller tick on the quadruped, in one run: kinodyn's modes, solvers and layouts, and TSID.

The tick is what a control loop calls per period: evaluation + QP build + solve + torques
(``WholeBodyController.update``). The problem is TSID's standing quadruped (bench/tsid_quadruped.py): 4 point
contacts; CoM, base orientation, posture and one force regularisation per foot. Rows:

- weighted, TSID's problem exactly (no joint or torque limits), per QP solver: the figure against TSID;
- weighted with the URDF's torque limits and joint position/velocity limits as acceleration bounds (44 more
  inequality rows), with ``tau`` recovered from the actuated rows and with ``tau`` as variables;
- a strict 3-level hierarchy (CoM + base orientation; posture; forces), with the URDF limits;
- TSID 1.10.0 (eiquadprog-fast) driven from Python on the same states, when ``.venv/tsid`` exists
  (scripts/install_tsid.py), and the ratio kinodyn tick / TSID tick: the medians of each of ``--rounds``
  rounds, kinodyn and TSID timed one after the other in each round (a load that changes during the run
  moves both), and the median of the rounds' ratios.

    python bench/bench_wbc.py [--states 200] [--passes 5] [--rounds 5]

Each state is solved once per pass, states in sequence (warm starts carry over as in a loop); times are
per tick over all passes. The machine may be shared: compare figures from one run. The table and the ratio
go to the ``bench_wbc`` section of bench/RESULTS.md, with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typing import TYPE_CHECKING

import results
import tsid_quadruped as anchor
from kinodyn.control.qp import SOLVERS
from kinodyn.control.wbc import JointLimits, WholeBodyController

import kinodyn as kd

if TYPE_CHECKING:
    from collections.abc import Callable

States = list[tuple[np.ndarray, np.ndarray]]


def urdf_limited(model: kd.Model, problem: anchor.StandingProblem, com_ref: np.ndarray, mode: str,
                 levels: tuple[int, ...], **options: object) -> WholeBodyController:
    """TSID's contacts and tasks with the URDF's limits, tasks at ``levels`` (com, base, posture, forces)."""
    contacts, tasks = anchor.kinodyn_problem(model, problem, com_ref)
    wbc = WholeBodyController(model, contacts, mode=mode, limits=JointLimits.from_model(model),
                              regularization=anchor.HESSIAN_REGULARIZATION, **options)
    for task, level in zip(tasks, (*levels[:3], *[levels[3]] * (len(tasks) - 3)), strict=True):
        wbc.add_task(task, level)
    return wbc


def tick_times(wbc: WholeBodyController, states: States, passes: int) -> tuple[np.ndarray, str]:
    """Milliseconds per tick, and the count of failed ticks and of ticks a lower level was left unsolved."""
    times, failures, partial = [], 0, 0
    for _ in range(passes):
        for q, v in states:
            t0 = time.perf_counter()
            result = wbc.update(q, v)
            times.append((time.perf_counter() - t0) * 1e3)
            failures += not result.ok
            partial += result.ok and result.message != "solved"
    return np.array(times), f"failed {failures}, lower level unsolved {partial}"


def row(lines: list[str], label: str, times: np.ndarray, outcome: str = "") -> float:
    """Print and keep one table row; return the median."""
    median, p99 = statistics.median(times), np.percentile(times, 99)
    lines.append(f"| {label} | {median:.3f} | {p99:.3f} | {times.max():.3f} | {outcome} |")
    failed = f"  {outcome}" if outcome else ""
    print(f"{label:58s} median {median:6.3f} ms  p99 {np.percentile(times, 99):6.3f} ms  "
          f"max {times.max():6.3f} ms{failed}", flush=True)
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5, help="kinodyn / TSID ratio rounds")
    results.add_record_flag(parser)
    args = parser.parse_args()
    model = kd.Model.from_urdf(anchor.URDF, floating_base=True)
    problem = anchor.StandingProblem()
    q0 = anchor.standing_configuration()
    com_ref = model.com(q0) + np.array([0.01, 0.0, 0.0])
    states = anchor.random_standing_states(args.states, np.random.default_rng(0), q0)
    title = (f"quadruped, 4 point contacts, CoM + base orientation + posture + 4 force regularisations; "
             f"{args.states} states x {args.passes} passes")
    print(f"{title}; load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lines = ["| tick (evaluation + QP build + solve + torques) | median [ms] | p99 [ms] | max [ms] | "
             "outcome |", "|---|---|---|---|---|"]

    builds: dict[str, Callable[[], WholeBodyController]] = {}
    for solver in SOLVERS:
        builds[f"weighted, TSID's problem, {solver}"] = (
            lambda s=solver: anchor.kinodyn_controller(model, problem, com_ref, solver=s))
    for variables in (False, True):
        layout = "[qdd; f; tau]" if variables else "[qdd; f], tau recovered"
        builds[f"weighted, URDF limits, {layout}"] = (
            lambda t=variables: urdf_limited(model, problem, com_ref, "weighted", (1, 1, 1, 1),
                                             torque_variables=t))
    builds["strict hierarchy, 3 levels, URDF limits"] = (
        lambda: urdf_limited(model, problem, com_ref, "hierarchical", (1, 1, 2, 3)))
    controllers = {}
    for label, build in builds.items():
        wbc = controllers[label] = build()
        wbc.update(*states[0])  # compiled kernels loaded, solver set up
        row(lines, label, *tick_times(wbc, states, args.passes))

    if not anchor.TSID_PYTHON.exists():
        print(f"TSID: not installed ({anchor.TSID_PYTHON} missing; run python scripts/install_tsid.py)")
        return
    ours = controllers[f"weighted, TSID's problem, {SOLVERS[0]}"]
    ratios = []
    with anchor.TsidProcess(joint_names=model.joint_names) as tsid:
        tsid_times = tsid.tick_times(states, args.passes) * 1e3
        row(lines, "TSID 1.10.0 (eiquadprog-fast), TSID's problem", tsid_times)
        for k in range(args.rounds):
            mine = statistics.median(tick_times(ours, states, args.passes)[0])
            theirs = statistics.median(tsid.tick_times(states, args.passes) * 1e3)
            ratios.append(mine / theirs)
            print(f"round {k + 1}: kinodyn ({SOLVERS[0]}) {mine:.4f} ms, TSID {theirs:.4f} ms, "
                  f"ratio {mine / theirs:.2f}", flush=True)
    ratio = (f"RATIO kinodyn ({SOLVERS[0]}) tick / TSID tick on TSID's problem, same run: median of "
             f"{args.rounds} rounds {statistics.median(ratios):.2f} (rounds: "
             f"{', '.join(f'{r:.2f}' for r in ratios)})")
    print(ratio)
    results.record("bench_wbc", f"{title}.\n\n" + "\n".join(lines) + f"\n\n{ratio}", no_record=args.no_record)


if __name__ == "__main__":
    main()
