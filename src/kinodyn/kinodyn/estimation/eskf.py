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

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from kinodyn.estimation.consistency import gate, nees
from kinodyn.estimation.filter import (
    FilterState,
    FootMeasurement,
    GateParameters,
    call_kernel,
    checked_input_variance,
    initial_covariance,
    symmetric_part_into,
)
from kinodyn.estimation.noise import NoiseParameters
from kinodyn.estimation.registry import FilterKernels, register_filter
from kinodyn.spatial.compiled import skew as skew_into
from kinodyn.spatial.compiled import so3_exp as so3_exp_into
from kinodyn.spatial.lie import so3_log
from kinodyn.spatial.rotations import FloatArray, as_rotation_matrix, skew

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

# ----------------------------------------------------------------------------------------- compiled steps
NAV = 15
"""Size of the navigation error ``[dp, dv, dtheta, db_a, db_g]``."""
P_, V_, TH_, BA_, BG_ = 0, 3, 6, 9, 12
"""First index of each navigation block."""


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
    # rows: B = F P[:15, :]
    B = np.zeros((NAV, n))
    for i in range(NAV):
        for k in range(NAV):
            f = F[i, k]
            if f != 0.0:
                for j in range(n):
                    B[i, j] += f * P[k, j]
    # columns: P[:15, :15] = B[:, :15] F^T, P[:15, 15:] = B[:, 15:] and its transpose
    for i in range(NAV):
        for j in range(NAV):
            s = 0.0
            for k in range(NAV):
                s += B[i, k] * F[j, k]
            P[i, j] = s
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


@njit(cache=True)
def _stance_rows(
    C: np.ndarray, P: np.ndarray, slot: int, r: np.ndarray, HP: np.ndarray, A: np.ndarray,
    constrain: bool, u: np.ndarray, w: np.ndarray,
) -> None:
    """``HP = H P`` (3 x n) of the stance relation ``h = d - p - C r`` (Robot Dynamics Essential, §5.3: dh/ddp
    = -I, dh/ddtheta = C [r]x = A, dh/ddd = I), for the foot in state slot ``slot``. With ``constrain``, A is
    changed least so that ``A u = w`` (OC-EKF: H annihilates the yaw direction, ``u`` its angle part,
    ``w`` = its position part minus the foot's)."""
    Sr = np.empty((3, 3))
    skew_into(r, Sr)
    A[:, :] = C @ Sr
    if constrain:
        _constrain_rows(A, u, w)
    d0 = NAV + 3 * slot
    n = P.shape[0]
    for i in range(3):
        for j in range(n):
            HP[i, j] = (
                P[d0 + i, j]
                - P[P_ + i, j]
                + A[i, 0] * P[TH_, j]
                + A[i, 1] * P[TH_ + 1, j]
                + A[i, 2] * P[TH_ + 2, j]
            )


@njit(cache=True)
def _times_h_transpose(M: np.ndarray, slot: int, A: np.ndarray, out: np.ndarray, col: int) -> None:
    """``out[:, col:col+3] = M H^T`` for the stance Jacobian H of the foot in ``slot`` (A = C [r]x)."""
    d0 = NAV + 3 * slot
    for i in range(M.shape[0]):
        for j in range(3):
            out[i, col + j] = (
                M[i, d0 + j]
                - M[i, P_ + j]
                + M[i, TH_] * A[j, 0]
                + M[i, TH_ + 1] * A[j, 1]
                + M[i, TH_ + 2] * A[j, 2]
            )


