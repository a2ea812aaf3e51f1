"""Messages in and out of the state estimator (docs/nodes/state_estimator.md).

Inputs are read by field name only, so rclpy messages and the message objects of the ``rosbags`` library (same
field names) both work: that lets the node and ``kinodyn estimate`` share this code. Outputs are rclpy
messages: nav_msgs/Odometry (REP-105 ``odom`` -> root link, twist in the child frame), the same pose as a
tf2_msgs/TFMessage, and diagnostic_msgs/DiagnosticArray.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import TransformStamped
from kinodyn_common.conversions import InputError, quoted
from kinodyn_common.stamps import ns_to_stamp, split_ns
from nav_msgs.msg import Odometry

from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from geometry_msgs.msg import Vector3
    from kinodyn_common.raw_messages import ContactStatesView, ImuView, JointStateView
    from kinodyn_common.raw_messages import Vector3 as RawVector3
    from sensor_msgs.msg import Imu, JointState

    from kinodyn_interfaces.msg import ContactStates


class ImuSample(NamedTuple):
    """The readings of one sensor_msgs/Imu (IMU frame); non-finite values are left to the estimator's gate.
    (Named tuples: a control loop builds one of each per cycle.)"""

    frame_id: str
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray


class JointSample(NamedTuple):
    """One sensor_msgs/JointState in the model's joint order, NaN for a joint the message does not carry."""

    positions: np.ndarray
    velocities: np.ndarray
    efforts: np.ndarray


def _vector(v: Vector3 | RawVector3) -> np.ndarray:
    return np.array([v.x, v.y, v.z], dtype=np.float64)


def imu_sample(msg: Imu | ImuView) -> ImuSample:
    """Angular velocity and linear acceleration of a sensor_msgs/Imu; its orientation is not used (REP-145:
    an orientation covariance starting with -1 means the IMU gives none)."""
    return ImuSample(msg.header.frame_id, _vector(msg.angular_velocity), _vector(msg.linear_acceleration))


def _names(names: Sequence[str], what: str) -> list[str]:
    names = list(names)
    duplicates = sorted(n for n, count in Counter(names).items() if count > 1)
    if duplicates:
        raise InputError("duplicate_names", f"{what} names {', '.join(map(quoted, duplicates[:5]))} twice")
    return names


class JointMap:
    """Puts sensor_msgs/JointState values into the model's joint order by name; unknown names are ignored
    (a robot may publish joints the estimator does not need, e.g. a head). The layout of the last name list
    is kept: a driver sends the same names in every message, so they are checked and mapped once."""

    def __init__(self, joint_names: Sequence[str]) -> None:
        self._index = {name: i for i, name in enumerate(joint_names)}
        self._names: list[str] | None = None
        self._known = self._target = np.zeros(0, dtype=np.intp)
        self._identity = False  # the names are the model's joints in its order: values copied as they are

    def _layout(self, names: Sequence[str]) -> None:
        """Checks ``names`` (distinct) and keeps which message entries go to which model joint."""
        names = _names(names, "JointState")
        rows = [self._index.get(name, -1) for name in names]
        self._known = np.array([k for k, r in enumerate(rows) if r >= 0], dtype=np.intp)
        self._target = np.array([r for r in rows if r >= 0], dtype=np.intp)
        self._identity = rows == list(range(len(self._index)))
        self._names = names

    def sample(self, msg: JointState | JointStateView) -> JointSample:
        """Raises InputError when a value list is neither empty nor one per name (positions: one per name),
        or a name repeats."""
        rows = [np.asarray(getattr(msg, field), dtype=np.float64).reshape(1, -1)
                for field in ("position", "velocity", "effort")]
        positions, velocities, efforts = self.rows(msg.name, *rows)[0]
        return JointSample(positions, velocities, efforts)

    def rows(self, names: Sequence[str], positions: np.ndarray, velocities: np.ndarray, efforts: np.ndarray
             ) -> np.ndarray:
        """``(messages, 3, model joints)``: positions, velocities and efforts of messages that share the name
        list ``names``, one row per message in each (``(messages, values)``, values 0 or one per name), in
        the model's order, NaN where not given; InputError as ``sample``."""
        if list(names) != self._names:
            self._names = None
            self._layout(names)
        count = len(names)
        out = np.full((len(positions), 3, len(self._index)), np.nan)
        if positions.shape[1] != count:
            raise InputError(
                "length_mismatch",
                f"JointState has {count} names but {positions.shape[1]} positions; each name needs one",
                "position",
            )
        for k, (field, given) in enumerate(zip(("position", "velocity", "effort"),
                                               (positions, velocities, efforts), strict=True)):
            if given.shape[1] not in (0, count):
                raise InputError(
                    "length_mismatch",
                    f"JointState has {count} names but {given.shape[1]} {field} values; {field} must be "
                    "empty or have one value per name",
                    field,
                )
            if not given.shape[1]:
                continue
            if self._identity:
                out[:, k] = given
            else:
                out[:, k, self._target] = given[:, self._known]
        return out


def contact_names(names: Sequence[str], flags: int) -> tuple[str, ...]:
    """The foot names of a kinodyn_interfaces/ContactStates with ``flags`` in_contact entries: distinct,
    non-empty, one per flag (InputError otherwise). A publisher sends the same names in every message: the
    last few name lists that passed (with their flag count) are kept and not checked again."""
    return _checked_contact_names(tuple(names), flags)


