"""``sampled_pd_gains``: joint PD gains that stay stable when the PD is sampled and held.

Second sources: the exact discrete map of the linearised joints (``(M^-1)_JJ`` at the posture) and
kinodyn.sim, the floating robot in free fall (its joints move as in zero gravity) under a PD evaluated every
control period and held over it, as a ``JointPDCommand`` controller applies it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.pd_stability import sampled_pd_gains

import kinodyn as kd

A1 = Path(__file__).resolve().parents[4] / "urdf" / "public" / "a1.urdf"
A1_STANCE = (0.0, 0.67, -1.3) * 4  # Unitree's stand() pose
PERIOD = 0.002  # s, the control period


def a1() -> tuple[kd.Model, np.ndarray]:
    model = kd.Model.from_urdf(A1, floating_base=True)
    q = model.neutral()
    q[7:] = A1_STANCE
    return model, q


def spectral_radius(model: kd.Model, q: np.ndarray, kp: np.ndarray, kd_: np.ndarray, period: float) -> float:
    """Largest eigenvalue magnitude of the sampled PD's map on the joints linearised at ``q`` (body free)."""
    mobility = np.linalg.inv(model.mass_matrix(q))[6:, 6:]
    n = kp.size
    a, b = -mobility * kp, -mobility * kd_  # qdd = A x + B v
    step = np.block([[np.eye(n) + period**2 / 2 * a, period * np.eye(n) + period**2 / 2 * b],
                     [period * a, np.eye(n) + period * b]])
    return float(np.abs(np.linalg.eigvals(step)).max())


def test_gains_put_the_fastest_mode_at_the_asked_fraction_of_the_stability_limit() -> None:
    """``T mu_max`` of ``T (M^-1)_JJ Kd`` is the fraction times 2, ``Kp = (omega / 2) Kd`` with
    ``kp T < 2 kd``, each joint critically damped on its own inertia, and the sampled map contracts."""
    model, q = a1()
    for fraction in (0.25, 0.5, 0.9):
        kp, kd_ = sampled_pd_gains(model, q, PERIOD, fraction)
        mobility = np.linalg.inv(model.mass_matrix(q))[6:, 6:]
        mu = np.linalg.eigvals(mobility @ np.diag(kd_)).real.max()
        assert PERIOD * mu == pytest.approx(2.0 * fraction, rel=1e-9)
        inertia = 1.0 / np.diag(mobility)
        np.testing.assert_allclose(kd_**2, 4.0 * kp * inertia, rtol=1e-12)  # damping ratio 1 per joint
        assert (kp * PERIOD < 2.0 * kd_).all()
        assert spectral_radius(model, q, kp, kd_, PERIOD) < 1.0


def test_gains_scale_with_the_inertia_and_the_period() -> None:
    """Twice the period: kd halves, kp quarters; the same robot with every inertia doubled (a heavier copy):
    both gains double."""
    model, q = a1()
    kp, kd_ = sampled_pd_gains(model, q, PERIOD)
    kp2, kd2 = sampled_pd_gains(model, q, 2 * PERIOD)
    np.testing.assert_allclose(kd2, kd_ / 2, rtol=1e-12)
    np.testing.assert_allclose(kp2, kp / 4, rtol=1e-12)
    heavy = dataclasses.replace(model, mass=2 * model.mass, inertia=2 * model.inertia)
    kp3, kd3 = sampled_pd_gains(heavy, q, PERIOD)
    np.testing.assert_allclose(kp3, 2 * kp, rtol=1e-9)
    np.testing.assert_allclose(kd3, 2 * kd_, rtol=1e-9)


def free_fall_error(model: kd.Model, q: np.ndarray, kp: np.ndarray, kd_: np.ndarray, seconds: float) -> float:
    """Largest joint error in the last tenth of ``seconds`` of free fall from ``q`` with every joint 0.05 rad
    off, the PD to ``q``'s joints evaluated every ``PERIOD`` and held over two 1 ms RK4 steps."""
    sim = kd.sim.Simulator(model, dt=PERIOD / 2, integrator="rk4", joint_limits=False)
    start = q.copy()
    start[7:] += 0.05
    sim.reset(start)
    errors = []
    while sim.t < seconds - 1e-9:
        error = q[7:] - sim.q[7:]
        tau = np.zeros(model.nv)
        tau[6:] = kp * error - kd_ * sim.v[6:]
        for _ in range(2):
            sim.step(tau)
        errors.append(float(np.abs(error).max()))
        if errors[-1] > 1.0:  # diverged
            return errors[-1]
    return max(errors[int(0.9 * len(errors)):])


def test_a1_free_fall_settles_with_the_derived_gains_and_diverges_with_absolute_ones() -> None:
    """kinodyn.sim: the derived gains bring the 0.05 rad error under 1e-3 rad within 0.5 s; the absolute
    800 / 10 N m/rad, N m s/rad (stable on a 36 kg robot) make the A1's joints diverge."""
    model, q = a1()
    kp, kd_ = sampled_pd_gains(model, q, PERIOD)
    assert free_fall_error(model, q, kp, kd_, 0.5) < 1e-3
    n = kp.size
    assert spectral_radius(model, q, np.full(n, 800.0), np.full(n, 10.0), PERIOD) > 1.0
    assert free_fall_error(model, q, np.full(n, 800.0), np.full(n, 10.0), 0.5) > 0.05


@pytest.mark.parametrize(("period", "fraction"), [(0.0, 0.5), (float("nan"), 0.5), (PERIOD, 0.0),
                                                  (PERIOD, 1.0)])
def test_out_of_range_period_or_fraction_is_refused(period: float, fraction: float) -> None:
    model, q = a1()
    with pytest.raises(ValueError, match=r"period|stability_fraction"):
        sampled_pd_gains(model, q, period, fraction)
