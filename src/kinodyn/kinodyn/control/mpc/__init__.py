"""Convex centroidal (single-rigid-body) MPC of a legged robot's contact forces (Robot Dynamics Essential
§4.4).

- ``srb``: ``SingleRigidBody`` (total mass, composite inertia at the nominal stance, the state layout);
- ``dynamics``: the SRB linearised about the reference yaw, exact discretisation;
- ``problem``: ``HorizonProblem`` / ``build_problem`` (cost, friction pyramids, force bounds);
- ``sparse`` (OSQP, states as variables) and ``condensed`` (DAQP, states eliminated): the two solvers;
- ``schedule``: contact schedule from the gait, foothold plan, velocity reference;
- ``mpc``: ``CentroidalMpc`` (set up once, ``solve`` per tick -> ``MpcSolution``, or ``solve_parts`` in
  parts); ``MpcParameters``;
- ``planner``: ``MpcPlanner`` runs it at its own rate within control ticks, one part of a solve per tick
  (``control.locomotion.mpc_locomotion`` plugs it into the whole-body QP of the locomotion controller).
"""

from kinodyn.control.mpc.mpc import CentroidalMpc
from kinodyn.control.mpc.parameters import SOLVERS, MpcParameters
from kinodyn.control.mpc.planner import MpcPlanner, PlannerParameters, PlannerStatus
from kinodyn.control.mpc.problem import HorizonProblem, build_problem
from kinodyn.control.mpc.schedule import contact_schedule, foothold_plan, velocity_reference
from kinodyn.control.mpc.solution import MpcSolution, MpcStatus
from kinodyn.control.mpc.srb import STATE_SIZE, SingleRigidBody

__all__ = [
    "SOLVERS",
    "STATE_SIZE",
    "CentroidalMpc",
    "HorizonProblem",
    "MpcParameters",
    "MpcPlanner",
    "MpcSolution",
    "MpcStatus",
    "PlannerParameters",
    "PlannerStatus",
    "SingleRigidBody",
    "build_problem",
    "contact_schedule",
    "foothold_plan",
    "velocity_reference",
]
