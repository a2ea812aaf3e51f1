"""Read the series a run report needs from a bag, in one pass (docs/report.md, "Topics").

Each report role (estimate, truth, contacts, ...) is one topic. A role left unnamed is found by its type where
the simulator's names make that unambiguous (``/<system>/odometry``, ``/<system>/contacts`` of
kinodyn_control/SimulatedSystem, the one kinodyn_interfaces/JointPDCommand topic); a role whose topic the bag
lacks stays empty and its section says so. Times are header stamps (the clock of the run: simulated time under
``use_sim_time``), as the estimator and the metrics pair samples by stamp.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from kinodyn.estimation.metrics import Trajectory
from kinodyn_common.stamps import NS

from kinodyn_tools.bags.progress import BagProgress
from kinodyn_tools.bags.reader import open_bag, reader_messages

if TYPE_CHECKING:
    from collections.abc import Callable, Sized

ODOMETRY = "nav_msgs/msg/Odometry"
CONTACTS = "kinodyn_interfaces/msg/ContactStates"
PD_COMMAND = "kinodyn_interfaces/msg/JointPDCommand"
ROLE_TYPES = {
    "estimate": ODOMETRY, "truth": ODOMETRY, "contacts": CONTACTS, "schedule": CONTACTS,
    "cmd_vel": "geometry_msgs/msg/TwistStamped", "joint_states": "sensor_msgs/msg/JointState",
    "commands": PD_COMMAND, "diagnostics": "diagnostic_msgs/msg/DiagnosticArray",
    "robot_description": "std_msgs/msg/String",
}
SIMULATOR_TOPIC = {"truth": re.compile(r"^/[^/]+/odometry$"), "contacts": re.compile(r"^/[^/]+/contacts$")}
"""What SimulatedSystem publishes (kinodyn_control/hardware/sim_ros.py): ``/<ros2_control name>/...``."""
PROGRESS_PERIOD = 5.0  # s of wall time between progress lines


@dataclass(frozen=True)
class ReportTopics:
    """The topic of each role; None: found by type (module doc)."""

    estimate: str = "/odometry/filtered"
    truth: str | None = None
    contacts: str | None = None
    schedule: str = "/contact_schedule"
    cmd_vel: str = "/wbc/cmd_vel"
    joint_states: str = "/joint_states"
    commands: str | None = None
    diagnostics: str = "/diagnostics"
    robot_description: str = "/robot_description"
    wbc_name: str = "wbc"  # DiagnosticStatus.name of the wbc node
    max_force: float = 1e6  # N: a contact force beyond it (e.g. a finite 1e308) is a fault, left out


@dataclass(frozen=True)
class TopicInfo:
    name: str
    msgtype: str
    count: int


def resolve_topics(available: dict[str, str], wanted: ReportTopics) -> tuple[dict[str, str], dict[str, str]]:
    """``(role -> topic, role -> why it has none)`` for the bag's ``available`` topics (name -> type)."""
    found: dict[str, str] = {}
    missing: dict[str, str] = {}
    for role, msgtype in ROLE_TYPES.items():
        name = getattr(wanted, role)
        option = f"--{role.replace('_', '-')}-topic"
        if name is None:
            pattern = SIMULATOR_TOPIC.get(role)
            candidates = sorted(t for t, kind in available.items()
                                if kind == msgtype and t not in (wanted.estimate, wanted.schedule)
                                and (pattern is None or pattern.match(t)))
            if len(candidates) == 1:
                found[role] = candidates[0]
            elif candidates:
                missing[role] = f"several {msgtype} topics ({', '.join(candidates)}): pick one with {option}"
            else:
                missing[role] = f"the bag has no {msgtype} topic for it (name one with {option})"
        elif name not in available:
            missing[role] = f"the bag has no topic {name} (name another with {option})"
        elif available[name] != msgtype:
            missing[role] = f"{name} is {available[name]}, not {msgtype} (name another with {option})"
        else:
            found[role] = name
    return found, missing


