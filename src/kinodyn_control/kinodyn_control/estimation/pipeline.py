"""The state estimator's message pipeline, shared by the node and ``kinodyn estimate``.

Messages (rclpy or rosbags objects) go into a ``StampMerger`` by header stamp, or a bag's messages as
arrays (``take_block``); the released events, as arrays (``Released``), drive
``kinodyn.estimation.LeggedEstimator`` (Robot Dynamics Essential §5.3: IMU propagation, leg-kinematics
update) in batches;
every IMU message then gives one nav_msgs/Odometry and its TF, and diagnostics come every
``1 / diagnostics_rate`` seconds of stamp time. Nothing here reads a clock or runs an executor: the outputs
depend only on the messages of each stream in their order, so a live run and an offline run over the same bag
agree.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from kinodyn.estimation.estimator import LeggedEstimator
from kinodyn.estimation.events import CONTACTS, IMU, JOINTS, BatchResult, EventBatch
from kinodyn.estimation.legs import foot_radii
from kinodyn.estimation.loop import ESTIMATED, UPDATED
from kinodyn.estimation.noise import NoiseParameters
from kinodyn.estimation.registry import FILTERS
from kinodyn.estimation.settings import EstimatorSettings
from kinodyn_common.conversions import InputError, quoted
from kinodyn_common.problem_log import DistinctProblemLog, error_text
from kinodyn_common.stamps import NS, stamp_to_ns

from kinodyn_control.estimation.imu_gaps import ImuGaps
from kinodyn_control.estimation.merger import Event, Reset, StampMerger, Verdict
from kinodyn_control.estimation.messages import (
    ImuSample,
    JointMap,
    JointSample,
    contact_flags,
    diagnostics_message,
    estimate_fields,
    imu_sample,
    non_finite_estimate_field,
    odometry_message,
    status_name,
    transform_message,
)
from kinodyn_control.estimation.released import Released
from kinodyn_control.estimation.stamps import CAUSES as STAMP_CAUSES
from kinodyn_control.estimation.stamps import StampBounds

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from kinodyn.sim.collision import ContactSphere
    from kinodyn_common.raw_messages import ContactStatesView, ImuView, JointStateView
    from sensor_msgs.msg import Imu, JointState

    from kinodyn import Model
    from kinodyn_control.controllers.base import Logger
    from kinodyn_control.estimation.input_block import InputBlock
    from kinodyn_interfaces.msg import ContactStates

NOISE_PARAMETERS = tuple(
    n.name for n in fields(NoiseParameters)
    if n.name not in {"initial_position", "initial_orientation", "initial_gyroscope_bias"}
)
"""The NoiseParameters fields the estimator uses: the standing initialisation builds the initial covariance
(position and yaw exactly known, tilt from the accelerometer-bias prior, gyro bias from the window), so the
other ``initial_*`` standard deviations, used only by a filter initialised without a covariance, are not
parameters of the node."""
KINDS = {"imu": IMU, "contacts": CONTACTS, "joint_states": JOINTS}
"""The estimator's event kind of each stream."""
OUTPUT_PARAMETERS = frozenset({"odom_frame", "base_frame", "diagnostics_rate", "max_stamp_lead",
                               "max_stamp_lag"})
"""Parameters a running estimator takes without starting over (they shape the published messages, or which
messages are refused before the merger)."""
PROBLEM_COUNTERS = (
    "imu_rejected", "imu_out_of_order", "joint_states_out_of_order", "joint_states_without_imu",
    "feet_rejected", "feet_without_joints", "initialization_restarts", "resets",
)
"""LeggedEstimator counters of data faults: an increase is one (throttled) warning with its last_problem."""
DROP_CAUSES = ("duplicate", "late", "stale", "bad", "refused", *STAMP_CAUSES)
"""Why a message was not used: the merger's verdicts, unusable ("bad"), refused by the estimator, stamped
ahead of the clock ("ahead") or in another clock domain ("clock"; estimation.stamps)."""
TOPICS = {"imu": "imu/data", "joint_states": "joint_states", "contacts": "contacts"}
"""The node's topic of each stream (the lines name topics); ``contact_schedule`` for the schedule source."""
DROP_REASONS = {
    Verdict.DUPLICATE: "not after the newest message of its topic (duplicated or out of order)",
    Verdict.LATE: "its topic was silent for more than stream_timeout and the estimate moved past this stamp",
    Verdict.STALE: "it belongs to the time before a jump back that the other topics made",
}


def filter_options() -> dict[str, Any]:
    """Name -> default of every registered filter's settings (the fields of their ``Parameters``): one flat
    parameter per name, used by the filters that have it. ValueError if two filters give one name different
    defaults, or a name is also an estimator parameter."""
    options: dict[str, Any] = {}
    for name, cls in FILTERS.items():
        for f in fields(cls.Parameters):
            if f.name in options and options[f.name] != f.default:
                raise ValueError(f"filter {name!r} gives parameter {f.name} the default {f.default!r}, "
                                 f"another filter {options[f.name]!r}: one parameter has one default")
            options[f.name] = f.default
    clash = set(options) & {f.name for f in fields(EstimatorParameters)}
    if clash:
        raise ValueError(f"filter parameter(s) {', '.join(sorted(clash))} clash with estimator parameters")
    return options


def _core(name: str) -> Any:  # noqa: ANN401  (dataclasses' Field.default: the field's own type)
    """The default of ``EstimatorSettings`` field ``name`` (the core owns it)."""
    return next(f.default for f in fields(EstimatorSettings) if f.name == name)


