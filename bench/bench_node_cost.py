"""CPU per control step of each process of the quadruped graph in lockstep: separate nodes or in-process.

``--graph nodes`` starts config/quadruped_wbc.yaml (control_node with SimulatedSystem in lockstep,
state_estimator, wbc, state_publisher), ``--graph rt`` config/quadruped_rt.yaml (the estimator and the
whole-body controller chained inside control_node, plus state_publisher), each with its
``lockstep_max_speed`` lifted so that the loop runs as fast as it closes, with ``kinodyn up``, standing and
then trotting in place (the wbc's ``locomotion_mode`` set in a copy of the graph file), lets it run
``--warmup`` simulated seconds (stand up, estimator initialised), then measures ``--seconds`` simulated
seconds. Simulated time is read from the wbc's
/diagnostics (its stamp is the joint state's, every 0.5 s): this bench subscribes nothing at the control rate,
so it adds no load to the graph.
Printed per process: CPU ms (utime + stime of /proc/<pid>/stat) per control step (one step is
``1 / update_rate`` s of simulated time), the real-time factor (simulated / wall seconds) and the load average
at the start and the end. The figures go to bench/RESULTS.md (bench/results.py).

``--per-update N`` measures instead, in this process and without DDS traffic to wait for, the in-process
graph's controllers on mock hardware (urdf/quadruped.urdf, GenericSystem; the joint and IMU states of each
cycle written by the bench, standing with small deterministic wobbles, as
src/kinodyn_control/test/test_node_controllers.py does): the mean CPU time (of the thread) per ``update`` of
each controller over N cycles, and within it the algorithm (``LeggedController.tick``,
``LeggedEstimator.process``), so what the controller adds around its algorithm shows as the difference. It
prints only (a repeatable check of one change against another on a loaded machine).
Run: `source scripts/env.sh && python bench/bench_node_cost.py [--graph nodes|rt] [--seconds 10]
[--mode stand|trot|both] [--per-update 2000]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from kinodyn_tools.scenario.graph import backend_graph, start_graph, stop_graph
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile

from kinodyn import sim

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, Harness
from results import add_record_flag, record

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn_control.controllers.base import Logger
    from kinodyn_control.hardware.description import RobotDescription

REPO = Path(__file__).resolve().parents[1]
GRAPHS = {"nodes": REPO / "config" / "quadruped_wbc.yaml", "rt": REPO / "config" / "quadruped_rt.yaml"}
"""The separate-node graph and the in-process graph (estimator and whole-body controller in control_node)."""
NS = 1_000_000_000
TICKS = os.sysconf("SC_CLK_TCK")
START_TIMEOUT = 240.0  # wall seconds for the graph to start and the wbc to publish its first diagnostics
STALL_TIMEOUT = 60.0  # wall seconds without simulated time advancing: the graph stalled


@dataclass(frozen=True)
class Sample:
    """Simulated time (s), wall time (s) and CPU seconds per node process at one wbc diagnostics message."""
    sim: float
    wall: float
    cpu: dict[str, float]


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # fields 14 and 15 of proc(5), after pid and comm


def node_processes(launcher: int) -> dict[str, int]:
    """``{node name: pid}`` of the launcher's children (``--ros-args -r __node:=<name>``)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != launcher:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        for arg in args:
            if arg.startswith("__node:="):
                found[arg[len("__node:="):]] = int(entry)
    return found


