"""LeggedEstimator on an exact synthetic motion of the hexapod (six legs, IMU off the base origin, rotated).

The truth is built from exact IMU readings of piecewise constant motions (at rest; translation with a constant
world acceleration; constant velocity with a constant yaw rate about the vertical through the IMU), stepped by
the estimator's own discrete model (the mean of consecutive readings held over each interval, trapezoid), so a
noiseless run must reproduce the truth to rounding. The feet stay fixed in the world; the joint angles come
from Newton IK. Further: the trapezoid against a closed form, the noiseless and the faulted synthetic trot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest
from kinodyn.estimation.estimator import LeggedEstimator
from kinodyn.estimation.legs import ImuExtrinsics
from kinodyn.estimation.metrics import Trajectory, accuracy
from kinodyn.estimation.synthetic import SensorNoise, inject_faults, trotting_walk
from kinodyn.evaluation import Evaluator
from kinodyn.spatial import euler_to_matrix, quat_to_matrix, so3_exp, so3_log

import kinodyn as kd

from .robots import QUADRUPED_FEET, QUADRUPED_IMU, quadruped_offset_imu_model, track
from .robots import QUADRUPED_STANDING_JOINTS as STANDING_JOINTS
from .robots import QUADRUPED_URDF as QUADRUPED

HERE = Path(__file__).resolve().parent
HEXAPOD = HERE / "hexapod.urdf"
FEET = [f"{leg}_foot" for leg in ("LF", "LM", "LH", "RF", "RM", "RH")]
G = np.array([0.0, 0.0, -9.81])
RATE = 500.0
YAW_RATE = 0.3  # rad/s
ACCELERATION = np.array([0.3, 0.1, 0.0])  # m/s^2, world, during the second phase


@dataclass
class Truth:
    t: np.ndarray
    gyro: np.ndarray  # (T, 3) readings
    accel: np.ndarray
    joints: np.ndarray  # (T, n)
    base_position: np.ndarray
    base_rotation: np.ndarray  # (T, 3, 3)
    base_angular_velocity: np.ndarray  # (T, 3), base frame


def leg_ik(model: kd.Model, evaluator: Evaluator, targets: np.ndarray, joints: np.ndarray) -> np.ndarray:
    """Joint angles putting each foot at ``targets`` (base frame, base at identity), by Newton."""
    q = model.neutral()
    q[7:] = joints
    v = np.zeros(model.nv)
    for _ in range(20):
        e = evaluator.evaluate(q, v)
        error = (targets - e.placements[:, :3, 3]).ravel()
        if np.abs(error).max() < 1e-13:
            return q[7:]
        q[7:] += np.linalg.solve(e.jacobians[:, :3, 6:].reshape(-1, model.nv - 6), error)
    raise AssertionError(f"IK did not converge: error {np.abs(error).max():.2e} m")


Hexapod = tuple[kd.Model, Truth]  # the fixture: the model and its stream


def hexapod_truth(model: kd.Model, duration: float = 2.0) -> Truth:
    extrinsics = ImuExtrinsics.from_model(model, "imu")
    C_BI, r_BI = extrinsics.rotation, extrinsics.translation
    C_WB0 = euler_to_matrix([0.0, -0.05, 0.08], "zyx")  # standing tilted; yaw 0 as the estimator starts
    C, p, v = C_WB0 @ C_BI, C_WB0 @ r_BI, np.zeros(3)  # IMU state; base at the odom origin
    b_g = np.array([0.003, -0.002, 0.001])
    b_a = 0.05 * C.T @ [0.0, 0.0, 1.0]  # along gravity: observable at rest, recovered exactly
    evaluator = Evaluator(model, FEET)
    joints = np.zeros(model.nq - 7)
    q0 = model.neutral()
    feet_base = evaluator.evaluate(q0, np.zeros(model.nv)).placements[:, :3, 3]
    feet_world = feet_base @ C_WB0.T  # base at the origin
    out: dict[str, list] = {k: [] for k in ("t", "gyro", "accel", "joints", "pb", "Cb", "wb")}
    steps = round(duration * RATE)
    dt = 1.0 / RATE

    def readings(t: float, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact rate and specific force (IMU frame, no bias) at ``t`` with the attitude ``C``."""
        if t < 0.6 - 1e-9:
            return np.zeros(3), C.T @ -G
        if t < 1.0 - 1e-9:
            return np.zeros(3), C.T @ (ACCELERATION - G)
        return C.T @ [0.0, 0.0, YAW_RATE], C.T @ -G

    for k in range(steps):
        t = k / RATE
        w, f = readings(t, C)
        C_WB = C @ C_BI.T
        p_B = p - C_WB @ r_BI
        joints = leg_ik(model, evaluator, (feet_world - p_B) @ C_WB, joints)
        out["t"].append(t)
        out["gyro"].append(w + b_g)
        out["accel"].append(f + b_a)
        out["joints"].append(joints.copy())
        out["pb"].append(p_B)
        out["Cb"].append(C_WB)
        out["wb"].append(C_BI @ w)
        # the step to t + dt by the estimator's discrete model: the mean of this and the next reading held
        # over the step (trapezoid); C.T z, hence the next rate, is unchanged by a yaw about the world z
        w_next, _ = readings(t + dt, C)
        C_next = C @ so3_exp(0.5 * (w + w_next) * dt)
        a = C @ (0.5 * (f + readings(t + dt, C_next)[1])) + G
        p = p + v * dt + 0.5 * a * dt * dt
        v = v + a * dt
        C = C_next
    return Truth(*(np.array(out[k]) for k in ("t", "gyro", "accel", "joints", "pb", "Cb", "wb")))


