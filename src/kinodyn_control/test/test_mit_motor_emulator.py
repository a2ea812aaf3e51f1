"""The emulated MIT-mode motor (emulators/mit_motor.py) against closed forms: constant torque on inertia and
damping, the PD equilibrium, torque saturation, and Katz's firmware behaviour (commands ignored in rest mode,
every frame answered, set zero)."""

from __future__ import annotations

import math

import can
import pytest
from kinodyn_control.hardware.can_motor_protocol import (
    ENTER_MOTOR_MODE,
    EXIT_MOTOR_MODE,
    SET_ZERO,
    MotorRanges,
    pack_command,
    unpack_reply,
)
from kinodyn_control.hardware.emulators.mit_motor import MitMotor, MitMotorBank

R = MotorRanges(p_max=12.5, v_max=50.0, kp_max=500.0, kd_max=5.0, t_max=18.0)


def test_constant_torque_matches_the_first_order_closed_form() -> None:
    # v(t) = tau/b (1 - exp(-b t / j)), p(t) = tau/b (t - j/b (1 - exp(-b t / j)))
    j, b, tau = 0.02, 0.05, 1.2
    motor = MitMotor(1, R, inertia=j, damping=b)
    motor.motor_mode, motor.command = True, (0.0, 0.0, 0.0, 0.0, tau)
    t = 0.3
    motor.advance(t)
    decay = 1.0 - math.exp(-b * t / j)
    assert motor.velocity == pytest.approx(tau / b * decay, rel=2e-3)
    assert motor.position == pytest.approx(tau / b * (t - j / b * decay), rel=2e-3)
    assert motor.torque == tau


def test_pd_settles_at_the_target_plus_feed_forward_over_kp() -> None:
    motor = MitMotor(1, R, inertia=0.01, damping=0.05)
    # equilibrium: kp (p_des - p) + t_ff = b v = 0
    motor.motor_mode, motor.command = True, (0.7, 0.0, 40.0, 1.5, 2.0)
    motor.advance(3.0)
    assert motor.position == pytest.approx(0.7 + 2.0 / 40.0, abs=1e-6)
    assert motor.velocity == pytest.approx(0.0, abs=1e-6)


def test_torque_saturates_at_the_limit() -> None:
    motor = MitMotor(1, R, inertia=0.01, damping=0.0, torque_limit=5.0)
    motor.motor_mode, motor.command = True, (10.0, 0.0, 500.0, 0.0, 0.0)
    motor.advance(0.01)  # kp * 10 rad = 5000 N m asked; 5 N m applied: v = 5 / 0.01 * 0.01 = 5 rad/s
    assert motor.torque == 5.0
    assert motor.velocity == pytest.approx(5.0, rel=1e-9)


def test_firmware_behaviour_on_frames() -> None:
    now = [0.0]
    motor = MitMotor(3, R, position=1.0, temperature=33)
    bank = MitMotorBank([motor], master_id=0, clock=lambda: now[0])

    def send(data: bytes) -> bytes:
        (reply,) = bank.handle(can.Message(arbitration_id=3, data=data, is_extended_id=False))
        assert reply.arbitration_id == 0
        return bytes(reply.data)

    assert unpack_reply(send(EXIT_MOTOR_MODE), R).position == pytest.approx(1.0, abs=2e-4)
    send(pack_command(0.0, 0.0, 0.0, 0.0, 10.0, R))  # rest mode: ignored
    now[0] = 0.5
    assert motor.velocity == 0.0
    assert motor.command[4] == 0.0
    send(ENTER_MOTOR_MODE)
    send(pack_command(0.0, 0.0, 0.0, 0.0, 10.0, R))
    now[0] = 0.51
    reply = unpack_reply(send(SET_ZERO), R)
    assert motor.velocity > 0.0
    assert reply.temperature == 33
    assert reply.error_code == 0
    assert motor.position == 0.0
    assert bank.handle(can.Message(arbitration_id=4, data=EXIT_MOTOR_MODE, is_extended_id=False)) == []


def test_fault_double_answers_the_next_frames_twice() -> None:
    motor = MitMotor(2, R, position=0.25)
    bank = MitMotorBank([motor], clock=lambda: 0.0)
    frame = can.Message(arbitration_id=2, data=EXIT_MOTOR_MODE, is_extended_id=False)
    motor.double = 1
    first = bank.handle(frame)
    assert len(first) == 2
    assert first[0].data == first[1].data
    assert motor.double == 0
    assert len(bank.handle(frame)) == 1


def test_fault_misreport_replaces_the_reported_values() -> None:
    motor = MitMotor(2, R, position=0.25)
    bank = MitMotorBank([motor], clock=lambda: 0.0)
    motor.misreport = {"position": 1e6, "velocity": -3.0}
    (reply,) = bank.handle(can.Message(arbitration_id=2, data=EXIT_MOTOR_MODE, is_extended_id=False))
    assert reply.data[1:3] == b"\xff\xff"  # beyond p_max: the highest position code
    decoded = unpack_reply(bytes(reply.data), R)
    assert decoded.position == R.p_max
    assert decoded.velocity == pytest.approx(-3.0, abs=100 / 4095)
    assert motor.position == 0.25  # the model is unchanged


def test_fault_unsolicited_reply_is_the_present_state_on_the_master_id() -> None:
    motor = MitMotor(2, R, position=-0.5)
    bank = MitMotorBank([motor], master_id=0)
    stray = bank.unsolicited(2)
    assert stray.arbitration_id == 0
    assert stray.data[0] == 2
    assert motor.frames == 0
    assert unpack_reply(bytes(stray.data), R).position == pytest.approx(-0.5, abs=25 / 65535)
