"""Joint-space control laws (Robot Dynamics lecture notes (ETH), §3.8.1; Robot Dynamics Essential, §3.6.2).

- ``pd``: joint impedance regulation (3.72), ``tau = kp (q* - q) + kd (v* - v)``; at rest it settles where
  ``kp (q* - q) = g(q)`` (3.73), a steady-state error.
- ``pd_gravity``: PD + gravity compensation (3.74), ``tau = kp (q* - q) + kd (v* - v) + g(q)``; zero
  steady-state error for a set point (Robot Dynamics Essential, (83), LaSalle).
- ``computed_torque``: inverse-dynamics control (3.75)-(3.77), ``tau = M qdd* + h`` with
  ``qdd* = a_ref + kp (q* - q) + kd (v* - v)`` (``h = b + g``; the feed-forward ``a_ref`` is Robot Dynamics
  Essential, (84)). On the model it gives ``qdd = qdd*``: the error ``e = q* - q`` obeys ``e'' + kd e' + kp e
  = 0`` (Robot Dynamics Essential, (85)).
- ``gains_from_frequency``: gain design (3.78)-(3.79), ``omega = sqrt(kp)``, ``D = kd / (2 sqrt(kp))``.

Every law reads one ``Evaluation`` (q, v, M, h, g of the tick) and returns the torques of the actuated
joints. Gains are a scalar or one value per actuated joint. Position errors are plain differences
``q* - q`` (continuous joints are unbounded angles, docs/conventions.md).

Floating base (``nq = nv + 1``): the laws act on the joints, ``q[7:]`` and ``v[6:]``, with the joint rows of
``M``, ``h`` and ``g`` at zero base acceleration: exact for a base that is held (a legged robot on a stand or
gantry). With contact forces carrying the base, the torques also depend on those forces: that is the
whole-body QP's job (``kinodyn.control.wbc``), not these laws'.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control._inputs import gain
from kinodyn.spatial.rotations import as_vector

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.evaluation import Evaluation


def gains_from_frequency(natural_frequency: float, damping_ratio: float = 1.0) -> tuple[float, float]:
    """``(kp, kd)`` of a unit-mass joint with eigenfrequency ``omega`` [rad/s] and damping ratio ``D``:
    ``kp = omega^2``, ``kd = 2 D omega`` (inverse of (3.78)-(3.79); ``D = 1`` is critical damping)."""
    if not (math.isfinite(natural_frequency) and natural_frequency > 0.0):
        raise ValueError(f"natural_frequency must be finite and > 0 [rad/s], got {natural_frequency}")
    if not (math.isfinite(damping_ratio) and damping_ratio >= 0.0):
        raise ValueError(f"damping_ratio must be finite and >= 0, got {damping_ratio}")
    return natural_frequency**2, 2.0 * damping_ratio * natural_frequency


def actuated(ev: Evaluation) -> slice:
    """The joints' slice of the velocity space: ``[6:]`` for a floating base (``nq = nv + 1``), else all."""
    return slice(6, None) if ev.q.size == ev.v.size + 1 else slice(0, None)


def pd(ev: Evaluation, q_ref: ArrayLike, kp: ArrayLike, kd: ArrayLike,
       v_ref: ArrayLike | None = None) -> np.ndarray:
    """Joint impedance (3.72): ``kp (q* - q) + kd (v* - v)``; ``v_ref`` ``None`` means zero."""
    return _pd_terms(ev, q_ref, v_ref, kp, kd)[0]


def pd_gravity(ev: Evaluation, q_ref: ArrayLike, kp: ArrayLike, kd: ArrayLike,
               v_ref: ArrayLike | None = None) -> np.ndarray:
    """PD + gravity compensation (3.74): ``kp (q* - q) + kd (v* - v) + g(q)``."""
    result: np.ndarray = _pd_terms(ev, q_ref, v_ref, kp, kd)[0] + ev.gravity_torques[actuated(ev)]
    return result


def computed_torque(ev: Evaluation, q_ref: ArrayLike, kp: ArrayLike, kd: ArrayLike,
                    v_ref: ArrayLike | None = None, a_ref: ArrayLike | None = None) -> np.ndarray:
    """Inverse-dynamics control (3.75)-(3.77): ``M qdd* + h``, ``qdd* = a_ref + kp (q* - q) + kd (v* - v)``;
    ``None`` references mean zero."""
    qdd_star, j = _pd_terms(ev, q_ref, v_ref, kp, kd)
    n = qdd_star.size
    if a_ref is not None:
        qdd_star = qdd_star + as_vector(a_ref, n, "a_ref")
    result: np.ndarray = ev.mass_matrix[j, j] @ qdd_star + ev.nonlinear_effects[j]
    return result


def _pd_terms(ev: Evaluation, q_ref: ArrayLike, v_ref: ArrayLike | None, kp: ArrayLike,
              kd: ArrayLike) -> tuple[np.ndarray, slice]:
    """``kp (q* - q) + kd (v* - v)`` over the actuated joints, and their velocity slice."""
    j = actuated(ev)
    v = ev.v[j]
    n = v.size
    q = ev.q[ev.q.size - n:]
    v_ref = np.zeros(n) if v_ref is None else as_vector(v_ref, n, "v_ref")
    return gain(kp, n, "kp") * (as_vector(q_ref, n, "q_ref") - q) + gain(kd, n, "kd") * (v_ref - v), j
