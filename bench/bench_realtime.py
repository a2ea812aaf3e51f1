"""Wall-clock real time of the quadruped's closed loop: does the loop hold its rate, how late is a command?

Each configuration runs a graph of config/ on the wall clock (``lockstep: false``, every node on the system
clock: ``use_sim_time: false``) for ``--seconds`` once it is warm:

- ``rt``: config/quadruped_rt.yaml, the estimator and the whole-body controller chained inside control_node;
- ``nodes``: config/quadruped_wbc.yaml, control_node, state_estimator, wbc and state_publisher over DDS;

on the simulator (``sim``: SimulatedSystem, urdf/quadruped_sim.urdf with its physics step ``dt`` set to the
control period, so each cycle advances one step) or on mock hardware (``mock``: GenericSystem,
urdf/quadruped.urdf, as config/quadruped_mock.yaml), at 500 Hz or 1 kHz, time-shared or with the control
loop's thread (control_node's ``realtime_priority``) and, in the node graph, the wbc's executor thread under
``SCHED_FIFO`` (``fifo``). Names: ``<graph>-<hardware>-<rate>[-fifo]``, e.g. ``rt-sim-1000-fifo``;
``--only`` takes names or shell patterns (``'rt-*'``). The default set is every ``rt`` configuration and
``nodes-sim-500`` with and without FIFO.

The reference, measured first in the same run for every rate and scheduling the chosen configurations use:
the **bare loop** (``bare-<rate>[-fifo]``), the same ``ControlLoop`` with an empty cycle in a process of its
own, no ROS and nothing else of the bench running: what the machine itself allows a sleeping thread. A
time-shared thread waits for its core behind any thread that is running there when it wakes, and some of
those are not the stack's (a kernel thread or a higher-priority system service holding a core for a few
milliseconds): such waits set a floor under every time-shared row, which the ``bare`` row measures and each
row shows beside its own figure.

control_node runs in a child process of this file (``--host``): control_node's own code through
``run_node``, with its loop recording the measured periods and the hardware ``write`` of every cycle logging
when it returned (a wrapper around one method, nothing in control_node's code); the other nodes run under
``kinodyn up``. The window opens ``WARMUP`` seconds after control_node's loop runs (and, in the node graph,
commands flow), once ``STEADY`` seconds pass without a cycle of ``STALL`` seconds or more (a kernel compiled
on first use). Measured over the window, per configuration:

- **period error**: |measured period - 1 / update_rate| of each cycle (median, p99, max);
- **overruns per 10 000 cycles**: cycles whose measured period exceeds the nominal period by more than 50 %
  (a 500 Hz cycle that starts more than 3 ms after the previous one); goals: under 100 per 10 000 (1 %) at
  1 kHz, under 10 per 10 000 (0.1 %) at 500 Hz, "met" only if the loop also held 99 % of its cycles;
- **held**: cycles run / (update_rate x window seconds): under 100 % the loop restarted its schedule
  (control_node.md: a cycle more than one period late is not made up);
- **latency, joint state read to command written**: ``rt``: from the cycle's time (taken just before the
  hardware ``read``) to the return of that cycle's ``write``, which carries the command computed from that
  read; ``nodes``: from the joint states' stamp (the same cycle time) to the ``JointPDCommand`` answering them
  accepted by JointPDController ("accepted"), and to the return of the first ``write`` after that
  ("written"), which applies it; commands per cycle says how many states got an answer;
- **CPU per cycle** of each process (user + system time from ``/proc`` over the window / cycles run;
  ``kinodyn`` and ``kinodyn_tools.launcher.guard`` are the launcher's), and the load average at the end of the
  window.

Run on an idle machine: ``source scripts/env.sh && python bench/bench_realtime.py`` (about 40 s per
configuration with start-up). Printed, and written to bench/RESULTS.md (section ``bench_realtime``) when every
default configuration ran; ``--no-record`` never writes. The graph files and each process's log stay in the
directory printed at the start.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import yaml
from kinodyn_common.node_runner import run_node
from kinodyn_common.realtime import set_fifo_priority
from kinodyn_control.loop import ControlLoop
from kinodyn_tools.launcher.graph import load_graph
from kinodyn_tools.launcher.node_process import ros_parameter_file
from kinodyn_tools.scenario.graph import start_graph, stop_graph

from kinodyn_control import control_node

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from results import add_record_flag, record  # noqa: E402

R = TypeVar("R")  # what the wrapped write returns

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn_control.controllers.base import Controller

GRAPHS = {"rt": ROOT / "config" / "quadruped_rt.yaml", "nodes": ROOT / "config" / "quadruped_wbc.yaml"}
URDFS = {"sim": ROOT / "urdf" / "quadruped_sim.urdf", "mock": ROOT / "urdf" / "quadruped.urdf"}
RATES = (500, 1000)
DEFAULT = ("rt-*", "nodes-sim-500", "nodes-sim-500-fifo")
BARE = "bare"  # the reference: ControlLoop with an empty cycle (module doc)
OVERRUN = 1.5  # a cycle overruns when its measured period exceeds this many nominal periods
GOALS = {1000: 100.0, 500: 10.0}  # overruns per 10 000 cycles
READY_TIMEOUT = 180.0  # wall seconds for control_node to start and, in the node graph, commands to flow
WARMUP = 5.0  # wall seconds once ready before the window opens (estimator initialisation)
STALL = 0.25  # s: a cycle this long is a start-up stall (a kernel compiled on first use), not the loop's rate
STEADY = 2.0  # wall seconds without such a stall before the window opens
CONTROL_NODE = "controller_manager"


@dataclass(frozen=True)
class Configuration:
    graph: str
    hardware: str
    rate: int
    fifo: bool

    @property
    def name(self) -> str:
        parts = [self.graph, self.hardware] if self.graph != BARE else [BARE]
        return "-".join([*parts, str(self.rate)]) + ("-fifo" if self.fifo else "")

    @property
    def reference(self) -> Configuration:
        """The bare loop at this configuration's rate and scheduling."""
        return Configuration(BARE, "", self.rate, self.fifo)


