"""MIT-mode packing (can_motor_protocol.py): bit layout against bytes packed by hand from the protocol's byte
table, clamping, round trips within half a quantisation step, and the uint mapping against exact rational
arithmetic; the vectorised ``pack_commands``/``unpack_replies`` against the reference functions, row by
row."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from kinodyn_control.hardware.can_motor_protocol import (
    ENTER_MOTOR_MODE,
    EXIT_MOTOR_MODE,
    SET_ZERO,
    FrameError,
    MotorRanges,
    RangeTable,
    float_to_uint,
    pack_command,
    pack_commands,
    pack_reply,
    uint_to_float,
    unpack_command,
    unpack_replies,
    unpack_reply,
)

AK80_9 = MotorRanges(p_max=12.5, v_max=50.0, kp_max=500.0, kd_max=5.0, t_max=18.0)
R = AK80_9


def test_special_frames() -> None:
    assert ENTER_MOTOR_MODE.hex() == "fffffffffffffffc"
    assert EXIT_MOTOR_MODE.hex() == "fffffffffffffffd"
    assert SET_ZERO.hex() == "fffffffffffffffe"


def test_command_bit_layout_against_hand_packed_bytes() -> None:
    # integers p=0x1234, v=0xABC, kp=0x5DE, kd=0x9F1, t=0x2A7, laid out as the protocol's byte table says
    ints = {"p": 0x1234, "v": 0xABC, "kp": 0x5DE, "kd": 0x9F1, "t": 0x2A7}
    values = (uint_to_float(ints["p"], -R.p_max, R.p_max, 16),
              uint_to_float(ints["v"], -R.v_max, R.v_max, 12),
              uint_to_float(ints["kp"], 0, R.kp_max, 12), uint_to_float(ints["kd"], 0, R.kd_max, 12),
              uint_to_float(ints["t"], -R.t_max, R.t_max, 12))
    data = pack_command(*values, R)
    assert data == bytes([0x12, 0x34, 0xAB, 0xC5, 0xDE, 0x9F, 0x12, 0xA7])
    assert unpack_command(data, R) == pytest.approx(values, abs=1e-12)


def test_reply_bit_layout_against_hand_packed_bytes() -> None:
    # id 3, p 0xBEEF, v 0x123, t 0x456, 45 °C, error code 2
    data = bytes([0x03, 0xBE, 0xEF, 0x12, 0x34, 0x56, 0x2D, 0x02])
    reply = unpack_reply(data, R)
    assert reply.motor_id == 3
    assert reply.temperature == 45
    assert reply.error_code == 2
    assert reply.position == pytest.approx(-12.5 + 0xBEEF * 25.0 / 65535, abs=1e-12)
    assert reply.velocity == pytest.approx(-50.0 + 0x123 * 100.0 / 4095, abs=1e-12)
    assert reply.torque == pytest.approx(-18.0 + 0x456 * 36.0 / 4095, abs=1e-12)
    assert pack_reply(3, reply.position, reply.velocity, reply.torque, R, 45, 2) == data
    six = pack_reply(3, reply.position, reply.velocity, reply.torque, R)
    assert six == data[:6]
    assert unpack_reply(six, R).temperature is None
    assert unpack_reply(bytes([1, 0, 0, 0, 0, 0, 0xF6, 0]), R).temperature == -10  # signed byte


def test_clamping_to_the_ranges() -> None:
    assert pack_command(100.0, -100.0, 1e9, -1.0, 50.0, R) == bytes([0xFF, 0xFF, 0x00, 0x0F, 0xFF, 0x00, 0x0F,
                                                                      0xFF])
    assert float_to_uint(-1e300, -1.0, 1.0, 12) == 0
    assert float_to_uint(1e300, -1.0, 1.0, 12) == 4095


@pytest.mark.parametrize("bits", [12, 16])
def test_uint_mapping_is_the_nearest_integer_exactly(bits: int) -> None:
    rng = np.random.default_rng(3)
    top = (1 << bits) - 1
    for x in rng.uniform(-12.5, 12.5, 2000):
        exact = (Fraction(float(x)) + Fraction(25, 2)) * top / 25  # exact rational position of x
        n = float_to_uint(float(x), -12.5, 12.5, bits)
        assert abs(Fraction(n) - exact) <= Fraction(1, 2) + Fraction(1, 10) ** 9
        assert abs(uint_to_float(n, -12.5, 12.5, bits) - x) <= 25 / top / 2 + 1e-12


def test_round_trips_within_half_a_step() -> None:
    rng = np.random.default_rng(7)
    for _ in range(500):
        p, v, t = rng.uniform(-1, 1, 3) * (R.p_max, R.v_max, R.t_max)
        kp, kd = rng.uniform(0, 1, 2) * (R.kp_max, R.kd_max)
        back = unpack_command(pack_command(p, v, kp, kd, t, R), R)
        steps = (2 * R.p_max / 65535, 2 * R.v_max / 4095, R.kp_max / 4095, R.kd_max / 4095,
                 2 * R.t_max / 4095)
        sent = (p, v, kp, kd, t)
        assert all(abs(a - b) <= s / 2 + 1e-12 for a, b, s in zip(back, sent, steps, strict=True))
        reply = unpack_reply(pack_reply(7, p, v, t, R, 50), R)
        assert abs(reply.position - p) <= steps[0] / 2 + 1e-12
        assert abs(reply.torque - t) <= steps[4] / 2 + 1e-12


@pytest.mark.parametrize("length", [0, 5, 7, 9])
def test_a_reply_of_the_wrong_length_is_refused(length: int) -> None:
    with pytest.raises(FrameError, match=f"6 or 8 data bytes, this frame has {length}"):
        unpack_reply(bytes(length), R)


def test_ranges_must_be_positive_and_finite() -> None:
    with pytest.raises(ValueError, match="t_max must be a finite number > 0"):
        MotorRanges(12.5, 50.0, 500.0, 5.0, float("nan"))


def _random_ranges(rng: np.random.Generator, n: int) -> list[MotorRanges]:
    return [MotorRanges(*rng.choice([0.5, 4.0, 12.5, 12.56637, 50.0, 95.5, 500.0], 5)) for _ in range(n)]


def test_pack_commands_equals_pack_command_row_by_row() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 13))
        ranges = _random_ranges(rng, n)
        table = RangeTable.of(ranges)
        # inside, beyond and exactly on the ranges, and exactly halfway between two codes (round half to even)
        values = rng.uniform(-1.3, 1.3, (n, 5)) * table.hi
        values[rng.random((n, 5)) < 0.1] = 0.0
        edge = rng.random((n, 5)) < 0.1
        values[edge] = np.where(rng.random(edge.sum()) < 0.5, table.lo[edge], table.hi[edge])
        codes = rng.integers(0, 4095, (n, 5))
        half = table.lo + (codes + 0.5) * table.span / (2.0 ** np.array([16, 12, 12, 12, 12]) - 1)
        tie = rng.random((n, 5)) < 0.1
        values[tie] = half[tie]
        packed = pack_commands(values, table)
        expected = b"".join(pack_command(*map(float, values[k]), ranges[k]) for k in range(n))
        assert packed == expected


def test_pack_commands_bit_layout_against_hand_packed_bytes() -> None:
    table = RangeTable.of([R, R])
    ints = np.array([[0x1234, 0xABC, 0x5DE, 0x9F1, 0x2A7], [0xFFFF, 0, 0xFFF, 0, 0x800]])
    values = table.lo + ints * table.span / (2.0 ** np.array([16, 12, 12, 12, 12]) - 1)
    assert pack_commands(values, table) == bytes([0x12, 0x34, 0xAB, 0xC5, 0xDE, 0x9F, 0x12, 0xA7,
                                                  0xFF, 0xFF, 0x00, 0x0F, 0xFF, 0x00, 0x08, 0x00])


def test_unpack_replies_equals_unpack_reply_row_by_row() -> None:
    rng = np.random.default_rng(12)
    for _ in range(200):
        n = int(rng.integers(1, 13))
        ranges = _random_ranges(rng, n)
        lengths = rng.choice([6, 8], n)
        raw = rng.integers(0, 256, (n, 8), dtype=np.uint8)
        replies = unpack_replies(raw.tobytes(), lengths, RangeTable.of(ranges))
        for k in range(n):
            reply = unpack_reply(raw[k, :lengths[k]].tobytes(), ranges[k])
            assert (replies.motor_id[k], replies.position[k], replies.velocity[k], replies.torque[k]) == (
                reply.motor_id, reply.position, reply.velocity, reply.torque)
            if reply.temperature is None:
                assert np.isnan(replies.temperature[k])
                assert replies.error_code[k] == 0
            else:
                assert replies.temperature[k] == reply.temperature
                assert replies.error_code[k] == reply.error_code
