"""The physics-backend protocol (``kinodyn.sim.backend``) on both backends, kinodyn's ``Simulator`` and
``MujocoSimulator``, against closed forms, MuJoCo's own kinematics and each other.

- free fall of a spinning box: the closed form (RK4), the discrete closed form of semi-implicit Euler;
- the state conversion: kinodyn's (q, v) written into MuJoCo and read back unchanged, and MuJoCo's body
  placements and body velocities equal kinodyn's frame placements and ``local`` frame twists;
- contact-free robots under zero torque, kinodyn vs MuJoCo over 1 s: the 2-link arm (fixed base) and the
  quadruped in the air (floating base, so the free-joint velocity conversion is in the loop);
- the quadruped standing under joint PD: feet carry the weight (sum of normal forces = m g within 1 %),
  the IMU reads +g up, a lateral push moves the base that way; an off-centre push in the air changes the
  linear momentum by the impulse, and the angular momentum as the other backend does;
- effort saturation, reading the MuJoCo contacts leaves the trajectory bit-identical, divergence raises.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from kinodyn.sim.backend import PhysicsBackend, backend_names, create_backend
from kinodyn.sim.mujoco_backend import MujocoSimulator, from_mujoco, to_mujoco

import kinodyn as kd
from kinodyn import sim

from .conftest import (
    BOX_MASS,
    BOX_URDF,
    PLANAR_URDF,
    QUADRUPED_STANDING_HEIGHT,
    QUADRUPED_STANDING_JOINTS,
    QUADRUPED_URDF,
)

DT = 1e-3
KP, KD = 800.0, 10.0
QUADRUPED = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
CROSS_CHECKED = ("kinodyn", "mujoco")  # the two engines whose trajectories are compared


def quadruped(backend: str, contact: bool = True, integrator: str = "rk4",
              **options: object) -> PhysicsBackend:
    spheres = sim.ContactModel(sim.collision_spheres(QUADRUPED_URDF)) if contact else None
    return create_backend(backend, QUADRUPED_URDF, QUADRUPED, dt=DT, integrator=integrator, contact=spheres,
                          **options)


def standing_q() -> np.ndarray:
    q = QUADRUPED.neutral()
    q[2] = QUADRUPED_STANDING_HEIGHT
    q[7:] = QUADRUPED_STANDING_JOINTS
    return q


def pd(s: PhysicsBackend) -> np.ndarray:
    return KP * (QUADRUPED_STANDING_JOINTS - s.q[7:]) - KD * s.v[6:]


def _run_pd(s: PhysicsBackend, steps: int) -> None:
    for _ in range(steps):
        s.step(pd(s))


def unactuated_run(s: PhysicsBackend, steps: int, n_efforts: int) -> np.ndarray:
    """``[q, v]`` after each of ``steps`` steps of ``s`` under ``n_efforts`` zero efforts, one row a step."""
    trajectory = []
    for _ in range(steps):
        s.step(np.zeros(n_efforts))
        trajectory.append(np.concatenate([s.q, s.v]))
    return np.array(trajectory)


def random_state(m: kd.Model, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    q = m.random_configuration(rng)
    return q, rng.normal(size=m.nv)


@pytest.mark.parametrize("backend", backend_names())
def test_both_backends_implement_the_protocol(backend: str) -> None:
    assert isinstance(quadruped(backend), PhysicsBackend)


@pytest.mark.parametrize("backend", backend_names())
@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_free_fall_of_a_spinning_box_is_the_closed_form(backend: str, integrator: str) -> None:
    """Torque-free spin about a principal axis (constant body rate) while the centre of mass falls (with
    RK4; semi-implicit Euler without spin: kinodyn's integrates on SE(3), MuJoCo's on R^3 x SO(3), both
    first-order, so with spin their positions differ by O(dt))."""
    m = kd.Model.from_urdf(BOX_URDF, floating_base=True)
    s = create_backend(backend, BOX_URDF, m, dt=DT, integrator=integrator)
    q0 = m.neutral()
    q0[:3] = [0.1, -0.2, 3.0]
    q0[3:7] = kd.spatial.matrix_to_quat(kd.spatial.so3_exp([0.3, -0.2, 0.5]))
    C0 = kd.spatial.quat_to_matrix(q0[3:7])
    w = np.array([0.0, 0.0, 2.0 if integrator == "rk4" else 0.0])  # about the box's z principal axis
    v_world = np.array([0.5, 0.0, 1.0])
    s.reset(q0, np.concatenate([C0.T @ v_world, w]))
    n = 500
    for _ in range(n):
        s.step(np.zeros(6))
    t = n * DT
    g = m.gravity
    if integrator == "rk4":
        position = q0[:3] + v_world * t + 0.5 * g * t**2
    else:  # v_k = v0 + k g dt, then x += v_k dt:  x_n = x0 + v0 t + g dt^2 n (n + 1) / 2
        position = q0[:3] + v_world * t + g * DT**2 * n * (n + 1) / 2
    np.testing.assert_allclose(s.q[:3], position, atol=1e-9)
    C = C0 @ kd.spatial.so3_exp(w * t)
    np.testing.assert_allclose(kd.spatial.quat_to_matrix(s.q[3:7]), C, atol=1e-9)
    np.testing.assert_allclose(s.v[:3], C.T @ (v_world + g * t), atol=1e-9)  # base-frame linear velocity
    np.testing.assert_allclose(s.v[3:], w, atol=1e-9)
    assert s.t == pytest.approx(t)


def test_state_conversion_round_trip_and_mujoco_kinematics_agree() -> None:
    s = quadruped("mujoco")
    assert isinstance(s, MujocoSimulator)
    rng = np.random.default_rng(3)
    mj, d = s.mj, s.data
    for _ in range(20):
        q, v = random_state(QUADRUPED, rng)
        qpos, qvel = to_mujoco(q, v)
        q_back, v_back = from_mujoco(qpos, qvel)
        np.testing.assert_allclose(q_back, q[:7], atol=1e-15)
        np.testing.assert_allclose(v_back, v[:6], atol=1e-14)
        s.reset(q, v)
        np.testing.assert_allclose(s.q, q, atol=1e-15)
        np.testing.assert_allclose(s.v, v, atol=1e-14)
        mujoco.mj_forward(mj, d)
        for link in ("base_link", "LF_SHANK", "RH_FOOT", "imu_link"):
            body = mj.body(link).id
            T = QUADRUPED.frame_placement(q, link)
            np.testing.assert_allclose(d.xpos[body], T[:3, 3], atol=1e-12)
            np.testing.assert_allclose(d.xmat[body].reshape(3, 3), T[:3, :3], atol=1e-12)
            twist = np.empty(6)  # [angular; linear] at the body origin, body axes (flg_local = 1)
            mujoco.mj_objectVelocity(mj, d, mujoco.mjtObj.mjOBJ_XBODY, body, twist, 1)
            ours = QUADRUPED.frame_jacobian(q, link, "local") @ v  # [linear; angular], frame axes
            np.testing.assert_allclose(twist[3:], ours[:3], atol=1e-12)
            np.testing.assert_allclose(twist[:3], ours[3:], atol=1e-12)


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_arm_under_zero_torque_kinodyn_and_mujoco_trajectories_agree(integrator: str) -> None:
    m = kd.Model.from_urdf(PLANAR_URDF)
    runs = []
    for backend in CROSS_CHECKED:
        # no joint limits: the arm reaches its +-pi limit near 1 s, where kinodyn's inelastic impulse and
        # MuJoCo's soft limit constraint differ by design
        s = create_backend(backend, PLANAR_URDF, m, dt=DT, integrator=integrator, joint_limits=False)
        s.reset([0.3, -0.5], [1.0, 2.0])
        runs.append(unactuated_run(s, 1000, 2))
    worst = np.abs(runs[0] - runs[1]).max()
    print(f"\n{integrator}: 2-link arm, max |x_kinodyn - x_mujoco| over 1 s = {worst:.1e}")
    assert worst < 5e-13  # measured 5.6e-14 (RK4), 5.2e-14 (semi-implicit Euler)
    assert np.ptp(runs[0][:, 0]) > 0.5  # it swung


def test_quadruped_in_the_air_kinodyn_and_mujoco_trajectories_agree() -> None:
    """A tumbling floating base: the free joint's velocity conversion is checked at every step."""
    rng = np.random.default_rng(11)
    q0 = standing_q()
    q0[2] = 2.0
    q0[3:7] = kd.spatial.matrix_to_quat(kd.spatial.so3_exp([0.2, -0.1, 0.4]))
    v0 = np.concatenate([[0.3, -0.2, 1.0, 0.8, -0.5, 1.2], 0.5 * rng.normal(size=12)])
    runs = []
    for backend in CROSS_CHECKED:
        s = quadruped(backend, contact=False, joint_limits=False)
        s.reset(q0, v0)
        runs.append(unactuated_run(s, 500, 12))
    worst = np.abs(runs[0] - runs[1]).max()
    print(f"\nquadruped in the air, RK4: max |x_kinodyn - x_mujoco| over 0.5 s = {worst:.1e}")
    assert worst < 2e-12  # measured 2.2e-13
    assert np.abs(runs[0][-1, 7:19] - q0[7:]).max() > 0.05  # the joints moved


