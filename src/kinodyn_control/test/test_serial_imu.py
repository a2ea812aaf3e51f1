"""Xsens MTData2 protocol (serial_imu_protocol.py), the IMU emulator and ``kinodyn_control/SerialImuSensor``.

Byte strings are written by hand from the public specification (MT Low Level Communication Protocol MT0101P;
MTi User Manual MT0605P): the manual's example messages (ReqDID, GoToConfig, GoToMeasurement), its float
example (9.81 = 0x411CF5C3), its RotLocal matrices for NWU and NED. The component is driven by the emulator
over a pseudo-terminal; its states are compared with closed forms of the emulated motion.
"""

from __future__ import annotations

import itertools
import math
import struct
from time import monotonic, sleep
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import serial
from kinodyn.spatial import quat_to_matrix
from kinodyn_control.hardware.emulators.serial_imu import XsensImuEmulator, constant, constant_rate, level
from kinodyn_control.hardware.serial_imu_protocol import (
    ImuSample,
    ProtocolError,
    XbusReader,
    decode_mtdata2,
    encode_message,
    encode_mtdata2,
    encode_packet,
    from_enu,
    to_enu,
)
from kinodyn_control.hardware.types import IMU_INTERFACES, LifecycleState
from kinodyn_control.manager import HardwareError
from kinodyn_control.testing import Harness, param, robot_xml

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from kinodyn_control.hardware.serial_imu import SerialImuSensor

    EmulatorFactory = Callable[..., XsensImuEmulator]  # XsensImuEmulator's arguments

PLUGIN = "kinodyn_control/SerialImuSensor"
BROADCASTER = "kinodyn_control/ImuSensorBroadcaster"
G = 9.81
DT = 0.002


def h(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


# --- framing and checksum -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mid", "message"),
    [(0x00, "FA FF 00 00 01"), (0x30, "FA FF 30 00 D1"), (0x10, "FA FF 10 00 F1")],
    ids=["ReqDID", "GoToConfig", "GoToMeasurement"],
)
def test_messages_of_the_manual(mid: int, message: str) -> None:
    assert encode_message(mid) == h(message)
    assert XbusReader().feed(h(message)) == [(mid, b"")]


def test_extended_length_message_round_trip() -> None:
    data = bytes(range(256)) + bytes(44)  # 300 bytes > 254
    message = encode_message(0x36, data)
    assert message[:6] == h("FA FF 36 FF 01 2C")  # LEN 0xFF, then 300 big-endian
    assert sum(message[1:]) % 256 == 0  # the manual's validity rule
    assert XbusReader().feed(message) == [(0x36, data)]


# hand-built MTData2: PacketCounter 42, Quaternion (q0 = 1) ENU Float32, Acceleration (0, 0, 9.81), RateOfTurn
# (0.5, -0.25, 2.0): 54 = 0x36 data bytes; BID + MID + LEN + DATA sum to 0x7B0 (by hand), so CS = 0x100 - 0xB0
MTDATA2 = (
    "10 20 02 00 2A"
    "20 10 10 3F800000 00000000 00000000 00000000"
    "40 20 0C 00000000 00000000 411CF5C3"
    "80 20 0C 3F000000 BE800000 40000000"
)
MESSAGE = "FA FF 36 36" + MTDATA2 + "50"


def test_hand_built_mtdata2_decodes_to_si_values() -> None:
    assert sum(h(MESSAGE)[1:]) % 256 == 0
    ((mid, data),) = XbusReader().feed(h(MESSAGE))
    assert (mid, data) == (0x36, h(MTDATA2))
    sample = decode_mtdata2(data)
    assert sample.packet_counter == 42
    assert sample.orientation == (0.0, 0.0, 0.0, 1.0)
    assert sample.angular_velocity == (0.5, -0.25, 2.0)
    assert sample.linear_acceleration == (0.0, 0.0, struct.unpack(">f", h("411CF5C3"))[0])
    assert sample.linear_acceleration[2] == pytest.approx(9.81, abs=1e-6)
    encoded = encode_mtdata2(ImuSample((0.0, 0.0, 0.0, 1.0), (0.5, -0.25, 2.0), (0.0, 0.0, 9.81), 42))
    assert encode_message(0x36, encoded) == h(MESSAGE)


