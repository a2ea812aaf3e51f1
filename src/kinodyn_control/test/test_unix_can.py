"""The emulators' bus between processes (emulators/unix_can.py, python-can interface ``kinodyn_unixcan``):
frames cross byte for byte between clients (standard, extended, empty, error frames) with the devices in a
child process, CanMotorSystem drives motors of that child through it, and the hub going away is a send or
receive failure (ERROR with one line)."""

from __future__ import annotations

import multiprocessing
import re
from contextlib import contextmanager
from typing import TYPE_CHECKING

import can
import pytest
from kinodyn_control.hardware.can_motor_protocol import EXIT_MOTOR_MODE, MotorRanges, unpack_reply
from kinodyn_control.hardware.emulators.mit_motor import MitMotor, MitMotorBank
from kinodyn_control.hardware.emulators.unix_can import INTERFACE, UnixCanHub
from kinodyn_control.testing import Harness, param, robot_xml, system_block

if TYPE_CHECKING:
    from collections.abc import Iterator

R = MotorRanges(p_max=12.5, v_max=50.0, kp_max=500.0, kd_max=5.0, t_max=18.0)
T_STEP = 36.0 / 4095


@contextmanager
def motors_in_child(*motors: MitMotor) -> Iterator[tuple[str, multiprocessing.Event]]:
    """A hub answering with ``motors`` in a forked child process; yields its channel and the stop event."""
    hub = UnixCanHub(MitMotorBank(list(motors)).handle)
    context = multiprocessing.get_context("fork")
    stop = context.Event()
    child = context.Process(target=hub.serve, args=(stop.is_set,), daemon=True)
    child.start()
    try:
        yield hub.channel, stop
    finally:
        stop.set()
        child.join(5.0)
        if child.is_alive():
            child.terminate()
        hub.close()


def test_frames_cross_byte_for_byte_and_devices_answer_every_client() -> None:
    with motors_in_child(MitMotor(1, R, position=0.5, reply_length=8)) as (channel, _):
        a, b = (can.Bus(interface=INTERFACE, channel=channel) for _ in range(2))
        try:
            sent = [can.Message(arbitration_id=0x7FF, data=bytes(range(8)), is_extended_id=False),
                    can.Message(arbitration_id=0x1ABCDEF0, data=b"\x01\x02\x03", is_extended_id=True),
                    can.Message(arbitration_id=0x123, data=b"", is_extended_id=False),
                    can.Message(arbitration_id=0x40, data=bytes(8), is_error_frame=True)]
            for message in sent:
                a.send(message)
            for message in sent:
                got = b.recv(timeout=2.0)
                assert got is not None
                fields = (message.arbitration_id, message.is_extended_id, message.is_error_frame)
                assert (got.arbitration_id, got.is_extended_id, got.is_error_frame) == fields
                assert got.data == message.data
            assert a.recv(timeout=0.05) is None  # a sender does not hear its own frames
            a.send(can.Message(arbitration_id=1, data=EXIT_MOTOR_MODE, is_extended_id=False))
            assert b.recv(timeout=2.0).arbitration_id == 1  # the frame on the wire
            for bus in (a, b):  # the motor's answer, seen by every node
                reply = bus.recv(timeout=2.0)
                assert reply.arbitration_id == 0
                assert unpack_reply(bytes(reply.data), R).position == pytest.approx(0.5, abs=25 / 65535)
        finally:
            a.shutdown()
            b.shutdown()


def test_can_motor_system_drives_motors_of_another_process_and_a_vanished_bus_is_an_error() -> None:
    joints = "".join(f'<joint name="j{i}"><command_interface name="effort">{param("min", -10)}'
                     f'{param("max", 10)}</command_interface><state_interface name="position"/>'
                     f'<state_interface name="effort"/>{param("can_id", i)}</joint>' for i in (1, 2))
    with motors_in_child(MitMotor(1, R), MitMotor(2, R, position=-0.25)) as (channel, stop):
        hardware = "".join(param(k, v) for k, v in (("interface", INTERFACE), ("channel", channel),
                                                    ("reply_timeout", 0.5), ("p_max", 12.5), ("v_max", 50),
                                                    ("kp_max", 500), ("kd_max", 5), ("t_max", 18),
                                                    # the motors accelerate on a loaded machine's wall clock
                                                    # past robot_xml's 2 rad/s: check the encodable range only
                                                    ("position_margin", 11), ("velocity_margin", 24)))
        h = Harness(robot_xml(system_block(hardware, joints, plugin="kinodyn_control/CanMotorSystem")))
        try:
            h.activate_hardware()
            assert h.state("j2/position") == pytest.approx(-0.25, abs=25 / 65535)
            h.set_command("j1/effort", 2.0)
            h.set_command("j2/effort", -3.0)
            for k in range(3):  # the effort state is the torque applied, one frame late
                h.manager.cycle(k * 0.002, 0.002)
            assert h.state("j1/effort") == pytest.approx(2.0, abs=T_STEP)
            assert h.state("j2/effort") == pytest.approx(-3.0, abs=T_STEP)
            assert h.state("j1/position") > 0.0 > h.state("j2/position") + 0.25  # accelerated by them
            stop.set()  # the child closes the hub: the cable is pulled
            for k in range(3, 200):
                h.manager.cycle(k * 0.002, 0.002)
                if h.messages("error"):
                    break
            errors = h.messages("error")  # the next frame sent or reply awaited, whichever comes first
            assert len(errors) == 1, errors
            assert re.search(f"sending to motor 0x[12] .* failed: sending on the emulated CAN bus {channel} "
                             f"failed|receiving on CAN channel '{channel}' failed", errors[0]), errors
        finally:
            h.manager.shutdown()
