"""The synthetic trot (kinodyn.estimation.synthetic) against independent checks: forward kinematics of the
synthesised joints (stance feet fixed in the world), finite differences of the sampled motion, an RK4
strapdown integration of the noiseless IMU, the trot's contact pattern, noise statistics, and the contact
forces recovered from the joint efforts (the legs' rows) against the base's equilibrium."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from kinodyn.estimation.synthetic import (
    ImuKinematics,
    SensorNoise,
    SyntheticRun,
    imu_kinematics,
    inject_faults,
    trotting_walk,
    with_noise,
)
from kinodyn.spatial import so3_log

import kinodyn as kd

from .robots import (
    HERE,
    OFFSET_IMU_URDF,
    QUADRUPED_FEET,
    QUADRUPED_IMU,
    QUADRUPED_STANDING_JOINTS,
    quadruped_offset_imu_model,
    quadruped_offset_imu_xml,
)

RATE = 500.0


@pytest.fixture(scope="module")
def model() -> kd.Model:
    return quadruped_offset_imu_model()


@pytest.fixture(scope="module")
def short_run(model: kd.Model) -> SyntheticRun:
    """6.5 s at 500 Hz: 1 s standing, then the ramp and the first turn."""
    return trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=6.5, rate=RATE,
                         standing_joints=QUADRUPED_STANDING_JOINTS)


@pytest.fixture(scope="module")
def full_run(model: kd.Model) -> SyntheticRun:
    """The default 36 s data set (at 100 Hz to keep the test short; the path does not depend on the rate)."""
    return trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, rate=100.0,
                         standing_joints=QUADRUPED_STANDING_JOINTS)


def derivative(x: np.ndarray, h: float) -> np.ndarray:
    """4th-order central difference of samples ``x`` (rows 2 .. N-3)."""
    return (-x[4:] + 8 * x[3:-1] - 8 * x[1:-3] + x[:-4]) / (12 * h)


def full_q(run: SyntheticRun, i: int, joints: np.ndarray | None = None) -> np.ndarray:
    model = run.model
    q = model.neutral()
    q[:3], q[3:7] = run.position[i], run.quaternion[i]
    q[model.idx_q[model.joint_body]] = run.true_joint_positions[i] if joints is None else joints
    return q


def test_stored_offset_imu_urdf_is_the_builders_output() -> None:
    assert OFFSET_IMU_URDF.read_text() == quadruped_offset_imu_xml()
    imu = quadruped_offset_imu_model().frame_placement(quadruped_offset_imu_model().neutral(), QUADRUPED_IMU)
    assert np.allclose(imu[:3, 3], [0.12, -0.04, 0.06])
    assert abs(np.trace(imu[:3, :3]) - 3.0) > 0.5  # well rotated


def test_feet_by_forward_kinematics_and_stance_feet_fixed(short_run: SyntheticRun) -> None:
    run, model = short_run, short_run.model
    for i in range(0, len(run.t), 7):
        q = full_q(run, i)
        for k, foot in enumerate(run.feet):
            fk = model.frame_placement(q, foot)[:3, 3]
            assert np.allclose(fk, run.foot_positions[i, k], rtol=0.0, atol=1e-9)
    for k in range(len(run.feet)):  # a stance foot's world position never moves within its stance
        stance = run.contacts[:, k]
        same = stance[1:] & stance[:-1]
        moved = np.linalg.norm(np.diff(run.foot_positions[:, k], axis=0), axis=1)
        assert moved[same].max() == 0.0
        assert moved[~stance[1:]].max() > 1e-3  # swing feet do move


def test_velocities_match_finite_differences(short_run: SyntheticRun) -> None:
    run, h = short_run, 1.0 / RATE
    fd = derivative(run.true_joint_positions, h)  # largest error at touchdown, where the foot stops
    assert np.abs(run.true_joint_velocities).max() > 1.0
    assert np.abs(fd - run.true_joint_velocities[2:-2]).max() < 3e-3
    rot = np.array([kd.spatial.quat_to_matrix(q) for q in run.quaternion])
    world_v = np.einsum("nij,nj->ni", rot, run.linear_velocity)
    assert np.abs(derivative(run.position, h) - world_v[2:-2]).max() < 1e-6
    body_rate = np.array([so3_log(rot[i].T @ rot[i + 1]) / h for i in range(len(rot) - 1)])  # at mid-step
    mid = 0.5 * (run.angular_velocity[1:] + run.angular_velocity[:-1])
    assert np.abs(run.angular_velocity).max() > 0.3
    assert np.abs(body_rate - mid).max() < 1e-4


def test_noiseless_imu_integrates_back_to_the_trajectory(short_run: SyntheticRun, model: kd.Model) -> None:
    """RK4 strapdown of ``ṗ = v, v̇ = C f + g, Ċ = C [ω]x`` over 2 s of walking from the true IMU state."""
    run = short_run
    imu_pose = model.frame_placement(model.neutral(), QUADRUPED_IMU)

    def imu_at(t: float) -> ImuKinematics:
        base = run.motion.evaluate(np.array([t]))
        return imu_kinematics(base, imu_pose[:3, :3], imu_pose[:3, 3], model.gravity)

    def derivative(t: float, state: tuple[np.ndarray, np.ndarray, np.ndarray],
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        _, v, c = state
        reading = imu_at(t)
        w, f = reading.angular_velocity[0], reading.specific_force[0]
        return v, c @ f + model.gravity, c @ kd.spatial.skew(w)

    i0, i1 = int(4.4 * RATE), int(6.4 * RATE)  # 2 s of walking into the first turn
    start = imu_at(run.t[i0])
    assert np.allclose(start.specific_force[0], run.true_imu_linear_acceleration[i0], atol=1e-12)
    assert np.allclose(start.position[0], run.imu_position[i0], atol=1e-12)
    state = (start.position[0], start.velocity[0], start.rotation[0])
    h = 1.0 / RATE
    for i in range(i0, i1):
        t = run.t[i]
        k1 = derivative(t, state)
        k2 = derivative(t + h / 2, tuple(s + h / 2 * d for s, d in zip(state, k1, strict=True)))
        k3 = derivative(t + h / 2, tuple(s + h / 2 * d for s, d in zip(state, k2, strict=True)))
        k4 = derivative(t + h, tuple(s + h * d for s, d in zip(state, k3, strict=True)))
        state = tuple(s + h / 6 * (a + 2 * b + 2 * c + d)
                      for s, a, b, c, d in zip(state, k1, k2, k3, k4, strict=True))
    end_rotation = kd.spatial.quat_to_matrix(run.imu_quaternion[i1])
    assert np.linalg.norm(state[0] - run.imu_position[i1]) < 1e-6
    assert np.linalg.norm(state[1] - run.imu_velocity[i1]) < 1e-6
    assert np.linalg.norm(so3_log(end_rotation.T @ state[2])) < 1e-6
    assert np.linalg.norm(run.imu_position[i1] - run.imu_position[i0]) > 0.5  # it did move and turn
    assert np.linalg.norm(so3_log(kd.spatial.quat_to_matrix(run.imu_quaternion[i0]).T @ end_rotation)) > 0.05


def test_standing_then_walking(short_run: SyntheticRun) -> None:
    run = short_run
    still = run.t < run.walk_start
    assert np.all(run.contacts[still])
    assert np.abs(run.linear_velocity[still]).max() == 0.0
    assert np.abs(run.true_imu_angular_velocity[still]).max() == 0.0
    assert np.allclose(np.linalg.norm(run.true_imu_linear_acceleration[still], axis=1), 9.81, atol=1e-12)


def test_trot_contacts(full_run: SyntheticRun) -> None:
    run = full_run
    lf, lh, rf, rh = (run.contacts[:, run.feet.index(f)] for f in QUADRUPED_FEET)
    walking = run.t > run.walk_start
    assert np.array_equal(lf, rh)
    assert np.array_equal(rf, lh)
    assert np.any(walking & lf & ~rf)
    assert np.any(walking & rf & ~lf)
    assert np.all(lf | rf)  # never all feet in the air; both pairs down in the overlap
    both = walking & lf & rf
    assert both[walking].mean() == pytest.approx(0.2, abs=0.01)  # overlap 2 (duty - 0.5) of a period
    edges = np.flatnonzero(np.diff(lf.astype(int)) == 1)  # touchdowns of the LF/RH pair
    assert np.allclose(np.diff(run.t[edges]), 0.5, atol=1.5 / run.rate)
    assert lf[walking].mean() == pytest.approx(0.6, abs=0.02)


def test_path_is_long_varied_and_turning(full_run: SyntheticRun) -> None:
    run = full_run
    moving = np.linalg.norm(run.linear_velocity, axis=1) > 0.05
    assert run.path_length >= 10.0
    assert run.t[moving][-1] - run.t[moving][0] >= 30.0
    yaw = np.unwrap(np.arctan2(2 * (run.quaternion[:, 3] * run.quaternion[:, 2] + run.quaternion[:, 0]
                                    * run.quaternion[:, 1]), 1 - 2 * (run.quaternion[:, 1] ** 2
                                                                      + run.quaternion[:, 2] ** 2)))
    assert np.ptp(yaw) > np.pi / 2
    assert np.sum(np.abs(np.diff(yaw))) > 2 * np.pi
    assert np.ptp(run.position[run.t > 3, 2]) > 0.015  # height oscillates
    assert np.abs(run.angular_velocity[:, :2]).max() > 0.1  # roll and pitch rates


def test_noise_statistics(full_run: SyntheticRun, short_run: SyntheticRun) -> None:
    for run in (full_run, short_run):
        noise, rate = run.noise, run.rate
        white_a = run.imu_linear_acceleration - run.true_imu_linear_acceleration - run.accelerometer_bias
        white_g = run.imu_angular_velocity - run.true_imu_angular_velocity - run.gyroscope_bias
        assert np.std(white_a) == pytest.approx(noise.accelerometer_noise_density * np.sqrt(rate), rel=0.05)
        assert np.std(white_g) == pytest.approx(noise.gyroscope_noise_density * np.sqrt(rate), rel=0.05)
        steps = np.diff(run.accelerometer_bias, axis=0)
        assert np.std(steps) == pytest.approx(noise.accelerometer_random_walk / np.sqrt(rate), rel=0.05)
        encoder = run.joint_positions - run.true_joint_positions
        assert np.std(encoder) == pytest.approx(noise.encoder_noise, rel=0.05)


def test_noiseless_run_and_seed(model: kd.Model) -> None:
    a = trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=1.5, noise=SensorNoise.none(),
                      standing_joints=QUADRUPED_STANDING_JOINTS)
    assert np.array_equal(a.imu_linear_acceleration, a.true_imu_linear_acceleration)
    assert np.array_equal(a.joint_positions, a.true_joint_positions)
    b = trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=1.5, seed=3,
                      standing_joints=QUADRUPED_STANDING_JOINTS)
    c = trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=1.5, seed=3,
                      standing_joints=QUADRUPED_STANDING_JOINTS)
    assert np.array_equal(b.imu_linear_acceleration, c.imu_linear_acceleration)
    assert not np.array_equal(a.imu_linear_acceleration, b.imu_linear_acceleration)


def test_with_noise_is_the_run_of_that_seed(model: kd.Model) -> None:
    """The motion does not depend on the seed: the noiseless run's motion with the noise of seed 3 drawn
    again is, array for array, the run synthesised with seed 3 (the Monte-Carlo tests synthesise once)."""
    a = trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=1.5, noise=SensorNoise.none(),
                      standing_joints=QUADRUPED_STANDING_JOINTS)
    b = trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=1.5, seed=3,
                      standing_joints=QUADRUPED_STANDING_JOINTS)
    again = with_noise(a, 3, SensorNoise.bmi088())
    for f in dataclasses.fields(b):
        value = getattr(b, f.name)
        if isinstance(value, np.ndarray):
            assert np.array_equal(getattr(again, f.name), value, equal_nan=True), f.name
    assert again.noise == b.noise
    assert again.faults is None
    assert not np.array_equal(with_noise(b, 4).joint_positions, b.joint_positions)
    assert np.array_equal(with_noise(b, 4).true_joint_efforts, b.true_joint_efforts)


def leg_forces(run: SyntheticRun, i: int) -> np.ndarray:
    """Ground reaction per foot from each leg's joint rows: ``J_leg^T f = (M v̇ + h)_leg - τ_leg``
    (ContactDetector's relation; RNEA), with accelerations from 4th-order differences of the velocities."""
    model = run.model
    q = full_q(run, i)
    joints = model.idx_v[model.joint_body]
    v = np.concatenate([run.linear_velocity[i], run.angular_velocity[i], np.zeros(model.nv - 6)])
    v[joints] = run.true_joint_velocities[i]
    window = slice(i - 2, i + 3)
    vdot = np.zeros(model.nv)
    vdot[:3] = derivative(run.linear_velocity[window], 1.0 / run.rate)[0]
    vdot[3:6] = derivative(run.angular_velocity[window], 1.0 / run.rate)[0]
    vdot[joints] = derivative(run.true_joint_velocities[window], 1.0 / run.rate)[0]
    tau = model.rnea(q, v, vdot)
    efforts = np.zeros(model.nv)
    efforts[model.idx_v[model.joint_body]] = run.joint_efforts[i]
    forces = []
    for foot in run.feet:
        jac = model.frame_jacobian(q, foot, "local_world_aligned")[:3]
        cols = np.flatnonzero(np.abs(jac[:, 6:]).sum(axis=0)) + 6
        forces.append(np.linalg.solve(jac[:, cols].T, tau[cols] - efforts[cols]))
    return np.array(forces)


def test_efforts_balance_the_base(model: kd.Model) -> None:
    run = trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=4.0, noise=SensorNoise.none(),
                        standing_joints=QUADRUPED_STANDING_JOINTS)
    weight = float(model.mass.sum()) * 9.81
    standing = leg_forces(run, 100)
    assert np.allclose(standing, run.contact_forces[100], rtol=0.0, atol=1e-6)
    assert np.allclose(standing[:, :2], 0.0, atol=1e-6)
    assert standing[:, 2].sum() == pytest.approx(weight, rel=1e-9)
    walking = [leg_forces(run, i) for i in range(int(2.0 * RATE), int(4.0 * RATE) - 1, 5)]
    for i, forces in zip(range(int(2.0 * RATE), int(4.0 * RATE) - 1, 5), walking, strict=True):
        swing = ~run.contacts[i]
        assert np.abs(forces[swing]).max(initial=0.0) < 0.05  # swing legs carry nothing (FD accelerations)
        assert np.abs(forces - run.contact_forces[i]).max() < 0.05
    assert np.mean([f[:, 2].sum() for f in walking]) == pytest.approx(weight, rel=0.02)


