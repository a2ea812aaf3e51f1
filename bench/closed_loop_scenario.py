"""The full acceptance scenario of the closed loop over DDS on every physics backend, side by side.

config/quadruped_wbc.yaml (control_node + SimulatedSystem in lockstep, state_estimator closing the loop, wbc,
state_publisher) on kinodyn.sim, then on MuJoCo; kinodyn_tools.scenario.acceptance.full: stand up, 60 N
lateral
push standing, trot in place, 0.5 m/s forward, 0.2 m/s sideways, 0.6 rad/s yaw (6 s each, judged after 1 s),
60 s of seeded random cmd_vel changes, 120 N lateral push trotting, stand again (88 s of simulated time per
backend; in lockstep the wall time depends on the machine's load, the figures do not).

Prints each backend's step table (kinodyn_tools.scenario.metrics.ScenarioResult.summary_table), then the
figures
side by side and whether the acceptance bounds hold (velocity RMSE <= 0.1 m/s and 0.1 rad/s, no fall). The
side-by-side table of the full scenario on every backend goes to the ``closed_loop_scenario`` section of
bench/RESULTS.md (bench/results.py); other runs print only.
Run: `source scripts/env.sh && python bench/closed_loop_scenario.py [--backend kinodyn|mujoco|all]
[--scenario full|short|FILE.yaml] [--log-dir DIR] [--no-record]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from kinodyn_tools.scenario.cli import run_on, scenario_steps
from results import add_record_flag, markdown_header, markdown_row, record

from kinodyn import sim

if TYPE_CHECKING:
    from kinodyn_tools.scenario.metrics import ScenarioResult

REPO = Path(__file__).resolve().parents[1]


def rows(result: ScenarioResult) -> dict[str, str]:
    out = {}
    for s in result.steps:
        if s.tracked:
            out[f"{s.name} RMSE"] = f"{s.linear_rmse:.3f} m/s, {s.yaw_rmse:.3f} rad/s"
    random = [s for s in result.steps if s.name.startswith("random")]
    if random:
        out["random: min base height"] = f"{min(s.min_height for s in random):.3f} m"
    out["falls"] = "; ".join(result.falls) or "none"
    d = result.drift
    out["estimator drift"] = "-" if d is None else f"{100 * d.drift:.2f} % of {d.path_length:.1f} m"
    out["estimate position RMSE"] = "-" if d is None else f"{d.position_rmse:.3f} m"
    for label, t in (("wbc tick", result.tick_latency), ("QP solve", result.solve_time)):
        out[f"{label} median / p99"] = f"{t.median_ms:.2f} / {t.p99_ms:.2f} ms"
    out["QP failures"] = str(result.qp_failures)
    out["wall / simulated"] = f"{result.wall_time:.0f} s / {result.sim_time:.0f} s"
    out["acceptance"] = "passed" if not result.failures() else "FAILED"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=(*sim.backend_names(), "all"), default="all")
    parser.add_argument("--scenario", default="full")
    parser.add_argument("--log-dir", type=Path, default=None)
    add_record_flag(parser)
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(101 + os.getpid() % 100))  # apart from the tests' 1..100
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="kinodyn-closed-loop-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    steps = scenario_steps(args.scenario)
    results = {}
    for backend in sim.backend_names() if args.backend == "all" else (args.backend,):
        results[backend] = run_on(backend, steps, str(REPO / "config" / "quadruped_wbc.yaml"), log_dir)
        print(results[backend].summary_table(), flush=True)
        for failure in results[backend].failures():
            print(f"  acceptance: {failure}")
    tables = {b: rows(r) for b, r in results.items()}
    names = list(dict.fromkeys(k for t in tables.values() for k in t))
    body = "\n".join([
        f"config/quadruped_wbc.yaml, scenario {args.scenario}; acceptance: velocity RMSE <= 0.1 m/s and "
        "0.1 rad/s, no fall.", "", markdown_header("", *tables),
        *(markdown_row(name, *(t.get(name, "-") for t in tables.values())) for name in names)])
    print("\n" + body + f"\ngraph logs in {log_dir}")
    if args.scenario == "full" and set(tables) == set(sim.backend_names()):
        record("closed_loop_scenario", body, no_record=args.no_record)
    else:
        print("not recorded: bench/RESULTS.md holds the full scenario on every backend")
    return 0 if all(not r.failures() for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
