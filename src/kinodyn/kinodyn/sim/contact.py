"""Ground contact options of the simulator: the soft model and the hard (impulsive) model.

Both act on contact spheres (``collision.ContactSphere``) against the plane z = 0, normal +z.

- ``"soft"`` (Robot Dynamics lecture notes (ETH) §3.7.1, (3.57)): while a sphere penetrates the ground, the
  notes'
  spring-damper towards the first-touch point acts at the sphere's lowest point, inside the
  integrator (``kernels.contact_forces``): normal ``f_n = max(0, k delta - d v_n)`` (the clamp makes
  the contact unilateral; the notes' (3.57) is bilateral) and tangential
  ``f_t = kt (p0 - p) - dt v_t``, limited to the Coulomb disc ``|f_t| <= mu f_n``: Coulomb friction
  regularised by a stiction spring. While sliding, the anchor p0 follows the contact point at the
  distance ``mu f_n / kt`` (``kernels.update_anchors``), so a foot under a tangential load below
  ``mu f_n`` does not creep, unlike a velocity regularisation ``v_t / sqrt(|v_t|^2 + eps^2)``, which
  with explicit integration at 1 kHz would need eps ~ 0.1 m/s on a 0.2 kg contact inertia.
- ``"hard"`` (Robot Dynamics lecture notes (ETH) §3.7.3, (3.65)-(3.69)): the same forces while in contact,
  plus, at the end of
  every step, a perfectly inelastic impulse along the normal for the penetrating spheres whose
  normal velocity points into the ground: ``Δu = M^-1 J_n^T λ`` with ``λ >= 0`` such that
  ``J_n u+ >= 0`` and ``λ_i (J_n u+)_i = 0`` (``impulse.inelastic_impulse``). With a single
  contact this is the notes' ``Δu = -M^-1 J^T Λ J u-``, ``Λ = (J M^-1 J^T)^-1``, restricted to the
  normal direction: the normal velocity of the contact point becomes zero and the tangential
  momentum is unchanged (friction acts through the soft force only, not in the impulse).

Gains per unit mass: the spring and damper constants are given either as absolute numbers
(``stiffness``, ``damping``, ``tangential_stiffness``, ``tangential_damping``) or per kilogram of the
robot's total mass (``*_per_kg``, the default), the simulator multiplying them by the mass of its model
(``gains``). Scaled so, a robot of any mass standing on n spheres sinks ``g / (n k_per_kg)``, the same
depth, with the same damping ratio, and a robot whose links scale with its mass keeps its contacts as well
resolved by the time step as the reference robot's. An absolute value replaces the per-kg one of the same
constant; giving both is an error.

Gains for the robot's size: given ``length`` (m, the robot's leg length, hip to foot in its nominal stance:
``kinodyn.control.locomotion.leg_length``), the per-kg defaults of the constants left unset are scaled by
``s = REFERENCE_LENGTH / length`` (0.505 m, the quadruped's legs): the springs by ``s``, the dampers by
``sqrt(s)``. The contact's natural frequency then keeps its ratio to the robot's pendulum frequency
``sqrt(g / l)``, its damping ratio is the quadruped's, and its sinkage ``g / (n k_per_kg)`` the same fraction
of the leg (dynamic similarity). Without it (the default), a robot of any size stands on the quadruped's
9 Hz ground: for a robot with 0.13 m legs that is the rate at which its trot hands its weight from one pair
of feet to the other (docs/simulator.md).

Parameter choice with explicit integration: the spring and damper must be resolved by the time
step, ``sqrt(k / m_c) dt`` and ``(d / m_c) dt`` below about 1 for RK4 with ``m_c`` the smallest
inertia a contact sees (``Λ``), and the same for ``kt`` and ``dt``. The defaults are those of the
project's quadruped (36 kg; its feet see 0.23 to 1.1 kg): 3e4 N/m and 200 N s/m there, stable at
``dt = 1e-3`` with both integrators, about 3 mm of penetration per foot standing. Absolute gains tuned for
a heavy robot make the light legs of a small one chatter or diverge: ``(d / m_c) dt`` grows as ``m_c``
shrinks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from kinodyn.sim import kernels

if TYPE_CHECKING:
    from kinodyn.sim.collision import ContactSphere

CONTACT_KINDS = ("soft", "hard")
REFERENCE_MASS = 36.0  # kg, the project's quadruped (urdf/quadruped.urdf), whose gains the defaults keep
REFERENCE_LENGTH = 0.505  # m, its legs (hip to foot in its nominal stance): ``length``'s unit scale
STIFFNESS_PER_KG = 3.0e4 / REFERENCE_MASS  # N/m per kg of robot mass: 3e4 N/m on the quadruped
DAMPING_PER_KG = 200.0 / REFERENCE_MASS  # N s/m per kg: 200 N s/m on the quadruped
GAINS = ("stiffness", "damping", "tangential_stiffness", "tangential_damping")


class ContactGains(NamedTuple):
    """The absolute spring and damper constants of a ``ContactModel`` for one robot (N/m, N s/m)."""

    stiffness: float
    damping: float
    tangential_stiffness: float
    tangential_damping: float


@dataclass(frozen=True)
class ContactModel:
    """Ground contact of the given spheres (parameters in SI units; see the module doc).

    Each of ``stiffness`` (normal spring k, N/m), ``damping`` (normal damper d, N s/m),
    ``tangential_stiffness`` (stiction spring kt, N/m; 0: viscous regularisation only) and
    ``tangential_damping`` (dt, N s/m) is either given as an absolute number or per kg of the robot's
    total mass by its ``*_per_kg`` sibling (N/m/kg, N s/m/kg); unset, it is the per-kg default
    (``STIFFNESS_PER_KG`` for the springs, ``DAMPING_PER_KG`` for the dampers), scaled to ``length`` (m, the
    robot's leg length) when it is given (module doc).
    ``gains(mass)`` resolves them.
    """

    spheres: tuple[ContactSphere, ...]
    kind: str = "soft"
    stiffness: float | None = None
    damping: float | None = None
    friction: float = 0.8  # Coulomb coefficient mu
    tangential_stiffness: float | None = None
    tangential_damping: float | None = None
    stiffness_per_kg: float | None = None
    damping_per_kg: float | None = None
    tangential_stiffness_per_kg: float | None = None
    tangential_damping_per_kg: float | None = None
    length: float | None = None  # m, the robot's leg length: the unset constants' defaults scaled to it

    def __post_init__(self) -> None:
        if self.kind not in CONTACT_KINDS:
            raise ValueError(f"contact kind must be one of {CONTACT_KINDS}, got {self.kind!r}")
        given = {"friction": self.friction}
        for name in GAINS:
            absolute, per_kg = getattr(self, name), getattr(self, f"{name}_per_kg")
            if absolute is not None and per_kg is not None:
                raise ValueError(f"give contact {name} (absolute) or {name}_per_kg (times the robot's mass), "
                                 f"not both (got {absolute} and {per_kg})")
            given |= {key: value for key, value in ((name, absolute), (f"{name}_per_kg", per_kg))
                      if value is not None}
        for name, value in given.items():
            if not (isinstance(value, Real) and np.isfinite(value) and value >= 0.0):
                raise ValueError(f"contact {name} must be finite and >= 0, got {value!r}")
        if self.length is not None and not (isinstance(self.length, Real) and np.isfinite(self.length)
                                            and self.length > 0.0):
            raise ValueError(f"contact length (the robot's leg length, m) must be finite and > 0, got "
                             f"{self.length!r}")
        object.__setattr__(self, "spheres", tuple(self.spheres))

    def gains(self, mass: float) -> ContactGains:
        """The absolute constants for a robot of total ``mass`` [kg] (per-kg ones times ``mass``)."""
        if not (np.isfinite(mass) and mass > 0.0):
            raise ValueError(f"the robot's total mass must be finite and > 0 to scale the contact gains, "
                             f"got {mass}")
        size = 1.0 if self.length is None else REFERENCE_LENGTH / float(self.length)
        spring, damper = size * STIFFNESS_PER_KG, math.sqrt(size) * DAMPING_PER_KG
        defaults = (spring, damper, spring, damper)
        values = []
        for name, default in zip(GAINS, defaults, strict=True):
            absolute, per_kg = getattr(self, name), getattr(self, f"{name}_per_kg")
            values.append(float(absolute) if absolute is not None
                          else (default if per_kg is None else float(per_kg)) * float(mass))
        return ContactGains(*values)

    def params(self, joint_friction_velocity: float, mass: float) -> np.ndarray:
        """The ``params`` array of ``kernels`` (contact constants for a robot of total ``mass`` and the
        joint friction velocity)."""
        k, d, kt, dt = self.gains(mass)
        out = np.empty(kernels.N_PARAMS)
        out[kernels.STIFFNESS] = k
        out[kernels.DAMPING] = d
        out[kernels.FRICTION] = self.friction
        out[kernels.TANGENTIAL_STIFFNESS] = kt
        out[kernels.TANGENTIAL_DAMPING] = dt
        out[kernels.JOINT_FRICTION_VELOCITY] = joint_friction_velocity
        return out