@pytest.fixture(scope="module")
def hexapod() -> Hexapod:
    model = kd.Model.from_urdf(HEXAPOD, floating_base=True)
    return model, hexapod_truth(model)


def run(estimator: LeggedEstimator, truth: Truth, faults: dict | None = None) -> dict[int, object]:
    """Feed the stream in stamp order (IMU, then joints, at each stamp); ``faults`` maps sample -> kind."""
    faults = faults or {}
    estimator.add_contacts(0.0, dict.fromkeys(FEET, True))
    estimates = {}
    zeros = np.zeros(truth.joints.shape[1])
    for k, t in enumerate(truth.t):
        gyro, accel, joints = truth.gyro[k].copy(), truth.accel[k].copy(), truth.joints[k].copy()
        fault = faults.get(k)
        if fault == "imu_nan":
            accel[1] = np.nan
        elif fault == "accel_spike":
            accel[2] += 120.0
        elif fault == "gyro_spike":
            gyro[0] = 50.0
        elif fault == "joint_nan":
            joints[4] = np.nan  # LM_hip
        estimate = estimator.add_imu(t, gyro, accel)
        if fault == "duplicate":
            assert estimator.add_imu(t, gyro, accel) is None
        if estimate is not None:
            estimates[k] = estimate
        estimator.add_joint_state(t, joints, zeros, zeros)
        if fault == "late_joints":
            estimator.add_joint_state(t - 0.5 / RATE, joints, zeros, zeros)
    return estimates


def assert_matches_truth(estimates: dict, truth: Truth, tolerance: float) -> None:
    assert len(estimates) > 0.7 * len(truth.t)
    for k, e in estimates.items():
        C_WB = truth.base_rotation[k]
        np.testing.assert_allclose(e.position, truth.base_position[k], atol=tolerance)
        assert np.linalg.norm(so3_log(quat_to_matrix(e.orientation).T @ C_WB)) < tolerance
        np.testing.assert_allclose(e.angular_velocity, truth.base_angular_velocity[k], atol=tolerance)
        # base velocity by central differences of the true base positions (independent of the lever-arm
        # formula), in the base frame; O(dt^2) accurate
        if 0 < k < len(truth.t) - 1 and k + 1 in estimates and abs(truth.t[k] - 1.0) > 1.5 / RATE \
                and abs(truth.t[k] - 0.6) > 1.5 / RATE:
            v_world = (truth.base_position[k + 1] - truth.base_position[k - 1]) * RATE / 2
            np.testing.assert_allclose(e.linear_velocity, C_WB.T @ v_world, atol=1e-5)
        for cov in (e.pose_covariance, e.twist_covariance):
            assert np.all(np.isfinite(cov))
            assert np.allclose(cov, cov.T)
            assert np.linalg.eigvalsh(cov).min() > 0.0


@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_noiseless_motion_is_reproduced(hexapod: Hexapod, filter_name: str) -> None:
    model, truth = hexapod
    estimator = LeggedEstimator(model, "imu", FEET, filter=filter_name, init_duration=0.5)
    estimates = run(estimator, truth)
    assert min(estimates) == int(0.5 * RATE)  # the first estimate closes the standing window
    assert_matches_truth(estimates, truth, 1e-6)
    last = estimates[max(estimates)]
    # the base really moved, rotated, and its origin swings around the IMU (lever arm)
    assert np.linalg.norm(last.position) > 0.1
    assert abs(last.angular_velocity).max() > 0.2
    assert set(last.contacts) == set(FEET)
    assert estimator.counters["feet_rejected"] == 0
    assert "running: 6 of 6 feet" in estimator.status


