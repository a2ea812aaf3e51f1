"""Error-state EKF of the IMU navigation state with the feet in contact in the state (Robot Dynamics
Essential, §5.2-§5.3).

Nominal state: ``p, v`` (world) of the IMU origin, ``C = C_WI``, biases ``b_a, b_g`` (IMU frame), one world
position ``d_k`` per foot in contact (Bloesch et al. 2012). Error ``[dp, dv, dtheta, db_a, db_g, dd_1..dd_K]``
with the local orientation error ``C_true = C Exp(dtheta)`` (Robot Dynamics Essential, (109)).

- propagate: exact nominal step (110), ``P <- F P F^T + Q`` with F (111) extended by identity foot blocks and
  Q from the continuous densities (Solà 2017 §5.4.3, docs/estimation.md "ESKF");
- update_contacts: lift-off marginalises a foot (its rows and columns are dropped); a foot in contact is
  corrected by the stance relation ``0 = d - p - C r`` (Robot Dynamics Essential, §5.3) unless its own NIS
  exceeds the chi-square gate; the applied feet go through one Joseph-form update (113) and the reset
  (injection, ``P <- G P G^T``); a touchdown appends ``d = p + C r`` with the covariance of that expression
  (from P and the measurement covariance), which adds no information to the rest of the state;
- observability constraint (OC-EKF; Bloesch et al. 2013, "State estimation for legged robots on unstable and
  slippery terrain", IROS; Hesch et al. 2014, "Consistency analysis and improvement of vision-aided inertial
  navigation", IEEE T-RO 30(1) / Huang, Mourikis, Roumeliotis 2010 on EKF inconsistency): the absolute
  position and the yaw about gravity are unobservable, but F and H linearised at estimates that change at
  every update make the yaw look observable, so P's yaw (and then x/y) shrinks without information.
  The yaw direction ``N = [e x p; e x v; C^T e; 0; 0; e x d_k]`` is taken at the last prior (the nominal
  after propagation); F is changed least so that it maps N at one prior onto N at the next, and each H
  least so that ``H N = 0`` (the feet's parts of N fixed at touchdown). Position directions need nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from kinodyn.estimation.consistency import nees
from kinodyn.estimation.filter import (
    CopiedArray,
    FilterArrays,
    FootMeasurement,
    GateParameters,
    LeggedFilter,
    navigation_block,
    symmetric_part_into,
)
from kinodyn.estimation.kalman import matmul, sparse_product, stance_update
from kinodyn.estimation.layout import BA_, BG_, NAV, P_, TH_, V_
from kinodyn.estimation.registry import FilterKernels, register_filter
from kinodyn.spatial.compiled import skew as skew_into
from kinodyn.spatial.compiled import so3_exp as so3_exp_into
from kinodyn.spatial.lie import so3_log
from kinodyn.spatial.rotations import FloatArray, as_rotation_matrix, as_vector, skew

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from kinodyn.estimation.noise import NoiseParameters

# ----------------------------------------------------------------------------------------- compiled steps


@njit(cache=True)
def transition(C: np.ndarray, specific_force: np.ndarray, rate: np.ndarray, dt: float, F: np.ndarray) -> None:
    """15x15 error transition of one step (Robot Dynamics Essential, (111)), with the exact ``F_thth = Exp(w
    dt)^T`` (Solà 2017 §5.4.3; (111) has its first-order ``I - [w]x dt``); ``specific_force = a_m - b_a``,
    ``rate = w_m - b_g``, C the nominal at the step's start."""
    F[:, :] = 0.0
    for i in range(NAV):
        F[i, i] = 1.0
    Sf = np.empty((3, 3))
    skew_into(specific_force, Sf)
    phi = rate * dt
    E = np.empty((3, 3))
    so3_exp_into(phi, E)
    for i in range(3):
        F[P_ + i, V_ + i] = dt
        F[TH_ + i, BG_ + i] = -dt
        for j in range(3):
            F[V_ + i, TH_ + j] = -dt * (C[i, 0] * Sf[0, j] + C[i, 1] * Sf[1, j] + C[i, 2] * Sf[2, j])
            F[V_ + i, BA_ + j] = -dt * C[i, j]
            F[TH_ + i, TH_ + j] = E[j, i]


