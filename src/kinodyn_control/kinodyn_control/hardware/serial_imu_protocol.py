"""Xsens MT low-level communication (Xbus messages) and the MTData2 packets of an IMU, byte for byte.

Public specification: Xsens, "MT Low Level Communication Protocol Documentation" (MT0101P, MTi
1/10/100-series, 5th generation), with the MTi User Manual (MT0605P, §5.3 "Messages", §5.7.1 "General
definitions for binary data", "NWU and NED reference coordinate frames") and the MTi Family Reference Manual
(MT1600P, §4.2.3 "Orientation data"):

- A message is PRE 0xFA, BID 0xFF (the master device), MID, LEN, DATA (LEN bytes), CS. LEN 0xFF announces an
  extended length: two more bytes, big-endian, give the DATA length. The message is valid when the low byte of
  the sum of every byte after the preamble, the checksum included, is 0. MID 0x42 is an Error message.
- Every multi-byte value is big-endian; floats are IEEE 754 (9.81 is sent 0x41 0x1C 0xF5 0xC3).
- MTData2 (MID 0x36): DATA is a run of packets, each a 2-byte data identifier (XDI), a 1-byte size and that
  many bytes; a packet of an unknown identifier is skipped by its size.
- The low nibble of an XDI is a format: bits 0-1 the precision (0 Float32, 1 Fp1220: signed 32-bit with 20
  fractional bits, 2 Fp1632, 3 Float64), bits 2-3 the earth frame of an orientation (0 ENU, 4 NED, 8 NWU).
  The rest is the type: PacketCounter 0x1020 (uint16), Quaternion 0x2010 (q0 the real part, then q1 q2 q3),
  Acceleration 0x4020 [m/s²], RateOfTurn 0x8020 [rad/s].
- The orientation q_LS rotates vectors from the sensor frame S (axes as printed on the device) to the local
  earth frame L: ENU by default; NWU or NED rotate L only (RotLocal), S stays. Acceleration (specific force,
  +9.81 along S's up axis at rest) and rate of turn are in S.

Quaternions here are stored ``(x, y, z, w)`` (ARCHITECTURE §3); ``to_enu`` turns a device quaternion into
q_ENU,S, the REP-103 world frame. Fp1632 is not decoded (refused with a clear error).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

PREAMBLE = 0xFA
BUS_ID = 0xFF
MID_MTDATA2 = 0x36
MID_ERROR = 0x42
EXTENDED_LENGTH = 0xFF
_HEADER_BYTES = 4  # preamble, bus id, message id, length
_EXTENDED_HEADER_BYTES = 6  # with the 2-byte extended length
_PACKET_HEADER_BYTES = 3  # a data packet's identifier (2 bytes) and size
_COUNTER_BYTES = 2  # PacketCounter: uint16
MAX_LENGTH = 2048  # a longer announced DATA length is read as a corrupt header (IMU outputs are < 100 bytes)

XDI_PACKET_COUNTER = 0x1020
XDI_QUATERNION = 0x2010
XDI_ACCELERATION = 0x4020
XDI_RATE_OF_TURN = 0x8020
TYPE_MASK = 0xFFF0
PRECISION_MASK = 0x0003
COORDINATE_MASK = 0x000C

FLOAT32, FP1220, FP1632, FLOAT64 = 0, 1, 2, 3
PRECISIONS = {"float32": FLOAT32, "fp1220": FP1220, "float64": FLOAT64}
COORDINATES = {"ENU": 0x0, "NED": 0x4, "NWU": 0x8}
_BYTES = {FLOAT32: 4, FP1220: 4, FLOAT64: 8}
_FORMAT = {FLOAT32: "f", FP1220: "i", FLOAT64: "d"}

# q_ENU,L (x, y, z, w) per earth frame L: RotLocal (MT0605P) is C_L,ENU; NWU: +90 deg about Up; NED: 180 deg
# about (East + North)/sqrt(2)
_HALF_SQRT2 = math.sqrt(0.5)
ENU_FROM = {
    0x0: (0.0, 0.0, 0.0, 1.0),
    0x8: (0.0, 0.0, _HALF_SQRT2, _HALF_SQRT2),
    0x4: (_HALF_SQRT2, _HALF_SQRT2, 0.0, 0.0),
}
QUATERNION_NORM_TOLERANCE = 1e-3
"""Largest | |q| - 1 | of a decoded device quaternion. Not conversions.checked_pose's 1e-6 (received poses):
each FP12.20 component is rounded by up to 2^-21, so a unit quaternion sent in FP12.20 can be off 1 by about
1e-6; a corrupted or unnormalized one is off far more."""


class ProtocolError(ValueError):
    """A message or MTData2 payload that breaks the specification; the text says what and where."""


def checksum(body: bytes | bytearray) -> int:
    """The CS byte that makes ``BID + MID + LEN (+ extended length) + DATA + CS`` a multiple of 256."""
    return -sum(body) & 0xFF


def encode_message(mid: int, data: bytes = b"", bus_id: int = BUS_ID) -> bytes:
    """A whole Xbus message; DATA longer than 254 bytes uses the extended length."""
    if len(data) < EXTENDED_LENGTH:
        body = bytes((bus_id, mid, len(data))) + data
    else:
        body = bytes((bus_id, mid, EXTENDED_LENGTH)) + struct.pack(">H", len(data)) + data
    return bytes((PREAMBLE,)) + body + bytes((checksum(body),))


class XbusReader:
    """Messages out of a byte stream, fed in pieces of any size.

    Bytes that do not start a message (no 0xFA 0xFF) are skipped. A candidate whose checksum fails, or whose
    announced length is impossible, is counted in ``corrupt`` (``last_problem`` says what); scanning resumes
    one byte after its preamble, so a frame cut short (truncated) costs only itself and the stream
    resynchronises on the next preamble. ``skipped`` counts every byte outside a valid message.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.skipped = 0
        self.corrupt = 0
        self.last_problem = ""

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """``(mid, data)`` of every complete valid message now in the stream, oldest first."""
        buffer = self._buffer
        buffer += data
        messages: list[tuple[int, bytes]] = []
        start = 0
        while True:
            found = buffer.find(b"\xfa\xff", start)
            if found < 0:
                keep = len(buffer) - 1 if buffer[-1:] == b"\xfa" else len(buffer)
                self.skipped += keep - start
                start = keep
                break
            self.skipped += found - start
            start = found
            if len(buffer) - start < _HEADER_BYTES:
                break
            length, header = buffer[start + 3], _HEADER_BYTES
            if length == EXTENDED_LENGTH:
                if len(buffer) - start < _EXTENDED_HEADER_BYTES:
                    break
                length, header = (buffer[start + 4] << 8) | buffer[start + 5], _EXTENDED_HEADER_BYTES
                if length > MAX_LENGTH:
                    self._reject(f"extended length {length} > {MAX_LENGTH} (MID 0x{buffer[start + 2]:02X})")
                    start += 1
                    continue
            end = start + header + length + 1
            if len(buffer) < end:
                break
            if sum(buffer[start + 1 : end]) & 0xFF:
                self._reject(f"checksum mismatch in a message with MID 0x{buffer[start + 2]:02X}, "
                             f"LEN {length}")
                start += 1
                continue
            messages.append((buffer[start + 2], bytes(buffer[start + header : end - 1])))
            start = end
        del buffer[:start]
        return messages

    def _reject(self, problem: str) -> None:
        self.corrupt += 1
        self.skipped += 1  # the preamble; the bytes after it are scanned again
        self.last_problem = problem


