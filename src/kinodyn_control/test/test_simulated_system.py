"""kinodyn_control/SimulatedSystem without ROS (ros_interface false), through the resource manager.

The quadruped of urdf/quadruped.urdf with only the plugin changed stands under a joint PD law written to the
effort commands; the physics comes from the robot description the manager parsed; the base floats unless the
URDF's root link is ``world``; the state interfaces are the simulator's (joints, applied effort, IMU); in
lockstep every write advances exactly one control period and runs are deterministic; reset and push requests
act at the next write; bad parameters fail on_init with a message naming them. Standing, lockstep, reset and
push run on both physics backends (hardware param ``backend``: kinodyn, mujoco).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.sim.contact import REFERENCE_LENGTH, STIFFNESS_PER_KG
from kinodyn_common.conversions import InputError
from kinodyn_common.stamps import seconds_to_stamp, stamp_to_ns
from kinodyn_control.hardware.sim_ros import clock_bytes
from kinodyn_control.hardware.types import IMU_INTERFACES, LifecycleState, ReturnType
from kinodyn_control.manager import HardwareError
from kinodyn_control.testing import (
    GENERIC_SYSTEM,
    QUADRUPED_JOINTS,
    QUADRUPED_STANCE,
    QUADRUPED_STANDING_HEIGHT,
    SIMULATED_SYSTEM,
    Harness,
    joint,
    param,
    robot_xml,
    system_block,
)
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock

import kinodyn as kd

from .conftest import URDF_DIR

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from kinodyn.urdf import ParsedURDF

JOINTS = QUADRUPED_JOINTS
STANDING = np.array(QUADRUPED_STANCE)
KP, KD = 800.0, 10.0
BACKENDS = pytest.mark.parametrize("backend", [{}, {"backend": "mujoco"}], ids=["kinodyn", "mujoco"])


def sim_urdf(**params: str) -> str:
    """urdf/quadruped.urdf on SimulatedSystem (nothing else changed), plus ``params`` in its <hardware>."""
    text = (URDF_DIR / "quadruped.urdf").read_text()
    plugin = f"<plugin>{GENERIC_SYSTEM}</plugin>"
    assert text.count(plugin) == 1
    params = {"ros_interface": "false", **params}
    extra = "".join(f'<param name="{k}">{v}</param>' for k, v in params.items())
    return text.replace(plugin, f"<plugin>{SIMULATED_SYSTEM}</plugin>{extra}")


def run(h: Harness, cycles: int, period: float = 0.001) -> list[float]:
    heights = []
    component = h.resources.components["quadruped_system"]
    for _ in range(cycles):
        h.resources.read(0.0, period)
        q = np.array([h.state(f"{j}/position") for j in JOINTS])
        qd = np.array([h.state(f"{j}/velocity") for j in JOINTS])
        for j, tau in zip(JOINTS, KP * (STANDING - q) - KD * qd, strict=True):
            h.set_command(f"{j}/effort", tau)
        assert h.resources.write(0.0, period) == []
        heights.append(component.simulator.q[2])
    return heights


@BACKENDS
def test_quadruped_stands_and_states_are_the_simulators(backend: dict[str, str]) -> None:
    h = Harness(sim_urdf(**backend))
    h.activate_hardware()
    sim = h.resources.components["quadruped_system"].simulator
    assert type(sim).__name__ == ("MujocoSimulator" if backend else "Simulator")
    np.testing.assert_allclose(sim.contact_points[:, 2], 0.0, atol=1e-12)  # feet touch the ground
    assert sim.model.floating_base  # root link base_link, not world
    assert sim.q[2] == pytest.approx(QUADRUPED_STANDING_HEIGHT, abs=1e-5)  # urdf/README.md (c), rounded there
    heights = run(h, 2000)
    assert max(abs(z - QUADRUPED_STANDING_HEIGHT) for z in heights) < 0.01
    h.resources.read(0.0, 0.001)
    np.testing.assert_allclose([h.state(f"{j}/position") for j in JOINTS], sim.q[7:])
    np.testing.assert_allclose([h.state(f"{j}/effort") for j in JOINTS], sim.applied_torque[6:])
    imu = [h.state(f"imu_sensor/{i}") for i in IMU_INTERFACES]
    np.testing.assert_allclose(imu[3], 1.0, atol=1e-6)  # level base
    np.testing.assert_allclose(imu[7:], [0.0, 0.0, 9.81], atol=1e-3)  # specific force: +g up
    assert sim.t == pytest.approx(2.0)
    assert sim.in_contact.all()
    assert sim.contact_forces[:, 2].sum() == pytest.approx(sim.model.mass.sum() * 9.81, rel=0.01)


@BACKENDS
def test_lockstep_advances_exactly_one_period_per_write_and_is_deterministic(backend: dict[str, str]) -> None:
    runs = []
    for _ in range(2):
        h = Harness(sim_urdf(**backend))
        h.activate_hardware()
        component = h.resources.components["quadruped_system"]
        assert component.prepare_lockstep(0.002) is ReturnType.OK  # 2 steps of dt = 1 ms per cycle
        run(h, 150, period=0.0137)  # the period passed does not matter in lockstep
        assert component.simulator.t == pytest.approx(0.3, abs=1e-12)
        runs.append(component.simulator.q.copy())
    np.testing.assert_array_equal(runs[0], runs[1])


def test_lockstep_period_must_be_a_whole_number_of_steps() -> None:
    h = Harness(sim_urdf(dt="0.002"))
    component = h.resources.components["quadruped_system"]
    assert component.prepare_lockstep(0.003) is ReturnType.ERROR
    assert "whole number of physics steps dt = 0.002 s" in component.last_error
    assert component.prepare_lockstep(0.001) is ReturnType.ERROR  # less than one step


def test_without_lockstep_a_late_cycle_runs_at_most_max_steps() -> None:
    h = Harness(sim_urdf(max_steps_per_cycle="7"))
    h.activate_hardware()
    sim = h.resources.components["quadruped_system"].simulator
    run(h, 1, period=0.003)
    assert sim.t == pytest.approx(0.003)  # period / dt steps
    run(h, 1, period=0.5)
    assert sim.t == pytest.approx(0.010)  # capped at 7 steps


@BACKENDS
def test_reset_and_push_act_at_the_next_write(backend: dict[str, str]) -> None:
    h = Harness(sim_urdf(contact="none", **backend))
    h.activate_hardware()
    component = h.resources.components["quadruped_system"]
    assert component.prepare_lockstep(0.001) is ReturnType.OK
    sim = component.simulator
    start = sim.q.copy()
    run(h, 50)
    assert sim.q[2] < start[2] - 0.01  # no ground: it falls
    component.request_reset()
    run(h, 1)
    assert sim.t == pytest.approx(0.051)  # time runs on
    assert sim.q[2] > start[2] - 1e-4
    assert sim.q[2] == pytest.approx(start[2] - 0.5 * 9.81 * 1e-6, abs=1e-6)
    component.request_push("base_link", [100.0, 0.0, 0.0, 0.0, 0.0, 0.0], 0.01)
    run(h, 10)
    total = sim.model.mass.sum()
    v_com = sim.model.com_jacobian(sim.q) @ sim.v
    np.testing.assert_allclose(v_com[0], 100.0 * 0.01 / total, rtol=1e-9)
    with pytest.raises(InputError, match="no_such_link"):
        component.request_push("no_such_link", np.zeros(6), 0.1)
    with pytest.raises(InputError, match="finite duration > 0"):
        component.request_push("base_link", np.zeros(6), -1.0)


@pytest.mark.parametrize(("params", "message"), [
    ({"integrator": "euler"}, "integrator"),
    ({"contact": "sticky"}, "contact"),
    ({"dt": "fast"}, "dt"),
    ({"bogus": "1"}, "unknown params"),
    ({"robot_description_file": "x.urdf"}, "physics comes from the robot description"),
    ({"lockstep": "true"}, "lockstep is a control_node parameter"),
    ({"floating_base": "yes"}, "floating_base must be true or false"),
    ({"backend": "bullet"}, "param backend must be one of kinodyn, mujoco, got 'bullet'"),
    ({"backend": "mujoco", "contact": "hard"},
     "backend mujoco .MuJoCo's dynamics and soft-constraint contact solver. takes contact soft or none, got "
     "'hard'"),
    ({"backend": "mujoco", "contact_tangential_stiffness": "1e4"},
     "backend mujoco .* has no tangential contact spring: contact_tangential_stiffness "),
    ({"backend": "mujoco", "contact_tangential_damping_per_kg": "5"},
     "has no tangential contact spring: contact_tangential_damping_per_kg "),
    ({"contact_stiffness": "3e4", "contact_stiffness_per_kg": "800"}, "stiffness .absolute. or stiff"),
    ({"contact_damping_per_kg": "-5"}, "damping_per_kg must be finite and >= 0, got -5.0"),
    ({"contact_stiffness_per_kg": "stiff"}, "contact_stiffness_per_kg must be a number"),
    ({"contact_length": "0"}, r"contact length \(the robot's leg length, m\) must be finite and > 0"),
    ({"contact_spheres": "LF_FOOT"}, "'LF_FOOT' is not link:radius with a finite radius > 0"),
    ({"contact_spheres": "LF_FOOT:0.03 RF_FOOT:-0.03"}, "'RF_FOOT:-0.03' is not link:radius"),
    ({"contact_spheres": "LF_FOOT:nan"}, "contact_spheres: 'LF_FOOT:nan' is not link:radius"),
])
def test_bad_parameters_fail_on_init(params: dict[str, str], message: str) -> None:
    with pytest.raises(HardwareError, match=message):
        Harness(sim_urdf(**params))


class ToySimulator(kd.sim.Simulator):
    """A backend registered by a test: kinodyn's simulator under another name."""

    def __init__(self, model: kd.Model, urdf: str | Path | ParsedURDF, *, dt: float, integrator: str,
                 contact: kd.sim.ContactModel | None, joint_limits: bool) -> None:
        super().__init__(model, dt=dt, integrator=integrator, contact=contact, joint_limits=joint_limits)


