"""Message <-> numpy conversions shared by every kinodyn node.

Conventions (docs/conventions.md): a 4x4 homogeneous transform ``T_AB = [[C_AB, A r_AB], [0, 1]]``
(Robot Dynamics lecture notes (ETH) (2.109)) maps coordinates in B to coordinates in A, so a
``TransformStamped`` with
``header.frame_id = A`` and ``child_frame_id = B`` carries ``T_AB`` (tf2's convention). Quaternions are
Hamilton, stored (x, y, z, w) as in the messages. Joint states are mapped by name, never by position.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from geometry_msgs.msg import Pose, Quaternion, Transform, TransformStamped, Vector3, WrenchStamped
from kinodyn.spatial import homogeneous_transform, matrix_to_quat, quat_normalize, quat_to_matrix
from kinodyn.spatial.rotations import UNIT_NORM_TOLERANCE, as_unit_quaternion
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

    from builtin_interfaces.msg import Time
    from nav_msgs.msg import Odometry
    from numpy.typing import ArrayLike

MAX_TRANSLATION = 1e9
"""Largest accepted translation component (m) of a pose or transform in a message: beyond any map, UTM or
Earth-centred frame, and still resolved to 1e-7 m, so a larger value is a bug upstream, refused like NaN."""
POSE_SIZE = 7
"""Numbers of a pose: translation (x, y, z) and quaternion (x, y, z, w)."""


class InputError(ValueError):
    """An input message or request that cannot be used; ``kind`` names the cause, ``str(error)`` explains it.

    ``key`` identifies the cause for throttled logging (DistinctProblemLog): the kind plus a detail drawn from
    a small fixed set (a field name), never a received value or name, so random input can neither grow the
    log's memory nor flood it.
    """

    def __init__(self, kind: str, message: str, detail: Hashable = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.key = (kind, detail)


class JointStateError(InputError):
    """A JointState that cannot be used (see InputError)."""


@dataclass(frozen=True)
class JointPositions:
    """Positions taken from one JointState: ``names[i]`` is at ``values[i]``, in the caller's joint order."""

    names: tuple[str, ...]
    values: np.ndarray