@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_nan_spikes_duplicates_and_late_samples_are_dropped(hexapod: Hexapod, filter_name: str) -> None:
    model, truth = hexapod
    estimator = LeggedEstimator(model, "imu", FEET, filter=filter_name)
    faults = {350: "imu_nan", 420: "accel_spike", 700: "gyro_spike", 800: "duplicate", 850: "joint_nan",
              900: "late_joints", 100: "accel_spike", 120: "imu_nan"}
    estimates = run(estimator, truth, faults)
    c = estimator.counters
    assert (c["imu_rejected"], c["imu_out_of_order"]) == (5, 1)
    assert (c["feet_without_joints"], c["joint_states_out_of_order"]) == (1, 1)
    assert c["initialization_restarts"] == 0
    for k in (350, 420, 700, 120, 100):
        assert k not in estimates
    # every dropped sample lies inside a phase of constant readings: the held sample replaces it exactly
    assert_matches_truth(estimates, truth, 1e-6)


@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_a_linearly_growing_acceleration_is_integrated_exactly(hexapod: Hexapod, filter_name: str) -> None:
    """Trapezoid propagation (docs/estimation.md, "Estimator"): with the world acceleration ``j t`` (no
    rotation, IMU alone) the velocity is ``j t^2 / 2`` to rounding and the position ``j t^3 / 6`` to the
    rule's ``j dt^3 / 12`` per step; holding each sample over the next interval lags the velocity by
    ``j t dt / 2`` (5e-4 m/s here)."""
    model, truth = hexapod
    estimator = LeggedEstimator(model, "imu", FEET, filter=filter_name)
    standing = int(0.5 * RATE)
    for k in range(standing + 1):
        estimator.add_imu(truth.t[k], truth.gyro[k], truth.accel[k])
    assert estimator.initialized
    f = estimator.filter
    C, p0, start, dt = f.rotation, f.position, truth.t[standing], 1.0 / RATE
    bias = truth.accel[0] - C.T @ -G  # recovered exactly by the standing initialisation
    jerk = np.array([1.0, -0.5, 0.2])  # m/s^3, world
    for k in range(1, 251):
        t = k * dt
        estimate = estimator.add_imu(start + t, truth.gyro[0], C.T @ (jerk * t - G) + bias)
        C_WB = quat_to_matrix(estimate.orientation)
        np.testing.assert_allclose(C_WB @ estimate.linear_velocity, jerk * t * t / 2, atol=1e-11)
        np.testing.assert_allclose(estimator.filter.position - p0, jerk * (t**3 / 6 + k * dt**3 / 12),
                                   atol=1e-12)


def test_a_long_imu_gap_restarts_the_initialisation(hexapod: Hexapod) -> None:
    model, truth = hexapod
    estimator = LeggedEstimator(model, "imu", FEET, max_imu_gap=0.1)
    for k in range(300):
        estimator.add_imu(truth.t[k], truth.gyro[k], truth.accel[k])
    assert estimator.initialized
    assert estimator.add_imu(truth.t[299] + 0.2, truth.gyro[0], truth.accel[0]) is None
    assert not estimator.initialized
    assert estimator.counters["resets"] == 1
    assert "max_imu_gap" in estimator.last_problem
    assert estimator.status.startswith("initializing")


def test_motion_during_initialisation_restarts_the_window(hexapod: Hexapod) -> None:
    model, truth = hexapod
    estimator = LeggedEstimator(model, "imu", FEET, init_duration=0.5)
    for k in range(400):
        gyro = truth.gyro[k] + ([0.0, 0.0, 0.2] if k == 100 else 0.0)
        estimate = estimator.add_imu(truth.t[k], gyro, truth.accel[k])
        assert (estimate is None) == (k < 101 + int(0.5 * RATE))
        if k == 150:
            assert "window restarted: moving: gyro" in estimator.status
    assert estimator.counters["initialization_restarts"] == 1
    expected = f"standing window restarted at {truth.t[100]:.3f} s: moving: gyro"
    assert estimator.last_problem.startswith(expected)


