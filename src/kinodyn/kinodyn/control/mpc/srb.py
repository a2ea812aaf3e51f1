"""The single rigid body (SRB) of a legged robot: the whole robot frozen in its nominal stance.

Robot Dynamics Essential §4.4 plans with a reduced model (centroidal or single-rigid-body dynamics, (97));
the SRB is the
whole robot locked in its nominal joint configuration, so its mass is the total mass and its inertia the
composite rigid-body inertia of every link about the common centre of mass (Robot Dynamics Essential §3.5:
the angular
block of the centroidal momentum matrix ``A_G`` with the base at rest in the world's axes), not the base
link's own inertia: on a quadruped the legs carry a large share of both.

The state is ``x = [roll, pitch, yaw, p, omega, v]`` (12 numbers): ZYX Euler angles of the base (Robot
Dynamics Essential
§1, ``R = Rz(yaw) Ry(pitch) Rx(roll)``), the CoM position, the angular velocity in world axes and the CoM
velocity, world. Contact forces are those the ground exerts on the robot (docs/conventions.md), world axes,
applied at the feet's contact points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.spatial.rates import rates_from_angular_velocity
from kinodyn.spatial.rotations import matrix_to_euler, quat_to_matrix

if TYPE_CHECKING:
    from kinodyn.model import Model

STATE_SIZE = 12
ORIENTATION, POSITION, ANGULAR_VELOCITY, LINEAR_VELOCITY = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12)


def rpy_matrices(rpy: np.ndarray) -> np.ndarray:
    """``Rz(yaw) Ry(pitch) Rx(roll)`` of each row ``[roll, pitch, yaw]`` of ``rpy`` (n x 3) -> (n, 3, 3)."""
    cr, cp, cy = np.cos(rpy[:, 0]), np.cos(rpy[:, 1]), np.cos(rpy[:, 2])
    sr, sp, sy = np.sin(rpy[:, 0]), np.sin(rpy[:, 1]), np.sin(rpy[:, 2])
    out = np.empty((rpy.shape[0], 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 0, 2] = cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr
    out[:, 1, 0], out[:, 1, 1], out[:, 1, 2] = sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr
    out[:, 2, 0], out[:, 2, 1], out[:, 2, 2] = -sp, cp * sr, cp * cr
    return out


@dataclass(frozen=True)
class SingleRigidBody:
    """``mass`` [kg], ``inertia`` (3 x 3, about the CoM, base axes), ``com_offset`` (the CoM in the base
    frame) and ``gravity`` (world, non-zero). Raises ValueError for a non-physical body."""

    mass: float
    inertia: np.ndarray
    com_offset: np.ndarray
    gravity: np.ndarray

    def __post_init__(self) -> None:
        inertia = np.array(self.inertia, dtype=float)
        offset = np.array(self.com_offset, dtype=float).reshape(-1)
        gravity = np.array(self.gravity, dtype=float).reshape(-1)
        if not (np.isfinite(self.mass) and self.mass > 0.0):
            raise ValueError(f"SRB mass must be finite and > 0 kg, got {self.mass!r}")
        if inertia.shape != (3, 3) or not np.isfinite(inertia).all() or not np.allclose(inertia, inertia.T):
            raise ValueError(f"SRB inertia must be a finite symmetric 3 x 3 matrix, got {inertia!r}")
        principal = np.linalg.eigvalsh(inertia)
        if principal[0] <= 0.0 or 2.0 * principal.max() > principal.sum() * (1.0 + 1e-9):
            raise ValueError(f"SRB inertia is not physical: principal moments {principal} must be > 0 and "
                             "satisfy the triangle inequality")
        if offset.shape != (3,) or not np.isfinite(offset).all():
            raise ValueError(f"SRB com_offset must be 3 finite numbers, got {self.com_offset!r}")
        if gravity.shape != (3,) or not np.isfinite(gravity).all() or not np.linalg.norm(gravity) > 0.0:
            raise ValueError(f"SRB gravity must be 3 finite numbers, not zero, got {self.gravity!r}")
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "inertia", 0.5 * (inertia + inertia.T))
        object.__setattr__(self, "com_offset", offset)
        object.__setattr__(self, "gravity", gravity)

    @classmethod
    def from_model(cls, model: Model, q_nominal: np.ndarray) -> SingleRigidBody:
        """The SRB of a floating-base ``model`` locked at the joint positions of ``q_nominal`` (its base pose
        is ignored: the base is put at the origin, level): total mass, composite inertia about the CoM
        (``A_G``'s angular block, module doc) and the CoM in the base frame; the model's gravity."""
        if not model.floating_base:
            raise ValueError("the SRB of a fixed-base model is meaningless: load the robot with "
                             "floating_base=True")
        q = np.array(model.check_q(q_nominal), dtype=float)
        q[:7] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        if not np.isfinite(q).all():
            raise ValueError("q_nominal has non-finite joint positions")
        A_G = model.centroidal_momentum_matrix(q)
        mass = float(model.mass[1:].sum())
        return cls(mass, A_G[3:6, 3:6], model.com(q), np.asarray(model.gravity, dtype=float))

    @property
    def weight(self) -> float:
        """``m |g|`` [N]: the unit of the MPC's force variables."""
        return self.mass * float(np.linalg.norm(self.gravity))

    def world_inertia(self, rotation: np.ndarray) -> np.ndarray:
        """``C I C^T``: the inertia about the CoM in world axes for the base orientation ``rotation``."""
        inertia: np.ndarray = rotation @ self.inertia @ rotation.T
        return inertia

    def derivative(self, x: np.ndarray, forces: np.ndarray, feet: np.ndarray) -> np.ndarray:
        """``dx/dt`` of the full (not linearised) SRB: Euler-angle rates from ``omega`` (Robot Dynamics
        Essential (10)-(12)),
        ``p' = v``, Euler's equation ``I_w omega' + omega x I_w omega = sum r_i x f_i`` and
        ``m v' = sum f_i + m g``; ``forces`` and ``feet`` (n x 3, world): the ground forces and where they
        act."""
        rpy, p, w = x[ORIENTATION], x[POSITION], x[ANGULAR_VELOCITY]
        C = rpy_matrices(rpy[None])[0]
        I_w = self.world_inertia(C)
        forces = np.asarray(forces, dtype=float).reshape(-1, 3)
        moment = np.cross(np.asarray(feet, dtype=float).reshape(-1, 3) - p, forces).sum(axis=0)
        out = np.empty(STATE_SIZE)
        out[ORIENTATION] = rates_from_angular_velocity("euler_zyx", rpy[::-1], w)[::-1]
        out[POSITION] = x[LINEAR_VELOCITY]
        out[ANGULAR_VELOCITY] = np.linalg.solve(I_w, moment - np.cross(w, I_w @ w))
        out[LINEAR_VELOCITY] = forces.sum(axis=0) / self.mass + self.gravity
        return out

    def state_from_floating_base(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The SRB state of a floating-base configuration ``q = [p_b, quat (x, y, z, w), joints]`` and
        velocity ``v = [v_b, omega_b (base frame), joints]`` (docs/conventions.md), the CoM taken rigidly at
        ``com_offset`` in the base frame."""
        C = quat_to_matrix(q[3:7])
        w_b = np.asarray(v[3:6], dtype=float)
        x = np.empty(STATE_SIZE)
        x[ORIENTATION] = matrix_to_euler(C, "zyx")[::-1]
        x[POSITION] = q[0:3] + C @ self.com_offset
        x[ANGULAR_VELOCITY] = C @ w_b
        x[LINEAR_VELOCITY] = C @ (v[0:3] + np.cross(w_b, self.com_offset))
        return x

    def base_positions(self, states: np.ndarray) -> np.ndarray:
        """The base origin of each SRB state (rows of ``states``, n x 12): ``p - C(rpy) com_offset``."""
        positions: np.ndarray = states[:, POSITION] - rpy_matrices(states[:, ORIENTATION]) @ self.com_offset
        return positions
