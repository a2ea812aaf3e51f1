"""Contact gains per kg of robot mass: the defaults reproduce the quadruped's absolute gains bit for bit, a
2.5 kg quadruped settles under a joint PD with them (with the quadruped's absolute gains its light shanks
chatter), and both backends sink and settle alike for two robot masses; scaled to the robot's leg length,
the sinkage is the same fraction of the leg for both sizes."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.control.locomotion import leg_length
from kinodyn.sim.contact import DAMPING_PER_KG, REFERENCE_LENGTH, STIFFNESS_PER_KG

import kinodyn as kd
from kinodyn import sim

from .conftest import (
    QUADRUPED_MASS,
    QUADRUPED_STANDING_JOINTS,
    QUADRUPED_URDF,
    SMALL_QUADRUPED_LENGTH,
    SMALL_QUADRUPED_MASS,
    SMALL_QUADRUPED_URDF,
    TINY_QUADRUPED_LENGTH,
    TINY_QUADRUPED_MASS,
    TINY_QUADRUPED_URDF,
)

KP, KD = 800.0, 10.0  # N m/rad, N m s/rad: the joint PD of the 36 kg quadruped (test_standing_quadruped.py)
QUADRUPED_GAINS = sim.ContactGains(3.0e4, 200.0, 3.0e4, 200.0)  # N/m, N s/m: the quadruped's absolute gains
# name: (URDF, scale of KP, scale of KD). The small robot's PD is the big one's scaled alike: KP by mass
# times length (the same sag under gravity), KD by mass times length squared (the same decay rate KD / I)
MASS_RATIO = SMALL_QUADRUPED_MASS / QUADRUPED_MASS
ROBOTS = {
    "quadruped_36kg": (str(QUADRUPED_URDF), 1.0, 1.0),
    "quadruped_2.5kg": (SMALL_QUADRUPED_URDF, MASS_RATIO * SMALL_QUADRUPED_LENGTH,
                        MASS_RATIO * SMALL_QUADRUPED_LENGTH**2),
}
SIZED_ROBOTS = {**ROBOTS, "quadruped_0.5kg": (TINY_QUADRUPED_URDF, TINY_QUADRUPED_MASS / QUADRUPED_MASS
                                               * TINY_QUADRUPED_LENGTH, TINY_QUADRUPED_MASS / QUADRUPED_MASS
                                               * TINY_QUADRUPED_LENGTH**2)}
SETTLE, MEASURE = 1.0, 0.5  # s: settling time, then the window the bounds are checked over
FORCE_NOISE = 0.01  # bound on the std of each foot's normal force over the window, in units of weight / 4
FOOT_SPEED = 1e-3  # m/s, bound on every foot's speed over the window


def standing(backend: str, robot: str, contact: sim.ContactModel | None = None,
             integrator: str = "rk4") -> dict[str, np.ndarray]:
    """``robot`` dropped from 1 mm above the ground in its nominal stance under the joint PD for
    SETTLE + MEASURE s at 1 kHz: each foot's normal forces (steps, feet) and speeds (steps, feet) over the
    last MEASURE s, the std of the forces in units of a quarter of the weight (feet,), and the final
    penetration of each foot (feet,)."""
    urdf, kp, kd_ = SIZED_ROBOTS[robot]
    m = kd.Model.from_urdf(urdf, floating_base=True)
    contact = contact or sim.ContactModel(sim.collision_spheres(urdf))
    s = sim.create_backend(backend, urdf, m, dt=1e-3, integrator=integrator, contact=contact)
    q0 = m.neutral()
    q0[7:] = QUADRUPED_STANDING_JOINTS
    s.reset(q0)
    q0[2] = 1e-3 - s.contact_points[:, 2].min()
    s.reset(q0)
    feet = [(sp.link, np.asarray(sp.center)) for sp in contact.spheres]
    forces, speeds = [], []
    for k in range(round((SETTLE + MEASURE) / s.dt)):
        s.step(kp * KP * (QUADRUPED_STANDING_JOINTS - s.q[7:]) - kd_ * KD * s.v[6:])
        if k * s.dt >= SETTLE:
            forces.append(s.contact_forces[:, 2].copy())
            speeds.append([np.linalg.norm(point_velocity(m, s.q, s.v, *foot)) for foot in feet])
    weight = -m.gravity[2] * m.mass.sum()
    return {"forces": np.array(forces), "speeds": np.array(speeds), "weight": weight,
            "noise": np.array(forces).std(axis=0) / (weight / 4), "penetration": -s.contact_points[:, 2]}


def point_velocity(m: kd.Model, q: np.ndarray, v: np.ndarray, link: str, offset: np.ndarray) -> np.ndarray:
    """World velocity of the point ``offset`` (link axes) of ``link``."""
    J = m.frame_jacobian(q, link, "local_world_aligned") @ v
    return J[:3] + np.cross(J[3:], m.frame_placement(q, link)[:3, :3] @ offset)


def test_default_gains_are_the_quadrupeds_absolute_gains_bit_for_bit() -> None:
    spheres = sim.collision_spheres(QUADRUPED_URDF)
    assert sim.ContactModel(spheres).gains(QUADRUPED_MASS) == QUADRUPED_GAINS
    m = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
    assert m.mass.sum() == QUADRUPED_MASS
    explicit = sim.ContactModel(spheres, stiffness=3e4, damping=200.0, tangential_stiffness=3e4,
                                tangential_damping=200.0)
    runs = []
    for contact in (sim.ContactModel(spheres), explicit):
        s = sim.Simulator(m, dt=1e-3, contact=contact)
        assert s.contact_gains == QUADRUPED_GAINS
        q0 = m.neutral()
        q0[2], q0[7:] = 0.5252, QUADRUPED_STANDING_JOINTS
        s.reset(q0)
        for _ in range(300):
            s.step(KP * (QUADRUPED_STANDING_JOINTS - s.q[7:]) - KD * s.v[6:])
        runs.append(np.concatenate([s.q, s.v, s.contact_forces.ravel()]))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_gains_scale_with_the_mass_and_absolute_values_replace_them() -> None:
    c = sim.ContactModel((), stiffness_per_kg=1000.0, tangential_damping=7.0)
    assert c.gains(2.5) == (2500.0, 2.5 * DAMPING_PER_KG, 2.5 * STIFFNESS_PER_KG, 7.0)
    assert c.gains(80.0) == (80000.0, 80.0 * DAMPING_PER_KG, 80.0 * STIFFNESS_PER_KG, 7.0)
    c = sim.ContactModel((), damping_per_kg=0.0)
    assert c.gains(10.0).damping == 0.0
    assert c.gains(10.0).stiffness == pytest.approx(10.0 * 3e4 / 36.0)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"stiffness": 1e4, "stiffness_per_kg": 500.0}, "stiffness .absolute. or stiffness_per_kg"),
    ({"tangential_damping": 1.0, "tangential_damping_per_kg": 1.0}, "not both"),
    ({"damping_per_kg": -1.0}, "damping_per_kg must be finite and >= 0, got -1.0"),
    ({"stiffness_per_kg": float("nan")}, "stiffness_per_kg must be finite"),
    ({"tangential_stiffness_per_kg": float("inf")}, "tangential_stiffness_per_kg must be finite"),
    ({"stiffness_per_kg": "800"}, "stiffness_per_kg must be finite and >= 0, got '800'"),
    ({"stiffness": -3e4}, "stiffness must be finite and >= 0"),
])
def test_contact_model_refuses_bad_gains(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sim.ContactModel((), **kwargs)  # type: ignore[arg-type]


def test_a_leg_length_scales_the_defaults_of_the_constants_left_unset() -> None:
    """``length``: the per-kg defaults' springs times s = REFERENCE_LENGTH / length, dampers times sqrt(s); a
    given constant (absolute or per kg) as given; the reference length changes nothing."""
    size = REFERENCE_LENGTH / 0.126
    c = sim.ContactModel((), stiffness_per_kg=1000.0, damping=5.0, length=0.126)
    assert c.gains(2.0) == pytest.approx((2000.0, 5.0, 2.0 * size * STIFFNESS_PER_KG,
                                          2.0 * np.sqrt(size) * DAMPING_PER_KG), rel=1e-15)
    assert sim.ContactModel((), length=REFERENCE_LENGTH).gains(36.0) == QUADRUPED_GAINS
    long = sim.ContactModel((), length=4 * REFERENCE_LENGTH).gains(36.0)
    np.testing.assert_allclose(long, np.array(QUADRUPED_GAINS) / [4, 2, 4, 2], rtol=1e-15)


@pytest.mark.parametrize("length", [0.0, -0.3, float("nan"), float("inf"), "0.3"])
def test_contact_model_refuses_a_bad_length(length: object) -> None:
    message = r"contact length \(the robot's leg length, m\) must be finite and > 0"
    with pytest.raises(ValueError, match=message):
        sim.ContactModel((), length=length)  # type: ignore[arg-type]


@pytest.mark.parametrize("mass", [0.0, -1.0, float("nan"), float("inf")])
def test_gains_need_a_positive_mass(mass: float) -> None:
    with pytest.raises(ValueError, match="total mass must be finite and > 0"):
        sim.ContactModel(()).gains(mass)


@pytest.mark.parametrize("integrator", sim.INTEGRATORS)
def test_small_quadruped_settles_with_the_default_gains_and_chatters_with_the_36_kg_ones(integrator: str
                                                                                       ) -> None:
    run = standing("kinodyn", "quadruped_2.5kg", integrator=integrator)
    load = run["forces"].mean(axis=0)
    noise = run["noise"]
    print(f"\n{integrator}: foot force std / (weight / 4) {noise.max():.2e}, "
          f"foot speed {run['speeds'].max():.2e} m/s")
    np.testing.assert_allclose(load.sum(), run["weight"], rtol=1e-3)
    assert noise.max() < FORCE_NOISE
    assert run["speeds"].max() < FOOT_SPEED
    absolute = sim.ContactModel(sim.collision_spheres(SMALL_QUADRUPED_URDF), **QUADRUPED_GAINS._asdict())
    try:
        run = standing("kinodyn", "quadruped_2.5kg", absolute, integrator)
    except FloatingPointError:
        return  # diverged: even worse than chatter
    noise = run["noise"]
    print(f"{integrator}, 36 kg gains: foot force std / (weight / 4) {noise.max():.2e}, "
          f"foot speed {run['speeds'].max():.2e} m/s")
    assert run["speeds"].max() > 100 * FOOT_SPEED  # bouncing on and off the ground every few steps


@pytest.mark.parametrize("robot", ROBOTS)
@pytest.mark.parametrize("backend", sim.backend_names())
def test_both_backends_sink_and_settle_alike_for_two_masses(backend: str, robot: str) -> None:
    """Standing on 4 feet, each carries m g / 4 on a spring of k = k_per_kg m: it sinks g / (4 k_per_kg)
    whatever the mass (MuJoCo's soft constraint, with its default solimp, within 5 %)."""
    run = standing(backend, robot)
    expected = 9.81 / (4 * STIFFNESS_PER_KG)
    load = run["forces"].mean(axis=0)
    noise = run["noise"]
    print(f"\n{backend} {robot}: penetration {run['penetration'].round(6)} m (spring: {expected:.6f}), "
          f"foot force std / (weight / 4) {noise.max():.2e}, foot speed {run['speeds'].max():.2e} m/s")
    np.testing.assert_allclose(run["penetration"], expected, rtol=0.05 if backend == "mujoco" else 1e-3)
    np.testing.assert_allclose(load.sum(), run["weight"], rtol=1e-3)
    np.testing.assert_allclose(load, run["weight"] / 4, rtol=0.02)
    assert noise.max() < FORCE_NOISE
    assert run["speeds"].max() < FOOT_SPEED


@pytest.mark.parametrize("robot", SIZED_ROBOTS)
@pytest.mark.parametrize("backend", sim.backend_names())
def test_scaled_to_its_legs_each_robot_sinks_the_same_fraction_of_them(backend: str, robot: str) -> None:
    """With ``length`` its leg length l, a robot on 4 feet sinks g / (4 k_per_kg) l / REFERENCE_LENGTH:
    the 0.5-scale quadruped twice as stiff per kg as the 36 kg one, the 0.16-scale one about six times, all
    the same fraction of their legs (MuJoCo within 5 %), and each settles as still."""
    urdf = SIZED_ROBOTS[robot][0]
    m = kd.Model.from_urdf(urdf, floating_base=True)
    spheres = sim.collision_spheres(urdf)
    q = m.neutral()
    q[7:] = QUADRUPED_STANDING_JOINTS
    length = leg_length(m, q, [sphere.link for sphere in spheres])
    run = standing(backend, robot, sim.ContactModel(spheres, length=length))
    expected = 9.81 / (4 * STIFFNESS_PER_KG) * length / REFERENCE_LENGTH
    print(f"\n{backend} {robot}: legs {length:.4f} m, penetration {run['penetration'].round(6)} m "
          f"(spring: {expected:.6f}), {run['penetration'].mean() / length:.5f} of the leg")
    np.testing.assert_allclose(run["penetration"], expected, rtol=0.05 if backend == "mujoco" else 1e-3)
    assert run["noise"].max() < FORCE_NOISE
    assert run["speeds"].max() < FOOT_SPEED