ALL = [*(Configuration(g, h, r, f) for g in GRAPHS for h in URDFS for r in RATES for f in (False, True)),
       *(Configuration(BARE, "", r, f) for r in RATES for f in (False, True))]


def chosen(patterns: list[str]) -> list[Configuration]:
    """The configurations matching any of ``patterns`` (names or shell patterns), in the order of ALL."""
    unknown = [p for p in patterns if not any(fnmatch.fnmatchcase(c.name, p) for c in ALL)]
    if unknown:
        raise SystemExit(f"--only {', '.join(unknown)} matches no configuration; names: "
                         f"{', '.join(c.name for c in ALL)}")
    return [c for c in ALL if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]


# --- the graph files of one configuration ----------------------------------------------------------------


def hardware_urdf(config: Configuration, directory: Path) -> Path:
    """The control_node URDF: the simulator's with ``dt`` = the control period (one step per cycle)."""
    if config.hardware == "mock":
        return URDFS["mock"]
    text = URDFS["sim"].read_text()
    line = '<param name="dt">0.002</param>'
    if text.count(line) != 1:
        raise SystemExit(f"{URDFS['sim']}: expected one {line}")
    derived = directory / f"quadruped_sim_{config.rate}hz.urdf"
    derived.write_text(text.replace(line, f'<param name="dt">{1.0 / config.rate}</param>'))
    return derived