@pytest.fixture
def toy_backend() -> Iterator[str]:
    kd.sim.register_backend("toy", ToySimulator, kd.sim.BackendCapabilities(
        "a test's backend", integrators=("semi_implicit_euler",), contact_kinds=("soft",),
        tangential_contact=False))
    yield "toy"
    kd.sim.unregister_backend("toy")


def test_a_registered_backend_is_a_backend_param_and_its_capabilities_are_checked(toy_backend: str) -> None:
    h = Harness(sim_urdf(backend=toy_backend, integrator="semi_implicit_euler"))
    h.activate_hardware()
    simulator = h.resources.components["quadruped_system"].simulator
    assert type(simulator) is ToySimulator
    assert simulator.integrator == "semi_implicit_euler"
    heights = run(h, 500)
    assert max(abs(z - QUADRUPED_STANDING_HEIGHT) for z in heights) < 0.01  # it stands on its contact
    refused = [({}, r"integrator must be one of \('semi_implicit_euler',\) on backend toy, got 'rk4'"),
               ({"integrator": "semi_implicit_euler", "contact": "hard"},
                r"backend toy \(a test's backend\) takes contact soft or none, got 'hard'"),
               ({"integrator": "semi_implicit_euler", "contact_tangential_stiffness": "1e4"},
                "backend toy .* has no tangential contact spring"),
               ({"backend": "bullet"}, "param backend must be one of kinodyn, mujoco, toy, got 'bullet'")]
    for params, message in refused:
        with pytest.raises(HardwareError, match=message):
            Harness(sim_urdf(**{"backend": toy_backend, **params}))