def test_precisions_fp1220_and_float64() -> None:
    fp1220 = decode_mtdata2(h("40 21 0C 00180000 FFE00000 00000001"))  # 1.5, -2.0, 2^-20
    assert fp1220.linear_acceleration == (1.5, -2.0, 2.0**-20)
    double = decode_mtdata2(h("80 23 18 3FF0000000000000 C000000000000000 3FB999999999999A"))
    assert double.angular_velocity == (1.0, -2.0, 0.1)
    assert encode_packet(0x4021, (1.5, -2.0, 2.0**-20)) == h("40 21 0C 00180000 FFE00000 00000001")


def test_unknown_packets_are_skipped_by_their_size() -> None:
    sample = decode_mtdata2(h("08 10 04 42168000" "80 20 0C 3F800000 00000000 00000000"))  # Temperature first
    assert sample.angular_velocity == (1.0, 0.0, 0.0)
    assert sample.orientation is None
    assert sample.linear_acceleration is None


# RotLocal of the MTi User Manual ("NWU and NED reference coordinate frames"): C_L,ENU
ROT_LOCAL = {
    "NWU": np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
    "NED": np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]),
    "ENU": np.eye(3),
}
COORDINATE_BITS = {"ENU": 0x0, "NED": 0x4, "NWU": 0x8}


@pytest.mark.parametrize("frame", ["ENU", "NED", "NWU"])
def test_orientation_converted_to_enu_with_rot_local(frame: str) -> None:
    bits = COORDINATE_BITS[frame]
    identity = decode_mtdata2(h(f"20 1{bits:X} 10 3F800000 00000000 00000000 00000000"))
    assert quat_to_matrix(identity.orientation) == pytest.approx(ROT_LOCAL[frame].T, abs=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q_ls = rng.normal(size=4)
        q_ls /= np.linalg.norm(q_ls)
        q_enu = to_enu(tuple(q_ls), bits)
        assert quat_to_matrix(q_enu) == pytest.approx(ROT_LOCAL[frame].T @ quat_to_matrix(q_ls), abs=1e-12)
        assert from_enu(q_enu, bits) == pytest.approx(tuple(q_ls), abs=1e-12)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ("40 20 0C 00000000 00000000", "announces 12 bytes, 8 remain"),
        ("40 20 08 00000000 00000000", "has 8 bytes, expected 12"),
        ("40 22 12 000000000000 000000000000 000000000000", "Fp1632"),
        ("40 20 0C 7FC00000 00000000 00000000", "non-finite"),
        ("20 10 10 3F000000 00000000 00000000 00000000", "norm 0.5"),
        ("20 1C 10 3F800000 00000000 00000000 00000000", "names no earth frame"),
        ("40 20", "inside a packet header"),
    ],
)
def test_malformed_mtdata2_is_refused(data: str, needle: str) -> None:
    with pytest.raises(ProtocolError, match=needle):
        decode_mtdata2(h(data))


# --- resynchronisation --------------------------------------------------------------------------------------
def test_reader_resynchronises_after_garbage_and_a_truncated_frame() -> None:
    good = h(MESSAGE)
    reader = XbusReader()
    stream = b"\x00\x13\x37\xfa\x00" + good + good[:20] + good + b"\xfa\xff\x36\x01\x00\x00" + good
    assert reader.feed(stream) == [(0x36, h(MTDATA2))] * 3
    assert reader.corrupt == 2  # the truncated frame and the fake header, each a checksum mismatch
    assert reader.skipped == 5 + 20 + 6  # every byte outside the three valid messages
    assert "checksum" in reader.last_problem


def test_reader_same_messages_when_fed_byte_by_byte() -> None:
    stream = b"\x01\x02" + h(MESSAGE) + encode_message(0x36, bytes(300)) + h(MESSAGE)
    whole = XbusReader().feed(stream)
    reader = XbusReader()
    pieces = [m for k in range(len(stream)) for m in reader.feed(stream[k : k + 1])]
    assert pieces == whole
    assert len(whole) == 3
    assert reader.corrupt == 0
    assert reader.skipped == 2


