"""A joint damper (URDF damping, plus the regularised friction's slope) too stiff for the explicit step on the
joint's inertia is named in a warning at reset and integrated implicitly: its closed-form step, a step of the
whole model against ``(M + dt C)^-1`` from the mass matrix, the quasi-static speed it reaches under a torque;
a damper within the step keeps the explicit integrator's closed form."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
from kinodyn.sim.simulator import DAMPING_STABILITY, IMPLICIT_DAMPING_RATIO

import kinodyn as kd
from kinodyn import sim

from ..urdf_text import MIMIC_URDF, inertial_link
from .conftest import QUADRUPED_URDF

INERTIA = 1e-4  # kg m^2 about the hinge, the centre of mass on it (no gravity torque)
FRICTION_VELOCITY = 0.1  # the simulator's default regularisation [rad/s]


def wheel(damping: float, friction: float = 0.0) -> kd.Model:
    """A light wheel on a damped hinge about y."""
    return kd.Model.from_urdf(f"""<robot name="wheel">
  <link name="base"/>
  {inertial_link("wheel", 0.2, (INERTIA, 0, 0, INERTIA, 0, INERTIA))}
  <joint name="hinge" type="continuous"><parent link="base"/><child link="wheel"/><axis xyz="0 1 0"/>
    <dynamics damping="{damping}" friction="{friction}"/></joint>
</robot>""")


def _run(s: sim.Simulator, steps: int, torque: float = 0.0) -> list[float]:
    """The joint's speed after each of ``steps`` steps under ``torque``."""
    speeds = []
    for _ in range(steps):
        s.step(np.array([torque]))
        speeds.append(float(s.v[0]))
    return speeds


def rk4_factor(z: float) -> float:
    """Classical RK4's step factor on ``x' = lambda x``, ``z = lambda dt``."""
    return 1.0 + z + z * z / 2.0 + z ** 3 / 6.0 + z ** 4 / 24.0


# per integrator, the speed's factor per step of a damper alone integrated implicitly, r = c dt / I: every
# stage sees lambda = -c / (I + c dt)
IMPLICIT_FACTOR = {"rk4": lambda r: rk4_factor(-r / (1.0 + r)),
                   "semi_implicit_euler": lambda r: 1.0 / (1.0 + r)}


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_a_stiff_damper_is_named_and_its_step_is_the_implicit_closed_form(integrator: str) -> None:
    """c dt / I = 10, beyond both integrators' explicit bounds (it diverged explicitly): the speed decays by
    the implicit factor every step, monotonically, for 1000 steps."""
    message = (r"joint 'hinge': its damper c = damping 1 \+ friction 0 / joint_friction_velocity 0.1 = 1 on "
               r"its inertia here, 0.0001 .* c dt / inertia = 10, beyond implicit_damping_ratio 1 "
               rf"\({integrator} diverges beyond {DAMPING_STABILITY[integrator]}\): its damper is integrated "
               r"implicitly, first order in dt; for the explicit step use dt <= 0.0001 s")
    with pytest.warns(RuntimeWarning, match=message) as record:
        s = sim.Simulator(wheel(1.0), dt=1e-3, integrator=integrator)
    s.reset(v=[1.0])  # named once per simulator
    assert len(record) == 1
    factor = IMPLICIT_FACTOR[integrator](10.0)
    assert 0.0 < factor < 1.0
    speeds = _run(s, 1000)
    np.testing.assert_allclose(speeds[:20], factor ** np.arange(1, 21), rtol=1e-12, atol=1e-300)
    assert all(0.0 <= b <= a for a, b in itertools.pairwise(speeds))


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_a_stiff_damper_kept_explicit_is_named_and_the_simulation_diverges(integrator: str) -> None:
    """With ``implicit_damping_ratio`` inf every damper is explicit (as trajopt's RobotDynamics takes them):
    c dt / I = 10 is beyond both integrators' bounds, named, and the velocity grows until the step fails."""
    bound = DAMPING_STABILITY[integrator]
    message = (rf"joint 'hinge': .* c dt / inertia = 10, beyond what {integrator} resolves \({bound}\): the "
               rf"simulation will diverge; use dt <= {bound * INERTIA:.2g} s or a lower "
               r"implicit_damping_ratio")
    with pytest.warns(RuntimeWarning, match=message) as record:
        s = sim.Simulator(wheel(1.0), dt=1e-3, integrator=integrator, implicit_damping_ratio=math.inf)
    s.reset(v=[1.0])  # named once per simulator
    assert len(record) == 1
    with pytest.raises(FloatingPointError, match="simulation diverged"):
        _run(s, 1000)