class DiagnosticsClock:
    """Samples the processes' CPU whenever the wbc's diagnostics arrive (simulated time advanced 0.5 s); the
    wbc's status is named ``wbc`` or ``wbc: <task>`` (diagnostic_updater's "node: task")."""
    def __init__(self, wbc_name: str = "wbc") -> None:
        self.wbc_name = wbc_name
        self.pids: dict[str, int] = {}
        self.samples: list[Sample] = []
        self.lock = threading.Lock()
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node("bench_node_cost", context=self.context)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics,
                                      QoSProfile(depth=100))
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        if not self.pids or not any(s.name.split(":")[0] == self.wbc_name for s in msg.status):
            return
        sim = msg.header.stamp.sec + msg.header.stamp.nanosec / NS
        try:
            cpu = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        except OSError:  # a node ended
            return
        with self.lock:
            self.samples.append(Sample(sim, time.monotonic(), cpu))

    def latest(self) -> Sample | None:
        with self.lock:
            return self.samples[-1] if self.samples else None

    def wait_sim(self, t: float, timeout: float) -> Sample:
        """The first sample at simulated time >= t; RuntimeError when simulated time stalls."""
        last, deadline = None, time.monotonic() + timeout
        while True:
            sample = self.latest()
            if sample is not None and sample.sim >= t:
                return sample
            if sample is not None and (last is None or sample.sim != last):
                last, deadline = sample.sim, time.monotonic() + STALL_TIMEOUT
            if time.monotonic() > deadline:
                raise RuntimeError(f"simulated time stuck at {last} s (waiting for {t} s); is the graph "
                                   "running?")
            time.sleep(0.05)

    def close(self) -> None:
        self.executor.shutdown()
        self.thread.join()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def graph_file(graph: str, mode: str, backend: str, directory: Path) -> tuple[Path, int]:
    """A copy of the graph with the wbc's ``locomotion_mode`` set to ``mode`` (the node's, or the whole-body
    controller's in control_node) and no bound on the lockstep's speed, and the control node's update rate."""
    path = backend_graph(backend, directory, str(GRAPHS[graph]))
    raw = yaml.safe_load(path.read_text())
    rate = 0
    for node in raw["nodes"]:
        params = node["parameters"]
        if node["executable"] == "wbc":
            params["locomotion_mode"] = mode
        if node["executable"] == "control_node":
            rate = int(params["update_rate"])
            params["lockstep_max_speed"] = 0.0
            for value in params.values():
                if isinstance(value, dict) and value.get("type") == "kinodyn_control/WholeBodyController":
                    value["locomotion_mode"] = mode
    out = directory / f"{path.stem}_{mode}.yaml"
    out.write_text(yaml.safe_dump(raw, sort_keys=False))
    return out, rate


def run(graph: str, mode: str, backend: str, warmup: float, seconds: float, directory: Path
        ) -> tuple[Sample, Sample, int]:
    """The samples at the start and at the end of the measured window, and the update rate."""
    path, rate = graph_file(graph, mode, backend, directory)
    processes = len(yaml.safe_load(path.read_text())["nodes"])
    clock = DiagnosticsClock()
    launcher = start_graph(path, directory / f"graph_{graph}_{backend}_{mode}.log")
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while len(clock.pids) < processes:
            if launcher.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the graph did not start; see {directory}")
            time.sleep(0.2)
            clock.pids = node_processes(launcher.pid)
        start = clock.wait_sim(warmup, START_TIMEOUT)
        end = clock.wait_sim(start.sim + seconds, STALL_TIMEOUT)
    finally:
        stop_graph(launcher)
        clock.close()
    return start, end, rate


def table(mode: str, start: Sample, end: Sample, rate: int, load: tuple[str, str]) -> str:
    sim, wall = end.sim - start.sim, end.wall - start.wall
    steps = sim * rate
    lines = [f"{mode}: {sim:.1f} s simulated in {wall:.1f} s of wall time, real-time factor "
             f"{sim / wall:.2f}x (load average {load[0]} at the start, {load[1]} at the end)", "",
             "| process | CPU ms per control step |", "|---|---|"]
    total = 0.0
    for name in start.cpu:
        ms = 1e3 * (end.cpu[name] - start.cpu[name]) / steps
        total += ms
        lines.append(f"| {name} | {ms:.2f} |")
    lines.append(f"| all | {total:.2f} |")
    return "\n".join(lines)