# --- the component against the emulator ---------------------------------------------------------------------
def imu_block(**params: object) -> str:
    states = "".join(f'<state_interface name="{i}"/>' for i in IMU_INTERFACES)
    params.setdefault("frame_id", "imu_link")
    extra = "".join(param(k, v) for k, v in params.items())
    return (f'<ros2_control name="imu" type="sensor"><hardware><plugin>{PLUGIN}</plugin></hardware>'
            f'<sensor name="imu_sensor">{states}{extra}</sensor></ros2_control>')


class Rig:
    """Emulator + harness with the IMU component (configured against the streaming emulator, then the stream
    stopped) and an IMU broadcaster; ``now`` is the component's clock."""

    def __init__(self, emulator: XsensImuEmulator, timeout: float = 0.1, **params: object) -> None:
        self.emulator = emulator
        self.harness = Harness(robot_xml(imu_block(port=emulator.port, timeout=timeout, **params), ("j1",)))
        self.imu: SerialImuSensor = self.harness.resources.components["imu"]
        self.now = 100.0
        self.imu.clock = lambda: self.now
        emulator.start()
        try:
            self.harness.activate_hardware()
        finally:
            emulator.stop()
        self.harness.start("imu_broadcaster", BROADCASTER, {"sensor_name": "imu_sensor"})

    def cycle_until(self, done: Callable[[], bool]) -> None:
        end = monotonic() + 5.0
        while monotonic() < end:
            self.harness.manager.cycle(self.now, DT)
            if done():
                return
            sleep(0.001)
        raise AssertionError("condition not reached within 5 s of cycles")

    def latest(self) -> int:
        """Emit one message and cycle until the component holds it; its counter."""
        self.emulator.emit(1)
        counter = self.emulator.counter - 1
        self.cycle_until(lambda: self.imu.last_counter == counter)
        return counter

    def failed(self) -> bool:
        return self.imu.lifecycle_state is not LifecycleState.ACTIVE

    def state(self, name: str) -> float:
        return self.harness.state(f"imu_sensor/{name}")


@pytest.fixture
def emulator_factory() -> Iterator[EmulatorFactory]:
    made: list[XsensImuEmulator] = []

    def make(*args: Any, **kwargs: Any) -> XsensImuEmulator:  # noqa: ANN401  (XsensImuEmulator's arguments)
        made.append(XsensImuEmulator(*args, **kwargs))
        return made[-1]

    yield make
    for emulator in made:
        emulator.close()


@pytest.mark.parametrize(("frame", "precision"), [("ENU", "float32"), ("NED", "float64"), ("NWU", "fp1220")])
def test_component_reports_the_emulated_motion_in_si_and_enu(emulator_factory: EmulatorFactory, frame: str,
                                                             precision: str) -> None:
    rate, wx = 400.0, 0.7
    rig = Rig(emulator_factory(constant_rate((wx, 0.0, 0.0)), rate, frame, precision))
    for _ in range(3):
        counter = rig.latest()
        theta = wx * counter / rate  # closed form: a turn about x by theta from level
        tol = 1e-5 if precision == "fp1220" else 1e-6
        expected = {
            "orientation": (math.sin(theta / 2), 0.0, 0.0, math.cos(theta / 2)),
            "angular_velocity": (wx, 0.0, 0.0),
            "linear_acceleration": (0.0, G * math.sin(theta), G * math.cos(theta)),
        }
        for quantity, values in expected.items():
            axes = "xyzw" if quantity == "orientation" else "xyz"
            measured = [rig.state(f"{quantity}.{a}") for a in axes]
            assert measured == pytest.approx(values, abs=tol * max(1.0, G)), quantity
        rig.emulator.emit(150)  # let the angle grow
    msg = rig.harness.contexts["imu_broadcaster"].publishers["/imu_broadcaster/imu"].messages[-1]
    assert msg.header.frame_id == "imu_link"
    assert (msg.angular_velocity.x, msg.linear_acceleration.z) == pytest.approx(
        (rig.state("angular_velocity.x"), rig.state("linear_acceleration.z")))
    assert not rig.harness.messages("error")