def test_component_lifecycle_reaches_active() -> None:
    h = Harness(sim_urdf())
    h.activate_hardware()
    assert h.resources.components["quadruped_system"].lifecycle_state is LifecycleState.ACTIVE


def _pendulum(root: str, extra_link: str = "", params: str = "") -> str:
    """A 1 kg body ``root`` (massless if it is ``world``) with a revolute joint to a 1 kg bob 0.5 m below it,
    on SimulatedSystem."""
    inertial = ('<inertial><origin xyz="0 0 {z}"/><mass value="1"/>'
                '<inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial>')
    body = "" if root == "world" else inertial.format(z=0)
    links = (f'<link name="{root}">{body}</link>{extra_link}'
             f'<link name="bob">{inertial.format(z=-0.5)}</link>')
    hinge = (f'<joint name="j1" type="revolute"><parent link="{root}"/><child link="bob"/><axis xyz="0 1 0"/>'
             '<limit lower="-3" upper="3" velocity="20" effort="10"/></joint>')
    block = system_block(param("ros_interface", "false") + param("contact", "none") + params,
                         joint("j1", ("effort",), ("position", "velocity", "effort"), {"position": 0.3}),
                         plugin=SIMULATED_SYSTEM)
    return f'<robot name="p">{links}{hinge}{block}</robot>'