def test_detected_contacts_feed_the_filter() -> None:
    """Contact source "detection": efforts of two loaded feet (RNEA with their forces) put exactly those two
    feet in the filter's state."""
    model = kd.Model.from_urdf(QUADRUPED, floating_base=True)
    estimator = LeggedEstimator(model, "imu_link", QUADRUPED_FEET, contact_source="detection")
    a_rest = np.array([0.0, 0.0, 9.81])
    for k in range(300):
        estimator.add_imu(k / RATE, np.zeros(3), a_rest)
    assert estimator.initialized
    q = model.neutral()
    q[7:] = STANDING_JOINTS
    loads = {"LF_FOOT": 180.0, "RH_FOOT": 180.0}
    f_ext = {foot: np.concatenate([model.frame_placement(q, foot)[:3, :3].T @ [0.0, 0.0, fz], np.zeros(3)])
             for foot, fz in loads.items()}
    efforts = model.rnea(q, np.zeros(model.nv), np.zeros(model.nv), f_ext)[6:]
    estimator.add_contacts(0.6, dict.fromkeys(QUADRUPED_FEET, True))  # ignored with detection
    report = estimator.add_joint_state(299 / RATE, STANDING_JOINTS, np.zeros(12), efforts)
    assert report is not None
    assert set(report.added) == set(loads)
    assert set(estimator.filter.feet) == set(loads)
    assert estimator.counters["contacts_ignored"] == 1


def test_configuration_errors_are_refused() -> None:
    model = kd.Model.from_urdf(QUADRUPED, floating_base=True)
    with pytest.raises(ValueError, match="filter must be one of"):
        LeggedEstimator(model, "imu_link", QUADRUPED_FEET, filter="ukf")
    with pytest.raises(ValueError, match="contact_source must be one of"):
        LeggedEstimator(model, "imu_link", QUADRUPED_FEET, contact_source="force_sensor")
    with pytest.raises(ValueError, match="not a link"):
        LeggedEstimator(model, "imu", QUADRUPED_FEET)
    estimator = LeggedEstimator(model, "imu_link", QUADRUPED_FEET)
    with pytest.raises(ValueError, match=r"unknown feet \['LF_foot'\]"):
        estimator.add_contacts(0.0, {"LF_foot": True})
    assert estimator.add_joint_state(0.0, STANDING_JOINTS, np.zeros(12), np.zeros(12)) is None


def test_a_failed_update_is_counted_and_the_estimate_goes_on(hexapod: Hexapod) -> None:
    """A filter that refuses an update (ValueError, state untouched) does not stop the estimator."""
    model, truth = hexapod
    estimator = LeggedEstimator(model, "imu", FEET)
    estimator.add_contacts(0.0, dict.fromkeys(FEET, True))
    for k in range(260):
        estimator.add_imu(truth.t[k], truth.gyro[k], truth.accel[k])

    def refuse(feet: object) -> NoReturn:
        raise ValueError("innovation covariance is not positive definite")

    estimator.filter.update_contacts = refuse
    zeros = np.zeros(truth.joints.shape[1])
    assert estimator.add_joint_state(truth.t[259], truth.joints[259], zeros, zeros) is None
    assert estimator.counters["updates_failed"] == 1
    assert "not positive definite" in estimator.last_problem
    assert estimator.add_imu(truth.t[260], truth.gyro[260], truth.accel[260]) is not None