def test_garbage_between_messages_is_skipped_not_a_fault(emulator_factory: EmulatorFactory) -> None:
    rig = Rig(emulator_factory())
    rig.latest()
    skipped = rig.imu.reader.skipped
    rig.emulator.garbage(b"\x00\x13\x37\x55" * 25)
    rig.latest()
    assert rig.imu.reader.skipped - skipped == 100
    assert rig.imu.lifecycle_state is LifecycleState.ACTIVE
    assert not rig.harness.messages("error")


def _fault_puts_component_in_error(rig: Rig, needle: str) -> None:
    rig.cycle_until(rig.failed)
    assert rig.imu.lifecycle_state is LifecycleState.UNCONFIGURED  # on_error closed the port
    assert rig.imu.port is None
    (line,) = rig.harness.messages("error")  # one line: what failed and which controller stopped
    assert needle in line, line
    assert "imu_broadcaster" in line, line
    assert rig.harness.manager.controllers["imu_broadcaster"].state is LifecycleState.INACTIVE


@pytest.mark.parametrize(
    ("inject", "needle"),
    [
        (lambda e: e.corrupt(), "checksum mismatch"),
        (lambda e: e.truncate(), "checksum mismatch"),
        (lambda e: e.garbage(encode_message(0x36, encode_packet(0x4020, (math.nan, 0.0, 0.0)))),
         "non-finite"),
        (lambda e: e.garbage(encode_message(0x42, b"\x04")), "Error message (MID 0x42), error code 4"),
    ],
    ids=["checksum", "truncated", "nan", "device-error"],
)
def test_corrupt_frame_or_device_error_is_error_state(emulator_factory: EmulatorFactory,
                                                      inject: Callable[[XsensImuEmulator], None],
                                                      needle: str) -> None:
    rig = Rig(emulator_factory())
    rig.latest()
    inject(rig.emulator)
    rig.emulator.emit(2)
    _fault_puts_component_in_error(rig, needle)


def test_stream_that_stops_is_error_state_after_timeout(emulator_factory: EmulatorFactory) -> None:
    rig = Rig(emulator_factory(), timeout=0.1)
    rig.latest()
    rig.now += 0.09  # within the timeout: still fine
    rig.harness.manager.cycle(rig.now, DT)
    assert rig.imu.lifecycle_state is LifecycleState.ACTIVE
    rig.now += 0.02
    _fault_puts_component_in_error(
        rig, "stopped: no orientation, angular_velocity, linear_acceleration for 0.110")


# --- readings and packet counters checked ------------------------------------------------------------------
GYRO_RANGE = math.radians(2000.0)  # the defaults: MTi 1-series, 2000 deg/s and 16 g
ACCEL_RANGE = 16 * 9.80665


@pytest.mark.parametrize(
    ("precision", "wrong", "needle"),
    [
        ("float32", ImuSample(None, (1e6, 0.0, 0.0), None),
         "reports angular_velocity.x = 1e+06 rad/s, beyond its full-scale range ±34.9066 rad/s (gyro_range)"),
        ("float32", ImuSample(None, None, (0.0, 0.0, 3e38)),
         "reports linear_acceleration.z = 3e+38 m/s², beyond its full-scale range ±156.906 m/s² "
         "(accel_range)"),
        ("float64", ImuSample(None, None, (-1e308, 0.0, G)),
         "reports linear_acceleration.x = -1e+308 m/s², beyond its full-scale range ±156.906 m/s²"),
    ],
    ids=["rate-1e6", "acceleration-3e38", "float64-1e308"],
)
def test_a_reading_beyond_the_full_scale_range_is_a_fault_and_never_broadcast(
    emulator_factory: EmulatorFactory, precision: str, wrong: float, needle: str
) -> None:
    rig = Rig(emulator_factory(constant_rate((0.3, 0.0, 0.0)), precision=precision))
    rig.latest()
    rig.emulator.misreport(wrong)
    rig.emulator.emit(2)
    _fault_puts_component_in_error(rig, needle)
    published = rig.harness.contexts["imu_broadcaster"].publishers["/imu_broadcaster/imu"].messages
    assert published
    for msg in published:
        w, a = msg.angular_velocity, msg.linear_acceleration
        assert max(abs(w.x), abs(w.y), abs(w.z)) <= GYRO_RANGE
        assert max(abs(a.x), abs(a.y), abs(a.z)) <= ACCEL_RANGE
    assert abs(rig.state("angular_velocity.x")) < 1.0
    assert abs(rig.state("linear_acceleration.z")) < 2 * G


