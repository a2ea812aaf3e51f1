"""Forward-dynamics derivatives against Pinocchio's ``computeABADerivatives`` (test-only reference), and
the discrete dynamics' Jacobians against central differences of its steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from kinodyn.control.trajopt import RobotDynamics, forward_dynamics_derivatives

import kinodyn as kd

URDF = Path(__file__).resolve().parents[5] / "urdf"
ARMS = ["planar_2link.urdf", "arm7.urdf"]
STATES = 20


def _states(model: kd.Model, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Q = np.array([model.random_configuration(rng) for _ in range(STATES)])
    V = rng.normal(scale=2.0, size=Q.shape)
    TAU = rng.normal(scale=0.3, size=Q.shape) * model.effort_limit
    return Q, V, TAU


@pytest.mark.parametrize("name", ARMS)
def test_forward_dynamics_derivatives_equal_pinocchio(name: str) -> None:
    """a, dFD/dq, dFD/dv and M^-1 equal Pinocchio's within 1e-9 of each matrix's largest entry (the RNEA
    central differences in q have an O(h^2) truncation error, those in v none)."""
    model = kd.Model.from_urdf(URDF / name)
    pm = pin.buildModelFromUrdf(str(URDF / name))
    pd = pm.createData()
    Q, V, TAU = _states(model, np.random.default_rng(7))
    d = forward_dynamics_derivatives(model, Q, V, TAU)
    for k in range(STATES):
        pin.computeABADerivatives(pm, pd, Q[k], V[k], TAU[k])
        minv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T  # Pinocchio fills the upper triangle
        for mine, ref in ((d.a[k], pd.ddq), (d.da_dq[k], pd.ddq_dq), (d.da_dv[k], pd.ddq_dv),
                          (d.da_dtau[k], minv)):
            np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-9 * max(1.0, np.abs(ref).max()))
        np.testing.assert_allclose(d.a[k], model.aba(Q[k], V[k], TAU[k]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ARMS)
def test_step_jacobians_equal_central_differences(name: str) -> None:
    """f_x and f_u of the semi-implicit Euler step (with arm7's joint damping and friction; velocities
    small enough for the regularised friction's curvature to matter) equal central differences of ``step``
    within 1e-6 of each Jacobian's largest entry."""
    model = kd.Model.from_urdf(URDF / name)
    dyn = RobotDynamics(model, dt=5e-3)
    rng = np.random.default_rng(3)
    Q, V, U = _states(model, rng)
    V *= 0.05
    X = np.concatenate([Q, V], axis=1)
    fx, fu = dyn.jacobians(X, U)
    h = 1e-6
    for k in range(0, STATES, 4):
        num_x = np.column_stack([(dyn.step(X[k] + h * e, U[k]) - dyn.step(X[k] - h * e, U[k])) / (2 * h)
                                 for e in np.eye(dyn.nx)])
        num_u = np.column_stack([(dyn.step(X[k], U[k] + h * e) - dyn.step(X[k], U[k] - h * e)) / (2 * h)
                                 for e in np.eye(dyn.nu)])
        np.testing.assert_allclose(fx[k], num_x, rtol=0, atol=1e-6 * np.abs(num_x).max())
        np.testing.assert_allclose(fu[k], num_u, rtol=0, atol=1e-6 * np.abs(num_u).max())


def test_step_equals_the_simulators_semi_implicit_euler() -> None:
    """``RobotDynamics.step`` is the simulator's semi-implicit Euler step with the URDF's joint damping and
    friction (arm7 has both): 100 steps of random torques agree to 1e-12."""
    model = kd.Model.from_urdf(URDF / "arm7.urdf")
    assert np.all(model.damping > 0)
    assert np.all(model.friction > 0)
    dyn = RobotDynamics(model, dt=2e-3)
    sim = kd.sim.Simulator(model, dt=2e-3, integrator="semi_implicit_euler", joint_limits=False)
    rng = np.random.default_rng(5)
    x = np.concatenate([model.neutral(), np.zeros(model.nv)])
    sim.reset(x[:7], x[7:])
    for _ in range(100):
        u = rng.uniform(-0.5, 0.5, size=7) * model.effort_limit
        x = dyn.step(x, u)
        sim.step(u)
        np.testing.assert_allclose(x, np.concatenate([sim.q, sim.v]), rtol=0, atol=1e-12)


def test_floating_base_and_bad_steps_are_refused() -> None:
    with pytest.raises(ValueError, match="fixed-base"):
        RobotDynamics(kd.Model.from_urdf(URDF / "quadruped.urdf", floating_base=True), dt=1e-3)
    arm = kd.Model.from_urdf(URDF / "planar_2link.urdf")
    for dt in (0.0, -1e-3, np.nan):
        with pytest.raises(ValueError, match="dt"):
            RobotDynamics(arm, dt=dt)
    with pytest.raises(ValueError, match="friction_velocity"):
        RobotDynamics(arm, dt=1e-3, friction_velocity=0.0)
