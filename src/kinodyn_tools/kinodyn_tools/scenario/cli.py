"""``python -m kinodyn_tools.scenario``: start the closed-loop graph on a backend, run a scenario, print the
figures (docs/closed-loop.md). ``run_on`` is what the bench and the demo call."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from kinodyn import sim
from kinodyn_tools.scenario import acceptance
from kinodyn_tools.scenario.graph import backend_graph, start_graph, stop_graph
from kinodyn_tools.scenario.runner import run_scenario
from kinodyn_tools.scenario.steps import Step, load_steps

if TYPE_CHECKING:
    import subprocess

    from kinodyn_tools.scenario.metrics import ScenarioResult

BUILT_IN = {"full": acceptance.full, "short": acceptance.short}


def scenario_steps(name: str) -> list[Step]:
    """A built-in scenario (``full``, ``short``) or a YAML file of steps."""
    return BUILT_IN[name]() if name in BUILT_IN else load_steps(name)


def run_on(backend: str, steps: list[Step], graph: str, log_dir: Path) -> ScenarioResult:
    """Start ``graph`` on ``backend`` (its output in ``log_dir``), run ``steps``, stop the graph."""
    path = backend_graph(backend, log_dir, graph)
    holder: list[subprocess.Popen[bytes]] = []
    log = log_dir / f"graph_{backend}.log"
    try:
        return run_scenario(steps, backend, start=lambda: holder.append(start_graph(path, log)),
                            progress=lambda line: print(f"[{backend}] {line}", flush=True))
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}; the graph's output is in {log}") from None
    finally:
        if holder:
            stop_graph(holder[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kinodyn_tools.scenario", description=__doc__)
    parser.add_argument("--backend", choices=(*sim.backend_names(), "all"), default=sim.DEFAULT_BACKEND,
                        help="a registered physics backend, or all of them in turn")
    parser.add_argument("--scenario", default="full", help="full, short, or a YAML file of steps")
    parser.add_argument("--graph", default="quadruped_wbc", help="graph file or installed graph name")
    parser.add_argument("--log-dir", type=Path, default=None, help="where the graph logs go (a temp dir)")
    args = parser.parse_args(argv)
    steps = scenario_steps(args.scenario)
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="kinodyn-scenario-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    backends = sim.backend_names() if args.backend == "all" else (args.backend,)
    failed = False
    for backend in backends:
        result = run_on(backend, steps, args.graph, log_dir)
        print(result.summary_table())
        failures = result.failures()
        print("acceptance: " + ("passed" if not failures else "FAILED: " + "; ".join(failures)), flush=True)
        failed |= bool(failures)
    return 1 if failed else 0
