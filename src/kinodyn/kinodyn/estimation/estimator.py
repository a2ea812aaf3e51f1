"""``LeggedEstimator``: IMU, joint states and contacts in, the base state with covariances out (Robot Dynamics
Essential, §5.3; docs/estimation.md, "Estimator").

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
- rolling feet: with ``foot_radius`` > 0 a stance foot is measured at the point its rolling sphere keeps
  fixed (``LegKinematics``, docs/estimation.md "Rolling feet"), from its orientation at touchdown (recorded
  when the filter appends it) and the filter's current orientation; 0 (the default) measures the foot frame.
- on the IMU alone (no foot in the filter): an unknown acceleration error, constant with standard deviation
  ``imu_only_acceleration_noise`` per axis since the last foot left, grows the position and velocity
  covariance as ``sigma^2 s^4 / 4`` and ``sigma^2 s^2`` (``imu_only_since``, ``status``), so the covariance
  keeps up with the drift the noise densities alone understate.
- output: the base pose and twist (``ImuExtrinsics.base_state``) with covariances mapped to first order from
  the filter's 15x15 navigation covariance and the gyro's white noise over one sample.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Final

import numba
import numpy as np

from kinodyn.estimation import loop
from kinodyn.estimation.contacts import ContactDetector
from kinodyn.estimation.events import CONTACTS, IMU, JOINTS, BatchResult, EventBatch, problem_text
from kinodyn.estimation.filter import LeggedFilter, UpdateReport
from kinodyn.estimation.initialization import StandingInitializer
from kinodyn.estimation.legs import BaseOutput, BaseState, LegKinematics, check_floating
from kinodyn.estimation.registry import filter_class
from kinodyn.estimation.settings import EstimatorSettings
from kinodyn.kernel import Kernel
from kinodyn.spatial.rotations import FloatArray, matrix_to_quat

if TYPE_CHECKING:
    from kinodyn.estimation.filter import KernelState
    from kinodyn.model import Model

COUNTERS = (
    "imu_samples", "imu_rejected", "imu_out_of_order", "joint_states", "joint_states_out_of_order",
    "joint_states_without_imu", "updates", "updates_failed", "feet_rejected", "feet_without_joints",
    "contacts_ignored", "initialization_restarts", "resets",
)
COUNTER_INDEX = {name: k for k, name in enumerate(COUNTERS)}
LOOP_SLOTS: Final = 10
"""Index of the filter's foot slots in ``LeggedEstimator._loop_head``."""
LoopHead = tuple["KernelState", np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                 tuple[np.ndarray, ...], np.ndarray, np.ndarray, np.ndarray, bool, bool]
"""``LeggedEstimator._loop_head``: the compiled loop's arguments that change only between batches."""
PROBLEM_COUNTERS = frozenset({
    "imu_rejected", "imu_out_of_order", "joint_states_out_of_order", "joint_states_without_imu",
    "feet_rejected", "feet_without_joints", "initialization_restarts", "resets", "updates_failed",
})
"""Counters of data faults: ``BatchResult.problems`` names those an event increased."""
# Default detection thresholds, as fractions of the weight each foot carries when all stand. On the synthetic
# quadruped trot (kinodyn.estimation.synthetic, 6 s) 0.6 / 0.3 gave no swing foot taken for a stance foot (the
# neglected swing inertia reaches 0.5 of the share) and 4 % of stance samples missed at the transitions.
CONTACT_ON_FRACTION = 0.6
CONTACT_OFF_FRACTION = 0.3


@dataclass(frozen=True)
class Estimate(BaseOutput):
    """The base (URDF root link) at ``stamp``, a ``BaseOutput``: ``position`` and ``orientation`` (quaternion
    x, y, z, w) in odom, ``linear_velocity`` and ``angular_velocity`` in the base frame; ``pose_covariance``
    (x, y, z, rotation about the odom axes) and ``twist_covariance`` (base frame), 6x6 in ROS order; ``nis``
    of the last kinematic update (nan if none applied a foot) and ``contacts``, the feet in the filter's
    state."""

    stamp: float
    nis: float
    contacts: tuple[str, ...]


