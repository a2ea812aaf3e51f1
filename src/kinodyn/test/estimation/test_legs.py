"""LegKinematics and ImuExtrinsics against Pinocchio (test-only reference) and finite differences.

Two robots with different leg counts: the quadruped with its IMU moved off the base origin and rotated, and
a hexapod (hexapod.urdf, six 3-joint legs, rotated IMU).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from kinodyn.estimation import FootMeasurement
from kinodyn.estimation.legs import ImuExtrinsics, LegKinematics, find_leg
from kinodyn.spatial import so3_exp

import kinodyn as kd

from .robots import QUADRUPED_FEET, QUADRUPED_IMU, quadruped_offset_imu_xml

HERE = Path(__file__).resolve().parent
HEXAPOD = HERE / "hexapod.urdf"
HEXAPOD_FEET = [f"{leg}_foot" for leg in ("LF", "LM", "LH", "RF", "RM", "RH")]
ROBOTS = {
    "quadruped": (quadruped_offset_imu_xml, QUADRUPED_IMU, list(QUADRUPED_FEET)),
    "hexapod": (HEXAPOD.read_text, "imu", HEXAPOD_FEET),
}


def pin_model(xml: str) -> tuple[pin.Model, pin.Data]:
    model = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    return model, model.createData()


def pin_q(model: kd.Model, pmodel: pin.Model, joints: np.ndarray) -> np.ndarray:
    """Pinocchio configuration with the base at identity and kinodyn's joint vector mapped by name."""
    q = pin.neutral(pmodel)
    for i, name in enumerate(model.joint_names):
        q[pmodel.joints[pmodel.getJointId(name)].idx_q] = joints[i]
    return q


def pin_columns(model: kd.Model, pmodel: pin.Model) -> list[int]:
    return [pmodel.joints[pmodel.getJointId(name)].idx_v for name in model.joint_names]


@pytest.mark.parametrize("robot", ROBOTS)
def test_feet_and_covariance_match_pinocchio(robot: str) -> None:
    source, imu, feet = ROBOTS[robot]
    xml = source()
    model = kd.Model.from_urdf(xml, floating_base=True)
    pmodel, pdata = pin_model(xml)
    legs = LegKinematics(model, imu, feet)
    rng = np.random.default_rng(3)
    sigma = 2e-3
    columns = pin_columns(model, pmodel)
    for _ in range(20):
        joints = model.random_configuration(rng)[7:]
        measured = legs.measure(joints, sigma)
        assert [m.name for m in measured] == feet
        q = pin_q(model, pmodel, joints)
        pin.computeJointJacobians(pmodel, pdata, q)
        pin.updateFramePlacements(pmodel, pdata)
        imu_pose = pdata.oMf[pmodel.getFrameId(imu)]
        for m in measured:
            fid = pmodel.getFrameId(m.name)
            expected = imu_pose.rotation.T @ (pdata.oMf[fid].translation - imu_pose.translation)
            np.testing.assert_allclose(m.position, expected, rtol=0, atol=1e-12)
            J = pin.getFrameJacobian(pmodel, pdata, fid, pin.LOCAL_WORLD_ALIGNED)[:3, columns]
            J_imu = imu_pose.rotation.T @ J
            np.testing.assert_allclose(m.covariance, sigma**2 * J_imu @ J_imu.T, rtol=1e-10, atol=1e-18)


def test_covariance_matches_finite_differences_of_the_foot_position() -> None:
    """Covariance = sigma^2 J J^T with J the derivative of the IMU-frame foot position in the joints."""
    model = kd.Model.from_urdf(HEXAPOD, floating_base=True)
    legs = LegKinematics(model, "imu", HEXAPOD_FEET)
    joints = model.random_configuration(7)[7:]
    h = 1e-6
    columns = []
    for j in range(joints.size):
        step = np.zeros_like(joints)
        step[j] = h
        plus = np.array([m.position for m in legs.measure(joints + step, 0.0)])
        minus = np.array([m.position for m in legs.measure(joints - step, 0.0)])
        columns.append((plus - minus) / (2 * h))
    jacobians = np.stack(columns, axis=-1)  # (feet, 3, joints)
    for m, J in zip(legs.measure(joints, 1.0), jacobians, strict=True):
        np.testing.assert_allclose(m.covariance, J @ J.T, rtol=1e-7, atol=1e-9)


def test_a_nan_joint_leaves_out_only_its_foot() -> None:
    model = kd.Model.from_urdf(HEXAPOD, floating_base=True)
    legs = LegKinematics(model, "imu", HEXAPOD_FEET)
    joints = model.random_configuration(1)[7:]
    reference = {m.name: m for m in legs.measure(joints, 1e-3)}
    joints[model.joint_id("LM_knee")] = np.nan
    measured = legs.measure(joints, 1e-3)
    assert [m.name for m in measured] == [f for f in HEXAPOD_FEET if f != "LM_foot"]
    for m in measured:
        np.testing.assert_array_equal(m.position, reference[m.name].position)


