"""Fast CDR for ``kinodyn estimate``'s 500 Hz messages: deterministic encoders of what it writes, decoders of
what it reads (ANCHORS.md §6).

rclpy's ``serialize_message`` leaves alignment padding uninitialised (two runs give different bytes) and the
round trip through rosbags' serializer costs ~100 us per nav_msgs/Odometry; these pack the same bytes (little
endian CDR, padding zero, as rosbags writes: test_bags checks them byte for byte) from an rclpy message in a
few microseconds. ``ENCODERS`` maps a type name to its encoder; ``BagWriter.write`` uses it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR little endian, options 0
_HEADER = struct.Struct("<4siII")  # encapsulation, stamp.sec, stamp.nanosec, frame_id length
_LENGTH = struct.Struct("<I")
_POSE = struct.Struct("<7d")
_TWIST = struct.Struct("<6d")


def _string(text: str, offset: int) -> tuple[bytes, int]:
    """A CDR string at payload ``offset``: zero padding to 4, length with the NUL, bytes, NUL."""
    data = text.encode() + b"\x00"
    pad = -offset % 4
    return b"\x00" * pad + _LENGTH.pack(len(data)) + data, offset + pad + 4 + len(data)


def _odometry_strings(frame_id: str, child_frame_id: str) -> tuple[bytes, bytes]:
    """Odometry's frame_id (with its NUL) and the child_frame_id string with the padding that 8-aligns the
    doubles after it."""
    frame = frame_id.encode() + b"\x00"
    offset = 12 + len(frame)  # payload offset after sec, nanosec, length, frame_id
    child, offset = _string(child_frame_id, offset)
    return frame, child + b"\x00" * (-offset % 8)


def odometry_cdr(msg: Any) -> bytes:
    """nav_msgs/msg/Odometry: header, child_frame_id, pose (Point, Quaternion, float64[36]), twist (Vector3,
    Vector3, float64[36]); the doubles start 8-aligned after the two strings."""
    stamp = msg.header.stamp
    frame, child = _odometry_strings(msg.header.frame_id, msg.child_frame_id)
    pose, twist = msg.pose, msg.twist
    p, q = pose.pose.position, pose.pose.orientation
    v, w = twist.twist.linear, twist.twist.angular
    return b"".join((
        _HEADER.pack(ENCAPSULATION, stamp.sec, stamp.nanosec, len(frame)), frame, child,
        _POSE.pack(p.x, p.y, p.z, q.x, q.y, q.z, q.w), pose.covariance.astype("<f8", copy=False).tobytes(),
        _TWIST.pack(v.x, v.y, v.z, w.x, w.y, w.z), twist.covariance.astype("<f8", copy=False).tobytes(),
    ))


ROW_ORDER = np.r_[0:7, 13:49, 7:13, 49:85]
"""Odometry's doubles (pose, its covariance, twist, its covariance) from an estimate row (position,
quaternion, linear and angular velocity, pose and twist covariances: kinodyn.estimation.events)."""


def odometry_row_cdr(stamp_ns: int, frame_id: str, child_frame_id: str, row: np.ndarray) -> bytes:
    """The bytes ``odometry_cdr`` gives for the Odometry of an estimate row stamped ``stamp_ns``."""
    frame, child = _odometry_strings(frame_id, child_frame_id)
    sec, nanosec = divmod(stamp_ns, 1_000_000_000)
    return b"".join((_HEADER.pack(ENCAPSULATION, sec, nanosec, len(frame)), frame, child,
                     row[ROW_ORDER].astype("<f8", copy=False).tobytes()))


ENCODERS: dict[str, Callable[[Any], bytes]] = {"nav_msgs/msg/Odometry": odometry_cdr}


_LAST_STRINGS: dict[str, tuple[bytes, int, tuple[str, ...]]] = {}


class _Cursor:
    """Little-endian CDR reader of one payload (after the 4-byte encapsulation, which aligns from there)."""

    __slots__ = ("pos", "raw")

    def __init__(self, raw: bytes | memoryview) -> None:
        if bytes(raw[:2]) != b"\x00\x01":
            raise ValueError("not little-endian CDR (encapsulation header)")
        self.raw, self.pos = raw, 4

    def _align(self, size: int) -> int:
        self.pos += -(self.pos - 4) % size
        return self.pos

    def uint32(self) -> int:
        (value,) = _LENGTH.unpack_from(self.raw, self._align(4))
        self.pos += 4
        return value

    def string(self) -> str:
        length = self.uint32()
        start = self.pos
        if length < 1 or self.raw[start + length - 1] != 0:
            raise ValueError("CDR string without its NUL terminator")
        self.pos += length
        return bytes(self.raw[start:start + length - 1]).decode()

    def doubles(self, count: int) -> tuple[float, ...]:
        values = struct.unpack_from(f"<{count}d", self.raw, self._align(8) if count else self.pos)
        self.pos += 8 * count
        return values

    def vectors(self, make: Callable[..., Any]) -> list[Any]:
        """A sequence of 3-double messages (Point, Vector3): 24 bytes each, so one aligned block."""
        values = self.doubles(3 * self.uint32())
        return [make(*values[k:k + 3]) for k in range(0, len(values), 3)]

    def double_array(self, count: int) -> np.ndarray:
        values = np.frombuffer(self.raw, "<f8", count, self._align(8) if count else self.pos)
        self.pos += 8 * count
        return values

    def strings(self, key: str) -> list[str]:
        """A string[]; the bytes of the last one decoded under ``key`` are remembered, so a list that repeats
        in every message (JointState names) is compared, not decoded again."""
        start, phase = self.pos, (self.pos - 4) % 4
        block, last_phase, names = _LAST_STRINGS.get(key, (b"", -1, ()))
        if phase == last_phase and self.raw[start:start + len(block)] == block:
            self.pos += len(block)
            return list(names)
        names = [self.string() for _ in range(self.uint32())]
        _LAST_STRINGS[key] = (bytes(self.raw[start:self.pos]), phase, tuple(names))
        return names

    def header(self, types: Mapping[str, Any]) -> Any:
        sec, nanosec = struct.unpack_from("<iI", self.raw, self._align(4))
        self.pos += 8
        return types["std_msgs/msg/Header"](types["builtin_interfaces/msg/Time"](sec, nanosec), self.string())

    def end(self, message: Any) -> Any:
        """``message`` when the payload ends here (CDR pads to 4: at most 3 bytes left), else ValueError."""
        if len(self.raw) - self.pos > 3:
            raise ValueError("CDR payload longer than its message")
        return message


def imu_from_cdr(raw: bytes | memoryview, types: Mapping[str, Any]) -> Any:
    """sensor_msgs/msg/Imu: header, orientation, 3x3 covariance, angular velocity, covariance, linear
    acceleration, covariance (37 doubles after the header)."""
    cursor = _Cursor(raw)
    header = cursor.header(types)
    v = cursor.doubles(37)
    vector, quaternion = types["geometry_msgs/msg/Vector3"], types["geometry_msgs/msg/Quaternion"]
    return cursor.end(types["sensor_msgs/msg/Imu"](
        header, quaternion(*v[0:4]), np.array(v[4:13]), vector(*v[13:16]), np.array(v[16:25]),
        vector(*v[25:28]), np.array(v[28:37]),
    ))


def joint_state_from_cdr(raw: bytes | memoryview, types: Mapping[str, Any]) -> Any:
    """sensor_msgs/msg/JointState: header, string[] name, float64[] position, velocity, effort."""
    cursor = _Cursor(raw)
    header = cursor.header(types)
    names = cursor.strings("JointState.name")
    arrays = [cursor.double_array(cursor.uint32()) for _ in range(3)]
    return cursor.end(types["sensor_msgs/msg/JointState"](header, names, *arrays))


def contact_states_from_cdr(raw: bytes | memoryview, types: Mapping[str, Any]) -> Any:
    """kinodyn_interfaces/msg/ContactStates: header, string[] names, bool[] in_contact, Point[] points,
    Vector3[] forces."""
    cursor = _Cursor(raw)
    header = cursor.header(types)
    names = cursor.strings("ContactStates.names")
    count = cursor.uint32()
    flags = np.frombuffer(cursor.raw, np.uint8, count, cursor.pos).astype(bool)
    cursor.pos += count
    point, vector = types["geometry_msgs/msg/Point"], types["geometry_msgs/msg/Vector3"]
    points = cursor.vectors(point)
    forces = cursor.vectors(vector)
    return cursor.end(types["kinodyn_interfaces/msg/ContactStates"](header, names, flags, points, forces))


DECODERS: dict[str, Callable[[bytes | memoryview, Mapping[str, Any]], Any]] = {
    "sensor_msgs/msg/Imu": imu_from_cdr,
    "sensor_msgs/msg/JointState": joint_state_from_cdr,
    "kinodyn_interfaces/msg/ContactStates": contact_states_from_cdr,
}
"""Decoders of the installed definitions of the estimator's inputs into the typestore's message classes
(``types`` = ``Typestore.types``); the reader uses one only when the bag's stored RIHS01 hash of the type
equals the installed one (same definition, same bytes)."""
