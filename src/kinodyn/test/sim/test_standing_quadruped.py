"""The quadruped on the ground under a joint PD law at 1 kHz (soft contact, both integrators): the base
height stays within 1 cm of its start for 10 s, and the feet carry the weight."""

from __future__ import annotations

import numpy as np
import pytest

import kinodyn as kd
from kinodyn import sim

from .conftest import QUADRUPED_STANDING_HEIGHT, QUADRUPED_STANDING_JOINTS, QUADRUPED_URDF

KP, KD = 800.0, 10.0  # N m/rad, N m s/rad


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_quadruped_stands_for_10_s(integrator: str) -> None:
    m = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
    contact = sim.ContactModel(sim.collision_spheres(QUADRUPED_URDF))
    s = sim.Simulator(m, dt=1e-3, integrator=integrator, contact=contact)
    q0 = m.neutral()
    q0[2] = QUADRUPED_STANDING_HEIGHT
    q0[7:] = QUADRUPED_STANDING_JOINTS
    s.reset(q0)
    heights = []
    for _ in range(10_000):
        s.step(KP * (QUADRUPED_STANDING_JOINTS - s.q[7:]) - KD * s.v[6:])
        heights.append(s.q[2])
    heights = np.array(heights)
    print(f"\n{integrator}: base height {heights.min():.4f} .. {heights.max():.4f} m (start {q0[2]} m)")
    assert np.abs(heights - q0[2]).max() < 0.01
    assert s.in_contact.all()
    weight = -m.gravity[2] * m.mass.sum()
    np.testing.assert_allclose(s.contact_forces[:, 2].sum(), weight, rtol=1e-6)  # at rest: feet carry it all
    np.testing.assert_allclose(s.contact_forces[:, :2].sum(axis=0), 0.0, atol=1e-6)
    assert np.abs(s.v).max() < 1e-6