@pytest.mark.parametrize("ratio", [0.0, -1.0, math.nan])
def test_the_ratio_must_be_positive(ratio: float) -> None:
    with pytest.raises(ValueError, match=r"implicit_damping_ratio must be > 0 \(inf: none implicit\)"):
        sim.Simulator(wheel(1.0), implicit_damping_ratio=ratio)


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_under_a_torque_the_implicit_damper_reaches_the_quasi_static_speed(integrator: str) -> None:
    """A constant torque on a stiffly damped joint: the speed settles at torque / c, which the linearised
    implicit damper keeps exactly (its acceleration is zero there)."""
    with pytest.warns(RuntimeWarning, match="integrated implicitly"):
        s = sim.Simulator(wheel(1.0), dt=1e-3, integrator=integrator)
    speeds = _run(s, 200, torque=0.3)
    np.testing.assert_allclose(speeds[-1], 0.3, rtol=1e-12)


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_a_damper_within_the_ratio_keeps_the_explicit_closed_form(integrator: str,
                                                                  recwarn: pytest.WarningsRecorder) -> None:
    """At c dt / I = 0.9 IMPLICIT_DAMPING_RATIO no warning, and the step is the explicit integrator's
    own factor (RK4's polynomial, Euler's 1 - r)."""
    r = 0.9 * IMPLICIT_DAMPING_RATIO
    s = sim.Simulator(wheel(1.0), dt=r * INERTIA, integrator=integrator)
    s.reset(v=[1.0])
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    factor = rk4_factor(-r) if integrator == "rk4" else 1.0 - r
    np.testing.assert_allclose(_run(s, 20), factor ** np.arange(1, 21), rtol=1e-12)


def friction_torque(v: float, friction: float) -> float:
    """The regularised Coulomb friction's torque at the speed ``v``."""
    return friction * v / np.sqrt(v * v + FRICTION_VELOCITY ** 2)


@pytest.mark.parametrize("speed", [0.0, 0.05, 0.3, 3.0])
def test_the_frictions_slope_is_taken_at_the_speed(speed: float) -> None:
    """Friction 0.05 N m over 0.1 rad/s is a damper of 0.5 at rest, 5 x the ratio here; one Euler step from
    the speed ``speed`` under a torque is ``v + dt (tau - d v - f(v)) / (I + dt (d + f'(v)))``, the slope
    ``f'`` by central differences (an independent derivative of the friction law)."""
    damping, friction, dt, torque = 0.01, 0.05, 1e-3, 0.02
    with pytest.warns(RuntimeWarning, match=r"damping 0.01 \+ friction 0.05 / joint_friction_velocity 0.1 = "
                                            r"0.51 .* c dt / inertia = 5.1,"):
        s = sim.Simulator(wheel(damping, friction), dt=dt, integrator="semi_implicit_euler")
    s.reset(v=[speed])
    h = 1e-6
    slope = (friction_torque(speed + h, friction) - friction_torque(speed - h, friction)) / (2.0 * h)
    expected = speed + dt * (torque - damping * speed - friction_torque(speed, friction)) / (
        INERTIA + dt * (damping + slope))
    np.testing.assert_allclose(_run(s, 1, torque)[0], expected, rtol=1e-9, atol=1e-15)


def with_dampers(urdf: str, damping: dict[str, float]) -> str:
    """``urdf`` with ``<dynamics damping>`` set on the named joints."""
    for name, d in damping.items():
        urdf, n = re.subn(rf'(<joint name="{name}".*?)(</joint>)', rf'\1<dynamics damping="{d}"/>\2', urdf,
                          count=1, flags=re.DOTALL)
        assert n == 1, name
    return urdf


