"""Exact kinematic synthesis of a trotting legged robot with a noisy IMU and encoders: the
estimator's accuracy data (docs/offline-estimation.md, "Accuracy").

The base follows an analytic motion (a smooth path with turns, height/roll/pitch oscillations at the gait
frequency); stance feet stay exactly fixed in the world (or, with ``foot_radius``, roll without slipping:
spheres centred at the foot frames), swing feet follow smooth arcs, each leg's joints come
from a Newton solve on the leg's own joints and its velocities from the leg Jacobian. The IMU reads the exact
specific force and rate at its own point (Robot Dynamics Essential, (114) without noise, with the
point-acceleration formula of Robot Dynamics Essential, §2.4 ``a_P = a_B + α × r + ω × (ω × r)``), then white
noise and bias random walks of a MEMS data sheet are added (``SensorNoise``). Joint efforts follow from
inverse dynamics with a least-norm split of the contact forces. docs/estimation.md, "Synthetic data and
accuracy".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.evaluation import Evaluator
from kinodyn.spatial.lie import so3_log
from kinodyn.spatial.rotations import FloatArray, matrix_to_quat, rot_y, rot_z, skew

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn.model import Model

G0 = 9.80665  # standard gravity, m/s^2, to convert data-sheet g units
UP = np.array([0.0, 0.0, 1.0])  # the ground's normal
DEFAULT_TURNS = ((5.0, 5.0, 0.5 * math.pi), (13.0, 5.0, -0.5 * math.pi), (21.0, 6.0, -0.6 * math.pi),
                 (30.0, 4.0, 0.4 * math.pi))
"""(start s, duration s, heading change rad) of the default path's turns."""
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)
_KNOT_STEP = 0.01  # s, knots of the Gauss-Legendre integration of the horizontal path
MIN_LEG_JOINTS = 3  # a foot placed in 3-D needs at least 3 joints between it and the base
MIN_TROT_DUTY = 0.5  # a trot keeps both diagonal pairs in stance in the overlap: duty above one half
_ON_AXIS = 1e-3  # m: a foot's nominal |x| below it counts as x > 0 (trot_phase_offsets)
_FOOT_TOLERANCE = 1e-12  # m: the feet's IK stops once every foot is this close to its target
_ROLL_TOLERANCE = 1e-13  # m: the rolled contact points have converged when they move less
_ACCEL_SHARE = 0.5  # probability that the first half of the NaN readings hits the accelerometer


@dataclass(frozen=True)
class SensorNoise:
    """Truth-side sensor noise, SI. Densities per sqrt(Hz) as ``NoiseParameters`` (same field names).

    ``bmi088()``: Bosch BMI088 data sheet (BST-BMI088-DS001, table 1): accelerometer output noise density
    175 µg/√Hz, gyroscope 0.014 °/s/√Hz; bias random walks of the order Kalibr's IMU noise model uses for MEMS
    parts; initial biases drawn with the ``initial_*`` standard deviations (residuals after calibration).
    """

    accelerometer_noise_density: float = 175e-6 * G0
    gyroscope_noise_density: float = math.radians(0.014)
    accelerometer_random_walk: float = 1.0e-4
    gyroscope_random_walk: float = 1.0e-5
    initial_accelerometer_bias: float = 0.02
    initial_gyroscope_bias: float = math.radians(0.1)
    encoder_noise: float = 1.0e-3  # rad per joint position reading
    encoder_velocity_noise: float = 0.02  # rad/s per joint velocity reading
    effort_noise: float = 0.2  # N m per joint effort reading

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not (isinstance(value, float | int) and math.isfinite(value) and value >= 0.0):
                raise ValueError(f"SensorNoise.{name} = {value!r}: must be finite and >= 0")

    @classmethod
    def bmi088(cls) -> SensorNoise:
        return cls()

    @classmethod
    def none(cls) -> SensorNoise:
        return cls(**{name: 0.0 for name in vars(cls())})


@dataclass(frozen=True)
class Faults:
    """Faults added by ``inject_faults``; sample indices into the run. The bag writer honours ``imu_dropped``
    (no message), ``duplicated`` (every topic's message of that sample written twice) and ``delay`` (the
    message written that many samples late in bag order, header stamp unchanged)."""

    imu_dropped: np.ndarray  # (N,) bool
    accel_spikes: np.ndarray  # indices
    imu_nan: np.ndarray  # indices
    joint_nan: np.ndarray  # indices
    contact_flicker: np.ndarray  # indices of toggled (sample, foot) pairs, (M, 2)
    duplicated: np.ndarray  # (N,) bool
    delay: np.ndarray  # (N,) int, samples


