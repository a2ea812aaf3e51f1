"""Emulated MIT-mode motors (can_motor_protocol.py) with a simple motor model and fault injection.

Model of one motor (output shaft coordinates): ``J a = tau - b v`` with ``tau = clamp(kp (p_des - p) + kd
(v_des - v) + t_ff, ±torque_limit)`` in motor mode (the PD + feed-forward runs inside the motor, as in MIT
mode) and ``tau = 0`` in rest mode. Each frame a motor receives first advances its model to the present
(``clock``, wall time by default) under the command it held, in sub-steps of at most 0.5 ms: implicit Euler on
the linear (unsaturated) law, which is stable for any gains, or, when the torque saturates, the limit torque
with implicit damping. Then, as Katz's firmware does: the special frames switch mode or zero the position, a
command frame is applied only in motor mode, and every frame addressed to the motor is answered (6 or 8 bytes,
``reply_length``) on the master id.

Faults: ``silent`` (no reply), ``corrupt`` (replies cut to 5 bytes), ``error_code`` and ``temperature`` (in
8-byte replies), ``double`` (the next n frames are each answered twice), ``misreport`` (replies report these
values instead of the model's: a reading out of any range), ``MitMotorBank.unsolicited`` (a reply to no frame
of the driver, as the answer to a frame another node sent: a stray reply) and ``MitMotorBank.bus_off`` (one
SocketCAN bus-off error frame, then silence). ``BusServer`` answers the frames of a python-can bus on a thread
(``inject`` sends frames of the devices' own).
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING

import can

from kinodyn_control.hardware.can_motor_bus import CAN_ERR_BUSOFF
from kinodyn_control.hardware.can_motor_protocol import (
    CAN_DATA_BYTES,
    ENTER_MOTOR_MODE,
    EXIT_MOTOR_MODE,
    SET_ZERO,
    FrameError,
    MotorRanges,
    pack_reply,
    unpack_command,
)

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_SUBSTEP = 5e-4


class MitMotor:
    """One emulated motor: state ``position``, ``velocity``, ``torque`` (the last applied), ``motor_mode``."""

    def __init__(self, can_id: int, ranges: MotorRanges, inertia: float = 0.02, damping: float = 0.05,
                 torque_limit: float | None = None, position: float = 0.0, temperature: int = 30,
                 reply_length: int = 8) -> None:
        self.can_id, self.ranges = can_id, ranges
        self.inertia, self.damping = inertia, damping
        self.torque_limit = ranges.t_max if torque_limit is None else min(torque_limit, ranges.t_max)
        self.position, self.velocity, self.torque = position, 0.0, 0.0
        self.motor_mode = False
        self.command = (0.0, 0.0, 0.0, 0.0, 0.0)  # p_des, v_des, kp, kd, t_ff
        self.temperature, self.error_code = temperature, 0
        self.reply_length = reply_length
        self.silent = self.corrupt = False
        self.double = 0  # the next ``double`` frames are answered twice
        self.misreport: dict[str, float] = {}  # position/velocity/torque replies carry instead of the model's
        self.frames = 0  # frames received
        self._time: float | None = None

    def advance(self, h: float) -> None:
        """Integrate the model over ``h`` seconds under the held command."""
        if h <= 0.0:
            return
        n = max(1, math.ceil(h / MAX_SUBSTEP))
        for _ in range(n):
            self._substep(h / n)

    def _substep(self, h: float) -> None:
        j, b = self.inertia, self.damping
        p_des, v_des, kp, kd, t_ff = self.command if self.motor_mode else (0.0, 0.0, 0.0, 0.0, 0.0)
        v = (j * self.velocity + h * (kp * (p_des - self.position) + kd * v_des + t_ff)) / (j + h * (kd + b)
                                                                                            + h * h * kp)
        tau = kp * (p_des - (self.position + h * v)) + kd * (v_des - v) + t_ff
        if abs(tau) > self.torque_limit:
            tau = math.copysign(self.torque_limit, tau)
            v = (j * self.velocity + h * tau) / (j + h * b)
        self.velocity, self.position, self.torque = v, self.position + h * v, tau

    def receive(self, data: bytes, now: float) -> bytes | None:
        """Handle one frame's data at time ``now``; the reply's data, or None (silent)."""
        if self._time is not None:
            self.advance(now - self._time)
        self._time = now
        self.frames += 1
        if data == ENTER_MOTOR_MODE:
            self.motor_mode = True
            self.command = (0.0, 0.0, 0.0, 0.0, 0.0)
        elif data == EXIT_MOTOR_MODE:
            self.motor_mode = False
        elif data == SET_ZERO:
            self.position = 0.0
        elif self.motor_mode:
            try:
                self.command = unpack_command(data, self.ranges)
            except FrameError:
                return None  # the firmware ignores a frame it cannot read
        if self.silent:
            return None
        return self.reply()

    def reply(self) -> bytes:
        """The reply data of the present state (with the ``corrupt``/``misreport`` faults)."""
        temperature = self.temperature if self.reply_length == CAN_DATA_BYTES else None
        state = {"position": self.position, "velocity": self.velocity, "torque": self.torque,
                 **self.misreport}
        reply = pack_reply(self.can_id, state["position"], state["velocity"], state["torque"], self.ranges,
                           temperature, self.error_code)
        return reply[:5] if self.corrupt else reply


class MitMotorBank:
    """The motors of one bus, by CAN id; ``handle`` answers one frame."""

    def __init__(self, motors: list[MitMotor], master_id: int = 0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.motors = {m.can_id: m for m in motors}
        self.master_id = master_id
        self.clock = clock
        self._bus_off = self._reported_off = False
        self.lock = threading.Lock()  # tests change faults while a server thread answers

    def bus_off(self) -> None:
        """From the next frame on: one bus-off error frame, then no frame at all."""
        self._bus_off = True

    def handle(self, message: can.Message) -> list[can.Message]:
        with self.lock:
            if self._bus_off:
                if self._reported_off:
                    return []
                self._reported_off = True
                return [can.Message(arbitration_id=CAN_ERR_BUSOFF, is_error_frame=True, dlc=8, data=bytes(8))]
            motor = self.motors.get(message.arbitration_id)
            if motor is None or message.is_extended_id or message.is_error_frame:
                return []
            reply = motor.receive(bytes(message.data), self.clock())
            copies = 1
            if reply is not None and motor.double:
                motor.double -= 1
                copies = 2
        if reply is None:
            return []
        return [can.Message(arbitration_id=self.master_id, data=reply, is_extended_id=False)] * copies

    def unsolicited(self, can_id: int) -> can.Message:
        """A reply of motor ``can_id`` (its present state) to no frame of the driver."""
        with self.lock:
            data = self.motors[can_id].reply()
        return can.Message(arbitration_id=self.master_id, data=data, is_extended_id=False)


class BusServer:
    """Answers the frames arriving on ``bus`` with ``bank`` on a daemon thread until ``stop``."""

    def __init__(self, bank: MitMotorBank, bus: can.BusABC) -> None:
        self.bank, self.bus = bank, bus
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mit-motor-emulator", daemon=True)

    def start(self) -> BusServer:
        self._thread.start()
        return self

    def inject(self, messages: list[can.Message]) -> None:
        """Send ``messages`` on the bus now, answering nothing (e.g. ``bank.unsolicited``)."""
        for message in messages:
            self.bus.send(message)

    def _run(self) -> None:
        while not self._stop.is_set():
            message = self.bus.recv(timeout=0.05)
            if message is not None:
                for reply in self.bank.handle(message):
                    self.bus.send(reply)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.bus.shutdown()

    def __enter__(self) -> BusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
