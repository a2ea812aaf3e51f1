"""One MPC problem over the horizon, as both solvers read it (Robot Dynamics Essential §4.4, (105); Di
Carlo et al. 2018).

Over N steps of ``dt``, with ``x_0`` the measured state and ``u_k`` the forces of every foot at step k (in
units of the weight):

    min  1/2 sum_{k=1..N} |x_k - x_ref,k|^2_Q + 1/2 rho sum_{k=0..N-1} |u_k|^2
    s.t. x_{k+1} = A_k x_k + B_k u_k + c_k                       (dynamics.discretise)
         |u_x|, |u_y| <= mu u_z, u_z in [f_min, f_max]          stance foot at step k (4-facet pyramid)
         u = 0                                                 swing foot at step k

Step k is linearised about the yaw and CoM position of ``x_0`` (k = 0) or of the reference ``x_ref,k``
(k >= 1); the moment arms are the stance feet's footholds minus that position. The reference yaw is
unwrapped to lie within pi of the previous step's (starting from ``x_0``'s), so a reference given modulo
2 pi does not make the body turn round. The problem is feasible for any valid input (the states are
free, and each stance foot's set of forces is non-empty).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.mpc.dynamics import continuous_dynamics, discretise
from kinodyn.control.mpc.srb import POSITION, SingleRigidBody

if TYPE_CHECKING:
    from kinodyn.control.mpc.parameters import MpcParameters

FRICTION_FACETS = 4


@dataclass(frozen=True)
class HorizonProblem:
    """The data of one solve: dynamics ``A`` (N, 12, 12), ``B`` (N, 12, 3 n_feet), ``c`` (N, 12); ``x0``
    (12,); ``reference`` (N, 12) for ``x_1 .. x_N``; ``stance`` (N, n_feet) bool; ``state_weights`` (12,),
    ``force_weight`` (rho), ``friction`` (mu); ``normal_min``, ``normal_max`` (N, n_feet): the bounds of
    ``u_z`` (0 and 0 for a swing foot)."""

    A: np.ndarray
    B: np.ndarray
    c: np.ndarray
    x0: np.ndarray
    reference: np.ndarray
    stance: np.ndarray
    state_weights: np.ndarray
    force_weight: float
    friction: float
    normal_min: np.ndarray
    normal_max: np.ndarray

    @property
    def steps(self) -> int:
        return int(self.A.shape[0])

    @property
    def feet(self) -> int:
        return int(self.stance.shape[1])


def friction_pyramid(mu: float) -> np.ndarray:
    """The 4 x 3 rows ``F`` with ``F f <= 0`` <=> ``|f_x|, |f_y| <= mu f_z``."""
    return np.array([[1.0, 0.0, -mu], [-1.0, 0.0, -mu], [0.0, 1.0, -mu], [0.0, -1.0, -mu]])


def build_problem(body: SingleRigidBody, params: MpcParameters, x0: np.ndarray, reference: np.ndarray,
                  stance: np.ndarray, footholds: np.ndarray) -> HorizonProblem:
    """The problem of the module doc from checked inputs: ``x0`` (12,), ``reference`` (N, 12), ``stance``
    (N, n_feet) bool, ``footholds`` (N, n_feet, 3) world (read only where ``stance``)."""
    reference = reference.copy()
    yaw = np.unwrap(np.concatenate(([x0[2]], reference[:, 2])))
    reference[:, 2] = yaw[1:]
    positions = np.vstack((x0[None, POSITION], reference[:-1, POSITION]))
    arms = np.where(stance[..., None], footholds - positions[:, None, :], 0.0)
    Ac, Bc, cc = continuous_dynamics(body, yaw[:-1], arms, body.weight)
    A, B, c = discretise(Ac, Bc, cc, params.dt)
    normal_min = np.where(stance, params.min_normal_force, 0.0)
    normal_max = np.where(stance, params.max_normal_force, 0.0)
    return HorizonProblem(A, B, c, x0, reference, stance, np.asarray(params.state_weights),
                          params.force_weight, params.friction, normal_min, normal_max)