def quoted(text: str, limit: int = 60) -> str:
    """``repr(text)``, cut to ``limit`` characters: received names go into log lines, and may be megabytes."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def _format_names(names: Sequence[str], shown: int = 10) -> str:
    """The names quoted, at most ``shown`` of them (a message may carry thousands)."""
    text = ", ".join(quoted(n) for n in names[:shown])
    return text if len(names) <= shown else f"{text}, ... ({len(names)} in all)"


def joint_state_positions(
    msg: JointState,
    joint_names: Sequence[str],
    *,
    allow_partial: bool = False,
    ignored_names: Sequence[str] = (),
) -> JointPositions:
    """Positions of ``msg`` for the joints in ``joint_names``, in that order, validated.

    Raises ``JointStateError`` when the message is inconsistent (``position`` not as long as ``name``;
    ``velocity`` or ``effort`` neither empty nor as long as ``name``, as sensor_msgs/JointState requires),
    names a joint twice, names a joint outside ``joint_names`` and ``ignored_names``, has a non-finite
    position, or (unless ``allow_partial``) lacks one of ``joint_names``. Names in ``ignored_names`` are
    accepted and their values dropped (e.g. mimic joints, whose position follows their master).
    """
    names = list(msg.name)
    if len(msg.position) != len(names):
        raise JointStateError(
            "length_mismatch",
            f"JointState has {len(names)} names but {len(msg.position)} positions; "
            "each name needs exactly one position",
            "position",
        )
    for field in ("velocity", "effort"):
        size = len(getattr(msg, field))
        if size not in (0, len(names)):
            raise JointStateError(
                "length_mismatch",
                f"JointState has {len(names)} names but {size} {field} values; {field} must be empty or "
                "have one value per name",
                field,
            )
    duplicates = sorted(n for n, count in Counter(names).items() if count > 1)  # linear: huge messages
    if duplicates:
        raise JointStateError(
            "duplicate_names", f"JointState names {_format_names(duplicates)} more than once"
        )
    index = {name: i for i, name in enumerate(joint_names)}
    unknown = [n for n in names if n not in index and n not in ignored_names]
    if unknown:
        raise JointStateError(
            "unknown_names",
            f"JointState names unknown joints {_format_names(unknown)}; the URDF's movable joints are "
            f"{_format_names(joint_names)}",
        )
    positions = np.asarray(msg.position, dtype=np.float64)
    bad = [n for n, value in zip(names, positions, strict=True) if not math.isfinite(value)]
    if bad:
        raise JointStateError(
            "non_finite", f"JointState has non-finite positions for {_format_names(bad)}", "position"
        )
    by_name = {n: value for n, value in zip(names, positions, strict=True) if n in index}
    if not allow_partial:
        missing = [n for n in joint_names if n not in by_name]
        if missing:
            raise JointStateError(
                "missing_names", f"JointState lacks joints {_format_names(missing)}"
            )
    used = tuple(n for n in joint_names if n in by_name)
    return JointPositions(used, np.array([by_name[n] for n in used], dtype=np.float64))


def joint_state_to_q(msg: JointState, joint_names: Sequence[str]) -> np.ndarray:
    """The full position vector in the order of ``joint_names``; every joint must be present."""
    return joint_state_positions(msg, joint_names).values


def q_to_joint_state(
    joint_names: Sequence[str], q: np.ndarray, stamp: Time, qdot: np.ndarray | None = None
) -> JointState:
    """A JointState with ``name = joint_names``, ``position = q`` and, when given, ``velocity = qdot``."""
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(joint_names)
    msg.position = [float(x) for x in q]
    if qdot is not None:
        msg.velocity = [float(x) for x in qdot]
    return msg


def quaternion_to_array(q: Quaternion) -> np.ndarray:
    """(x, y, z, w) of a geometry_msgs Quaternion."""
    return np.array([q.x, q.y, q.z, q.w], dtype=np.float64)


def array_to_quaternion(xyzw: np.ndarray) -> Quaternion:
    x, y, z, w = (float(v) for v in xyzw)
    return Quaternion(x=x, y=y, z=z, w=w)


def checked_pose(translation: ArrayLike, xyzw: ArrayLike, what: str) -> np.ndarray:
    """``[x, y, z, qx, qy, qz, qw]`` of a pose received as numbers, its quaternion normalized: the one check
    of every pose and transform the nodes and controllers take.

    Raises InputError (named ``what``) for a non-finite number, a translation component beyond
    ``MAX_TRANSLATION``, or a quaternion whose norm is off 1 by more than kinodyn.spatial's
    ``UNIT_NORM_TOLERANCE`` (1e-6: float32 rounding of a unit quaternion is far below it, a quaternion that
    was never normalized far above it); within it, the quaternion is normalized.
    """
    return _checked_pose(np.concatenate((np.asarray(translation, np.float64), np.asarray(xyzw, np.float64))),
                         what)


def checked_pose_array(pose: ArrayLike, what: str) -> np.ndarray:
    """``checked_pose`` of the seven numbers ``[x, y, z, qx, qy, qz, qw]`` given as one array (a base
    state's pose), as a new array."""
    return _checked_pose(np.array(pose, dtype=np.float64), what)


def _checked_pose(pose: np.ndarray, what: str) -> np.ndarray:
    """``checked_pose`` of ``pose``, a new float64 array of this call's, normalized in place."""
    values = pose.tolist()
    if (pose.shape == (POSE_SIZE,) and all(map(math.isfinite, values))
            and max(map(abs, values[:3])) <= MAX_TRANSLATION):
        # the usual pose, at a control loop's rate: the checks (on Python floats) and the normalization below
        # without their calls (np.linalg.norm of a vector is sqrt(q . q): the same number)
        quaternion = pose[3:]
        norm = math.sqrt(quaternion.dot(quaternion))
        if abs(norm - 1.0) <= UNIT_NORM_TOLERANCE:
            pose[3:] = quaternion / norm
            return pose
    if not np.isfinite(pose).all():
        raise InputError("non_finite_pose", f"{what} has a non-finite translation or rotation "
                         f"({pose.tolist()} is not finite)")
    if np.max(np.abs(pose[:3])) > MAX_TRANSLATION:
        raise InputError(
            "translation_too_large",
            f"{what} translation {pose[:3].tolist()} exceeds {MAX_TRANSLATION:g} m in magnitude",
        )
    try:
        as_unit_quaternion(pose[3:])
    except ValueError as exc:
        raise InputError(
            "non_unit_quaternion", f"{what} rotation is not a unit quaternion (x, y, z, w): {exc}"
        ) from None
    pose[3:] = quat_normalize(pose[3:])
    return pose


def _rotation_translation_to_matrix(rotation: Quaternion, translation: np.ndarray, what: str) -> np.ndarray:
    pose = checked_pose(translation, quaternion_to_array(rotation), what)
    return homogeneous_transform(quat_to_matrix(pose[3:]), pose[:3])


def transform_to_matrix(msg: Transform) -> np.ndarray:
    """``T_AB`` of a Transform (translation and rotation of frame B in frame A)."""
    t = msg.translation
    return _rotation_translation_to_matrix(msg.rotation, np.array([t.x, t.y, t.z]), "Transform")


def matrix_to_transform(T: np.ndarray) -> Transform:
    """Transform of ``T_AB``; the quaternion has w >= 0."""
    x, y, z = (float(v) for v in T[:3, 3])
    return Transform(
        translation=Vector3(x=x, y=y, z=z), rotation=array_to_quaternion(matrix_to_quat(T[:3, :3]))
    )


def pose_to_matrix(msg: Pose) -> np.ndarray:
    """``T_AB`` of a Pose of frame B given in frame A."""
    p = msg.position
    return _rotation_translation_to_matrix(msg.orientation, np.array([p.x, p.y, p.z]), "Pose")


def matrix_to_pose(T: np.ndarray) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in T[:3, 3])
    pose.orientation = array_to_quaternion(matrix_to_quat(T[:3, :3]))
    return pose


