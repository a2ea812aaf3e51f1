"""The single rigid body: composite inertia against Pinocchio's centroidal composite inertia (ccrba), the
state map against the model's own CoM and centroidal momentum, the nonlinear dynamics' invariants."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest
from kinodyn.control.mpc import SingleRigidBody
from kinodyn.spatial.rotations import quat_to_matrix
from scipy.integrate import solve_ivp

import kinodyn as kd

if TYPE_CHECKING:
    from .conftest import Robot

ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
SOLO12 = ROBOTS / "solo_description" / "robots" / "solo12.urdf"
URDF = Path(__file__).resolve().parents[5] / "urdf" / "quadruped.urdf"


def pinocchio_composite(path: Path, model: kd.Model, q: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Pinocchio's total mass, CoM and centroidal composite rotational inertia at kinodyn's ``q``, base
    at the origin (joints mapped by name)."""
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    pd = pm.createData()
    pq = pin.neutral(pm)
    for name in model.joint_names:
        pq[pm.joints[pm.getJointId(name)].idx_q] = q[7 + model.joint_id(name)]
    pin.ccrba(pm, pd, pq, np.zeros(pm.nv))
    assert np.allclose(pd.Ig.lever, 0.0, atol=1e-12)  # Ig is about the CoM
    return pd.Ig.mass, pin.centerOfMass(pm, pd, pq), pd.Ig.inertia


def test_composite_inertia_matches_pinocchio_ccrba_at_the_nominal_stance(robot: Robot) -> None:
    mass, com, inertia = pinocchio_composite(URDF, robot.model, robot.q)
    body = robot.body
    assert body.mass == pytest.approx(mass, rel=1e-12)
    assert body.mass == pytest.approx(36.0, rel=1e-12)
    np.testing.assert_allclose(body.com_offset, com, atol=1e-12)
    np.testing.assert_allclose(body.inertia, inertia, rtol=1e-10, atol=1e-12)
    # not the base link's own inertia (20 kg box 0.6 x 0.3 x 0.15 m): the legs add most of the roll inertia
    base = 20.0 / 12.0 * np.diag([0.3**2 + 0.15**2, 0.6**2 + 0.15**2, 0.6**2 + 0.3**2])
    assert body.inertia[0, 0] > 2.0 * base[0, 0]


def test_composite_inertia_matches_pinocchio_on_solo12_at_random_joint_positions() -> None:
    model = kd.Model.from_urdf(SOLO12, floating_base=True)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = model.random_configuration(rng)
        body = SingleRigidBody.from_model(model, q)
        mass, com, inertia = pinocchio_composite(SOLO12, model, q)
        assert body.mass == pytest.approx(mass, rel=1e-12)
        np.testing.assert_allclose(body.com_offset, com, atol=1e-12)
        np.testing.assert_allclose(body.inertia, inertia, rtol=1e-10, atol=1e-12)


def test_state_of_a_rigid_motion_matches_the_models_centroidal_quantities(robot: Robot) -> None:
    """At the nominal joints with any base pose and base twist (joints still): the SRB CoM is the model's,
    ``m v`` and ``I_w omega`` are the centroidal momentum ``A_G v``, and the base position comes back."""
    model, body = robot.model, robot.body
    rng = np.random.default_rng(0)
    for _ in range(10):
        q = robot.q.copy()
        q[:3] = rng.normal(size=3)
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
        v = np.zeros(model.nv)
        v[:6] = rng.normal(size=6)
        x = body.state_from_floating_base(q, v)
        np.testing.assert_allclose(x[3:6], model.com(q), atol=1e-12)
        momentum = model.centroidal_momentum_matrix(q) @ v
        np.testing.assert_allclose(body.mass * x[9:12], momentum[:3], atol=1e-10)
        C = quat_to_matrix(q[3:7])
        np.testing.assert_allclose(body.world_inertia(C) @ x[6:9], momentum[3:], atol=1e-10)
        np.testing.assert_allclose(kd.spatial.euler_to_matrix(x[2::-1], "zyx"), C, atol=1e-12)
        np.testing.assert_allclose(body.base_positions(x[None])[0], q[:3], atol=1e-12)


def test_free_flight_conserves_angular_momentum_and_energy(robot: Robot) -> None:
    """No forces: the nonlinear SRB tumbles with constant world angular momentum ``I_w omega`` and
    rotational energy, and falls with gravity."""
    body = robot.body
    x0 = np.zeros(12)
    x0[:3] = (0.2, -0.3, 0.5)
    x0[6:9] = (1.0, -2.0, 3.0)
    none = np.zeros((0, 3))

    def invariants(x: np.ndarray) -> tuple[np.ndarray, float]:
        I_w = body.world_inertia(kd.spatial.euler_to_matrix(x[2::-1], "zyx"))
        return I_w @ x[6:9], 0.5 * x[6:9] @ I_w @ x[6:9]

    run = solve_ivp(lambda t, x: body.derivative(x, none, none), (0.0, 0.5), x0, rtol=1e-11, atol=1e-12)
    h0, e0 = invariants(x0)
    h1, e1 = invariants(run.y[:, -1])
    assert not np.allclose(run.y[6:9, -1], x0[6:9], atol=1e-2)  # it does tumble
    np.testing.assert_allclose(h1, h0, rtol=1e-8)
    assert e1 == pytest.approx(e0, rel=1e-8)
    np.testing.assert_allclose(run.y[9:12, -1], 0.5 * body.gravity, atol=1e-9)


def test_bad_bodies_are_refused(robot: Robot) -> None:
    fixed = kd.Model.from_urdf(URDF)
    with pytest.raises(ValueError, match="fixed-base"):
        SingleRigidBody.from_model(fixed, fixed.neutral())
    with pytest.raises(ValueError, match="triangle"):
        SingleRigidBody(1.0, np.diag([1.0, 1.0, 3.0]), np.zeros(3), robot.body.gravity)
    with pytest.raises(ValueError, match="mass"):
        SingleRigidBody(0.0, np.eye(3), np.zeros(3), robot.body.gravity)
    with pytest.raises(ValueError, match="gravity"):
        SingleRigidBody(1.0, np.eye(3), np.zeros(3), np.zeros(3))
