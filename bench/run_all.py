"""Run every bench in sequence, each in its own process, so that bench/RESULTS.md holds one run of each.

Meant for an idle machine: the load average is printed at the start (with a warning when it is above half
the core count) and before each bench, whose section of the results file also states the load of its run.
A bench that fails is reported and the others still run; the exit status is 1 if any failed.

    python bench/run_all.py                     # every bench with its default settings; writes RESULTS.md
    python bench/run_all.py --short             # a check: short settings, implies --no-record
    python bench/run_all.py --only bench_core bench_sim [--no-record]

``--short`` runs each bench with the short settings of ``RUNS`` (seconds instead of minutes where the bench
has such options) to check that it works; its figures are not for publication, so nothing is recorded.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from results import add_record_flag

BENCH = Path(__file__).resolve().parent

# a check on a loaded machine: at the drivers' defaults a late reply or message is a fault
LOADED_DRIVERS = ("--seconds", "2", "--reply-timeout", "0.5", "--imu-timeout", "1")
# (script, the options of the recorded run, the options added for --short)
RUNS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("bench_core.py", (), ("--no-compile",)),
    ("bench_evaluation.py", (), ()),
    ("bench_ik.py", (), ("--poses", "20")),
    ("bench_qp.py", (), ("--ticks", "50")),
    ("bench_sim.py", (), ()),
    ("bench_wbc.py", (), ("--states", "20", "--passes", "1", "--rounds", "1")),
    ("bench_mpc.py", (), ("--ticks", "60", "--stand", "20", "--passes", "1")),
    ("bench_locomotion.py", (), ("--seconds", "0.6", "--passes", "1")),
    ("bench_locomotion.py", ("--mpc",), ("--seconds", "0.6", "--passes", "1")),
    ("bench_estimation.py", (), ("--ticks", "500", "--offline-seconds", "3")),
    ("estimation_accuracy.py", (), ("--seeds", "2", "--duration", "4")),
    ("bench_control_loop.py", (), ("--seconds", "2")),
    ("bench_drivers.py", (), LOADED_DRIVERS),
    ("bench_drivers.py", ("--controllers",), LOADED_DRIVERS),
    ("bench_wbc_node.py", ("--mode", "stand"), ("--seconds", "6", "--warmup", "1")),
    ("bench_wbc_node.py", ("--mode", "trot"), ("--seconds", "6", "--warmup", "1")),
    ("bench_executors.py", (), ("--messages", "300")),
    ("bench_messages.py", (), ("--number", "200", "--repeat", "2")),
    ("bench_node_cost.py", ("--graph", "nodes"), ("--seconds", "2", "--warmup", "2")),
    ("bench_node_cost.py", ("--graph", "rt"), ("--seconds", "2", "--warmup", "2")),
    ("bench_realtime.py", (), ("--seconds", "2")),
    ("bench_demo.py", (), ("--short",)),
    ("closed_loop_scenario.py", (), ("--scenario", "short")),
)


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="BENCH", choices=sorted({Path(r[0]).stem for r in RUNS}),
                        help="run only these benches (file names without .py)")
    parser.add_argument("--short", action="store_true",
                        help="short settings, a check only (implies --no-record)")
    add_record_flag(parser)
    args = parser.parse_args()
    runs = [run for run in RUNS if not args.only or Path(run[0]).stem in args.only]
    print(f"{len(runs)} bench runs on {os.cpu_count()} cores; load average now {load()} (1, 5, 15 min)")
    if os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        print("the machine is busy: timings taken now compare only within their run")
    failed = []
    for script, options, short in runs:
        command = [sys.executable, str(BENCH / script), *options, *(short if args.short else ())]
        if args.short or args.no_record:
            command.append("--no-record")
        print(f"\n=== {' '.join([script, *command[2:]])} (load average {load()})", flush=True)
        start = time.monotonic()
        code = subprocess.run(command, check=False).returncode
        print(f"=== {script}: exit status {code} after {time.monotonic() - start:.0f} s", flush=True)
        if code:
            failed.append(" ".join([script, *command[2:]]))
    print(f"\n{len(runs) - len(failed)} of {len(runs)} runs succeeded; load average now {load()}")
    for run in failed:
        print(f"  failed: {run}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