@dataclass(frozen=True, eq=False)
class SyntheticRun:
    """A synthesised run sampled at ``t`` (N samples). Base quantities are those of the root link; linear and
    angular velocities in the base frame (ARCHITECTURE §3); quaternions (x, y, z, w) of ``C_WB`` / ``C_WI``;
    joint arrays in ``joint_names`` order (the model's); ``contacts`` per foot in ``feet`` order."""

    model: Model
    imu_frame: str
    base_frame: str
    feet: tuple[str, ...]
    joint_names: tuple[str, ...]
    rate: float
    walk_start: float
    noise: SensorNoise
    t: np.ndarray
    position: np.ndarray
    quaternion: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray
    imu_position: np.ndarray  # world
    imu_velocity: np.ndarray  # world
    imu_quaternion: np.ndarray  # C_WI
    true_imu_angular_velocity: np.ndarray
    true_imu_linear_acceleration: np.ndarray
    accelerometer_bias: np.ndarray  # true bias per sample
    gyroscope_bias: np.ndarray
    imu_angular_velocity: np.ndarray  # measured
    imu_linear_acceleration: np.ndarray
    true_joint_positions: np.ndarray
    true_joint_velocities: np.ndarray
    joint_positions: np.ndarray  # measured
    joint_velocities: np.ndarray
    joint_efforts: np.ndarray
    true_joint_efforts: np.ndarray
    contacts: np.ndarray  # (N, K) bool
    foot_positions: np.ndarray  # (N, K, 3) world
    contact_forces: np.ndarray  # (N, K, 3) world, ground reaction on the robot (zero in swing)
    motion: BaseMotion  # the analytic base motion, to evaluate at any time
    faults: Faults | None = field(default=None)

    @property
    def path_length(self) -> float:
        """Horizontal distance the base travelled, m."""
        return float(np.linalg.norm(np.diff(self.position[:, :2], axis=0), axis=1).sum())


