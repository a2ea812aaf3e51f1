"""kinodyn_common.raw_messages: the views of serialized messages equal what rclpy deserialises; bytes that are
not a message of the type are one InputError (kind malformed_cdr), never another exception."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, TypeVar

import numpy as np
import pytest
from kinodyn_common.cdr import odometry_rows_cdr
from kinodyn_common.conversions import InputError
from kinodyn_common.raw_messages import (
    ContactStatesReader,
    ContactStatesView,
    ImuReader,
    ImuView,
    JointPDCommandReader,
    JointPDCommandView,
    JointStateReader,
    OdometryReader,
    OdometryView,
    RawWriter,
)
from kinodyn_common.stamps import split_ns
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Imu, JointState

from kinodyn_interfaces.msg import ContactStates, JointPDCommand

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn_common.raw_messages import JointStateView

    Message: TypeAlias = JointState | Imu | ContactStates | Odometry | JointPDCommand
    View: TypeAlias = JointStateView | ImuView | ContactStatesView | OdometryView | JointPDCommandView
    Reader: TypeAlias = (JointStateReader | ImuReader | ContactStatesReader | OdometryReader
                         | JointPDCommandReader)

RNG = np.random.default_rng(7)
MsgT = TypeVar("MsgT", JointState, Imu, ContactStates, Odometry, JointPDCommand)


def _stamped(msg: MsgT, k: int, frame: str) -> MsgT:
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1000 + k, 2_000_000 * k + 1
    msg.header.frame_id = frame
    return msg


def joint_state(k: int, names: list[str], effort: bool = True) -> JointState:
    msg = _stamped(JointState(name=names), k, "")
    msg.position, msg.velocity = RNG.normal(size=len(names)).tolist(), RNG.normal(size=len(names)).tolist()
    msg.effort = RNG.normal(size=len(names)).tolist() if effort else []
    return msg


def imu(k: int, frame: str = "imu_link") -> Imu:
    msg = _stamped(Imu(), k, frame)
    values = RNG.normal(size=10).tolist()
    o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
    o.x, o.y, o.z, o.w, w.x, w.y, w.z, a.x, a.y, a.z = values
    msg.angular_velocity_covariance = RNG.normal(size=9)
    return msg


def contacts(k: int, names: list[str]) -> ContactStates:
    msg = _stamped(ContactStates(names=names), k, "world")
    msg.in_contact = (RNG.random(len(names)) < 0.5).tolist()
    return msg


def odometry(k: int, child: str = "base_link") -> Odometry:
    msg = _stamped(Odometry(child_frame_id=child), k, "odom")
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    v, w = msg.twist.twist.linear, msg.twist.twist.angular
    p.x, p.y, p.z, q.x, q.y, q.z, q.w, v.x, v.y, v.z, w.x, w.y, w.z = RNG.normal(size=13).tolist()
    msg.pose.covariance = RNG.normal(size=36)
    return msg


def command(k: int, names: list[str]) -> JointPDCommand:
    msg = _stamped(JointPDCommand(name=names), k, "")
    for field in ("position", "velocity", "effort", "kp", "kd"):
        setattr(msg, field, RNG.normal(size=len(names)).tolist())
    return msg


def _same_header(view: View, msg: Message) -> None:
    assert (view.header.stamp.sec, view.header.stamp.nanosec, view.header.frame_id) == (
        msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id)


JOINTS = [f"J{i}_joint" for i in range(12)]


def test_joint_states_of_one_layout_and_of_the_next() -> None:
    reader = JointStateReader()
    sequence = [joint_state(k, JOINTS) for k in range(3)] + [joint_state(3, JOINTS[:5], effort=False),
                                                              joint_state(4, ["é", "x" * 7]),
                                                              joint_state(5, JOINTS)]
    layouts = []
    for msg in sequence:
        view = reader.read(serialize_message(msg))
        layouts.append(reader.layout)
        _same_header(view, msg)
        assert view.name == list(msg.name)
        for field in ("position", "velocity", "effort"):
            np.testing.assert_array_equal(getattr(view, field), np.asarray(getattr(msg, field)))
    assert layouts[0] is layouts[1] is layouts[2]  # the same layout: matched, not parsed again
    assert len({id(layout) for layout in layouts}) == 4


@pytest.mark.parametrize("case", ["imu", "contacts", "odometry", "command"])
def test_each_view_holds_the_message_numbers(case: str) -> None:
    cases: dict[str, tuple[Callable[[int], Message], Reader]] = {
        "imu": (imu, ImuReader()),
        "contacts": (lambda k: contacts(k, ["LF_FOOT", "RH_FOOT", "X"]), ContactStatesReader()),
        "odometry": (odometry, OdometryReader()),
        "command": (lambda k: command(k, JOINTS), JointPDCommandReader()),
    }
    make, reader = cases[case]
    for k in range(3):
        msg = make(k)
        view = reader.read(serialize_message(msg))
        _same_header(view, msg)
        if case == "imu":
            assert isinstance(view, ImuView)
            for field in ("angular_velocity", "linear_acceleration"):
                v = getattr(msg, field)
                assert tuple(getattr(view, field)) == (v.x, v.y, v.z)
        elif case == "contacts":
            assert isinstance(view, ContactStatesView)
            assert isinstance(msg, ContactStates)
            assert view.names == list(msg.names)
            np.testing.assert_array_equal(view.in_contact, np.asarray(msg.in_contact, bool))
        elif case == "odometry":
            assert isinstance(view, OdometryView)
            assert isinstance(msg, Odometry)
            p, q = msg.pose.pose.position, msg.pose.pose.orientation
            v, w = msg.twist.twist.linear, msg.twist.twist.angular
            assert view.child_frame_id == msg.child_frame_id
            assert view.pose.tolist() == [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
            assert view.twist.tolist() == [v.x, v.y, v.z, w.x, w.y, w.z]
        else:
            assert isinstance(view, JointPDCommandView)
            assert isinstance(msg, JointPDCommand)
            assert view.name == list(msg.name)
            for field in ("position", "velocity", "effort", "kp", "kd"):
                np.testing.assert_array_equal(getattr(view, field), np.asarray(getattr(msg, field)))


def _refuses_or_reads(reader: Reader, data: bytes) -> bool:
    """True when refused with InputError malformed_cdr; False when read (any other exception fails)."""
    try:
        reader.read(data)
    except InputError as exc:
        error = exc
    else:
        return False
    assert error.kind == "malformed_cdr"
    assert reader.msgtype in str(error)
    assert f"{len(data)} bytes" in str(error)
    return True


@pytest.mark.parametrize("case", ["joint_state", "imu", "contacts", "odometry", "command"])
def test_malformed_bytes_are_one_input_error(case: str) -> None:
    messages: dict[str, tuple[Message, Reader]] = {
        "joint_state": (joint_state(1, JOINTS), JointStateReader()),
        "imu": (imu(1), ImuReader()),
        "contacts": (contacts(1, ["LF_FOOT", "RH_FOOT"]), ContactStatesReader()),
        "odometry": (odometry(1), OdometryReader()),
        "command": (command(1, JOINTS), JointPDCommandReader()),
    }
    msg, reader = messages[case]
    data = serialize_message(msg)
    reader.read(data)  # a layout kept: every refusal below must also leave it usable
    # cut short anywhere (the last 1-3 bytes may be CDR's padding to 4); bytes after it are ignored
    for end in range(len(data) - 3):
        assert _refuses_or_reads(reader, data[:end]), end
    assert not _refuses_or_reads(reader, data + b"\x00" * 4)
    assert _refuses_or_reads(reader, b"\x00\x00" + data[2:])  # big-endian CDR
    assert _refuses_or_reads(reader, b"")
    # garbage: random bytes, and the message with random bytes overwritten (a length or a NUL hit is refused,
    # a value hit reads as another value); never anything but InputError
    for _ in range(300):
        garbage = RNG.integers(0, 256, RNG.integers(0, 2 * len(data))).astype(np.uint8).tobytes()
        _refuses_or_reads(reader, garbage)
        hit = bytearray(data)
        for at in RNG.integers(0, len(data), 3):
            hit[at] = int(RNG.integers(0, 256))
        _refuses_or_reads(reader, bytes(hit))
    view = reader.read(data)
    _same_header(view, msg)


def test_a_length_past_the_end_is_refused() -> None:
    """A sequence length of 2^32 - 1 (a corrupted count) is refused, not allocated."""
    msg = joint_state(1, JOINTS)
    data = bytearray(serialize_message(msg))
    reader = JointStateReader()
    reader.read(bytes(data))
    layout = reader.layout
    assert layout is not None
    position = layout.fields["position"][2]  # offset of the positions; their count is just before
    data[position - 4:position] = b"\xff\xff\xff\xff"
    assert _refuses_or_reads(reader, bytes(data))


def test_views_agree_with_rclpy_on_its_own_bytes() -> None:
    """What rclpy deserialises from the bytes a view was read from is what the view holds."""
    data = serialize_message(joint_state(9, JOINTS))
    view, again = JointStateReader().read(data), deserialize_message(data, JointState)
    assert view.name == list(again.name)
    np.testing.assert_array_equal(view.position, np.asarray(again.position))


def test_the_estimators_odometry_bytes_read_back_as_its_estimate_row() -> None:
    """``bags.cdr.odometry_rows_cdr`` of one row (what state_estimator publishes) gives that row's bytes in a
    block of rows, and a reader (wbc's) finds the row's pose and twist in them."""
    rows = RNG.normal(size=(3, 85))
    stamps = np.array([5_000_000_000, 5_002_000_000, 7_000_000_001])
    block = odometry_rows_cdr(stamps, "odom", "base_link", rows)
    reader = OdometryReader()
    for k in range(3):
        (one,) = odometry_rows_cdr(stamps[k:k + 1], "odom", "base_link", rows[k:k + 1])
        assert one == block[k]
        view = reader.read(one)
        assert (view.header.stamp.sec, view.header.stamp.nanosec) == split_ns(int(stamps[k]))
        assert (view.header.frame_id, view.child_frame_id) == ("odom", "base_link")
        assert view.pose.tolist() == rows[k, 0:7].tolist()
        assert view.twist.tolist() == rows[k, 7:13].tolist()


def test_a_writer_gives_what_rclpy_reads_as_the_typed_message() -> None:
    """``RawWriter`` (the broadcasters' publisher side): each message rclpy deserialises from its bytes equals
    the typed message filled with the same stamp and values; a field not written keeps the template's."""
    template = joint_state(0, JOINTS)
    template.header.frame_id = "base"
    writer = RawWriter(template, "sensor_msgs/msg/JointState")
    for k in range(3):
        expected = joint_state(k, JOINTS)
        expected.header.frame_id = "base"
        data = writer.write(expected.header.stamp.sec, expected.header.stamp.nanosec,
                            position=np.asarray(expected.position), velocity=np.asarray(expected.velocity),
                            effort=np.asarray(expected.effort))
        got = deserialize_message(data, JointState)
        assert got == expected
    imu_template = imu(0)
    imu_writer = RawWriter(imu_template, "sensor_msgs/msg/Imu")
    imu_writer.field("values")[np.r_[0:4, 13:16, 25:28]] = np.arange(10.0)
    got = deserialize_message(imu_writer.write(7, 8), Imu)
    assert (got.header.stamp.sec, got.header.stamp.nanosec, got.header.frame_id) == (7, 8, "imu_link")
    o, w, a = got.orientation, got.angular_velocity, got.linear_acceleration
    assert [o.x, o.y, o.z, o.w, w.x, w.y, w.z, a.x, a.y, a.z] == list(np.arange(10.0))
    np.testing.assert_array_equal(got.angular_velocity_covariance, imu_template.angular_velocity_covariance)