@dataclass
class ImuSample:
    """What one MTData2 message carried (None: not in it). ``orientation`` is q_ENU,S (x, y, z, w) already
    converted from the device's earth frame; vectors are in the sensor frame S, SI units."""

    orientation: tuple[float, ...] | None = None
    angular_velocity: tuple[float, ...] | None = None
    linear_acceleration: tuple[float, ...] | None = None
    packet_counter: int | None = None


def quaternion_multiply(p: tuple[float, ...], q: tuple[float, ...]) -> tuple[float, float, float, float]:
    """Hamilton product ``p (x) q`` of (x, y, z, w) quaternions (plain floats: one per message)."""
    px, py, pz, pw = p
    qx, qy, qz, qw = q
    return (
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
        pw * qw - px * qx - py * qy - pz * qz,
    )


def to_enu(q_ls: tuple[float, ...], coordinates: int) -> tuple[float, float, float, float]:
    """q_ENU,S from the device's q_L,S and the XDI coordinate bits of L."""
    return quaternion_multiply(ENU_FROM[coordinates], q_ls)


def from_enu(q_enu_s: tuple[float, ...], coordinates: int) -> tuple[float, float, float, float]:
    """q_L,S for a device reporting in earth frame L (the inverse of ``to_enu``)."""
    x, y, z, w = ENU_FROM[coordinates]
    return quaternion_multiply((-x, -y, -z, w), q_enu_s)