@BACKENDS
def test_base_floats_unless_the_root_link_is_world(backend: dict[str, str]) -> None:
    extra = "".join(param(k, v) for k, v in backend.items())
    fixed = Harness(_pendulum("world", params=extra))
    fixed.activate_hardware()
    s = fixed.resources.components["sys"].simulator
    assert not s.model.floating_base
    assert s.model.nq == 1
    for _ in range(100):
        s.step(np.zeros(1))
    assert s.q[0] < 0.3  # the pendulum swings down about its fixed hinge
    floating = Harness(_pendulum("base", params=extra))
    floating.activate_hardware()
    s = floating.resources.components["sys"].simulator
    assert s.model.floating_base
    assert s.model.nq == 8
    z0 = s.q[2]
    for _ in range(100):
        s.step(np.zeros(1))
    assert s.q[2] == pytest.approx(z0 - 0.5 * 9.81 * s.t**2, abs=1e-9)  # free fall of the whole robot
    overridden = Harness(_pendulum("base", params=param("floating_base", "false") + extra))
    overridden.activate_hardware()
    assert not overridden.resources.components["sys"].simulator.model.floating_base


def test_world_link_that_is_not_the_root_is_refused() -> None:
    world_below = ('<link name="world"/>'
                   '<joint name="w" type="fixed"><parent link="base"/><child link="world"/></joint>')
    with pytest.raises(HardwareError, match="link named 'world' that is not its root"):
        Harness(_pendulum("base", world_below))


def test_generic_system_accepts_lockstep_real_hardware_refuses() -> None:
    generic = Harness(robot_xml(system_block(joints=joint("j1", ("effort",), ("position",))), ("j1",)))
    assert generic.resources.components["sys"].prepare_lockstep(0.002) is ReturnType.OK
    real = Harness(robot_xml(system_block(joints=joint("j1", ("effort",), ("position",)),
                                          plugin="kinodyn_control/RealDeviceSkeleton"), ("j1",)))
    component = real.resources.components["sys"]
    assert component.prepare_lockstep(0.002) is ReturnType.ERROR
    assert "real hardware does not wait for commands" in component.last_error


def _with_shank_inertia(text: str, moments: str) -> str:
    """``text`` with LF_SHANK's principal moments replaced (ixx iyy izz)."""
    first = text.index("<inertia ", text.index('<link name="LF_SHANK">'))
    ixx, iyy, izz = moments.split()
    inertia = f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}" '
    return text[:first] + inertia + text[text.index("/>", first):]


