"""Contacts of the whole-body QP: no motion of the contact, and forces the ground can exert.

Robot Dynamics lecture notes (ETH) §3.7 (3.60) and §3.10: a contact adds the hard rows ``J_c qdd + Jdot_c v
= 0`` and its force to
the equations of motion ``M qdd + h = S^T tau + J_c^T f``; ``f`` is the ground's action on the robot
(docs/conventions.md). What the notes leave out (friction pyramids, surface contacts) is standard material:

- ``PointContact``: a 3-D force at the frame origin, world axes. Friction pyramid with ``facets`` faces
  inscribed in the Coulomb cone of ``mu`` about ``normal`` (``t_k . f <= mu cos(pi/facets) n . f`` for the
  ``facets`` tangent directions ``t_k``), normal force in ``[f_min, f_max]``.
- ``SurfaceContact``: a 6-D wrench ``[f; tau]`` at the frame origin, world axes, on a rectangular sole of
  half-sizes ``half_length`` (frame x) and ``half_width`` (frame y), the frame's z axis the normal. Its
  inequalities are the closed-form contact wrench cone of Caron, Pham, Nakamura (RSS 2015, "Stability of
  surface contacts for humanoid robots") for corner forces in the 4-sided pyramid inscribed in the cone of
  ``mu``: friction, centre of pressure in the sole, and the yaw-torque bounds; exactly the wrenches four
  corner forces can produce.

Contact feedback (as TSID's contact ``Kp``/``Kd``): a contact with gains ``kp``, ``kd`` asks
``J_c qdd + Jdot_c v = -kp e_c - kd J_c v`` instead, ``e_c`` the drift of the contact frame from its anchor,
the pose it had when the contact was established (the controller's first tick with the contact in stance):
``p - p_anchor`` for a point contact, ``[p - p_anchor; log(C C_anchor^T)]`` (world axes) for a surface
contact. A soft or compliant ground lets a "fixed" contact move; without feedback the controller keeps any
such motion (it only asks for zero acceleration), with it the contact is held at its anchor as a
critically damped oscillator when ``kd = 2 sqrt(kp)``. Zero gains give the rows above: the default of a
point contact. A surface contact defaults to ``kp = w^2``, ``kd = 2 w`` with the natural frequency
``w = SURFACE_FREQUENCY``: a sole on a compliant ground turns on its edges unless held.

Wrench regularisation (surface contacts, ``force_regularization`` ``c``, default ``SURFACE_REGULARIZATION``):
the controller adds ``c |w / (m g)|^2`` to every level's cost (``m g`` the robot's weight, so the term has
the same size on any robot), as TSID regularises every rigid contact's force. Two soles leave six
directions of internal wrench that no task sees; without it only the QP's ridge (``regularization``) fixes
them and the solver may answer with the whole weight on one foot or fail numerically.

Switching: the controller passes the upper bound of the normal force, ``f_upper``; it ramps it linearly
from the contact's normal force at the switch down to 0 before it drops a contact (stance -> swing), and from
0 up to ``f_max`` when it adds one, so forces and torques do not jump.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.spatial.compiled import rotation_log
from kinodyn.spatial.rotations import as_unit_axis

if TYPE_CHECKING:
    from kinodyn.evaluation import Evaluation

DEFAULT_MAX_NORMAL_FORCE = 1.0e4  # N
MIN_FACETS = 3  # a friction pyramid's fewest faces
_NOT_ALONG_X = 0.9  # |n_x| below which x is far enough from the normal to build the tangents from
SURFACE_FREQUENCY = 6.0  # rad/s: a surface contact's default feedback, kp = w^2, kd = 2 w (critically damped)
SURFACE_REGULARIZATION = 10.0  # a surface contact's default wrench regularisation, per (m g)^2


def _tangent_basis(normal: np.ndarray) -> np.ndarray:
    """Rows ``t1, t2, n``: a right-handed orthonormal basis with ``n`` the normal."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < _NOT_ALONG_X else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(helper, normal)
    t1 /= np.linalg.norm(t1)
    return np.array([t1, np.cross(normal, t1), normal])


def _friction_pyramid(mu: float, facets: int) -> np.ndarray:
    """``facets x 3`` rows ``D`` (tangent-normal coordinates): ``D f_local <= 0`` is the inscribed pyramid."""
    angles = 2.0 * math.pi * np.arange(facets) / facets
    inscribed = mu * math.cos(math.pi / facets)
    return np.column_stack([np.cos(angles), np.sin(angles), np.full(facets, -inscribed)])


def _check_gains(name: str, kp: float, kd: float) -> None:
    for label, value in (("kp", kp), ("kd", kd)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0.0):
            raise ValueError(f"contact {name!r}: {label} must be a finite number >= 0 (1/s^2 for kp, 1/s for "
                             f"kd; 0 turns the feedback off), got {value!r}")


