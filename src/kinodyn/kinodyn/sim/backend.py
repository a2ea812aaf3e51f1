"""The physics-backend protocol: what a simulator of one robot on the ground plane offers its users.

Two backends implement it: ``Simulator`` (kinodyn's own rigid-body simulation, ``"kinodyn"``) and
``mujoco_backend.MujocoSimulator`` (MuJoCo's dynamics and contact solver on the same URDF, ``"mujoco"``).
Whatever the engine, the state and every output follow kinodyn's conventions (ARCHITECTURE.md §3):

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

``create_backend(name, urdf, model, ...)`` builds either from a URDF and its ``kinodyn.Model``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kinodyn.model import Model
from kinodyn.sim.contact import ContactGains, ContactModel
from kinodyn.sim.imu import ImuNoise, ImuSensor
from kinodyn.sim.inertia import inertia_repairs, repair_inertias
from kinodyn.sim.simulator import Simulator
from kinodyn.urdf import ParsedURDF, URDFWarning, read_urdf

BACKENDS = ("kinodyn", "mujoco")


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

    def reset(self, q: Any = None, v: Any = None, t: float = 0.0) -> None:
        """Set the state (default: neutral, at rest) and the time; drops active pushes."""

    def step(self, tau: Any) -> None:
        """Advance ``dt`` with ``tau`` held; raises ``FloatingPointError`` if the physics diverges."""

    def apply_wrench(self, link: str, wrench: Any, duration: float) -> None:
        """Push ``link`` with ``wrench = [f; tau]`` (world axes, about its origin) for ``duration`` s."""

    def add_imu(self, frame: str, noise: ImuNoise | None = None,
                rng: np.random.Generator | int | None = None) -> ImuSensor:
        """An IMU on ``frame``, updated after every step."""


def create_backend(name: str, urdf: str | Path | ParsedURDF, model: Model, dt: float = 1e-3,
                   integrator: str = "rk4", contact: ContactModel | None = None,
                   joint_limits: bool = True, balance_inertia: bool = False) -> PhysicsBackend:
    """The ``name`` backend (``BACKENDS``) of ``model``, built from ``urdf`` (the text, path or parse it was
    built from). The MuJoCo backend is imported only when asked for.

    ``balance_inertia``: repair the URDF's non-physical link inertias (``inertia.py``: triangle inequality,
    near-zero masses and moments, as MuJoCo's ``balanceinertia``, ``boundmass`` and ``boundinertia``) with
    one ``URDFWarning`` per repaired link, and simulate the repaired robot (``model`` rebuilt from it) on
    either backend; without it the mujoco backend refuses such inertias and kinodyn's simulates them as
    written."""
    if name not in BACKENDS:
        raise ValueError(f"physics backend must be one of {BACKENDS}, got {name!r}")
    if balance_inertia:
        urdf, model = balanced(read_urdf(urdf), model)
    if name == "kinodyn":
        return Simulator(model, dt=dt, integrator=integrator, contact=contact, joint_limits=joint_limits)
    from kinodyn.sim.mujoco_backend import MujocoSimulator

    return MujocoSimulator(model, urdf, dt=dt, integrator=integrator, contact=contact,
                           joint_limits=joint_limits)


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
