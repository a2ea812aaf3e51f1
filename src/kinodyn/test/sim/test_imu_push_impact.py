"""IMU model, pushes and hard-contact impacts against closed forms.

- IMU at rest reads the specific force -g (up) in the IMU frame; its noise has the set statistics.
- A push of force F for T seconds changes the linear momentum by F T (the velocity of a free body by
  F T / m, on top of gravity's g T).
- A hard-contact impact (Robot Dynamics lecture notes (ETH) §3.7.3) leaves the contact points with zero
  normal velocity and
  changes no tangential momentum (frictionless impulse); one contact matches (3.67)-(3.69) exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.sim import simulator

import kinodyn as kd
from kinodyn import sim

from . import conftest as robots

DT = 1e-3


def test_imu_at_rest_reads_gravity_up_in_its_frame() -> None:
    """The 2-link arm held still by its gravity torques; the IMU on the tool frame is tilted by q1 + q2."""
    m = kd.Model.from_urdf(robots.PLANAR_URDF)
    q = np.array([0.4, -1.1])
    s = sim.Simulator(m, dt=DT)
    s.reset(q)
    imu = s.add_imu("tool")
    for _ in range(50):
        s.step(m.gravity_torques(s.q))
    C = m.frame_placement(s.q, "tool")[:3, :3]
    np.testing.assert_allclose(imu.reading.linear_acceleration, C.T @ [0.0, 0.0, 9.81], atol=1e-9)
    tilt = q.sum()  # about +y: up in the tool frame is (-sin, 0, cos)
    up = [-9.81 * np.sin(tilt), 0.0, 9.81 * np.cos(tilt)]
    np.testing.assert_allclose(imu.reading.linear_acceleration, up, atol=1e-9)
    np.testing.assert_allclose(imu.reading.angular_velocity, 0.0, atol=1e-12)
    np.testing.assert_allclose(kd.spatial.quat_to_matrix(imu.reading.orientation), C, atol=1e-12)



def test_noiseless_imu_reads_bit_for_bit_what_the_noise_formula_gives_with_zero_densities() -> None:
    """Without noise no random numbers are drawn; the readings are those of the general formula (every term
    ``density * draw`` zero), bit for bit, along a moving trajectory of the 2-link arm."""
    m = kd.Model.from_urdf(robots.PLANAR_URDF)
    quiet = sim.ImuSensor(m, "tool", sim.ImuNoise(), rng=3)
    general = sim.ImuSensor(m, "tool", sim.ImuNoise(), rng=3)
    general._noiseless = False  # noqa: SLF001  the path with the draws, every density 0
    q, v = np.array([0.3, -0.8]), np.array([0.5, -1.5])
    for imu in (quiet, general):
        imu.reset(q, v, DT)
    for k in range(200):
        q, v = q + DT * v, v + DT * np.array([np.sin(0.05 * k), -2.0 * np.cos(0.03 * k)])
        a, b = quiet.update(q, v, DT), general.update(q, v, DT)
        for x, y in ((a.orientation, b.orientation), (a.angular_velocity, b.angular_velocity),
                     (a.linear_acceleration, b.linear_acceleration)):
            assert x.tobytes() == y.tobytes()
    assert quiet.accelerometer_bias.tobytes() == general.accelerometer_bias.tobytes() == bytes(24)
    assert quiet.rng.bit_generator.state == np.random.default_rng(3).bit_generator.state  # nothing drawn

@pytest.mark.parametrize("frame", ["imu_link", "LF_FOOT"])
def test_imu_readings_are_the_public_kinematics_formula_bit_for_bit(frame: str) -> None:
    """The IMU's one compiled kinematics call gives, bytes compared, what ``Model.frame_placement``,
    ``Model.frame_jacobian`` and ``spatial.matrix_to_quat`` give in the module doc's formula, on the
    quadruped's IMU frame and on a foot (behind three joints) along a tumbling trajectory."""
    m = kd.Model.from_urdf(robots.QUADRUPED_URDF, floating_base=True)
    imu = sim.ImuSensor(m, frame)
    q0 = m.neutral()
    q0[7:] = robots.QUADRUPED_STANDING_JOINTS
    v = np.concatenate([[0.7, -0.2, 1.5], [1.3, -0.9, 2.1], np.linspace(-2.0, 2.0, 12)])
    q = q0
    imu.reset(q, v, DT)
    C = m.frame_placement(q, frame)[:3, :3]
    previous = (m.frame_jacobian(q, frame, "local_world_aligned") @ v)[:3]
    for k in range(100):
        q = m.integrate(q, DT * v)
        v = v + DT * np.sin(0.1 * k + np.arange(m.nv))
        r = imu.update(q, v, DT)
        C = m.frame_placement(q, frame)[:3, :3]
        twist = m.frame_jacobian(q, frame, "local_world_aligned") @ v
        assert r.orientation.tobytes() == kd.spatial.matrix_to_quat(C).tobytes()
        assert r.angular_velocity.tobytes() == (C.T @ twist[3:]).tobytes()
        expected = C.T @ ((twist[:3] - previous) / DT - m.gravity)
        assert r.linear_acceleration.tobytes() == expected.tobytes()
        previous = twist[:3]
    assert not np.allclose(C, np.eye(3), atol=0.05)  # the frame turned: every matrix entry took part


