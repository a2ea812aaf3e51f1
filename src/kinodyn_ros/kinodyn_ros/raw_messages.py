"""Messages taken serialized (a subscription with ``raw=True``) and read straight into numpy.

rclpy builds a Python object for every field of a message it deserialises (an Odometry: ten nested objects
and two 36-double arrays) and the nodes then copy the numbers out again. With ``raw=True`` a callback gets the
CDR bytes instead, and a ``RawReader`` reads them through the layout of the message before it
(``bags.cdr.FixedLayout``): a publisher sends the same frame ids, joint names and sequence lengths in every
message, so every offset repeats. When a message has the layout's size and its strings and lengths, its
numbers are one numpy view of its bytes; otherwise it is parsed in full and its layout is the one kept.

Bytes that are not a message of the type (cut short, a sequence or string running past the end, a string
without its NUL or not UTF-8, big-endian CDR) raise ``InputError`` (kind ``malformed_cdr``), which the nodes
log as one throttled line and drop, as they drop any unusable message. Bytes after a message are ignored, as
Fast DDS's own deserializer ignores them (rclpy's ``serialize_message`` leaves some after an empty sequence).

The readers return views that carry the fields the nodes read, under the messages' names
(``header.stamp.sec``, ``name``, ``position``, ...), so the code that checks a typed message checks a view
the same way; what a view leaves out (an Imu's orientation and covariances, a ContactStates' points and
forces) no node reads.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kinodyn_ros.bags.cdr import LAYOUT_TYPES, FixedLayout, fixed_layout
from kinodyn_ros.conversions import InputError


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


class RawReader:
    """Reads serialized messages of ``msgtype`` (one of ``bags.cdr.LAYOUT_TYPES``) through the layout of the
    last one (module docstring)."""

    def __init__(self, msgtype: str) -> None:
        if msgtype not in LAYOUT_TYPES:
            raise ValueError(f"no raw reader for {msgtype}; readable: {', '.join(sorted(LAYOUT_TYPES))}")
        self.msgtype = msgtype
        self.layout: FixedLayout | None = None

    def record(self, raw: bytes) -> tuple[FixedLayout, np.void]:
        """The layout of ``raw`` and its values as one record of the layout's dtype (``sec``, ``nanosec``,
        then the type's fields: bags.cdr); InputError when ``raw`` is not a message of the type."""
        layout = self.layout
        if layout is None or len(raw) != layout.size or not (
            np.frombuffer(raw, np.uint8)[layout.constant] == layout.expected
        ).all():
            try:
                layout = fixed_layout(self.msgtype, raw, exact=False)
            except ValueError as exc:
                raise InputError(
                    "malformed_cdr",
                    f"{len(raw)} bytes that are not a {self.msgtype} in little-endian CDR ({exc}); the "
                    "publisher's message definition or serializer differs from this node's",
                ) from None
            self.layout = layout
        return layout, np.frombuffer(raw, layout.dtype, 1)[0]


def _header(layout: FixedLayout, record: np.void) -> Header:
    return Header(Stamp(int(record["sec"]), int(record["nanosec"])), layout.texts[0])


class JointStateReader(RawReader):
    def __init__(self) -> None:
        super().__init__("sensor_msgs/msg/JointState")

    def read(self, raw: bytes) -> JointStateView:
        layout, record = self.record(raw)
        return JointStateView(_header(layout, record), list(layout.texts[1:]), record["position"],
                              record["velocity"], record["effort"])


class ImuReader(RawReader):
    def __init__(self) -> None:
        super().__init__("sensor_msgs/msg/Imu")

    def read(self, raw: bytes) -> ImuView:
        layout, record = self.record(raw)
        values = record["values"]  # orientation 0:4, covariance 4:13, angular velocity 13:16, ...
        return ImuView(_header(layout, record), Vector3(*values[13:16].tolist()),
                       Vector3(*values[25:28].tolist()))


class ContactStatesReader(RawReader):
    def __init__(self) -> None:
        super().__init__("kinodyn_interfaces/msg/ContactStates")

    def read(self, raw: bytes) -> ContactStatesView:
        layout, record = self.record(raw)
        return ContactStatesView(_header(layout, record), list(layout.texts[1:]),
                                 record["in_contact"].astype(bool))


class OdometryReader(RawReader):
    def __init__(self) -> None:
        super().__init__("nav_msgs/msg/Odometry")

    def read(self, raw: bytes) -> OdometryView:
        layout, record = self.record(raw)
        return OdometryView(_header(layout, record), layout.texts[1], record["pose"], record["twist"])


class JointPDCommandReader(RawReader):
    def __init__(self) -> None:
        super().__init__("kinodyn_interfaces/msg/JointPDCommand")

    def read(self, raw: bytes) -> JointPDCommandView:
        layout, record = self.record(raw)
        return JointPDCommandView(_header(layout, record), list(layout.texts[1:]), record["position"],
                                  record["velocity"], record["effort"], record["kp"], record["kd"])