@njit(cache=True)
def update(  # noqa: PLR0913, PLR0915, PLR0917  (flat arrays for a compiled kernel, one compiled pass)
    C: np.ndarray,
    p: np.ndarray,
    v: np.ndarray,
    biases: np.ndarray,
    feet: np.ndarray,
    P: np.ndarray,
    slots: np.ndarray,
    positions: np.ndarray,
    covariances: np.ndarray,
    gate: float,
    used: np.ndarray,
    nis_feet: np.ndarray,
    constrain: bool,
    prior_C: np.ndarray,
    prior_p: np.ndarray,
    null_feet: np.ndarray,
) -> float:
    """Stance update of the feet in state ``slots`` measured at ``positions`` (IMU frame, covariances
    likewise), Robot Dynamics Essential, (113) and §5.3: innovation ``nu = 0 - h = p + C r - d``; a foot whose
    own 3-dof NIS (into ``nis_feet``) exceeds ``gate`` is left out (``used`` False); the others are applied
    together, P by the Joseph form ``(I-KH) P (I-KH)^T + K N K^T`` using H's sparsity; then the reset:
    injection (``C <- C Exp(dtheta)``) and ``P <- G P G^T``, ``G_thth = I - [dtheta/2]x`` (Solà 2017 §6.3).
    ``biases`` = ``[b_a, b_g]`` (6). With ``constrain`` (OC-EKF, Hesch et al. 2014 §V-C) each foot's H is
    changed least so that ``H N = 0`` for the yaw direction N at the last prior (``prior_C``, ``prior_p``;
    the feet's parts ``null_feet``, fixed at touchdown): the update gives no information about yaw (the
    position directions are annihilated by any H of this form). Returns the stacked NIS (nan if no foot
    is used)."""
    n = P.shape[0]
    m = slots.shape[0]
    HP_all = np.empty((m, 3, n))
    A_all = np.empty((m, 3, 3))
    N_w = np.empty((m, 3, 3))
    nu_all = np.empty((m, 3))
    S1 = np.empty((3, 3))
    u = np.ascontiguousarray(prior_C[2])
    up = _cross_up(prior_p)
    for k in range(m):
        _stance_rows(C, P, slots[k], positions[k], HP_all[k], A_all[k], constrain, u,
                     up - null_feet[slots[k]])
        N_w[k] = C @ covariances[k] @ C.T
        nu_all[k] = p + C @ positions[k] - feet[slots[k]]
        _times_h_transpose(HP_all[k], slots[k], A_all[k], S1, 0)
        S1 += N_w[k]
        nis_feet[k] = nu_all[k] @ np.linalg.solve(S1, nu_all[k])
        used[k] = nis_feet[k] <= gate
    count = 0
    for k in range(m):
        if used[k]:
            count += 1
    if count == 0:
        return np.nan
    rows = 3 * count
    HP = np.empty((rows, n))
    nu = np.empty(rows)
    Nm = np.zeros((rows, rows))
    order = np.empty(count, dtype=np.int64)
    c = 0
    for k in range(m):
        if used[k]:
            order[c] = k
            HP[3 * c : 3 * c + 3] = HP_all[k]
            nu[3 * c : 3 * c + 3] = nu_all[k]
            Nm[3 * c : 3 * c + 3, 3 * c : 3 * c + 3] = N_w[k]
            c += 1
    S = np.empty((rows, rows))
    for c in range(count):
        k = order[c]
        _times_h_transpose(HP, slots[k], A_all[k], S, 3 * c)
    S += Nm
    S = 0.5 * (S + S.T)
    L = np.linalg.cholesky(S)
    # K^T = S^-1 H P via the Cholesky factor
    Y = np.linalg.solve(L, HP)
    Kt = np.linalg.solve(L.T, Y)
    w = np.linalg.solve(L, nu)
    nis = float(w @ w)
    dx = Kt.T @ nu
    # Joseph form with sparse H: M = P - K (H P); P <- M - (M H^T) K^T + K N K^T
    K = np.ascontiguousarray(Kt.T)
    M = P - K @ HP
    MHt = np.empty((n, rows))
    for c in range(count):
        k = order[c]
        _times_h_transpose(M, slots[k], A_all[k], MHt, 3 * c)
    KN = K @ Nm
    Pn = M - MHt @ Kt + KN @ Kt
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
        p[i] += dx[P_ + i]
        v[i] += dx[V_ + i]
    for i in range(6):
        biases[i] += dx[BA_ + i]
    for f in range(feet.shape[0]):
        for i in range(3):
            feet[f, i] += dx[NAV + 3 * f + i]
    E = np.empty((3, 3))
    so3_exp_into(np.ascontiguousarray(dth), E)
    C[:, :] = C @ E
    return nis