def _check_common(name: str, mu: float, f_min: float, f_max: float) -> None:
    if not (math.isfinite(mu) and mu >= 0.0):
        raise ValueError(f"contact {name!r}: mu must be finite and >= 0, got {mu}")
    if not (math.isfinite(f_min) and f_min >= 0.0):
        raise ValueError(f"contact {name!r}: f_min must be finite and >= 0, got {f_min}")
    if not (math.isfinite(f_max) and f_max >= f_min):
        raise ValueError(f"contact {name!r}: f_max must be finite and >= f_min ({f_min}), got {f_max}")


@dataclass
class PointContact:
    """A point foot: 3-D ground reaction force at ``frame``'s origin (see the module doc)."""

    frame: str
    mu: float = 0.7
    facets: int = 4
    normal: tuple[float, float, float] | np.ndarray = (0.0, 0.0, 1.0)
    f_min: float = 0.0
    f_max: float = DEFAULT_MAX_NORMAL_FORCE
    name: str = ""
    kp: float = 0.0  # 1/s^2: feedback on the drift from the anchor (module doc)
    kd: float = 0.0  # 1/s: feedback on the contact point's velocity
    dim: int = field(default=3, init=False)
    moving_cone = False  # D of force_inequalities is fixed in world axes
    force_regularization = 0.0  # (surface contacts only: module doc)

    def __post_init__(self) -> None:
        self.name = self.name or self.frame
        _check_common(self.name, self.mu, self.f_min, self.f_max)
        _check_gains(self.name, self.kp, self.kd)
        if not (isinstance(self.facets, int) and self.facets >= MIN_FACETS):
            raise ValueError(f"contact {self.name!r}: facets must be an integer >= 3, got {self.facets!r}")
        self.normal = as_unit_axis(self.normal)
        basis = _tangent_basis(self.normal)
        self._D = np.vstack([_friction_pyramid(self.mu, self.facets) @ basis, self.normal])  # on world forces
        self._lower = np.full(self.facets + 1, -np.inf)
        self._upper = np.zeros(self.facets + 1)

    def motion_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        """``(J_c, -Jdot_c v)``: the contact point's acceleration rows (3 x nv) and their right side."""
        return ev.jacobian(self.frame)[:3], -ev.bias_acceleration(self.frame)[:3]

    @property
    def has_feedback(self) -> bool:
        return self.kp > 0.0 or self.kd > 0.0

    def feedback(self, ev: Evaluation, anchor: np.ndarray) -> np.ndarray:
        """``-kp e_c - kd J_c v``: what the feedback adds to the motion rows' right side (3 entries)."""
        velocity = ev.jacobian(self.frame)[:3] @ ev.v
        result: np.ndarray = -self.kp * (ev.placement(self.frame)[:3, 3] - anchor[:3, 3]) - self.kd * velocity
        return result

    def normal_force(self, ev: Evaluation, f: np.ndarray) -> float:
        return float(self.normal @ f)

    @property
    def cone_rows(self) -> int:
        """Rows of ``force_inequalities``: the facets, then the normal force."""
        return self.facets + 1

    def cone(self, ev: Evaluation) -> np.ndarray:
        """``D`` of ``force_inequalities`` (constant: ``moving_cone`` is False)."""
        return self._D

    def force_inequalities(self, ev: Evaluation, f_upper: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(D, lower, upper)`` with ``lower <= D f <= upper``: the pyramid (``D f <= 0``) and the normal
        force in ``[min(f_min, f_upper), f_upper]`` (the last row)."""
        lower, upper = self._lower.copy(), self._upper.copy()
        lower[-1], upper[-1] = min(self.f_min, f_upper), f_upper
        return self._D, lower, upper


@dataclass
class SurfaceContact:
    """A sole or a grasp: 6-D wrench at ``frame``'s origin, normal along the frame's z (module doc)."""

    frame: str
    half_length: float
    half_width: float
    mu: float = 0.7
    f_min: float = 0.0
    f_max: float = DEFAULT_MAX_NORMAL_FORCE
    name: str = ""
    kp: float = SURFACE_FREQUENCY**2  # 1/s^2: feedback on the drift from the anchor, position and orientation
    kd: float = 2.0 * SURFACE_FREQUENCY  # 1/s: feedback on the sole's twist
    force_regularization: float = SURFACE_REGULARIZATION  # weight of |wrench / (m g)|^2 (module doc)
    dim: int = field(default=6, init=False)
    moving_cone = True  # D of force_inequalities turns with the sole

    def __post_init__(self) -> None:
        self.name = self.name or self.frame
        _check_common(self.name, self.mu, self.f_min, self.f_max)
        _check_gains(self.name, self.kp, self.kd)
        c = self.force_regularization
        if not (isinstance(c, (int, float)) and math.isfinite(c) and c >= 0.0):
            raise ValueError(f"contact {self.name!r}: force_regularization must be a finite number >= 0 "
                             f"(0 turns it off), got {c!r}")
        for side in ("half_length", "half_width"):
            value = getattr(self, side)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"contact {self.name!r}: {side} must be finite and > 0, got {value}")
        self._local_cone = _wrench_cone(self.mu * math.cos(math.pi / 4), self.half_length, self.half_width)

    def motion_rows(self, ev: Evaluation) -> tuple[np.ndarray, np.ndarray]:
        """``(J_c, -Jdot_c v)``: the sole's linear and angular acceleration rows (6 x nv)."""
        return ev.jacobian(self.frame), -ev.bias_acceleration(self.frame)

    @property
    def has_feedback(self) -> bool:
        return self.kp > 0.0 or self.kd > 0.0

    def feedback(self, ev: Evaluation, anchor: np.ndarray) -> np.ndarray:
        """``-kp e_c - kd J_c v``: what the feedback adds to the motion rows' right side (6 entries)."""
        T = ev.placement(self.frame)
        drift = np.empty(6)
        drift[:3] = T[:3, 3] - anchor[:3, 3]
        drift[3:] = rotation_log(T[:3, :3] @ anchor[:3, :3].T)
        result: np.ndarray = -self.kp * drift - self.kd * (ev.jacobian(self.frame) @ ev.v)
        return result

    def normal_force(self, ev: Evaluation, f: np.ndarray) -> float:
        return float(ev.placement(self.frame)[:3, 2] @ f[:3])

    @property
    def cone_rows(self) -> int:
        """Rows of ``force_inequalities``: the wrench cone, then the normal force."""
        result: int = self._local_cone.shape[0] + 1
        return result

    def cone(self, ev: Evaluation) -> np.ndarray:
        """``D`` of ``force_inequalities``: the sole-frame rows on the world wrench."""
        C = ev.placement(self.frame)[:3, :3]
        to_local = np.zeros((6, 6))
        to_local[:3, :3] = to_local[3:, 3:] = C.T
        return np.vstack([self._local_cone, np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])]) @ to_local

    def force_inequalities(self, ev: Evaluation, f_upper: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(D, lower, upper)`` on the world wrench: the sole-frame wrench cone (``D w <= 0``) and the normal
        force in ``[min(f_min, f_upper), f_upper]`` (the last row)."""
        rows = self._local_cone.shape[0]
        lower = np.concatenate([np.full(rows, -np.inf), [min(self.f_min, f_upper)]])
        upper = np.concatenate([np.zeros(rows), [f_upper]])
        return self.cone(ev), lower, upper


def _wrench_cone(mu: float, X: float, Y: float) -> np.ndarray:
    """Rows ``U``, ``U w <= 0`` for the local wrench ``w = [fx fy fz tx ty tz]`` (Caron et al. 2015, §III).

    Corner forces in the pyramid ``|fx|, |fy| <= mu fz`` at ``(+-X, +-Y, 0)``: friction (4 rows), centre
    of pressure ``|tx| <= Y fz``, ``|ty| <= X fz`` (4 rows), and the yaw bounds ``tz_min <= tz <= tz_max``
    with ``tz_min = -mu (X + Y) fz + |Y fx - mu tx| + |X fy - mu ty|`` and ``tz_max = mu (X + Y) fz -
    |Y fx + mu tx| - |X fy + mu ty|`` (8 rows, the absolute values expanded).
    """
    rows = [
        [1, 0, -mu, 0, 0, 0], [-1, 0, -mu, 0, 0, 0], [0, 1, -mu, 0, 0, 0], [0, -1, -mu, 0, 0, 0],
        [0, 0, -Y, 1, 0, 0], [0, 0, -Y, -1, 0, 0], [0, 0, -X, 0, 1, 0], [0, 0, -X, 0, -1, 0],
    ]
    for s1 in (1, -1):
        for s2 in (1, -1):
            # tz >= -mu (X+Y) fz + s1 (Y fx - mu tx) + s2 (X fy - mu ty)
            rows.append([s1 * Y, s2 * X, -mu * (X + Y), -s1 * mu, -s2 * mu, -1])
            # tz <= mu (X+Y) fz - s1 (Y fx + mu tx) - s2 (X fy + mu ty)
            rows.append([s1 * Y, s2 * X, -mu * (X + Y), s1 * mu, s2 * mu, 1])
    return np.array(rows, dtype=float)


Contact = PointContact | SurfaceContact