def test_measurements_pass_the_checks_they_skip_and_are_read_only() -> None:
    """measure builds FootMeasurement.computed (no input checks): its values must pass those checks (finite,
    symmetric, positive semi-definite), exactly, and nobody may change them afterwards."""
    model = kd.Model.from_urdf(HEXAPOD, floating_base=True)
    legs = LegKinematics(model, "imu", HEXAPOD_FEET)
    rng = np.random.default_rng(5)
    for _ in range(50):
        for m in legs.measure(model.random_configuration(rng)[7:], 1e-3):
            checked = FootMeasurement(m.name, m.position, m.covariance)
            np.testing.assert_array_equal(checked.covariance, m.covariance)
            np.testing.assert_array_equal(m.covariance, m.covariance.T)
            assert not m.position.flags.writeable
            assert not m.covariance.flags.writeable


def test_legs_are_found_from_the_tree() -> None:
    model = kd.Model.from_urdf(HEXAPOD, floating_base=True)
    leg = find_leg(model, "RM_foot")
    assert [model.joint_names[j] for j in leg.joints] == ["RM_yaw", "RM_hip", "RM_knee"]
    with pytest.raises(ValueError, match="rigidly attached to the root link"):
        find_leg(model, "imu")


def test_bad_configuration_is_refused_with_a_clear_message() -> None:
    model = kd.Model.from_urdf(HEXAPOD, floating_base=True)
    with pytest.raises(ValueError, match=r"not a link of robot 'hexapod'.*'LF_foot'"):
        LegKinematics(model, "imu_link", HEXAPOD_FEET)
    with pytest.raises(ValueError, match="foot 'LF_toe' is not a link"):
        LegKinematics(model, "imu", ["LF_toe"])
    with pytest.raises(ValueError, match="distinct"):
        LegKinematics(model, "imu", ["LF_foot", "LF_foot"])
    with pytest.raises(ValueError, match="moves with joint"):
        ImuExtrinsics.from_model(model, "LF_tibia")
    with pytest.raises(ValueError, match="floating_base=True"):
        ImuExtrinsics.from_model(kd.Model.from_urdf(HEXAPOD), "imu")
    legs = LegKinematics(model, "imu", HEXAPOD_FEET)
    with pytest.raises(ValueError, match=r"shape \(18,\)"):
        legs.measure(np.zeros(12), 1e-3)


@pytest.mark.parametrize("robot", ROBOTS)
def test_extrinsics_match_pinocchio(robot: str) -> None:
    source, imu, _ = ROBOTS[robot]
    xml = source()
    extrinsics = ImuExtrinsics.from_model(kd.Model.from_urdf(xml, floating_base=True), imu)
    pmodel, pdata = pin_model(xml)
    pin.framesForwardKinematics(pmodel, pdata, pin.neutral(pmodel))
    pose = pdata.oMf[pmodel.getFrameId(imu)]
    np.testing.assert_allclose(extrinsics.rotation, pose.rotation, atol=1e-14)
    np.testing.assert_allclose(extrinsics.translation, pose.translation, atol=1e-14)
    assert np.linalg.norm(extrinsics.translation) > 0.1
    assert not np.allclose(extrinsics.rotation, np.eye(3))


