"""The physics-backend protocol: what a simulator of one robot on the ground plane offers its users.

Two backends implement it: ``Simulator`` (kinodyn's own rigid-body simulation, ``"kinodyn"``) and
``mujoco_backend.MujocoSimulator`` (MuJoCo's dynamics and contact solver on the same URDF, ``"mujoco"``).
Whatever the engine, the state and every output follow kinodyn's conventions (docs/conventions.md):

- ``q = [x, y, z, qx, qy, qz, qw, joints]`` and ``v = [base linear, base angular (both in the base frame),
  joints]`` for a floating base, joints in ``model.joint_names`` order;
- ``step(tau)`` advances ``dt`` with ``tau`` ((n_joints,) efforts or (nv,) generalized forces) held over
  the step, saturated at the URDF effort limits; ``applied_torque`` is what was applied (nv,);
- ``contact.spheres`` are the contact geometry (the URDF's collision spheres) against the plane z = 0,
  ``contact_gains`` the contact's spring and damper constants for this robot (``ContactModel.gains`` of the
  model's total mass, the same on both backends);
  ``contact_points`` the lowest point of each sphere, ``in_contact`` whether it touches the ground,
  ``contact_forces`` the ground reaction on the robot (world axes, N) at the current state;
- ``apply_wrench(link, [f; tau], duration)``: world axes, about the link's origin, for
  ``round(duration / dt)`` steps (at least one);
- ``add_imu(frame, noise, rng)``: an ``ImuSensor`` updated after every step.

Backends are registered by name (``register_backend``), each with a factory and its declared
``BackendCapabilities`` (integrators, contact kinds, kinodyn's tangential contact spring, rolling contact
spheres), so callers ask ``backend_capabilities(name)`` instead of comparing names. ``create_backend(name,
urdf, model, ...)`` builds a registered backend from a URDF and its ``kinodyn.Model``; ``backend_names()``
lists them. A new backend is one module with a class that implements the protocol, plus one
``register_backend`` line (below, or in the code that uses it); ``lazy`` keeps its import (and its engine's)
until it is first asked for, as MuJoCo's is.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from kinodyn.model import Model
from kinodyn.sim.inertia import inertia_repairs, repair_inertias
from kinodyn.sim.simulator import INTEGRATORS, Simulator
from kinodyn.urdf import ParsedURDF, URDFWarning, read_urdf

if TYPE_CHECKING:
    from pathlib import Path

    from numpy.typing import ArrayLike

    from kinodyn.sim.contact import ContactGains, ContactModel
    from kinodyn.sim.imu import ImuNoise, ImuSensor

DEFAULT_BACKEND = "kinodyn"


@runtime_checkable
class PhysicsBackend(Protocol):
    """A simulated robot on the ground plane, in kinodyn's conventions (see the module doc)."""

    @property
    def model(self) -> Model: ...
    @property
    def dt(self) -> float: ...
    @property
    def t(self) -> float: ...
    @property
    def q(self) -> np.ndarray: ...
    @property
    def v(self) -> np.ndarray: ...
    @property
    def contact(self) -> ContactModel: ...
    @property
    def contact_gains(self) -> ContactGains: ...
    @property
    def contact_forces(self) -> np.ndarray: ...
    @property
    def contact_points(self) -> np.ndarray: ...
    @property
    def in_contact(self) -> np.ndarray: ...
    @property
    def applied_torque(self) -> np.ndarray: ...

    def reset(self, q: ArrayLike | None = None, v: ArrayLike | None = None, t: float = 0.0) -> None:
        """Set the state (default: neutral, at rest) and the time; drops active pushes."""

    def step(self, tau: ArrayLike) -> None:
        """Advance ``dt`` with ``tau`` held; raises ``FloatingPointError`` if the physics diverges."""

    def apply_wrench(self, link: str, wrench: ArrayLike, duration: float) -> None:
        """Push ``link`` with ``wrench = [f; tau]`` (world axes, about its origin) for ``duration`` s."""

    def add_imu(self, frame: str, noise: ImuNoise | None = None,
                rng: np.random.Generator | int | None = None) -> ImuSensor:
        """An IMU on ``frame``, updated after every step."""


class BackendFactory(Protocol):
    """Builds a backend of ``model`` (built from ``urdf``, which it may read) with these options."""

    def __call__(self, model: Model, urdf: str | Path | ParsedURDF, *, dt: float, integrator: str,
                 contact: ContactModel | None, joint_limits: bool) -> PhysicsBackend: ...


@dataclass(frozen=True)
class BackendCapabilities:
    """What a backend simulates, declared at registration; ``create_backend`` refuses anything else.

    ``integrators``: the ``integrator`` names it takes; ``contact_kinds``: the ``ContactModel.kind``s it
    simulates (no contact is always possible); ``tangential_contact``: whether ``ContactModel``'s tangential
    spring and damper (kinodyn's stiction) act, else only its normal gains and friction do;
    ``rolling_contact``: whether a contact sphere rolls on the ground (the contact point moves over the
    sphere as it turns), else it pivots about its lowest point in stance; ``description``: one line for
    messages."""

    description: str
    integrators: tuple[str, ...] = INTEGRATORS
    contact_kinds: tuple[str, ...] = ("soft", "hard")
    tangential_contact: bool = True
    rolling_contact: bool = False


