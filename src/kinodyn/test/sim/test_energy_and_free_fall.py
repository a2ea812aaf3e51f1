"""Integrator accuracy on closed forms: a passive pendulum conserves energy, a free body falls as
``p(t) = p0 + v0 t + g t^2 / 2`` while spinning uniformly about a principal axis."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.spatial import matrix_to_quat, quat_to_matrix

import kinodyn as kd
from kinodyn import sim

from .conftest import BOX_URDF, PENDULUM_URDF


def _energy_drift(integrator: str, seconds: float = 10.0) -> np.ndarray:
    """Relative deviation of T + V from its initial value after each step over ``seconds``, released at
    1 rad."""
    m = kd.Model.from_urdf(PENDULUM_URDF)
    s = sim.Simulator(m, dt=1e-3, integrator=integrator)
    s.reset([1.0], [0.0])
    energy0 = m.kinetic_energy(s.q, s.v) + m.potential_energy(s.q)
    # scale: the swing energy (V is defined up to a constant)
    scale = abs(m.potential_energy([1.0]) - m.potential_energy([0.0]))
    drift = []
    for _ in range(round(seconds / s.dt)):
        s.step([0.0])
        energy = m.kinetic_energy(s.q, s.v) + m.potential_energy(s.q)
        drift.append(abs(energy - energy0) / scale)
    return np.array(drift)


def test_pendulum_energy_rk4_within_2e_12_over_10_s() -> None:
    """RK4's O(dt^4) error on this smooth system stays within 2e-12 of the swing energy."""
    drift = _energy_drift("rk4").max()
    print(f"\npendulum, 10 s at 1 kHz: RK4 max |ΔE|/E_swing = {drift:.3e}")
    assert drift <= 2e-12


def test_pendulum_energy_semi_implicit_euler_bounded() -> None:
    """Symplectic Euler keeps a bounded O(dt) energy error, no secular drift: the error in the last 5 s is
    no larger than in the first 5 s."""
    drift = _energy_drift("semi_implicit_euler")
    half = len(drift) // 2
    print(f"\npendulum, 10 s at 1 kHz: semi-implicit Euler max |ΔE|/E_swing = {drift.max():.3e} "
          f"(first 5 s {drift[:half].max():.3e}, last 5 s {drift[half:].max():.3e})")
    assert 1.5e-3 < drift.max() < 2.2e-3
    assert drift[half:].max() <= 1.01 * drift[:half].max()


@pytest.mark.parametrize(("integrator", "spin"), [("rk4", 2.0), ("rk4", 0.0), ("semi_implicit_euler", 0.0)])
def test_free_fall_matches_closed_form(integrator: str, spin: float) -> None:
    """``spin`` [rad/s] about the body z axis. Semi-implicit Euler is compared with its exact discrete
    solution, which exists without spin (with spin it is first order only, as on any Lie group)."""
    m = kd.Model.from_urdf(BOX_URDF, floating_base=True)
    s = sim.Simulator(m, dt=1e-3, integrator=integrator)
    p0, v0_world = np.array([0.1, -0.2, 3.0]), np.array([0.5, 0.3, 2.0])
    C0 = quat_to_matrix(np.array([0.0, 0.0, np.sin(0.15), np.cos(0.15)]))
    q0 = np.concatenate([p0, matrix_to_quat(C0)])
    s.reset(q0, np.concatenate([C0.T @ v0_world, [0.0, 0.0, spin]]))
    steps = 1000
    for _ in range(steps):
        s.step(np.zeros(6))
    t = steps * s.dt
    g = m.gravity
    position = p0 + v0_world * t + 0.5 * g * t**2
    if integrator == "semi_implicit_euler":
        # v_n = v0 + n dt g, p_n = p0 + dt sum_{k=1..n} v_k: the exact discrete solution adds g t dt / 2.
        position = position + 0.5 * g * t * s.dt
    c, sn = np.cos(spin * t), np.sin(spin * t)
    C = C0 @ np.array([[c, -sn, 0.0], [sn, c, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(s.q[:3], position, rtol=0, atol=1e-10)
    np.testing.assert_allclose(quat_to_matrix(s.q[3:7]), C, rtol=0, atol=1e-10)
    np.testing.assert_allclose(C @ s.v[:3], v0_world + g * t, rtol=0, atol=1e-10)
    np.testing.assert_allclose(s.v[3:], [0.0, 0.0, spin], rtol=0, atol=1e-12)
    assert s.t == pytest.approx(t, abs=1e-12)
