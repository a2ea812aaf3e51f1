"""Trajectory optimisation over a fixed-base robot's forward dynamics (Robot Dynamics Essential §4.1-§4.3).

- ``RobotDynamics``: discrete dynamics ``x_{k+1} = f(x_k, u_k)``, ``x = (q, v)``, ``u`` = joint torques,
  semi-implicit Euler with the URDF's joint damping and friction; control bounds = URDF efforts.
- ``forward_dynamics_derivatives``: ``dFD/dq``, ``dFD/dv``, ``dFD/dtau`` from the RNEA.
- ``QuadraticCost``: tracking and effort cost of Robot Dynamics Essential §4.1.
- ``ILQR`` / ``ILQROptions`` / ``ILQRResult``: control-limited iLQR (Robot Dynamics Essential §4.3, (104)).
- ``run_policy``: a solved trajectory executed in ``kinodyn.sim`` with its feedback gains.

docs/trajectory-optimisation.md.
"""

from kinodyn.control.trajopt.box_qp import BoxQPSolution, solve_box_qp
from kinodyn.control.trajopt.cost import CostDerivatives, QuadraticCost, state_bounds
from kinodyn.control.trajopt.derivatives import ForwardDynamicsDerivatives, forward_dynamics_derivatives
from kinodyn.control.trajopt.dynamics import DiscreteDynamics, RobotDynamics
from kinodyn.control.trajopt.execute import PolicyRun, run_policy
from kinodyn.control.trajopt.ilqr import ILQR, STATUSES, ILQROptions, ILQRResult, rollout

__all__ = [
    "ILQR",
    "STATUSES",
    "BoxQPSolution",
    "CostDerivatives",
    "DiscreteDynamics",
    "ForwardDynamicsDerivatives",
    "ILQROptions",
    "ILQRResult",
    "PolicyRun",
    "QuadraticCost",
    "RobotDynamics",
    "forward_dynamics_derivatives",
    "rollout",
    "run_policy",
    "solve_box_qp",
    "state_bounds",
]
