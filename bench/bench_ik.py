"""IK quality benchmark: kinodyn.ik.solve_ik versus pink (pin-pink 4.4.0) on the same random reachable poses.

For each robot (the project's 7-DoF arm, the Panda from example-robot-data), targets are the
end-effector poses of N random in-limit configurations (``default_rng(seed)``). Both solvers start
from the mid-range configuration of the joint limits. A solve succeeds when, judged by Pinocchio's
forward kinematics of the returned configuration, the position error is < 1e-5 m, the orientation
error (relative-rotation angle) < 1e-4 rad (TRAC-IK's default accuracy), and every joint is within
its limits.

- kinodyn: ``solve_ik`` with its defaults (LM, tolerances 1e-6 m / 1e-6 rad, restarts), 7 arm joints
  active, ``timeout`` per solve. Its random restarts draw from a stream of their own (spawned from
  the seed's SeedSequence), never from the one that generated the targets: a restart can then not
  start on the very configuration that produced a target.
- pink, looped as its users do for a global IK: ``pink.solve_ik`` (QP with the configuration and
  velocity limits of the model, OSQP through qpsolvers) returns a velocity, integrated over
  ``dt = 1`` (a full Gauss-Newton-like step per iteration, FrameTask with costs 1/1 and gain 1),
  repeated until the benchmark's tolerances are met, ``--pink-iterations`` iterations or the same
  timeout. No restarts (pink has none).

Times are wall-clock per solve (median, p99) and the solving thread's CPU time (p99): on a loaded
machine a solve can wait for a core, which shows in the wall-clock tail only.

Run: ``python bench/bench_ik.py [--poses 1000] [--seed 0] [--timeout 0.05] [--no-record]``; prints a table and
writes it to the ``bench_ik`` section of bench/RESULTS.md (bench/results.py).
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings
from pathlib import Path

import numpy as np
import pink
import pinocchio as pin
from kinodyn.ik import solve_ik
from kinodyn.model import Model
from kinodyn.spatial import so3_log
from results import add_record_flag, markdown_header, markdown_row, record

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = Path(np.__file__).parents[1] / "cmeel.prefix/share/example-robot-data/robots"
CASES = {
    "arm7": (ROOT / "urdf" / "arm7.urdf", "ee_link"),
    "panda": (ROBOTS / "panda_description/urdf/panda.urdf", "panda_hand"),
}
POSITION_TOLERANCE = 1e-5  # m
ORIENTATION_TOLERANCE = 1e-4  # rad


class Judge:
    """Pinocchio FK of a configuration, its pose errors and limit check (independent of both solvers)."""

    def __init__(self, urdf: Path, frame: str) -> None:
        self.model = pin.buildModelFromUrdf(str(urdf))
        self.data = self.model.createData()
        self.frame = self.model.getFrameId(frame)

    def errors(self, q_pin: np.ndarray, target: np.ndarray) -> tuple[float, float, bool]:
        pin.framesForwardKinematics(self.model, self.data, q_pin)
        T = self.data.oMf[self.frame].homogeneous
        position = float(np.linalg.norm(T[:3, 3] - target[:3, 3]))
        orientation = float(np.linalg.norm(so3_log(target[:3, :3] @ T[:3, :3].T)))
        inside = bool(np.all(q_pin >= self.model.lowerPositionLimit)
                      and np.all(q_pin <= self.model.upperPositionLimit))
        return position, orientation, inside

    def succeeded(self, q_pin: np.ndarray, target: np.ndarray) -> bool:
        position, orientation, inside = self.errors(q_pin, target)
        return position < POSITION_TOLERANCE and orientation < ORIENTATION_TOLERANCE and inside


def kinodyn_to_pinocchio(model: Model, judge: Judge, q: np.ndarray) -> np.ndarray:
    """Map a kinodyn configuration to Pinocchio's by joint name (mimic fingers take their master's value)."""
    q_pin = pin.neutral(judge.model)
    for joint_id in range(1, judge.model.njoints):
        name = judge.model.names[joint_id]
        master = name if name in model.joint_names else name.replace("joint2", "joint1")
        q_pin[judge.model.joints[joint_id].idx_q] = q[model.joint_id(master)]
    return q_pin


def mid_range(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    return 0.5 * (lower + upper)


class Stopwatch:
    """Wall-clock and CPU time of the calling thread since construction (on a loaded machine a solve can wait
    for a core: wall >= CPU)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.thread_time() - self.cpu