class LeggedEstimator:
    """See the module doc. ``feet`` are foot link names (any number); ``settings`` (``EstimatorSettings``,
    default its defaults) with ``changes`` (its fields by name) replaced: ``filter`` names a registered filter
    (kinodyn.estimation.registry: ``"eskf"``, ``"invariant"``), ``filter_parameters`` its settings;
    ``contact_source`` is ``"message"``, ``"schedule"`` (both through ``add_contacts``) or
    ``"detection"`` (from the efforts of ``add_joint_state``, thresholds in newtons, default 0.6 / 0.3 of
    the weight share of one foot); ``foot_radius`` (m, one or one per foot) of rolling spherical feet centred
    at the foot frames (module doc). Configuration errors raise ValueError; data faults are counted in
    ``counters`` and described by ``last_problem``. Arrays follow ``model.joint_names``; NaN marks a joint
    that was not measured.
    """

    def __init__(self, model: Model, imu_frame: str, feet: Sequence[str],
                 settings: EstimatorSettings | None = None, **changes: object) -> None:
        check_floating(model)
        settings = settings or EstimatorSettings()
        if changes:
            if "filter" in changes and "filter_parameters" not in changes:
                changes["filter_parameters"] = None  # the new filter's defaults
            # any field by name; EstimatorSettings' own checks refuse a wrong value
            settings = replace(settings, **changes)  # type: ignore[arg-type]
        gravity = float(-model.gravity[2])
        if model.gravity[0] != 0.0 or model.gravity[1] != 0.0 or gravity <= 0.0:
            raise ValueError(f"the estimator needs gravity along the world's -z, the model has "
                             f"{model.gravity}")
        self.settings = settings
        self.model = model
        self.noise = settings.noise
        self.filter_name = settings.filter
        self._filter_class = filter_class(settings.filter)
        self.filter_parameters = settings.filter_parameters or self._filter_class.Parameters()
        self.contact_source = settings.contact_source
        self.legs = LegKinematics(model, imu_frame, feet, settings.foot_radius)
        self.extrinsics = self.legs.extrinsics
        self.feet = self.legs.feet
        self.accel_limit = settings.accel_limit
        self.gyro_limit = settings.gyro_limit
        self.accel_jump_limit = settings.accel_jump_limit
        self.max_imu_gap = settings.max_imu_gap
        self.gap_acceleration_noise = settings.gap_acceleration_noise
        self.gap_rate_noise = settings.gap_rate_noise
        self.imu_only_acceleration_noise = settings.imu_only_acceleration_noise
        self._gravity = gravity
        self._detector: ContactDetector | None = None
        if settings.contact_source == "detection":
            share = gravity * float(model.mass.sum()) / len(self.feet)
            on, off = settings.contact_on_threshold, settings.contact_off_threshold
            if (on, off) == (0.0, 0.0):
                on, off = CONTACT_ON_FRACTION * share, CONTACT_OFF_FRACTION * share
            self._detector = ContactDetector(model, self.feet, on, off)
        self._counts = np.zeros(len(COUNTERS), dtype=np.int64)
        self.counters = Counters(self._counts)
        self.last_problem = ""
        self._settings = np.array([
            self.accel_limit, self.gyro_limit, self.accel_jump_limit, self.max_imu_gap,
            self.gap_acceleration_noise, self.gap_rate_noise, self.noise.encoder_noise**2,
            self.noise.gyroscope_noise_density**2, self.imu_only_acceleration_noise,
        ])
        self._legs_arrays = self.legs.kernel_arrays()
        self._run: Kernel | None = None  # loop.run compiled for the types of process()'s arguments
        self._foot_index = {name: k for k, name in enumerate(self.feet)}
        # one-event batches of add_imu, add_contacts and add_joint_state (a call writes what its kind reads)
        self._single = {kind: EventBatch.empty(1, len(self.feet), self.legs.joint_count)
                        for kind in (IMU, CONTACTS, JOINTS)}
        for kind, batch in self._single.items():
            batch.kinds[0] = kind
        self._start_over()
        self.filter: LeggedFilter = self._new_filter()  # replaced at each (re)initialisation

    def _new_filter(self) -> LeggedFilter:
        parameters = self.filter_parameters
        cls: Any = self._filter_class  # registered: its constructor takes these (registry module doc)
        filt: LeggedFilter = cls(noise=self.noise, gravity=self._gravity,
                                 **{f.name: getattr(parameters, f.name) for f in fields(parameters)})
        return filt

    def _start_over(self) -> None:
        settings = self.settings
        self._initializer = StandingInitializer(self.extrinsics.rotation, settings.init_duration,
                                                self._gravity, settings.init_max_gyro,
                                                settings.init_max_accel_deviation)
        self._initialized = False
        # kinodyn.estimation.loop's state: [filter time, stamp of the held sample, last IMU interval (gyro
        # noise of the twist covariance), nominal period (gap noise), NIS, jump waiting for confirmation,
        # since when no foot is in the filter (-inf: feet in it)]
        self._clock = np.array([-math.inf, -math.inf, math.nan, math.nan, math.nan, 0.0, -math.inf])
        self._held = np.zeros(6)  # [w, a] of the held sample
        self._jump = np.zeros(3)  # specific force of a dropped jump, accepted if the next sample confirms it
        self._flags = np.full(len(self.feet), -1, dtype=np.int8)  # contacts; -1: no contact message yet
        self._head: LoopHead | None = None  # _loop_head's arguments

    def reset(self) -> None:
        """Forget the state and start initialising again (a time jump back, a new bag); counters are kept."""
        self.counters["resets"] += 1
        self._start_over()

    @property
    def initialized(self) -> bool:
        return self._initialized

    @property
    def imu_only_since(self) -> float | None:
        """Since when (stamp, s) the initialised filter has had no foot in contact: it runs on the IMU alone;
        None while a foot is in it, or before initialisation."""
        since = float(self._clock[loop.IMU_ONLY])
        return since if self._initialized and since > -math.inf else None

    @property
    def status(self) -> str:
        """One line on the estimator's health."""
        if not self._initialized:
            text = (f"initializing: {self._initializer.elapsed:.2f} of {self._initializer.duration:g} s "
                    "standing still")
            reason = self._initializer.restart_reason
            return text + (f" (window restarted: {reason})" if reason else "")
        if self._flags[0] < 0 and self._detector is None:
            return "running on the IMU alone: no contact message yet"
        since = self.imu_only_since
        if since is not None:
            return (f"running on the IMU alone: no foot in contact since {since:.3f} s (position and "
                    "velocity drift; covariance grown for it)")
        feet = self.filter.feet
        return f"running: {len(feet)} of {len(self.feet)} feet in contact" + (
            f"; last problem: {self.last_problem}" if self.last_problem else "")

    # ---------------------------------------------------------------------------------------------- events
    def contact_row(self, contacts: Mapping[str, bool]) -> np.ndarray:
        """An ``EventBatch.contacts`` row of ``{foot: in contact}``; ValueError for a name that is not one of
        ``feet`` (with detection, contacts are ignored: no check)."""
        row = np.full(len(self.feet), -1, dtype=np.int8)
        slots = self.contact_slots(list(contacts))
        row[slots] = [bool(state) for state in contacts.values()][:len(slots)]
        return row

    def contact_slots(self, names: Sequence[str]) -> np.ndarray:
        """The ``EventBatch.contacts`` columns of the feet ``names`` (a contacts message's, in its order);
        ValueError for a name that is not one of ``feet``; none with detection (contacts are ignored)."""
        if self._detector is not None:
            return np.zeros(0, np.intp)
        unknown = [name for name in names if name not in self._foot_index]
        if unknown:
            raise ValueError(f"contacts name unknown feet {unknown}; the estimator's feet are "
                             f"{list(self.feet)}")
        return np.array([self._foot_index[name] for name in names], np.intp)

    def process(self, batch: EventBatch, reports: bool = False) -> BatchResult:
        """The events of ``batch`` in order (what ``add_imu``, ``add_contacts`` and ``add_joint_state`` do one
        at a time): the compiled loop (kinodyn.estimation.loop) runs them and hands back the ones that
        initialise, reset or change the feet in the filter, which are finished here. ``reports``: fill
        ``BatchResult.reports`` (an UpdateReport per kinematic update: feet used and rejected)."""
        size = len(batch)
        kinds = np.ascontiguousarray(batch.kinds, dtype=np.int8)
        stamps = np.ascontiguousarray(batch.stamps, dtype=np.float64)
        imu = np.ascontiguousarray(batch.imu, dtype=np.float64)
        contacts = np.ascontiguousarray(batch.contacts, dtype=np.int8)
        positions = np.ascontiguousarray(batch.joints[:, 0], dtype=np.float64)
        result = BatchResult.empty(size)
        problem = np.zeros(size, np.int8)
        value = np.zeros(size)
        mask = np.zeros(size, np.int64)
        start = 0
        while start < size:
            head = self._head or self._loop_head()
            args = (*head, kinds, stamps, imu, contacts, positions, result.estimates, result.status,
                    result.nis, result.dof, problem, value, mask, start)
            if self._run is None:  # one signature: every argument is built here with fixed types
                types = (numba.typeof(arg) for arg in args)  # type: ignore[no-untyped-call]  # numba is unannotated
                self._run = Kernel(loop.run, *types)
            end, escape = self._run.call(*args)
            if reports or np.count_nonzero(problem[start:end]):
                self._word(batch, result, problem, value, mask, head[LOOP_SLOTS] if reports else None, start,
                           end)
            if escape == loop.DONE:
                break
            before = self._counts.copy()
            self._head = None  # the filter's arrays, feet or initialisation may change
            self._finish(escape, batch, end, result)
            increased = tuple(name for name, old, new in zip(COUNTERS, before, self._counts, strict=True)
                              if new > old and name in PROBLEM_COUNTERS)
            if increased:
                result.problems.append((end, increased, self.last_problem))
            start = end + 1
        return result

    def _loop_head(self) -> LoopHead:
        """The loop's arguments that change only when an event finished in Python changes the filter's arrays,
        its feet or the initialisation (``process`` builds them again then): the filter's compiled state, the
        estimator's state arrays, the leg kinematics, the extrinsics, the state slots of the filter's feet
        (``LOOP_SLOTS``), whether contacts are detected, whether the filter is initialised."""
        f = self.filter
        slots = np.array([self._foot_index[name] for name in f.feet], dtype=np.int64)
        self._head = (f.kernel_state(), self._clock, self._held, self._jump, self._flags, self._counts,
                      self._settings, self._legs_arrays, self.extrinsics.rotation, self.extrinsics.lever,
                      slots, self._detector is not None, self._initialized)
        return self._head

    def _word(self, batch: EventBatch, result: BatchResult, problem: np.ndarray, value: np.ndarray,
              mask: np.ndarray, slots: np.ndarray | None, start: int, end: int) -> None:
        """Problems of the events ``start..end`` the compiled loop finished, and their update reports when
        ``slots`` (the feet in the filter) are given."""
        for i in np.flatnonzero(problem[start:end]) + start:
            gated = [self.feet[k] for k in range(len(self.feet)) if mask[i] >> k & 1]
            counter, self.last_problem = problem_text(int(problem[i]), float(batch.stamps[i]),
                                                      float(value[i]), gated, self._limits)
            result.problems.append((int(i), (counter,), self.last_problem))
        if slots is None:
            return
        names = tuple(self.feet[k] for k in slots)
        for i in np.flatnonzero(result.status[start:end] == loop.UPDATED) + start:
            rejected = tuple(name for k, name in zip(slots, names, strict=True) if mask[i] >> k & 1)
            used = tuple(name for name in names if name not in rejected)
            result.reports[int(i)] = UpdateReport(used, rejected, (), (), float(result.nis[i]),
                                                  int(result.dof[i]))

    @property
    def _limits(self) -> dict[str, float]:
        return {"accel_limit": self.accel_limit, "gyro_limit": self.gyro_limit,
                "accel_jump_limit": self.accel_jump_limit}

    def _finish(self, escape: int, batch: EventBatch, i: int, result: BatchResult) -> None:
        """The event ``i`` the compiled loop handed back (``loop.ESCAPE_*``)."""
        stamp = float(batch.stamps[i])
        if escape == loop.ESCAPE_IMU:
            if self._initialize(stamp, batch.imu[i]):
                self._output(result, i)
        elif escape == loop.ESCAPE_NON_FINITE:
            self.last_problem = "the filter state became non-finite: initialising again"
            self.reset()
        else:
            positions, velocities, efforts = batch.joints[i]
            report = self._contact_update(stamp, positions, velocities, efforts)
            if report is not None:
                result.status[i] = loop.UPDATED
                result.nis[i], result.dof[i] = report.nis, report.dof
                result.reports[i] = report

    # ------------------------------------------------------------------------------------------------ IMU
    def add_imu(self, stamp: float, angular_velocity: FloatArray, linear_acceleration: FloatArray
                ) -> Estimate | None:
        """One IMU sample (IMU frame, raw); the estimate at ``stamp``, or None (initialising, or rejected)."""
        batch = self._single[IMU]
        batch.stamps[0] = stamp
        batch.imu[0, :3] = np.asarray(angular_velocity, dtype=np.float64).reshape(3)
        batch.imu[0, 3:] = np.asarray(linear_acceleration, dtype=np.float64).reshape(3)
        result = self.process(batch)
        if result.status[0] != loop.ESTIMATED:
            return None
        row = result.estimates[0]
        row.setflags(write=False)
        return Estimate(*BaseOutput.parts(row), stamp=stamp, nis=float(self._clock[loop.NIS]),
                        contacts=self.filter.feet)

    def _initialize(self, stamp: float, sample: FloatArray) -> bool:
        """A gated IMU sample while initialising, or after a gap longer than ``max_imu_gap`` (which starts the
        initialisation over): True once the filter started at ``stamp``."""
        imu_stamp = float(self._clock[loop.IMU_STAMP])
        if stamp - imu_stamp > self.max_imu_gap and imu_stamp > -math.inf:
            self.last_problem = (f"IMU gap of {stamp - imu_stamp:.3f} s > max_imu_gap "
                                 f"{self.max_imu_gap:g} s: initialising again")
            if self._initialized:
                self.reset()
            else:
                self._start_over()
        self._clock[loop.IMU_STAMP] = stamp
        restarts = self._initializer.restarts
        done = self._initializer.add(stamp, sample[:3], sample[3:])
        if self._initializer.restarts > restarts:
            self.counters["initialization_restarts"] += self._initializer.restarts - restarts
            reason = self._initializer.restart_reason
            self.last_problem = (f"standing window restarted at {stamp:.3f} s: {reason} "
                                 "(the robot must stand still to initialise)")
        self._held[:] = sample
        if done:
            self._start(stamp)
        return done

    def _start(self, stamp: float) -> None:
        """Initialise the filter from the standing window: base at the odom origin, zero yaw, at rest."""
        init = self._initializer
        rotation = init.rotation
        self.filter = self._new_filter()
        self.filter.initialize(rotation, rotation @ self.extrinsics.lever, np.zeros(3),
                               init.accelerometer_bias, init.gyroscope_bias,
                               init.covariance(self.noise, self.extrinsics.lever))
        self._initialized = True
        self._clock[loop.TIME] = stamp
        self._clock[loop.IMU_ONLY] = stamp  # no foot in the filter until the first kinematic update
        self._clock[loop.INTERVAL] = self._clock[loop.PERIOD] = init.elapsed / max(init.samples - 1, 1)

    def _output(self, result: BatchResult, i: int) -> None:
        """The estimate of the filter's state into ``result`` (event ``i``); a reset if it is not finite."""
        if loop.estimate_row(self.filter.kernel_state(), self._clock, self._held, self._settings,
                             self.extrinsics.rotation, self.extrinsics.lever, result.estimates[i]):
            result.status[i] = loop.ESTIMATED
        else:
            self.last_problem = "the filter state became non-finite: initialising again"
            self.reset()

    # ----------------------------------------------------------------------------------------- contacts
    def add_contacts(self, stamp: float, contacts: Mapping[str, bool]) -> None:
        """The contact state of the named feet from now on (``message`` and ``schedule`` sources; ignored
        and counted with ``detection``). ValueError for a name that is not one of ``feet``."""
        batch = self._single[CONTACTS]
        batch.stamps[0] = stamp
        batch.contacts[0] = self.contact_row(contacts)
        self.process(batch)

    # ---------------------------------------------------------------------------------------- joints
    def add_joint_state(self, stamp: float, positions: FloatArray, velocities: FloatArray,
                        efforts: FloatArray) -> UpdateReport | None:
        """One joint state (``model.joint_names`` order, NaN where missing): the kinematic update of the
        feet in contact at ``stamp``; None before initialisation, without contact information, or when the
        sample is out of order or the IMU is silent."""
        batch = self._single[JOINTS]
        batch.stamps[0] = stamp
        batch.joints[0] = positions, velocities, efforts
        return self.process(batch, reports=True).reports.get(0)

    def _contact_update(self, stamp: float, positions: FloatArray, velocities: FloatArray,
                        efforts: FloatArray) -> UpdateReport | None:
        """The kinematic update of a joint state the compiled loop propagated to: the feet in contact (from
        the messages or detected) whose legs are measured go to ``update_contacts``."""
        contacts = self._contact_state(positions, velocities, efforts)
        if contacts is None:
            return None
        f = self.filter
        measured = {foot.name: foot for foot in self.legs.measure(positions, self.noise.encoder_noise,
                                                                  f.rotation, f.feet)}
        in_contact = [name for name in self.feet if contacts[name]]
        missing = [name for name in in_contact if name not in measured]
        if missing:
            self.counters["feet_without_joints"] += len(missing)
            self.last_problem = f"feet {missing} in contact have unmeasured leg joints: not used"
        try:
            report = f.update_contacts([measured[name] for name in in_contact if name in measured])
        except ValueError as exc:  # a numerically broken update: the filter left its state untouched
            self.counters["updates_failed"] += 1
            self.last_problem = f"kinematic update at {stamp:.9f} s not applied: {exc}"
            return None
        self.legs.touch_down(report.added, f.rotation)
        if f.feet:
            self._clock[loop.IMU_ONLY] = -math.inf
        elif self._clock[loop.IMU_ONLY] == -math.inf:
            self._clock[loop.IMU_ONLY] = stamp
        self.counters["updates"] += 1
        self.counters["feet_rejected"] += len(report.rejected)
        if report.rejected:
            self.last_problem = f"feet {list(report.rejected)} failed the chi-square gate"
        self._clock[loop.NIS] = report.nis
        return report

    def _contact_state(self, positions: FloatArray, velocities: FloatArray, efforts: FloatArray
                       ) -> dict[str, bool] | None:
        if self._detector is None:
            if self._flags[0] < 0:
                return None
            return {name: bool(flag) for name, flag in zip(self.feet, self._flags, strict=True)}
        base = self._base()
        q = np.concatenate([base.position, matrix_to_quat(base.rotation), positions])
        v = np.concatenate([base.linear_velocity, base.angular_velocity, velocities])
        return self._detector.update(q, v, efforts)

    # ----------------------------------------------------------------------------------------- output
    def _base(self) -> BaseState:
        f = self.filter
        w = self._held[:3] - f.gyroscope_bias
        return self.extrinsics.base_state(f.rotation, f.position, f.velocity, w)


class Counters(MutableMapping[str, int]):
    """``LeggedEstimator.counters``: the names of COUNTERS over the array the compiled loop counts in."""

    def __init__(self, counts: np.ndarray) -> None:
        self._counts = counts

    def __getitem__(self, name: str) -> int:
        return int(self._counts[COUNTER_INDEX[name]])

    def __setitem__(self, name: str, value: int) -> None:
        self._counts[COUNTER_INDEX[name]] = value

    def __delitem__(self, name: str) -> None:
        raise TypeError("estimator counters cannot be removed")

    def __iter__(self) -> Iterator[str]:
        return iter(COUNTERS)

    def __len__(self) -> int:
        return len(COUNTERS)