class _ControllerHost:
    """A controller context as control_node's (RosControllerContext): publishers and subscriptions on the
    host's node, the URDF text, ROS 2 nodes of their own for the controllers that have one; the clock is the
    cycle's time (``time``)."""
    def __init__(self, name: str, description: RobotDescription, logger: Logger, urdf: str,
                 host: Node) -> None:
        self.name, self.description, self.logger = name, description, logger
        self.urdf, self._host = urdf, host
        self.time = 0.0

    def now(self) -> float:
        return self.time

    def _topic(self, topic: str) -> str:
        return f"{self.name}/{topic[2:]}" if topic.startswith("~/") else topic

    def create_publisher(self, msg_type: type, topic: str) -> Any:  # noqa: ANN401  (rclpy's Publisher of any rosidl type)
        return self._host.create_publisher(msg_type, self._topic(topic), 10)

    def create_subscription(self, msg_type: type, topic: str, callback: Callable[[Any], None]) -> Any:  # noqa: ANN401  (rclpy's Subscription of any rosidl type)
        return self._host.create_subscription(msg_type, self._topic(topic), callback, 10)

    def destroy(self, entity: Any) -> None:  # noqa: ANN401  (rclpy's Publisher of any rosidl type)
        self._host.destroy_publisher(entity)

    def create_node(self, name: str) -> Node:
        return Node(name, context=self._host.context, use_global_arguments=False)

    def destroy_node(self, node: Node) -> None:
        node.destroy_node()


class _Timed:
    """Replaces ``owner.<name>`` with a wrapper adding the CPU time of its thread to ``seconds``."""
    def __init__(self, owner: object, name: str) -> None:
        self.seconds, self.calls = 0.0, 0
        inner = getattr(owner, name)

        def timed(*args: object, **kwargs: object) -> object:
            start = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start
                self.calls += 1

        setattr(owner, name, timed)


def _update_table(cycles: int, mode: str, wall: float, updates: dict[str, _Timed],
                  inner: dict[str, tuple[str, _Timed]]) -> list[str]:
    """The per-update table: each controller's update, the algorithm it calls and the time around it."""
    lines = [f"per update, {cycles} cycles of config/quadruped_rt.yaml's controllers on mock hardware "
             f"({mode}; load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}): manager cycle (CPU) "
             f"{1e6 * wall / cycles:.0f} us", "", "| controller | update us | algorithm | algorithm us | "
             "around it us |", "|---|---|---|---|---|"]
    for name, timed in updates.items():
        us = 1e6 * timed.seconds / max(timed.calls, 1)
        what, algorithm = inner.get(name, ("", None))
        if algorithm is None:
            lines.append(f"| {name} | {us:.0f} | | | |")
        else:
            inside = 1e6 * algorithm.seconds / max(timed.calls, 1)
            lines.append(f"| {name} | {us:.0f} | {what} | {inside:.0f} | {us - inside:.0f} |")
    return lines


