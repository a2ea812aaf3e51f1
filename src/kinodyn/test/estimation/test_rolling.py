"""Rolling spherical feet (docs/estimation.md "Rolling feet"): the point a rolling sphere keeps fixed, the
radii from the URDF, and the synthetic trot on rolling feet estimated with and without the correction."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.estimation import LeggedEstimator
from kinodyn.estimation.legs import LegKinematics, foot_radii
from kinodyn.estimation.synthetic import SyntheticRun, trotting_walk
from kinodyn.sim import ContactSphere, collision_spheres
from kinodyn.spatial.lie import so3_exp

import kinodyn as kd

from .robots import (
    QUADRUPED_FEET,
    QUADRUPED_IMU,
    QUADRUPED_STANDING_JOINTS,
    QUADRUPED_URDF,
    quadruped_offset_imu_model,
    track,
)

RADIUS = 0.03
UP = np.array([0.0, 0.0, 1.0])


@pytest.mark.parametrize("angle", [0.3, 1.0, 2.5, 3.1])
def test_a_sphere_rolled_about_a_fixed_axis_keeps_its_fixed_point(angle: float) -> None:
    """Closed form: a sphere of radius rho rolled without slipping by ``angle`` about a fixed world axis a
    moves its centre by ``rho angle (a x n)``. Feet placed that way (touchdown joints q0, base pose 0; later
    joints q1 and the base pose that puts the foot at the rolled centre and orientation) are measured at the
    touchdown centre to 1e-12 m; uncorrected, at the rolled centre."""
    model = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
    legs = LegKinematics(model, QUADRUPED_IMU, QUADRUPED_FEET, RADIUS)
    C_BI, r_BI = legs.extrinsics.rotation, legs.extrinsics.translation
    rng = np.random.default_rng(int(angle * 10))
    q0, q1 = model.neutral(), model.neutral()
    q0[7:] = QUADRUPED_STANDING_JOINTS
    q1[7:] = QUADRUPED_STANDING_JOINTS + rng.uniform(-0.3, 0.3, 12)
    C_WB0 = so3_exp(rng.uniform(-0.2, 0.2, 3))
    p_B0 = np.array([0.1, -0.2, 0.5])
    legs.measure(q0[7:], 0.0)
    legs.touch_down(QUADRUPED_FEET, C_WB0 @ C_BI)
    foot = QUADRUPED_FEET[int(angle) % 4]
    T0, T1 = model.frame_placement(q0, foot), model.frame_placement(q1, foot)
    centre0 = p_B0 + C_WB0 @ T0[:3, 3]
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    roll = so3_exp(angle * axis)
    centre1 = centre0 + RADIUS * angle * np.cross(axis, UP)
    C_WB1 = roll @ C_WB0 @ T0[:3, :3] @ T1[:3, :3].T  # foot orientation rolled: C_WF1 = roll C_WF0
    p_B1 = centre1 - C_WB1 @ T1[:3, 3]
    C_WI1, p_I1 = C_WB1 @ C_BI, p_B1 + C_WB1 @ r_BI
    corrected = {m.name: m.position for m in legs.measure(q1[7:], 0.0, C_WI1, [foot])}
    plain = {m.name: m.position for m in legs.measure(q1[7:], 0.0)}
    np.testing.assert_allclose(p_I1 + C_WI1 @ corrected[foot], centre0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p_I1 + C_WI1 @ plain[foot], centre1, rtol=0, atol=1e-12)
    assert np.linalg.norm(centre1 - centre0) > 0.8 * RADIUS * angle * 0.1  # the correction is not trivial
    for other in QUADRUPED_FEET:  # feet not in stance are measured at their frames
        if other != foot:
            np.testing.assert_array_equal(corrected[other], plain[other])


def test_radii_come_from_the_spheres_centred_at_the_feet() -> None:
    model = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
    spheres = collision_spheres(QUADRUPED_URDF)
    assert foot_radii(model, QUADRUPED_FEET, spheres) == (RADIUS,) * 4
    off = tuple(ContactSphere(s.link, (0.0, 0.0, 0.01), s.radius) if s.link == "LF_FOOT" else s
                for s in spheres)
    assert foot_radii(model, QUADRUPED_FEET, off) == (0.0, RADIUS, RADIUS, RADIUS)  # not centred: 0
    assert foot_radii(model, QUADRUPED_FEET, ()) == (0.0,) * 4
    with pytest.raises(ValueError, match="radii"):
        foot_radii(model, QUADRUPED_FEET, (*spheres, ContactSphere("LF_FOOT", (0.0, 0.0, 0.0), 0.05)))
    for bad in (-0.01, float("nan"), (0.03, 0.03)):
        with pytest.raises(ValueError, match="foot_radius"):
            LegKinematics(model, QUADRUPED_IMU, QUADRUPED_FEET, bad)


@pytest.fixture(scope="module")
def rolling_trot() -> SyntheticRun:
    """8 s of the synthetic trot (BMI088 and encoder noise, offset rotated IMU) on feet that roll: 3 cm
    spheres, no slip (synthetic._rolled: the rotation increments of each sample summed)."""
    return trotting_walk(quadruped_offset_imu_model(), QUADRUPED_IMU, QUADRUPED_FEET, duration=8.0, seed=0,
                         standing_joints=QUADRUPED_STANDING_JOINTS, foot_radius=RADIUS)


def test_rolling_synthesis_keeps_the_contact_points_still(rolling_trot: SyntheticRun) -> None:
    """The synthesis against its definition: stance centres move at ``rho omega x n`` (central differences
    of the centres against the foot rates of the synthesised joint velocities), the contact points do not."""
    run, model = rolling_trot, rolling_trot.model
    stance = np.flatnonzero(run.contacts[:-2].all(axis=1) & run.contacts[1:-1].all(axis=1)
                            & run.contacts[2:].all(axis=1)) + 1
    worst = moving = 0.0
    for i in stance[::7]:
        q = np.concatenate([run.position[i], run.quaternion[i], run.true_joint_positions[i]])
        v = np.concatenate([run.linear_velocity[i], run.angular_velocity[i], run.true_joint_velocities[i]])
        for k, foot in enumerate(run.feet):
            omega = model.frame_jacobian(q, foot, "local_world_aligned")[3:] @ v
            centre_rate = (run.foot_positions[i + 1, k] - run.foot_positions[i - 1, k]) * run.rate / 2
            worst = max(worst, float(np.abs(centre_rate - RADIUS * np.cross(omega, UP)).max()))
            moving = max(moving, float(np.linalg.norm(centre_rate)))
    assert len(stance) > 100
    assert moving > 0.02
    assert worst < 2e-5  # O(dt^2) of the differences


@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_a_trot_on_rolling_feet_needs_the_correction(rolling_trot: SyntheticRun, filter_name: str) -> None:
    """The estimator's accuracy bounds (drift <= 1 %, roll/pitch RMSE <= 0.5 deg, velocity RMSE <= 0.05 m/s)
    hold on rolling feet with ``foot_radius`` = the spheres' radius; with 0 the stance feet's rolling is read
    as base motion: over 10x the drift and over 3x the velocity RMSE (the test prints both runs' figures)."""
    run = rolling_trot
    reports = {}
    for radius in (RADIUS, 0.0):
        reports[radius] = track(LeggedEstimator(run.model, QUADRUPED_IMU, QUADRUPED_FEET, filter=filter_name,
                                                foot_radius=radius), run)
        print(f"\n{filter_name} foot_radius {radius}: drift {100 * reports[radius].drift:.3f} % of "
              f"{reports[radius].path_length:.2f} m, velocity RMSE {reports[radius].velocity_rmse:.4f} m/s")
    good, plain = reports[RADIUS], reports[0.0]
    assert good.path_length > 2.5
    assert good.drift < 0.01
    assert good.velocity_rmse < 0.05
    assert max(good.roll_rmse_deg, good.pitch_rmse_deg) < 0.5
    assert plain.drift > 10 * good.drift
    assert plain.velocity_rmse > 3 * good.velocity_rmse
