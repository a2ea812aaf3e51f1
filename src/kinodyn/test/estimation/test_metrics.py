"""kinodyn.estimation.metrics on trajectories with known errors (hand-computed figures) and on chi-square
draws (the NEES bounds hold ~95 % of the time for a consistent sample, fail for a scaled one)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kinodyn.estimation.metrics import Trajectory, accuracy, nees_summary, pair_by_stamp
from kinodyn.spatial import euler_to_matrix, matrix_to_quat, rot_z

N = 1001


def straight_line(yaw: float = 0.0, offset: tuple[float, float, float] = (0.0, 0.0, 0.0),
                  roll: float = 0.0) -> Trajectory:
    """10 m along the heading ``yaw`` in 10 s at 1 m/s, from ``offset``; constant ``roll``."""
    t = np.linspace(0.0, 10.0, N)
    direction = rot_z(yaw) @ [1.0, 0.0, 0.0]
    position = np.asarray(offset) + t[:, None] * direction
    quaternion = np.tile(matrix_to_quat(euler_to_matrix([yaw, 0.0, roll], "zyx")), (N, 1))
    velocity = np.tile([1.0, 0.0, 0.0], (N, 1))  # base frame: C^T v_W = Rx(roll)^T e_x = e_x
    return Trajectory(t, position, quaternion, velocity)


def test_perfect_estimate_in_another_odom_frame() -> None:
    """The estimate starts at its own origin and yaw: after the 4-dof start alignment every error is 0."""
    truth = straight_line(yaw=0.7, offset=(3.0, -2.0, 0.5))
    estimate = straight_line(yaw=0.0)
    report = accuracy(truth, estimate)
    assert report.samples == N
    assert report.path_length == pytest.approx(10.0)
    assert report.drift == pytest.approx(0.0, abs=1e-12)
    assert report.position_rmse == pytest.approx(0.0, abs=1e-12)
    assert report.final_yaw_error_deg == pytest.approx(0.0, abs=1e-9)
    assert report.roll_rmse_deg == pytest.approx(0.0, abs=1e-9)


def test_known_errors() -> None:
    truth = straight_line()
    t = truth.t
    drift_error = np.stack([np.zeros(N), 0.1 * t / 10.0, np.zeros(N)], axis=1)  # 10 cm sideways at the end
    tilt = math.radians(0.5)
    quaternion = np.array([matrix_to_quat(euler_to_matrix([math.radians(2.0) * s / 10.0, -tilt, tilt], "zyx"))
                           for s in t])
    velocity = truth.linear_velocity + np.array([0.03, 0.04, 0.0])
    estimate = Trajectory(t, truth.position + drift_error, quaternion, velocity)
    report = accuracy(truth, estimate)
    assert report.final_horizontal_error == pytest.approx(0.1)
    assert report.drift == pytest.approx(0.01)
    assert report.roll_rmse_deg == pytest.approx(0.5)
    assert report.pitch_rmse_deg == pytest.approx(0.5)
    assert report.final_yaw_error_deg == pytest.approx(2.0)
    assert report.velocity_rmse == pytest.approx(0.05)
    assert report.position_rmse == pytest.approx(0.1 * math.sqrt(np.mean((t / 10.0) ** 2)))


def test_pairing_by_stamp() -> None:
    truth_t = np.arange(0.0, 1.0, 0.002)
    estimate_t = np.concatenate([truth_t[::3] + 1e-9, [0.5011, 2.0]])  # two stamps without a truth partner
    truth_index, estimate_index = pair_by_stamp(truth_t, np.sort(estimate_t), tolerance=1e-6)
    assert len(estimate_index) == len(truth_t[::3])
    assert np.allclose(truth_t[truth_index], np.sort(estimate_t)[estimate_index], atol=1e-6)
    with pytest.raises(ValueError, match="no estimate stamp"):
        pair_by_stamp(truth_t, truth_t + 0.5e-3)


def test_bad_trajectories() -> None:
    truth = straight_line()
    with pytest.raises(ValueError, match="non-finite"):
        Trajectory(truth.t, np.full((N, 3), np.nan), truth.quaternion, truth.linear_velocity)
    with pytest.raises(ValueError, match="shape"):
        Trajectory(truth.t, truth.position[:, :2], truth.quaternion, truth.linear_velocity)
    with pytest.raises(ValueError, match="non-decreasing"):
        Trajectory(truth.t[::-1], truth.position, truth.quaternion, truth.linear_velocity)


def test_nees_bounds_on_chi_square_draws() -> None:
    rng = np.random.default_rng(0)
    inside = [nees_summary(rng.chisquare(9, 200)).inside for _ in range(400)]
    assert 0.92 < np.mean(inside) < 0.98  # 95 % two-sided bounds
    summary = nees_summary(2.0 * rng.chisquare(9, 200))  # overconfident filter: NEES twice too large
    assert not summary.inside
    assert summary.mean > summary.upper
    few = nees_summary(rng.chisquare(9, 2000), independent_samples=20)
    assert few.samples == 20
    assert few.upper - few.lower > nees_summary(rng.chisquare(9, 2000)).upper - 9.0
    with pytest.raises(ValueError, match="NEES values must be"):
        nees_summary([1.0, np.nan])
