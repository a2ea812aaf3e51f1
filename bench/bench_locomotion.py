"""Tick time of the ``LocomotionController`` (the wbc node's tick budget: median <= 1 ms, p99 <= 2 ms at
500 Hz): the quadruped trotting in ``kinodyn.sim``, true state.

The states are recorded once in closed loop (stand, then trot at ``--speed`` m/s; control 500 Hz, RK4 at
1 ms, soft contact: examples/locomotion_scenarios.py), then replayed ``--passes`` times through a fresh
controller each (the controller is deterministic: every pass answers the recorded torques, checked), timing
``update``. Printed per tick, median / p99 / max over all passes: the wall time and the thread's CPU time
(the latter is what the tick costs when the machine is shared), and in one more pass with timers around
them, the parts:

- evaluation: the compiled ``Evaluator`` (placements, Jacobians, dynamics of the tick);
- task rows: every task's ``rows`` (``WholeBodyController._stack``);
- QP: the solver's ``solve`` (DAQP);
- WBC rest: the rest of ``WholeBodyController.update`` (equalities and their elimination, inequalities,
  the reduced QP's matrices, torques);
- MPC: with ``--mpc``, the centroidal MPC's hook (``MpcLocomotion``: one part of a solve per tick, the
  plan's references; docs/mpc.md), its force tasks' rows counted in the task rows;
- locomotion: ``update`` minus ``WholeBodyController.update`` and the MPC (modes, command, gait, footholds,
  swing references, the answer).

    python bench/bench_locomotion.py [--seconds 3] [--passes 5] [--speed 0.5] [--mpc] [--profile 25]
        [--no-record]

The table goes to the ``bench_locomotion`` section of bench/RESULTS.md (bench/results.py), with ``--mpc``
to ``bench_locomotion_mpc``. ``--profile N``
prints cProfile's N most expensive functions (cumulative) over one pass instead, and records nothing. The
load average is printed: compare figures from one run on a shared machine.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import results
from kinodyn.control.locomotion import LocomotionController
from kinodyn.control.locomotion.mpc_locomotion import MpcLocomotion
from locomotion_scenarios import Legged

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn.control.locomotion import LocomotionOutput

P = ParamSpec("P")  # a timed function's parameters
R = TypeVar("R")  # and its result

BUDGET_MEDIAN, BUDGET_P99 = 1.0, 2.0  # ms, the wbc node's tick budget at 500 Hz (docs/nodes/wbc.md)


@dataclass
class Recording:
    """The closed loop's inputs of every tick and the torques it answered."""

    q: list[np.ndarray]
    v: list[np.ndarray]
    t: list[float]
    command: np.ndarray
    tau: list[np.ndarray]
    mpc: bool  # the MPC drives the controller (MpcLocomotion)


def record(seconds: float, speed: float, mpc: bool) -> tuple[Legged, Recording]:
    """Stand 0.2 s, then trot at ``speed`` m/s forward until ``seconds``; every tick's state and torque."""
    robot = Legged.quadruped()
    s, ctl = robot.sim, robot.controller
    if mpc:
        MpcLocomotion(ctl)
    command = np.array([speed, 0.0, 0.0])
    rec = Recording([], [], [], command, [], mpc)
    while s.t < seconds - 1e-9:
        if s.t >= 0.2 - 1e-9 and ctl.mode == "stand":
            ctl.request_mode("trot")
        q, v, t = s.q.copy(), s.v.copy(), s.t
        out = ctl.update(q, v, t, command)
        if not out.ok or out.tau is None:
            raise RuntimeError(f"the controller failed at t = {t:.3f} s: {out.status} ({out.message})")
        rec.q.append(q), rec.v.append(v), rec.t.append(t), rec.tau.append(out.tau.copy())
        for _ in range(robot.steps_per_tick):
            s.step(out.tau)
    return robot, rec


def replay(robot: Legged, rec: Recording, tick: Callable[[int, LocomotionController], Any] | None = None
           ) -> tuple[np.ndarray, np.ndarray, float]:
    """One pass through a fresh controller: wall and thread-CPU ms per tick, and the largest torque
    difference from the recording. ``tick(k, ctl)`` replaces the timed call (for the parts)."""
    ctl = LocomotionController(robot.model, robot.feet, robot.controller.nominal_joints,
                               robot.controller.params)
    if rec.mpc:
        MpcLocomotion(ctl)
    wall, cpu, worst = [], [], 0.0
    for k, (q, v, t) in enumerate(zip(rec.q, rec.v, rec.t, strict=True)):
        if t >= 0.2 - 1e-9 and ctl.mode == "stand":
            ctl.request_mode("trot")
        w0, c0 = time.perf_counter(), time.thread_time()
        out = ctl.update(q, v, t, rec.command) if tick is None else tick(k, ctl)
        wall.append(time.perf_counter() - w0)
        cpu.append(time.thread_time() - c0)
        if out.tau is None:
            raise RuntimeError(f"replay failed at t = {t:.3f} s: {out.status} ({out.message})")
        worst = max(worst, float(np.max(np.abs(out.tau - rec.tau[k]))))
    return np.array(wall) * 1e3, np.array(cpu) * 1e3, worst