@pytest.mark.parametrize("backend", backend_names())
def test_quadruped_stands_on_its_feet_imu_reads_up_and_a_push_moves_it(backend: str) -> None:
    s = quadruped(backend)
    s.reset(standing_q())
    imu = s.add_imu("imu_link")
    heights = []
    for _ in range(2000):
        s.step(pd(s))
        heights.append(s.q[2])
    weight = -QUADRUPED.gravity[2] * QUADRUPED.mass.sum()
    print(f"\n{backend}: base height {min(heights):.4f} .. {max(heights):.4f} m, feet at z = "
          f"{s.contact_points[:, 2].round(5)}, normal forces {s.contact_forces[:, 2].round(2)} N")
    assert np.abs(np.array(heights) - QUADRUPED_STANDING_HEIGHT).max() < 0.015
    assert s.in_contact.all()
    assert s.contact_forces[:, 2].sum() == pytest.approx(weight, rel=0.01)
    assert np.all(s.contact_forces[:, 2] > 0.2 * weight / 4)  # each foot carries a share
    assert np.all((s.contact_points[:, 2] < 0.0) & (s.contact_points[:, 2] > -0.005))  # a few mm deep
    np.testing.assert_allclose(imu.reading.linear_acceleration, [0.0, 0.0, 9.81], atol=1e-3)
    np.testing.assert_allclose(imu.reading.angular_velocity, 0.0, atol=1e-4)
    y0 = s.q[1]
    s.apply_wrench("base_link", [0.0, 150.0, 0.0, 0.0, 0.0, 0.0], 0.1)
    for _ in range(100):
        s.step(pd(s))
    assert s.v[1] > 0.05
    assert s.q[1] > y0 + 0.002
    assert abs(s.v[0]) < 0.05


