"""`kinodyn demo`: the README's main command (docs/demo.md).

For a closed-loop demo (`quadruped`): start its graph's nodes (the launcher's `RunningGraph`, as `kinodyn up`
starts them), the browser view's unless `--headless` (its URL printed first), a bag recorder (`kinodyn bag
record`) on simulated time into `runs/<timestamp>/bag`, then run the
scenario (`kinodyn_tools.scenario`, one progress line per step with its simulated time), stop everything,
write `runs/<timestamp>/report.html` (`kinodyn report`'s module) and print the summary table (also in
`runs/<timestamp>/summary.txt`). Any other name is a graph of config/ run by the launcher's `up`, as `kinodyn
up` runs it. Ctrl-C or SIGTERM stops the scenario and every process; a process of the graph that ends early
ends the demo (exit 1).
"""

from __future__ import annotations

import re
import shutil
import signal
import sys
import threading
import time
from datetime import datetime
from typing import IO, TYPE_CHECKING

from kinodyn_tools.demo.catalog import DEMOS, Demo
from kinodyn_tools.demo.children import Child, stop_children
from kinodyn_tools.launcher.graph import Graph, graph_path, load_graph
from kinodyn_tools.launcher.packages import package_share
from kinodyn_tools.launcher.supervisor import DEFAULT_STOP_TIMEOUT, RunningGraph, up
from kinodyn_tools.report.build import load_model, make_report
from kinodyn_tools.scenario.runner import ScenarioRunner
from kinodyn_tools.scenario.steps import Step, load_steps

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from kinodyn_tools.scenario.metrics import ScenarioResult

PREFIX = "demo"
URL_PATTERN = re.compile(r"open (http://\S+) in a browser")
VIEWER_WAIT = 60.0  # s of wall time the demo waits for the viewer's URL before it starts the scenario
STOP_TIMEOUT = 20.0  # s per stage to stop the recorder (it closes its bag on SIGINT)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Console:
    """Whole lines from several threads: the demo's own (`[demo] ...`), the graphs' nodes and launcher
    (`[<node>] ...`, `[kinodyn] ...`: a launcher ``Printer``) and the recorder's (`[bag] ...`); remembers the
    viewer's URL when its line passes."""

    def __init__(self, stream: IO[str] = sys.stdout) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.url: str | None = None
        self.url_seen = threading.Event()

    def write(self, line: str) -> None:
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def say(self, text: str) -> None:
        self.write(f"[{PREFIX}] {text}")

    def line(self, prefix: str, text: str) -> None:
        """A line of a graph's node (`prefix` its name) or of the launcher."""
        match = URL_PATTERN.search(text)
        if match and self.url is None:
            self.url = match.group(1)
            self.url_seen.set()
        self.write(f"[{prefix}] {text}")

    def prefixed(self, prefix: str) -> Callable[[str], None]:
        return lambda line: self.write(f"[{prefix}] {line}")


def kinodyn_command() -> list[str]:
    """The `kinodyn` command on the PATH (`kinodyn bag record`, the recorder)."""
    found = shutil.which("kinodyn")
    if found is None:
        raise RuntimeError("the kinodyn command is not on PATH: source scripts/env.sh")
    return [found]


def run_directory(root: Path) -> Path:
    """A new `root/<YYYYmmdd-HHMMSS>` (a suffix when that second is taken)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    for suffix in [""] + [f"-{k}" for k in range(1, 100)]:
        path = root / f"{stamp}{suffix}"
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            continue
    raise RuntimeError(f"cannot create a run directory in {root}: 100 runs this second")


def chosen_steps(demo: Demo, args: argparse.Namespace) -> list[Step]:
    if args.scenario is not None:
        return load_steps(args.scenario)
    return list(demo.short_scenario if args.short else demo.scenario)


def record_command(demo: Demo, bag: Path) -> list[str]:
    """`kinodyn bag record` of the demo's topics on simulated time (docs/bags.md)."""
    return [*kinodyn_command(), "bag", "record", "--use-sim-time", "--progress-period", "10", "-o", str(bag),
            *demo.topics]


def wait_for_url(console: Console, graphs: Sequence[RunningGraph], stop: threading.Event) -> None:
    """Print the viewer's URL once it logged it (at most VIEWER_WAIT s; a stop or a node's end cuts it)."""
    deadline = time.monotonic() + VIEWER_WAIT
    while not console.url_seen.wait(0.1):
        if stop.is_set() or any(graph.ended() is not None for graph in graphs):
            return
        if time.monotonic() > deadline:
            console.say(f"the viewer logged no URL in {VIEWER_WAIT:g} s; going on without the browser view")
            return
    console.say(f"browser view: {console.url}  (open it in a browser)")


class ScenarioThread(threading.Thread):
    """The scenario runner's steps in a thread, so the main thread can watch the signals and the children.
    Remembers the wall time (monotonic) and simulated time at which the first step began."""

    def __init__(self, runner: ScenarioRunner, steps: list[Step], console: Console) -> None:
        super().__init__(name="scenario", daemon=True)
        self._runner, self._steps, self._console = runner, steps, console
        self.result: ScenarioResult | None = None
        self.error = ""
        self.first_step: tuple[float, float] | None = None  # (monotonic wall s, simulated s)

    def _progress(self, line: str) -> None:
        if self.first_step is None:
            self.first_step = (time.monotonic(), self._runner.now())
        self._console.prefixed("scenario")(line)

    def run(self) -> None:
        try:
            self.result = self._runner.run(self._steps, backend="kinodyn", progress=self._progress)
        except Exception as exc:  # noqa: BLE001  (the scenario thread's last line: the demo reports it)
            self.error = f"{type(exc).__name__}: {exc}"


