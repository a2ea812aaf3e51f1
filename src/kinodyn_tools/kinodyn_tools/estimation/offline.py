"""`kinodyn estimate`: re-estimate the base state offline from a bag (docs/offline-estimation.md).

    kinodyn estimate BAG --urdf URDF --output OUT [--params FILE] [--imu-topic T] [--joint-states-topic T]
                     [--contacts-topic T] [--ground-truth-topic T] [--storage mcap|sqlite3]

The bag's messages are read in stored (bag-time) order and given to the same ``EstimatorPipeline`` the
``state_estimator`` node runs (header-stamp merging, Robot Dynamics Essential, §5.3 filter), with no executor
and no clock in the loop: in blocks, as arrays where the pipeline takes them (``estimation.blocks``,
``take_block``), else one message after the other. OUT is a rosbag2 bag with ``/odometry/filtered``
(nav_msgs/Odometry, one per IMU message the filter used) and ``/diagnostics``, each stored at its header
stamp, so two runs over one bag write identical bytes and the node fed the same bag publishes the same
estimates. A summary follows (duration, rates, final pose, NIS) and, with ``--ground-truth-topic``, the drift
and error figures against that nav_msgs/Odometry topic. docs/offline-estimation.md.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np
import yaml
from kinodyn.spatial import quat_to_matrix
from kinodyn_common.cdr import odometry_rows_cdr
from kinodyn_common.robot_description import load_urdf
from kinodyn_common.stamps import NS, stamp_to_ns
from kinodyn_control.controllers.base import LevelLogger
from kinodyn_control.estimation.pipeline import EstimatorParameters, EstimatorPipeline, Output

from kinodyn import Model
from kinodyn_tools.bags.progress import BagProgress
from kinodyn_tools.bags.reader import open_bag, select_connections
from kinodyn_tools.bags.writer import BagWriter
from kinodyn_tools.estimation.blocks import read_blocks
from kinodyn_tools.estimation.truth import OdometrySeries, accuracy_lines

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from kinodyn.sim.collision import ContactSphere
    from kinodyn_control.controllers.base import Logger
    from numpy.typing import ArrayLike

NODE_NAME = "state_estimator"
ODOMETRY_TOPIC = "/odometry/filtered"
DIAGNOSTICS_TOPIC = "/diagnostics"
OUTPUT_TOPICS = {"odometry": (ODOMETRY_TOPIC, "nav_msgs/msg/Odometry"),
                 "diagnostics": (DIAGNOSTICS_TOPIC, "diagnostic_msgs/msg/DiagnosticArray")}
NOT_ESTIMATOR_PARAMETERS = frozenset(
    {"publish_tf", "qos_depth", "qos_reliable", "robot_description", "robot_description_file", "use_sim_time"}
)
"""Parameters of the node that do not shape the estimates (transport, URDF source): a params file written for
the node may carry them; ``kinodyn estimate`` ignores them."""
ROUTINE_COUNTERS = frozenset({
    "nis_updates", "imu_messages", "joint_states_messages", "contacts_messages", "estimator_imu_samples",
    "estimator_joint_states", "estimator_updates",
})
"""Diagnostics counters of normal work; the summary lists the others (drops, rejections, resets)
when not zero."""
BATCH_MESSAGES = 3000
"""Input messages read as one block (estimation.blocks), between two estimator batches: ~2 s of 500 Hz
inputs."""


class StderrLog(LevelLogger):
    """The pipeline's logger: one line per message on stderr, prefixed ``kinodyn estimate`` (and the level,
    but for info lines)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def log(self, level: str, message: str) -> None:
        prefix = "" if level == "info" else f"{level}: "
        print(f"kinodyn estimate: {prefix}{message}", file=self._stream or sys.stderr)


def parameters_from_file(path: str | Path, node_name: str = NODE_NAME) -> EstimatorParameters:
    """The estimator parameters of a ROS 2 params file: the ``/**`` and ``node_name`` sections (with or
    without namespace) merged in file order, node-only parameters (NOT_ESTIMATOR_PARAMETERS) left out. A file
    without such a section, or an unknown parameter name, is a ValueError saying so."""
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"cannot read params file {path}: {exc}") from None
    sections = [
        body["ros__parameters"] for key, body in (document or {}).items()
        if isinstance(body, dict) and isinstance(body.get("ros__parameters"), dict)
        and (key == "/**" or str(key).rstrip("/").split("/")[-1] == node_name)
    ] if isinstance(document, dict) else []
    if not sections:
        raise ValueError(
            f"params file {path} has no '/**' or '{node_name}' section with ros__parameters (ROS 2 params "
            "file format, docs/offline-estimation.md)"
        )
    values: dict[str, Any] = {}
    for section in sections:
        values.update({k: v for k, v in section.items() if k not in NOT_ESTIMATOR_PARAMETERS})
    return EstimatorParameters.from_flat(values)