@njit(cache=True)
def _constrain_rows(A: np.ndarray, u: np.ndarray, w: np.ndarray) -> None:
    """``A <- A - (A u - w) u^T`` for a unit ``u``: the smallest change of A (Frobenius) with ``A u = w``
    (Hesch et al. 2014, IJRR 33(1), eq. 40)."""
    for i in range(3):
        r = A[i, 0] * u[0] + A[i, 1] * u[1] + A[i, 2] * u[2] - w[i]
        for j in range(3):
            A[i, j] -= r * u[j]


@njit(cache=True)
def _cross_up(x: np.ndarray) -> np.ndarray:
    """``e_z x x``: the world-yaw direction of a world point or velocity ``x``."""
    return np.array([-x[1], x[0], 0.0])


@njit(cache=True)
def constrain_transition(
    F: np.ndarray, C_new: np.ndarray, p_new: np.ndarray, v_new: np.ndarray, prior_C: np.ndarray,
    prior_p: np.ndarray, prior_v: np.ndarray, dt: float,
) -> None:
    """Observability constraint of the transition (OC-EKF: Hesch et al. 2014 §V-B; Bloesch et al. 2013 for
    legged robots): F maps the unobservable yaw direction at the last prior ``(prior_C, prior_p, prior_v)``,
    ``[e x p; e x v; C^T e; 0; 0]`` (e = world up, local angle error), onto the one at the new prior
    ``(C_new, p_new, v_new)``: ``F_thth = C_new^T prior_C``, and ``F_vth``, ``F_pth`` changed least so that
    their rows agree (the position directions ``[I; 0; 0; 0; 0; I..]`` are kept by any F of this form)."""
    u = np.ascontiguousarray(prior_C[2])  # prior_C^T e
    F[TH_ : TH_ + 3, TH_ : TH_ + 3] = C_new.T @ prior_C
    A = np.ascontiguousarray(F[V_ : V_ + 3, TH_ : TH_ + 3])
    _constrain_rows(A, u, _cross_up(v_new - prior_v))
    F[V_ : V_ + 3, TH_ : TH_ + 3] = A
    A = np.ascontiguousarray(F[P_ : P_ + 3, TH_ : TH_ + 3])
    _constrain_rows(A, u, _cross_up(p_new - prior_p - prior_v * dt))
    F[P_ : P_ + 3, TH_ : TH_ + 3] = A


@njit(cache=True)
def propagate(  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
    C: np.ndarray,
    p: np.ndarray,
    v: np.ndarray,
    P: np.ndarray,
    specific_force: np.ndarray,
    rate: np.ndarray,
    dt: float,
    gravity: np.ndarray,
    q_nav: np.ndarray,
    q_foot: float,
    F: np.ndarray,
    constrain: bool,
    prior_C: np.ndarray,
    prior_p: np.ndarray,
    prior_v: np.ndarray,
) -> None:
    """One IMU step: ``P <- F P F^T + Q`` (Robot Dynamics Essential, (112), F of ``transition`` into ``F``, Q
    diagonal: ``q_nav`` (15) then ``q_foot`` per foot), then the exact nominal step (110) of C, p, v. With
    ``constrain``, F is ``constrain_transition``'s; either way the new nominal becomes the prior
    ``prior_C, prior_p, prior_v`` (the linearisation point of the next update's constraint)."""
    n = P.shape[0]
    transition(C, specific_force, rate, dt, F)
    a = C @ specific_force + gravity
    E = np.empty((3, 3))
    so3_exp_into(rate * dt, E)
    C_new = C @ E
    p_new = p + (v * dt + 0.5 * a * dt * dt)
    v_new = v + a * dt
    if constrain:
        constrain_transition(F, C_new, p_new, v_new, prior_C, prior_p, prior_v, dt)
    # rows: B = F P[:15, :]; columns: P[:15, :15] = B[:, :15] F^T, P[:15, 15:] = B[:, 15:] and its transpose
    B = sparse_product(F, P)
    P[:NAV, :NAV] = matmul(B[:, :NAV], F.T)
    for i in range(NAV):
        for j in range(NAV, n):
            P[i, j] = B[i, j]
            P[j, i] = B[i, j]
    for i in range(NAV):
        P[i, i] += q_nav[i]
    for i in range(NAV, n):
        P[i, i] += q_foot
    p[:] = p_new
    v[:] = v_new
    C[:, :] = C_new
    prior_C[:, :] = C_new
    prior_p[:] = p_new
    prior_v[:] = v_new


