"""Deterministic CDR encoders for the messages ``kinodyn estimate`` writes at the IMU rate (ANCHORS.md §6).

rclpy's ``serialize_message`` leaves alignment padding uninitialised (two runs give different bytes) and the
round trip through rosbags' serializer costs ~100 us per nav_msgs/Odometry; these pack the same bytes (little
endian CDR, padding zero, as rosbags writes: test_bags checks them byte for byte) from an rclpy message in a
few microseconds. ``ENCODERS`` maps a type name to its encoder; ``BagWriter.write`` uses it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

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


def odometry_cdr(msg: Any) -> bytes:
    """nav_msgs/msg/Odometry: header, child_frame_id, pose (Point, Quaternion, float64[36]), twist (Vector3,
    Vector3, float64[36]); the doubles start 8-aligned after the two strings."""
    stamp = msg.header.stamp
    frame = msg.header.frame_id.encode() + b"\x00"
    offset = 12 + len(frame)  # payload offset after sec, nanosec, length, frame_id
    child, offset = _string(msg.child_frame_id, offset)
    pose, twist = msg.pose, msg.twist
    p, q = pose.pose.position, pose.pose.orientation
    v, w = twist.twist.linear, twist.twist.angular
    return b"".join((
        _HEADER.pack(ENCAPSULATION, stamp.sec, stamp.nanosec, len(frame)), frame, child,
        b"\x00" * (-offset % 8),
        _POSE.pack(p.x, p.y, p.z, q.x, q.y, q.z, q.w), pose.covariance.astype("<f8", copy=False).tobytes(),
        _TWIST.pack(v.x, v.y, v.z, w.x, w.y, w.z), twist.covariance.astype("<f8", copy=False).tobytes(),
    ))


ENCODERS: dict[str, Callable[[Any], bytes]] = {"nav_msgs/msg/Odometry": odometry_cdr}
