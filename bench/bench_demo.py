"""Wall time of the demo's full scenario (browser view and recorder on) on the node and in-process graphs.

Runs ``kinodyn demo quadruped`` (config/quadruped_wbc.yaml: control_node, state_estimator, wbc,
state_publisher over DDS) and ``kinodyn demo quadruped_rt`` (config/quadruped_rt.yaml: the estimator and the
whole-body controller chained inside control_node), both in lockstep on kinodyn.sim, without ``--headless``:
the viewer node runs and serves the browser view (no browser is connected), the recorder writes the bag, and
the report is made at the end, as a user's ``bash scripts/demo.sh`` does (docs/demo.md). The runs directory is
a temporary one. Figures per graph, from the demo's output with this process's clock on each line:

- **scenario**: wall seconds from the line announcing the first step to the line announcing the last one,
  the simulated seconds between the two (their ``t = ``), the real-time factor, and the wall time of the
  whole scenario (31 s simulated; ``--short``: the short scenario) at that factor; goal: 45 s or less;
- **whole run**: the demo's own ``whole run:`` line (start-up, scenario, stopping, report);
- the load average at the end of each run.

Run on an idle machine: ``source scripts/env.sh && python bench/bench_demo.py`` (``--only quadruped_rt``,
``--short`` for a smoke run). Printed, and written to bench/RESULTS.md (section ``bench_demo``) after a full
run of both graphs; ``--no-record`` never writes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kinodyn_tools.demo.catalog import DEMOS as CATALOG

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from results import add_record_flag, record  # noqa: E402

DEMOS = ("quadruped", "quadruped_rt")
GOAL = 45.0  # wall seconds for the full scenario
STEP = re.compile(r"\[scenario\] t =\s*([0-9.]+) s: (.*)$")
TIMEOUT = 3600.0  # wall seconds per demo run


def scenario_seconds(demo: str, short: bool) -> float:
    """Simulated seconds of the demo's scenario (the sum of its steps)."""
    entry = CATALOG[demo]
    return sum(step.duration for step in (entry.short_scenario if short else entry.scenario))


def run(demo: str, short: bool, runs: Path) -> dict[str, object]:
    """One demo run; its step lines (wall s, simulated s, name), whole-run line and exit code."""
    kinodyn = shutil.which("kinodyn")
    if kinodyn is None:
        raise SystemExit("the kinodyn command is not on PATH: source scripts/env.sh")
    command = [kinodyn, "demo", demo, "--runs-dir", str(runs), *(["--short"] if short else [])]
    steps: list[tuple[float, float, str]] = []
    whole = ""
    started = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(f"  {line}")
            match = STEP.search(line)
            if match:
                steps.append((time.monotonic(), float(match.group(1)), match.group(2).strip()))
            elif line.startswith("whole run:"):
                whole = line.strip()
            if time.monotonic() - started > TIMEOUT:
                process.terminate()
        code = process.wait()
    return {"steps": steps, "whole": whole, "code": code, "load": os.getloadavg()}


def row(demo: str, result: dict, total: float) -> str:
    steps = result["steps"]
    load = ", ".join(f"{x:.2f}" for x in result["load"])
    if result["code"] != 0 or len(steps) < 2:
        return f"| {demo} | failed: exit code {result['code']}, {len(steps)} step lines | | | {load} |"
    wall, simulated = steps[-1][0] - steps[0][0], steps[-1][1] - steps[0][1]
    factor = simulated / wall
    projected = total / factor
    verdict = "met" if projected <= GOAL else "missed"
    span = f"{wall:.1f} s wall for {simulated:.2f} s simulated ({steps[0][2]} to {steps[-1][2]})"
    return (f"| {demo} | {span}: {factor:.2f}x real time | {projected:.1f} ({verdict}: <= {GOAL:g}) | "
            f"{result['whole']} | {load} |")


HEADER = ("| graph | scenario, first step to last step | whole scenario [s wall] (goal) | whole run | "
          "load average |\n|---|---|---|---|---|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=DEMOS, help="the demos to run (default: both)")
    parser.add_argument("--short", action="store_true", help="the short scenario (smoke run; not recorded)")
    add_record_flag(parser)
    args = parser.parse_args()
    demos = args.only or list(DEMOS)
    totals = {scenario_seconds(demo, args.short) for demo in demos}
    if len(totals) != 1:
        raise SystemExit(f"the demos' scenarios differ in length ({sorted(totals)}): compare them one by one")
    total = totals.pop()
    print(f"the demo's {'short' if args.short else 'full'} scenario ({total:g} s simulated), view and "
          f"recorder on; load average now {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_demo_") as runs:
        for demo in demos:
            rows.append(row(demo, run(demo, args.short, Path(runs)), total))
    print(HEADER)
    print("\n".join(rows))
    if set(demos) == set(DEMOS) and not args.short and not args.no_record:
        record("bench_demo", f"{__doc__.splitlines()[0]} {total:g} s of simulated scenario; definitions in "
               f"bench/bench_demo.py.\n\n{HEADER}\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