def graph_files(config: Configuration, directory: Path, priority: int) -> tuple[Path, Path]:
    """(the whole graph of ``config``, the same without control_node) written to ``directory``."""
    raw = yaml.safe_load(GRAPHS[config.graph].read_text())
    urdf = str(hardware_urdf(config, directory))
    for node in raw["nodes"]:
        params = node.setdefault("parameters", {})
        params["robot_description_file"] = urdf
        if node["name"] == CONTROL_NODE:
            params.update(lockstep=False, update_rate=config.rate, realtime_priority=priority * config.fifo)
        else:
            params["use_sim_time"] = False
            if node["executable"] == "wbc":
                params["realtime_priority"] = priority * config.fifo
    whole = directory / f"{config.name}.yaml"
    whole.write_text(yaml.safe_dump(raw, sort_keys=False))
    raw["nodes"] = [node for node in raw["nodes"] if node["name"] != CONTROL_NODE]
    others = directory / f"{config.name}_others.yaml"
    others.write_text(yaml.safe_dump(raw, sort_keys=False))
    return whole, others


# --- the control_node process (--host) -------------------------------------------------------------------


def process_name(pid: int) -> str:
    """The program a process runs: its command name, or for a Python interpreter its script (or module)."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    name = Path(argv[0]).name
    if name.startswith("python"):
        rest = [a for a in argv[1:] if a and not a.startswith("-")]
        return Path(rest[0]).name if rest else name
    return name


def cpu_seconds(pids: list[int]) -> dict[int, tuple[str, float]]:
    """``pid: (name, user + system CPU seconds)`` of each process still there."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            name = process_name(pid)
        except (OSError, IndexError):
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[pid] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (``kinodyn up`` and its nodes)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


class WriteLog:
    """When each cycle's hardware ``write`` returned (ns, system clock) and the cycle's time (s)."""
    def __init__(self, size: int) -> None:
        self.cycle_time = np.zeros(size)
        self.written_ns = np.zeros(size, dtype=np.int64)
        self.count = 0

    def wrap(self, write: Callable[[float, float], R]) -> Callable[[float, float], R]:
        def logged(cycle_time: float, period: float) -> R:
            result = write(cycle_time, period)
            if self.count < self.cycle_time.size:
                self.cycle_time[self.count] = cycle_time
                self.written_ns[self.count] = time.time_ns()
                self.count += 1
            return result
        return logged


class CommandLog:
    """Each command an external-command controller accepted: (answered stamp, acceptance time) in ns."""
    def __init__(self, controller: Controller) -> None:
        self._controller, self._forward = controller, controller.command_arrived
        controller.command_arrived = self._arrived
        self.stamps: list[int] = []
        self.accepted: list[int] = []

    def _arrived(self) -> None:
        self.accepted.append(time.time_ns())
        self.stamps.append(self._controller.command_stamp())
        self._forward()


def percentiles(values: np.ndarray, scale: float) -> list[float]:
    """median, p99, max of ``values`` x ``scale`` (NaN for none)."""
    if values.size == 0:
        return [float("nan")] * 3
    return [float(np.median(values) * scale), float(np.percentile(values, 99) * scale),
            float(values.max() * scale)]


def host(args: argparse.Namespace) -> int:
    """Run control_node in this process, measure the window, write the figures to ``args.out`` as JSON."""
    spec = json.loads(args.host)
    rate, seconds = spec["rate"], spec["seconds"]
    size = int(rate * (READY_TIMEOUT + WARMUP + seconds + 30.0))
    writes = WriteLog(size)
    nodes: list[control_node.ControlNode] = []

    class Instrumented(control_node.ControlNode):
        def __init__(self) -> None:
            super().__init__()
            assert self.manager is not None
            resources = self.manager.resources
            resources.write = writes.wrap(resources.write)  # type: ignore[method-assign]
            nodes.append(self)

    def measure() -> None:
        try:
            result = window(nodes, writes, rate, seconds, spec["launcher"])
        except BaseException as exc:  # noqa: BLE001  (the host process's last line: reported to the parent, which prints it)
            result = {"error": repr(exc)}
        Path(args.out).write_text(json.dumps(result))
        os.kill(os.getpid(), signal.SIGINT)  # run_node's stop request

    control_node.ControlLoop = functools.partial(ControlLoop, record=size)  # type: ignore[misc]
    threading.Thread(target=measure, daemon=True).start()
    return run_node(CONTROL_NODE, Instrumented, ["bench_realtime", *spec["ros_args"]])


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {timeout:g} s")
        time.sleep(0.1)


