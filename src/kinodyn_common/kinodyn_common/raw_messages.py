"""Messages taken serialized (a subscription with ``raw=True``) and read straight into numpy.

rclpy builds a Python object for every field of a message it deserialises (an Odometry: ten nested objects
and two 36-double arrays) and the nodes then copy the numbers out again. With ``raw=True`` a callback gets the
CDR bytes instead, and a ``RawReader`` reads them through the layout of the message before it
(``bags.cdr.FixedLayout``): a publisher sends the same frame ids, joint names and sequence lengths in every
message, so every offset repeats. When a message has the layout's size and its strings and lengths, its
numbers are numpy views of its bytes at the layout's offsets; otherwise it is parsed in full and its layout
is the one kept.

Bytes that are not a message of the type (cut short, a sequence or string running past the end, a string
without its NUL or not UTF-8, big-endian CDR) raise ``InputError`` (kind ``malformed_cdr``), which the nodes
log as one throttled line and drop, as they drop any unusable message. Bytes after a message are ignored, as
Fast DDS's own deserializer ignores them (rclpy's ``serialize_message`` leaves some after an empty sequence).

``RawWriter`` goes the other way for a publisher that sends the same strings and lengths in every message
(a broadcaster): a template's bytes, refilled in place with each message's stamp and numbers;
``joint_pd_command_writer`` and ``contact_schedule_writer`` are the wbc's (its command and contact schedule).

The readers return views that carry the fields the nodes read, under the messages' names
(``header.stamp.sec``, ``name``, ``position``, ...), so the code that checks a typed message checks a view
the same way; what a view leaves out (an Imu's orientation and covariances, a ContactStates' points and
forces) no node reads.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np
from geometry_msgs.msg import Point
from geometry_msgs.msg import Vector3 as Vector3Msg
from rclpy.serialization import serialize_message

from kinodyn_common.cdr import LAYOUT_TYPES, FixedLayout, fixed_layout
from kinodyn_common.conversions import InputError
from kinodyn_common.stamps import split_ns
from kinodyn_interfaces.msg import ContactStates, JointPDCommand

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike


class Stamp(NamedTuple):
    """builtin_interfaces/Time."""

    sec: int
    nanosec: int


class Header(NamedTuple):
    """std_msgs/Header."""

    stamp: Stamp
    frame_id: str


class Vector3(NamedTuple):
    """geometry_msgs/Vector3."""

    x: float
    y: float
    z: float


class JointStateView(NamedTuple):
    """sensor_msgs/JointState; the arrays are read-only views of the message's bytes."""

    header: Header
    name: list[str]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


class ImuView(NamedTuple):
    """sensor_msgs/Imu without its orientation and covariances."""

    header: Header
    angular_velocity: Vector3
    linear_acceleration: Vector3


class ContactStatesView(NamedTuple):
    """kinodyn_interfaces/ContactStates without its points and forces."""

    header: Header
    names: list[str]
    in_contact: np.ndarray  # bool


class OdometryView(NamedTuple):
    """nav_msgs/Odometry without its covariances: ``pose`` is ``[x, y, z, qx, qy, qz, qw]`` in
    ``header.frame_id``, ``twist`` is ``[linear; angular]`` in ``child_frame_id`` (read-only views)."""

    header: Header
    child_frame_id: str
    pose: np.ndarray
    twist: np.ndarray


class JointPDCommandView(NamedTuple):
    """kinodyn_interfaces/JointPDCommand; the arrays are read-only views of the message's bytes."""

    header: Header
    name: list[str]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    kp: np.ndarray
    kd: np.ndarray


_STAMP = struct.Struct("<iI")