class EskfState(NamedTuple):
    """The compiled state of ``ErrorStateEKF`` (registry module doc; its arrays are the filter's, worked on in
    place): the common fields, then the last transition ``F`` and Q diagonal ``q_nav`` (scratch), the
    densities of Q (``densities`` per navigation error, ``foot_density``), ``gravity`` (3), and the
    observability constraint: ``constrain``, the last prior ``prior_rotation, prior_p, prior_v`` and the
    feet's parts of the yaw direction ``null_feet`` (K x 3)."""

    C: np.ndarray
    p: np.ndarray
    v: np.ndarray
    biases: np.ndarray
    feet: np.ndarray
    P: np.ndarray
    gate: float
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
    propagate_readings(s.C, s.p, s.v, s.biases, s.P, w_m, a_m, dt, accelerometer_variance, gyroscope_variance,
                       s.densities, s.foot_density, s.gravity, s.F, s.q_nav, s.constrain, s.prior_rotation,
                       s.prior_p, s.prior_v)


@njit(cache=True)
def correct_state(s: EskfState, positions: np.ndarray, covariances: np.ndarray, accepted: np.ndarray,
                  nis_feet: np.ndarray) -> float:
    """``update`` of every foot in the state, in state order (registry ``correct``)."""
    return update(s.C, s.p, s.v, s.biases, s.feet, s.P, np.arange(positions.shape[0]), positions, covariances,
                  s.gate, accepted, nis_feet, s.constrain, s.prior_rotation, s.prior_p, s.null_feet)


@njit(cache=True)
def navigation_covariance_state(s: EskfState, out: np.ndarray) -> None:
    """The navigation block of P: the ESKF's error is the convention (registry ``navigation_covariance``)."""
    out[:, :] = s.P[:NAV, :NAV]


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


def _vector3(name: str, value: ArrayLike) -> FloatArray:
    array = np.array(value, dtype=np.float64)
    if array.shape != (3,) or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be a finite 3-vector, got {value!r}")
    return array


