"""Time stamps: builtin_interfaces/Time <-> integer nanoseconds <-> seconds, in one place.

A stamp is ``sec`` (int32, >= 0 for a time) plus ``nanosec`` (uint32, below one second). Nanoseconds are the
exact form every node compares and stores; seconds (float) are the simulator's and the controllers' clock,
rounded to the nearest nanosecond when they become a stamp.
"""

from __future__ import annotations

from builtin_interfaces.msg import Time

from kinodyn_common.conversions import InputError

NS = 1_000_000_000
"""Nanoseconds per second."""


def stamp_to_ns(stamp: Time) -> int:
    """Nanoseconds of a builtin_interfaces/Time; raises InputError for a negative ``sec`` or a ``nanosec``
    of a second or more (rclpy's Time refuses both)."""
    if stamp.sec < 0 or stamp.nanosec >= NS:
        raise InputError(
            "bad_stamp",
            f"header.stamp (sec {stamp.sec}, nanosec {stamp.nanosec}) is not a time: sec must be >= 0 and "
            "nanosec < 1e9",
        )
    return int(stamp.sec) * NS + int(stamp.nanosec)


def split_ns(ns: int) -> tuple[int, int]:
    """``(sec, nanosec)`` of ``ns`` nanoseconds: what a header stamp holds."""
    sec, nanosec = divmod(ns, NS)
    return sec, nanosec


def ns_to_stamp(ns: int) -> Time:
    """The builtin_interfaces/Time of ``ns`` nanoseconds (>= 0)."""
    sec, nanosec = split_ns(ns)
    return Time(sec=sec, nanosec=nanosec)


def seconds_to_ns(seconds: float) -> int:
    """``seconds`` rounded to the nearest nanosecond."""
    return round(seconds * NS)


def seconds_to_stamp(seconds: float) -> Time:
    """The builtin_interfaces/Time of ``seconds`` (>= 0), rounded to the nearest nanosecond."""
    return ns_to_stamp(seconds_to_ns(seconds))
