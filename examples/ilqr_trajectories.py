"""Torque-limited trajectories by iLQR (``kinodyn.control.trajopt``), run in kinodyn's simulator (no ROS).

- ``swing-up``: the planar 2-link arm (urdf/planar_2link.urdf) from hanging down, q = (pi, 0), to upright,
  q = (0, 0), at rest, in 0.9 s under its 50 / 20 N m effort limits and within its joint limits;
- ``arm7``: a fast point-to-point motion of arm7 (urdf/arm7.urdf) from the ready pose, every joint moving
  0.5-0.8 rad, in 0.4 s under its 87 / 12 N m effort limits and its velocity limits.

Each problem is solved over semi-implicit Euler steps of 5 ms, then executed in ``kinodyn.sim.Simulator``
(RK4, 1 ms) with the iLQR policy ``u = U_k + K_k (x - X_k)`` applied at the knots. Prints the solver's status,
iterations, cost and time, the planned and simulated final errors, and the largest torques.

    python examples/ilqr_trajectories.py [swing-up | arm7 | all] [--open-loop]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kinodyn.control.trajopt import (
    ILQR,
    ILQROptions,
    ILQRResult,
    PolicyRun,
    QuadraticCost,
    RobotDynamics,
    run_policy,
    state_bounds,
)
from kinodyn.model import Model
from kinodyn.sim import Simulator

URDF = Path(__file__).resolve().parents[1] / "urdf"
KNOT_DT = 5e-3  # s, planning step
SIM_DT = 1e-3  # s, simulator step (RK4)
OPTIONS = ILQROptions(cost_tolerance=1e-6)
LIMIT_WEIGHT = 1e4  # penalty on leaving the URDF's position / velocity limits
ARM7_READY = np.array([0.0, -np.pi / 4, 0.0, -3 * np.pi / 4, 0.0, np.pi / 2, np.pi / 4])  # urdf/README.md
ARM7_MOVE = np.array([0.8, 0.7, -0.6, 0.7, 0.8, -0.5, 0.8])  # rad, goal - ready


@dataclass(frozen=True)
class Problem:
    """A solved problem and its run in the simulator."""

    name: str
    dynamics: RobotDynamics
    cost: QuadraticCost
    result: ILQRResult
    solve_seconds: float
    run: PolicyRun


def solve(name: str, model: Model, x0: np.ndarray, x_goal: np.ndarray, seconds: float, u_init: np.ndarray,
          effort_weight: float, velocity_weight: float, margin: float, feedback: bool = True) -> Problem:
    """Minimise the effort (``effort_weight (u / effort limit)^2 / 2`` per knot) and a running velocity cost,
    with the final state weighted by 1e4 (positions) and 1e3 (velocities) and the URDF limits penalised
    (position limits moved in by ``margin``), then run the solution in the simulator."""
    dynamics = RobotDynamics(model, KNOT_DT)
    nv = model.nv
    cost = QuadraticCost(Q=np.r_[np.zeros(nv), np.full(nv, velocity_weight)],
                         W=effort_weight / model.effort_limit**2,
                         Qf=np.r_[np.full(nv, 1e4), np.full(nv, 1e3)], x_goal=x_goal,
                         x_bounds=state_bounds(model, margin), limit_weight=LIMIT_WEIGHT)
    start = time.perf_counter()
    result = ILQR(dynamics, cost, OPTIONS).solve(x0, np.tile(u_init, (round(seconds / KNOT_DT), 1)))
    elapsed = time.perf_counter() - start
    run = run_policy(Simulator(model, dt=SIM_DT, integrator="rk4"), dynamics, result, feedback=feedback)
    return Problem(name, dynamics, cost, result, elapsed, run)


def swing_up(feedback: bool = True) -> Problem:
    """The 2-link arm from hanging down to upright in 0.9 s, starting from zero torque."""
    model = Model.from_urdf(URDF / "planar_2link.urdf")
    return solve("planar_2link swing-up", model, np.array([np.pi, 0.0, 0.0, 0.0]), np.zeros(4), 0.9,
                 np.zeros(2), effort_weight=1.0, velocity_weight=0.0, margin=0.0, feedback=feedback)


def arm7_point_to_point(feedback: bool = True) -> Problem:
    """arm7 from the ready pose to ready + ``ARM7_MOVE`` in 0.4 s, starting from gravity compensation."""
    model = Model.from_urdf(URDF / "arm7.urdf")
    x0 = np.concatenate([ARM7_READY, np.zeros(7)])
    x_goal = np.concatenate([ARM7_READY + ARM7_MOVE, np.zeros(7)])
    return solve("arm7 point-to-point", model, x0, x_goal, 0.4, model.gravity_torques(ARM7_READY),
                 effort_weight=0.1, velocity_weight=0.1, margin=0.05, feedback=feedback)


def report(p: Problem) -> None:
    r, nv = p.result, p.dynamics.nv
    goal = p.cost.x_goal
    limit = p.dynamics.u_upper
    saturated = np.count_nonzero(np.any(np.abs(r.u) >= limit - 1e-9, axis=1))
    print(f"{p.name}: {r.status} after {r.iterations} iterations in {p.solve_seconds:.2f} s, "
          f"cost {r.cost_history[0]:.6g} -> {r.cost:.6g}, {r.u.shape[0]} knots of {p.dynamics.dt * 1e3:g} ms")
    for label, x in (("planned", r.x[-1]), ("simulated", p.run.x[-1])):
        print(f"  {label:9s} final error: |q| {np.abs(x[:nv] - goal[:nv]).max():.2e} rad, "
              f"|v| {np.abs(x[nv:] - goal[nv:]).max():.2e} rad/s")
    print(f"  planned torque / limit, largest per joint: {np.round(np.abs(r.u).max(axis=0) / limit, 3)} "
          f"({saturated} knots with a joint at its limit)")
    print(f"  simulated torque / limit, largest per joint: {np.round(p.run.applied_max / limit, 3)}")
    print(f"  simulated |v| / velocity limit, largest: "
          f"{np.max(np.abs(p.run.x[:, nv:]) / p.dynamics.model.velocity_limit):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", nargs="?", default="swing-up", choices=("swing-up", "arm7", "all"))
    parser.add_argument("--open-loop", action="store_true",
                        help="run the torques without the feedback gains (the swing-up then misses the goal)")
    args = parser.parse_args()
    feedback = not args.open_loop
    if args.problem in ("swing-up", "all"):
        report(swing_up(feedback))
    if args.problem in ("arm7", "all"):
        report(arm7_point_to_point(feedback))


if __name__ == "__main__":
    main()