@dataclass(frozen=True)
class Topics:
    """Input topics; ``contacts`` is None for contact detection, ``ground_truth`` None when not asked."""

    imu: str = "/imu/data"
    joint_states: str = "/joint_states"
    contacts: str | None = "/contacts"
    ground_truth: str | None = None

    def inputs(self) -> tuple[str, ...]:
        return tuple(t for t in (self.imu, self.joint_states, self.contacts) if t is not None)


@dataclass
class TopicStats:
    """Messages of one input topic: count and bag-time span."""

    count: int = 0
    first_ns: int = 0
    last_ns: int = 0

    def add(self, times_ns: np.ndarray) -> None:
        """Messages at bag times ``times_ns`` (ns, bag order)."""
        if not len(times_ns):
            return
        if self.count == 0:
            self.first_ns = int(times_ns[0])
        self.count += len(times_ns)
        self.last_ns = int(times_ns[-1])

    @property
    def rate(self) -> float:
        """Mean rate in Hz over the topic's span (nan with fewer than two messages)."""
        span = (self.last_ns - self.first_ns) / NS
        return (self.count - 1) / span if self.count > 1 and span > 0 else math.nan


@dataclass
class NisStats:
    """NIS per degree of freedom of the kinematic updates, from the diagnostics (each message carries the mean
    over the updates since the previous one)."""

    updates: int = 0
    total: float = 0.0

    def add(self, msg: Any) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        values = {kv.key: kv.value for kv in msg.status[0].values}
        count = int(values.get("nis_updates", 0))
        if count:
            self.updates += count
            self.total += count * float(values["nis_per_dof_mean"])

    @property
    def mean(self) -> float:
        return self.total / self.updates if self.updates else math.nan


@dataclass
class OfflineResult:
    """What one run read and wrote."""

    start: float  # s, bag time of the first message
    duration: float  # s of bag time
    inputs: dict[str, TopicStats]
    estimates: OdometrySeries
    nis: NisStats
    diagnostics: int
    status: str  # the estimator's health text at the end
    counters: dict[str, int]  # the pipeline's and estimator's counters at the end (diagnostics values)
    truth: OdometrySeries | None = None
    wall_time: float = 0.0


def load_model(urdf: str | Path) -> Model:
    path = Path(urdf)
    try:
        xml = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read URDF {urdf}: {exc.strerror}") from None
    return Model.from_urdf(load_urdf(xml, f"URDF {str(path)!r}", StderrLog()), floating_base=True)