@dataclass
class BaseSeries:
    """Base states of nav_msgs/Odometry: pose in the parent frame, twist in the child (base) frame."""

    t: list[float] = field(default_factory=list)
    values: list[list[float]] = field(default_factory=list)  # x y z, qx qy qz qw, vx vy vz, wx wy wz

    def add(self, msg: Any) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
        self.t.append(_stamp(msg))
        self.values.append([p.x, p.y, p.z, q.x, q.y, q.z, q.w, lin.x, lin.y, lin.z, ang.x, ang.y, ang.z])

    def __len__(self) -> int:
        return len(self.t)

    def trajectory(self) -> Trajectory:
        """In stamp order, one sample per stamp (the first stored)."""
        t, first = np.unique(np.array(self.t), return_index=True)
        v = np.reshape(self.values, (-1, 13))[first]
        return Trajectory(t, v[:, 0:3], v[:, 3:7], v[:, 7:10])

    def angular_velocity(self) -> np.ndarray:
        """(N, 3) base-frame angular velocity, in the order of ``trajectory()``."""
        _, first = np.unique(np.array(self.t), return_index=True)
        return np.reshape(self.values, (-1, 13))[first, 10:13]


@dataclass
class StampedRows:
    """Rows of floats with stamps, per named column; columns in first-seen order, a fill value (``array``)
    where a message lacks a name."""

    t: list[float] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    rows: list[dict[str, float]] = field(default_factory=list)

    def add(self, stamp: float, row: dict[str, float]) -> None:
        self.t.append(stamp)
        self.rows.append(row)
        self.names.extend(name for name in row if name not in self.names)

    def __len__(self) -> int:
        return len(self.t)

    def array(self, missing: float = np.nan) -> np.ndarray:
        """(N, len(names)) in stamp order (stable for equal stamps)."""
        order = np.argsort(np.array(self.t), kind="stable")
        return np.array([[self.rows[i].get(n, missing) for n in self.names] for i in order], dtype=float)

    def stamps(self) -> np.ndarray:
        return np.sort(np.array(self.t), kind="stable")


@dataclass
class WbcWindows:
    """The wbc node's diagnostics (kinodyn_control/wbc/core.py): one entry per window of ticks."""

    t: list[float] = field(default_factory=list)
    values: list[dict[str, str]] = field(default_factory=list)

    def add(self, stamp: float, values: dict[str, str]) -> None:
        self.t.append(stamp)
        self.values.append(values)

    def __len__(self) -> int:
        return len(self.t)

    def column(self, key: str) -> np.ndarray:
        """One value per window as floats (NaN where absent or not a number)."""
        return np.array([_float(v.get(key)) for v in self.values])


def _float(text: str | None) -> float:
    try:
        return float(text) if text is not None else np.nan
    except ValueError:
        return np.nan


@dataclass
class RunSeries:
    """Everything the report reads from one bag."""

    path: Path
    start: float  # s, bag time of the first message
    duration: float  # s of bag time
    topics: list[TopicInfo]
    found: dict[str, str]  # role -> topic
    missing: dict[str, str]  # role -> why not
    wbc_name: str = "wbc"
    max_force: float = 1e6  # N (ReportTopics.max_force)
    estimate: BaseSeries = field(default_factory=BaseSeries)
    truth: BaseSeries = field(default_factory=BaseSeries)
    cmd_vel: StampedRows = field(default_factory=StampedRows)  # vx vy wz
    efforts: StampedRows = field(default_factory=StampedRows)  # joint_states effort per joint
    commanded: StampedRows = field(default_factory=StampedRows)  # JointPDCommand feed-forward per joint
    contact_force: StampedRows = field(default_factory=StampedRows)  # measured normal force per contact link
    contact_state: StampedRows = field(default_factory=StampedRows)  # measured in_contact (1/0)
    stance: StampedRows = field(default_factory=StampedRows)  # planned stance (1/0) per foot
    wbc: WbcWindows = field(default_factory=WbcWindows)
    robot_description: str | None = None
    skipped: Counter[str] = field(default_factory=Counter)  # "<topic>: <why>" -> messages left out


class BadMessageError(ValueError):
    """A message whose arrays do not match (left out of the series, counted in ``RunSeries.skipped``)."""


def _same_length(what: str, *arrays: Sized) -> None:
    if len({len(a) for a in arrays}) > 1:
        raise BadMessageError(f"{what} arrays of different lengths {[len(a) for a in arrays]}")


def _bounded_forces(forces: Any, bound: float) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
    """BadMessageError for a non-finite force or one longer than ``bound`` N (a fault, not a ground
    reaction: one such value would scale the contact plot to nothing)."""
    values = np.array([[f.x, f.y, f.z] for f in forces], dtype=float).reshape(-1, 3)
    if not np.all(np.isfinite(values)):
        raise BadMessageError("a non-finite contact force")
    largest = np.abs(values).max(axis=1, initial=0.0)
    if np.any(largest > bound):  # a component over the bound: the force is over it too
        raise BadMessageError(f"a contact force of {largest.max():.3g} N, over the bound {bound:g} N "
                              "(--max-force)")