def smoothstep(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """C-infinity step 0 -> 1 on [0, 1], ``S = f(x) / (f(x) + f(1 - x))`` with ``f(x) = exp(-1/x)``; returns
    ``S, S', S''``, all derivatives zero outside (0, 1)."""
    x = np.asarray(x, dtype=np.float64)
    inside = (x > 0.0) & (x < 1.0)
    u = np.clip(x, 1e-3, 1.0 - 1e-3)  # exp(-1/u) underflows to exactly 0 below u = 1e-3
    fa, fb = np.exp(-1.0 / u), np.exp(-1.0 / (1.0 - u))
    da, db = fa / u**2, -fb / (1.0 - u) ** 2  # d/dx of f(x), f(1 - x)
    dda, ddb = fa * (1.0 - 2.0 * u) / u**4, fb * (1.0 - 2.0 * (1.0 - u)) / (1.0 - u) ** 4
    d = fa + fb
    s = fa / d
    ds = (da - s * (da + db)) / d
    dds = (dda - 2.0 * ds * (da + db) - s * (dda + ddb)) / d
    outside = (x >= 1.0).astype(np.float64)
    return np.where(inside, s, outside), np.where(inside, ds, 0.0), np.where(inside, dds, 0.0)


@dataclass(frozen=True)
class BaseKinematics:
    """World-frame motion of the base (root link) origin at times ``t``."""

    position: np.ndarray  # (N, 3)
    rotation: np.ndarray  # (N, 3, 3) C_WB
    velocity: np.ndarray  # (N, 3)
    acceleration: np.ndarray  # (N, 3)
    angular_velocity: np.ndarray  # (N, 3) world
    angular_acceleration: np.ndarray  # (N, 3) world


@dataclass(frozen=True)
class BaseMotion:
    """The analytic base motion: still until ``walk_start``, then the speed ramps to ``speed`` along the
    heading (yaw) that turns by ``turns``; height, roll and pitch oscillate at the gait frequency, their
    amplitudes ramping in with the speed. Rotation ``C_WB = Rz(yaw) Ry(pitch) Rx(roll)``."""

    height: float
    walk_start: float = 1.0
    speed: float = 0.45
    ramp: float = 1.5
    period: float = 0.5
    turns: tuple[tuple[float, float, float], ...] = DEFAULT_TURNS
    bob: float = 0.01  # m, at twice the gait frequency
    roll: float = 0.02  # rad, at the gait frequency
    pitch: float = 0.015  # rad, at twice the gait frequency
    duration: float = 36.0
    _knots: np.ndarray = field(init=False, repr=False)  # integration grid of the path [s]
    _cumulative: np.ndarray = field(init=False, repr=False)  # (len(_knots), 2) path position at each knot

    def __post_init__(self) -> None:
        knots = np.arange(0.0, self.duration + 2.0 * _KNOT_STEP, _KNOT_STEP)
        increments = self._integral(knots[:-1], knots[1:])
        cumulative = np.vstack([np.zeros((1, 2)), np.cumsum(increments, axis=0)])
        object.__setattr__(self, "_knots", knots)
        object.__setattr__(self, "_cumulative", cumulative)

    @property
    def end(self) -> float:
        """The last knot of the integration grid [s]: the latest time ``evaluate`` accepts."""
        return float(self._knots[-1])

    def heading(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        psi, dpsi, ddpsi = (np.zeros_like(t) for _ in range(3))
        for start, length, angle in self.turns:
            s, ds, dds = smoothstep((t - start) / length)
            psi, dpsi, ddpsi = psi + angle * s, dpsi + angle * ds / length, ddpsi + angle * dds / length**2
        return psi, dpsi, ddpsi

    def gait_ramp(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, ds, dds = smoothstep((t - self.walk_start) / self.ramp)
        return s, ds / self.ramp, dds / self.ramp**2

    def _horizontal_velocity(self, t: np.ndarray) -> np.ndarray:
        ramp = self.gait_ramp(t)[0]
        psi = self.heading(t)[0]
        result: np.ndarray = self.speed * ramp[..., None] * np.stack([np.cos(psi), np.sin(psi)], axis=-1)
        return result

    def _integral(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Gauss-Legendre (8 nodes, exact to degree 15) integral of the horizontal velocity over [a, b]."""
        half = 0.5 * (b - a)
        nodes = (0.5 * (a + b))[:, None] + half[:, None] * _GL_NODES[None, :]
        result: np.ndarray = half[:, None] * np.einsum("j,njk->nk", _GL_WEIGHTS,
                                                       self._horizontal_velocity(nodes))
        return result

    def _oscillation(self, amplitude: float, harmonic: int, phase: str, t: np.ndarray,
                     ramp: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
        """``amplitude r(t) sin|cos(ω t)`` and its first two derivatives (product rule)."""
        w = 2.0 * math.pi * harmonic / self.period
        arg = w * (t - self.walk_start)
        f, df = (np.sin(arg), w * np.cos(arg)) if phase == "sin" else (np.cos(arg) - 1.0, -w * np.sin(arg))
        ddf = -w * w * (f if phase == "sin" else f + 1.0)
        r, dr, ddr = ramp
        a = amplitude
        return a * r * f, a * (dr * f + r * df), a * (ddr * f + 2.0 * dr * df + r * ddf)

    def evaluate(self, t: np.ndarray) -> BaseKinematics:
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        if np.any(t < 0.0) or np.any(t > self._knots[-1]):
            raise ValueError(f"times must lie in [0, {self._knots[-1]:.3f}] s")
        index = np.minimum((t / _KNOT_STEP).astype(np.int64), len(self._knots) - 2)
        xy = self._cumulative[index] + self._integral(self._knots[index], t)
        ramp = self.gait_ramp(t)
        psi, dpsi, ddpsi = self.heading(t)
        z, dz, ddz = self._oscillation(self.bob, 2, "cos", t, ramp)
        roll, droll, ddroll = self._oscillation(self.roll, 1, "sin", t, ramp)
        pitch, dpitch, ddpitch = self._oscillation(self.pitch, 2, "sin", t, ramp)
        speed, dspeed = self.speed * ramp[0], self.speed * ramp[1]
        c, s = np.cos(psi), np.sin(psi)
        zero = np.zeros_like(t)
        position = np.stack([xy[:, 0], xy[:, 1], self.height + z], axis=1)
        velocity = np.stack([speed * c, speed * s, dz], axis=1)
        acceleration = np.stack([dspeed * c - speed * dpsi * s, dspeed * s + speed * dpsi * c, ddz], axis=1)
        rz = np.array([rot_z(a) for a in psi])
        rzy = np.einsum("nij,njk->nik", rz, np.array([rot_y(a) for a in pitch]))
        rotation = np.einsum("nij,njk->nik", rzy, np.array([_rot_x(a) for a in roll]))
        ez = np.stack([zero, zero, zero + 1.0], axis=1)
        ey_w, ex_w = rz[:, :, 1], rzy[:, :, 0]  # rotated y axis of Rz, x axis of Rz Ry
        omega_zy = dpsi[:, None] * ez + dpitch[:, None] * ey_w
        omega = omega_zy + droll[:, None] * ex_w
        alpha = (ddpsi[:, None] * ez + ddpitch[:, None] * ey_w
                 + dpitch[:, None] * np.cross(dpsi[:, None] * ez, ey_w)
                 + ddroll[:, None] * ex_w + droll[:, None] * np.cross(omega_zy, ex_w))
        return BaseKinematics(position, rotation, velocity, acceleration, omega, alpha)


def _rot_x(angle: float) -> FloatArray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


@dataclass(frozen=True)
class ImuKinematics:
    """Exact IMU-frame readings and the IMU frame's world motion (Robot Dynamics Essential, (114) without
    noise)."""

    angular_velocity: np.ndarray  # (N, 3) IMU frame
    specific_force: np.ndarray  # (N, 3) IMU frame
    position: np.ndarray  # (N, 3) world
    velocity: np.ndarray  # (N, 3) world
    rotation: np.ndarray  # (N, 3, 3) C_WI


def imu_kinematics(base: BaseKinematics, rotation_bi: np.ndarray, translation_bi: np.ndarray,
                   gravity: np.ndarray) -> ImuKinematics:
    """The IMU at ``r_BI`` / ``C_BI`` on the base: ``a_I = a_B + α × r + ω × (ω × r)`` with ``r = C_WB r_BI``,
    ``f = C_WI^T (a_I - g)``, ``ω_I = C_WI^T ω`` (Robot Dynamics Essential, §2.4 and (114))."""
    r = base.rotation @ translation_bi
    w, alpha = base.angular_velocity, base.angular_acceleration
    accel = base.acceleration + np.cross(alpha, r) + np.cross(w, np.cross(w, r))
    c_wi = base.rotation @ rotation_bi
    return ImuKinematics(
        angular_velocity=np.einsum("nji,nj->ni", c_wi, w),
        specific_force=np.einsum("nji,nj->ni", c_wi, accel - gravity),
        position=base.position + r, velocity=base.velocity + np.cross(w, r), rotation=c_wi,
    )


@dataclass(frozen=True)
class Leg:
    """A foot and the joints between it and the floating base (indices into q, v and ``joint_names``)."""

    foot: str
    q_index: np.ndarray
    v_index: np.ndarray
    joint_index: np.ndarray


def legs_of(model: Model, feet: Sequence[str]) -> list[Leg]:
    """The joints on each foot's chain to the root; ValueError if the model has no floating base, a foot
    is unknown, a leg has fewer than 3 joints (a foot position needs 3) or two feet share a joint."""
    if not model.floating_base:
        raise ValueError("the synthesis needs a floating-base model "
                         "(Model.from_urdf(..., floating_base=True))")
    body_joint = {int(b): j for j, b in enumerate(model.joint_body)}
    legs: list[Leg] = []
    owner: dict[int, str] = {}
    for foot in feet:
        body = int(model.frame_body[model.frame_id(foot)])
        joints = []
        while body > 1:  # body 1 is the floating base
            if body in body_joint:
                joints.append(body_joint[body])
            body = int(model.parent[body])
        joints.reverse()
        if len(joints) < MIN_LEG_JOINTS:
            raise ValueError(f"foot {foot!r} has {len(joints)} joints to the base; a leg needs at least 3")
        for j in joints:
            if j in owner:
                raise ValueError(f"feet {owner[j]!r} and {foot!r} share joint {model.joint_names[j]!r}; "
                                 "each leg must have its own joints")
            owner[j] = foot
        bodies = model.joint_body[joints]
        legs.append(Leg(foot, model.idx_q[bodies].copy(), model.idx_v[bodies].copy(), np.array(joints)))
    return legs


def _footholds(motion: BaseMotion, schedule: list[list[tuple[float, float]]],
               nominal: np.ndarray) -> list[list[np.ndarray]]:
    """Per foot: one world foothold per stance interval of ``schedule`` (mid-stance Raibert placement of
    the ``nominal`` base-frame foot)."""
    footholds = []
    for k in range(len(schedule)):
        holds = []
        for touchdown, liftoff in schedule[k]:
            mid = 0.0 if touchdown == -math.inf else min(0.5 * (touchdown + liftoff), motion.end)
            b = motion.evaluate(np.array([mid]))
            hold = b.position[0] + rot_z(motion.heading(np.array([mid]))[0][0]) @ nominal[k]
            hold[2] = 0.0
            holds.append(hold)
        footholds.append(holds)
    return footholds


def trot_phase_offsets(nominal_feet: np.ndarray) -> np.ndarray:
    """Trot phases from the feet's nominal base-frame positions: feet with ``sign(x) sign(y) >= 0`` (x
    taken as + when |x| < 1 mm) at phase 0, the others at 0.5, so diagonal pairs move together."""
    x, y = nominal_feet[:, 0], nominal_feet[:, 1]
    sx = np.where(np.abs(x) < _ON_AXIS, 1.0, np.sign(x))
    return np.where(sx * np.sign(y) >= 0.0, 0.0, 0.5)


def stance_intervals(offset: float, walk_start: float, period: float, duty: float,
                     end: float) -> list[tuple[float, float]]:
    """Stance intervals of a foot: in stance from t = 0 until its first lift-off after ``walk_start`` (phase
    ``duty``), then ``duty * period`` of stance every ``period``."""
    liftoff = walk_start + ((duty - offset) % 1.0) * period
    intervals = [(-math.inf, liftoff)]
    while liftoff < end:
        touchdown = liftoff + (1.0 - duty) * period
        liftoff = touchdown + duty * period
        intervals.append((touchdown, liftoff))
    return intervals


def _swing(start: np.ndarray, goal: np.ndarray, sigma: float, length: float,
           height: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Swing arc: ``start + (goal - start) S(σ) + h b(σ) e_z``, ``b = 256 σ⁴(1-σ)⁴`` (velocity, acceleration
    and jerk zero at lift-off and touchdown); position, velocity and acceleration at
    ``σ = (t - lift-off) / length``."""
    s, ds, dds = (float(v) for v in smoothstep(np.array(sigma)))
    u, w = sigma, 1.0 - sigma
    b = 256.0 * u**4 * w**4
    db = 1024.0 * u**3 * w**3 * (w - u)
    ddb = 1024.0 * u**2 * w**2 * (3.0 * (w - u) ** 2 - 2.0 * u * w)
    ez = np.array([0.0, 0.0, 1.0])
    delta = goal - start
    return (start + delta * s + height * b * ez, (delta * ds + height * db * ez) / length,
            (delta * dds + height * ddb * ez) / length**2)


class _Synthesizer:
    """Per-sample leg IK, joint velocities and efforts for a given base motion and foot schedule."""

    def __init__(self, model: Model, legs: list[Leg], standing_q: np.ndarray) -> None:
        self.model, self.legs = model, legs
        self.evaluator = Evaluator(model, [leg.foot for leg in legs])
        self.q = standing_q.copy()

    def solve(self, q_base: np.ndarray, targets: np.ndarray, t: float) -> np.ndarray:
        """Joint positions putting every foot at ``targets`` (world) for the base pose ``q_base``: Newton on
        each leg's joints (least-norm steps), to 1e-12 m."""
        q = self.q
        q[:7] = q_base
        zero = np.zeros(self.model.nv)
        for _ in range(20):
            ev = self.evaluator.evaluate(q, zero)
            residual = targets - ev.placements[:, :3, 3]
            if np.abs(residual).max() < _FOOT_TOLERANCE:
                self.q = q
                result: np.ndarray = q.copy()
                return result
            for k, leg in enumerate(self.legs):
                jac = ev.jacobians[k, :3][:, leg.v_index]
                q[leg.q_index] += np.linalg.lstsq(jac, residual[k], rcond=None)[0]
        worst = np.abs(residual).max()
        raise ValueError(f"leg IK did not converge at t = {t:.3f} s (residual {worst:.2e} m): a foot target"
                         " is out of reach; lower the speed, the turn rate or the step height")

    def rates(self, q: np.ndarray, base_twist: np.ndarray, base_accel: np.ndarray, foot_velocity: np.ndarray,
              foot_accel: np.ndarray, stance: np.ndarray, radius: float = 0.0
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Joint velocities (leg Jacobian solve), efforts and contact forces (K, 3):
        ``M v̇ + h = S^T τ + Σ J_k^T f_k`` with the least-norm stance forces ``f_k`` that balance the base
        rows (Robot Dynamics Essential, §3.7). A stance foot's ``foot_velocity`` and ``foot_accel`` are those
        of its contact point, the sphere's material point ``radius`` below the foot frame (zero: rolling
        without slipping; its Jacobian ``J_P + radius [n]x J_R``, where the ground force acts)."""
        m = self.model
        v = np.concatenate([base_twist, np.zeros(m.nv - 6)])
        ev = self.evaluator.evaluate(q, v)
        vdot = np.concatenate([base_accel, np.zeros(m.nv - 6)])
        lever = radius * skew(UP)

        def point(k: int | np.integer, rows: np.ndarray) -> np.ndarray:  # a stance foot's contact point
            return rows[:3] + lever @ rows[3:] if stance[k] and radius > 0.0 else rows[:3]

        for k, leg in enumerate(self.legs):
            jac = point(k, ev.jacobians[k])
            base_part = jac[:, :6] @ base_twist
            v[leg.v_index] = np.linalg.lstsq(jac[:, leg.v_index], foot_velocity[k] - base_part, rcond=None)[0]
        ev = self.evaluator.evaluate(q, v)
        for k, leg in enumerate(self.legs):
            jac = point(k, ev.jacobians[k])
            drift = jac[:, :6] @ base_accel + point(k, ev.bias_accelerations[k])
            vdot[leg.v_index] = np.linalg.lstsq(jac[:, leg.v_index], foot_accel[k] - drift, rcond=None)[0]
        generalized = ev.mass_matrix @ vdot + ev.nonlinear_effects
        contact_jac = np.concatenate([point(k, ev.jacobians[k]) for k in np.flatnonzero(stance)], axis=0)
        forces = np.linalg.lstsq(contact_jac[:, :6].T, generalized[:6], rcond=None)[0]
        tau = generalized - contact_jac.T @ forces
        per_foot = np.zeros((len(self.legs), 3))
        per_foot[stance] = forces.reshape(-1, 3)
        return v[6:], tau[6:], per_foot


def trotting_walk(model: Model, imu_frame: str, feet: Sequence[str], *, duration: float = 36.0,  # noqa: PLR0913  (the trot's options, keyword-only)
                  rate: float = 500.0, seed: int = 0, speed: float = 0.45, noise: SensorNoise | None = None,
                  standing_joints: np.ndarray | None = None, walk_start: float = 1.0, period: float = 0.5,
                  duty: float = 0.6, step_height: float = 0.08,
                  turns: tuple[tuple[float, float, float], ...] = DEFAULT_TURNS, foot_radius: float = 0.0
                  ) -> SyntheticRun:
    """Synthesise a trot (see the module doc): still for ``walk_start`` s, then walking at ``speed`` with
    ``turns``. ``standing_joints`` (model joint order; default the middle of each joint's limits) fixes the
    nominal footprint and the standing height (feet at z = 0). ``noise`` defaults to ``SensorNoise.bmi088()``;
    ``seed`` seeds every random draw (the sensor noise only: ``with_noise`` draws it again for the same
    motion). ``foot_radius`` > 0: the feet are spheres of that radius centred at the foot frames that roll
    without slipping in stance (``_rolled``), the ground plane ``foot_radius`` below the footholds;
    ``foot_positions`` are the sphere centres and ``contact_forces`` act at the contact points."""
    noise = SensorNoise.bmi088() if noise is None else noise
    if not (duration > walk_start >= 0.0 and rate > 0.0 and MIN_TROT_DUTY < duty < 1.0 and period > 0.0):
        raise ValueError("need duration > walk_start >= 0, rate > 0, period > 0 and 0.5 < duty < 1 "
                         "(a trot with both pairs in stance in the overlap)")
    legs = legs_of(model, feet)
    standing_q = model.neutral()
    joint_q = model.idx_q[model.joint_body]
    joint_v = model.idx_v[model.joint_body]
    if standing_joints is None:
        lower, upper = model.lower_limit[joint_q], model.upper_limit[joint_q]
        standing_q[joint_q] = np.where(np.isfinite(lower) & np.isfinite(upper), 0.5 * (lower + upper), 0.0)
    else:
        standing_q[joint_q] = np.asarray(standing_joints, dtype=np.float64)
    nominal = np.array([model.frame_placement(standing_q, leg.foot)[:3, 3] for leg in legs])
    height = -float(nominal[:, 2].mean())
    imu_pose = model.frame_placement(model.neutral(), imu_frame)
    rotation_bi, translation_bi = imu_pose[:3, :3], imu_pose[:3, 3]
    motion = BaseMotion(height=height, walk_start=walk_start, speed=speed, period=period, turns=turns,
                        duration=duration)
    n = round(duration * rate) + 1
    t = np.arange(n) / rate
    base = motion.evaluate(t)
    imu = imu_kinematics(base, rotation_bi, translation_bi, model.gravity)

    offsets = trot_phase_offsets(nominal)
    schedule = [stance_intervals(o, walk_start, period, duty, duration) for o in offsets]
    footholds = _footholds(motion, schedule, nominal)

    synth = _Synthesizer(model, legs, standing_q)
    nk, nj = len(legs), len(model.joint_names)
    q_true, qd_true, tau = np.zeros((n, nj)), np.zeros((n, nj)), np.zeros((n, nj))
    contacts = np.zeros((n, nk), dtype=bool)
    foot_pos, foot_force = np.zeros((n, nk, 3)), np.zeros((n, nk, 3))
    quat = np.array([matrix_to_quat(c) for c in base.rotation])
    lin_b = np.einsum("nji,nj->ni", base.rotation, base.velocity)
    ang_b = np.einsum("nji,nj->ni", base.rotation, base.angular_velocity)
    # base acceleration in the v convention (base-frame linear and angular): C^T a - ω_B × v_B, C^T α
    lin_acc_b = np.einsum("nji,nj->ni", base.rotation, base.acceleration) - np.cross(ang_b, lin_b)
    ang_acc_b = np.einsum("nji,nj->ni", base.rotation, base.angular_acceleration)
    interval = [0] * nk
    liftoff_pos = [np.array(holds[0]) for holds in footholds]  # where each foot's last stance ended
    previous = np.zeros((nk, 3, 3))  # C_WF of every foot at the previous sample (rolling feet)
    for i, ti in enumerate(t):
        vel, acc = np.zeros((nk, 3)), np.zeros((nk, 3))
        for k in range(nk):
            while schedule[k][interval[k]][1] <= ti:
                interval[k] += 1
            touchdown = schedule[k][interval[k]][0]
            if ti >= touchdown:
                contacts[i, k] = True
                foot_pos[i, k] = footholds[k][interval[k]] if i == 0 or not contacts[i - 1, k] \
                    else foot_pos[i - 1, k]
                liftoff_pos[k] = foot_pos[i, k]
            else:
                start, length = schedule[k][interval[k] - 1][1], touchdown - schedule[k][interval[k] - 1][1]
                foot_pos[i, k], vel[k], acc[k] = _swing(liftoff_pos[k], footholds[k][interval[k]],
                                                        (ti - start) / length, length, step_height)
        q_base = np.concatenate([base.position[i], quat[i]])
        if foot_radius > 0.0 and i > 0:
            q = _rolled(synth, q_base, foot_pos[i], contacts[i] & contacts[i - 1], previous, foot_radius, ti)
        else:
            q = synth.solve(q_base, foot_pos[i], ti)
        previous = synth.evaluator.evaluate(q, np.zeros(model.nv)).placements[:, :3, :3].copy()
        q_true[i] = q[joint_q]
        velocities, efforts, foot_force[i] = synth.rates(q, np.concatenate([lin_b[i], ang_b[i]]),
                                          np.concatenate([lin_acc_b[i], ang_acc_b[i]]), vel, acc, contacts[i],
                                          foot_radius)
        qd_true[i], tau[i] = velocities[joint_v - 6], efforts[joint_v - 6]

    exact = SyntheticRun(
        model=model, imu_frame=imu_frame, base_frame=model.body_names[1], feet=tuple(feet),
        joint_names=tuple(model.joint_names), rate=float(rate), walk_start=float(walk_start), noise=noise,
        t=t,
        position=base.position, quaternion=quat, linear_velocity=lin_b, angular_velocity=ang_b,
        imu_position=imu.position, imu_velocity=imu.velocity,
        imu_quaternion=np.array([matrix_to_quat(c) for c in imu.rotation]),
        true_imu_angular_velocity=imu.angular_velocity, true_imu_linear_acceleration=imu.specific_force,
        accelerometer_bias=np.zeros((n, 3)), gyroscope_bias=np.zeros((n, 3)),
        imu_angular_velocity=imu.angular_velocity, imu_linear_acceleration=imu.specific_force,
        true_joint_positions=q_true, true_joint_velocities=qd_true,
        joint_positions=q_true, joint_velocities=qd_true, joint_efforts=tau, true_joint_efforts=tau,
        contacts=contacts, foot_positions=foot_pos, contact_forces=foot_force, motion=motion,
    )
    return with_noise(exact, seed)


def _rolled(synth: _Synthesizer, q_base: np.ndarray, targets: np.ndarray, rolling: np.ndarray,
            previous: np.ndarray, radius: float, t: float) -> np.ndarray:
    """Joint positions with the ``rolling`` feet rolled without slipping from the previous sample: centre
    ``c_i = c_(i-1) + radius Log(C_WF,i C_WF,(i-1)^T) x n`` (``targets`` holds ``c_(i-1)``, ``previous`` the
    ``C_WF`` of the previous sample): the no-slip ``v_c = radius omega x n`` integrated with the rotation
    increment of each sample (exact for a rate constant over the sample), so a stance's displacement is the
    sum of its increments (not ``Log`` of its total rotation, what the estimator uses). ``C_WF,i`` depends on
    the joints the centre gives: fixed-point iteration with the leg IK until the centres move < 1e-13 m."""
    zero = np.zeros(synth.model.nv)
    base = targets.copy()
    for _ in range(50):
        q = synth.solve(q_base, targets, t)
        rotations = synth.evaluator.evaluate(q, zero).placements[:, :3, :3]
        moved = base.copy()
        for k in np.flatnonzero(rolling):
            moved[k] += radius * np.cross(so3_log(rotations[k] @ previous[k].T), UP)
        if np.abs(moved - targets).max() < _ROLL_TOLERANCE:
            targets[:] = moved
            return synth.solve(q_base, targets, t)
        targets[:] = moved
    raise ValueError(f"rolling feet: the fixed point did not converge at t = {t:.3f} s")


def with_noise(run: SyntheticRun, seed: int, noise: SensorNoise | None = None) -> SyntheticRun:
    """``run``'s motion measured with sensor noise drawn from ``seed``: white noise and bias random walks of
    ``noise`` (default the run's) on its true IMU readings, encoder and effort noise on its true joints
    (``trotting_walk`` with that seed gives the same run: the motion does not depend on the seed)."""
    noise = run.noise if noise is None else noise
    rng = np.random.default_rng(seed)
    n, rate = len(run.t), run.rate
    step = math.sqrt(1.0 / rate)
    b_a = _random_walk(rng, n, noise.initial_accelerometer_bias, noise.accelerometer_random_walk * step)
    b_g = _random_walk(rng, n, noise.initial_gyroscope_bias, noise.gyroscope_random_walk * step)
    white_a = noise.accelerometer_noise_density * math.sqrt(rate)  # density -> per-sample std
    white_g = noise.gyroscope_noise_density * math.sqrt(rate)
    q, qd, tau = run.true_joint_positions, run.true_joint_velocities, run.true_joint_efforts
    gyro = run.true_imu_angular_velocity + b_g + white_g * rng.standard_normal((n, 3))
    accel = run.true_imu_linear_acceleration + b_a + white_a * rng.standard_normal((n, 3))
    return replace(
        run, noise=noise, accelerometer_bias=b_a, gyroscope_bias=b_g, faults=None,
        imu_angular_velocity=gyro, imu_linear_acceleration=accel,
        joint_positions=q + noise.encoder_noise * rng.standard_normal(q.shape),
        joint_velocities=qd + noise.encoder_velocity_noise * rng.standard_normal(qd.shape),
        joint_efforts=tau + noise.effort_noise * rng.standard_normal(tau.shape),
    )


def _random_walk(rng: np.random.Generator, n: int, initial: float, step: float) -> np.ndarray:
    """A 3-axis random walk starting from N(0, initial^2), increments N(0, step^2)."""
    start = initial * rng.standard_normal(3)
    steps = step * rng.standard_normal((n, 3))
    steps[0] = 0.0
    return start + np.cumsum(steps, axis=0)


def inject_faults(run: SyntheticRun, seed: int = 1, dropouts: int = 6, spikes: int = 10,
                  nan_readings: int = 6, flickers: int = 12, duplicate_fraction: float = 0.01,
                  out_of_order_fraction: float = 0.005) -> SyntheticRun:
    """A copy of ``run`` with faults after the standing period: IMU dropouts (gaps of
    20-100 ms), single accelerometer spikes (50-200 m/s² on one axis), NaN IMU and joint readings, contact
    flicker (1-2 sample false toggles of one foot), and for the bag writer duplicated and late messages
    (1-5 samples late in bag order). ``Faults`` lists them."""
    rng = np.random.default_rng(seed)
    n = len(run.t)
    first = int(np.searchsorted(run.t, run.walk_start + 0.5))  # leave the initialisation window clean
    candidates = np.arange(first, n - 60)
    if len(candidates) < max(dropouts, spikes, nan_readings, flickers):
        raise ValueError("the run is too short for the faults: they go after "
                         f"t = {run.walk_start + 0.5:.2f} s (the initialisation window stays clean); "
                         "synthesise a longer run")
    dropped = np.zeros(n, dtype=bool)
    for start in rng.choice(candidates, dropouts, replace=False):
        dropped[start:start + round(rng.uniform(0.02, 0.1) * run.rate)] = True
    accel, gyro = run.imu_linear_acceleration.copy(), run.imu_angular_velocity.copy()
    spike_at = rng.choice(candidates, spikes, replace=False)
    sizes = rng.choice([-1.0, 1.0], spikes) * rng.uniform(50.0, 200.0, spikes)
    accel[spike_at, rng.integers(0, 3, spikes)] += sizes
    imu_nan = rng.choice(candidates, nan_readings, replace=False)
    half = accel if rng.random() < _ACCEL_SHARE else gyro  # the sensor of the first half of the NaN readings
    half[imu_nan[: nan_readings // 2], rng.integers(0, 3)] = np.nan
    gyro[imu_nan[nan_readings // 2:], rng.integers(0, 3)] = np.nan
    joints = run.joint_positions.copy()
    joint_nan = rng.choice(candidates, nan_readings, replace=False)
    joints[joint_nan, rng.integers(0, joints.shape[1], nan_readings)] = np.nan
    contacts = run.contacts.copy()
    flicker = []
    for start in rng.choice(candidates, flickers, replace=False):
        foot = int(rng.integers(0, contacts.shape[1]))
        for i in range(start, start + int(rng.integers(1, 3))):
            contacts[i, foot] = ~contacts[i, foot]
            flicker.append((i, foot))
    duplicated = rng.random(n) < duplicate_fraction
    delay = np.where(rng.random(n) < out_of_order_fraction, rng.integers(1, 6, n), 0)
    duplicated[:first] = False
    delay[:first] = 0
    faults = Faults(imu_dropped=dropped, accel_spikes=np.sort(spike_at), imu_nan=np.sort(imu_nan),
                    joint_nan=np.sort(joint_nan),
                    contact_flicker=np.array(flicker, dtype=np.int64).reshape(-1, 2),
                    duplicated=duplicated, delay=delay)
    return replace(run, imu_linear_acceleration=accel, imu_angular_velocity=gyro, joint_positions=joints,
                   contacts=contacts, faults=faults)