class Parts:
    """Timers around the WBC's pieces of one controller (module doc), milliseconds per tick."""

    NAMES = ("evaluation", "task rows", "QP", "WBC rest", "MPC", "locomotion")

    def __init__(self) -> None:
        self.ticks: list[dict[str, float]] = []
        self._ctl: LocomotionController | None = None
        self._now: dict[str, float] = {}

    def _timed(self, name: str, fn: Callable[P, R]) -> Callable[P, R]:
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._now[name] = self._now.get(name, 0.0) + time.perf_counter() - t0
        return wrapper

    def _instrument(self, ctl: LocomotionController) -> None:
        """Time the controller's stages by wrapping its private steps (the breakdown this bench prints)."""
        wbc = ctl.wbc
        wbc._evaluation = self._timed("evaluation", wbc._evaluation)  # type: ignore[method-assign]  # noqa: SLF001
        wbc._stack = self._timed("task rows", wbc._stack)  # type: ignore[method-assign]  # noqa: SLF001
        solve_level = wbc._solve_level  # noqa: SLF001

        def solve_level_timed(k: int, *args: object) -> object:
            if k not in wbc._solvers:  # noqa: SLF001  (created on first use: wrap its solve once it exists)
                result = solve_level(k, *args)
                wbc._solvers[k].solve = self._timed("QP", wbc._solvers[k].solve)  # noqa: SLF001
                return result
            return solve_level(k, *args)

        wbc._solve_level = solve_level_timed  # type: ignore[method-assign]  # noqa: SLF001
        wbc.update = self._timed("wbc", wbc.update)  # type: ignore[method-assign]
        if ctl.planner is not None:
            ctl.planner = self._timed("MPC", ctl.planner)
        self._ctl = ctl

    def __call__(self, k: int, ctl: LocomotionController, rec: Recording) -> LocomotionOutput:
        if ctl is not self._ctl:
            self._instrument(ctl)
        self._now = {}
        t0 = time.perf_counter()
        out = ctl.update(rec.q[k], rec.v[k], rec.t[k], rec.command)
        total = time.perf_counter() - t0
        n = self._now
        inner = n.get("evaluation", 0.0) + n.get("task rows", 0.0) + n.get("QP", 0.0)
        self.ticks.append({"evaluation": n.get("evaluation", 0.0), "task rows": n.get("task rows", 0.0),
                           "QP": n.get("QP", 0.0), "WBC rest": n.get("wbc", 0.0) - inner,
                           "MPC": n.get("MPC", 0.0),
                           "locomotion": total - n.get("wbc", 0.0) - n.get("MPC", 0.0)})
        return out


def line(name: str, ms: np.ndarray) -> str:
    """A table row: median, p99 and max of ``ms``."""
    return results.markdown_row(name, f"{np.median(ms):.3f}", f"{np.percentile(ms, 99):.3f}",
                                f"{ms.max():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="simulated seconds recorded (default 3)")
    parser.add_argument("--passes", type=int, default=5, help="timed replays (default 5)")
    parser.add_argument("--speed", type=float, default=0.5, help="forward command, m/s (default 0.5)")
    parser.add_argument("--mpc", action="store_true", help="the centroidal MPC drives the controller")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print cProfile's N top functions over one pass instead")
    results.add_record_flag(parser)
    args = parser.parse_args()
    robot, rec = record(args.seconds, args.speed, args.mpc)
    replay(robot, rec)  # warm-up: compiled kernels, solver workspaces
    print(f"recorded {len(rec.t)} ticks; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs",
          flush=True)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(replay, robot, rec)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
        return
    walls, cpus = [], []
    for _ in range(args.passes):
        wall, cpu, worst = replay(robot, rec)
        if worst > 1e-9:
            raise RuntimeError(f"a replay answered torques {worst:.3g} N m off the recording")
        walls.append(wall), cpus.append(cpu)
    wall, cpu = np.concatenate(walls), np.concatenate(cpus)
    median_verdict = "meets" if np.median(wall) <= BUDGET_MEDIAN else "MISSES"
    p99_verdict = "meets" if np.percentile(wall, 99) <= BUDGET_P99 else "MISSES"
    driven = ", the centroidal MPC driving the QP (50 Hz, one part of a solve per tick)" if args.mpc else ""
    lines = [f"quadruped{driven}, stand 0.2 s then trot at {args.speed} m/s; {len(rec.t)} ticks of 2 ms; "
             "update() "
             f"over {args.passes} passes ({wall.size} ticks), replays equal to the recording; the parts "
             "from one instrumented pass (wall time).", "",
             results.markdown_header("per tick", "median [ms]", "p99 [ms]", "max [ms]"),
             line("update(), wall time", wall), line("update(), thread CPU time", cpu)]
    parts = Parts()
    replay(robot, rec, lambda k, ctl: parts(k, ctl, rec))
    lines += [line(f"part: {name}", np.array([tick[name] for tick in parts.ticks]) * 1e3)
              for name in Parts.NAMES]
    lines += ["", f"Budget (the wbc node's tick at 500 Hz): median <= {BUDGET_MEDIAN} ms, p99 <= "
              f"{BUDGET_P99} ms; the wall-time median {median_verdict} it, the p99 {p99_verdict} it."]
    print("\n".join(lines))
    results.record("bench_locomotion_mpc" if args.mpc else "bench_locomotion", "\n".join(lines),
                   no_record=args.no_record)


if __name__ == "__main__":
    main()