def whole_run_line(started: float, scenario: ScenarioThread, simulated: float) -> str:
    """The whole run, start-up included: wall time from the demo's start until now (every process stopped,
    report written) and simulated time until the scenario ended, each split at the first step."""
    wall = time.monotonic() - started
    if scenario.first_step is None:
        return f"whole run: {simulated:.2f} s simulated in {wall:.1f} s wall; no step of the scenario began"
    wall_first, sim_first = scenario.first_step
    return (f"whole run: {simulated:.2f} s simulated ({sim_first:.2f} s before the first step) in "
            f"{wall:.1f} s wall ({wall_first - started:.1f} s before the first step, start-up included)")


def ended(graphs: Sequence[RunningGraph], children: Sequence[Child]) -> str | None:
    """What ended of the graphs' nodes, their guards and the children, or None while all run."""
    for graph in graphs:
        reason = graph.ended()
        if reason is not None:
            return reason
    for child in children:
        if child.exit_code() is not None:
            return f"'{child.name}' ended with code {child.exit_code()}"
    return None


def watch(scenario: ScenarioThread, graphs: Sequence[RunningGraph], children: Sequence[Child],
          stop: threading.Event) -> str:
    """Wait for the scenario; return why it was cut short ("" when it ran through): a stop request, a node or
    child that ended, or the runner's error."""
    while scenario.is_alive():
        if stop.is_set():
            return "stopped by a signal"
        reason = ended(graphs, children)
        if reason is not None:
            return f"{reason} during the scenario"
        scenario.join(0.1)
    return scenario.error


def write_report(demo: Demo, bag: Path, run_dir: Path, console: Console) -> list[str]:
    """report.html of the run's bag (kinodyn report's module); its summary lines."""
    if not (bag / "metadata.yaml").is_file():
        console.say(f"no bag was written ({bag}): no report")
        return []
    console.say(f"writing the report of {bag}")
    urdf = package_share("kinodyn_bringup") / "urdf" / demo.urdf
    report = make_report(bag, run_dir / "report.html", model=load_model(urdf), progress=True)
    return report.summary


def run_closed_loop(demo: Demo, args: argparse.Namespace, console: Console, stop: threading.Event) -> int:
    """The closed-loop demo: graph, viewer, recorder, scenario, then report and summary. The exit code."""
    started = time.monotonic()
    steps = chosen_steps(demo, args)
    run_dir = run_directory(args.runs_dir)
    bag = run_dir / "bag"
    console.say(f"{demo.name}: {demo.description}")
    console.say(f"scenario: {len(steps)} steps, {sum(s.duration for s in steps):.1f} s of simulated time; "
                f"run directory {run_dir}")
    files: list[Graph] = [load_graph(graph_path(demo.graph))]  # GraphError before anything starts
    files += [] if args.headless else [load_graph(graph_path(demo.viewer_graph))]
    runner = ScenarioRunner()  # subscribed before the graph starts, as it asks
    graphs: list[RunningGraph] = []
    recorder: list[Child] = []
    scenario = ScenarioThread(runner, steps, console)
    cut = ""
    try:
        for graph in files:
            graphs.append(RunningGraph(console, DEFAULT_STOP_TIMEOUT))
            if not graphs[-1].start(graph):
                cut = f"a node of {graph.path} could not start"
                break
        if not cut:
            if not args.headless:
                wait_for_url(console, graphs, stop)
            recorder.append(Child("bag", record_command(demo, bag), console.prefixed("bag")))
            scenario.start()
            cut = watch(scenario, graphs, recorder, stop)
    finally:
        stop_children(recorder, STOP_TIMEOUT, console.say)
        codes = {name: code for graph in graphs for name, code in graph.stop().items()}
        simulated = runner.now()  # the newest ground truth: simulated time from the start, start-up included
        if not scenario.is_alive():
            runner.close()
    if cut:
        console.say(f"the scenario did not finish: {cut}")
    report_lines = write_report(demo, bag, run_dir, console)
    lines = [whole_run_line(started, scenario, simulated)]
    lines += [scenario.result.summary_table()] if scenario.result is not None and not cut else []
    lines += [*report_lines, f"bag: {bag}", f"report: {run_dir / 'report.html'}"]
    if console.url:
        lines.append(f"browser view (closed now): {console.url}")
    (run_dir / "summary.txt").write_text("\n".join(lines) + "\n")
    console.write("\n".join(["", f"=== {demo.name} demo summary ({run_dir / 'summary.txt'}) ===", *lines]))
    stopped = ", ".join(f"{name} (code {code})" for name, code in codes.items())
    console.say(f"every process stopped: {stopped}")
    if stop.is_set():
        return 130
    return 1 if cut else 0


def run_demo(args: argparse.Namespace) -> int:
    """`kinodyn demo`: a closed-loop demo, or any other graph run by the launcher's `up`. The exit code."""
    demo = DEMOS.get(args.demo)
    if demo is None:
        return up(args.demo, timeout=args.seconds)
    console = Console()
    stop = threading.Event()
    previous = {signum: signal.signal(signum, lambda _s, _f: stop.set()) for signum in STOP_SIGNALS}
    try:
        return run_closed_loop(demo, args, console, stop)
    except (ValueError, RuntimeError) as exc:  # a scenario or graph file, the robot, the PATH: one line
        console.say(f"error: {exc}")
        return 2
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