@dataclass(frozen=True)
class Layout:
    """A ``bags.cdr.FixedLayout`` prepared for one message at a time: the byte ``spans`` that carry its
    strings and sequence lengths, their bytes joined (``constant``), and where each field's values are
    (``fields``: name -> item dtype, count, offset)."""

    size: int
    texts: tuple[str, ...]
    spans: tuple[slice, ...]
    constant: bytes
    fields: dict[str, tuple[np.dtype, int, int]]

    @classmethod
    def of(cls, fixed: FixedLayout, raw: bytes) -> Layout:
        starts = [int(k) for k in fixed.constant]
        runs: list[list[int]] = []
        for k in starts:
            if runs and runs[-1][1] == k:
                runs[-1][1] = k + 1
            else:
                runs.append([k, k + 1])
        spans = tuple(slice(a, b) for a, b in runs)
        fields = {}
        for name, (dtype, offset) in fixed.dtype.fields.items():  # type: ignore[union-attr,misc]  # a structured dtype: (dtype, offset) per field
            fields[name] = (dtype.base, int(np.prod(dtype.shape, dtype=int)), int(offset))
        return cls(fixed.size, fixed.texts, spans, b"".join(raw[span] for span in spans), fields)

    def matches(self, raw: bytes) -> bool:
        """``raw`` has this layout's size and strings and lengths (its other bytes are values or padding)."""
        return len(raw) == self.size and b"".join(map(raw.__getitem__, self.spans)) == self.constant

    def values(self, raw: bytes, name: str) -> np.ndarray:
        """Field ``name`` of ``raw``: a read-only view of its bytes."""
        dtype, count, offset = self.fields[name]
        return np.frombuffer(raw, dtype, count, offset)

    def header(self, raw: bytes) -> Header:
        sec, nanosec = _STAMP.unpack_from(raw, self.fields["sec"][2])
        return Header(Stamp(sec, nanosec), self.texts[0])


class RawReader:
    """Reads serialized messages of the subclass's ``MSGTYPE`` (one of ``bags.cdr.LAYOUT_TYPES``) through the
    layout of the last one (module docstring)."""

    MSGTYPE: ClassVar[str]

    def __init__(self) -> None:
        msgtype = self.MSGTYPE
        if msgtype not in LAYOUT_TYPES:
            raise ValueError(f"no raw reader for {msgtype}; readable: {', '.join(sorted(LAYOUT_TYPES))}")
        self.msgtype = msgtype
        self.layout: Layout | None = None

    def layout_of(self, raw: bytes) -> Layout:
        """The layout of ``raw`` (the last one when it matches); InputError when ``raw`` is not a message of
        the type."""
        layout = self.layout
        if layout is not None and layout.matches(raw):
            return layout
        try:
            layout = Layout.of(fixed_layout(self.msgtype, raw, exact=False), raw)
        except ValueError as exc:
            raise InputError(
                "malformed_cdr",
                f"{len(raw)} bytes that are not a {self.msgtype} in little-endian CDR ({exc}); the "
                "publisher's message definition or serializer differs from this node's",
            ) from None
        self.layout = layout
        return layout


class JointStateReader(RawReader):
    MSGTYPE = "sensor_msgs/msg/JointState"

    def read(self, raw: bytes) -> JointStateView:
        layout = self.layout_of(raw)
        return JointStateView(layout.header(raw), list(layout.texts[1:]), layout.values(raw, "position"),
                              layout.values(raw, "velocity"), layout.values(raw, "effort"))


class ImuReader(RawReader):
    MSGTYPE = "sensor_msgs/msg/Imu"

    def read(self, raw: bytes) -> ImuView:
        layout = self.layout_of(raw)
        values = layout.values(raw, "values")  # orientation 0:4, covariance 4:13, angular velocity 13:16, ...
        return ImuView(layout.header(raw), Vector3(*values[13:16].tolist()), Vector3(*values[25:28].tolist()))


class ContactStatesReader(RawReader):
    MSGTYPE = "kinodyn_interfaces/msg/ContactStates"

    def read(self, raw: bytes) -> ContactStatesView:
        layout = self.layout_of(raw)
        return ContactStatesView(layout.header(raw), list(layout.texts[1:]),
                                 layout.values(raw, "in_contact").astype(bool))


class OdometryReader(RawReader):
    MSGTYPE = "nav_msgs/msg/Odometry"

    def read(self, raw: bytes) -> OdometryView:
        layout = self.layout_of(raw)
        return OdometryView(layout.header(raw), layout.texts[1], layout.values(raw, "pose"),
                            layout.values(raw, "twist"))


