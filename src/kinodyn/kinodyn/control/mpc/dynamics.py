"""The SRB dynamics linearised about the reference yaw, and their exact discretisation over one step.

Convex MPC for legged robots (Di Carlo, Wensing, Katz, Bledt, Kim, "Dynamic locomotion in the MIT Cheetah 3
through convex model-predictive control", IROS 2018), the reduced model of Robot Dynamics Essential §4.4:
with roll and
pitch small, the Euler-angle rates are ``Rz(yaw)^T omega`` (Robot Dynamics Essential (10)-(12) at zero roll
and pitch), the
world inertia is ``Rz(yaw) I Rz(yaw)^T`` and the gyroscopic term ``omega x I omega`` is dropped, so with
the yaw of each step taken from the reference and the moment arms ``r_i = foot_i - p`` from the reference
CoM, each step is linear in ``(x, f)``:

    d/dt [rpy; p; omega; v] = [Rz^T omega; v; I_w^-1 sum r_i x f_i; sum f_i / m + g].

Written ``x' = Ac x + Bc u + cc`` (``u``: the forces in units of ``scale``, the weight), ``Ac`` maps only
``(omega, v)`` into ``(rpy', p')`` and nothing into ``(omega', v')``, so ``Ac^2 = 0`` and the zero-order-hold
discretisation over ``h`` is exact in closed form: ``A = I + h Ac``, ``[B, c] = (h I + h^2/2 Ac) [Bc, cc]``.
"""

from __future__ import annotations

import numpy as np

from kinodyn.control.mpc.srb import (
    ANGULAR_VELOCITY,
    LINEAR_VELOCITY,
    ORIENTATION,
    POSITION,
    STATE_SIZE,
    SingleRigidBody,
)

_EYE3 = np.eye(3)


def yaw_rotations(yaw: np.ndarray) -> np.ndarray:
    """``Rz(yaw)`` for each entry of ``yaw`` (n,) -> (n, 3, 3)."""
    c, s = np.cos(yaw), np.sin(yaw)
    out = np.zeros((yaw.size, 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1], out[:, 2, 2] = c, -s, s, c, 1.0
    return out


def continuous_dynamics(body: SingleRigidBody, yaw: np.ndarray, arms: np.ndarray,
                        scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Ac, Bc, cc)`` of the linearised SRB (module doc) for each step: ``yaw`` (N,) the yaw of the
    linearisation, ``arms`` (N, n_feet, 3) the moment arms ``foot - p`` (world), ``scale`` [N] the unit of
    the force inputs. Shapes (N, 12, 12), (N, 12, 3 n_feet), (12,)."""
    steps, feet = arms.shape[0], arms.shape[1]
    Rz = yaw_rotations(yaw)
    Ac = np.zeros((steps, STATE_SIZE, STATE_SIZE))
    Ac[:, ORIENTATION, ANGULAR_VELOCITY] = Rz.transpose(0, 2, 1)
    Ac[:, POSITION, LINEAR_VELOCITY] = _EYE3
    inverse_inertia = Rz @ np.linalg.inv(body.inertia) @ Rz.transpose(0, 2, 1)
    skews = np.zeros((steps, feet, 3, 3))
    x, y, z = arms[..., 0], arms[..., 1], arms[..., 2]
    skews[..., 0, 1], skews[..., 0, 2], skews[..., 1, 2] = -z, y, -x
    skews[..., 1, 0], skews[..., 2, 0], skews[..., 2, 1] = z, -y, x
    Bc = np.zeros((steps, STATE_SIZE, 3 * feet))
    Bc4 = Bc.reshape(steps, STATE_SIZE, feet, 3)
    Bc4[:, ANGULAR_VELOCITY] = scale * np.einsum("kab,kibc->kaic", inverse_inertia, skews)
    Bc4[:, LINEAR_VELOCITY] = (scale / body.mass) * _EYE3[None, :, None, :]
    cc = np.zeros(STATE_SIZE)
    cc[LINEAR_VELOCITY] = body.gravity
    return Ac, Bc, cc


def discretise(Ac: np.ndarray, Bc: np.ndarray, cc: np.ndarray,
               dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact zero-order-hold discretisation over ``dt`` of ``continuous_dynamics``' output (module doc:
    ``Ac^2 = 0``): ``(A, B, c)`` with ``x_{k+1} = A_k x_k + B_k u_k + c_k``; ``c`` (N, 12)."""
    A = np.eye(STATE_SIZE) + dt * Ac
    B = dt * Bc + (0.5 * dt * dt) * (Ac @ Bc)
    c = dt * cc + (0.5 * dt * dt) * (Ac @ cc)
    return A, B, c