def test_any_number_of_legs() -> None:
    hexapod = kd.Model.from_urdf(HERE / "hexapod.urdf", floating_base=True)
    feet = [f"{leg}_foot" for leg in ("LF", "LM", "LH", "RF", "RM", "RH")]
    run = trotting_walk(hexapod, "imu", feet, duration=2.5, noise=SensorNoise.none())
    for i in range(0, len(run.t), 25):
        q = full_q(run, i)
        for k, foot in enumerate(feet):
            assert np.allclose(hexapod.frame_placement(q, foot)[:3, 3], run.foot_positions[i, k], atol=1e-9)
    assert 0 < run.contacts[run.t > 1.2].mean() < 1


def test_bad_inputs(model: kd.Model) -> None:
    fixed = kd.Model.from_urdf(quadruped_offset_imu_xml())
    with pytest.raises(ValueError, match="floating-base"):
        trotting_walk(fixed, QUADRUPED_IMU, QUADRUPED_FEET, duration=1.5)
    with pytest.raises(ValueError, match="at least 3"):
        trotting_walk(model, QUADRUPED_IMU, ["LF_THIGH"], duration=1.5)
    with pytest.raises(ValueError, match="duty"):
        trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duty=0.4)
    with pytest.raises(ValueError, match=r"SensorNoise\.encoder_noise"):
        SensorNoise(encoder_noise=float("nan"))


