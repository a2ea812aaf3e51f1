"""QoS in bags (rosbag2_storage/src/rosbag2_storage/qos.cpp): the offered profiles recorded per
topic as rosbags `Qos`, the profile a recorder requests from the publishers it sees, and the one a player
offers for the profiles a bag recorded."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from kinodyn_common.stamps import split_ns
from rclpy.duration import Duration
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    LivelinessPolicy,
    QoSProfile,
    ReliabilityPolicy,
)
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

if TYPE_CHECKING:
    from collections.abc import Sequence

#: rosbag2's default offer and request (Rosbag2QoS: keep_last 10, reliable, volatile, durations unspecified).
DEFAULT_DEPTH = 10
_UNSPECIFIED = QosTime(0, 0)
_Policy = TypeVar("_Policy", ReliabilityPolicy, DurabilityPolicy, LivelinessPolicy)


def _profile(reliability: QosReliability, durability: QosDurability, depth: int) -> Qos:
    return Qos(
        QosHistory.KEEP_LAST, depth, reliability, durability, _UNSPECIFIED, _UNSPECIFIED,
        QosLiveliness.SYSTEM_DEFAULT, _UNSPECIFIED, False,
    )


#: Named offers for topics written by code rather than recorded (BagWriter.add_topic): rclpy's
#: system default, a latched topic (/tf_static, /robot_description), and the sensor-data profile.
PRESETS: dict[str, Qos] = {
    "default": _profile(QosReliability.RELIABLE, QosDurability.VOLATILE, DEFAULT_DEPTH),
    "transient_local": _profile(QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL, 1),
    "sensor": _profile(QosReliability.BEST_EFFORT, QosDurability.VOLATILE, 5),
}


def _qos_time(duration: Duration) -> QosTime:
    sec, nsec = split_ns(duration.nanoseconds)
    return QosTime(sec, nsec)


def from_rclpy(profile: QoSProfile) -> Qos:
    """An endpoint's profile as the graph reports it (rclpy) -> the rosbags record of it."""
    return Qos(
        QosHistory(int(profile.history)),
        int(profile.depth),
        QosReliability(int(profile.reliability)),
        QosDurability(int(profile.durability)),
        _qos_time(profile.deadline),
        _qos_time(profile.lifespan),
        QosLiveliness(int(profile.liveliness)),
        _qos_time(profile.liveliness_lease_duration),
        bool(profile.avoid_ros_namespace_conventions),
    )


def request_for_offers(offers: Sequence[Qos]) -> QoSProfile:
    """The subscription profile rosbag2's recorder requests (`Rosbag2QoS::adapt_request_to_offers`): reliable
    and transient-local only if every publisher offers it, keep_last of the deepest offer (keep_all when
    that is <= 1), durations unspecified so that every publisher is compatible."""
    if not offers:
        return QoSProfile(depth=DEFAULT_DEPTH)
    depth = max(offer.depth for offer in offers)
    reliable = all(offer.reliability == QosReliability.RELIABLE for offer in offers)
    latched = all(offer.durability == QosDurability.TRANSIENT_LOCAL for offer in offers)
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST if depth > 1 else HistoryPolicy.KEEP_ALL,
        depth=depth if depth > 1 else DEFAULT_DEPTH,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
    )


def _compatibility(qos: Qos) -> tuple[object, ...]:
    """The policies that decide compatibility (history and lifespan excluded, as rosbag2)."""
    return qos.reliability, qos.durability, qos.deadline, qos.liveliness, qos.liveliness_lease_duration


def offer_for_recorded(recorded: Sequence[Qos]) -> QoSProfile:
    """The publisher profile rosbag2's player offers (`Rosbag2QoS::adapt_offer_to_recorded_offers`): the
    recorded profile when every recorded offer agrees on the compatibility policies (history reset to
    keep_last 10), else rosbag2's default offer (reliable, volatile)."""
    if not recorded or len({_compatibility(qos) for qos in recorded}) > 1:
        return QoSProfile(depth=DEFAULT_DEPTH)
    qos = recorded[0]
    profile = QoSProfile(
        depth=DEFAULT_DEPTH,
        reliability=_policy(ReliabilityPolicy, qos.reliability, QosReliability.UNKNOWN),
        durability=_policy(DurabilityPolicy, qos.durability, QosDurability.UNKNOWN),
        liveliness=_policy(LivelinessPolicy, qos.liveliness, QosLiveliness.UNKNOWN),
    )
    for name in ("deadline", "lifespan", "liveliness_lease_duration"):
        time = getattr(qos, name)
        setattr(profile, name, Duration(seconds=time.sec, nanoseconds=time.nsec))
    return profile


def _policy(enum: type[_Policy], value: QosReliability | QosDurability | QosLiveliness,
            unknown: object) -> _Policy:
    """rclpy's policy of the same number; system default for a policy recorded as unknown."""
    return enum(0 if value == unknown else value.value)