def period_figures(loop: ControlLoop, cycle0: int, cycle1: int, wall: float) -> dict[str, Any]:
    """The loop's scheduling, cycles, held share, period error and overruns over cycles ``cycle0..cycle1``
    run in ``wall`` seconds."""
    periods = loop.periods[cycle0 - 1:cycle1 - 1]  # [k]: from cycle k to k + 1
    nominal = 1.0 / loop.rate
    thread = loop._thread.native_id  # noqa: SLF001  (the loop thread whose scheduling this bench reads)
    return {
        "fifo": thread is not None and os.sched_getscheduler(thread) == os.SCHED_FIFO,
        "cycles": cycle1 - cycle0,
        "held": (cycle1 - cycle0) / (loop.rate * wall),
        "period_error_us": percentiles(np.abs(periods - nominal), 1e6),
        "overruns_per_10k": float(np.count_nonzero(periods > OVERRUN * nominal) / max(periods.size, 1) * 1e4),
    }


def bare(args: argparse.Namespace) -> int:
    """The reference (module doc): ``ControlLoop`` with an empty cycle for the request's seconds after
    ``STEADY`` seconds, its figures to ``args.out`` as JSON."""
    spec = json.loads(args.bare)
    rate, seconds, priority = spec["rate"], spec["seconds"], spec["priority"]
    def enter() -> None:  # a refusal shows in the row's name (``fifo`` of the figures)
        set_fifo_priority(priority)

    loop = ControlLoop(lambda _time, _period: None, rate, time.monotonic,
                       record=int(rate * (seconds + STEADY + 5)), on_start=enter)
    loop.start()
    time.sleep(STEADY)
    cycle0, wall0, cpu0 = loop.cycles, time.monotonic(), time.process_time()
    time.sleep(seconds)
    cycle1, wall, cpu = loop.cycles, time.monotonic() - wall0, time.process_time() - cpu0
    result = {**period_figures(loop, cycle0, cycle1, wall), "load": os.getloadavg(),
              "cpu_ms_per_cycle": {"bare loop": cpu / max(cycle1 - cycle0, 1) * 1e3}}
    loop.stop()
    Path(args.out).write_text(json.dumps(result))
    return 0