def test_full_scale_ranges_are_parameters(emulator_factory: EmulatorFactory) -> None:
    """A rate within a narrower configured range is taken; beyond it is a fault naming the param."""
    rig = Rig(emulator_factory(constant_rate((2.0, 0.0, 0.0))), gyro_range=2.5, accel_range=20.0)
    rig.latest()
    assert rig.state("angular_velocity.x") == pytest.approx(2.0, abs=1e-6)
    rig.emulator.misreport(ImuSample(None, (2.6, 0.0, 0.0), None))
    rig.emulator.emit(1)
    _fault_puts_component_in_error(rig, "angular_velocity.x = 2.6 rad/s, beyond its full-scale range ±2.5 "
                                        "rad/s (gyro_range)")


def _stale_read(rig: Rig, count: int) -> None:
    """Replay the last message once and cycle until the component has counted ``count`` stale packets."""
    rig.emulator.replay(1)
    rig.emulator.emit(1)
    rig.cycle_until(lambda: rig.imu.stale == count or rig.failed())


def test_a_replayed_packet_is_not_taken_as_new(emulator_factory: EmulatorFactory) -> None:
    """The same packet again (same PacketCounter) is not stored and does not keep the stream alive: within
    ``timeout`` of the last new packet the stream stops although a replay arrived after it."""
    rig = Rig(emulator_factory(constant_rate((0.3, 0.0, 0.0))), timeout=0.1)
    counter = rig.latest()
    rig.now += 0.06
    _stale_read(rig, 1)
    assert rig.imu.last_counter == counter
    assert not rig.failed()
    (warning,) = [m for m in rig.harness.messages("warning") if "does not advance" in m]
    assert f"sent 1 packet(s) whose PacketCounter does not advance past {counter}" in warning
    assert "not taken as new" in warning
    rig.now += 0.05  # 0.11 s after the last new packet, 0.05 s after the replay
    _fault_puts_component_in_error(rig, "stopped: no orientation, angular_velocity, linear_acceleration for "
                                        "0.110")


def test_a_new_packet_after_a_replay_is_taken(emulator_factory: EmulatorFactory) -> None:
    rig = Rig(emulator_factory(constant_rate((0.3, 0.0, 0.0))))
    counter = rig.latest()
    _stale_read(rig, 1)
    assert rig.latest() == counter + 1  # the emulator's counter did not advance for the replay
    assert not rig.failed()
    assert not rig.harness.messages("error")


def test_replayed_packets_in_consecutive_reads_are_a_fault(emulator_factory: EmulatorFactory) -> None:
    rig = Rig(emulator_factory(), stale_fault_cycles=3)
    counter = rig.latest()
    _stale_read(rig, 1)
    _stale_read(rig, 2)
    assert not rig.failed()
    _stale_read(rig, 3)
    _fault_puts_component_in_error(
        rig, f"sent only packet(s) whose PacketCounter does not advance past {counter} (the same packet "
             "again, an old one, or a device that restarted) in 3 reads in a row (stale_fault_cycles 3)")


def test_an_older_packet_counter_is_not_taken(emulator_factory: EmulatorFactory) -> None:
    """A packet behind the last one (an old packet, or a device that restarted) is not taken either."""
    rig = Rig(emulator_factory())
    counter = rig.latest()
    old = ImuSample((0.0, 0.0, 0.0, 1.0), (0.5, 0.0, 0.0), (0.0, 0.0, G), counter - 3)
    rig.emulator.garbage(encode_message(0x36, encode_mtdata2(old)))
    rig.emulator.emit(1)
    rig.cycle_until(lambda: rig.imu.last_counter == counter + 1)
    assert rig.imu.stale == 1
    assert rig.state("angular_velocity.x") == 0.0