@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_a_noisy_trot_with_injected_faults_stays_finite_and_on_track(filter_name: str) -> None:
    """kinodyn.estimation.synthetic's trot (BMI088 noise, encoder noise, offset rotated IMU) with IMU dropouts
    of 20-100 ms, accelerometer spikes of 50-200 m/s^2, NaN IMU and joint readings, contact flicker and
    duplicates: every estimate is finite, the drift stays within the 2 % bound for faulted data and the gap
    noise keeps the feet inside the chi-square gate (without it the held readings over the dropouts would lock
    every foot out)."""
    model = quadruped_offset_imu_model()
    run = inject_faults(trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=6.0, seed=3,
                                      standing_joints=STANDING_JOINTS), seed=4)
    faults = run.faults
    estimator = LeggedEstimator(model, QUADRUPED_IMU, QUADRUPED_FEET, filter=filter_name)
    estimates = []
    for k, t in enumerate(run.t):
        for _ in range(2 if faults.duplicated[k] else 1):
            if not faults.imu_dropped[k]:
                estimate = estimator.add_imu(t, run.imu_angular_velocity[k], run.imu_linear_acceleration[k])
                if estimate is not None:
                    estimates.append(estimate)
            estimator.add_contacts(t, dict(zip(QUADRUPED_FEET, run.contacts[k].tolist(), strict=True)))
            estimator.add_joint_state(t, run.joint_positions[k], run.joint_velocities[k],
                                      run.joint_efforts[k])
    for e in estimates:
        values = (e.position, e.orientation, e.linear_velocity, e.angular_velocity, e.pose_covariance,
                  e.twist_covariance)
        assert all(np.all(np.isfinite(x)) for x in values)
    c = estimator.counters
    gyro, accel = run.imu_angular_velocity, run.imu_linear_acceleration
    bad = ~np.isfinite(gyro).all(axis=1) | ~np.isfinite(accel).all(axis=1)
    bad[faults.accel_spikes] = True  # over accel_limit or, below it, a one-sample jump > accel_jump_limit
    sent = ~faults.imu_dropped
    copies = np.where(faults.duplicated, 2, 1)
    assert bad[sent].sum() >= 10  # some NaN and over-range spikes reached the estimator
    assert faults.imu_dropped.sum() >= 0.1 * RATE  # the dropouts: at least 100 ms without IMU in all
    assert c["imu_rejected"] == (copies * (bad & sent)).sum()
    assert c["imu_out_of_order"] == (faults.duplicated & sent & ~bad).sum()
    assert c["feet_without_joints"] > 0
    assert c["resets"] == 0
    assert c["feet_rejected"] <= 10  # of about 2800 updates of 2-4 feet (flicker, spikes' neighbours)
    report = accuracy(Trajectory(run.t, run.position, run.quaternion, run.linear_velocity),
                      Trajectory(*(np.array([getattr(e, name) for e in estimates])
                                   for name in ("stamp", "position", "orientation", "linear_velocity"))))
    print(f"\n{filter_name}: drift {100 * report.drift:.2f} % of {report.path_length:.2f} m, roll/pitch RMSE "
          f"{report.roll_rmse_deg:.3f}/{report.pitch_rmse_deg:.3f} deg, velocity RMSE "
          f"{report.velocity_rmse:.4f} m/s; counters {c}")
    assert report.path_length > 1.5
    assert report.drift < 0.02


@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_a_noiseless_trot_is_tracked_to_second_order(filter_name: str) -> None:
    """The synthetic trot without sensor noise (instantaneous IMU samples of a smooth motion) through a first
    turn: the trapezoid propagation leaves a velocity error of O(dt^2) (RMSE 1.7e-4 m/s, pitch 0.007 deg);
    holding each sample over the next interval lagged it by half a sample (4.3e-3 m/s, pitch 0.098 deg, ESKF
    drift 0.29 %; with the filter's noise set to the data's, none, every foot was gated out)."""
    model = quadruped_offset_imu_model()
    run = trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=8.0, seed=0,
                        standing_joints=STANDING_JOINTS, noise=SensorNoise.none())
    estimator = LeggedEstimator(model, QUADRUPED_IMU, QUADRUPED_FEET, filter=filter_name)
    report = track(estimator, run)
    print(f"\n{filter_name}: drift {100 * report.drift:.4f} % of {report.path_length:.2f} m, roll/pitch RMSE "
          f"{report.roll_rmse_deg:.4f}/{report.pitch_rmse_deg:.4f} deg, velocity RMSE "
          f"{report.velocity_rmse:.6f} m/s; feet rejected {estimator.counters['feet_rejected']}")
    assert report.path_length > 2.5
    assert estimator.counters["feet_rejected"] == 0
    assert report.velocity_rmse < 1e-3
    assert report.drift < 2e-3
    assert max(report.roll_rmse_deg, report.pitch_rmse_deg) < 0.1


def test_a_one_sample_accelerometer_jump_is_dropped_and_a_confirmed_one_kept(hexapod: Hexapod) -> None:
    model, truth = hexapod
    estimator = LeggedEstimator(model, "imu", FEET, accel_jump_limit=30.0)
    for k in range(300):
        estimator.add_imu(truth.t[k], truth.gyro[k], truth.accel[k])
    spike = truth.accel[300] + [40.0, 0.0, 0.0]  # below accel_limit (78.5 m/s^2), a 40 m/s^2 jump
    assert estimator.add_imu(truth.t[300], truth.gyro[300], spike) is None
    assert "accel_jump_limit" in estimator.last_problem
    assert estimator.add_imu(truth.t[301], truth.gyro[301], truth.accel[301]) is not None
    step = truth.accel[302] + [35.0, 0.0, 0.0]  # a step that the next sample confirms
    assert estimator.add_imu(truth.t[302], truth.gyro[302], step) is None
    assert estimator.add_imu(truth.t[303], truth.gyro[303], step + np.array([1.0, 0.0, 0.0])) is not None
    assert estimator.counters["imu_rejected"] == 2