def per_update(cycles: int, mode: str) -> str:
    """Mean CPU time per update of each controller of the in-process graph on mock hardware (module doc)."""
    raw = yaml.safe_load(GRAPHS["rt"].read_text())["nodes"][0]["parameters"]
    urdf = (REPO / "urdf" / "quadruped.urdf").read_text()
    context = Context()
    rclpy.init(context=context)
    h = Harness(urdf)
    host = Node("controller_manager", context=context, use_global_arguments=False)
    hosts: list[_ControllerHost] = []

    def make_context(name: str) -> _ControllerHost:
        hosts.append(_ControllerHost(name, h.description, h.logger, urdf, host))
        return hosts[-1]

    h.manager.make_context = make_context
    h.activate_hardware()
    rate = int(raw["update_rate"])
    period = 1.0 / rate
    h.manager.enter_wall_clock_loop(period)
    controllers = {name: dict(value) for name, value in raw.items() if isinstance(value, dict)}
    for name, params in controllers.items():
        kind = params.pop("type")
        if kind == "kinodyn_control/WholeBodyController":
            params["locomotion_mode"] = mode
        h.manager.load(name, kind, params)
    for name in controllers:
        h.manager.configure(name)
    ok, message = h.manager.switch(list(controllers), [], strictness=2)
    if not ok:
        raise RuntimeError(message)
    states = h.resources.states
    index = {n: states.index[n] for n in states.names}
    positions = np.array([index[f"{j}/position"] for j in QUADRUPED_JOINTS])
    velocities = np.array([index[f"{j}/velocity"] for j in QUADRUPED_JOINTS])
    gyro = np.array([index[f"imu_sensor/angular_velocity.{a}"] for a in "xyz"])
    accel = np.array([index[f"imu_sensor/linear_acceleration.{a}"] for a in "xyz"])
    stance = np.array(QUADRUPED_STANCE)

    def run(first: int, count: int) -> float:
        start = time.thread_time()
        for k in range(first, first + count):
            wobble = np.sin(0.37 * k + np.arange(12))
            states.values[positions] = stance + 1e-4 * wobble
            states.values[velocities] = 1e-3 * np.roll(wobble, 5)
            states.values[gyro] = 1e-4 * wobble[:3]
            states.values[accel] = np.array([0.0, 0.0, 9.81]) + 1e-3 * wobble[3:6]
            for each in hosts:
                each.time = k * period
            h.manager.cycle(k * period, period)
        return time.thread_time() - start

    warmup = round(1.0 * rate)  # the estimator initialises (0.5 s), the wbc then controls on its estimate
    run(0, warmup)
    entries = h.manager.controllers
    updates = {name: _Timed(entries[name].controller, "update") for name in controllers}
    inner = {}
    for name, entry in entries.items():
        if hasattr(entry.controller, "pipeline"):
            estimator = entry.controller.pipeline._estimator  # noqa: SLF001  (the core call this row times)
            inner[name] = ("LeggedEstimator.process", _Timed(estimator, "process"))
        if hasattr(entry.controller, "core"):
            inner[name] = ("LeggedController.tick", _Timed(entry.controller.controller, "tick"))
    wall = run(warmup, cycles)
    lines = _update_table(cycles, mode, wall, updates, inner)
    problems = h.messages("error")
    for entry in entries.values():
        if hasattr(entry.controller, "ros"):
            entry.controller.on_cleanup()
    host.destroy_node()
    rclpy.shutdown(context=context)
    if problems:
        raise RuntimeError(f"the controllers reported errors: {problems[:3]}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated seconds measured per mode")
    parser.add_argument("--warmup", type=float, default=4.0, help="simulated seconds before measuring")
    parser.add_argument("--mode", choices=("stand", "trot", "both"), default="both")
    parser.add_argument("--backend", choices=sim.backend_names(), default=sim.DEFAULT_BACKEND)
    parser.add_argument("--graph", choices=tuple(GRAPHS), default="nodes",
                        help="nodes: config/quadruped_wbc.yaml; rt: config/quadruped_rt.yaml (in-process)")
    add_record_flag(parser)
    parser.add_argument("--per-update", type=int, default=0, metavar="N",
                        help="time each in-process controller's update over N cycles on mock hardware, in "
                        "this process (module doc); prints only")
    args = parser.parse_args()
    if args.per_update > 0:
        for mode in ("stand", "trot") if args.mode == "both" else (args.mode,):
            print(per_update(args.per_update, mode) + "\n", flush=True)
        return 0
    os.environ.setdefault("ROS_DOMAIN_ID", str(101 + os.getpid() % 100))  # apart from the tests' 1..100
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    directory = Path(tempfile.mkdtemp(prefix="kinodyn-node-cost-"))
    sections = [f"config/{GRAPHS[args.graph].name} on {args.backend}, lockstep as fast as it closes, "
                f"{args.seconds:g} s of simulated "
                f"time measured after {args.warmup:g} s; CPU from /proc/<pid>/stat (utime + stime)"]
    for mode in ("stand", "trot") if args.mode == "both" else (args.mode,):
        before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        start, end, rate = run(args.graph, mode, args.backend, args.warmup, args.seconds, directory)
        after = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        sections.append(table(mode, start, end, rate, (before, after)))
        print(sections[-1] + "\n", flush=True)
    if not args.no_record:
        title = {"nodes": "Separate-node graph", "rt": "In-process graph"}[args.graph]
        record(f"{title}: CPU per control step in lockstep (bench_node_cost.py --graph {args.graph})",
               "\n\n".join(sections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