def _forge(rig: Rig, counter: int, rate_x: float) -> None:
    """Slip one well-formed packet with ``counter`` and a rate of turn ``rate_x`` into the stream."""
    sample = ImuSample((0.0, 0.0, 0.0, 1.0), (rate_x, 0.0, 0.0), (0.0, 0.0, G), counter % 65536)
    rig.emulator.garbage(encode_message(0x36, encode_mtdata2(sample)))


def test_one_packet_counter_far_ahead_does_not_stop_the_real_stream(
    emulator_factory: EmulatorFactory,
) -> None:
    """A single packet 20000 steps ahead is not taken (one warning); the real packets after it continue the
    old sequence and are taken, for more than ``stale_fault_cycles`` reads, and the node never faults."""
    rig = Rig(emulator_factory(constant_rate((0.3, 0.0, 0.0))), stale_fault_cycles=3)
    counter = rig.latest()
    _forge(rig, counter + 20000, 1.5)
    rig.emulator.emit(1)
    rig.cycle_until(lambda: rig.imu.jumps == 1 and rig.imu.last_counter == counter + 1)
    for k in range(2, 8):
        assert rig.latest() == counter + k
    assert not rig.failed()
    assert not rig.harness.messages("error")
    assert rig.imu.stale == 0
    assert rig.state("angular_velocity.x") == pytest.approx(0.3, abs=1e-6)
    (warning,) = [m for m in rig.harness.messages("warning") if "PacketCounter" in m]
    assert f"sent PacketCounter {counter + 20000}, 20000 ahead of the last one taken ({counter}; " in warning
    assert "max_counter_jump 1000); not taken unless the next packet continues from it" in warning


def test_a_counter_jump_confirmed_by_the_next_packet_is_taken(emulator_factory: EmulatorFactory) -> None:
    """A device that really skipped: the packet after the jump continues from it, so it is taken and the
    sequence goes on from there; a gap within max_counter_jump is taken at once."""
    rig = Rig(emulator_factory(), max_counter_jump=50)
    counter = rig.latest()
    _forge(rig, counter + 50, 0.2)  # 49 lost packets before it: within the window, taken
    _forge(rig, counter + 151, 0.4)  # 101 ahead: beyond the window, not taken
    _forge(rig, counter + 152, 0.6)  # continues from it: taken
    rig.emulator.emit(1)  # the emulator's own next packet, counter + 1, is now behind
    rig.cycle_until(lambda: rig.imu.stale == 1)
    assert rig.imu.last_counter == counter + 152
    assert rig.imu.jumps == 1
    assert not rig.failed()
    assert rig.state("angular_velocity.x") == pytest.approx(0.6, abs=1e-6)


def test_a_message_without_packet_counter_is_a_fault(emulator_factory: EmulatorFactory) -> None:
    rig = Rig(emulator_factory())
    rig.latest()
    rig.emulator.garbage(encode_message(0x36, encode_mtdata2(level())))  # level(): no counter
    rig.emulator.emit(1)
    _fault_puts_component_in_error(rig, "carries no PacketCounter (XDI 0x1020): add it to the device's "
                                        "output")


def test_reconfigure_after_error_when_the_stream_is_back(emulator_factory: EmulatorFactory) -> None:
    rig = Rig(emulator_factory())
    rig.emulator.corrupt()
    rig.emulator.emit(1)
    rig.cycle_until(rig.failed)
    rig.emulator.start()
    try:
        rig.harness.resources.set_component_state("imu", LifecycleState.ACTIVE)
    finally:
        rig.emulator.stop()
    counter = rig.latest()
    assert rig.imu.last_counter == counter


def test_orientation_none_reports_zero_quaternion(emulator_factory: EmulatorFactory) -> None:
    no_orientation = ImuSample(None, (0.1, 0.2, 0.3), (0.0, 0.0, G))
    rig = Rig(emulator_factory(constant(no_orientation)), orientation="none")
    rig.latest()
    assert [rig.state(f"orientation.{a}") for a in "xyzw"] == [0.0, 0.0, 0.0, 0.0]
    assert rig.state("angular_velocity.z") == pytest.approx(0.3, abs=1e-7)