def _efforts(msg: Any) -> dict[str, float]:  # noqa: ANN401  (rosbags builds the message classes at run time)
    """Joint name -> effort of a JointState or JointPDCommand."""
    _same_length("name and effort", msg.name, msg.effort)
    return dict(zip(msg.name, np.asarray(msg.effort, dtype=float).tolist(), strict=True))


def _stamp(msg: Any) -> float:  # noqa: ANN401  (rosbags builds the message classes at run time)
    stamp = msg.header.stamp
    seconds: float = stamp.sec + stamp.nanosec / NS
    return seconds


def read_series(bag: str | Path, wanted: ReportTopics = ReportTopics(), progress: bool = False) -> RunSeries:
    """Read ``bag`` once (module doc); a bag that cannot be read raises ``BagError``."""
    with open_bag(bag) as reader:
        counts: dict[str, int] = {}
        types: dict[str, str] = {}
        for c in reader.connections:
            counts[c.topic] = counts.get(c.topic, 0) + c.msgcount
            types.setdefault(c.topic, c.msgtype)
        found, missing = resolve_topics(types, wanted)
        run = RunSeries(Path(bag), reader.start_time / NS if counts else 0.0,
                        reader.duration / NS if counts else 0.0,
                        [TopicInfo(t, types[t], counts[t]) for t in sorted(types)], found, missing,
                        wanted.wbc_name, wanted.max_force)
        handlers = _handlers(run)
        connections = [c for c in reader.connections if c.topic in found.values()]
        by_topic = {topic: handlers[role] for role, topic in found.items()}
        show = BagProgress("kinodyn report: reading", reader.start_time, reader.duration, progress,
                           PROGRESS_PERIOD)
        for topic, _, t_ns, msg in reader_messages(reader, connections):
            try:
                by_topic[topic](msg, t_ns)
            except BadMessageError as exc:
                run.skipped[f"{topic}: {exc}"] += 1
            show(t_ns)
    return run


def _handlers(run: RunSeries) -> dict[str, Callable[[Any, int], None]]:
    def twist(msg: Any, t_ns: int) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        stamp = _stamp(msg)
        tw = msg.twist
        run.cmd_vel.add(stamp if stamp > 0 else t_ns / NS, {"vx": tw.linear.x, "vy": tw.linear.y,
                                                           "wz": tw.angular.z})

    def joint_states(msg: Any, _: int) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        if len(msg.effort):  # a JointState may carry no efforts at all
            run.efforts.add(_stamp(msg), _efforts(msg))

    def commands(msg: Any, _: int) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        run.commanded.add(_stamp(msg), _efforts(msg))

    def contacts(msg: Any, _: int) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        _same_length("names, in_contact and forces", msg.names, msg.in_contact, msg.forces)
        _bounded_forces(msg.forces, run.max_force)
        force: dict[str, float] = {}
        touching: dict[str, float] = {}
        for name, on, f in zip(msg.names, msg.in_contact, msg.forces, strict=True):
            force[name] = force.get(name, 0.0) + f.z  # links with several spheres: their sum
            touching[name] = max(touching.get(name, 0.0), float(on))
        run.contact_force.add(_stamp(msg), force)
        run.contact_state.add(_stamp(msg), touching)

    def schedule(msg: Any, _: int) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        _same_length("names and in_contact", msg.names, msg.in_contact)
        run.stance.add(_stamp(msg), {n: float(on) for n, on in zip(msg.names, msg.in_contact, strict=True)})

    def diagnostics(msg: Any, _: int) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        for status in msg.status:
            if status.name.partition(":")[0] == run.wbc_name:  # diagnostic_updater's "<node>: <task>"
                run.wbc.add(_stamp(msg), {kv.key: kv.value for kv in status.values})

    def description(msg: Any, _: int) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        run.robot_description = msg.data

    return {"estimate": lambda m, _: run.estimate.add(m), "truth": lambda m, _: run.truth.add(m),
            "cmd_vel": twist, "joint_states": joint_states, "commands": commands, "contacts": contacts,
            "schedule": schedule, "diagnostics": diagnostics, "robot_description": description}