@njit(cache=True)
def propagate_readings(  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
    C: np.ndarray, p: np.ndarray, v: np.ndarray, biases: np.ndarray, P: np.ndarray, w_m: np.ndarray,
    a_m: np.ndarray, dt: float, accelerometer_variance: float, gyroscope_variance: float,
    densities: np.ndarray, foot_density: float, gravity: np.ndarray, F: np.ndarray, q_nav: np.ndarray,
    constrain: bool, prior_C: np.ndarray, prior_p: np.ndarray, prior_v: np.ndarray,
) -> None:
    """``propagate`` from the raw readings ``w_m``, ``a_m`` (IMU frame; ``biases`` = ``[b_a, b_g]``): Q's
    diagonal ``densities * dt`` (15) plus ``variance * dt^2`` of a reading error constant over the step
    on the velocity and angle blocks (``ErrorStateEKF.propagate``), ``foot_density * dt`` per foot."""
    for i in range(NAV):
        q_nav[i] = densities[i] * dt
    if accelerometer_variance != 0.0 or gyroscope_variance != 0.0:
        for i in range(3):
            q_nav[V_ + i] += accelerometer_variance * dt * dt
            q_nav[TH_ + i] += gyroscope_variance * dt * dt
    propagate(C, p, v, P, a_m - biases[:3], w_m - biases[3:], dt, gravity, q_nav, foot_density * dt, F,
              constrain, prior_C, prior_p, prior_v)


class EskfState(NamedTuple):
    """The compiled state of ``ErrorStateEKF`` (registry module doc; its arrays are the filter's, worked on in
    place): the common fields, then the last transition ``F`` and Q diagonal ``q_nav`` (scratch), the
    densities of Q (``densities`` per navigation error, ``foot_density``), ``gravity`` (3), and the
    observability constraint: ``constrain``, the last prior ``prior_rotation, prior_p, prior_v`` and the
    feet's parts of the yaw direction ``null_feet`` (K x 3)."""

    core: FilterArrays
    F: np.ndarray
    q_nav: np.ndarray
    densities: np.ndarray
    foot_density: float
    gravity: np.ndarray
    constrain: bool
    prior_rotation: np.ndarray
    prior_p: np.ndarray
    prior_v: np.ndarray
    null_feet: np.ndarray


@njit(cache=True)
def propagate_state(s: EskfState, w_m: np.ndarray, a_m: np.ndarray, dt: float, accelerometer_variance: float,
                    gyroscope_variance: float) -> None:
    """``propagate_readings`` on the filter's state (registry ``propagate``)."""
    c = s.core
    propagate_readings(c.C, c.p, c.v, c.biases, c.P, w_m, a_m, dt, accelerometer_variance, gyroscope_variance,
                       s.densities, s.foot_density, s.gravity, s.F, s.q_nav, s.constrain, s.prior_rotation,
                       s.prior_p, s.prior_v)