@lru_cache(maxsize=8)
def _checked_contact_names(names: tuple[str, ...], flags: int) -> tuple[str, ...]:
    """``contact_names`` of names that passed (a refusal raises, so it is never kept)."""
    checked = _names(names, "ContactStates")
    if flags != len(checked):
        raise InputError(
            "length_mismatch",
            f"ContactStates has {len(checked)} names but {flags} in_contact flags; give one per name",
        )
    if any(not name for name in checked):
        raise InputError("empty_name", "ContactStates has an empty name; each entry must name a foot link")
    return tuple(checked)


def contact_flags(msg: ContactStates | ContactStatesView) -> dict[str, bool]:
    """``{foot link: in contact}`` of a kinodyn_interfaces/ContactStates (``contact_names`` checks)."""
    names = contact_names(msg.names, len(msg.in_contact))
    return {name: bool(flag) for name, flag in zip(names, msg.in_contact, strict=True)}


def odometry_message(estimate: EstimateFields, stamp_ns: int, odom_frame: str, base_frame: str) -> Odometry:
    """nav_msgs/Odometry of a ``kinodyn.estimation.Estimate``: pose of the base in ``odom_frame`` with its
    covariance in that frame, twist in the base (child) frame with its covariance there, stamped ``stamp_ns``
    (the IMU message's stamp; REP-105, the convention robot_localization uses). Filled in place (the
    default-constructed fields, Python floats by ``tolist``): this runs for every IMU message."""
    msg = Odometry()
    header = msg.header
    header.stamp.sec, header.stamp.nanosec = split_ns(stamp_ns)
    header.frame_id = odom_frame
    msg.child_frame_id = base_frame
    pose, twist = msg.pose, msg.twist
    p, q = pose.pose.position, pose.pose.orientation
    p.x, p.y, p.z = np.asarray(estimate.position, dtype=np.float64).tolist()
    q.x, q.y, q.z, q.w = np.asarray(estimate.orientation, dtype=np.float64).tolist()
    pose.covariance = np.asarray(estimate.pose_covariance, dtype=np.float64).reshape(36)
    v, w = twist.twist.linear, twist.twist.angular
    v.x, v.y, v.z = np.asarray(estimate.linear_velocity, dtype=np.float64).tolist()
    w.x, w.y, w.z = np.asarray(estimate.angular_velocity, dtype=np.float64).tolist()
    twist.covariance = np.asarray(estimate.twist_covariance, dtype=np.float64).reshape(36)
    return msg


@dataclass(frozen=True)
class EstimateFields:
    """The published numbers of one estimate row (``kinodyn.estimation.events.ESTIMATE_SIZE`` values) as
    views, named as ``kinodyn.estimation.Estimate`` names them."""

    position: np.ndarray
    orientation: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray
    pose_covariance: np.ndarray
    twist_covariance: np.ndarray


def estimate_fields(row: np.ndarray) -> EstimateFields:
    """Views of an estimate row: position, quaternion (x, y, z, w), linear and angular velocity, pose and
    twist covariances (``ImuExtrinsics.base_output``'s layout)."""
    return EstimateFields(row[0:3], row[3:7], row[7:10], row[10:13], row[13:49].reshape(6, 6),
                          row[49:85].reshape(6, 6))


ESTIMATE_FIELDS = (
    "position", "orientation", "linear_velocity", "angular_velocity", "pose_covariance", "twist_covariance"
)
"""The numbers of an Estimate that ``odometry_message`` publishes."""


def non_finite_estimate_field(estimate: EstimateFields) -> str | None:
    """The first of ESTIMATE_FIELDS of ``estimate`` holding a NaN or an infinity, None when all are finite
    (one vectorised test: this runs for every IMU message)."""
    values = np.concatenate([np.ravel(getattr(estimate, name)) for name in ESTIMATE_FIELDS])
    if np.isfinite(values).all():
        return None
    return next(name for name in ESTIMATE_FIELDS if not np.isfinite(getattr(estimate, name)).all())


def transform_message(odometry: Odometry) -> TFMessage:
    """The pose of ``odometry`` as the transform ``header.frame_id -> child_frame_id`` (tf2's convention)."""
    t = TransformStamped()
    t.header = odometry.header
    t.child_frame_id = odometry.child_frame_id
    p, q = odometry.pose.pose.position, odometry.pose.pose.orientation
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = p.x, p.y, p.z
    t.transform.rotation = q
    return TFMessage(transforms=[t])


LEVELS = {"ok": DiagnosticStatus.OK, "warn": DiagnosticStatus.WARN, "error": DiagnosticStatus.ERROR}


def status_name(node: str, task: str) -> str:
    """A DiagnosticStatus name as diagnostic_updater writes it: ``"<node name>: <task>"``."""
    return f"{node}: {task}"


def diagnostics_message(
    stamp_ns: int, name: str, hardware_id: str, level: str, message: str, values: Mapping[str, Any]
) -> DiagnosticArray:
    """One DiagnosticStatus (``level`` ok|warn|error) with ``values`` as key/value strings; floats are
    written with ``repr`` (round-trip exact), so NaN shows as 'nan' (e.g. no NIS yet). ``name`` is
    ``status_name(node, task)``; ``hardware_id`` the robot (the URDF's robot name)."""
    status = DiagnosticStatus(level=LEVELS[level], name=name, message=message, hardware_id=hardware_id)
    status.values = [
        KeyValue(key=key, value=repr(float(v)) if isinstance(v, float) else str(v))
        for key, v in values.items()
    ]
    array = DiagnosticArray(status=[status])
    array.header.stamp = ns_to_stamp(stamp_ns)
    return array