def transform_stamped(parent: str, child: str, T: np.ndarray, stamp: Time) -> TransformStamped:
    """TransformStamped ``parent <- child`` carrying ``T_parent_child``."""
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = parent
    msg.child_frame_id = child
    msg.transform = matrix_to_transform(T)
    return msg


def odometry_to_pose(msg: Odometry) -> tuple[str, str, np.ndarray]:
    """``(header.frame_id, child_frame_id, T)``: the pose of the child (base) frame in the odometry frame.

    Raises InputError for an empty frame id or a non-finite, too large or non-unit pose.
    """
    if not msg.header.frame_id:
        raise InputError(
            "empty_frame_id",
            "Odometry has an empty header.frame_id; it must name the odometry frame (e.g. 'odom')",
        )
    return msg.header.frame_id, msg.child_frame_id, pose_to_matrix(msg.pose.pose)


def joint_state_vector(
    msg: JointState, values: Sequence[float], joint_names: Sequence[str], what: str
) -> np.ndarray:
    """Per-joint ``values`` listed in the order of ``msg.name``, put in the order of ``joint_names``.

    For the velocity of a JointState or an acceleration sent along with one; call it once
    ``joint_state_to_q(msg, joint_names)`` has accepted the names. Empty ``values`` mean zero for every joint.
    Raises ``JointStateError`` when ``values`` is neither empty nor one per name, or not finite.
    """
    names = list(msg.name)
    if len(values) == 0:
        return np.zeros(len(joint_names))
    if len(values) != len(names):
        raise JointStateError(
            "length_mismatch",
            f"{len(values)} {what} values for {len(names)} joint names; give none (zero) or one per name",
            what,
        )
    array = np.asarray(values, dtype=np.float64)
    bad = [n for n, value in zip(names, array, strict=True) if not math.isfinite(value)]
    if bad:
        raise JointStateError("non_finite", f"non-finite {what} for {_format_names(bad)}", what)
    by_name = dict(zip(names, array, strict=True))
    return np.array([by_name[n] for n in joint_names], dtype=np.float64)


def wrenches_by_link(msgs: Sequence[WrenchStamped]) -> dict[str, np.ndarray]:
    """``{header.frame_id: [force; torque]}``, wrenches on the same frame summed (they act together).

    Raises InputError for an empty ``header.frame_id`` or a non-finite wrench.
    """
    wrenches: dict[str, np.ndarray] = {}
    for i, msg in enumerate(msgs):
        if not msg.header.frame_id:
            raise InputError(
                "empty_frame_id",
                f"wrench {i} has an empty header.frame_id; it must name the link the wrench acts on",
            )
        f, t = msg.wrench.force, msg.wrench.torque
        w = np.array([f.x, f.y, f.z, t.x, t.y, t.z], dtype=np.float64)
        if not np.all(np.isfinite(w)):
            raise InputError(
                "non_finite_wrench", f"wrench {i} on {quoted(msg.header.frame_id)} is not finite: {w}"
            )
        wrenches[msg.header.frame_id] = wrenches.get(msg.header.frame_id, np.zeros(6)) + w
    return wrenches


def array_to_multiarray(a: np.ndarray, labels: Sequence[str]) -> Float64MultiArray:
    """Float64MultiArray of ``a`` in row-major order, one dimension per axis labelled ``labels``.

    ``dim[i].stride`` is the product of the sizes from axis i on, as std_msgs/MultiArrayLayout defines it.
    """
    a = np.ascontiguousarray(a, dtype=np.float64)
    if len(labels) != a.ndim:
        raise ValueError(f"need one label per axis of the {a.ndim}-d array, got {list(labels)}")
    strides: list[int] = [int(s) for s in np.cumprod(a.shape[::-1])[::-1]]  # none for a 0-d array
    msg = Float64MultiArray(data=a.ravel().tolist())
    msg.layout.dim = [
        MultiArrayDimension(label=label, size=int(size), stride=int(stride))
        for label, size, stride in zip(labels, a.shape, strides, strict=True)
    ]
    return msg


def multiarray_to_array(msg: Float64MultiArray) -> np.ndarray:
    """The array a row-major Float64MultiArray holds (``data_offset`` 0); a 1-d array when ``dim`` is empty.

    Raises ValueError when the layout does not describe ``data`` row-major.
    """
    data = np.asarray(msg.data, dtype=np.float64)
    if not msg.layout.dim:
        return data
    shape = tuple(d.size for d in msg.layout.dim)
    expected_strides = np.cumprod(shape[::-1])[::-1]
    strides = tuple(d.stride for d in msg.layout.dim)
    if (
        msg.layout.data_offset != 0
        or strides != tuple(int(s) for s in expected_strides)
        or data.size != int(expected_strides[0])
    ):
        raise ValueError(
            f"Float64MultiArray layout (sizes {shape}, strides {strides}, offset {msg.layout.data_offset}) "
            f"does not describe its {data.size} values row-major"
        )
    return data.reshape(shape)
