"""The MIT-mode CAN protocol of legged-robot actuators: special frames, command and reply packing.

Follows the protocol of Ben Katz's Mini Cheetah motor controller firmware (B. Katz, "A low cost modular
actuator for dynamic robots", MIT S.M. thesis, 2018; firmware ``motorcontrol`` on os.mbed.com, CAN comments of
``pack_cmd``/``unpack_cmd``/``pack_reply``), as the CubeMars AK series manual documents it ("AK Series
Actuator Driver Manual" V1.0.8, section 5.3 "MIT power mode communication protocol"):

- Standard 11-bit frames. A command goes to the motor's CAN id with 8 data bytes; the special frames
  ``FF FF FF FF FF FF FF FC`` (enter motor mode), ``..FD`` (exit motor mode) and ``..FE`` (set the current
  position as zero) too. The motor answers every frame addressed to it with one reply to the master id
  (0 by default), whose first byte is the motor's id.
- Command bytes (most significant bits first): position 16 bit ``[0] = p[15:8]``, ``[1] = p[7:0]``;
  velocity 12 bit ``[2] = v[11:4]``, ``[3] = v[3:0] << 4 | kp[11:8]``; kp 12 bit ``[4] = kp[7:0]``; kd 12 bit
  ``[5] = kd[11:4]``, ``[6] = kd[3:0] << 4 | t[11:8]``; feed-forward torque 12 bit ``[7] = t[7:0]``.
- Reply bytes: ``[0]`` motor id, position 16 bit ``[1:3]``, velocity 12 bit ``[3] = v[11:4]``,
  ``[4] = v[3:0] << 4 | t[11:8]``, torque 12 bit ``[5] = t[7:0]``: 6 bytes in Katz's firmware. CubeMars
  motors append ``[6]`` the motor temperature (whole degrees Celsius, read here as a signed byte) and ``[7]``
  an error code (``FAULT_CODES``, as the manual and CubeMars' TMotorCANControl list them).
- A value ``x`` in ``[lo, hi]`` travels as the unsigned integer ``(x - lo) (2^bits - 1) / (hi - lo)``; values
  outside the range are clamped first (the firmware's ``fminf/fmaxf``). The firmware truncates; this module
  rounds to the nearest integer (half a step of error instead of one; the byte layout is the same).
  Position, velocity and torque ranges are symmetric (``±p_max``, ``±v_max``, ``±t_max``), gains run from 0
  (``[0, kp_max]``, ``[0, kd_max]``), per motor model.

Read as one big-endian integer, a command is the bit field ``p:16 | v:12 | kp:12 | kd:12 | t:12`` and a
reply ``id:8 | p:16 | v:12 | t:12 [| temperature:8 | error:8]``: ``pack_commands``/``unpack_replies`` pack
and decode every motor of a bus at once that way (numpy; the same bytes and values as ``pack_command``/
``unpack_reply`` row by row: the same float operations in the same order, both rounding half to even).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

ENTER_MOTOR_MODE = bytes((0xFF,) * 7 + (0xFC,))
EXIT_MOTOR_MODE = bytes((0xFF,) * 7 + (0xFD,))
SET_ZERO = bytes((0xFF,) * 7 + (0xFE,))
SPECIAL_FRAMES = {ENTER_MOTOR_MODE: "enter motor mode", EXIT_MOTOR_MODE: "exit motor mode",
                  SET_ZERO: "set zero"}
REPLY_LENGTHS = (6, 8)  # Katz firmware; CubeMars (+ temperature, error code)
CAN_DATA_BYTES = 8  # a classic CAN frame's data: a command, a long reply
_INT8_MAX = 127  # the temperature byte is a signed int8
FAULT_CODES = {
    0: "no fault",
    1: "over-temperature",
    2: "over-current",
    3: "over-voltage",
    4: "under-voltage",
    5: "encoder fault",
    6: "phase current unbalance",
}
OVER_TEMPERATURE = 1


class FrameError(ValueError):
    """A frame that cannot be a reply of this protocol; the message says what is wrong with it."""


@dataclass(frozen=True)
class MotorRanges:
    """The value ranges a motor model's firmware maps its integers onto (all > 0)."""

    p_max: float
    v_max: float
    kp_max: float
    kd_max: float
    t_max: float

    def __post_init__(self) -> None:
        for name in ("p_max", "v_max", "kp_max", "kd_max", "t_max"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be a finite number > 0, got {value}")


@dataclass(frozen=True)
class Reply:
    """A decoded reply: position [rad], velocity [rad/s], torque [N m]; temperature [°C] and error code
    only in 8-byte replies (None otherwise)."""

    motor_id: int
    position: float
    velocity: float
    torque: float
    temperature: int | None = None
    error_code: int | None = None


def float_to_uint(x: float, lo: float, hi: float, bits: int) -> int:
    """``x`` clamped to ``[lo, hi]``, as the nearest of ``2^bits`` evenly spaced integers (lo -> 0)."""
    top = (1 << bits) - 1
    clamped = min(max(x, lo), hi)
    return round((clamped - lo) * top / (hi - lo))


def uint_to_float(n: int, lo: float, hi: float, bits: int) -> float:
    """Inverse of ``float_to_uint`` (exact at 0 and ``2^bits - 1``)."""
    return lo + n * (hi - lo) / ((1 << bits) - 1)


def pack_command(position: float, velocity: float, kp: float, kd: float, torque: float,
                 ranges: MotorRanges) -> bytes:
    """The 8 data bytes of an MIT-mode command (values clamped to ``ranges``)."""
    p = float_to_uint(position, -ranges.p_max, ranges.p_max, 16)
    v = float_to_uint(velocity, -ranges.v_max, ranges.v_max, 12)
    k_p = float_to_uint(kp, 0.0, ranges.kp_max, 12)
    k_d = float_to_uint(kd, 0.0, ranges.kd_max, 12)
    t = float_to_uint(torque, -ranges.t_max, ranges.t_max, 12)
    return bytes((p >> 8, p & 0xFF, v >> 4, (v & 0xF) << 4 | k_p >> 8, k_p & 0xFF, k_d >> 4,
                  (k_d & 0xF) << 4 | t >> 8, t & 0xFF))


def unpack_command(data: bytes, ranges: MotorRanges) -> tuple[float, float, float, float, float]:
    """``(position, velocity, kp, kd, torque)`` of 8 command bytes (what a motor does on receipt)."""
    if len(data) != CAN_DATA_BYTES:
        raise FrameError(f"a command has 8 data bytes, this frame has {len(data)}")
    p = data[0] << 8 | data[1]
    v = data[2] << 4 | data[3] >> 4
    k_p = (data[3] & 0xF) << 8 | data[4]
    k_d = data[5] << 4 | data[6] >> 4
    t = (data[6] & 0xF) << 8 | data[7]
    return (uint_to_float(p, -ranges.p_max, ranges.p_max, 16),
            uint_to_float(v, -ranges.v_max, ranges.v_max, 12),
            uint_to_float(k_p, 0.0, ranges.kp_max, 12),
            uint_to_float(k_d, 0.0, ranges.kd_max, 12),
            uint_to_float(t, -ranges.t_max, ranges.t_max, 12))


def pack_reply(motor_id: int, position: float, velocity: float, torque: float, ranges: MotorRanges,
               temperature: int | None = None, error_code: int = 0) -> bytes:
    """A motor's reply: 6 bytes, or 8 with ``temperature`` [°C, -128..127] and ``error_code``."""
    p = float_to_uint(position, -ranges.p_max, ranges.p_max, 16)
    v = float_to_uint(velocity, -ranges.v_max, ranges.v_max, 12)
    t = float_to_uint(torque, -ranges.t_max, ranges.t_max, 12)
    data = bytes((motor_id & 0xFF, p >> 8, p & 0xFF, v >> 4, (v & 0xF) << 4 | t >> 8, t & 0xFF))
    if temperature is None:
        return data
    return data + bytes((max(-128, min(127, temperature)) & 0xFF, error_code & 0xFF))


def unpack_reply(data: bytes, ranges: MotorRanges) -> Reply:
    """Decode a reply; FrameError unless it has 6 or 8 bytes."""
    if len(data) not in REPLY_LENGTHS:
        raise FrameError(f"a reply has 6 or 8 data bytes, this frame has {len(data)}")
    p = data[1] << 8 | data[2]
    v = data[3] << 4 | data[4] >> 4
    t = (data[4] & 0xF) << 8 | data[5]
    temperature = error_code = None
    if len(data) == CAN_DATA_BYTES:
        temperature = data[6] - 256 if data[6] > _INT8_MAX else data[6]
        error_code = data[7]
    return Reply(data[0],
                 uint_to_float(p, -ranges.p_max, ranges.p_max, 16),
                 uint_to_float(v, -ranges.v_max, ranges.v_max, 12),
                 uint_to_float(t, -ranges.t_max, ranges.t_max, 12),
                 temperature, error_code)


COMMAND_BITS = np.array([16, 12, 12, 12, 12])  # position, velocity, kp, kd, torque
_COMMAND_TOPS = (2.0 ** COMMAND_BITS - 1.0)
_COMMAND_SHIFTS = np.array([48, 36, 24, 12, 0], dtype=np.uint64)


@dataclass(frozen=True)
class RangeTable:
    """The ranges of n motors as (n, 5) arrays, columns position, velocity, kp, kd, torque: ``lo``, ``hi`` and
    ``span = hi - lo``."""

    lo: np.ndarray
    hi: np.ndarray
    span: np.ndarray

    @classmethod
    def of(cls, ranges: Sequence[MotorRanges]) -> RangeTable:
        hi = np.array([[r.p_max, r.v_max, r.kp_max, r.kd_max, r.t_max] for r in ranges], dtype=float)
        lo = -hi * (1.0, 1.0, 0.0, 0.0, 1.0) + 0.0  # + 0.0: the gains' lower bound is 0, not -0
        return cls(lo, hi, hi - lo)


def pack_commands(values: np.ndarray, table: RangeTable) -> bytes:
    """The commands of n motors, ``values`` (n, 5): position, velocity, kp, kd, torque per row; motor k's 8
    bytes are ``[8k, 8k + 8)``, equal to ``pack_command(*values[k], ranges[k])``."""
    clamped = np.minimum(np.maximum(values, table.lo), table.hi)
    uints = np.rint((clamped - table.lo) * _COMMAND_TOPS / table.span).astype(np.uint64)
    frames: bytes = (uints << _COMMAND_SHIFTS).sum(axis=1, dtype=np.uint64).astype(">u8").tobytes()
    return frames


@dataclass(frozen=True)
class Replies:
    """Replies of n motors as arrays: motor id, position, velocity, torque; temperature (NaN in a 6-byte
    reply) and error code (0 in a 6-byte reply); ``saturated`` (n, 3): position, velocity, torque sent as the
    lowest or highest code, the ends of the range (the firmware clamps a value beyond them to them, so the
    true value may lie anywhere beyond)."""

    motor_id: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    torque: np.ndarray
    temperature: np.ndarray
    error_code: np.ndarray
    saturated: np.ndarray


def unpack_replies(data: bytes, lengths: np.ndarray, table: RangeTable) -> Replies:
    """Decode n replies, reply k in ``data[8k : 8k + lengths[k]]`` (6 or 8, a 6-byte reply followed by 2
    ignored bytes), with ``table`` row k; each field equals ``unpack_reply``'s."""
    words = np.frombuffer(data, dtype=">u8").astype(np.uint64)
    p = (words >> np.uint64(40)) & np.uint64(0xFFFF)
    v = (words >> np.uint64(28)) & np.uint64(0xFFF)
    t = (words >> np.uint64(16)) & np.uint64(0xFFF)
    long = lengths == CAN_DATA_BYTES
    temperature = ((words >> np.uint64(8)) & np.uint64(0xFF)).astype(np.uint8).view(np.int8).astype(float)
    return Replies(
        (words >> np.uint64(56)).astype(np.intp),
        table.lo[:, 0] + p.astype(float) * table.span[:, 0] / _COMMAND_TOPS[0],
        table.lo[:, 1] + v.astype(float) * table.span[:, 1] / _COMMAND_TOPS[1],
        table.lo[:, 4] + t.astype(float) * table.span[:, 4] / _COMMAND_TOPS[4],
        np.where(long, temperature, math.nan),
        np.where(long, words & np.uint64(0xFF), 0).astype(np.intp),
        np.column_stack([(code == 0) | (code == top) for code, top in ((p, 0xFFFF), (v, 0xFFF), (t, 0xFFF))]),
    )


def describe_fault(code: int) -> str:
    return FAULT_CODES.get(code, f"unknown error code {code}")
