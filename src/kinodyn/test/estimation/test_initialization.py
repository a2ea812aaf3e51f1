"""StandingInitializer: attitude and biases from a standing window of IMU samples (Robot Dynamics Essential,
(114) at rest)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.estimation import NoiseParameters
from kinodyn.estimation.initialization import StandingInitializer
from kinodyn.spatial import euler_to_matrix, matrix_to_euler
from kinodyn.spatial.lie import so3_log

if TYPE_CHECKING:
    from collections.abc import Iterator

    from numpy.typing import ArrayLike

G = 9.81
RATE = 400.0
C_BI = euler_to_matrix([2.0, -0.3, 0.4], "zyx")  # an IMU mounted yawed, pitched and rolled in the base


def standing_samples(C_WB: np.ndarray, accelerometer_bias: ArrayLike, gyroscope_bias: ArrayLike, count: int,
                     rng: int | np.random.Generator | None = None, noise: tuple[float, float] = (0.0, 0.0),
                     ) -> Iterator[tuple[float, np.ndarray, np.ndarray]]:
    """Readings of an IMU at rest on a base with attitude C_WB (Robot Dynamics Essential, (114) with a = 0, w
    = 0)."""
    C_WI = C_WB @ C_BI
    a = C_WI.T @ np.array([0.0, 0.0, G]) + accelerometer_bias
    w = np.asarray(gyroscope_bias, dtype=float)
    rng = np.random.default_rng(rng)
    for k in range(count):
        yield (k / RATE, w + noise[1] * rng.normal(size=3), a + noise[0] * rng.normal(size=3))


@pytest.mark.parametrize("yaw", [0.0, 1.3, -2.9])
def test_roll_pitch_and_biases_of_a_tilted_standing_robot(yaw: float) -> None:
    roll, pitch = 0.12, -0.2
    C_WB = euler_to_matrix([yaw, pitch, roll], "zyx")
    gyro_bias = np.array([0.004, -0.002, 0.003])
    # a bias along gravity (as seen by the IMU) is observable at rest: it is recovered exactly
    along = 0.07 * (C_WB @ C_BI).T @ np.array([0.0, 0.0, 1.0])
    init = StandingInitializer(C_BI, duration=0.5, gravity=G)
    done = [init.add(*s) for s in standing_samples(C_WB, along, gyro_bias, int(0.5 * RATE) + 1)]
    assert done[-1]
    assert not any(done[:-1])
    base_yaw, base_pitch, base_roll = matrix_to_euler(init.rotation @ C_BI.T, "zyx")
    assert base_yaw == pytest.approx(0.0, abs=1e-14)
    assert (base_pitch, base_roll) == pytest.approx((pitch, roll), abs=1e-12)
    np.testing.assert_allclose(init.gyroscope_bias, gyro_bias, atol=1e-15)
    np.testing.assert_allclose(init.accelerometer_bias, along, atol=1e-12)


def test_a_horizontal_bias_becomes_a_tilt_that_explains_the_readings() -> None:
    """Only the bias along gravity is observable: the result reproduces the mean specific force."""
    C_WB = euler_to_matrix([0.0, 0.05, -0.1], "zyx")
    bias = np.array([0.05, -0.04, 0.03])
    rng = np.random.default_rng(0)
    samples = list(standing_samples(C_WB, bias, np.zeros(3), 400, rng, noise=(0.02, 0.001)))
    init = StandingInitializer(C_BI, duration=0.5, gravity=G)
    assert any(init.add(*s) for s in samples)
    mean_a = np.mean([a for *_, a in samples[: int(0.5 * RATE) + 1]], axis=0)
    mean_w = np.mean([w for _, w, _ in samples[: int(0.5 * RATE) + 1]], axis=0)
    np.testing.assert_allclose(init.rotation.T @ [0.0, 0.0, G] + init.accelerometer_bias, mean_a, atol=1e-12)
    np.testing.assert_allclose(init.gyroscope_bias, mean_w, atol=1e-15)
    # the tilt error is bounded by the horizontal bias over g
    true_C_WI = C_WB @ C_BI
    angle = np.arccos(np.clip((np.trace(init.rotation.T @ true_C_WI) - 1) / 2, -1, 1))
    assert angle < 1.5 * np.linalg.norm(bias) / G


@pytest.mark.parametrize(("gyro", "accel", "reason"), [
    ([0.0, 0.3, 0.0], [0.0, 0.0, 0.0], "gyro 0.3"),
    ([0.0, 0.0, 0.0], [0.0, 0.0, 2.0], r"\| \|a\| - g \|"),
    ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], "off the window's mean"),
])
def test_motion_restarts_the_window(gyro: list[float], accel: list[float], reason: str) -> None:
    C_WB = euler_to_matrix([0.0, 0.1, 0.0], "zyx")
    samples = list(standing_samples(C_WB, np.zeros(3), np.zeros(3), 600))
    init = StandingInitializer(C_BI, duration=0.5, gravity=G)
    moved = 120  # 0.3 s in: one sample shows motion
    for k, (t, w, a) in enumerate(samples):
        w_k, a_k = (w + np.array(gyro), a + np.array(accel)) if k == moved else (w, a)
        if init.add(t, w_k, a_k):
            break
    assert init.restarts == 1
    assert init.restart_reason is not None
    assert re.search(reason, init.restart_reason)
    assert k == moved + 1 + int(0.5 * RATE)  # a full window after the discarded moving sample
    assert init.elapsed == pytest.approx(0.5)


def test_results_are_refused_before_the_window_is_complete() -> None:
    init = StandingInitializer(C_BI, duration=0.5)
    assert not init.add(0.0, np.zeros(3), [0.0, 0.0, G])
    with pytest.raises(RuntimeError, match="wait until add"):
        _ = init.rotation
    with pytest.raises(ValueError, match="finite"):
        init.add(0.01, [np.nan, 0.0, 0.0], [0.0, 0.0, G])
    with pytest.raises(ValueError, match="duration"):
        StandingInitializer(C_BI, duration=0.0)


def test_initial_covariance_matches_the_actual_errors() -> None:
    """Monte-Carlo of StandingInitializer.covariance: biases drawn from the prior, white noise at the
    densities; the errors [dtheta (local), db_a, db_g] (truth with the base yaw at zero, as odom starts) have
    the stated covariance: no yaw, the tilt exactly the horizontal bias (plus the mean noise) over g, the
    IMU position (started at ``rotation @ lever``) off by the tilt times the lever."""
    noise = NoiseParameters(accelerometer_noise_density=5e-3, gyroscope_noise_density=1e-3,
                            initial_accelerometer_bias=0.02)
    rng = np.random.default_rng(4)
    C_WB = euler_to_matrix([0.0, 0.1, -0.15], "zyx")
    count = int(0.5 * RATE) + 1
    sigma = (noise.accelerometer_noise_density * RATE**0.5, noise.gyroscope_noise_density * RATE**0.5)
    errors, P = [], None
    lever = np.array([-0.12, 0.04, -0.06])  # IMU frame: from the IMU to the base origin
    for _ in range(1500):
        b_a = noise.initial_accelerometer_bias * rng.normal(size=3)
        b_g = np.array([0.003, -0.002, 0.001])
        init = StandingInitializer(C_BI, duration=0.5, gravity=G, max_gyro=0.5, max_accel_deviation=2.0)
        for sample in standing_samples(C_WB, b_a, b_g, count, rng, noise=sigma):
            init.add(*sample)
        P = init.covariance(noise, lever) if P is None else P
        errors.append(np.concatenate([C_WB @ C_BI @ lever - init.rotation @ lever,
                                      so3_log(init.rotation.T @ C_WB @ C_BI), b_a - init.accelerometer_bias,
                                      b_g - init.gyroscope_bias]))
    errors = np.array(errors)
    keep_rows = np.r_[0:3, 6:15]
    P9 = P[np.ix_(keep_rows, keep_rows)]
    assert np.all(P[0:3, 3:6] == 0.0)
    assert np.all(P[3:6, 6:] == 0.0)
    # the yaw error is the base's zero ZYX yaw after a roll error: -sin(pitch) droll, no more
    up = init.rotation.T @ [0.0, 0.0, 1.0]
    yaw = errors[:, 3:6] @ up
    assert np.std(yaw) == pytest.approx(np.sqrt(up @ P[6:9, 6:9] @ up), rel=0.08)
    assert np.std(yaw) > 0.05 * np.std(errors[:, 3])  # the test sees it (pitch 0.1 rad)
    sample = np.cov(errors.T)
    std = np.sqrt(np.diag(P9))
    keep = std > 0  # every entry here: tilt, biases
    np.testing.assert_allclose(np.sqrt(np.diag(sample))[keep], std[keep], rtol=0.08)
    # correlations (the tilt-bias ones are +-1 for the bias part) within sampling error
    scale = np.outer(std, std)
    np.testing.assert_allclose((sample - P9)[np.ix_(keep, keep)] / scale[np.ix_(keep, keep)], 0.0, atol=0.09)
    correlation = P9 / scale
    assert np.abs(correlation[3:6, 6:9]).max() > 0.8
    assert np.abs(correlation[0:3, 3:6]).max() > 0.8
