"""``LeggedEstimator``: IMU, joint states and contacts in, the base state with covariances out (seed 003 §5.3;
docs/estimation.md, "Estimator").

It owns the sequencing that the filters leave to their caller, and no clock but the stamps it is given (the
node and the offline tool feed it the same events, so their outputs agree):

- IMU gating: a sample with a non-finite reading, ``|a_m| > accel_limit`` or ``|w_m| > gyro_limit``, or whose
  specific force jumps by more than ``accel_jump_limit`` from the last accepted one without the next sample
  confirming the jump (a one-sample spike), is dropped (counted); the previous sample is then held over the
  gap. A sample whose stamp is not after the previous one's is dropped (counted). A gap longer than
  ``max_imu_gap`` restarts the initialisation.
- initialisation from a standing window (``StandingInitializer``): base position and yaw zero in odom.
- propagation, second order: the filter's time follows the newest event. An IMU sample propagates from the
  filter's time to its stamp with the line between the previous accepted sample and itself evaluated at the
  middle of that step (the trapezoid rule: the mean of the two readings when no joint state came in between);
  a joint state newer than the last IMU sample propagates to its own stamp with that sample held (the only
  causal choice), and the next IMU sample propagates the rest.
- gap noise: over the part of a step beyond the nominal IMU period after the last accepted sample (a dropout,
  dropped samples) the readings used are a guess whose error is an unknown acceleration and rate, taken
  constant over the gap with standard deviations ``gap_acceleration_noise`` and ``gap_rate_noise``: its
  velocity and angle errors grow as ``sigma * s`` with ``s`` the time beyond the period, so a step from ``s0``
  to ``s1`` adds the variance ``sigma^2 (s1^2 - s0^2)`` (the filter's ``input_variance``), the same total
  however the gap is cut into steps.
- contacts from messages, a controller's schedule, or detection from joint efforts (``ContactDetector``);
  the feet in contact with finite leg joints go to ``update_contacts`` (the filter appends, corrects or
  marginalises them).
- output: the base pose and twist (``ImuExtrinsics.base_state``) with covariances mapped to first order from
  the filter's 15x15 navigation covariance and the gyro's white noise over one sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from kinodyn.estimation.contacts import ContactDetector
from kinodyn.estimation.eskf import ErrorStateEKF
from kinodyn.estimation.filter import LeggedFilter, UpdateReport
from kinodyn.estimation.initialization import StandingInitializer
from kinodyn.estimation.invariant import InvariantEKF
from kinodyn.estimation.legs import BaseState, LegKinematics, check_floating
from kinodyn.estimation.noise import NoiseParameters
from kinodyn.model import Model
from kinodyn.spatial.rotations import FloatArray, matrix_to_quat

FILTERS = {"eskf": ErrorStateEKF, "invariant": InvariantEKF}
CONTACT_SOURCES = ("message", "schedule", "detection")
COUNTERS = (
    "imu_samples", "imu_rejected", "imu_out_of_order", "joint_states", "joint_states_out_of_order",
    "joint_states_without_imu", "updates", "updates_failed", "feet_rejected", "feet_without_joints",
    "contacts_ignored", "initialization_restarts", "resets",
)
# Default detection thresholds, as fractions of the weight each foot carries when all stand. On the synthetic
# quadruped trot (kinodyn.estimation.synthetic, 6 s) 0.6 / 0.3 gave no swing foot taken for a stance foot (the
# neglected swing inertia reaches 0.5 of the share) and 4 % of stance samples missed at the transitions.
CONTACT_ON_FRACTION = 0.6
CONTACT_OFF_FRACTION = 0.3
# Gap noise defaults (m/s^2 and rad/s per axis): on the synthetic trot the true specific force changes by
# 5.4 / 8.7 m/s^2 (norm, RMS) over 50 / 100 ms and the rate by 0.33 / 0.55 rad/s (docs/estimation.md).
GAP_ACCELERATION_NOISE = 5.0
GAP_RATE_NOISE = 0.3


@dataclass(frozen=True)
class Estimate:
    """The base (URDF root link) at ``stamp``: ``position`` and ``orientation`` (quaternion x, y, z, w) in
    odom, ``linear_velocity`` and ``angular_velocity`` in the base frame; ``pose_covariance`` (x, y, z,
    rotation about the odom axes) and ``twist_covariance`` (base frame), 6x6 in ROS order; ``nis`` of the
    last kinematic update (nan if none applied a foot) and ``contacts``, the feet in the filter's state."""

    stamp: float
    position: FloatArray
    orientation: FloatArray
    linear_velocity: FloatArray
    angular_velocity: FloatArray
    pose_covariance: FloatArray
    twist_covariance: FloatArray
    nis: float
    contacts: tuple[str, ...]