def estimate_bag(
    bag: str | Path,
    model: Model,
    params: EstimatorParameters,
    output: str | Path,
    topics: Topics,
    storage: str = "mcap",
    progress: bool = False,
    log: Logger | None = None,
    block_messages: int = BATCH_MESSAGES,
    *,
    spheres: Iterable[ContactSphere],
) -> OfflineResult:
    """Run the node's pipeline over ``bag`` and write ``output`` (see the module docstring); the input is
    read in blocks of ``block_messages`` messages (estimation.blocks), each one estimator batch. ``spheres``:
    the URDF's collision spheres (``kinodyn.sim.collision_spheres``), which the default ``foot_radius`` reads
    as the node does; required, so that no caller leaves the rolling-foot correction out by forgetting it."""
    if Path(output).exists():
        raise ValueError(f"output {output} exists already: give a new path (a bag is a new directory)")
    wanted = topics.inputs() + ((topics.ground_truth,) if topics.ground_truth else ())
    stream_topics = {"imu": topics.imu, "joint_states": topics.joint_states,
                     "contacts": topics.contacts or ""}
    pipeline = EstimatorPipeline(model, params, log or StderrLog(), NODE_NAME, offline=True, spheres=spheres,
                                 topics=stream_topics, clock_name="its bag time")
    handlers: dict[str, Callable[..., None]] = {topics.imu: pipeline.on_imu,
                                                topics.joint_states: pipeline.on_joint_state}
    stream_of: dict[str, str | None] = {topics.imu: "imu", topics.joint_states: "joint_states"}
    if topics.contacts is not None:
        handlers[topics.contacts] = pipeline.on_contacts
        stream_of[topics.contacts] = "contacts" if "contacts" in pipeline.streams else None
    inputs = {topic: TopicStats() for topic in topics.inputs()}
    estimates, nis, truth = OdometrySeries(), NisStats(), OdometrySeries() if topics.ground_truth else None
    counts = {"diagnostics": 0}
    with open_bag(bag) as reader:
        connections = select_connections(reader, wanted)  # every named topic must be in the bag
        start_ns, duration_ns = reader.start_time, reader.duration
        show = BagProgress("kinodyn estimate:", start_ns, duration_ns, progress)
        wall = time.perf_counter()
        with BagWriter(output, storage=storage) as writer:
            for topic, msgtype in OUTPUT_TOPICS.values():
                writer.add_topic(topic, msgtype)

            def write(outputs: Iterable[Output]) -> None:
                for out in outputs:
                    if out.kind == "odometry":
                        e = out.message
                        estimates.add_rows(e.stamps_ns, e.rows)
                        for t_ns, cdr in zip(e.stamps_ns.tolist(), odometry_rows_cdr(
                                e.stamps_ns, e.frame_id, e.child_frame_id, e.rows), strict=True):
                            writer.write(ODOMETRY_TOPIC, t_ns, cdr)
                        continue
                    nis.add(out.message)
                    counts["diagnostics"] += 1
                    writer.write(DIAGNOSTICS_TOPIC, stamp_to_ns(out.message.header.stamp), out.message)

            for block in read_blocks(reader, connections, pipeline.streams, stream_of, model.joint_names,
                                     block_messages):
                for topic, stats in inputs.items():
                    stats.add(block.times[block.topics == topic])
                if truth is not None:
                    for _, _, msg in block.messages({topics.ground_truth}):  # type: ignore[arg-type]
                        truth.add(msg)
                if block.inputs is None or not pipeline.take_block(block.inputs):
                    for topic, time_ns, msg in block.messages(set(handlers)):
                        handlers[topic](msg, clock_ns=time_ns)  # the bag's time bounds the stamp
                write(pipeline.drain())
                show(int(block.times[-1]))
            write(pipeline.flush())
    _, status, values = pipeline.health()
    counters = {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}
    return OfflineResult(start_ns / NS, duration_ns / NS, inputs, estimates, nis, counts["diagnostics"],
                         status, counters, truth, time.perf_counter() - wall)


def _euler_deg(quaternion: ArrayLike) -> np.ndarray:
    """Roll, pitch, yaw (ZYX, degrees) of an (x, y, z, w) quaternion."""
    C = quat_to_matrix(quaternion)
    return np.degrees([math.atan2(C[2, 1], C[2, 2]), math.asin(max(-1.0, min(1.0, -C[2, 0]))),
                       math.atan2(C[1, 0], C[0, 0])])


def summary_text(result: OfflineResult, output: str | Path) -> str:
    """The summary `kinodyn estimate` prints."""
    lines = [f"bag duration     {result.duration:.3f} s, processed in {result.wall_time:.2f} s "
             f"({result.duration / result.wall_time if result.wall_time > 0 else math.inf:.1f}x real time)"]
    for topic, stats in result.inputs.items():
        lines.append(f"  {topic:<22} {stats.count:>8} messages  {stats.rate:9.2f} Hz")
    est = result.estimates
    lines.append(f"wrote {output}: {len(est.t)} messages on {ODOMETRY_TOPIC}, {result.diagnostics} on "
                 f"{DIAGNOSTICS_TOPIC}")
    if est.t:
        p, rpy = est.position[-1], _euler_deg(est.quaternion[-1])
        lines.append(f"final pose       at {est.t[-1] - result.start:.3f} s: position {p[0]:.4f} {p[1]:.4f} "
                     f"{p[2]:.4f} m, roll/pitch/yaw {rpy[0]:.3f} {rpy[1]:.3f} {rpy[2]:.3f} deg")
    lines.append(f"NIS per dof      mean {result.nis.mean:.3f} over {result.nis.updates} kinematic updates "
                 "(1 when consistent)")
    events = {k: v for k, v in result.counters.items() if v and k not in ROUTINE_COUNTERS}
    lines.append("problems         " + (", ".join(f"{k} {v}" for k, v in events.items()) or "none"))
    lines.append(f"estimator        {result.status}")
    if result.truth is not None:
        lines.extend(accuracy_lines(result.truth, est))
    return "\n".join(lines)
