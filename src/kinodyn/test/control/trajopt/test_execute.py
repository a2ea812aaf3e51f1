"""``run_policy``: the knot interval must be whole simulator steps; a plan replayed open loop in a
simulator with the plan's own integrator and step reproduces the planned states."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.trajopt import ILQRResult, RobotDynamics, rollout, run_policy

import kinodyn as kd

URDF = Path(__file__).resolve().parents[5] / "urdf"


def _plan(dyn: RobotDynamics, x0: np.ndarray, U: np.ndarray) -> ILQRResult:
    X = rollout(dyn, x0, U)
    return ILQRResult(status="converged", iterations=0, cost_history=[0.0], x=X, u=U,
                      K=np.zeros((U.shape[0], dyn.nu, dyn.nx)), d=np.zeros_like(U), mu=0.0)


def test_open_loop_replay_reproduces_the_plan() -> None:
    """arm7, 50 knots of 4 ms of random torques (some beyond the effort limits, clipped alike by the plan
    and the policy), replayed in a semi-implicit Euler simulator stepping 4 ms: the simulated states equal
    the planned ones (1e-10), open loop and with (zero) feedback gains."""
    m = kd.Model.from_urdf(URDF / "arm7.urdf")
    dyn = RobotDynamics(m, dt=4e-3)
    rng = np.random.default_rng(0)
    U = rng.uniform(-1.2, 1.2, size=(50, 7)) * m.effort_limit + m.gravity_torques(m.neutral())
    plan = _plan(dyn, np.concatenate([m.neutral(), np.zeros(7)]), U)
    # (every damper explicit, as the plan's dynamics take them: the wrist's is beyond the simulator's
    # default ratio for an implicit one at this step)
    sim = kd.sim.Simulator(m, dt=4e-3, integrator="semi_implicit_euler", joint_limits=False,
                           implicit_damping_ratio=math.inf)
    for feedback in (False, True):
        run = run_policy(sim, dyn, plan, feedback=feedback)
        np.testing.assert_allclose(run.x, plan.x, rtol=0, atol=1e-10)
        np.testing.assert_array_equal(run.u, np.clip(U, -m.effort_limit, m.effort_limit))
        assert np.all(run.applied_max <= m.effort_limit)


def test_knot_interval_must_be_whole_simulator_steps() -> None:
    m = kd.Model.from_urdf(URDF / "planar_2link.urdf")
    dyn = RobotDynamics(m, dt=2.5e-3)
    plan = _plan(dyn, np.zeros(4), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="whole number"):
        run_policy(kd.sim.Simulator(m, dt=1e-3), dyn, plan)
