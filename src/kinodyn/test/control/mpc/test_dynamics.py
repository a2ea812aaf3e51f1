"""The linearised SRB's discretisation: exact against a direct integration of its continuous equations and
against the matrix exponential, and close to the full nonlinear SRB where the linearisation holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.mpc.dynamics import continuous_dynamics, discretise
from scipy.integrate import solve_ivp
from scipy.linalg import expm

if TYPE_CHECKING:
    from .conftest import Robot

DT = 0.03


def random_step(robot: Robot, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """A random yaw, moment arms of 4 feet, state and force input (units of the weight)."""
    yaw = rng.uniform(-np.pi, np.pi, 1)
    arms = rng.uniform(-0.4, 0.4, (1, 4, 3))
    arms[..., 2] = rng.uniform(-0.6, -0.3, 4)
    x0 = rng.normal(size=12)
    u = rng.uniform(-0.1, 0.4, 12)
    return yaw, arms, x0, u


def test_discrete_step_equals_integrating_the_continuous_linear_dynamics(robot: Robot) -> None:
    rng = np.random.default_rng(1)
    for _ in range(10):
        yaw, arms, x0, u = random_step(robot, rng)
        Ac, Bc, cc = continuous_dynamics(robot.body, yaw, arms, robot.body.weight)
        A, B, c = discretise(Ac, Bc, cc, DT)
        run = solve_ivp(lambda t, x, Ac=Ac, Bc=Bc, u=u, cc=cc: Ac[0] @ x + Bc[0] @ u + cc, (0.0, DT), x0,
                        method="DOP853", rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(A[0] @ x0 + B[0] @ u + c[0], run.y[:, -1], rtol=1e-10, atol=1e-11)


def test_discretisation_equals_the_matrix_exponential(robot: Robot) -> None:
    yaw, arms, _, _ = random_step(robot, np.random.default_rng(2))
    Ac, Bc, cc = continuous_dynamics(robot.body, yaw, arms, robot.body.weight)
    np.testing.assert_array_equal(Ac[0] @ Ac[0], 0.0)
    augmented = np.zeros((25, 25))
    augmented[:12, :12], augmented[:12, 12:24], augmented[:12, 24] = Ac[0], Bc[0], cc
    phi = expm(augmented * DT)
    A, B, c = discretise(Ac, Bc, cc, DT)
    np.testing.assert_allclose(A[0], phi[:12, :12], atol=1e-13)
    np.testing.assert_allclose(B[0], phi[:12, 12:24], atol=1e-13)
    np.testing.assert_allclose(c[0], phi[:12, 24], atol=1e-13)


@pytest.mark.parametrize("yaw", [0.0, 1.0, -2.5])
def test_one_step_matches_the_nonlinear_srb_near_level(robot: Robot, yaw: float) -> None:
    """Level, slowly turning body, forces about the weight: the nonlinear SRB (Euler-rate map, gyroscopic
    term) integrated over one step agrees with the linear step to second order in the small angles and
    rates; a linearisation about another yaw (0) does not. The moment arms are held as the linear model holds
    them over a step (the feet move with the CoM: the MPC takes each step's arms from the reference CoM)."""
    body = robot.body
    x0 = robot.x0.copy()
    x0[2] = yaw
    x0[6:9] = (0.05, -0.04, 0.1)
    x0[9:12] = (0.3, -0.2, 0.05)
    feet = robot.contacts.copy()
    feet[:, :2] = feet[:, :2] @ np.array([[np.cos(yaw), np.sin(yaw)], [-np.sin(yaw), np.cos(yaw)]])
    feet[:, :2] += x0[3:5]
    forces = np.array([[5.0, 2.0, 95.0], [-3.0, 1.0, 80.0], [4.0, -2.0, 90.0], [-1.0, -3.0, 85.0]])
    run = solve_ivp(lambda t, x: body.derivative(x, forces, feet + x[3:6] - x0[3:6]), (0.0, DT), x0,
                    rtol=1e-12, atol=1e-13)
    arms = (feet - x0[3:6])[None]
    step = {}
    for linearised_at in (yaw, 0.0):
        A, B, c = discretise(*continuous_dynamics(body, np.array([linearised_at]), arms, body.weight), DT)
        step[linearised_at] = A[0] @ x0 + B[0] @ (forces.ravel() / body.weight) + c[0]
    error = np.abs(step[yaw] - run.y[:, -1])
    change = np.abs(run.y[:, -1] - x0)
    assert error.max() < 3e-3 * change.max()
    if yaw:
        assert np.abs(step[0.0] - run.y[:, -1]).max() > 30.0 * error.max()
