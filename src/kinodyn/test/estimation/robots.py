"""Robots shared by the estimation tests: the quadruped with its IMU well off the base origin and rotated.

``quadruped_offset_imu.urdf`` (next to this file) is urdf/quadruped.urdf with only the ``imu_joint`` origin
changed; ``quadruped_offset_imu_xml()`` builds it and test_synthetic.py checks the stored file equals it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from kinodyn.estimation.metrics import AccuracyReport, Trajectory, accuracy

import kinodyn as kd

if TYPE_CHECKING:
    from kinodyn.estimation import LeggedEstimator
    from kinodyn.estimation.synthetic import SyntheticRun

HERE = Path(__file__).resolve().parent
QUADRUPED_URDF = HERE.parents[3] / "urdf" / "quadruped.urdf"
OFFSET_IMU_URDF = HERE / "quadruped_offset_imu.urdf"
QUADRUPED_FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
QUADRUPED_IMU = "imu_link"
# Nominal stance of urdf/quadruped.urdf (urdf/README.md), model joint order.
QUADRUPED_STANDING_JOINTS = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])
IMU_ORIGIN = '<origin xyz="0.0 0.0 0.05" rpy="0.0 0.0 0.0" />'
OFFSET_IMU_ORIGIN = '<origin xyz="0.12 -0.04 0.06" rpy="0.1 -0.2 1.2" />'


def quadruped_offset_imu_xml() -> str:
    """urdf/quadruped.urdf with the IMU 12 cm forward, 4 cm right, 6 cm up, rotated (rpy 0.1, -0.2, 1.2)."""
    text = QUADRUPED_URDF.read_text()
    if text.count(IMU_ORIGIN) != 1:
        raise AssertionError(f"{QUADRUPED_URDF} no longer has the imu_joint origin {IMU_ORIGIN}")
    return text.replace(IMU_ORIGIN, OFFSET_IMU_ORIGIN)


def quadruped_offset_imu_model() -> kd.Model:
    """The floating-base model of ``quadruped_offset_imu.urdf``."""
    return kd.Model.from_urdf(quadruped_offset_imu_xml(), floating_base=True)


def track(estimator: LeggedEstimator, run: SyntheticRun) -> AccuracyReport:
    """Feed ``run`` (a clean synthetic walk of the quadruped) to ``estimator`` sample by sample (IMU,
    contacts, joint state) and compare its estimates with the run's truth."""
    estimates = []
    for k, t in enumerate(run.t):
        estimate = estimator.add_imu(t, run.imu_angular_velocity[k], run.imu_linear_acceleration[k])
        if estimate is not None:
            estimates.append(estimate)
        estimator.add_contacts(t, dict(zip(QUADRUPED_FEET, run.contacts[k].tolist(), strict=True)))
        estimator.add_joint_state(t, run.joint_positions[k], run.joint_velocities[k], run.joint_efforts[k])
    return accuracy(Trajectory(run.t, run.position, run.quaternion, run.linear_velocity),
                    Trajectory(*(np.array([getattr(e, name) for e in estimates])
                                 for name in ("stamp", "position", "orientation", "linear_velocity"))))