def implicit_euler_step(model: kd.Model, q: np.ndarray, v: np.ndarray, tau: np.ndarray, implicit: np.ndarray,
                        dt: float) -> np.ndarray:
    """``v + dt (M + dt C)^-1 (tau - h(q, v) - D v)`` from the mass matrix and the RNEA (no friction): the
    dampers ``C`` of the joints ``implicit`` at the end of the step, the others' at its start."""
    damper = model.damping * v
    M = model.mass_matrix(q) + dt * np.diag(np.where(implicit, model.damping, 0.0))
    return v + dt * np.linalg.solve(M, tau - model.nonlinear_effects(q, v) - damper)


@pytest.mark.parametrize("robot", ["quadruped", "mimic"])
def test_a_whole_models_step_solves_the_mass_matrix_with_the_implicit_dampers(robot: str) -> None:
    """One semi-implicit Euler step with some joints' dampers implicit and others explicit equals
    ``implicit_euler_step`` to 1e-10: the articulated-body recursion with the dampers as armature (floating
    base) and the Cholesky route (mimic joints)."""
    if robot == "quadruped":
        knees, hips = ["LF_KFE", "RH_KFE"], ["LF_HFE", "RF_HAA"]
        dampers = {**dict.fromkeys(knees, 400.0), **dict.fromkeys(hips, 0.5)}
        urdf = with_dampers(QUADRUPED_URDF.read_text(), dampers)
    else:
        knees = ["j1"]
        urdf = with_dampers(MIMIC_URDF, {"j1": 600.0, "j2": 0.5})
    model = kd.Model.from_urdf(urdf)
    dt = 1e-3
    with pytest.warns(RuntimeWarning) as record:
        s = sim.Simulator(model, dt=dt, integrator="semi_implicit_euler")
    named = sorted(re.match(r"joint '(\w+)'", str(w.message)).group(1) for w in record)  # type: ignore[union-attr]
    assert named == sorted(knees)  # the light dampers stay explicit
    rng = np.random.default_rng(3)
    q = model.random_configuration(rng)
    v = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    first = 6 if model.floating_base else 0
    tau[:first] = 0.0
    s.reset(q=q, v=v)
    s.step(tau)
    implicit = np.zeros(model.nv, dtype=bool)
    for name in knees:
        implicit[first + model.joint_names.index(name)] = True
    expected = implicit_euler_step(model, q, v, tau, implicit, dt)
    np.testing.assert_allclose(s.v, expected, rtol=1e-10, atol=1e-10)


def damped_arm(damping: float) -> kd.Model:
    """Two light links on hinges about y, damped ``damping`` and ``damping / 5``, falling under gravity."""
    return kd.Model.from_urdf(f"""<robot name="arm"><link name="base"/>
  {inertial_link("l1", 0.3, (1e-4, 0, 0, 4e-4, 0, 4e-4), "0.05 0 0")}
  {inertial_link("l2", 0.1, (2e-5, 0, 0, 1e-4, 0, 1e-4), "0.04 0 0")}
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="5" velocity="10"/><dynamics damping="{damping}"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.1 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="5" velocity="10"/>
    <dynamics damping="{damping / 5}"/></joint>
</robot>""")


def _fall(model: kd.Model, dt: float, integrator: str) -> tuple[np.ndarray, list[int]]:
    """The joint angles every 0.05 s of a 0.5 s unactuated fall from (0, 0.3) rad, and the implicit joints."""
    s = sim.Simulator(model, dt=dt, integrator=integrator)
    s.reset(q=[0.0, 0.3])
    samples = []
    for _ in range(10):
        for _ in range(round(0.05 / dt)):
            s.step(np.zeros(2))
        samples.append(s.q.copy())
    return np.array(samples), s._implicit_joints.tolist()  # noqa: SLF001


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_the_implicit_damper_converges_at_first_order(integrator: str) -> None:
    """An arm whose both dampers are implicit at 1 and 0.5 ms against the explicit RK4 at 20 us: the error
    halves with the step (first order), and is below 1e-4 rad at 1 ms."""
    model = damped_arm(20.0)
    reference, explicit = _fall(model, 2e-5, "rk4")
    assert explicit == []
    errors = []
    for dt in (1e-3, 5e-4):
        with pytest.warns(RuntimeWarning, match="integrated implicitly"):
            angles, implicit = _fall(model, dt, integrator)
        assert implicit == [0, 1]
        errors.append(float(np.abs(angles - reference).max()))
    assert errors[0] < 1e-4
    assert 1.8 < errors[0] / errors[1] < 2.2, errors
