"""Ground contact options of the simulator: the soft model and the hard (impulsive) model.

Both act on contact spheres (``collision.ContactSphere``) against the plane z = 0, normal +z.

- ``"soft"`` (Seed 000 §3.7.1, (3.57)): while a sphere penetrates the ground, the seed's
  spring-damper towards the first-touch point acts at the sphere's lowest point, inside the
  integrator (``kernels.contact_forces``): normal ``f_n = max(0, k delta - d v_n)`` (the clamp makes
  the contact unilateral; the seed's (3.57) is bilateral, seed 000 inventory §4.3) and tangential
  ``f_t = kt (p0 - p) - dt v_t``, limited to the Coulomb disc ``|f_t| <= mu f_n``: Coulomb friction
  regularised by a stiction spring. While sliding, the anchor p0 follows the contact point at the
  distance ``mu f_n / kt`` (``kernels.update_anchors``), so a foot under a tangential load below
  ``mu f_n`` does not creep, unlike a velocity regularisation ``v_t / sqrt(|v_t|^2 + eps^2)``, which
  with explicit integration at 1 kHz would need eps ~ 0.1 m/s on a 0.2 kg contact inertia.
- ``"hard"`` (Seed 000 §3.7.3, (3.65)-(3.69)): the same forces while in contact, plus, at the end of
  every step, a perfectly inelastic impulse along the normal for the penetrating spheres whose
  normal velocity points into the ground: ``Δu = M^-1 J_n^T λ`` with ``λ >= 0`` such that
  ``J_n u+ >= 0`` and ``λ_i (J_n u+)_i = 0`` (``impulse.inelastic_impulse``). With a single
  contact this is the seed's ``Δu = -M^-1 J^T Λ J u-``, ``Λ = (J M^-1 J^T)^-1``, restricted to the
  normal direction: the normal velocity of the contact point becomes zero and the tangential
  momentum is unchanged (friction acts through the soft force only, not in the impulse).

Parameter choice with explicit integration: the spring and damper must be resolved by the time
step, ``sqrt(k / m_c) dt`` and ``(d / m_c) dt`` below about 1 for RK4 with ``m_c`` the smallest
inertia a contact sees (``Λ``), and the same for ``kt`` and ``dt``. The defaults are stable at
``dt = 1e-3`` with both integrators for the quadruped (36 kg; its feet see 0.23 to 1.1 kg), with
about 3 mm of penetration per foot standing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinodyn.sim import kernels
from kinodyn.sim.collision import ContactSphere

CONTACT_KINDS = ("soft", "hard")


@dataclass(frozen=True)
class ContactModel:
    """Ground contact of the given spheres (parameters in SI units; see the module doc)."""

    spheres: tuple[ContactSphere, ...]
    kind: str = "soft"
    stiffness: float = 3.0e4  # N/m, normal spring k
    damping: float = 200.0  # N s/m, normal damper d
    friction: float = 0.8  # Coulomb coefficient mu
    tangential_stiffness: float = 3.0e4  # N/m, stiction spring kt (0: viscous regularisation only)
    tangential_damping: float = 200.0  # N s/m, dt

    def __post_init__(self) -> None:
        if self.kind not in CONTACT_KINDS:
            raise ValueError(f"contact kind must be one of {CONTACT_KINDS}, got {self.kind!r}")
        for name in ("stiffness", "damping", "friction", "tangential_stiffness", "tangential_damping"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0.0):
                raise ValueError(f"contact {name} must be finite and >= 0, got {value}")
        object.__setattr__(self, "spheres", tuple(self.spheres))

    def params(self, joint_friction_velocity: float) -> np.ndarray:
        """The ``params`` array of ``kernels`` (contact parameters and the joint friction velocity)."""
        out = np.empty(kernels.N_PARAMS)
        out[kernels.STIFFNESS] = self.stiffness
        out[kernels.DAMPING] = self.damping
        out[kernels.FRICTION] = self.friction
        out[kernels.TANGENTIAL_STIFFNESS] = self.tangential_stiffness
        out[kernels.TANGENTIAL_DAMPING] = self.tangential_damping
        out[kernels.JOINT_FRICTION_VELOCITY] = joint_friction_velocity
        return out