@njit(cache=True)
def stance_angle_block(C: np.ndarray, r: np.ndarray, A: np.ndarray) -> None:
    """``A = C [r]x``: dh/ddtheta of the stance relation ``h = d - p - C r`` of a foot measured at ``r`` (IMU
    frame; Robot Dynamics Essential, §5.3), the angle block of its Jacobian (``kalman`` module doc)."""
    Sr = np.empty((3, 3))
    skew_into(r, Sr)
    A[:, :] = C @ Sr


@njit(cache=True)
def correct_state(s: EskfState, positions: np.ndarray, covariances: np.ndarray, accepted: np.ndarray,
                  nis_feet: np.ndarray) -> float:
    """Stance update of every foot in the state, in state order (registry ``correct``; Robot Dynamics
    Essential, (113) and §5.3): ``kalman.stance_update`` with H's angle block ``A = C [r]x`` (dh/ddtheta of
    ``h = d - p - C r``), then the reset: injection (``C <- C Exp(dtheta)``) and ``P <- G P G^T``,
    ``G_thth = I - [dtheta/2]x`` (Solà 2017 §6.3). With ``constrain`` (OC-EKF, Hesch et al. 2014 §V-C) each
    A is changed least so that ``H N = 0`` for the yaw direction N at the last prior (``prior_rotation``,
    ``prior_p``; the feet's parts ``null_feet``, fixed at touchdown): the update gives no information about
    yaw (the position directions are annihilated by any H of this form)."""
    c = s.core
    C, P = c.C, c.P
    m = positions.shape[0]
    A = np.empty((m, 3, 3))
    u = np.ascontiguousarray(s.prior_rotation[2])
    up = _cross_up(s.prior_p)
    for k in range(m):
        stance_angle_block(C, positions[k], A[k])
        if s.constrain:
            _constrain_rows(A[k], u, up - s.null_feet[k])
    nis, dx, Pn = stance_update(C, c.p, c.feet, P, positions, covariances, A, c.gate, accepted, nis_feet)
    if dx.shape[0] == 0:
        return nis
    # reset: injection and P <- G P G^T
    dth = dx[TH_ : TH_ + 3]
    G = np.empty((3, 3))
    skew_into(0.5 * dth, G)
    for i in range(3):
        for j in range(3):
            G[i, j] = -G[i, j]
        G[i, i] += 1.0
    rows_th = G @ Pn[TH_ : TH_ + 3]
    Pn[TH_ : TH_ + 3] = rows_th
    cols_th = np.ascontiguousarray(Pn[:, TH_ : TH_ + 3]) @ G.T
    Pn[:, TH_ : TH_ + 3] = cols_th
    symmetric_part_into(Pn, P)
    for i in range(3):
        c.p[i] += dx[P_ + i]
        c.v[i] += dx[V_ + i]
    for i in range(6):
        c.biases[i] += dx[BA_ + i]
    for f in range(c.feet.shape[0]):
        for i in range(3):
            c.feet[f, i] += dx[NAV + 3 * f + i]
    E = np.empty((3, 3))
    so3_exp_into(np.ascontiguousarray(dth), E)
    C[:, :] = C @ E
    return nis


@dataclass(frozen=True)
class EskfParameters(GateParameters):
    """``ErrorStateEKF``'s settings: ``gate_probability`` (``GateParameters``) and
    ``observability_constrained``: the OC-EKF (module doc; False: the plain EKF, over-confident in yaw)."""

    observability_constrained: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.observability_constrained, (bool, np.bool_)):
            raise ValueError(f"parameter observability_constrained must be a bool, got "
                             f"{self.observability_constrained!r}")
        object.__setattr__(self, "observability_constrained", bool(self.observability_constrained))


