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
- the load average at the end of each run;
- **CPU per control step** of each process of the demo (its graphs' nodes by node name, the recorder, the
  demo's own process, which runs the scenario runner): utime + stime from /proc/<pid>/stat between the first
  and the last step line, over the control steps (``update_rate`` of the graph's controller_manager) of the
  simulated time between them. The viewer draws at its rate of wall time, so its share depends on the
  real-time factor.

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
from typing import Any

import yaml
from kinodyn_tools.demo.catalog import DEMOS as CATALOG

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from results import add_record_flag, record  # noqa: E402

DEMOS = ("quadruped", "quadruped_rt")
GOAL = 45.0  # wall seconds for the full scenario
STEP = re.compile(r"\[scenario\] t =\s*([0-9.]+) s: (.*)$")
TIMEOUT = 3600.0  # wall seconds per demo run
TICKS = os.sysconf("SC_CLK_TCK")


def control_rate(demo: str) -> float:
    """The ``update_rate`` [Hz] of the controller_manager of the demo's graph."""
    graph = yaml.safe_load((ROOT / "config" / f"{CATALOG[demo].graph}.yaml").read_text())
    manager = next(n for n in graph["nodes"] if n["name"] == "controller_manager")
    return float(manager["parameters"]["update_rate"])


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()  # from field 3 of proc(5) on


def process_name(pid: int, root: int) -> str:
    """A demo process's name: its node's (``-r __node:=<name>``), the recorder, the demo itself, or its
    command."""
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        args = [a for a in f.read().decode(errors="replace").split("\0") if a]
    node = next((a.split(":=", 1)[1] for a in args if a.startswith("__node:=")), None)
    if node is not None:
        return node
    if "bag" in args and "record" in args:
        return "recorder (kinodyn bag record)"
    if pid == root:
        return "kinodyn demo (scenario runner)"
    return " ".join(Path(a).name for a in args[:3])


def cpu_by_process(root: int) -> dict[tuple[int, str], float]:
    """CPU seconds (utime + stime) of ``root`` and every process below it, by (pid, name)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                children.setdefault(int(_stat(int(entry))[1]), []).append(int(entry))
            except OSError:
                continue
    cpu, todo = {}, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            fields = _stat(pid)
            cpu[(pid, process_name(pid, root))] = (int(fields[11]) + int(fields[12])) / TICKS
        except OSError:
            continue
    return cpu


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
    cpu: list[dict[tuple[int, str], float]] = []  # at the first and the newest step line
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
                snapshot = cpu_by_process(process.pid)
                cpu[:] = [cpu[0], snapshot] if cpu else [snapshot]
            elif line.startswith("whole run:"):
                whole = line.strip()
            if time.monotonic() - started > TIMEOUT:
                process.terminate()
        code = process.wait()
    return {"steps": steps, "cpu": cpu, "whole": whole, "code": code, "load": os.getloadavg()}


def cpu_table(demo: str, result: dict[str, Any]) -> str:
    """CPU ms per control step of each process between the first and the last step line."""
    steps, cpu = result["steps"], result["cpu"]
    if len(cpu) < 2:
        return ""
    control_steps = (steps[-1][1] - steps[0][1]) * control_rate(demo)
    per_name: dict[str, float] = {}
    for key, seconds in cpu[1].items():
        per_name[key[1]] = per_name.get(key[1], 0.0) + seconds - cpu[0].get(key, 0.0)
    rows = [f"| {name} | {1e3 * seconds / control_steps:.2f} |"
            for name, seconds in sorted(per_name.items(), key=lambda item: -item[1]) if seconds > 0.0]
    rows.append(f"| all | {1e3 * sum(per_name.values()) / control_steps:.2f} |")
    return (f"{demo}: CPU per control step, first to last step line\n\n"
            "| process | CPU ms per control step |\n|---|---|\n" + "\n".join(rows))


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
    rows, tables = [], []
    with tempfile.TemporaryDirectory(prefix="bench_demo_") as runs:
        for demo in demos:
            result = run(demo, args.short, Path(runs))
            rows.append(row(demo, result, total))
            tables.append(cpu_table(demo, result))
    cpu = "\n\n".join(table for table in tables if table)
    print(HEADER)
    print("\n".join(rows))
    print(f"\n{cpu}")
    if set(demos) == set(DEMOS) and not args.short and not args.no_record:
        record("bench_demo", f"{__doc__.splitlines()[0]} {total:g} s of simulated scenario; definitions in "
               f"bench/bench_demo.py.\n\n{HEADER}\n" + "\n".join(rows) + f"\n\n{cpu}")


if __name__ == "__main__":
    main()