@dataclass(frozen=True)
class BackendEntry:
    """A registered backend: how to build it and what it declares."""

    factory: BackendFactory
    capabilities: BackendCapabilities


_REGISTRY: dict[str, BackendEntry] = {}


def register_backend(name: str, factory: BackendFactory, capabilities: BackendCapabilities) -> None:
    """Make ``name`` a backend that ``create_backend`` builds with ``factory``; a name is registered once."""
    if not name or not name.isidentifier():
        raise ValueError(f"a backend name must be an identifier, got {name!r}")
    if name in _REGISTRY:
        raise ValueError(f"physics backend {name!r} is already registered")
    _REGISTRY[name] = BackendEntry(factory, capabilities)


def unregister_backend(name: str) -> None:
    """Remove the registered backend ``name`` (a plug-in's or a test's)."""
    _entry(name)
    del _REGISTRY[name]


def backend_names() -> tuple[str, ...]:
    """The registered backends, in registration order."""
    return tuple(_REGISTRY)


def _entry(name: str) -> BackendEntry:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"physics backend must be one of {', '.join(_REGISTRY)}, got {name!r}") from None


def backend_capabilities(name: str) -> BackendCapabilities:
    """The declared capabilities of the registered backend ``name`` (``ValueError`` listing the names)."""
    return _entry(name).capabilities


def lazy(target: str) -> BackendFactory:
    """A factory that imports ``"module:attribute"`` (a class or function with the ``BackendFactory``
    signature) when first called, so registering a backend does not import its engine."""
    module, _, attribute = target.partition(":")
    if not (module and attribute.isidentifier()):
        raise ValueError(f"a lazy backend factory is 'module:attribute', got {target!r}")

    def factory(model: Model, urdf: str | Path | ParsedURDF, *, dt: float, integrator: str,
                contact: ContactModel | None, joint_limits: bool) -> PhysicsBackend:
        build: BackendFactory = getattr(importlib.import_module(module), attribute)
        return build(model, urdf, dt=dt, integrator=integrator, contact=contact, joint_limits=joint_limits)

    return factory


def create_backend(name: str, urdf: str | Path | ParsedURDF, model: Model, dt: float = 1e-3,
                   integrator: str = "rk4", contact: ContactModel | None = None,
                   joint_limits: bool = True, balance_inertia: bool = False) -> PhysicsBackend:
    """The registered backend ``name`` (``backend_names()``) of ``model``, built from ``urdf`` (the text, path
    or parse it was built from). ``integrator`` and the contact's kind must be among the backend's declared
    capabilities.

    ``balance_inertia``: repair the URDF's non-physical link inertias (``inertia.py``: triangle inequality,
    near-zero masses and moments, as MuJoCo's ``balanceinertia``, ``boundmass`` and ``boundinertia``) with
    one ``URDFWarning`` per repaired link, and simulate the repaired robot (``model`` rebuilt from it) on
    any backend; without it the mujoco backend refuses such inertias and kinodyn's simulates them as
    written."""
    entry = _entry(name)
    capabilities = entry.capabilities
    if integrator not in capabilities.integrators:
        raise ValueError(f"integrator must be one of {capabilities.integrators} on the {name} backend, "
                         f"got {integrator!r}")
    if contact is not None and contact.spheres and contact.kind not in capabilities.contact_kinds:
        kinds = " or ".join(map(repr, capabilities.contact_kinds))
        raise ValueError(f"contact kind {contact.kind!r} is not simulated by the {name} backend "
                         f"({capabilities.description}): use kind {kinds}")
    if balance_inertia:
        urdf, model = balanced(read_urdf(urdf), model)
    return entry.factory(model, urdf, dt=dt, integrator=integrator, contact=contact,
                         joint_limits=joint_limits)


def _kinodyn(model: Model, urdf: str | Path | ParsedURDF, *, dt: float, integrator: str,
             contact: ContactModel | None, joint_limits: bool) -> Simulator:
    """kinodyn's ``Simulator`` (it needs the model only)."""
    return Simulator(model, dt=dt, integrator=integrator, contact=contact, joint_limits=joint_limits)


register_backend("kinodyn", _kinodyn, BackendCapabilities(
    "kinodyn's rigid-body simulation: penalty or impulse contact with a stiction spring"))
register_backend("mujoco", lazy("kinodyn.sim.mujoco_backend:MujocoSimulator"), BackendCapabilities(
    "MuJoCo's dynamics and soft-constraint contact solver", contact_kinds=("soft",),
    tangential_contact=False, rolling_contact=True))


def balanced(parsed: ParsedURDF, model: Model) -> tuple[ParsedURDF, Model]:
    """``parsed`` and ``model`` with the non-physical inertias repaired (unchanged when there are none), one
    ``URDFWarning`` per repaired link."""
    repairs = inertia_repairs(parsed, model.floating_base)
    if not repairs:
        return parsed, model
    for r in repairs:
        moments = np.linalg.eigvalsh(r.inertia).round(9).tolist()
        warnings.warn(f"link {r.link!r}: {r.what}; simulated with mass {r.mass:.6g} kg and principal moments "
                      f"{moments} kg m^2 (balance_inertia)", URDFWarning, stacklevel=3)
    parsed = repair_inertias(parsed, repairs)
    return parsed, Model.from_urdf(parsed, floating_base=model.floating_base)