def window(nodes: list, writes: WriteLog, rate: int, seconds: float, launcher: int) -> dict[str, Any]:
    """Wait until control_node runs (and in the node graph commands flow), warm up, measure ``seconds``."""
    _wait(lambda: bool(nodes) and nodes[0].loop is not None and nodes[0].loop.cycles > 0, READY_TIMEOUT,
          "control_node did not start its loop")
    node = nodes[0]
    loop, manager = node.loop, node.manager
    external = [e.controller for e in manager.controllers.values() if e.controller.EXTERNAL_COMMANDS]
    commands = CommandLog(external[0]) if external else None
    if commands is not None:
        _wait(lambda: bool(commands.accepted), READY_TIMEOUT, "no command from the node graph")
    time.sleep(WARMUP)
    deadline = time.monotonic() + READY_TIMEOUT
    while True:  # until no start-up stall for STEADY seconds
        first = loop.cycles
        time.sleep(STEADY)
        recent = loop.periods[max(first - 1, 0):]
        if loop.cycles > first and recent.size and recent.max() < STALL:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"the loop still stalls ({STALL:g} s or more) {READY_TIMEOUT:g} s after start")
    pids = [os.getpid(), *descendants(launcher)]
    cpu0, cycle0, write0 = cpu_seconds(pids), loop.cycles, writes.count
    command0 = len(commands.accepted) if commands is not None else 0
    wall0 = time.monotonic()
    time.sleep(seconds)
    cpu1, cycle1, write1 = cpu_seconds(pids), loop.cycles, writes.count
    command1 = len(commands.accepted) if commands is not None else 0
    wall = time.monotonic() - wall0
    load = os.getloadavg()
    if loop.error is not None:
        raise RuntimeError(f"the control loop stopped: {loop.error!r}")
    if cycle1 - 1 > loop.periods.size or write1 >= writes.cycle_time.size:
        raise RuntimeError("the recording is too short for the window")
    cycles = cycle1 - cycle0
    written = writes.written_ns[write0:write1]
    result: dict[str, Any] = {
        **period_figures(loop, cycle0, cycle1, wall),
        "load": load,
        "cpu_ms_per_cycle": {
            ("control_node" if pid == os.getpid() else name): (cpu1[pid][1] - seconds0) / max(cycles, 1) * 1e3
            for pid, (name, seconds0) in cpu0.items() if pid in cpu1
        },
    }
    if commands is None:
        stamps = np.round(writes.cycle_time[write0:write1] * 1e9).astype(np.int64)
        result["latency_written_ms"] = percentiles((written - stamps) * 1e-9, 1e3)
    else:
        stamps = np.array(commands.stamps[command0:command1], dtype=np.int64)
        accepted = np.array(commands.accepted[command0:command1], dtype=np.int64)
        result["latency_accepted_ms"] = percentiles((accepted - stamps) * 1e-9, 1e3)
        after = np.searchsorted(written, accepted)  # the first write returning after the acceptance
        applied = after < written.size
        result["latency_written_ms"] = percentiles((written[after[applied]] - stamps[applied]) * 1e-9, 1e3)
        result["commands_per_cycle"] = (command1 - command0) / max(cycles, 1)
    return result


# --- the bench -------------------------------------------------------------------------------------------


def run_bare(config: Configuration, seconds: float, priority: int, directory: Path) -> dict[str, Any]:
    """The reference of ``config``'s rate and scheduling, in a child process (``--bare``)."""
    out = directory / f"{config.name}.json"
    request = {"rate": config.rate, "seconds": seconds, "priority": priority * config.fifo}
    subprocess.run([sys.executable, __file__, "--bare", json.dumps(request), "--out", str(out)],
                   timeout=seconds + 60.0, check=True)
    return json.loads(out.read_text())


def run(config: Configuration, seconds: float, priority: int, directory: Path) -> dict[str, Any]:
    """One configuration: start the other nodes and the control_node host, wait for its figures."""
    if config.graph == BARE:
        return run_bare(config, seconds, priority, directory)
    whole, others = graph_files(config, directory, priority)
    spec = next(n for n in load_graph(whole).nodes if n.name == CONTROL_NODE)
    params = directory / f"{config.name}_control_node.yaml"
    params.write_text(ros_parameter_file(spec.parameters))
    ros_args = ["--ros-args", "-r", f"__node:={CONTROL_NODE}", "--params-file", str(params)]
    for source, target in spec.remappings.items():
        ros_args += ["-r", f"{source}:={target}"]
    graph = start_graph(others, directory / f"{config.name}_graph.log")
    out = directory / f"{config.name}.json"
    try:
        request = {"rate": config.rate, "seconds": seconds, "launcher": graph.pid, "ros_args": ros_args}
        with (directory / f"{config.name}_control_node.log").open("w") as log:
            command = [sys.executable, __file__, "--host", json.dumps(request), "--out", str(out)]
            child = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT,
                                   timeout=READY_TIMEOUT * 2 + seconds, check=False)
    finally:
        stop_graph(graph)
    if not out.is_file():
        raise RuntimeError(f"control_node ended with code {child.returncode} without figures; see "
                           f"{directory / (config.name + '_control_node.log')}")
    result = json.loads(out.read_text())
    if "error" in result:
        raise RuntimeError(f"{result['error']}; see {directory}")
    return result