@register_filter("eskf")
class ErrorStateEKF(FilterState):
    """The error-state EKF (a ``LeggedFilter``); ``gravity`` is the magnitude of g along world -z (m/s^2);
    ``gate_probability`` and ``observability_constrained`` are its ``EskfParameters``: the per-foot chi-square
    gate of the stance update and the OC-EKF (default; module doc): no update gives information about the yaw;
    False is the plain EKF, whose linearisation at changing estimates makes yaw look observable
    (over-confident)."""

    Parameters = EskfParameters
    KERNELS = FilterKernels(EskfState, propagate_state, correct_state, navigation_covariance_state)

    def __init__(
        self, noise: NoiseParameters | None = None, gravity: float = 9.81,
        gate_probability: float = EskfParameters.gate_probability,
        observability_constrained: bool = EskfParameters.observability_constrained,
    ) -> None:
        if not (math.isfinite(gravity) and gravity > 0.0):
            raise ValueError(f"gravity must be finite and > 0 (m/s^2), got {gravity!r}")
        self.parameters = EskfParameters(gate_probability, observability_constrained)
        self.noise = noise if noise is not None else NoiseParameters()
        self.gate = gate(3, gate_probability)
        self.observability_constrained = self.parameters.observability_constrained
        self._gravity = np.array([0.0, 0.0, -gravity])
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
        self._initialized = False
        self._set_state(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))

    def _set_state(
        self, C: FloatArray, p: FloatArray, v: FloatArray, b_a: FloatArray, b_g: FloatArray,
        covariance: ArrayLike | None = None,
    ) -> None:
        P = initial_covariance(self.noise, covariance)
        self._C = np.array(C, dtype=np.float64, order="C")  # a copy: the caller keeps its matrix
        self._p, self._v = p.copy(), v.copy()
        self._biases = np.concatenate([b_a, b_g])
        self._names: list[str] = []
        self._feet = np.zeros((0, 3))
        self._P = P
        # OC-EKF linearisation point: the last prior (nominal after propagation) and each foot's part of the
        # yaw direction, fixed at touchdown (kernels.constrain_transition, kernels.update)
        self._prior_C, self._prior_p, self._prior_v = self._C.copy(), self._p.copy(), self._v.copy()
        self._null_feet = np.zeros((0, 3))
        self._sync()

    def _sync(self) -> None:
        """The compiled state over the current arrays (after any of them was replaced)."""
        self._state = EskfState(self._C, self._p, self._v, self._biases, self._feet, self._P, self.gate,
                                self._F, self._q_nav, self._densities, self._foot_density, self._gravity,
                                self.observability_constrained, self._prior_C, self._prior_p, self._prior_v,
                                self._null_feet)

    def initialize(
        self,
        rotation: ArrayLike,
        position: ArrayLike,
        velocity: ArrayLike,
        accelerometer_bias: ArrayLike,
        gyroscope_bias: ArrayLike,
        covariance: ArrayLike | None = None,
    ) -> None:
        """Start from this nominal state, no feet, with ``covariance`` (15x15, see
        ``filter.initial_covariance``; None: the initial standard deviations of ``noise``)."""
        self._set_state(
            as_rotation_matrix(rotation),
            _vector3("position", position),
            _vector3("velocity", velocity),
            _vector3("accelerometer_bias", accelerometer_bias),
            _vector3("gyroscope_bias", gyroscope_bias),
            covariance,
        )
        self._initialized = True

    def propagate(
        self,
        angular_velocity: ArrayLike,
        linear_acceleration: ArrayLike,
        dt: float,
        input_variance: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        """One IMU step with the raw readings ``w_m``, ``a_m`` (IMU frame) held over ``dt`` seconds;
        ``input_variance`` (accelerometer, gyroscope) of a reading error constant over the step adds
        ``variance * dt^2`` to the velocity and angle blocks of Q (``LeggedFilter.propagate``)."""
        self._require_initialized()
        w_m = _vector3("angular_velocity", angular_velocity)
        a_m = _vector3("linear_acceleration", linear_acceleration)
        if not (np.isfinite(dt) and dt > 0.0):
            raise ValueError(f"dt must be finite and > 0 (s), got {dt!r}")
        accelerometer, gyroscope = checked_input_variance(input_variance)
        call_kernel(propagate_state, self._state, w_m, a_m, float(dt), accelerometer, gyroscope)

    def _remove(self, names: Sequence[str]) -> None:
        """Marginalise feet: drop their state and their rows and columns of P."""
        slots = [self._names.index(name) for name in names]
        keep = np.ones(self._P.shape[0], dtype=bool)
        for slot in slots:
            keep[NAV + 3 * slot : NAV + 3 * slot + 3] = False
        self._P = np.ascontiguousarray(self._P[np.ix_(keep, keep)])
        self._feet = np.delete(self._feet, slots, axis=0)
        self._null_feet = np.delete(self._null_feet, slots, axis=0)
        self._names = [name for name in self._names if name not in names]
        self._sync()

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

    def kernel_state(self) -> EskfState:
        """The compiled state over the filter's arrays (registry module doc)."""
        return self._state

    @property
    def transition_matrix(self) -> FloatArray:
        """The 15x15 navigation block of the last propagation's F."""
        F: FloatArray = self._F.copy()
        return F

    def nees(self, position: ArrayLike, velocity: ArrayLike, rotation: ArrayLike) -> float:
        error = np.concatenate(
            [
                _vector3("position", position) - self._p,
                _vector3("velocity", velocity) - self._v,
                so3_log(self._C.T @ as_rotation_matrix(rotation)),
            ]
        )
        return nees(error, self._P[:9, :9])
