"""The 2-link planar arm of urdf/README.md (a) (Robot Dynamics lecture notes (ETH), Lagrange (3.28)-(3.34),
projected Newton-Euler (3.43)-(3.45); Modern Robotics (8.9)-(8.10), (8.19)): M, C, g in closed form against
the compiled algorithms.

Geometry (Robot Dynamics lecture notes (ETH), Ex. 2.8.5): joints about +y, links along +z at q = 0, gravity
-z.
"""

from __future__ import annotations

import numpy as np
import pytest

import kinodyn as kd
from kinodyn import dynamics

from ..urdf_text import inertial_link

m1, m2, l1, a1, a2, I1, I2, G = 1.0, 2.0, 1.0, 0.5, 0.4, 0.1, 0.2, 9.81

URDF = f"""<robot name="two_link">
  <link name="base"/>
  {inertial_link("link1", m1, (0.05, 0, 0, I1, 0, 0.05), f"0 0 {a1}")}
  {inertial_link("link2", m2, (0.15, 0, 0, I2, 0, 0.15), f"0 0 {a2}")}
  <joint name="joint1" type="continuous"><parent link="base"/><child link="link1"/><axis xyz="0 1 0"/></joint>
  <joint name="joint2" type="continuous"><parent link="link1"/><child link="link2"/>
    <origin xyz="0 0 {l1}"/><axis xyz="0 1 0"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def arm() -> kd.Model:
    return kd.Model.from_urdf(URDF)


def closed_form(q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """M, C (Christoffel form, MR (8.19)) and g of the 2-link arm (urdf/README.md (a); Robot Dynamics
    Essential, (71)-(76))."""
    c2, s1, s2, s12 = np.cos(q[1]), np.sin(q[0]), np.sin(q[1]), np.sin(q[0] + q[1])
    M = np.array([
        [I1 + I2 + m1 * a1**2 + m2 * (l1**2 + a2**2 + 2 * l1 * a2 * c2), I2 + m2 * (a2**2 + l1 * a2 * c2)],
        [I2 + m2 * (a2**2 + l1 * a2 * c2), I2 + m2 * a2**2],
    ])
    h = -m2 * l1 * a2 * s2
    C = np.array([[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]])
    g = np.array([-m1 * G * a1 * s1 - m2 * G * (l1 * s1 + a2 * s12), -m2 * G * a2 * s12])
    return M, C, g


def test_seed_numbers_at_the_printed_state(arm: kd.Model) -> None:
    q, qd = np.array([0.3, -0.5]), np.array([1.0, 2.0])
    np.testing.assert_allclose(dynamics.mass_matrix(arm, q), [[4.2741, 1.2221], [1.2221, 0.5200]], atol=6e-5)
    b = dynamics.nonlinear_effects(arm, q, qd) - dynamics.gravity_torques(arm, q)
    np.testing.assert_allclose(b, [3.0683, -0.3835], atol=6e-5)
    np.testing.assert_allclose(dynamics.gravity_torques(arm, q), [-5.6885, 1.5592], atol=6e-5)


def test_closed_form_on_random_states(arm: kd.Model) -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, 2), rng.normal(size=2), rng.normal(size=2)
        M, C, g = closed_form(q, qd)
        np.testing.assert_allclose(dynamics.mass_matrix(arm, q), M, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dynamics.coriolis_matrix(arm, q, qd), C, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dynamics.gravity_torques(arm, q), g, rtol=1e-12, atol=1e-12)
        tau = M @ qdd + C @ qd + g
        np.testing.assert_allclose(dynamics.rnea(arm, q, qd, qdd), tau, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dynamics.aba(arm, q, qd, tau), qdd, rtol=1e-10, atol=1e-10)
        T = 0.5 * qd @ M @ qd
        np.testing.assert_allclose(dynamics.kinetic_energy(arm, q, qd), T, rtol=1e-12)
        U = m1 * G * a1 * np.cos(q[0]) + m2 * G * (l1 * np.cos(q[0]) + a2 * np.cos(q[0] + q[1]))
        np.testing.assert_allclose(dynamics.potential_energy(arm, q), U, rtol=1e-12, atol=1e-12)