def rigid_imu_state(extrinsics: ImuExtrinsics, C_WB: np.ndarray, p_B: np.ndarray, v_body: np.ndarray,
                    w_body: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The IMU's state of a base moving as given (rigid-body velocity transfer, the other direction)."""
    C_BI, r_BI = extrinsics.rotation, extrinsics.translation
    return (C_WB @ C_BI, p_B + C_WB @ r_BI, C_WB @ (v_body + np.cross(w_body, r_BI)), C_BI.T @ w_body)


def test_base_state_inverts_the_rigid_body_transfer() -> None:
    extrinsics = ImuExtrinsics.from_model(kd.Model.from_urdf(quadruped_offset_imu_xml(), floating_base=True),
                                          QUADRUPED_IMU)
    rng = np.random.default_rng(5)
    for _ in range(10):
        C_WB, p_B = so3_exp(rng.normal(size=3)), rng.normal(size=3)
        v_body, w_body = rng.normal(size=3), rng.normal(size=3)
        base = extrinsics.base_state(*rigid_imu_state(extrinsics, C_WB, p_B, v_body, w_body))
        np.testing.assert_allclose(base.rotation, C_WB, atol=1e-14)
        np.testing.assert_allclose(base.position, p_B, atol=1e-14)
        np.testing.assert_allclose(base.linear_velocity, v_body, atol=1e-14)
        np.testing.assert_allclose(base.angular_velocity, w_body, atol=1e-14)


def output_jacobians(extrinsics: ImuExtrinsics, rotation: np.ndarray, velocity: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Oracle of the compiled base_output's covariance map: pose ``[dp_B (world); dtheta (world axes)]``
    from ``[dp, dv, dtheta, db_a, db_g]`` (6x15, local ``dtheta``), twist ``[dv_B; dw_B]`` (base frame) from
    ``[dp, dv, dtheta, db_a, db_g, n_g]`` (6x18, ``n_g`` the gyro reading's white noise)."""
    C_BI, lever_skew = extrinsics.rotation, kd.spatial.skew(extrinsics.lever)
    noise = np.vstack([-C_BI @ lever_skew, -C_BI])
    pose = np.zeros((6, 15))
    pose[:3, :3] = np.eye(3)
    pose[:3, 6:9] = rotation @ lever_skew
    pose[3:, 6:9] = rotation
    twist = np.zeros((6, 18))
    twist[:, 12:15] = twist[:, 15:18] = noise
    twist[:3, 3:6] = C_BI @ rotation.T
    twist[:3, 6:9] = C_BI @ kd.spatial.skew(rotation.T @ velocity)
    return pose, twist


def output_covariances(extrinsics: ImuExtrinsics, rotation: np.ndarray, velocity: np.ndarray,
                       covariance: np.ndarray, gyro_variance: float) -> tuple[np.ndarray, np.ndarray]:
    """Oracle: pose and twist covariances ``J P J^T`` (``output_jacobians``), symmetrised."""
    pose_map, twist_map = output_jacobians(extrinsics, rotation, velocity)
    pose = pose_map @ covariance @ pose_map.T
    twist = twist_map @ np.block([[covariance, np.zeros((15, 3))],
                                  [np.zeros((3, 15)), gyro_variance * np.eye(3)]]) @ twist_map.T
    return 0.5 * (pose + pose.T), 0.5 * (twist + twist.T)


def test_output_jacobians_match_finite_differences() -> None:
    """Perturb the IMU state (p, v, local theta, b_g, gyro noise) and difference the base outputs."""
    extrinsics = ImuExtrinsics.from_model(kd.Model.from_urdf(quadruped_offset_imu_xml(), floating_base=True),
                                          QUADRUPED_IMU)
    rng = np.random.default_rng(11)
    C, p, v, w = so3_exp(rng.normal(size=3)), rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    estimate = extrinsics.base_state(C, p, v, w)

    def outputs(dx: np.ndarray) -> np.ndarray:
        """Published errors (true - estimate) for an error dx = [dp, dv, dtheta, db_a, db_g, n_g]."""
        true_w = w - dx[12:15] - dx[15:18]  # w_hat = w_m - b_g_hat = w_true + db_g + n_g
        true = extrinsics.base_state(C @ so3_exp(dx[6:9]), p + dx[:3], v + dx[3:6], true_w)
        d_theta_world = kd.spatial.so3_log(true.rotation @ estimate.rotation.T)
        return np.concatenate([true.position - estimate.position, d_theta_world,
                               true.linear_velocity - estimate.linear_velocity,
                               true.angular_velocity - estimate.angular_velocity])

    h = 1e-6
    numeric = np.stack([(outputs(h * e) - outputs(-h * e)) / (2 * h) for e in np.eye(18)], axis=1)
    pose, twist = output_jacobians(extrinsics, C, v)
    np.testing.assert_allclose(pose, numeric[:6, :15], atol=1e-8)
    np.testing.assert_allclose(numeric[:6, 15:], 0.0, atol=1e-8)
    np.testing.assert_allclose(twist, numeric[6:], atol=1e-8)


@pytest.mark.parametrize("angle", [0.3, 3.1, np.pi])  # every Shepperd pivot, and the half turn
def test_base_output_equals_the_reference_steps(angle: float) -> None:
    """The compiled base_output = base_state, matrix_to_quat and output_covariances (the finite-difference
    checked Jacobians) composed in numpy, for random states and covariances."""
    extrinsics = ImuExtrinsics.from_model(kd.Model.from_urdf(quadruped_offset_imu_xml(), floating_base=True),
                                          QUADRUPED_IMU)
    rng = np.random.default_rng(int(angle * 10))
    for axis in (*np.eye(3), *rng.normal(size=(5, 3))):
        C = so3_exp(angle * axis / np.linalg.norm(axis)) @ extrinsics.rotation  # C_WB is the given turn
        p, v, w = rng.normal(size=(3, 3))
        A = rng.normal(size=(15, 15))
        P = A @ A.T
        out = extrinsics.base_output(C, p, v, w, P, 0.01)
        base = extrinsics.base_state(C, p, v, w)
        pose, twist = output_covariances(extrinsics, C, v, P, 0.01)
        expected = kd.spatial.matrix_to_quat(base.rotation)
        np.testing.assert_allclose(out.orientation, expected, rtol=0, atol=1e-14)
        assert out.orientation[3] >= 0.0
        for value, reference in ((out.position, base.position), (out.linear_velocity, base.linear_velocity),
                                 (out.angular_velocity, base.angular_velocity), (out.pose_covariance, pose),
                                 (out.twist_covariance, twist)):
            np.testing.assert_allclose(value, reference, rtol=1e-13, atol=1e-13 * np.abs(reference).max())
        np.testing.assert_array_equal(out.pose_covariance, out.pose_covariance.T)
        np.testing.assert_array_equal(out.twist_covariance, out.twist_covariance.T)
        assert not out.pose_covariance.flags.writeable
