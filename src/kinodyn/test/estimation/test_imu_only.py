"""The estimator on the IMU alone (no foot in contact): its position covariance stays consistent with its
error (NEES, Bar-Shalom 2001 §5.4) when the readings carry an acceleration error the noise densities leave
out.

Monte-Carlo: the quadruped (urdf/quadruped.urdf) stands still for 1 s (initialisation and stance updates),
then is lifted off the ground, held still, for 10 s; the IMU reads the true specific force with white noise
at the filter's own densities and, from lift-off, a constant acceleration error drawn from N(0, sigma^2) per
world axis (what the densities do not model: a residual bias or scale error, a tilt). With
``imu_only_acceleration_noise`` = sigma the mean position NEES at the end lies in its chi-square bounds; with
0 (the densities alone) it is far above them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from kinodyn.estimation.consistency import chi2_bounds, nees
from kinodyn.estimation.estimator import LeggedEstimator
from kinodyn.estimation.events import CONTACTS, IMU, JOINTS, EventBatch
from kinodyn.estimation.noise import NoiseParameters

from kinodyn import Model

URDF = Path(__file__).resolve().parents[4] / "urdf" / "quadruped.urdf"
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]
RATE = 200.0
STANCE_S, LIFTED_S = 1.0, 10.0
SIGMA = 0.2  # m/s^2, the unmodelled acceleration error and the estimator's imu_only_acceleration_noise
RUNS = 16


def _stance(model: Model) -> np.ndarray:
    angles = {"HAA": (0.0, 0.0), "HFE": (0.6, -0.6), "KFE": (-1.2, 1.2)}  # (front, hind)
    return np.array([angles[name[3:]][0 if name[1] == "F" else 1] for name in model.joint_names])


def _batch(model: Model, rng: np.random.Generator) -> EventBatch:
    """Standing, then lifted and held at the origin: IMU, contacts and joints at every stamp."""
    q = _stance(model)
    C_WI = model.frame_placement(np.r_[0, 0, 0, 0, 0, 0, 1.0, q], "imu_link")[:3, :3]
    noise = NoiseParameters()
    steps = int((STANCE_S + LIFTED_S) * RATE)
    stamps = 100.0 + np.arange(steps) / RATE
    lifted = stamps >= 100.0 + STANCE_S
    error = rng.normal(0.0, SIGMA, 3)  # world axes, from lift-off
    force = C_WI.T @ np.array([0.0, 0.0, 9.81])
    batch = EventBatch.empty(3 * steps, len(FEET), len(model.joint_names))
    batch.kinds[:] = np.tile([IMU, CONTACTS, JOINTS], steps)
    batch.stamps[:] = np.repeat(stamps, 3)
    batch.imu[0::3, :3] = rng.normal(0.0, noise.gyroscope_noise_density * np.sqrt(RATE), (steps, 3))
    batch.imu[0::3, 3:] = (force + rng.normal(0.0, noise.accelerometer_noise_density * np.sqrt(RATE),
                                              (steps, 3)) + np.outer(lifted, C_WI.T @ error))
    batch.contacts[1::3] = np.where(lifted, 0, 1)[:, None]
    batch.joints[2::3, 0] = q
    batch.joints[2::3, 1:] = 0.0
    return batch


def _final_position_nees(model: Model, sigma: float, seed: int) -> float:
    estimator = LeggedEstimator(model, "imu_link", FEET, imu_only_acceleration_noise=sigma)
    result = estimator.process(_batch(model, np.random.default_rng(seed)))
    assert estimator.imu_only_since == 100.0 + STANCE_S
    assert estimator.status.startswith("running on the IMU alone: no foot in contact since 101.000 s")
    row = result.estimates[np.flatnonzero(result.status == 1)[-1]]
    covariance = row[13:49].reshape(6, 6)[:3, :3]
    return nees(row[:3], covariance)  # the base stays at the odom origin


def test_position_nees_on_the_imu_alone_is_inside_its_chi_square_bounds() -> None:
    model = Model.from_urdf(URDF, floating_base=True)
    low, high = chi2_bounds(3, RUNS)
    grown = np.array([_final_position_nees(model, SIGMA, seed) for seed in range(RUNS)])
    assert low <= grown.mean() <= high, (grown.mean(), low, high)
    plain = np.array([_final_position_nees(model, 0.0, seed) for seed in range(RUNS)])
    assert plain.mean() > 10 * high, (plain.mean(), high)  # the densities alone: the covariance lies