def _values(xdi: int, payload: bytes, count: int, name: str) -> tuple[float, ...]:
    precision = xdi & PRECISION_MASK
    if precision not in _BYTES:
        raise ProtocolError(f"{name} (XDI 0x{xdi:04X}) is Fp1632, which this driver does not decode; "
                            "configure the device's output as Float32, Fp1220 or Float64")
    if len(payload) != count * _BYTES[precision]:
        raise ProtocolError(f"{name} (XDI 0x{xdi:04X}) has {len(payload)} bytes, expected "
                            f"{count * _BYTES[precision]}")
    values = struct.unpack(f">{count}{_FORMAT[precision]}", payload)
    if precision == FP1220:
        values = tuple(v / 1048576.0 for v in values)
    if not all(math.isfinite(v) for v in values):
        raise ProtocolError(f"{name} (XDI 0x{xdi:04X}) carries a non-finite value {values}")
    return values


def decode_mtdata2(data: bytes) -> ImuSample:
    """The IMU quantities of one MTData2 DATA field; raises ProtocolError when a packet overruns the message,
    has the wrong size, a non-finite value or a quaternion that is not of unit norm."""
    sample = ImuSample()
    position, end = 0, len(data)
    while position < end:
        if end - position < _PACKET_HEADER_BYTES:
            raise ProtocolError(f"MTData2 ends inside a packet header at byte {position} of {end}")
        xdi, size = (data[position] << 8) | data[position + 1], data[position + 2]
        payload = data[position + 3 : position + 3 + size]
        if len(payload) != size:
            raise ProtocolError(f"MTData2 packet XDI 0x{xdi:04X} announces {size} bytes, "
                                f"{len(payload)} remain")
        position += 3 + size
        kind = xdi & TYPE_MASK
        if kind == XDI_QUATERNION:
            coordinates = xdi & COORDINATE_MASK
            if coordinates not in ENU_FROM:
                raise ProtocolError(f"Quaternion XDI 0x{xdi:04X} names no earth frame (coordinate bits "
                                    f"0x{coordinates:X}; 0 ENU, 4 NED, 8 NWU)")
            w, x, y, z = _values(xdi, payload, 4, "Quaternion")
            norm = math.sqrt(w * w + x * x + y * y + z * z)
            if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
                raise ProtocolError(f"Quaternion (XDI 0x{xdi:04X}) has norm {norm}, not 1")
            sample.orientation = to_enu((x / norm, y / norm, z / norm, w / norm), coordinates)
        elif kind == XDI_ACCELERATION:
            sample.linear_acceleration = _values(xdi, payload, 3, "Acceleration")
        elif kind == XDI_RATE_OF_TURN:
            sample.angular_velocity = _values(xdi, payload, 3, "RateOfTurn")
        elif xdi == XDI_PACKET_COUNTER:
            if size != _COUNTER_BYTES:
                raise ProtocolError(f"PacketCounter has {size} bytes, expected 2")
            sample.packet_counter = (payload[0] << 8) | payload[1]
    return sample


def encode_packet(xdi: int, values: tuple[float, ...]) -> bytes:
    """One MTData2 packet of ``values`` in the precision of ``xdi``'s format bits."""
    precision = xdi & PRECISION_MASK
    if precision not in _BYTES:
        raise ProtocolError(f"cannot encode precision {precision} (XDI 0x{xdi:04X})")
    if precision == FP1220:
        payload = struct.pack(f">{len(values)}i", *(round(v * 1048576.0) for v in values))
    else:
        payload = struct.pack(f">{len(values)}{_FORMAT[precision]}", *values)
    return struct.pack(">HB", xdi, len(payload)) + payload


def encode_mtdata2(sample: ImuSample, coordinates: str = "ENU", precision: str = "float32") -> bytes:
    """The MTData2 DATA of ``sample`` (orientation given as q_ENU,S, sent as q_L,S in ``coordinates``)."""
    fmt = PRECISIONS[precision]
    parts = []
    if sample.packet_counter is not None:
        parts.append(struct.pack(">HBH", XDI_PACKET_COUNTER, 2, sample.packet_counter & 0xFFFF))
    if sample.orientation is not None:
        bits = COORDINATES[coordinates]
        x, y, z, w = from_enu(sample.orientation, bits)
        parts.append(encode_packet(XDI_QUATERNION | bits | fmt, (w, x, y, z)))
    if sample.linear_acceleration is not None:
        parts.append(encode_packet(XDI_ACCELERATION | fmt, tuple(sample.linear_acceleration)))
    if sample.angular_velocity is not None:
        parts.append(encode_packet(XDI_RATE_OF_TURN | fmt, tuple(sample.angular_velocity)))
    return b"".join(parts)
