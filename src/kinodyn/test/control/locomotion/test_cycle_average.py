"""The footholds' velocity feedback (``cycle_average``): the gait cycle's mean error in closed form, the
sway/push split of ``feedback_error``, and in closed loop the lateral sway of a generated 80 kg quadruped's
forward trot on kinodyn.sim with default parameters. Simulated time only."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.locomotion.cycle_average import CycleAverage, feedback_error

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import acceptance_matrix as matrix

PERIOD = 0.5  # s
TICK = 0.002  # s


def _fed(average: CycleAverage, times: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    for t, (x, y) in zip(times, values, strict=True):
        average.add(float(t), PERIOD, float(x), float(y))
    return average.mean()


def test_the_mean_over_a_cycle_removes_the_gait_harmonics_and_keeps_a_steady_error() -> None:
    """A steady error plus components of period T, T/2 and T/3 (any phase): after a full cycle of samples
    the mean is the steady error (a uniform window of one period sums each harmonic to zero)."""
    times = np.arange(0.0, 3.0 * PERIOD, TICK)
    w = 2.0 * math.pi / PERIOD
    sway = np.stack([0.08 * np.sin(2 * w * times + 0.3) + 0.02 * np.cos(3 * w * times),
                     0.15 * np.sin(w * times + 1.1) + 0.03 * np.sin(2 * w * times)], axis=1)
    steady = np.array([0.04, -0.01])
    mean = _fed(CycleAverage(), times, sway + steady)
    np.testing.assert_allclose(mean, steady, atol=1e-9)


def test_samples_are_weighted_by_the_time_they_hold() -> None:
    """Irregular ticks: a value held three times as long counts three times as much, and samples older
    than the window leave it."""
    average = CycleAverage()
    average.add(0.0, PERIOD, 9.0, 9.0)  # older than the window once the rest is in
    average.add(0.2, PERIOD, 9.0, 9.0)
    average.add(0.3, PERIOD, 1.0, 0.0)  # held 0.1 s
    average.add(0.6, PERIOD, 5.0, 2.0)  # held 0.3 s
    average.add(0.75, PERIOD, 1.0, 0.0)  # held 0.15 s: the window 0.25 .. 0.75 s, half the first 1.0 in it
    mean = average.mean()
    expected = (np.array([1.0, 0.0]) * 0.05 + np.array([5.0, 2.0]) * 0.3 + np.array([1.0, 0.0]) * 0.15) / 0.5
    np.testing.assert_allclose(mean, expected, rtol=1e-12)


def test_a_new_window_or_time_going_back_starts_over() -> None:
    average = CycleAverage()
    _fed(average, np.arange(0.0, PERIOD, TICK), np.full((round(PERIOD / TICK), 2), 3.0))
    average.add(1.0, 2.0 * PERIOD, 0.5, -0.5)  # another gait's period
    assert average.mean() == (0.5, -0.5)
    average.add(1.2, 2.0 * PERIOD, 0.5, -0.5)
    average.add(0.1, 2.0 * PERIOD, -1.0, 2.0)  # time went back
    assert average.mean() == (-1.0, 2.0)
    average.reset()
    assert average.mean() == (0.0, 0.0)


def test_feedback_error_is_the_mean_plus_a_shrunk_sway_and_the_error_for_a_push() -> None:
    """``mean + min(1, (|d| / e_s)^2) d``: the mean for no sway, a quarter of a sway of half ``e_s``, the
    error itself from ``|d| = e_s`` on (a push), and no jump between (slope ``3 (|d| / e_s)^2 <= 3``)."""
    mean, sway_speed = (0.02, -0.01), 0.2
    direction = np.array([0.6, 0.8])
    assert feedback_error(mean, mean, sway_speed) == mean
    half = np.array(mean) + 0.5 * sway_speed * direction
    assert feedback_error((float(half[0]), float(half[1])), mean, sway_speed) == pytest.approx(
        tuple(np.array(mean) + 0.25 * 0.5 * sway_speed * direction))
    for push in ((0.02 + 0.12, -0.01 - 0.16), (0.02 + 0.3, -0.01 + 0.35)):  # |d| = e_s and beyond
        assert feedback_error(push, mean, sway_speed) == pytest.approx(push)
        assert feedback_error(push, mean, 0.0) == push
    previous = np.array(mean)
    for size in np.linspace(0.0, 2.0 * sway_speed, 201):  # steps of 0.002 m/s in |d|
        error = np.array(mean) + size * direction
        now = np.array(feedback_error((float(error[0]), float(error[1])), mean, sway_speed))
        assert np.linalg.norm(now - previous) <= 0.002 * 3 + 1e-12
        previous = now


def test_forward_trot_lateral_sway_of_a_generated_heavy_quadruped() -> None:
    """heavy_long (80 kg, legs of 0.6 m) trotting at 0.5 m/s on kinodyn.sim: no steady error, and the
    lateral velocity's oscillation about its mean at most 0.04 m/s (4/5 of the linear bound; the forward
    part is the swing legs' momentum moving the base about the CoM). The footholds fed the measured
    velocity moved each diagonal support with the sway and the sway grew past it."""
    row = matrix.evaluate(matrix.VARIANT["heavy_long"], "kinodyn", "forward 0.5 m/s")
    assert not row.fell, row.figure()
    assert not row.infeasible, row.figure()
    assert row.fallbacks == 0, row.figure()
    assert row.mean_error is not None, row.figure()
    assert row.oscillation is not None, row.figure()
    assert np.abs(row.mean_error[:2]).max() <= 0.01, row.figure()
    assert row.oscillation[1] <= 0.04, row.figure()