def test_inject_faults(full_run: SyntheticRun) -> None:
    run = inject_faults(full_run, seed=5)
    faults = run.faults
    assert faults is not None
    assert full_run.faults is None
    gaps = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], faults.imu_dropped.astype(int), [0]]))))[::2]
    assert len(gaps) >= 4
    assert np.all((gaps >= 0.02 * run.rate) & (gaps <= 0.1 * run.rate + 1))
    spikes = np.abs(run.imu_linear_acceleration - full_run.imu_linear_acceleration)
    assert np.all(np.nanmax(spikes[faults.accel_spikes], axis=1) >= 50.0)
    assert np.sum(~np.isfinite(run.imu_angular_velocity) | ~np.isfinite(run.imu_linear_acceleration)) > 0
    assert np.all(np.isnan(run.joint_positions[faults.joint_nan]).any(axis=1))
    toggled = run.contacts != full_run.contacts
    assert toggled.sum() == len(faults.contact_flicker) > 0
    assert faults.duplicated.sum() > 0
    assert faults.delay.max() > 0
    clean = run.t < run.walk_start + 0.5  # the initialisation window stays clean
    assert not toggled[clean].any()
    assert not faults.imu_dropped[clean].any()
    assert np.array_equal(run.true_imu_linear_acceleration, full_run.true_imu_linear_acceleration)
