"""Dynamics against Pinocchio (test-only reference) on the Panda, Solo-12 (floating base) and every
URDF the project ships, fixed and floating: 50 random states each, relative error 1e-9.

Pinocchio's models take mimic joints as independent joints and continuous joints as (cos, sin).
``G`` maps kinodyn's v to Pinocchio's (a mimic joint copies its master times the multiplier); with
the constant G the reduced quantities are ``tau = G^T tau_pin(G v, G a)``, ``M = G^T M_pin G``,
``C = G^T C_pin G`` (Christoffel symbols transform as tensors), ``A_G = A_G,pin G``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest

from kinodyn import dynamics

from .pinocchio_pair import CASES, Pair, pair_fixture

if TYPE_CHECKING:
    from collections.abc import Iterator

STATES = 50


def close(actual: np.ndarray | float, expected: np.ndarray | float) -> None:
    """Relative error 1e-9, with an absolute floor of 1e-9 times the largest entry (entries near zero)."""
    expected = np.asarray(expected)
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-9 * scale)


pair = pair_fixture(CASES)


def states(pair: Pair) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(11)
    m = pair.m
    for _ in range(STATES):
        fext = rng.normal(size=(m.nbodies, 6))
        fext[0] = 0.0
        yield m.random_configuration(rng), rng.normal(size=m.nv), rng.normal(size=m.nv), fext


def full_mass_matrix(pair: Pair, qp: np.ndarray) -> np.ndarray:
    M = pin.crba(pair.pm, pair.pd, qp)
    full: np.ndarray = np.triu(M) + np.triu(M, 1).T
    return full


def test_inverse_dynamics_and_its_terms(pair: Pair) -> None:
    m, pm, pd, G = pair.m, pair.pm, pair.pd, pair.G
    for q, v, a, fext in states(pair):
        qp, vp, ap = pair.q(q), G @ v, G @ a
        close(dynamics.rnea(m, q, v, a), G.T @ pin.rnea(pm, pd, qp, vp, ap))
        close(dynamics.rnea(m, q, v, a, fext), G.T @ pin.rnea(pm, pd, qp, vp, ap, pair.forces(fext)))
        close(dynamics.nonlinear_effects(m, q, v), G.T @ pin.nonLinearEffects(pm, pd, qp, vp))
        close(dynamics.gravity_torques(m, q), G.T @ pin.computeGeneralizedGravity(pm, pd, qp))
        close(dynamics.mass_matrix(m, q), G.T @ full_mass_matrix(pair, qp) @ G)
        close(dynamics.coriolis_matrix(m, q, v), G.T @ pin.computeCoriolisMatrix(pm, pd, qp, vp) @ G)


def test_forward_dynamics(pair: Pair) -> None:
    m, pm, pd, G = pair.m, pair.pm, pair.pd, pair.G
    for q, v, tau, fext in states(pair):
        qp, vp = pair.q(q), G @ v
        for wrenches in (None, fext):
            pin_wrenches = () if wrenches is None else (pair.forces(wrenches),)
            if m.mimic_joint_names:  # reduced dynamics: G^T M G qdd = tau - G^T rnea_pin(qdd = 0)
                bias = G.T @ pin.rnea(pm, pd, qp, vp, np.zeros(pm.nv), *pin_wrenches)
                expected = np.linalg.solve(G.T @ full_mass_matrix(pair, qp) @ G, tau - bias)
            else:  # G is a permutation
                expected = G.T @ pin.aba(pm, pd, qp, vp, G @ tau, *pin_wrenches)
            close(dynamics.aba(m, q, v, tau, wrenches), expected)


def test_centroidal_momentum_matrix_and_energies(pair: Pair) -> None:
    m, pm, pd, G = pair.m, pair.pm, pair.pd, pair.G
    for q, v, _, _ in states(pair):
        qp, vp = pair.q(q), G @ v
        close(dynamics.centroidal_momentum_matrix(m, q), pin.ccrba(pm, pd, qp, vp) @ G)
        close(dynamics.kinetic_energy(m, q, v), pin.computeKineticEnergy(pm, pd, qp, vp))
        close(dynamics.potential_energy(m, q), pin.computePotentialEnergy(pm, pd, qp))


def test_batch_forms_match_pinocchio_row_by_row(pair: Pair) -> None:
    m, pm, pd, G = pair.m, pair.pm, pair.pd, pair.G
    Q, V, A, _ = (np.array(x) for x in zip(*states(pair), strict=True))
    rows = list(zip(Q, V, A, strict=True))
    expected = np.array([G.T @ pin.rnea(pm, pd, pair.q(q), G @ v, G @ a) for q, v, a in rows])
    close(dynamics.rnea_batch(m, Q, V, A), expected)
    if m.mimic_joint_names:
        with pytest.raises(ValueError, match="mimic"):
            dynamics.aba_batch(m, Q, V, A)
        return
    expected = np.array([G.T @ pin.aba(pm, pd, pair.q(q), G @ v, G @ t) for q, v, t in rows])
    close(dynamics.aba_batch(m, Q, V, A), expected)