@dataclass(frozen=True)
class EstimatorParameters:
    """Everything the pipeline is configured by; the node's parameters carry the same names, flat (the
    ``noise`` fields and ``filter_options``, the settings of the registered filters, by their own names).
    The estimator's fields take their defaults and validation from ``kinodyn.estimation.EstimatorSettings``
    (``settings()``), the filter's from its ``Parameters``; docs/nodes/state_estimator.md lists them with
    their units."""

    filter: str = _core("filter")
    contact_source: str = _core("contact_source")
    feet: tuple[str, ...] = ()  # empty: the names of the first contacts message
    imu_frame: str = ""  # empty: the Imu messages' header.frame_id
    noise: NoiseParameters = field(default_factory=NoiseParameters)
    filter_options: Mapping[str, Any] = field(default_factory=dict)  # missing names: their defaults
    init_duration: float = _core("init_duration")
    accel_limit: float = _core("accel_limit")
    gyro_limit: float = _core("gyro_limit")
    accel_jump_limit: float = _core("accel_jump_limit")
    max_imu_gap: float = _core("max_imu_gap")
    gap_acceleration_noise: float = _core("gap_acceleration_noise")
    gap_rate_noise: float = _core("gap_rate_noise")
    foot_radius: float = -1.0  # m, rolling spherical feet; < 0: the URDF's sphere at each foot (else 0)
    init_max_gyro: float = _core("init_max_gyro")
    init_max_accel_deviation: float = _core("init_max_accel_deviation")
    contact_on_threshold: float = _core("contact_on_threshold")
    contact_off_threshold: float = _core("contact_off_threshold")
    stream_timeout: float = 0.25
    reset_jump: float = 1.0
    max_stamp_lead: float = 0.5  # s a stamp may be ahead of the clock
    max_stamp_lag: float = 300.0  # s beyond which a stamp is of another clock domain (ahead or behind)
    imu_rate: float = 0.0  # Hz, nominal IMU rate for the missing-sample count; 0: from the first intervals
    imu_only_acceleration_noise: float = _core("imu_only_acceleration_noise")
    odom_frame: str = "odom"
    base_frame: str = ""  # empty: the URDF root link
    diagnostics_rate: float = 2.0

    def __post_init__(self) -> None:
        options = filter_options()
        unknown = sorted(set(self.filter_options) - set(options))
        if unknown:
            raise ValueError(f"unknown filter parameter(s) {', '.join(unknown)}; the filters' are "
                             f"{', '.join(sorted(options))}")
        object.__setattr__(self, "filter_options", {**options, **self.filter_options})
        self.settings()  # the estimator's and the filter's validation
        feet = tuple(self.feet)
        if any(not foot for foot in feet) or len(set(feet)) != len(feet):
            raise ValueError(f"parameter feet must be distinct, non-empty link names, got {list(feet)}")
        if self.contact_source == "detection" and not feet:
            raise ValueError("contact_source detection needs parameter feet (the foot links to watch)")
        object.__setattr__(self, "feet", feet)
        for name in ("stream_timeout", "reset_jump", "diagnostics_rate"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"parameter {name} must be a positive finite number, got {value}")
        if not math.isfinite(self.foot_radius):
            raise ValueError(f"parameter foot_radius must be finite (m; < 0: from the URDF), got "
                             f"{self.foot_radius}")
        StampBounds(self.max_stamp_lead, self.max_stamp_lag)
        if not (math.isfinite(self.imu_rate) and self.imu_rate >= 0.0):
            raise ValueError(f"parameter imu_rate must be finite and >= 0 (Hz; 0: from the stamps), got "
                             f"{self.imu_rate}")
        if not self.odom_frame:
            raise ValueError("parameter odom_frame must name the odometry frame (REP-105: 'odom')")

    def settings(self, foot_radius: float | tuple[float, ...] = 0.0) -> EstimatorSettings:
        """The core's settings of these parameters (ValueError naming a bad one), with ``foot_radius`` (the
        pipeline resolves a negative one from the URDF)."""
        parameters = FILTERS[self.filter].Parameters if self.filter in FILTERS else None
        filter_parameters = None if parameters is None else parameters(
            **{f.name: self.filter_options[f.name] for f in fields(parameters)})
        core = {f.name for f in fields(EstimatorSettings)} - {"filter_parameters", "noise", "foot_radius"}
        return EstimatorSettings(filter_parameters=filter_parameters, noise=self.noise,
                                 foot_radius=foot_radius, **{name: getattr(self, name) for name in core})

    @classmethod
    def flat_defaults(cls) -> dict[str, Any]:
        """Parameter name -> default value, the noise fields and filter options flattened (what the node
        declares)."""
        return cls().flat()

    def flat(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "noise":
                values.update({name: getattr(self.noise, name) for name in NOISE_PARAMETERS})
            elif f.name == "filter_options":
                values.update(self.filter_options)
            else:
                values[f.name] = list(self.feet) if f.name == "feet" else getattr(self, f.name)
        return values

    @classmethod
    def from_flat(cls, values: Mapping[str, Any]) -> EstimatorParameters:
        """From flat parameter values (a node's parameters, a ROS params file's ``ros__parameters``); names
        not given keep their defaults, an unknown name is a ValueError listing the accepted ones."""
        noise_names = set(NOISE_PARAMETERS)
        option_names = set(filter_options())
        own = {f.name for f in fields(cls)} - {"noise", "filter_options"}
        unknown = sorted(set(values) - own - noise_names - option_names)
        if unknown:
            raise ValueError(
                f"unknown estimator parameter(s) {', '.join(unknown)}; accepted: "
                f"{', '.join(sorted(own | noise_names | option_names))}"
            )
        noise = NoiseParameters(**{k: v for k, v in values.items() if k in noise_names})
        options = {k: v for k, v in values.items() if k in option_names}
        kwargs = {k: v for k, v in values.items() if k in own}
        if "feet" in kwargs:
            kwargs["feet"] = tuple(kwargs["feet"])
        return cls(noise=noise, filter_options=options, **kwargs)


class Output(NamedTuple):
    """One message to publish: ``kind`` is ``odometry`` (offline: EstimateRows), ``tf`` or
    ``diagnostics``. (Named tuples: a live pipeline builds one per estimate.)"""

    kind: str
    message: Any


class EstimateRows(NamedTuple):
    """Odometry outputs of an offline pipeline: their stamps (ns), frames and estimate rows (the numbers
    ``odometry_message`` publishes, kinodyn.estimation.events.ESTIMATE_SIZE; bags.cdr.odometry_rows_cdr)."""

    stamps_ns: np.ndarray
    frame_id: str
    child_frame_id: str
    rows: np.ndarray


@dataclass
class PipelineCounts:
    """What the pipeline did, counted in release (stamp) order, so the counts are as deterministic as the
    outputs: a dropped message is counted with the next released message of its topic (``Event.dropped``)."""

    processed: Counter[str] = field(default_factory=Counter)  # released messages per stream
    dropped: Counter[str] = field(default_factory=Counter)  # by cause: duplicate, late, stale, bad, refused
    waiting: int = 0  # released before the estimator could be built (imu frame or feet unknown)
    non_finite: int = 0  # estimates not published because a number was not finite (the filter is reset)
    odometry: int = 0
    resets: int = 0  # jumps back in time


class EstimatorPipeline:
    """Messages in (``on_imu``, ``on_joint_state``, ``on_contacts``), messages out (``drain``, ``flush``)."""

    def __init__(self, model: Model, params: EstimatorParameters, logger: Logger,
                 diagnostics_name: str = "state_estimator", offline: bool = False,
                 spheres: Iterable[ContactSphere] = (), topics: Mapping[str, str] | None = None,
                 clock_name: str = "the node's clock", estimate_rows: bool = False) -> None:
        """``spheres``: the URDF's collision spheres (``kinodyn.sim.collision_spheres``), where a negative
        ``foot_radius`` takes each foot's radius from. ``offline``: no TF outputs (nobody consumes them); the
        estimates as ``EstimateRows`` instead of Odometry messages; the released messages run through the
        estimator only in ``drain``, ``flush`` and ``take_block``, as one batch (the outputs do not depend on
        when the batches run). ``topics``: the topic of each stream, as the lines name them (default
        TOPICS); ``clock_name``: what the ``clock_ns`` of ``on_*`` is, as the lines name it.
        ``estimate_rows``: each estimate as ``EstimateRows`` (one row) instead of an Odometry and its TF, for
        a caller that publishes only some of them (``odometry_message``, ``transform_message``)."""
        if not model.floating_base:
            raise ValueError("the state estimator needs the floating-base model of the robot")
        self._model = model
        self._joints = JointMap(model.joint_names)
        self._log = logger
        self._problems = DistinctProblemLog(logger)
        self._diagnostics_name = diagnostics_name
        self._offline = offline
        self._estimate_rows = offline or estimate_rows
        self._spheres = tuple(spheres)
        self._topics = dict(topics) if topics is not None else None
        self._clock_name = clock_name
        self.counts = PipelineCounts()
        self._outputs: list[Output] = []
        self._configure(params)

    # configuration -----------------------------------------------------------------------------------------

    @property
    def params(self) -> EstimatorParameters:
        return self._params

    @property
    def base_frame(self) -> str:
        return self._params.base_frame or self._model.body_names[1]  # body 1: the root link on the free flyer

    @property
    def streams(self) -> tuple[str, ...]:
        """The merged streams: the contacts stream only when contacts come from messages."""
        return self._streams

    def _configure(self, params: EstimatorParameters) -> None:
        if params.imu_frame and params.imu_frame not in self._model.frame_names:
            raise ValueError(self._unknown_link("parameter imu_frame", params.imu_frame))
        unknown = [foot for foot in params.feet if foot not in self._model.frame_names]
        if unknown:
            raise ValueError(self._unknown_link("parameter feet", unknown[0]))
        self._params = params
        detection = params.contact_source == "detection"
        self._streams = ("imu", "joint_states") if detection else ("imu", "contacts", "joint_states")
        self._bounds = StampBounds(params.max_stamp_lead, params.max_stamp_lag)
        self._imu_gaps = ImuGaps(params.imu_rate)
        self._kinds = np.array([KINDS[stream] for stream in self.streams], np.int8)
        self._merger = StampMerger(
            self.streams, round(params.stream_timeout * NS), round(params.reset_jump * NS)
        )
        self._excluded: frozenset[str] = frozenset()
        self._estimator: LeggedEstimator | None = None
        self._cycle_template: EventBatch | None = None  # of the estimator's cycles (_cycle_batch)
        self._slots: dict[tuple[str, ...], np.ndarray] = {}  # the estimator's contact slots per foot names
        self._imu_frame = params.imu_frame
        self._feet = params.feet
        self._next_diagnostics_ns: int | None = None
        self._nis: list[float] = []
        self._last_nis = math.nan
        self._last_ns: dict[str, int] = {}  # stamp of the last processed event per stream (this epoch)
        self._now_ns: int | None = None  # stamp of the last processed event
        self._imu_window = (0, 0)  # IMU samples received and missing over the last diagnostics period
        self._diagnostics_ns: int | None = None  # stamp of the last diagnostics
        self._imu_only_reported = False

    def reconfigure(self, params: EstimatorParameters) -> bool:
        """Apply new parameters. Output parameters (OUTPUT_PARAMETERS) apply at once; any other change drops
        what is buffered and starts the filter over, with one log line naming the changed parameters.
        Returns whether the filter was reset."""
        old, new = self._params.flat(), params.flat()
        changed = sorted(name for name in new if new[name] != old[name])
        if all(name in OUTPUT_PARAMETERS for name in changed):
            self._params = params
            self._bounds = StampBounds(params.max_stamp_lead, params.max_stamp_lag)
            return False
        self._configure(params)
        self._log.info(
            f"estimator reset: parameter(s) {', '.join(changed)} changed; initialising again from the next "
            "messages"
        )
        return True

    def _unknown_link(self, what: str, name: str) -> str:
        return f"{what} {quoted(name)} is not a link of the URDF; links: {', '.join(self._model.frame_names)}"

    # input -------------------------------------------------------------------------------------------------

    def on_imu(self, msg: Imu | ImuView, arrival_ns: int | None = None, clock_ns: int | None = None) -> None:
        """A sensor_msgs/Imu; its ``header.frame_id`` must be a URDF link (the IMU's), unless ``imu_frame``
        is set. ``arrival_ns`` (every ``on_*``): when it arrived on a monotonic clock, for a live node (a
        topic still arriving is not taken for silent); None when replaying a bag. ``clock_ns``: the
        receiver's clock when it arrived (the node's ROS clock; a bag's log time), which bounds the stamp
        (estimation.stamps: ``max_stamp_lead``, ``max_stamp_lag``); None only for a caller without a clock
        (tests of the ordering), whose stamps are then not bounded."""
        read = self._read("imu", lambda: (stamp_to_ns(msg.header.stamp), imu_sample(msg)))
        if read is not None:
            self.on_imu_sample(*read, arrival_ns, clock_ns)

    def on_imu_sample(self, stamp_ns: int, sample: ImuSample, arrival_ns: int | None = None,
                      clock_ns: int | None = None) -> None:
        """The readings of one IMU message stamped ``stamp_ns`` (``on_imu`` converts a message to this)."""
        self._take("imu", stamp_ns, lambda: self._imu(sample), arrival_ns, clock_ns)

    def on_joint_state(self, msg: JointState | JointStateView, arrival_ns: int | None = None,
                       clock_ns: int | None = None) -> None:
        """A sensor_msgs/JointState, mapped by name (unknown names ignored, missing joints NaN)."""
        read = self._read("joint_states", lambda: (stamp_to_ns(msg.header.stamp), self._joints.sample(msg)))
        if read is not None:
            self.on_joint_sample(*read, arrival_ns, clock_ns)

    def on_joint_sample(self, stamp_ns: int, sample: JointSample, arrival_ns: int | None = None,
                        clock_ns: int | None = None) -> None:
        """One joint state stamped ``stamp_ns`` in the model's joint order (``on_joint_state`` maps a message
        to this); a sample of another size is unusable."""
        self._take("joint_states", stamp_ns, lambda: self._joint_sample(sample), arrival_ns, clock_ns)

    def on_contacts(self, msg: ContactStates | ContactStatesView, arrival_ns: int | None = None,
                    clock_ns: int | None = None) -> None:
        """A kinodyn_interfaces/ContactStates (measured contacts or a controller's schedule)."""
        if self._params.contact_source == "detection":
            return  # the node does not subscribe then; a bag may still carry the topic
        read = self._read("contacts", lambda: (stamp_to_ns(msg.header.stamp), contact_flags(msg)))
        if read is not None:
            self.on_contact_flags(*read, arrival_ns, clock_ns)

    def on_contact_flags(self, stamp_ns: int, flags: Mapping[str, bool], arrival_ns: int | None = None,
                         clock_ns: int | None = None) -> None:
        """``{foot link: in contact}`` stamped ``stamp_ns`` (``on_contacts`` converts a message to this)."""
        if self._params.contact_source == "detection":
            return
        self._take("contacts", stamp_ns, lambda: flags, arrival_ns, clock_ns)

    def on_cycle(self, stamp_ns: int, imu: ImuSample, joints: JointSample,
                 contacts: Mapping[str, bool] | None = None) -> None:
        """One control cycle's samples, all stamped ``stamp_ns`` (a controller's update): what
        ``on_imu_sample``, ``on_contact_flags`` (when ``contacts`` is given) and ``on_joint_sample`` one after
        the other do, as one batch built straight from the samples when it can be (``_take_cycle``)."""
        if self._take_cycle(stamp_ns, imu, joints, contacts):
            return
        self.on_imu_sample(stamp_ns, imu)
        if contacts is not None:
            self.on_contact_flags(stamp_ns, contacts)
        self.on_joint_sample(stamp_ns, joints)

    def _take_cycle(self, stamp_ns: int, imu: ImuSample, joints: JointSample,
                    contacts: Mapping[str, bool] | None) -> bool:
        """``on_cycle`` as one estimator batch of the samples, when the outcome is that of the samples one by
        one: the estimator running, every stream live, each sample usable (the IMU's frame the estimator's,
        one value per joint, contacts given and naming its feet unless they are detected), no diagnostics due
        at ``stamp_ns`` (they would split the batch), and the merger taking the cycle as one
        (``StampMerger.push_cycle``). Else False, nothing changed."""
        estimator, due = self._estimator, self._next_diagnostics_ns
        if estimator is None or self._offline or self._excluded or due is None or stamp_ns >= due:
            return False
        if not self._params.imu_frame and imu.frame_id != self._imu_frame:
            return False  # the one-by-one path refuses it, or learns nothing new from it
        try:
            self._joint_sample(joints)
        except InputError:
            return False  # the one-by-one path says why
        streams = self.streams
        batch = self._cycle_batch(estimator)
        if self._params.contact_source != "detection":  # streams imu, contacts (row 1), joint_states
            if contacts is None:
                return False
            try:
                slots = self._contact_slots(estimator, tuple(contacts))
            except ValueError:
                return False
            batch.contacts[1, slots] = [bool(flag) for flag in contacts.values()]
        dropped = self._merger.push_cycle(stamp_ns, len(streams))
        if dropped is None:
            return False
        batch.stamps[:] = stamp_ns / NS
        batch.imu[0, :3], batch.imu[0, 3:] = imu.angular_velocity, imu.linear_acceleration
        rows = batch.joints[-1]
        rows[0], rows[1], rows[2] = joints.positions, joints.velocities, joints.efforts
        counts = self.counts
        for stream, lost in zip(streams, dropped, strict=True):  # _count of the cycle's events
            counts.processed[stream] += 1
            self._last_ns[stream] = stamp_ns
            if lost:
                counts.dropped.update(lost)
        self._imu_gaps.add_stamp(stamp_ns)
        self._now_ns = stamp_ns
        result = estimator.process(batch)
        if result.problems:
            self._warn_problems(result, range(len(streams)))
        self._outputs_of(result, [stamp_ns] * len(streams))
        return True

    def _cycle_batch(self, estimator: LeggedEstimator) -> EventBatch:
        """A new batch for one cycle's events (one per stream, in order): the kinds set, the rows NaN (-1 for
        contacts), copied from a template made once per estimator (the estimator may keep rows of a batch)."""
        template = self._cycle_template
        if template is None:
            template = EventBatch.empty(len(self.streams), len(estimator.feet), len(self._model.joint_names))
            template.kinds[:] = self._kinds
            self._cycle_template = template
        return EventBatch(template.kinds.copy(), template.stamps.copy(), template.imu.copy(),
                          template.contacts.copy(), template.joints.copy())

    def topic(self, stream: str) -> str:
        """The topic of ``stream`` (the constructor's ``topics``, else the node's)."""
        if self._topics is not None:
            return self._topics.get(stream, stream)
        if stream == "contacts" and self._params.contact_source == "schedule":
            return "contact_schedule"
        return TOPICS[stream]

    def _imu(self, sample: ImuSample) -> ImuSample:
        if self._params.imu_frame:
            return sample
        if sample.frame_id not in self._model.frame_names:
            raise InputError(
                "imu_frame", self._unknown_link("Imu header.frame_id", sample.frame_id)
                + "; set parameter imu_frame to the IMU's link if the driver's frame is named otherwise",
            )
        if self._imu_frame and sample.frame_id != self._imu_frame:
            raise InputError(
                "imu_frame_changed",
                f"Imu header.frame_id {quoted(sample.frame_id)} differs from the first message's "
                f"{self._imu_frame!r}; one IMU per estimator",
            )
        return sample

    def _joint_sample(self, sample: JointSample) -> JointSample:
        n = len(self._model.joint_names)
        sizes = [len(sample.positions), len(sample.velocities), len(sample.efforts)]
        if sizes != [n, n, n]:
            raise InputError("length_mismatch", f"joint sample has {sizes} positions, velocities and "
                             f"efforts; the model has {n} joints")
        return sample

    def _bad(self, stream: str, exc: Exception) -> None:
        """An unusable message: dropped (counted) with one line (throttled per topic and cause)."""
        what = f"{self.topic(stream)} message"
        self._merger.drop(stream, "bad")
        self._problems.warn((what, getattr(exc, "key", type(exc).__name__)),
                            f"ignoring {what}: {error_text(exc)}")

    def _read(self, stream: str, read: Callable[[], tuple[int, Any]]) -> tuple[int, Any] | None:
        """``(stamp_ns, payload)`` of a message, or None when it is unusable (``_bad``)."""
        try:
            return read()
        except (InputError, AttributeError, TypeError, ValueError) as exc:
            self._bad(stream, exc)
            return None

    def _take(self, stream: str, stamp: int, convert: Callable[[], Any], arrival_ns: int | None,
              clock_ns: int | None) -> None:
        try:
            payload = convert()
        except (InputError, AttributeError, TypeError, ValueError) as exc:
            self._bad(stream, exc)
            return
        if clock_ns is not None and self._refused(stream, stamp, clock_ns):
            return
        if stream == "imu" and not self._imu_frame:
            self._imu_frame = payload.frame_id
        verdict = self._merger.push(stream, stamp, payload, arrival_ns)
        if verdict in DROP_REASONS:
            self._warn_dropped(verdict, stream, stamp)
        self._report_excluded()
        if not self._offline:
            self._process(self._merger.ready())

    def _refused(self, stream: str, stamp_ns: int, clock_ns: int) -> bool:
        """Whether the stamp is out of bounds of the clock (estimation.stamps); then dropped, counted and one
        line (throttled per topic and cause) naming topic, stamp and clock."""
        cause = self._bounds.judge(stamp_ns, clock_ns)
        if cause is None:
            return False
        self._merger.drop(stream, cause)
        topic = self.topic(stream)
        # a clock not started yet (start-up) is its own problem: its line must not hold back, for the
        # throttle period, the line of a stamp of another clock domain once the clock runs
        key = ("stamp", stream, cause if clock_ns > 0 else "clock not started")
        self._problems.warn(key, self._bounds.reason(cause, topic, stamp_ns, clock_ns, self._clock_name))
        return True

    def _warn_dropped(self, verdict: Verdict, stream: str, stamp: int) -> None:
        self._problems.warn(
            ("merger", verdict, stream),
            f"dropping {verdict.value} {stream} message stamped {stamp / NS:.9f} s: {DROP_REASONS[verdict]}",
        )

    def take_block(self, block: InputBlock) -> bool:
        """A bag's input messages in arrival order at once (``kinodyn estimate``): what ``on_*`` one after
        the other, then ``drain``, would do, when the IMU frame is the one the node accepts and the merger
        takes the block as arrays (``StampMerger.push_block``: no stream falls silent or jumps back); else
        False, nothing changed: give the messages one by one."""
        if self._excluded or block.streams != self.streams or np.any(self._bounds.refused(block.stamps,
                                                                                           block.times)):
            return False
        frame = self._imu_frame
        if not self._params.imu_frame and len(block.imu_frames):
            frame = frame or block.imu_frames[0]
            if frame not in self._model.frame_names or np.any(block.imu_frames != frame):
                return False
        release = self._merger.push_block(block.ranks, block.stamps, block.payload)
        if release is None:
            return False
        self._imu_frame = frame
        for i in release.duplicates.tolist():
            self._warn_dropped(Verdict.DUPLICATE, self.streams[block.ranks[i]], int(block.stamps[i]))
        self._process(self._merger.ready())
        self._released(Released.of_block(block, release, len(self._model.joint_names)))
        return True

    def _report_excluded(self) -> None:
        """One line when a stream is left out for silence, one when it is back (arrival order: logs only)."""
        excluded = self._merger.silent
        if excluded == self._excluded:  # the usual case: nothing to say
            return
        for name in sorted(excluded - self._excluded):
            self._log.warning(
                f"{name} silent for more than stream_timeout ({self._params.stream_timeout} s of stamp "
                "time): estimating without it until it comes back"
            )
        for name in sorted(self._excluded - excluded):
            self._log.info(f"{name} is back")
        self._excluded = excluded

    # processing --------------------------------------------------------------------------------------------

    def _process(self, items: Iterable[Event | Reset]) -> None:
        """Released events in order: the runs between resets go to the estimator as batches."""
        run: list[Event] = []
        for item in items:
            if isinstance(item, Event):
                run.append(item)
                continue
            self._events(run)
            run = []
            self.counts.resets += 1
            self._last_ns.clear()
            self._imu_gaps.restart()
            self._reset(
                f"time jumped back on {item.stream} from {item.from_ns / NS:.9f} s to "
                f"{item.to_ns / NS:.9f} s (a bag played in a loop, or a restarted clock)"
            )
        self._events(run)

    def _events(self, events: list[Event]) -> None:
        if events:
            self._released(Released.of_events(events, self.streams, len(self._model.joint_names)))

    def _count(self, events: Released, start: int, end: int) -> None:
        """Counts of the events ``start:end``; the newest stamp of each stream."""
        ranks = events.ranks[start:end].tolist()
        if len(set(ranks)) == len(ranks):  # a live batch (one event, or one cycle's): no grouping
            for k, rank in enumerate(ranks, start):
                self._count_stream(self.streams[rank], events.stamps[k:k + 1])
        else:
            ranks = events.ranks[start:end]
            for rank in np.unique(ranks).tolist():
                self._count_stream(self.streams[rank], events.stamps[start:end][ranks == rank])
        if events.dropped:
            for k, dropped in events.dropped.items():
                if start <= k < end:
                    self.counts.dropped.update(dropped)
        self._now_ns = int(events.stamps[end - 1])

    def _count_stream(self, stream: str, stamps_ns: np.ndarray) -> None:
        """The processed events of one stream, their stamps in order."""
        self.counts.processed[stream] += len(stamps_ns)
        self._last_ns[stream] = int(stamps_ns[-1])
        if stream == "imu":
            self._imu_gaps.add(stamps_ns)

    def _released(self, events: Released) -> None:
        """Events of one epoch: before the estimator exists one by one (it is built once the IMU frame and
        the feet are known), then in batches that end where diagnostics are due."""
        start, size = 0, len(events)
        while start < size and self._ensure_estimator(events, start) is None:
            self._count(events, start, start + 1)
            self._diagnostics(int(events.stamps[start]))
            start += 1
        while start < size:
            due = self._next_diagnostics_ns
            end = start
            if due is not None:
                end = min(start + int(np.searchsorted(events.stamps[start:], due)), size - 1)
            self._batch(events, start, end + 1)
            self._diagnostics(int(events.stamps[end]))
            start = end + 1

    def _batch(self, events: Released, start: int, end: int) -> None:
        """One LeggedEstimator.process call (Robot Dynamics Essential §5.3) over the events ``start:end``;
        a contacts message
        naming feet the estimator does not have is refused (counted, one warning) and left out."""
        estimator = self._estimator
        assert estimator is not None
        self._count(events, start, end)
        contacts = np.full((end - start, len(estimator.feet)), -1, np.int8)
        layouts = events.contact_layouts[start:end]
        named = layouts[layouts >= 0]
        keep: np.ndarray | None = None  # None: every event
        for layout in (named.tolist() if len(named) <= 1 else np.unique(named).tolist()):
            mine = np.flatnonzero(layouts == layout)
            try:
                slots = self._contact_slots(estimator, events.contact_names[layout])
            except ValueError as exc:
                if keep is None:
                    keep = np.ones(end - start, bool)
                keep[mine] = False
                self.counts.dropped["refused"] += len(mine)
                for _ in mine:
                    self._problems.warn(("estimator", "contacts"), f"ignoring contacts message: {exc}")
                continue
            contacts[mine[:, None], slots] = events.contact_flags[start + mine, :len(slots)]
        ranks, stamps_ns = events.ranks[start:end], events.stamps[start:end]
        imu, joints = events.imu[start:end], events.joints[start:end]
        if keep is not None:
            ranks, stamps_ns, imu, contacts, joints = (a[keep] for a in (ranks, stamps_ns, imu, contacts,
                                                                          joints))
        batch = EventBatch(self._kinds[ranks], np.array([stamp / NS for stamp in stamps_ns.tolist()]), imu,
                           contacts, joints)
        result = estimator.process(batch)
        self._warn_problems(result, ranks)
        self._outputs_of(result, stamps_ns)

    def _warn_problems(self, result: BatchResult, ranks: Sequence[int] | np.ndarray) -> None:
        """One (throttled) line per data fault the estimator counted; ``ranks``: each event's stream."""
        for index, names, text in result.problems:
            for name in names:
                if name in PROBLEM_COUNTERS:
                    self._problems.warn(("estimator", name), f"{self.streams[ranks[index]]}: {text}")

    def _contact_slots(self, estimator: LeggedEstimator, names: tuple[str, ...]) -> np.ndarray:
        """``estimator.contact_slots(names)``, kept per names (a schedule repeats the same feet)."""
        slots = self._slots.get(names)
        if slots is None:
            slots = self._slots[names] = estimator.contact_slots(names)
        return slots

    def _outputs_of(self, result: BatchResult, stamps_ns: np.ndarray | Sequence[int]) -> None:
        """The estimates and NIS of a batch, in order; offline, when every estimate is finite, all at once."""
        estimates = np.flatnonzero(result.status == ESTIMATED) if self._offline else None
        if estimates is not None and np.isfinite(result.estimates[estimates]).all():
            updates = np.flatnonzero((result.status == UPDATED) & (result.dof != 0))
            if len(updates):
                self._last_nis = float(result.nis[updates[-1]])
                self._nis.extend((result.nis[updates] / result.dof[updates]).tolist())
            if len(estimates):
                self.counts.odometry += len(estimates)
                rows = EstimateRows(np.asarray(stamps_ns)[estimates], self._params.odom_frame,
                                    self.base_frame, result.estimates[estimates])
                self._outputs.append(Output("odometry", rows))
            return
        dof = result.dof.tolist()
        for k, status in enumerate(result.status.tolist()):
            if status == ESTIMATED:
                self._publish_estimate(result.estimates[k], int(stamps_ns[k]))
            elif status and dof[k]:
                self._last_nis = float(result.nis[k])
                self._nis.append(self._last_nis / dof[k])

    def _reset(self, reason: str) -> None:
        if self._estimator is not None:
            self._estimator.reset()
        self._next_diagnostics_ns = None
        self._nis.clear()
        self._last_nis = math.nan
        self._log.info(f"estimator reset: {reason}; initialising again")

    def _ensure_estimator(self, events: Released, k: int) -> LeggedEstimator | None:
        if self._estimator is not None:
            return self._estimator
        if self.streams[events.ranks[k]] == "contacts" and not self._feet:
            self._feet = events.contact_names[events.contact_layouts[k]]
        if not (self._imu_frame and self._feet):
            self.counts.waiting += 1
            return None
        p = self._params
        radius = p.foot_radius if p.foot_radius >= 0.0 else foot_radii(self._model, self._feet, self._spheres)
        self._estimator = LeggedEstimator(self._model, self._imu_frame, self._feet, p.settings(radius))
        self._log.info(
            f"estimating {self.base_frame!r} in {p.odom_frame!r} with the {p.filter} filter: IMU "
            f"{self._imu_frame!r}, feet {', '.join(self._feet)}, contacts from {p.contact_source}"
        )
        return self._estimator

    def _publish_estimate(self, row: np.ndarray, stamp_ns: int) -> None:
        # the row holds exactly the published numbers (ESTIMATE_SIZE); a finite sum of squares: all finite
        if not (math.isfinite(row.dot(row)) or np.isfinite(row).all()):
            bad = non_finite_estimate_field(estimate_fields(row))
            self.counts.non_finite += 1
            self._problems.error(
                ("non_finite_estimate",),
                f"the estimate at {stamp_ns / NS:.9f} s has a non-finite {bad}: not published, filter reset "
                "(please report it with the input)",
            )
            self._reset("the estimate was not finite")
            return
        self.counts.odometry += 1
        if self._estimate_rows:
            self._outputs.append(Output("odometry", EstimateRows(np.array([stamp_ns]),
                                                                 self._params.odom_frame, self.base_frame,
                                                                 row[None])))
            return
        odometry = odometry_message(estimate_fields(row), stamp_ns, self._params.odom_frame, self.base_frame)
        self._outputs.append(Output("odometry", odometry))
        self._outputs.append(Output("tf", transform_message(odometry)))

    def _diagnostics(self, stamp_ns: int) -> None:
        if self._next_diagnostics_ns is not None and stamp_ns < self._next_diagnostics_ns:
            return
        period = round(NS / self._params.diagnostics_rate)
        self._next_diagnostics_ns = (stamp_ns // period + 1) * period
        self._imu_window = self._imu_gaps.take_window()
        received, missing = self._imu_window
        since, self._diagnostics_ns = self._diagnostics_ns, stamp_ns
        if missing:
            span = f"up to {stamp_ns / NS:.3f} s" if since is None else \
                f"between {since / NS:.3f} s and {stamp_ns / NS:.3f} s"
            self._problems.warn(("imu_missing",), (
                f"{self.topic('imu')}: {missing} IMU samples missing {span} of stamps, {received} received "
                f"({100.0 * missing / (missing + received):.1f} % lost at the nominal "
                f"{self._imu_gaps.rate:.6g} Hz): a sensor dropout, a lossy link, or this node's input queue "
                "overflowing (qos_depth) because it cannot keep up with the IMU rate"))
        self._report_imu_only(stamp_ns)
        level, message, values = self.health()
        msg = diagnostics_message(stamp_ns, status_name(self._diagnostics_name, "base state estimate"),
                                  self._model.name, level, message, values)
        self._nis.clear()
        self._outputs.append(Output("diagnostics", msg))

    def _imu_only_since(self) -> float | None:
        """Since when (s) the estimator has run on the IMU alone, when that has lasted at least one
        diagnostics period by the last processed stamp (a gait's flight phases are shorter); else None."""
        since = None if self._estimator is None else self._estimator.imu_only_since
        if since is None or self._now_ns is None:
            return None
        return since if self._now_ns / NS - since >= 1.0 / self._params.diagnostics_rate else None

    def _report_imu_only(self, stamp_ns: int) -> None:
        """One line (throttled) while the estimator runs on the IMU alone, one when feet are back."""
        since = self._imu_only_since()
        if since is not None:
            self._problems.warn(("imu_only",), (
                f"running on the IMU alone since {since:.3f} s (no foot in contact at "
                f"{stamp_ns / NS:.3f} s): "
                "position and velocity drift; their covariance grows with imu_only_acceleration_noise "
                f"{self._params.imu_only_acceleration_noise:g} m/s^2"))
            self._imu_only_reported = True
        elif since is None and self._imu_only_reported:
            self._log.info("feet in contact again: the leg kinematics correct the estimate")
            self._imu_only_reported = False

    def silent_streams(self) -> list[str]:
        """Streams with no processed message in the last ``stream_timeout`` of stamp time (from the processed
        stamps, so the diagnostics stay deterministic; the merger's own exclusion follows arrival)."""
        if self._now_ns is None:
            return []
        limit = self._now_ns - round(self._params.stream_timeout * NS)
        return [s for s in self.streams if self._last_ns.get(s, -1) < limit]

    def health(self) -> tuple[str, str, dict[str, Any]]:
        """``(level, message, values)`` of the diagnostics: ok when estimating from every stream, warn while
        initialising or with a stream silent. Every value follows from the messages processed so far."""
        estimator = self._estimator
        counts = self.counts
        silent = self.silent_streams()
        values: dict[str, Any] = {
            "filter": self._params.filter,
            "contact_source": self._params.contact_source,
            "initialized": bool(estimator is not None and estimator.initialized),
            "nis_last": float(self._last_nis),
            "nis_per_dof_mean": float(np.mean(self._nis)) if self._nis else math.nan,
            "nis_updates": len(self._nis),
            "feet_in_contact": ", ".join(estimator.filter.feet) if estimator is not None else "",
            **{f"{stream}_messages": counts.processed[stream] for stream in self.streams},
            **{f"dropped_{cause}": counts.dropped[cause] for cause in DROP_CAUSES},
            "resets": counts.resets,
            "silent_streams": ", ".join(silent),
            "non_finite_estimates": counts.non_finite,
            "imu_rate_nominal": float(self._imu_gaps.rate),
            "imu_samples_missing": self._imu_gaps.missing,
            "imu_missing_percent": float(100.0 * self._imu_window[1] / max(sum(self._imu_window), 1)),
            "imu_only": self._imu_only_since() is not None,
        }
        if estimator is not None:
            values.update({f"estimator_{k}": v for k, v in estimator.counters.items()})
        if estimator is None:
            return "warn", "waiting for the IMU frame and the feet (first Imu and contacts messages)", values
        if not estimator.initialized:
            return "warn", estimator.status, values
        if silent:
            return "warn", f"estimating without {', '.join(silent)} (silent); {estimator.status}", values
        if values["imu_only"] or self._imu_window[1]:
            lost = f"; {self._imu_window[1]} IMU samples missing" if self._imu_window[1] else ""
            return "warn", estimator.status + lost, values
        return "ok", estimator.status, values

    # output ------------------------------------------------------------------------------------------------

    def drain(self) -> list[Output]:
        """The outputs produced since the last call, in stamp order (deferred: of the messages released)."""
        if self._offline:
            self._process(self._merger.ready())
        outputs, self._outputs = self._outputs, []
        return outputs

    def flush(self) -> list[Output]:
        """Process everything still buffered (end of a bag), then ``drain``."""
        self._process(self._merger.flush())
        return self.drain()