def test_mujoco_refuses_a_non_physical_inertia_unless_balance_inertia_is_set() -> None:
    broken = _with_shank_inertia(sim_urdf(backend="mujoco"), "1e-3 1e-3 5e-3")  # 1e-3 + 1e-3 < 5e-3
    h = Harness(broken)
    with pytest.raises(HardwareError, match=r"link 'LF_SHANK' .*A \+ B >= C.*balance_inertia"):
        h.activate_hardware()
    h = Harness(_with_shank_inertia(sim_urdf(backend="mujoco", balance_inertia="true"), "1e-3 1e-3 5e-3"))
    with pytest.warns(UserWarning, match="link 'LF_SHANK': principal moments .* violate A \\+ B >= C"):
        h.activate_hardware()
    simulator = h.resources.components["quadruped_system"].simulator
    np.testing.assert_allclose(simulator.mj.body("LF_SHANK").inertia, 7e-3 / 3, rtol=1e-12)
    heights = run(h, 500)
    assert max(abs(z - QUADRUPED_STANDING_HEIGHT) for z in heights) < 0.01


@pytest.mark.parametrize("t", [0.0, 0.002, 1.5, 123.456789012, 4.0e5 + 0.999999999])
def test_clock_bytes_are_rclpys_serialization_of_the_clock_message(t: float) -> None:
    raw = clock_bytes(t)
    assert raw == serialize_message(Clock(clock=seconds_to_stamp(t)))
    stamp = deserialize_message(raw, Clock).clock
    assert stamp_to_ns(stamp) == round(t * 1e9)


def _feet_as_meshes(text: str) -> str:
    """``text`` with every collision sphere a mesh (not contact geometry; the feet of many a published
    URDF)."""
    sphere = '<sphere radius="0.03" />'
    parts = text.split("<collision>")
    assert len(parts) > 1
    return "<collision>".join([parts[0], *(part.replace(sphere, '<mesh filename="package://x/foot.stl" />', 1)
                                           for part in parts[1:])])


FEET_SPHERES = " ".join(f"{leg}_FOOT:0.03" for leg in ("LF", "LH", "RF", "RH"))  # urdf/README.md: 3 cm


@BACKENDS
def test_feet_without_collision_spheres_are_refused_unless_contact_spheres_gives_them(
        backend: dict[str, str]) -> None:
    """A floating robot with no contact sphere is refused at configure, naming param contact_spheres; given
    the quadruped's own foot spheres that way, it stands exactly as with them in its URDF."""
    meshes = _feet_as_meshes(sim_urdf(**backend))
    assert kd.sim.collision_spheres(meshes) == ()
    with pytest.raises(HardwareError, match=r"no contact sphere: it would fall through the ground .* param "
                                            r"contact_spheres"):
        Harness(meshes).activate_hardware()
    with pytest.raises(HardwareError, match="param contact_spheres: unknown frame 'LF_FOTO'"):
        Harness(_feet_as_meshes(sim_urdf(contact_spheres="LF_FOTO:0.03", **backend))).activate_hardware()
    given = Harness(_feet_as_meshes(sim_urdf(contact_spheres=FEET_SPHERES, **backend)))
    given.activate_hardware()
    own = Harness(sim_urdf(**backend))
    own.activate_hardware()
    assert run(given, 300) == run(own, 300)
    simulator = given.resources.components["quadruped_system"].simulator
    assert simulator.in_contact.all()
    assert simulator.q[2] == pytest.approx(QUADRUPED_STANDING_HEIGHT, abs=0.01)


@BACKENDS
def test_contact_length_scales_the_grounds_default_gains_to_the_robots_legs(backend: dict[str, str]) -> None:
    """Param contact_length (the robot's leg length, m) is ``ContactModel.length``: the gains left to their
    per-kg defaults scale by REFERENCE_LENGTH / contact_length, a given one does not."""
    h = Harness(sim_urdf(contact_length=str(REFERENCE_LENGTH / 2), contact_damping_per_kg="5", **backend))
    h.activate_hardware()
    mass = float(h.resources.components["quadruped_system"].simulator.model.mass.sum())
    gains = h.resources.components["quadruped_system"].simulator.contact_gains
    assert gains.stiffness == pytest.approx(2 * STIFFNESS_PER_KG * mass, rel=1e-15)
    assert gains.damping == pytest.approx(5 * mass, rel=1e-15)
