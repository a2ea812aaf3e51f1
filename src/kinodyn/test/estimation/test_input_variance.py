"""``LeggedFilter.propagate``'s ``input_variance`` (the gap noise, docs/estimation.md "Estimator"):
a reading error of variance s^2, constant over a step of dt, adds s^2 dt^2 to the velocity (accelerometer)
and angle (gyroscope) covariance of both filters, in the ESKF convention; invalid variances are refused."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.estimation import ErrorStateEKF, LeggedFilter, NoiseParameters
from kinodyn.estimation.invariant import InvariantEKF
from kinodyn.spatial import euler_to_matrix

FILTERS = {"eskf": ErrorStateEKF, "invariant": InvariantEKF}
DT = 0.004


def _standing(name: str) -> tuple[LeggedFilter, np.ndarray, np.ndarray]:
    """A filter at rest, tilted, at the origin; the readings that keep it there (zero rate, f = -C^T g)."""
    f = FILTERS[name](NoiseParameters())
    C = euler_to_matrix([0.3, -0.1, 0.2], "zyx")
    f.initialize(C, np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
    return f, np.zeros(3), C.T @ [0.0, 0.0, 9.81]


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_input_variance_adds_its_variance_times_dt_squared(name: str) -> None:
    plain, w, a = _standing(name)
    noisy, _, _ = _standing(name)
    plain.propagate(w, a, DT)
    noisy.propagate(w, a, DT, input_variance=(4.0, 0.09))
    delta = noisy.navigation_covariance() - plain.navigation_covariance()
    np.testing.assert_allclose(delta[3:6, 3:6], 4.0 * DT**2 * np.eye(3), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(delta[6:9, 6:9], 0.09 * DT**2 * np.eye(3), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(delta[9:, 9:], 0.0, atol=1e-18)  # the biases are not touched
    np.testing.assert_array_equal(noisy.velocity, plain.velocity)  # the mean is not touched


@pytest.mark.parametrize("name", sorted(FILTERS))
@pytest.mark.parametrize("bad", [(-1.0, 0.0), (0.0, float("nan")), (float("inf"), 0.0)])
def test_invalid_input_variances_are_refused(name: str, bad: tuple[float, float]) -> None:
    f, w, a = _standing(name)
    before = f.navigation_covariance()
    with pytest.raises(ValueError, match="input_variance"):
        f.propagate(w, a, DT, input_variance=bad)
    np.testing.assert_array_equal(f.navigation_covariance(), before)
