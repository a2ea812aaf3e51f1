"""A joint damper (URDF damping, plus the regularised friction's slope at rest) too stiff for the explicit
step on the joint's inertia is named in a warning at reset, with the step that resolves it; and the warning
is right: at that configuration the simulation diverges, at the step it names the velocity decays."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from kinodyn.sim.simulator import DAMPING_STABILITY

import kinodyn as kd
from kinodyn import sim

from ..urdf_text import inertial_link

INERTIA = 1e-4  # kg m^2 about the hinge, the centre of mass on it (no gravity torque)


def wheel(damping: float, friction: float = 0.0) -> kd.Model:
    """A light wheel on a damped hinge about y."""
    return kd.Model.from_urdf(f"""<robot name="wheel">
  <link name="base"/>
  {inertial_link("wheel", 0.2, (INERTIA, 0, 0, INERTIA, 0, INERTIA))}
  <joint name="hinge" type="continuous"><parent link="base"/><child link="wheel"/><axis xyz="0 1 0"/>
    <dynamics damping="{damping}" friction="{friction}"/></joint>
</robot>""")


def _run(s: sim.Simulator, steps: int) -> list[float]:
    """The joint's speed after each of ``steps`` unactuated steps."""
    speeds = []
    for _ in range(steps):
        s.step(np.zeros(1))
        speeds.append(abs(float(s.v[0])))
    return speeds


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_a_damper_beyond_the_step_is_named_and_the_simulation_diverges(integrator: str) -> None:
    bound = DAMPING_STABILITY[integrator]
    message = (rf"joint 'hinge': its damper c = damping 1 \+ friction 0 / joint_friction_velocity 0.1 = 1 on "
               rf"its inertia here, 0.0001 .* c dt / inertia = 10, beyond what {integrator} resolves "
               rf"\({bound}\): the simulation will diverge; use dt <= ")
    with pytest.warns(RuntimeWarning, match=message) as record:
        s = sim.Simulator(wheel(1.0), dt=1e-3, integrator=integrator)
    s.reset(v=[1.0])  # (named once per simulator)
    assert len(record) == 1
    with pytest.raises(FloatingPointError, match="simulation diverged"):
        _run(s, 1000)


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_at_the_step_it_names_the_damped_joint_slows_down(integrator: str, recwarn: pytest.WarningsRecorder
                                                           ) -> None:
    s = sim.Simulator(wheel(1.0), dt=0.9 * DAMPING_STABILITY[integrator] * INERTIA, integrator=integrator)
    s.reset(v=[1.0])
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    speeds = _run(s, 200)
    assert speeds[-1] < 1e-3
    assert all(b <= a for a, b in itertools.pairwise(speeds))


def test_the_frictions_slope_counts(recwarn: pytest.WarningsRecorder) -> None:
    """Friction 0.05 N m regularised over 0.1 rad/s is a damper of 0.5 at rest: 5 times the step's bound
    here; with no friction the same damping (0.01) is well within it."""
    with pytest.warns(RuntimeWarning, match=r"damping 0.01 \+ friction 0.05 / joint_friction_velocity 0.1 = "
                                            r"0.51 .* c dt / inertia = 5.1,"):
        sim.Simulator(wheel(0.01, 0.05), dt=1e-3)
    recwarn.clear()
    sim.Simulator(wheel(0.01), dt=1e-3)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