def test_configure_fails_without_the_required_outputs(emulator_factory: EmulatorFactory) -> None:
    emulator = emulator_factory(constant(ImuSample(None, (0.0, 0.0, 0.0), (0.0, 0.0, G))))
    with pytest.raises(HardwareError, match=r"no MTData2 with orientation from \S+ within timeout"):
        Rig(emulator)


def test_configure_fails_on_a_missing_port_or_a_silent_device(emulator_factory: EmulatorFactory) -> None:
    harness = Harness(robot_xml(imu_block(port="/dev/does-not-exist"), ("j1",)))
    with pytest.raises(HardwareError, match="cannot open IMU port /dev/does-not-exist"):
        harness.activate_hardware()
    silent = emulator_factory()
    harness = Harness(robot_xml(imu_block(port=silent.port, timeout=0.05), ("j1",)))
    with pytest.raises(HardwareError, match="no MTData2 with orientation, angular_velocity, linear_acc"):
        harness.activate_hardware()


@pytest.mark.parametrize(
    ("block", "needle"),
    [
        (imu_block(), "param port is required"),
        (imu_block(port="/dev/x", baudrate="fast"), "baudrate 'fast' must be a positive integer"),
        (imu_block(port="/dev/x", timeout="soon"), "timeout 'soon' must be a number of seconds > 0"),
        (imu_block(port="/dev/x", timeout="0"), "timeout '0' must be a number of seconds > 0"),
        (imu_block(port="/dev/x", orientation="ned"), "orientation 'ned' must be one of device, none"),
        (imu_block(port="/dev/x", rate="400"), "unknown <sensor> param(s) rate"),
        (imu_block(port="/dev/x", gyro_range="-1"), "param gyro_range '-1' must be the device's gyroscope"),
        (imu_block(port="/dev/x", accel_range="16g"), "param accel_range '16g' must be the device's accel"),
        (imu_block(port="/dev/x", stale_fault_cycles="0"), "param stale_fault_cycles '0' must be an integer"),
        (imu_block(port="/dev/x", max_counter_jump="0"), "max_counter_jump '0' must be an integer from 1"),
        (imu_block(port="/dev/x", max_counter_jump="40000"), "max_counter_jump '40000' must be an integer"),
        (imu_block(port="/dev/x").replace("</plugin>", "</plugin>" + param("port", "/dev/x")),
         "<hardware> param(s) port are not used"),
        (imu_block(port="/dev/x").replace('<state_interface name="orientation.w"/>', ""),
         "must list exactly the state interfaces"),
    ],
)
def test_bad_parameters_refused_at_init(block: str, needle: str) -> None:
    with pytest.raises(HardwareError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        Harness(robot_xml(block, ("j1",)))


def test_emulator_level_default_and_constant_rate_closed_form() -> None:
    assert level() == ImuSample((0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (0.0, 0.0, G))
    sample = constant_rate((0.0, 0.0, 0.5))(2.0)  # yaw 1 rad: gravity stays on z
    assert sample.orientation == pytest.approx((0.0, 0.0, math.sin(0.5), math.cos(0.5)))
    assert sample.linear_acceleration == pytest.approx((0.0, 0.0, G))


def test_emulator_drops_whole_messages_when_the_pty_is_full(emulator_factory: EmulatorFactory) -> None:
    """A device cannot wait for its reader: messages that find the pty full are dropped whole, and a message
    cut by a full buffer is completed before any later one, so the reader finds only whole messages."""
    emulator = emulator_factory()
    port = serial.Serial(emulator.port, timeout=0)
    try:
        reader, counters = XbusReader(), []
        for _ in range(3):
            emulator.emit(3000)  # ~180 kB: far more than the pty holds
            assert emulator.dropped > 0
            data = b""
            while chunk := port.read(65536):
                data += chunk
            counters += [decode_mtdata2(payload).packet_counter for _, payload in reader.feed(data)]
        assert reader.corrupt == 0
        assert reader.skipped == 0
        assert len(counters) > 10
        assert all(b > a for a, b in itertools.pairwise(counters))
    finally:
        port.close()
