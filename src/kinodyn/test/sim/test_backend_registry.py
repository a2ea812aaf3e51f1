"""The physics-backend registry (``kinodyn.sim.backend``): a backend registered from outside the package (a
thin subclass of kinodyn's ``Simulator``, here) is built by ``create_backend`` and held to the capabilities it
declares; the shipped backends' declared capabilities are what their implementations accept; registering
MuJoCo's does not import MuJoCo."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.sim.backend import PhysicsBackend
from kinodyn.sim.mujoco_backend import MUJOCO_INTEGRATORS, MujocoSimulator

import kinodyn as kd
from kinodyn import sim

from .conftest import QUADRUPED_URDF

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from kinodyn.urdf import ParsedURDF

QUADRUPED = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
TOY = "toy"


class ToySimulator(sim.Simulator):
    """kinodyn's simulator under another name, built from the URDF as any backend is."""

    def __init__(self, model: kd.Model, urdf: str | Path | ParsedURDF, *, dt: float, integrator: str,
                 contact: sim.ContactModel | None, joint_limits: bool) -> None:
        super().__init__(model, dt=dt, integrator=integrator, contact=contact, joint_limits=joint_limits)
        self.urdf = urdf


@pytest.fixture
def toy() -> Iterator[sim.BackendCapabilities]:
    capabilities = sim.BackendCapabilities("a test's backend", integrators=("rk4",), contact_kinds=("soft",),
                                           tangential_contact=False, rolling_contact=True)
    sim.register_backend(TOY, ToySimulator, capabilities)
    yield capabilities
    sim.unregister_backend(TOY)


def spheres(kind: str = "soft") -> sim.ContactModel:
    return sim.ContactModel(sim.collision_spheres(QUADRUPED_URDF), kind=kind)


def test_a_registered_backend_is_built_listed_and_steps_as_its_engine(toy: sim.BackendCapabilities) -> None:
    assert sim.backend_names() == ("kinodyn", "mujoco", TOY)
    assert sim.backend_capabilities(TOY) is toy
    s = sim.create_backend(TOY, QUADRUPED_URDF, QUADRUPED, dt=1e-3, contact=spheres())
    assert isinstance(s, ToySimulator)
    assert isinstance(s, PhysicsBackend)
    assert s.urdf == QUADRUPED_URDF
    reference = sim.create_backend("kinodyn", QUADRUPED_URDF, QUADRUPED, dt=1e-3, contact=spheres())
    q0 = QUADRUPED.neutral()
    q0[2] = 2.0  # in the air
    tau = np.random.default_rng(3).uniform(-5.0, 5.0, 12)
    for backend in (s, reference):
        backend.reset(q0)
        for _ in range(50):
            backend.step(tau)
    assert s.t == pytest.approx(0.05)
    np.testing.assert_array_equal(s.q, reference.q)
    assert s.q[2] == pytest.approx(q0[2] - 0.5 * 9.81 * s.t**2, abs=1e-3)  # it falls


def test_a_backend_is_held_to_its_declared_capabilities(toy: sim.BackendCapabilities) -> None:
    with pytest.raises(ValueError, match=r"integrator must be one of \('rk4',\) on the toy backend"):
        sim.create_backend(TOY, QUADRUPED_URDF, QUADRUPED, integrator="semi_implicit_euler")
    with pytest.raises(ValueError, match=re.escape("contact kind 'hard' is not simulated by the toy backend "
                                                   "(a test's backend): use kind 'soft'")):
        sim.create_backend(TOY, QUADRUPED_URDF, QUADRUPED, contact=spheres("hard"))
    no_spheres = sim.ContactModel((), kind="hard")  # no contact, whatever the kind
    assert isinstance(sim.create_backend(TOY, QUADRUPED_URDF, QUADRUPED, contact=no_spheres), ToySimulator)


def test_a_name_is_registered_once_and_an_unknown_one_gets_the_list(toy: sim.BackendCapabilities) -> None:
    with pytest.raises(ValueError, match="'toy' is already registered"):
        sim.register_backend(TOY, ToySimulator, toy)
    with pytest.raises(ValueError, match="must be an identifier"):
        sim.register_backend("two words", ToySimulator, toy)
    dotted = "kinodyn.sim.simulator.Simulator"
    with pytest.raises(ValueError, match=re.escape(f"is 'module:attribute', got '{dotted}'")):
        sim.lazy(dotted)
    with pytest.raises(ValueError, match="physics backend must be one of kinodyn, mujoco, toy, got 'bullet'"):
        sim.create_backend("bullet", QUADRUPED_URDF, QUADRUPED)
    with pytest.raises(ValueError, match="physics backend must be one of kinodyn, mujoco, toy, got 'bullet'"):
        sim.backend_capabilities("bullet")


def test_an_unregistered_backend_is_gone() -> None:
    sim.register_backend(TOY, ToySimulator, sim.BackendCapabilities("a test's backend"))
    sim.unregister_backend(TOY)
    assert sim.backend_names() == ("kinodyn", "mujoco")
    with pytest.raises(ValueError, match="must be one of kinodyn, mujoco, got 'toy'"):
        sim.create_backend(TOY, QUADRUPED_URDF, QUADRUPED)
    with pytest.raises(ValueError, match="must be one of kinodyn, mujoco, got 'toy'"):
        sim.unregister_backend(TOY)


def test_the_shipped_backends_declare_what_they_accept() -> None:
    """Each implementation, called without ``create_backend``'s checks, accepts exactly the declared
    integrators and contact kinds."""

    kinodyn, mujoco = sim.backend_capabilities("kinodyn"), sim.backend_capabilities("mujoco")
    assert set(kinodyn.integrators) == set(sim.INTEGRATORS)
    assert set(mujoco.integrators) == set(MUJOCO_INTEGRATORS)
    implementations = {
        "kinodyn": lambda kind: sim.Simulator(QUADRUPED, contact=spheres(kind)),
        "mujoco": lambda kind: MujocoSimulator(QUADRUPED, QUADRUPED_URDF, contact=spheres(kind)),
    }
    for name, build in implementations.items():
        for kind in ("soft", "hard"):
            if kind in sim.backend_capabilities(name).contact_kinds:
                build(kind)
            else:
                with pytest.raises(ValueError, match=f"contact kind '{kind}'"):
                    build(kind)
    assert (kinodyn.rolling_contact, mujoco.rolling_contact) == (False, True)
    assert (kinodyn.tangential_contact, mujoco.tangential_contact) == (True, False)


def test_registering_the_mujoco_backend_does_not_import_mujoco() -> None:
    code = ("import sys, kinodyn.sim as s; assert 'mujoco' in s.backend_names(); "
            "print('mujoco' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=600)
    assert out.stdout.strip() == "False"