def _non_negative(name: str, value: float) -> float:
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"LeggedEstimator {name} must be finite and >= 0, got {value!r}")
    return float(value)


def _positive(name: str, value: float) -> float:
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"LeggedEstimator {name} must be finite and > 0, got {value!r}")
    return float(value)


class LeggedEstimator:
    """See the module doc. ``feet`` are foot link names (any number); ``filter`` is ``"eskf"`` or
    ``"invariant"``; ``contact_source`` is ``"message"``, ``"schedule"`` (both through ``add_contacts``) or
    ``"detection"`` (from the efforts of ``add_joint_state``, thresholds in newtons, default 0.6 / 0.3 of
    the weight share of one foot). Configuration errors raise ValueError; data faults are counted in
    ``counters`` and described by ``last_problem``. Arrays follow ``model.joint_names``; NaN marks a joint
    that was not measured.
    """

    def __init__(
        self, model: Model, imu_frame: str, feet: Sequence[str], filter: str = "eskf",
        noise: NoiseParameters | None = None, contact_source: str = "message", init_duration: float = 0.5,
        gate_probability: float = 0.9999, accel_limit: float = 8 * 9.81, gyro_limit: float = 35.0,
        accel_jump_limit: float = 30.0, max_imu_gap: float = 0.5, init_max_gyro: float = 0.05,
        init_max_accel_deviation: float = 0.5,
        contact_on_threshold: float | None = None, contact_off_threshold: float | None = None,
        gap_acceleration_noise: float = GAP_ACCELERATION_NOISE, gap_rate_noise: float = GAP_RATE_NOISE,
    ) -> None:
        check_floating(model)
        if filter not in FILTERS:
            raise ValueError(f"filter must be one of {sorted(FILTERS)}, got {filter!r}")
        if contact_source not in CONTACT_SOURCES:
            raise ValueError(f"contact_source must be one of {CONTACT_SOURCES}, got {contact_source!r}")
        gravity = float(-model.gravity[2])
        if model.gravity[0] != 0.0 or model.gravity[1] != 0.0 or gravity <= 0.0:
            raise ValueError(f"the estimator needs gravity along the world's -z, the model has "
                             f"{model.gravity}")
        self.model = model
        self.noise = noise if noise is not None else NoiseParameters()
        self.filter_name = filter
        self.contact_source = contact_source
        self.legs = LegKinematics(model, imu_frame, feet)
        self.extrinsics = self.legs.extrinsics
        self.feet = self.legs.feet
        self.accel_limit = _positive("accel_limit", accel_limit)
        self.gyro_limit = _positive("gyro_limit", gyro_limit)
        self.accel_jump_limit = _positive("accel_jump_limit", accel_jump_limit)
        self.max_imu_gap = _positive("max_imu_gap", max_imu_gap)
        self.gap_acceleration_noise = _non_negative("gap_acceleration_noise", gap_acceleration_noise)
        self.gap_rate_noise = _non_negative("gap_rate_noise", gap_rate_noise)
        self._gravity = gravity
        self._gate_probability = gate_probability
        self._init_args = (_positive("init_duration", init_duration), gravity, init_max_gyro,
                           init_max_accel_deviation)
        self._detector: ContactDetector | None = None
        if contact_source == "detection":
            share = gravity * float(model.mass.sum()) / len(self.feet)
            on = CONTACT_ON_FRACTION * share if contact_on_threshold is None else contact_on_threshold
            off = CONTACT_OFF_FRACTION * share if contact_off_threshold is None else contact_off_threshold
            self._detector = ContactDetector(model, self.feet, on, off)
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.last_problem = ""
        self._start_over()
        self.filter: LeggedFilter = self._new_filter()  # replaced at each (re)initialisation

    def _new_filter(self) -> LeggedFilter:
        return FILTERS[self.filter_name](noise=self.noise, gravity=self._gravity,
                                         gate_probability=self._gate_probability)

    def _start_over(self) -> None:
        duration, gravity, max_gyro, max_deviation = self._init_args
        self._initializer = StandingInitializer(self.extrinsics.rotation, duration, gravity, max_gyro,
                                                max_deviation)
        self._initialized = False
        self._time = -math.inf  # stamp the filter has been propagated to
        self._imu_stamp = -math.inf  # stamp of the held sample
        self._held_w = np.zeros(3)
        self._held_a = np.zeros(3)
        self._jump: FloatArray | None = None  # a dropped jump, accepted if the next sample confirms it
        self._interval = math.nan  # last IMU sample interval, for the gyro noise of the twist covariance
        self._period = math.nan  # nominal IMU period (mean interval of the standing window), for gap noise
        self._contacts: dict[str, bool] | None = None
        self._nis = math.nan

    def reset(self) -> None:
        """Forget the state and start initialising again (a time jump back, a new bag); counters are kept."""
        self.counters["resets"] += 1
        self._start_over()

    @property
    def initialized(self) -> bool:
        return self._initialized

    @property
    def status(self) -> str:
        """One line on the estimator's health."""
        if not self._initialized:
            text = (f"initializing: {self._initializer.elapsed:.2f} of {self._initializer.duration:g} s "
                    "standing still")
            reason = self._initializer.restart_reason
            return text + (f" (window restarted: {reason})" if reason else "")
        if self._contacts is None and self._detector is None:
            return "running on the IMU alone: no contact message yet"
        feet = self.filter.feet
        return f"running: {len(feet)} of {len(self.feet)} feet in contact" + (
            f"; last problem: {self.last_problem}" if self.last_problem else "")

    # ------------------------------------------------------------------------------------------------ IMU
    def add_imu(self, stamp: float, angular_velocity: FloatArray, linear_acceleration: FloatArray
                ) -> Estimate | None:
        """One IMU sample (IMU frame, raw); the estimate at ``stamp``, or None (initialising, or rejected)."""
        self.counters["imu_samples"] += 1
        w = np.array(angular_velocity, dtype=np.float64).reshape(3)
        a = np.array(linear_acceleration, dtype=np.float64).reshape(3)
        problem = self._imu_problem(stamp, w, a)
        if problem:
            self.counters["imu_rejected"] += 1
            self.last_problem = problem
            return None
        if stamp <= self._imu_stamp or stamp < self._time:
            self.counters["imu_out_of_order"] += 1
            last = max(self._imu_stamp, self._time)
            self.last_problem = f"IMU stamp {stamp:.9f} s is not after the last event ({last:.9f} s): dropped"
            return None
        problem = self._jump_problem(a)
        if problem:
            self.counters["imu_rejected"] += 1
            self.last_problem = problem
            return None
        if stamp - self._imu_stamp > self.max_imu_gap and self._imu_stamp > -math.inf:
            self.last_problem = (f"IMU gap of {stamp - self._imu_stamp:.3f} s > max_imu_gap "
                                 f"{self.max_imu_gap:g} s: initialising again")
            if self._initialized:
                self.reset()
            else:
                self._start_over()
        if not self._initialized:
            self._imu_stamp = stamp
            restarts = self._initializer.restarts
            done = self._initializer.add(stamp, w, a)
            self.counters["initialization_restarts"] += self._initializer.restarts - restarts
            self._held_w, self._held_a = w, a
            if not done:
                return None
            self._start(stamp)
        else:
            self._propagate_to(stamp, w, a)
            self._interval = stamp - self._imu_stamp
            self._imu_stamp = stamp
        self._held_w, self._held_a = w, a
        return self._estimate(stamp)

    def _imu_problem(self, stamp: float, w: FloatArray, a: FloatArray) -> str:
        if not (math.isfinite(stamp) and np.all(np.isfinite(w)) and np.all(np.isfinite(a))):
            return f"IMU sample at {stamp} s has a non-finite value: dropped, the previous one is held"
        accel, gyro = float(np.linalg.norm(a)), float(np.linalg.norm(w))
        if accel > self.accel_limit:
            return (f"IMU |a| = {accel:.1f} m/s^2 > accel_limit {self.accel_limit:g}: dropped as a spike, "
                    "the previous sample is held")
        if gyro > self.gyro_limit:
            return (f"IMU |w| = {gyro:.1f} rad/s > gyro_limit {self.gyro_limit:g}: dropped as a spike, "
                    "the previous sample is held")
        return ""

    def _jump_problem(self, a: FloatArray) -> str:
        """A one-sample spike: ``a`` jumps from the held sample and does not confirm a previous jump."""
        jump = float(np.linalg.norm(a - self._held_a))
        if self._imu_stamp == -math.inf or jump <= self.accel_jump_limit:
            self._jump = None
            return ""
        confirmed = self._jump is not None and float(np.linalg.norm(a - self._jump)) <= self.accel_jump_limit
        self._jump = None if confirmed else a
        if confirmed:
            return ""
        return (f"IMU specific force jumped by {jump:.1f} m/s^2 > accel_jump_limit "
                f"{self.accel_jump_limit:g}: dropped as a spike (a jump the next sample confirms is kept)")

    def _start(self, stamp: float) -> None:
        """Initialise the filter from the standing window: base at the odom origin, zero yaw, at rest."""
        init = self._initializer
        rotation = init.rotation
        self.filter = self._new_filter()
        self.filter.initialize(rotation, rotation @ self.extrinsics.lever, np.zeros(3),
                               init.accelerometer_bias, init.gyroscope_bias,
                               init.covariance(self.noise, self.extrinsics.lever))
        self._initialized = True
        self._time = stamp
        self._interval = init.elapsed / max(init.samples - 1, 1)
        self._period = self._interval

    def _propagate_to(self, stamp: float, w: FloatArray | None = None, a: FloatArray | None = None) -> None:
        """Step the filter to ``stamp``: with the held sample, or, given the new sample ``(w, a)`` at
        ``stamp``, with the line between the held and the new sample at the middle of the step (trapezoid);
        plus the gap noise of the part of the step beyond the nominal period (module doc)."""
        start = self._time
        if stamp <= start:
            return
        w_step, a_step = self._held_w, self._held_a
        if w is not None and a is not None:
            weight = (0.5 * (start + stamp) - self._imu_stamp) / (stamp - self._imu_stamp)
            w_step = w_step + weight * (w - w_step)
            a_step = a_step + weight * (a - a_step)
        s0 = max(start - self._imu_stamp - self._period, 0.0)
        s1 = max(stamp - self._imu_stamp - self._period, 0.0)
        variance = (0.0, 0.0)
        if s1 > 0.0:
            growth = (s1 * s1 - s0 * s0) / ((stamp - start) * (stamp - start))
            variance = (self.gap_acceleration_noise**2 * growth, self.gap_rate_noise**2 * growth)
        self.filter.propagate(w_step, a_step, stamp - start, variance)
        self._time = stamp

    # ----------------------------------------------------------------------------------------- contacts
    def add_contacts(self, stamp: float, contacts: Mapping[str, bool]) -> None:
        """The contact state of the named feet from now on (``message`` and ``schedule`` sources; ignored
        and counted with ``detection``). ValueError for a name that is not one of ``feet``."""
        if self._detector is not None:
            self.counters["contacts_ignored"] += 1
            return
        unknown = [name for name in contacts if name not in self.feet]
        if unknown:
            raise ValueError(f"contacts name unknown feet {unknown}; the estimator's feet are "
                             f"{list(self.feet)}")
        if self._contacts is None:
            self._contacts = dict.fromkeys(self.feet, False)
        self._contacts.update((name, bool(state)) for name, state in contacts.items())

    # ---------------------------------------------------------------------------------------- joints
    def add_joint_state(self, stamp: float, positions: FloatArray, velocities: FloatArray,
                        efforts: FloatArray) -> UpdateReport | None:
        """One joint state (``model.joint_names`` order, NaN where missing): the kinematic update of the
        feet in contact at ``stamp``; None before initialisation, without contact information, or when the
        sample is out of order or the IMU is silent."""
        self.counters["joint_states"] += 1
        if not self._initialized:
            return None
        if stamp < self._time:
            self.counters["joint_states_out_of_order"] += 1
            self.last_problem = f"joint state at {stamp:.9f} s is older than the filter ({self._time:.9f} s)"
            return None
        if stamp - self._imu_stamp > self.max_imu_gap:
            self.counters["joint_states_without_imu"] += 1
            self.last_problem = (f"no IMU sample for {stamp - self._imu_stamp:.3f} s: joint state at "
                                 f"{stamp:.9f} s not used")
            return None
        self._propagate_to(stamp)
        contacts = self._contact_state(positions, velocities, efforts)
        if contacts is None:
            return None
        measured = {foot.name: foot for foot in self.legs.measure(positions, self.noise.encoder_noise)}
        in_contact = [name for name in self.feet if contacts[name]]
        missing = [name for name in in_contact if name not in measured]
        if missing:
            self.counters["feet_without_joints"] += len(missing)
            self.last_problem = f"feet {missing} in contact have unmeasured leg joints: not used"
        try:
            report = self.filter.update_contacts([measured[name] for name in in_contact if name in measured])
        except ValueError as exc:  # a numerically broken update: the filter left its state untouched
            self.counters["updates_failed"] += 1
            self.last_problem = f"kinematic update at {stamp:.9f} s not applied: {exc}"
            return None
        self.counters["updates"] += 1
        self.counters["feet_rejected"] += len(report.rejected)
        if report.rejected:
            self.last_problem = f"feet {list(report.rejected)} failed the chi-square gate"
        self._nis = report.nis
        return report

    def _contact_state(self, positions: FloatArray, velocities: FloatArray, efforts: FloatArray
                       ) -> dict[str, bool] | None:
        if self._detector is None:
            return self._contacts
        base = self._base()
        q = np.concatenate([base.position, matrix_to_quat(base.rotation), positions])
        v = np.concatenate([base.linear_velocity, base.angular_velocity, velocities])
        return self._detector.update(q, v, efforts)

    # ----------------------------------------------------------------------------------------- output
    def _base(self) -> BaseState:
        f = self.filter
        return self.extrinsics.base_state(f.rotation, f.position, f.velocity, self._held_w - f.gyroscope_bias)

    def _estimate(self, stamp: float) -> Estimate | None:
        f = self.filter
        P = f.navigation_covariance()
        C, p, v, b_g = f.rotation, f.position, f.velocity, f.gyroscope_bias
        # one sum: a NaN or inf anywhere (or an overflow) makes it non-finite
        if not math.isfinite(P.sum() + C.sum() + p.sum() + v.sum() + b_g.sum()):
            self.last_problem = "the filter state became non-finite: initialising again"
            self.reset()
            return None
        base = self.extrinsics.base_output(
            C, p, v, self._held_w - b_g, P, self.noise.gyroscope_noise_density**2 / self._interval)
        return Estimate(
            stamp=stamp, position=base.position, orientation=base.orientation,
            linear_velocity=base.linear_velocity, angular_velocity=base.angular_velocity,
            pose_covariance=base.pose_covariance, twist_covariance=base.twist_covariance, nis=self._nis,
            contacts=f.feet,
        )

