"""Chi-square helpers (kinodyn.estimation.consistency) against table values and sampling."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.estimation.consistency import chi2_bounds, gate, nees


def test_bounds_and_gates_match_chi_square_tables() -> None:
    # Bar-Shalom 2001 Table / any chi-square table: 1 dof, 2.5 % and 97.5 %; 3 dof 99.99 %; 1 dof 95 %
    assert chi2_bounds(1, 1) == pytest.approx((0.000982, 5.024), abs=1e-3)
    assert gate(3, 0.9999) == pytest.approx(21.108, abs=1e-3)
    assert gate(1, 0.95) == pytest.approx(3.841, abs=1e-3)
    # mean of 50 samples of 9 dof: chi2(450)/50; Wilson-Hilferty k (1 - 2/(9k) + z sqrt(2/(9k)))^3
    k, z = 450, 1.959964
    wilson_hilferty = [k * (1 - 2 / (9 * k) + s * z * np.sqrt(2 / (9 * k))) ** 3 / 50 for s in (-1, 1)]
    assert chi2_bounds(9, 50) == pytest.approx(wilson_hilferty, rel=1e-3)


def test_bounds_hold_the_stated_probability_over_samples() -> None:
    rng = np.random.default_rng(0)
    dof, samples, trials = 3, 10, 20000
    means = rng.chisquare(dof, size=(trials, samples)).mean(axis=1)
    lower, upper = chi2_bounds(dof, samples)
    inside = np.mean((means >= lower) & (means <= upper))
    assert inside == pytest.approx(0.95, abs=0.006)


def test_nees_is_the_normalised_squared_error() -> None:
    rng = np.random.default_rng(1)
    A = rng.normal(size=(6, 6))
    P = A @ A.T + 0.1 * np.eye(6)
    e = rng.normal(size=6)
    assert nees(e, P) == pytest.approx(e @ np.linalg.inv(P) @ e, rel=1e-10)
    draws = rng.multivariate_normal(np.zeros(6), P, size=4000)
    assert np.mean([nees(d, P) for d in draws]) == pytest.approx(6.0, abs=0.2)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="positive definite"):
        nees(np.ones(2), np.diag([1.0, -1.0]))
    with pytest.raises(ValueError, match="do not match"):
        nees(np.ones(3), np.eye(2))
    with pytest.raises(ValueError, match="finite"):
        nees([np.nan, 0.0], np.eye(2))
    with pytest.raises(ValueError, match="probability"):
        gate(3, 1.0)
    with pytest.raises(ValueError, match="dof"):
        chi2_bounds(0, 5)