def run_kinodyn(model: Model, judge: Judge, frame: str, targets: list[np.ndarray], timeout: float,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(wall, CPU) seconds per solve (N x 2) and success per solve."""
    active = [name for name in model.joint_names if "finger" not in name]
    solve_ik(model, frame, targets[0], active_joints=active, timeout=timeout)  # compile the kernels
    times, success = [], []
    for target in targets:
        watch = Stopwatch()
        r = solve_ik(model, frame, target, rng=rng, active_joints=active, timeout=timeout)
        times.append(watch.elapsed())
        success.append(judge.succeeded(kinodyn_to_pinocchio(model, judge, r.q), target))
    return np.array(times), np.array(success)


def run_pink(judge: Judge, frame: str, targets: list[np.ndarray], timeout: float, max_iterations: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """(wall, CPU) seconds per solve (N x 2) and success per solve."""
    model = judge.model
    seed = mid_range(model.lowerPositionLimit, model.upperPositionLimit)
    task = pink.tasks.FrameTask(frame, position_cost=1.0, orientation_cost=1.0)
    times, success = [], []
    for target in targets:
        watch = Stopwatch()
        configuration = pink.Configuration(model, model.createData(), seed)
        task.set_target(pin.SE3(target[:3, :3].copy(), target[:3, 3].copy()))
        for _ in range(max_iterations):
            position, orientation, _ = judge.errors(configuration.q, target)
            if position < POSITION_TOLERANCE and orientation < ORIENTATION_TOLERANCE:
                break
            if watch.elapsed()[0] > timeout:
                break
            # safety_break=False: OSQP's tolerance lets pink's iterates cross a limit by ~1e-5 rad,
            # which would raise; the judge still counts such an end configuration as a failure.
            velocity = pink.solve_ik(configuration, [task], dt=1.0, solver="osqp", safety_break=False)
            configuration.integrate_inplace(velocity, 1.0)
        times.append(watch.elapsed())
        success.append(judge.succeeded(configuration.q, target))
    return np.array(times), np.array(success)


def main() -> None:
    logging.disable(logging.WARNING)  # pink logs every limit crossing of its iterates
    warnings.filterwarnings("ignore", module="qpsolvers")  # dense -> sparse conversion notice per QP
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=0.05, help="seconds per solve, both solvers")
    parser.add_argument("--pink-iterations", type=int, default=200)
    add_record_flag(parser)
    args = parser.parse_args()
    rows = []
    for robot, (urdf, frame) in CASES.items():
        model = Model.from_urdf(urdf)
        judge = Judge(urdf, frame)
        rng = np.random.default_rng(args.seed)
        targets = [model.frame_placement(model.random_configuration(rng), frame) for _ in range(args.poses)]
        solver_rng = np.random.default_rng(np.random.SeedSequence(args.seed).spawn(1)[0])
        ours = run_kinodyn(model, judge, frame, targets, args.timeout, solver_rng)
        anchor = run_pink(judge, frame, targets, args.timeout, args.pink_iterations)
        for name, (times, success) in (("kinodyn", ours), ("pink 4.4.0", anchor)):
            wall, cpu = 1e3 * times[:, 0], 1e3 * times[:, 1]
            rows.append((robot, name, 100.0 * success.mean(), np.median(wall), np.percentile(wall, 99),
                         np.percentile(cpu, 99), np.median(wall) / (1e3 * np.median(ours[0][:, 0]))))
    lines = [f"{args.poses} random reachable poses per robot, seed {args.seed}, timeout {args.timeout:g} s "
             f"per solve; success = position < {POSITION_TOLERANCE} m, orientation < "
             f"{ORIENTATION_TOLERANCE} rad, within limits.", "",
             markdown_header("robot", "solver", "success [%]", "median [ms]", "p99 [ms]", "p99 CPU [ms]",
                             "median / kinodyn's")]
    for robot, name, rate, median, p99, p99_cpu, ratio in rows:
        lines.append(markdown_row(robot, name, f"{rate:.1f}", f"{median:.3f}", f"{p99:.2f}", f"{p99_cpu:.2f}",
                                  f"{ratio:.2f}"))
    print("\n".join(lines))
    record("bench_ik", "\n".join(lines), no_record=args.no_record)


if __name__ == "__main__":
    main()