def triple(values: list[float], digits: int) -> str:
    return " / ".join(f"{v:.{digits}f}" for v in values)


def row(config: Configuration, r: dict[str, Any], floor: dict[str, Any] | None) -> str:
    """``config``'s table row; ``floor``: the figures of its reference (None for the reference itself)."""
    goal = GOALS[config.rate]
    if floor is None:
        verdict = "reference"
    else:
        verdict = "met" if r["overruns_per_10k"] < goal and r["held"] > 0.99 else "missed"
        verdict += f": < {goal:g}; bare loop {floor['overruns_per_10k']:.1f}"
    latency = "-" if floor is None else triple(r["latency_written_ms"], 2)
    if "latency_accepted_ms" in r:
        latency = (f"accepted {triple(r['latency_accepted_ms'], 2)}; written {latency}; "
                   f"{r['commands_per_cycle']:.2f} commands/cycle")
    cpu = ", ".join(f"{name} {ms:.2f}" for name, ms in sorted(r["cpu_ms_per_cycle"].items()))
    name = config.name if r["fifo"] == config.fifo else f"{config.name} (SCHED_FIFO refused: time-shared)"
    return (f"| {name} | {r['cycles']} | {r['held'] * 100:.1f} | {triple(r['period_error_us'], 0)} | "
            f"{r['overruns_per_10k']:.1f} ({verdict}) | {latency} | {cpu} | "
            f"{', '.join(f'{x:.2f}' for x in r['load'])} |")


HEADER = ("| configuration | cycles | held [%] | period error median / p99 / max [us] | overruns per 10 000 "
          "(goal; the bare loop's) | latency read -> command median / p99 / max [ms] | CPU per cycle [ms] | "
          "load average |\n"
          "|---|---|---|---|---|---|---|---|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="measured wall seconds per configuration")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="configurations (names or shell patterns)")
    parser.add_argument("--priority", type=int, default=80, help="SCHED_FIFO priority of the fifo runs")
    add_record_flag(parser)
    parser.add_argument("--host", help=argparse.SUPPRESS)  # the control_node child: its request as JSON
    parser.add_argument("--bare", help=argparse.SUPPRESS)  # the reference child: its request as JSON
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.host:
        sys.exit(host(args))
    if args.bare:
        sys.exit(bare(args))
    if not (args.seconds > 0 and 1 <= args.priority <= 99):
        raise SystemExit("--seconds must be > 0 and --priority 1-99")
    configs = chosen(args.only or list(DEFAULT))
    os.environ.setdefault("ROS_DOMAIN_ID", str(101 + os.getpid() % 100))  # apart from the tests' 1..100
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    print(f"wall-clock loop, {args.seconds:g} s measured per configuration after {WARMUP:g} s of warm-up; "
          f"load average now {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    logs = Path(tempfile.mkdtemp(prefix="bench_realtime_"))
    print(f"graph files and logs in {logs}")
    print(HEADER, flush=True)
    references = list(dict.fromkeys(c.reference for c in configs if c.graph != BARE))
    floors: dict[Configuration, dict[str, Any]] = {}
    for config in [*references, *(c for c in configs if c not in references)]:
        try:
            result = run(config, args.seconds, args.priority, logs)
            if config.graph == BARE:
                floors[config] = result
            line = row(config, result, floors.get(config.reference) if config.graph != BARE else None)
        except (RuntimeError, subprocess.SubprocessError) as exc:
            line = f"| {config.name} | failed: {exc} |"
        rows.append(line)
        print(line, flush=True)
    complete = set(chosen(list(DEFAULT))) <= set(configs)
    if complete and not args.no_record:
        record("bench_realtime", f"{__doc__.splitlines()[0]} {args.seconds:g} s per configuration, "
               f"SCHED_FIFO priority {args.priority} in the fifo runs (definitions: bench/bench_realtime.py)"
               f".\n\n{HEADER}\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
