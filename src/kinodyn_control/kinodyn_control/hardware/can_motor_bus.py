"""One CAN bus of MIT-mode motors through python-can: send frames, collect the replies within a timeout.

Every frame sent to a motor (command or special frame) is answered by one reply on the master id
(can_motor_protocol.py), so ``send`` marks the motor as waiting and ``collect`` returns the reply data of
each waiting motor once all have answered (one pass over the bus, no decoding: the component decodes them
together).
``MotorBusError`` (the component turns it into ERROR) is raised for: a send or receive python-can refuses (the
interface is down or bus-off), a SocketCAN error frame reporting bus-off (``CAN_ERR_BUSOFF`` = 0x40 in the
error class, linux/can/error.h), a motor that has not answered ``reply_timeout`` seconds after the last frame
sent, a frame on the master id that is no reply (length other than 6 or 8) or names a motor id not on this
bus. Other error frames (error-warning, error-passive, ...) are reported through ``warn`` once per
class; frames on other ids (other devices on the bus) are ignored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import can

from kinodyn_control.hardware.can_motor_config import BusConfig, MotorConfig
from kinodyn_control.hardware.can_motor_protocol import REPLY_LENGTHS

CAN_ERR_BUSOFF = 0x00000040


class MotorBusError(IOError):
    """The bus or a motor failed; the message says what happened and what to check."""


def _motor_name(motor: MotorConfig) -> str:
    return f"motor {motor.can_id:#x} (joint '{motor.joint}')"


class MotorBus:
    def __init__(self, config: BusConfig, warn: Callable[[str], None]) -> None:
        self.config = config
        self.warn = warn
        self.motors = {m.can_id: m for m in config.motors}
        self.bus: can.BusABC | None = None
        self._waiting: set[int] = set()  # motor ids
        self._deadline = 0.0  # time.monotonic() by which every waiting motor must have answered
        self._warned: set[int] = set()

    def open(self) -> None:
        options: dict[str, Any] = {} if self.config.bitrate is None else {"bitrate": self.config.bitrate}
        try:
            self.bus = can.Bus(interface=self.config.interface, channel=self.config.channel, **options)
        except (can.CanError, OSError, ValueError, ImportError) as exc:
            raise MotorBusError(f"cannot open CAN interface '{self.config.interface}' channel "
                           f"'{self.config.channel}': {exc}; check the interface is up (ip link set can0 up "
                           "type can bitrate 1000000)") from exc
        self._waiting.clear()

    def close(self) -> None:
        if self.bus is not None:
            self.bus.shutdown()
            self.bus = None
        self._waiting.clear()

    @property
    def is_open(self) -> bool:
        return self.bus is not None

    @property
    def waiting(self) -> bool:
        return bool(self._waiting)

    def send(self, can_id: int, data: bytes) -> None:
        """Send ``data`` to motor ``can_id``; its reply is due within ``reply_timeout``."""
        assert self.bus is not None
        try:
            self.bus.send(can.Message(arbitration_id=can_id, data=data, is_extended_id=False))
        except can.CanError as exc:
            raise MotorBusError(f"sending to {_motor_name(self.motors[can_id])} failed: {exc}; the bus is "
                                "off or the interface is down (check wiring, termination and power)") from exc
        self._waiting.add(can_id)
        self._deadline = time.monotonic() + self.config.reply_timeout

    def send_all(self, ids: tuple[int, ...], data: bytes) -> None:
        """Send motor ``ids[k]`` its 8 bytes ``data[8k : 8k + 8]``."""
        for k, can_id in enumerate(ids):
            self.send(can_id, data[8 * k:8 * k + 8])

    def collect(self) -> dict[int, bytes]:
        """The reply data of every waiting motor (motor id -> 6 or 8 bytes); MotorBusError as above."""
        assert self.bus is not None
        replies: dict[int, bytes] = {}
        while self._waiting:
            try:
                message = self.bus.recv(timeout=max(self._deadline - time.monotonic(), 0.0))
            except can.CanError as exc:
                raise MotorBusError(f"receiving on CAN channel '{self.config.channel}' failed: {exc}; the "
                                    "interface is down or gone (check the adapter and its link)") from exc
            if message is None:
                if time.monotonic() >= self._deadline:
                    late = ", ".join(_motor_name(self.motors[m]) for m in sorted(self._waiting))
                    raise MotorBusError(
                        f"no reply from {late} within reply_timeout {self.config.reply_timeout} s; check its "
                        "power, wiring and can_id")
                continue
            self._take(message, replies)
        return replies

    def _take(self, message: can.Message, replies: dict[int, bytes]) -> None:
        if message.is_error_frame:
            if message.arbitration_id & CAN_ERR_BUSOFF:
                raise MotorBusError(f"the CAN controller reports bus-off on channel '{self.config.channel}' "
                                    f"(error frame class {message.arbitration_id:#x}); check wiring and "
                                    "termination")
            if message.arbitration_id not in self._warned:
                self._warned.add(message.arbitration_id)
                self.warn(f"CAN error frame class {message.arbitration_id:#x} on channel "
                          f"'{self.config.channel}' (linux/can/error.h); the bus is degraded")
            return
        if message.arbitration_id != self.config.master_id or message.is_extended_id:
            return  # another device's traffic
        data = bytes(message.data)
        motor = self.motors.get(data[0]) if data else None
        if motor is None:
            raise MotorBusError(f"corrupt frame on the master id {self.config.master_id:#x}: data "
                                f"{data.hex(' ')} names no motor of this bus (ids "
                                f"{', '.join(hex(i) for i in self.motors)})")
        if len(data) not in REPLY_LENGTHS:
            raise MotorBusError(f"corrupt reply from {_motor_name(motor)}: a reply has 6 or 8 data bytes, "
                                f"this frame has {len(data)} (data {data.hex(' ')})")
        replies[motor.can_id] = data
        self._waiting.discard(motor.can_id)
