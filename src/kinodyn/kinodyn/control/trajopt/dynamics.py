"""Discrete robot dynamics ``x_{k+1} = f(x_k, u_k)`` for trajectory optimisation (Robot Dynamics Essential
§4.2.1, (101)).

State ``x = (q, v)`` (2 nv), control ``u`` = joint torques (nv) held over the step of ``dt`` seconds.
The continuous dynamics are those of ``kinodyn.sim.Simulator`` without contacts (Robot Dynamics Essential
(79)):
``a = FD(q, v, u - tau_f(v))`` with the URDF's joint damping and regularised Coulomb friction
``tau_f(v) = damping v + friction v / sqrt(v^2 + friction_velocity^2)``. The integrator is semi-implicit
(symplectic) Euler, as the simulator's ``"semi_implicit_euler"``:

    v_{k+1} = v_k + dt a(q_k, v_k, u_k),    q_{k+1} = q_k + dt v_{k+1}.

Its Jacobians ``f_x``, ``f_u`` follow from ``derivatives.forward_dynamics_derivatives`` by the chain rule.
The control bounds are the URDF efforts, ``|u| <= effort`` (what the simulator saturates at).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from kinodyn.control.trajopt.derivatives import check_fixed_base, forward_dynamics_derivatives

if TYPE_CHECKING:
    from kinodyn.model import Model


class DiscreteDynamics(Protocol):
    """What ``ILQR`` needs of a system: sizes, control bounds, one step, and the Jacobians of steps."""

    nx: int
    nu: int
    u_lower: np.ndarray  # (nu,), may hold -inf
    u_upper: np.ndarray  # (nu,), may hold +inf

    def step(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """``x_{k+1}`` from ``x_k`` (nx,) and ``u_k`` (nu,)."""

    def jacobians(self, X: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(f_x (N, nx, nx), f_u (N, nx, nu))`` at the rows of ``X`` (N, nx) and ``U`` (N, nu)."""


def positive(value: float, name: str) -> float:
    """``value`` as a float; ``ValueError`` unless finite and > 0."""
    value = float(value)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    result: float = value
    return result


class RobotDynamics:
    """Semi-implicit Euler steps of a fixed-base ``Model`` under joint torques (see the module doc).

    ``RobotDynamics(model, dt, friction_velocity=0.1)``: ``friction_velocity`` [rad/s or m/s] is the
    regularisation of the joints' Coulomb friction (the simulator's ``joint_friction_velocity``).
    """

    def __init__(self, model: Model, dt: float, friction_velocity: float = 0.1) -> None:
        check_fixed_base(model)
        self.model = model
        self.dt = positive(dt, "dt")
        self.friction_velocity = positive(friction_velocity, "friction_velocity")
        self.nv = model.nv
        self.nx = 2 * model.nv
        self.nu = model.nv
        self.u_upper = np.array(model.effort_limit, dtype=np.float64)
        self.u_lower = -self.u_upper
        self._damping = np.array(model.damping, dtype=np.float64)
        self._friction = np.array(model.friction, dtype=np.float64)

    def joint_friction(self, v: np.ndarray) -> np.ndarray:
        """``tau_f(v)``: the damping and friction torques the joints oppose to the velocities ``v``."""
        result: np.ndarray = (self._damping * v
                              + self._friction * v / np.sqrt(v * v + self.friction_velocity**2))
        return result

    def joint_friction_slope(self, v: np.ndarray) -> np.ndarray:
        """``d tau_f / dv`` (diagonal, same shape as ``v``)."""
        eps2 = self.friction_velocity**2
        result: np.ndarray = self._damping + self._friction * eps2 / (v * v + eps2) ** 1.5
        return result

    def step(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """One semi-implicit Euler step from ``x = (q, v)`` with torques ``u`` held over ``dt``."""
        nv, dt = self.nv, self.dt
        v = x[nv:]
        out = np.empty(self.nx)
        out[nv:] = v + dt * self.model.aba(x[:nv], v, u - self.joint_friction(v))
        out[:nv] = x[:nv] + dt * out[nv:]
        return out

    def jacobians(self, X: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(f_x, f_u)`` of ``step`` at each row of ``X``, ``U``: the forward-dynamics derivatives
        (``derivatives``), the friction slope on the velocity columns, then the integrator's chain rule."""
        n, nv, dt = X.shape[0], self.nv, self.dt
        Q, V = X[:, :nv], X[:, nv:]
        d = forward_dynamics_derivatives(self.model, Q, V, U - self.joint_friction(V))
        da_dv = d.da_dv - d.da_dtau * self.joint_friction_slope(V)[:, None, :]
        dv_dx = np.concatenate([dt * d.da_dq, np.eye(nv) + dt * da_dv], axis=2)  # (n, nv, 2 nv)
        dv_du = dt * d.da_dtau
        dq_dx = np.concatenate([np.broadcast_to(np.eye(nv), (n, nv, nv)), np.zeros((n, nv, nv))], axis=2)
        dq_dx = dq_dx + dt * dv_dx
        return np.concatenate([dq_dx, dv_dx], axis=1), np.concatenate([dt * dv_du, dv_du], axis=1)