def test_imu_noise_statistics_match_parameters() -> None:
    noise = sim.ImuNoise(accelerometer_noise_density=0.002, accelerometer_random_walk=0.0004,
                         gyroscope_noise_density=0.0003, gyroscope_random_walk=2e-5)
    m = kd.Model.from_urdf(robots.PLANAR_URDF)
    q = np.array([0.0, 0.0])  # upright: an equilibrium with zero gravity torque
    readings = []
    biases = []
    imu = sim.ImuSensor(m, "tool", noise, rng=7)
    imu.reset(q, np.zeros(2), DT)
    n = 20_000
    for _ in range(n):
        r = imu.update(q, np.zeros(2), DT)
        readings.append(np.concatenate([r.linear_acceleration - [0.0, 0.0, 9.81], r.angular_velocity]))
        biases.append(np.concatenate([imu.accelerometer_bias, imu.gyroscope_bias]))
    readings, biases = np.array(readings), np.array(biases)
    white = readings - biases
    densities = [noise.accelerometer_noise_density, noise.gyroscope_noise_density]
    expected_white = np.repeat(densities, 3) / np.sqrt(DT)
    expected_walk = np.repeat([noise.accelerometer_random_walk, noise.gyroscope_random_walk], 3) * np.sqrt(DT)
    # sample standard deviations of n normal draws: relative standard error 1 / sqrt(2 n) = 0.5 %
    np.testing.assert_allclose(white.std(axis=0), expected_white, rtol=0.025)
    np.testing.assert_allclose(np.diff(biases, axis=0).std(axis=0), expected_walk, rtol=0.025)
    assert np.abs(white.mean(axis=0) / expected_white).max() < 5 / np.sqrt(n)
    again = sim.ImuSensor(m, "tool", noise, rng=7)
    again.reset(q, np.zeros(2), DT)
    first = again.update(q, np.zeros(2), DT)
    np.testing.assert_array_equal(first.angular_velocity - again.gyroscope_bias, white[0, 3:])  # seeded


def test_push_changes_free_body_velocity_by_impulse_over_mass() -> None:
    m = kd.Model.from_urdf(robots.BOX_URDF, floating_base=True)
    s = sim.Simulator(m, dt=DT)
    s.reset()
    force = np.array([30.0, -12.0, 5.0])
    s.apply_wrench("body", np.concatenate([force, np.zeros(3)]), duration=0.05)
    for _ in range(100):
        s.step(np.zeros(6))
    C = kd.spatial.quat_to_matrix(s.q[3:7])
    expected = force * 0.05 / robots.BOX_MASS + m.gravity * s.t
    np.testing.assert_allclose(C @ s.v[:3], expected, atol=1e-12)
    np.testing.assert_allclose(s.v[3:], 0.0, atol=1e-12)


def test_push_changes_quadruped_momentum_by_impulse() -> None:
    """Off-centre push on an articulated body in the air: the centre of mass still gains F T / m."""
    m = kd.Model.from_urdf(robots.QUADRUPED_URDF, floating_base=True)
    s = sim.Simulator(m, dt=DT)
    q0 = m.neutral()
    q0[2] = 2.0
    s.reset(q0)
    force = np.array([0.0, 80.0, 0.0])
    s.apply_wrench("LF_SHANK", np.concatenate([force, [0.0, 0.0, 3.0]]), duration=0.02)
    for _ in range(40):
        s.step(np.zeros(12))
    total = m.mass.sum()
    v_com = m.com_jacobian(s.q) @ s.v
    np.testing.assert_allclose(v_com, force * 0.02 / total + m.gravity * s.t, atol=1e-9)
    assert np.abs(s.v[6:]).max() > 1e-3  # the push also moved the joints


def _point_normal_velocities(m: kd.Model, s: sim.Simulator) -> np.ndarray:
    out = []
    for sphere, point in zip(s.contact.spheres, s.contact_points, strict=True):
        J = m.frame_jacobian(s.q, sphere.link, "local_world_aligned")
        d = point - m.frame_placement(s.q, sphere.link)[:3, 3]
        twist = J @ s.v
        out.append(twist[2] + d[1] * twist[3] - d[0] * twist[4])  # (v_o + w x d)_z
    return np.array(out)


