"""Run a solved trajectory on a physics backend (``kinodyn.sim``): the iLQR policy of Robot Dynamics
Essential (104),

    u(t) = clip(U_k + K_k (x(t_k) - X_k))    for t in [t_k, t_k + dt),

evaluated on the simulated state at each knot and held (zero-order hold) over the ``dt / sim.dt``
simulator steps of the knot, or the open-loop ``U_k`` (``feedback=False``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kinodyn.control.trajopt.dynamics import RobotDynamics
    from kinodyn.control.trajopt.ilqr import ILQRResult
    from kinodyn.sim.backend import PhysicsBackend


@dataclass(frozen=True)
class PolicyRun:
    """Simulated states at the knots ``x`` (N+1, nx), the torques commanded ``u`` (N, nu) and the largest
    |torque| the simulator applied per joint ``applied_max`` (nu,)."""

    x: np.ndarray
    u: np.ndarray
    applied_max: np.ndarray


def run_policy(sim: PhysicsBackend, dynamics: RobotDynamics, result: ILQRResult,
               feedback: bool = True) -> PolicyRun:
    """Reset ``sim`` to ``result.x[0]`` and run the policy (module doc) for the N knots of ``result``."""
    ratio = dynamics.dt / sim.dt
    steps = round(ratio)
    if steps < 1 or abs(ratio - steps) > 1e-9 * ratio:
        raise ValueError(f"the knot interval {dynamics.dt} s must be a whole number of simulator steps "
                         f"({sim.dt} s)")
    nv, n = dynamics.nv, result.u.shape[0]
    sim.reset(result.x[0, :nv], result.x[0, nv:])
    X = np.empty_like(result.x)
    U = np.empty_like(result.u)
    applied = np.zeros(dynamics.nu)
    for k in range(n):
        X[k] = np.concatenate([sim.q, sim.v])
        u = result.u[k] + (result.K[k] @ (X[k] - result.x[k]) if feedback else 0.0)
        U[k] = np.clip(u, dynamics.u_lower, dynamics.u_upper)
        for _ in range(steps):
            sim.step(U[k])
            applied = np.maximum(applied, np.abs(sim.applied_torque))
    X[n] = np.concatenate([sim.q, sim.v])
    return PolicyRun(x=X, u=U, applied_max=applied)
