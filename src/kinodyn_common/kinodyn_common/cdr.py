"""Fast CDR for ``kinodyn estimate``'s 500 Hz messages: deterministic encoders of what it writes, decoders of
what it reads.

rclpy's ``serialize_message`` leaves alignment padding uninitialised (two runs give different bytes) and the
round trip through rosbags' serializer costs ~100 us per nav_msgs/Odometry; these pack the same bytes (little
endian CDR, padding zero, as rosbags writes: test_bags checks them byte for byte) from an rclpy message in a
few microseconds. ``ENCODERS`` maps a type name to its encoder; ``BagWriter.write`` uses it.

``fixed_layout`` reads many messages at once: a driver sends the same frame and name lists in every message,
so every string and sequence length, and with them every offset, repeats; ``FixedLayout`` takes them from
one message and decodes every message of that layout in one numpy view (``kinodyn estimate``'s input side).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn_common.stamps import NS, split_ns

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from nav_msgs.msg import Odometry

# Any below: the decoders build messages from the types a bag reader generates at run time (rosbags'
# typestore classes, one per message definition), which have no static type.

ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR little endian, options 0
_HEADER = struct.Struct("<4siII")  # encapsulation, stamp.sec, stamp.nanosec, frame_id length
_LENGTH = struct.Struct("<I")
_POSE = struct.Struct("<7d")
_TWIST = struct.Struct("<6d")
_MAX_TRAILING_PADDING = 3  # CDR pads a message to a multiple of 4 bytes


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


def odometry_cdr(msg: Odometry) -> bytes:
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


def odometry_rows_cdr(stamps_ns: np.ndarray, frame_id: str, child_frame_id: str, rows: np.ndarray
                      ) -> list[bytes]:
    """The bytes ``odometry_cdr`` gives for the Odometry of each estimate row, stamped ``stamps_ns``: the
    strings are the same in every message, so the messages are one (rows, bytes) array filled a column block
    at a time."""
    frame, child = _odometry_strings(frame_id, child_frame_id)
    if len(rows) == 1:  # a live node's one estimate: packed directly
        sec, nanosec = split_ns(int(stamps_ns[0]))
        return [b"".join((_HEADER.pack(ENCAPSULATION, sec, nanosec, len(frame)), frame, child,
                          np.ascontiguousarray(rows[0, ROW_ORDER], "<f8").tobytes()))]
    head = 16 + len(frame) + len(child)  # encapsulation, sec, nanosec, frame length, the two strings
    out = np.zeros((len(rows), head + 8 * len(ROW_ORDER)), np.uint8)
    secs, nanosecs = np.divmod(np.asarray(stamps_ns, np.int64), NS)
    out[:, :4] = np.frombuffer(ENCAPSULATION, np.uint8)
    out[:, 4:8] = secs.astype("<i4").view(np.uint8).reshape(-1, 4)
    out[:, 8:12] = nanosecs.astype("<u4").view(np.uint8).reshape(-1, 4)
    out[:, 12:head] = np.frombuffer(_LENGTH.pack(len(frame)) + frame + child, np.uint8)
    out[:, head:] = np.ascontiguousarray(rows[:, ROW_ORDER], "<f8").view(np.uint8)
    data, size = out.tobytes(), out.shape[1]
    return [data[k:k + size] for k in range(0, len(data), size)]


_TRANSFORM_HEAD = struct.Struct("<4sIiII")  # encapsulation, 1 transform, sec, nanosec, frame_id length


def transform_row_cdr(stamp_ns: int, frame_id: str, child_frame_id: str, row: np.ndarray) -> bytes:
    """tf2_msgs/msg/TFMessage of one geometry_msgs/TransformStamped ``frame_id -> child_frame_id`` stamped
    ``stamp_ns``, its translation and rotation (x, y, z, w) the first seven numbers of an estimate row (the
    pose ``odometry_rows_cdr`` packs); the doubles start 8-aligned after the two strings."""
    sec, nanosec = split_ns(stamp_ns)
    frame = frame_id.encode() + b"\x00"
    child, offset = _string(child_frame_id, 16 + len(frame))  # after the length, sec, nanosec, frame
    return b"".join((_TRANSFORM_HEAD.pack(ENCAPSULATION, 1, sec, nanosec, len(frame)), frame, child,
                     b"\x00" * (-offset % 8), np.ascontiguousarray(row[:7], "<f8").tobytes()))


ENCODERS: dict[str, Callable[[Odometry], bytes]] = {"nav_msgs/msg/Odometry": odometry_cdr}


_LAST_STRINGS: dict[str, tuple[bytes, int, tuple[str, ...]]] = {}


class _Cursor:
    """Little-endian CDR reader of one payload (after the 4-byte encapsulation, which aligns from there).
    Bytes after the message are ignored (rclpy carries 4 unused bytes per empty sequence of doubles; rclpy
    and Foxglove ignore them too)."""

    __slots__ = ("pos", "raw")

    def __init__(self, raw: bytes | memoryview) -> None:
        if bytes(raw[:2]) != b"\x00\x01":
            raise ValueError("not little-endian CDR (encapsulation header)")
        self.raw, self.pos = raw, 4

    def align(self, size: int) -> int:
        self.pos += -(self.pos - 4) % size
        return self.pos

    def uint32(self) -> int:
        value: int
        (value,) = _LENGTH.unpack_from(self.raw, self.align(4))
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
        values = struct.unpack_from(f"<{count}d", self.raw, self.align(8) if count else self.pos)
        self.pos += 8 * count
        return values

    def vectors(self, make: Callable[..., Any]) -> list[Any]:
        """A sequence of 3-double messages (Point, Vector3): 24 bytes each, so one aligned block."""
        values = self.doubles(3 * self.uint32())
        return [make(*values[k:k + 3]) for k in range(0, len(values), 3)]

    def double_array(self, count: int) -> np.ndarray:
        values = np.frombuffer(self.raw, "<f8", count, self.align(8) if count else self.pos)
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
        decoded = [self.string() for _ in range(self.uint32())]
        _LAST_STRINGS[key] = (bytes(self.raw[start:self.pos]), phase, tuple(decoded))
        return decoded

    def header(self, types: Mapping[str, Any]) -> Any:  # noqa: ANN401  (rosbags type)
        sec, nanosec = struct.unpack_from("<iI", self.raw, self.align(4))
        self.pos += 8
        return types["std_msgs/msg/Header"](types["builtin_interfaces/msg/Time"](sec, nanosec), self.string())


def imu_from_cdr(raw: bytes | memoryview, types: Mapping[str, Any]) -> Any:  # noqa: ANN401  (rosbags type)
    """sensor_msgs/msg/Imu: header, orientation, 3x3 covariance, angular velocity, covariance, linear
    acceleration, covariance (37 doubles after the header)."""
    cursor = _Cursor(raw)
    header = cursor.header(types)
    v = cursor.doubles(37)
    vector, quaternion = types["geometry_msgs/msg/Vector3"], types["geometry_msgs/msg/Quaternion"]
    return types["sensor_msgs/msg/Imu"](
        header, quaternion(*v[0:4]), np.array(v[4:13]), vector(*v[13:16]), np.array(v[16:25]),
        vector(*v[25:28]), np.array(v[28:37]),
    )


def joint_state_from_cdr(raw: bytes | memoryview, types: Mapping[str, Any]) -> Any:  # noqa: ANN401  (rosbags type)
    """sensor_msgs/msg/JointState: header, string[] name, float64[] position, velocity, effort."""
    cursor = _Cursor(raw)
    header = cursor.header(types)
    names = cursor.strings("JointState.name")
    arrays = [cursor.double_array(cursor.uint32()) for _ in range(3)]
    return types["sensor_msgs/msg/JointState"](header, names, *arrays)


def contact_states_from_cdr(raw: bytes | memoryview, types: Mapping[str, Any]) -> Any:  # noqa: ANN401  (rosbags type)
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
    return types["kinodyn_interfaces/msg/ContactStates"](header, names, flags, points, forces)


@dataclass(frozen=True)
class ContactArrays:
    """kinodyn_interfaces/msg/ContactStates as arrays (the viewer's input: thousands of contacts decode in
    microseconds, where rclpy builds one Python object per point)."""

    frame_id: str
    names: int  # how many names
    in_contact: np.ndarray  # (k,) bool
    points: np.ndarray  # (m, 3)
    forces: np.ndarray  # (j, 3)


def contact_arrays_from_cdr(raw: bytes | memoryview) -> ContactArrays:
    """The arrays of a serialized ContactStates; ValueError for bytes that are not one (cut short, ...)."""
    try:
        cursor = _Cursor(raw)
        cursor.pos = cursor.align(4) + 8  # the stamp
        frame_id = cursor.string()
        names = cursor.strings("ContactStates.names")
        count = cursor.uint32()
        flags = np.frombuffer(cursor.raw, np.uint8, count, cursor.pos).astype(bool)
        cursor.pos += count
        points = cursor.double_array(3 * cursor.uint32()).reshape(-1, 3)
        forces = cursor.double_array(3 * cursor.uint32()).reshape(-1, 3)
    except (IndexError, struct.error) as exc:
        raise ValueError(f"ContactStates CDR cut short ({len(raw)} bytes): {exc}") from None
    return ContactArrays(frame_id, len(names), flags, points, forces)


@dataclass(frozen=True)
class FixedLayout:
    """One layout of a message type's CDR: its ``size``, the bytes that carry strings and sequence lengths
    (``constant`` offsets, ``expected`` values: the template's), and ``dtype``, a structured view of a whole
    message naming the values (``sec``, ``nanosec``, then the type's fields). ``texts`` and ``counts`` are the
    template's strings (frame_id, names) and sequence lengths, in message order. Alignment padding is not
    compared (rclpy leaves it uninitialised)."""

    size: int
    constant: np.ndarray
    expected: np.ndarray
    dtype: np.dtype
    texts: tuple[str, ...]
    counts: tuple[int, ...]

    def decode(self, raws: Sequence[bytes | memoryview]) -> tuple[np.ndarray, np.ndarray]:
        """``(matches, values)``: which of ``raws`` have this layout (size and constant bytes), and the values
        of those, one ``dtype`` record each, in order."""
        matches = np.fromiter(map(len, raws), np.intp, len(raws)) == self.size
        chosen = raws if matches.all() else [r for r, ok in zip(raws, matches.tolist(), strict=True) if ok]
        data = np.frombuffer(b"".join(chosen), np.uint8).reshape(-1, self.size)
        same = (data[:, self.constant] == self.expected).all(axis=1)
        if not same.all():
            matches[matches] = same
            data = data[same]
        return matches, data.view(self.dtype)[:, 0]


class _LayoutCursor(_Cursor):
    """A ``_Cursor`` walking one message that records its layout: constant bytes and value fields."""

    __slots__ = ("constant", "counts", "fields", "texts")

    def __init__(self, raw: bytes | memoryview) -> None:
        super().__init__(raw)
        self.constant: list[range] = [range(0, 2)]  # little-endian CDR
        self.fields: list[tuple[str, int, np.dtype]] = []
        self.texts: list[str] = []
        self.counts: list[int] = []

    def length(self) -> int:
        """A sequence or string length, constant in the layout."""
        start = self.align(4)
        self.constant.append(range(start, start + 4))
        return self.uint32()

    def text(self) -> str:
        """A string, constant in the layout (length and bytes)."""
        start = self.align(4)
        self.texts.append(self.string())
        self.constant.append(range(start, self.pos))
        return self.texts[-1]

    def value(self, name: str, kind: str, count: int | None = None) -> None:
        """A field of values: one ``kind`` scalar, or ``count`` of them (no alignment when there are none)."""
        size = np.dtype(kind).itemsize
        start = self.align(size) if count != 0 else self.pos
        self.fields.append((name, start, np.dtype(kind if count is None else (kind, (count,)))))
        self.pos = start + size * (1 if count is None else count)

    def sequence(self, name: str, kind: str, per_item: int = 1) -> None:
        count = self.length()
        self.counts.append(count)
        self.value(name, kind, per_item * count)

    def stamped(self) -> None:
        """std_msgs/Header: stamp values, frame_id constant."""
        self.value("sec", "<i4")
        self.value("nanosec", "<u4")
        self.text()

    def layout(self, exact: bool = True) -> FixedLayout:
        """``exact``: at most CDR's padding to 4 after the message; else any bytes after it are part of the
        layout (Fast DDS's deserializer ignores them: rclpy's ``serialize_message`` leaves some)."""
        extra = len(self.raw) - self.pos
        if extra < 0 or (exact and extra > _MAX_TRAILING_PADDING):
            raise ValueError("CDR payload length does not match its message")
        constant = np.array([k for span in self.constant for k in span], np.intp)
        names, offsets, formats = zip(*self.fields, strict=True)
        dtype = np.dtype({"names": list(names), "formats": list(formats), "offsets": list(offsets),
                          "itemsize": len(self.raw)})
        return FixedLayout(len(self.raw), constant, np.frombuffer(bytes(self.raw), np.uint8)[constant], dtype,
                           tuple(self.texts), tuple(self.counts))


def _imu_layout(cursor: _LayoutCursor) -> None:
    """sensor_msgs/msg/Imu: ``values`` are the 37 doubles (orientation, its covariance, angular velocity at
    13:16, its covariance, linear acceleration at 25:28, its covariance)."""
    cursor.stamped()
    cursor.value("values", "<f8", 37)


def _named_layout(cursor: _LayoutCursor) -> None:
    """A header, then ``string[]`` names: ``texts`` frame_id and the names, ``counts`` starts with the name
    count."""
    cursor.stamped()
    cursor.counts.append(cursor.length())
    for _ in range(cursor.counts[0]):
        cursor.text()


def _joint_state_layout(cursor: _LayoutCursor) -> None:
    """sensor_msgs/msg/JointState: names, then ``position``, ``velocity`` and ``effort``."""
    _named_layout(cursor)
    for name in ("position", "velocity", "effort"):
        cursor.sequence(name, "<f8")


def _contact_states_layout(cursor: _LayoutCursor) -> None:
    """kinodyn_interfaces/msg/ContactStates: names, then ``in_contact`` (bytes), ``points`` and ``forces``
    (3 doubles each)."""
    _named_layout(cursor)
    cursor.sequence("in_contact", "u1")
    cursor.sequence("points", "<f8", 3)
    cursor.sequence("forces", "<f8", 3)


def _odometry_layout(cursor: _LayoutCursor) -> None:
    """nav_msgs/msg/Odometry: ``texts`` frame_id and child_frame_id; ``pose`` (position, orientation x y z
    w), its ``pose_covariance``, ``twist`` (linear, angular) and its ``twist_covariance``."""
    cursor.stamped()
    cursor.text()
    cursor.value("pose", "<f8", 7)
    cursor.value("pose_covariance", "<f8", 36)
    cursor.value("twist", "<f8", 6)
    cursor.value("twist_covariance", "<f8", 36)


def _joint_pd_command_layout(cursor: _LayoutCursor) -> None:
    """kinodyn_interfaces/msg/JointPDCommand: names, then ``position``, ``velocity``, ``effort``, ``kp`` and
    ``kd``."""
    _named_layout(cursor)
    for name in ("position", "velocity", "effort", "kp", "kd"):
        cursor.sequence(name, "<f8")


_LAYOUTS: dict[str, Callable[[_LayoutCursor], None]] = {
    "sensor_msgs/msg/Imu": _imu_layout,
    "sensor_msgs/msg/JointState": _joint_state_layout,
    "kinodyn_interfaces/msg/ContactStates": _contact_states_layout,
    "nav_msgs/msg/Odometry": _odometry_layout,
    "kinodyn_interfaces/msg/JointPDCommand": _joint_pd_command_layout,
}
LAYOUT_TYPES = frozenset(_LAYOUTS)


def fixed_layout(msgtype: str, raw: bytes | memoryview, exact: bool = True) -> FixedLayout:
    """The layout of ``raw``, a message of ``msgtype`` (one of LAYOUT_TYPES, the installed definitions: use
    it only where the bag stores them, as DECODERS, or on a live subscription of that type); ValueError when
    ``raw`` is not such a message in little-endian CDR (with ``exact``, also when more than CDR's padding
    follows it: ``_LayoutCursor.layout``)."""
    cursor = _LayoutCursor(raw)
    try:
        _LAYOUTS[msgtype](cursor)
    except (struct.error, IndexError) as exc:
        raise ValueError(f"malformed {msgtype} CDR: {exc}") from None
    return cursor.layout(exact)


DECODERS: dict[str, Callable[[bytes | memoryview, Mapping[str, Any]], Any]] = {
    "sensor_msgs/msg/Imu": imu_from_cdr,
    "sensor_msgs/msg/JointState": joint_state_from_cdr,
    "kinodyn_interfaces/msg/ContactStates": contact_states_from_cdr,
}
"""Decoders of the installed definitions of the estimator's inputs into the typestore's message classes
(``types`` = ``Typestore.types``); the reader uses one only when the bag's stored RIHS01 hash of the type
equals the installed one (same definition, same bytes)."""