def test_off_centre_push_in_the_air_changes_momentum_alike_on_both_backends() -> None:
    force, torque, duration = np.array([0.0, 80.0, 10.0]), np.array([0.0, 0.0, 3.0]), 0.02
    q0 = standing_q()
    q0[2] = 2.0
    momenta = []
    for backend in CROSS_CHECKED:
        s = quadruped(backend, contact=False)
        s.reset(q0)
        s.apply_wrench("LF_SHANK", np.concatenate([force, torque]), duration)
        for _ in range(40):
            s.step(np.zeros(12))
        h = QUADRUPED.centroidal_momentum_matrix(s.q) @ s.v  # [m v_G; h_G], world axes
        np.testing.assert_allclose(h[:3], force * duration + QUADRUPED.mass.sum() * QUADRUPED.gravity * s.t,
                                   atol=1e-9)
        momenta.append(h[3:])
    lever = QUADRUPED.frame_placement(q0, "LF_SHANK")[:3, 3] - QUADRUPED.com(q0)
    first_order = (np.cross(lever, force) + torque) * duration  # the lever barely moves in 20 ms
    print(f"\nangular momentum after the push: kinodyn {momenta[0]}, mujoco {momenta[1]}, "
          f"first order {first_order}")
    np.testing.assert_allclose(momenta[0], momenta[1], atol=1e-4)
    np.testing.assert_allclose(momenta[1], first_order, rtol=0.05)


@pytest.mark.parametrize("backend", backend_names())
def test_efforts_saturate_at_the_urdf_limit(backend: str) -> None:
    s = quadruped(backend, contact=False)
    s.reset(standing_q())
    tau = np.full(12, 1000.0)
    tau[::2] = -1000.0
    s.step(tau)
    np.testing.assert_allclose(s.applied_torque, np.concatenate([np.zeros(6), np.sign(tau) * 80.0]))
    s.step(np.full(12, 5.0))
    np.testing.assert_allclose(s.applied_torque[6:], 5.0)


def test_reading_mujoco_contacts_does_not_change_the_trajectory() -> None:
    runs = []
    for read in (False, True):
        s = quadruped("mujoco")
        s.reset(standing_q())
        for _ in range(300):
            s.step(pd(s))
            if read:
                assert np.isfinite(s.contact_forces).all()
        runs.append(s.q.copy())
    np.testing.assert_array_equal(runs[0], runs[1])


def test_mujoco_divergence_raises_with_the_cause() -> None:
    s = quadruped("mujoco")
    s.reset(standing_q())
    s.apply_wrench("base_link", [1e13, 0.0, 0.0, 0.0, 0.0, 0.0], 0.01)
    with pytest.raises(FloatingPointError, match=r"simulation diverged at t = .* \(MuJoCo: mjWARN_BAD"):
        _run_pd(s, 10)


def test_mujoco_backend_refusals() -> None:
    with pytest.raises(ValueError, match="physics backend must be one of"):
        create_backend("bullet", QUADRUPED_URDF, QUADRUPED)
    hard = sim.ContactModel(sim.collision_spheres(QUADRUPED_URDF), kind="hard")
    with pytest.raises(ValueError, match="use kind 'soft'"):
        create_backend("mujoco", QUADRUPED_URDF, QUADRUPED, contact=hard)
    with pytest.raises(ValueError, match="integrator must be one of"):
        create_backend("mujoco", QUADRUPED_URDF, QUADRUPED, integrator="implicit")
    box = kd.Model.from_urdf(BOX_URDF, floating_base=True)
    s = create_backend("mujoco", BOX_URDF, box)
    with pytest.raises(KeyError, match="unknown frame"):
        s.apply_wrench("no_such_link", np.zeros(6), 0.1)
    with pytest.raises(ValueError, match="tau must have shape"):
        s.step(np.zeros(3))
    assert float(s.mj.body_mass.sum()) == pytest.approx(BOX_MASS)
