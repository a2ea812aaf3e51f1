"""Physical identities of the dynamics on the project's arm, the floating-base quadruped and the Panda
(a mimic joint): M symmetric positive definite, ABA(RNEA(a)) = a, C v = h - g, dM/dt - 2C skew-symmetric
(Modern Robotics, Prop. 8.1), power balance, external wrenches as J^T f, and the Lagrange equations
(Modern Robotics, (8.14)-(8.19)) by finite differences of the energies.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest

import kinodyn as kd
from kinodyn import dynamics

if TYPE_CHECKING:
    from collections.abc import Iterator

URDFS = Path(__file__).resolve().parents[4] / "urdf"
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
CASES = {
    "arm7": (URDFS / "arm7.urdf", False),
    "quadruped": (URDFS / "quadruped.urdf", True),
    "panda": (ROBOTS / "panda_description" / "urdf" / "panda.urdf", False),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def model(request: pytest.FixtureRequest) -> kd.Model:
    path, floating = CASES[request.param]
    return kd.Model.from_urdf(path, floating_base=floating)


def random_states(model: kd.Model, count: int = 10) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(5)
    for _ in range(count):
        yield model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


def trajectory_point(model: kd.Model, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                     t: float) -> tuple[np.ndarray, np.ndarray]:
    """``q(t) = q ⊕ (t v + t²/2 a)``, ``v(t) = v + t a``: consistent to second order in t."""
    return model.integrate(q, t * v + 0.5 * t * t * a, 1.0), v + t * a


def test_mass_matrix_symmetric_positive_definite(model: kd.Model) -> None:
    for q, v, _ in random_states(model):
        M = dynamics.mass_matrix(model, q)
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0.0
        np.testing.assert_allclose(dynamics.kinetic_energy(model, q, v), 0.5 * v @ M @ v, rtol=1e-12)


def test_aba_inverts_rnea_with_and_without_external_wrenches(model: kd.Model) -> None:
    rng = np.random.default_rng(1)
    for q, v, a in random_states(model):
        fext = rng.normal(size=(model.nbodies, 6))
        for wrenches in (None, fext):
            tau = dynamics.rnea(model, q, v, a, wrenches)
            np.testing.assert_allclose(dynamics.aba(model, q, v, tau, wrenches), a, rtol=1e-9, atol=1e-9)
        M = dynamics.mass_matrix(model, q)
        expected = M @ a + dynamics.nonlinear_effects(model, q, v)
        np.testing.assert_allclose(dynamics.rnea(model, q, v, a), expected, rtol=1e-10, atol=1e-10)


def test_coriolis_matrix_reproduces_velocity_terms_and_is_passive(model: kd.Model) -> None:
    h = 1e-6
    for q, v, _ in random_states(model):
        C = dynamics.coriolis_matrix(model, q, v)
        b = dynamics.nonlinear_effects(model, q, v) - dynamics.gravity_torques(model, q)
        np.testing.assert_allclose(C @ v, b, rtol=1e-10, atol=1e-10)
        Mdot = (dynamics.mass_matrix(model, model.integrate(q, v, h))
                - dynamics.mass_matrix(model, model.integrate(q, v, -h))) / (2 * h)
        N = Mdot - 2 * C
        np.testing.assert_allclose(N + N.T, 0.0, atol=1e-6 * max(1.0, np.abs(Mdot).max()))


def test_power_balance_along_the_motion(model: kd.Model) -> None:
    """dT/dt = v^T (tau - g) and dU/dt = v^T g along q'' = ABA(tau) (Modern Robotics, Prop. 8.1
    consequence)."""
    h = 1e-5
    for q, v, tau in random_states(model):
        a = dynamics.aba(model, q, v, tau)
        plus, minus = trajectory_point(model, q, v, a, h), trajectory_point(model, q, v, a, -h)
        dT = (dynamics.kinetic_energy(model, *plus) - dynamics.kinetic_energy(model, *minus)) / (2 * h)
        U_plus = dynamics.potential_energy(model, plus[0])
        U_minus = dynamics.potential_energy(model, minus[0])
        dU = (U_plus - U_minus) / (2 * h)
        g = dynamics.gravity_torques(model, q)
        scale = max(1.0, abs(v @ tau), abs(v @ g))
        assert abs(dT - v @ (tau - g)) < 1e-6 * scale
        assert abs(dU - v @ g) < 1e-6 * scale


def test_external_wrench_enters_as_jacobian_transpose(model: kd.Model) -> None:
    """A wrench w on a link (link frame, about its origin) changes tau by -J_local^T w
    (Robot Dynamics lecture notes (ETH), (3.49)-(3.51))."""
    rng = np.random.default_rng(2)
    for q, v, a in random_states(model, 5):
        for link in model.frame_names[-3:]:
            w = rng.normal(size=6)
            delta = dynamics.rnea(model, q, v, a, {link: w}) - dynamics.rnea(model, q, v, a)
            J = model.frame_jacobian(q, link, "local")
            np.testing.assert_allclose(delta, -J.T @ w, rtol=1e-10, atol=1e-10)


def test_lagrange_equations_by_finite_differences(model: kd.Model) -> None:
    """g = dU/dq and C_ij = sum_k Γ_ijk v_k with Γ_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)
    (Modern Robotics, (8.16)-(8.19); Robot Dynamics lecture notes (ETH), (3.27)); coordinates are moved along
    the tangent space."""
    h = 1e-6
    n = model.nv
    for q, v, _ in random_states(model, 4):
        dM = np.empty((n, n, n))  # dM[:, :, k] = dM / dq_k
        dU = np.empty(n)
        for k in range(n):
            e = np.zeros(n)
            e[k] = h
            qp, qm = model.integrate(q, e, 1.0), model.integrate(q, -e, 1.0)
            dM[:, :, k] = (dynamics.mass_matrix(model, qp) - dynamics.mass_matrix(model, qm)) / (2 * h)
            dU[k] = (dynamics.potential_energy(model, qp) - dynamics.potential_energy(model, qm)) / (2 * h)
        scale = max(1.0, np.abs(dynamics.gravity_torques(model, q)).max())
        np.testing.assert_allclose(dynamics.gravity_torques(model, q), dU, atol=1e-6 * scale)
        if model.floating_base:
            continue  # body-frame base velocities are not coordinate rates; (8.17) needs coordinates
        gamma = 0.5 * (dM + dM.transpose(0, 2, 1) - dM.transpose(2, 0, 1))
        C = dynamics.coriolis_matrix(model, q, v)
        np.testing.assert_allclose(C, gamma @ v, atol=1e-6 * max(1.0, np.abs(C).max()))