def test_hard_contact_impact_stops_normal_velocity_and_keeps_tangential_momentum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tilted, spinning drop: each impulse the simulator applies zeroes the new contacts' normal velocity,
    leaves every touching point non-approaching, and changes no horizontal momentum (frictionless)."""
    impulses = []

    def recording(M: np.ndarray, G: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        du, lam = sim.inelastic_impulse(M, G, u)
        impulses.append((G, u.copy(), du, lam))  # the simulator then updates u in place
        return du, lam

    monkeypatch.setattr(simulator, "inelastic_impulse", recording)
    m = kd.Model.from_urdf(robots.QUADRUPED_URDF, floating_base=True)
    contact = sim.ContactModel(sim.collision_spheres(robots.QUADRUPED_URDF), kind="hard", friction=0.0)
    s = sim.Simulator(m, dt=DT, contact=contact)
    q0 = m.neutral()
    q0[3:7] = [0.02, 0.03, 0.0, 1.0]  # tilted: the feet land one after another
    q0[3:7] /= np.linalg.norm(q0[3:7])
    q0[2] = robots.QUADRUPED_STANDING_HEIGHT + 0.03
    q0[7:] = robots.QUADRUPED_STANDING_JOINTS  # inside the joint limits: only contact rows
    s.reset(q0, np.concatenate([[0.7, -0.2, -1.5], [0.3, -0.2, 0.4], np.linspace(-0.5, 0.5, 12)]))
    total = m.mass.sum()
    landed = np.zeros(4, dtype=bool)
    impacts = 0
    for _ in range(60):
        count = len(impulses)
        s.step(np.zeros(12))
        if len(impulses) == count:
            continue
        G, u, du, lam = impulses[-1]
        w = G @ (u + du)  # post-impact normal velocities of the penetrating points
        assert np.all(lam >= 0.0)
        assert np.all(w >= -1e-10)
        np.testing.assert_allclose(w[lam > 0.0], 0.0, atol=1e-10)  # pushed points stop, others separate
        assert np.all(_point_normal_velocities(m, s)[s.in_contact] >= -1e-10)
        np.testing.assert_allclose(total * (m.com_jacobian(s.q) @ du)[:2], 0.0, atol=1e-10)
        if (lam > 0.0).any():
            assert (m.com_jacobian(s.q) @ du)[2] > 1e-3  # the ground pushed up
            impacts += 1
        landed |= s.in_contact
    assert landed.sum() >= 2
    assert impacts >= 2


def test_single_contact_impulse_matches_seed_formula() -> None:
    """(3.67)-(3.70): Δu = -M^-1 J^T Λ J u-, Λ = (J M^-1 J^T)^-1, energy loss ½ (J u-)^T Λ (J u-)."""
    rng = np.random.default_rng(3)
    m = kd.Model.from_urdf(robots.QUADRUPED_URDF, floating_base=True)
    q = m.random_configuration(rng)
    u = rng.normal(size=m.nv)
    M = m.mass_matrix(q)
    J = m.frame_jacobian(q, "RH_FOOT", "local_world_aligned")[2:3]
    if (J @ u)[0] > 0:
        u = -u
    du, lam = sim.inelastic_impulse(M, J, u)
    Lam = np.linalg.inv(J @ np.linalg.solve(M, J.T))
    np.testing.assert_allclose(du, -np.linalg.solve(M, J.T @ Lam @ J @ u), atol=1e-10)
    np.testing.assert_allclose(J @ (u + du), 0.0, atol=1e-10)
    loss = 0.5 * u @ M @ u - 0.5 * (u + du) @ M @ (u + du)
    assert loss == pytest.approx(0.5 * (J @ u) @ Lam @ (J @ u), rel=1e-9)
    assert lam[0] > 0.0
    _, lam_separating = sim.inelastic_impulse(M, J, -u)  # separating: no impulse
    assert lam_separating[0] == 0.0


@pytest.mark.parametrize("direction", [1.0, -1.0])
def test_joint_limit_stops_the_joint_at_the_limit(direction: float) -> None:
    urdf = robots.PLANAR_URDF.read_text().replace('lower="-3.141592653589793" upper="3.141592653589793"',
                                          'lower="-0.5" upper="0.5"')
    m = kd.Model.from_urdf(urdf)
    assert m.upper_limit[0] == 0.5
    s = sim.Simulator(m, dt=DT)
    s.reset([0.0, 0.0], [2.0 * direction, 0.0])
    reached = False
    for _ in range(500):
        s.step([0.0, 0.0])
        assert np.all(s.q <= 0.5)
        assert np.all(s.q >= -0.5)
        if s.q[0] == 0.5 * direction:
            reached = True
            assert direction * s.v[0] <= 1e-12
    assert reached


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_torques_are_refused_and_a_blown_up_state_raises(bad: float) -> None:
    """A non-finite entry anywhere in ``tau`` is refused before the step (the state is kept); a step whose
    state overflows raises instead of handing out a non-finite state."""
    m = kd.Model.from_urdf(robots.PLANAR_URDF)
    s = sim.Simulator(m, dt=DT)
    s.reset([0.3, -0.2])
    for k in range(2):
        tau = np.zeros(2)
        tau[k] = bad
        with pytest.raises(ValueError, match="tau must be finite"):
            s.step(tau)
    assert s.t == 0.0
    assert s.q.tolist() == [0.3, -0.2]
    s.reset([0.0, 0.0], [0.0, 1e200])
    with pytest.raises(FloatingPointError, match="non-finite state"):
        s.step([0.0, 0.0])