@register_filter("eskf")
class ErrorStateEKF(LeggedFilter):
    """The error-state EKF (a ``LeggedFilter``); ``gravity`` is the magnitude of g along world -z (m/s^2);
    ``gate_probability`` and ``observability_constrained`` are its ``EskfParameters``: the per-foot chi-square
    gate of the stance update and the OC-EKF (default; module doc): no update gives information about the yaw;
    False is the plain EKF, whose linearisation at changing estimates makes yaw look observable
    (over-confident)."""

    Parameters = EskfParameters
    KERNELS = FilterKernels(EskfState, propagate_state, correct_state, navigation_block)

    def __init__(
        self, noise: NoiseParameters | None = None, gravity: float = 9.81,
        gate_probability: float = EskfParameters.gate_probability,
        observability_constrained: bool = EskfParameters.observability_constrained,
    ) -> None:
        parameters = EskfParameters(gate_probability, observability_constrained)
        self._gravity = self._configure(parameters, noise, gravity)
        self.observability_constrained = parameters.observability_constrained
        n = self.noise
        self._densities = np.repeat(
            [
                0.0,
                n.accelerometer_noise_density**2,
                n.gyroscope_noise_density**2,
                n.accelerometer_random_walk**2,
                n.gyroscope_random_walk**2,
            ],
            3,
        )
        self._foot_density = n.foot_random_walk**2
        self._q_nav = np.zeros(NAV)
        self._F = np.zeros((NAV, NAV))
        self._start_uninitialized()

    def _start(self, covariance: FloatArray) -> None:
        """P is the covariance as given (the ESKF's error is the convention)."""
        self._P = covariance
        # OC-EKF linearisation point: the last prior (nominal after propagation) and each foot's part of the
        # yaw direction, fixed at touchdown (constrain_transition, correct_state)
        self._prior_C, self._prior_p, self._prior_v = self._C.copy(), self._p.copy(), self._v.copy()
        self._null_feet = np.zeros((0, 3))

    def _sync(self) -> None:
        """The compiled state over the current arrays (after any of them was replaced)."""
        self._state = EskfState(self._core(), self._F, self._q_nav, self._densities, self._foot_density,
                                self._gravity, self.observability_constrained, self._prior_C, self._prior_p,
                                self._prior_v, self._null_feet)

    def _remove(self, names: Sequence[str]) -> None:
        """``LeggedFilter._remove``, and the feet's parts of the yaw direction."""
        self._null_feet = self._null_feet[np.array([name not in names for name in self._names], dtype=bool)]
        super()._remove(names)

    def _append(self, foot: FootMeasurement) -> None:
        """Augment the state with ``d = p + C r``: ``J = dd/ddx = [I, 0, -C[r]x, 0, 0, 0..]``, so
        ``P_dx = J P`` and ``P_dd = J P J^T + C N C^T``; the foot's part of the yaw direction is J applied to
        the prior's, ``e x p + J_th C_prior^T e``."""
        n = self._P.shape[0]
        J = np.zeros((3, n))
        J[:, 0:3] = np.eye(3)
        J[:, 6:9] = -self._C @ skew(foot.position)
        up = np.array([-self._prior_p[1], self._prior_p[0], 0.0])
        self._null_feet = np.vstack([self._null_feet, up + J[:, 6:9] @ self._prior_C[2]])
        JP = J @ self._P
        P_dd = JP @ J.T + self._C @ foot.covariance @ self._C.T
        P = np.empty((n + 3, n + 3))
        P[:n, :n] = self._P
        P[n:, :n] = JP
        P[:n, n:] = JP.T
        P[n:, n:] = 0.5 * (P_dd + P_dd.T)
        self._P = P
        self._feet = np.vstack([self._feet, self._p + self._C @ foot.position])
        self._names.append(foot.name)
        self._sync()

    transition_matrix = CopiedArray("_F")  # the 15x15 navigation block of the last propagation's F

    def nees(self, position: ArrayLike, velocity: ArrayLike, rotation: ArrayLike) -> float:
        """``LeggedFilter.nees`` of the local error ``[dp, dv, dtheta]``."""
        error = np.concatenate(
            [
                as_vector(position, 3, "position") - self._p,
                as_vector(velocity, 3, "velocity") - self._v,
                so3_log(self._C.T @ as_rotation_matrix(rotation)),
            ]
        )
        return nees(error, self._P[:9, :9])