class JointPDCommandReader(RawReader):
    MSGTYPE = "kinodyn_interfaces/msg/JointPDCommand"

    def read(self, raw: bytes) -> JointPDCommandView:
        layout = self.layout_of(raw)
        return JointPDCommandView(layout.header(raw), list(layout.texts[1:]),
                                  *(layout.values(raw, name) for name in ("position", "velocity", "effort",
                                                                          "kp", "kd")))


class RawWriter:
    """Serialized messages of ``msgtype`` (one of ``bags.cdr.LAYOUT_TYPES``) with the strings and lengths of
    ``template`` (an rclpy message of that type): its bytes (padding zero), of which ``write`` sets the stamp
    and the named fields. The bytes are what rclpy would publish for the same message (tested), without
    converting a Python message per publish."""

    def __init__(self, template: Any, msgtype: str) -> None:  # noqa: ANN401  (any rosidl message: no common base)
        raw = serialize_message(template)
        self.layout = Layout.of(fixed_layout(msgtype, raw, exact=False), raw)
        self._buffer = bytearray(len(raw))
        for span in self.layout.spans:
            self._buffer[span] = raw[span]
        self._fields: dict[str, np.ndarray] = {}
        for name, (dtype, count, offset) in self.layout.fields.items():
            view = np.frombuffer(self._buffer, dtype, count, offset)  # writable: a view of the bytearray
            view[:] = np.frombuffer(raw, dtype, count, offset)  # the template's values, until written
            self._fields[name] = view
        self._stamp_offset = self.layout.fields["sec"][2]

    def write(self, sec: int, nanosec: int, **values: ArrayLike) -> bytes:
        """The bytes of the message stamped ``(sec, nanosec)`` with each named field set to its values (the
        others keep the last ones written, or the template's)."""
        _STAMP.pack_into(self._buffer, self._stamp_offset, sec, nanosec)
        for name, value in values.items():
            self._fields[name][:] = value
        return bytes(self._buffer)

    def field(self, name: str) -> np.ndarray:
        """The writable view of field ``name`` (e.g. to set part of the Imu's ``values``)."""
        return self._fields[name]


class NamedWriter:
    """Bytes of a message whose names are its only strings (``msgtype`` one of ``bags.cdr.LAYOUT_TYPES``,
    ``template(names)`` its rclpy message): a ``RawWriter`` per name list, made again when the names change
    (the wbc's joints and feet stay the same from tick to tick)."""

    # Any: the template is a rosidl message class; they share no base type
    def __init__(self, msgtype: str, template: Callable[[list[str]], Any]) -> None:
        self._msgtype, self._template = msgtype, template
        self._names: list[str] | None = None
        self._writer: RawWriter | None = None

    def write(self, stamp_ns: int, names: list[str], **values: ArrayLike) -> bytes:
        """The message stamped ``stamp_ns`` (>= 0) naming ``names``, each named field set to its values."""
        if self._writer is None or names != self._names:
            self._names = list(names)
            self._writer = RawWriter(self._template(self._names), self._msgtype)
        sec, nanosec = split_ns(stamp_ns)
        return self._writer.write(sec, nanosec, **values)


def _joint_pd_command(names: list[str]) -> JointPDCommand:
    zeros = [0.0] * len(names)
    return JointPDCommand(name=names, position=zeros, velocity=zeros, effort=zeros, kp=zeros, kd=zeros)


def _contact_schedule(names: list[str]) -> ContactStates:
    """A schedule: the feet in stance, no contact points or forces (all zero, never written)."""
    n = len(names)
    return ContactStates(names=names, in_contact=[False] * n, points=[Point()] * n, forces=[Vector3Msg()] * n)


def joint_pd_command_writer() -> NamedWriter:
    """kinodyn_interfaces/JointPDCommand: ``write(stamp_ns, names, position=..., velocity=..., effort=...,
    kp=..., kd=...)`` (arrays of the names' length)."""
    return NamedWriter("kinodyn_interfaces/msg/JointPDCommand", _joint_pd_command)


def contact_schedule_writer() -> NamedWriter:
    """kinodyn_interfaces/ContactStates of a contact schedule: ``write(stamp_ns, feet, in_contact=flags)``;
    the frame is empty and the points and forces zero."""
    return NamedWriter("kinodyn_interfaces/msg/ContactStates", _contact_schedule)
