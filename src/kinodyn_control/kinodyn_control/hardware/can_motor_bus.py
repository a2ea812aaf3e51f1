"""One CAN bus of MIT-mode motors through python-can: send frames, match the replies to them within a timeout.

Every frame sent to a motor (command or special frame) is answered by one reply on the master id
(can_motor_protocol.py); a reply carries no sequence number, so it is matched to a frame by motor id and time:

- ``send`` marks the motor as waiting; ``collect`` returns the first reply of each waiting motor once all have
  answered (one pass over the bus, no decoding: the component decodes them together).
- A reply from a motor that is not waiting (its frame was already answered, or no frame of this driver asked
  for one), or naming a motor id that is not on this bus, is unmatched: it is dropped, never taken as the
  answer to a later frame. ``send_all`` first takes every frame already received (without waiting), so what
  arrived between two cycles is judged before the new frames go out. An unmatched reply is the second answer
  to one frame (CAN's duplicate reception, a motor answering twice) or the answer to a frame another node
  sent: one throttled warning per motor id; the same id sending unmatched replies in
  ``unmatched_fault_cycles`` cycles in a row (a second device answering for it, another master commanding it,
  a device this bus does not know answering on the master id) is a fault.

``MotorBusError`` (the component turns it into ERROR) is raised for: a send or receive python-can refuses (the
interface is down or bus-off), a SocketCAN error frame reporting bus-off (``CAN_ERR_BUSOFF`` = 0x40 in the
error class, linux/can/error.h), a motor that has not answered ``reply_timeout`` seconds after the last frame
sent, a frame on the master id that is no reply (no data, or a motor of this bus's reply with a length other
than 6 or 8), unmatched replies as above. Other error frames (error-warning, error-passive, ...) are reported
through ``warn`` (throttled per class); frames on other ids (other devices on the bus) are ignored.

Traffic cannot hold the driver: ``collect`` gives up on missing replies ``reply_timeout`` after the deadline
even while frames keep arriving (until then it takes what is queued, so a late cycle finds its replies), and
taking what arrived between cycles stops after ``reply_timeout`` (the rest is read by ``collect``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import can

from kinodyn_control.hardware.can_motor_protocol import REPLY_LENGTHS

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable

    from kinodyn_control.hardware.can_motor_config import BusConfig, MotorConfig

CAN_ERR_BUSOFF = 0x00000040


class MotorBusError(IOError):
    """The bus or a motor failed; the message says what happened and what to check."""


def _motor_name(motor: MotorConfig) -> str:
    return f"motor {motor.can_id:#x} (joint '{motor.joint}')"


class MotorBus:
    def __init__(self, config: BusConfig, warn: Callable[[Hashable, str], None]) -> None:
        """``warn(key, line)``: a throttled warning (one per key at a time, e.g. DistinctProblemLog.warn)."""
        self.config = config
        self.warn = warn
        self.motors = {m.can_id: m for m in config.motors}
        self.bus: can.BusABC | None = None
        self._waiting: set[int] = set()  # motor ids
        self._deadline = 0.0  # time.monotonic() by which every waiting motor must have answered
        self.unmatched: dict[int, int] = {}  # motor id -> unmatched replies since open
        self._unmatched_now: dict[int, int] = {}  # ... since the last send_all
        self._streak: dict[int, int] = {}  # motor id -> cycles in a row with unmatched replies

    def open(self) -> None:
        options: dict[str, Any] = {} if self.config.bitrate is None else {"bitrate": self.config.bitrate}
        try:
            self.bus = can.Bus(interface=self.config.interface, channel=self.config.channel, **options)
        except (can.CanError, OSError, ValueError, ImportError) as exc:
            raise MotorBusError(f"cannot open CAN interface '{self.config.interface}' channel "
                           f"'{self.config.channel}': {exc}; check the interface is up (ip link set can0 up "
                           "type can bitrate 1000000)") from exc
        self._waiting.clear()
        self._unmatched_now.clear()
        self._streak.clear()

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
        """Send motor ``ids[k]`` its 8 bytes ``data[8k : 8k + 8]``, after judging the unmatched replies of the
        cycle that ends here (those received so far included)."""
        self._drain()
        self._judge_unmatched()
        for k, can_id in enumerate(ids):
            self.send(can_id, data[8 * k:8 * k + 8])

    def collect(self) -> dict[int, bytes]:
        """The first reply of every waiting motor (motor id -> its 6 or 8 data bytes); MotorBusError as
        above."""
        replies: dict[int, bytes] = {}
        while self._waiting:
            now = time.monotonic()
            message = self._receive(max(self._deadline - now, 0.0))
            if message is not None:
                self._match(message, replies)
            elif now >= self._deadline:
                raise self._late()
            if self._waiting and now >= self._deadline + self.config.reply_timeout:
                raise self._late()  # frames kept arriving, none of them the missing replies
        return replies

    def _match(self, message: can.Message, replies: dict[int, bytes]) -> None:
        """Take ``message`` into ``replies`` if it answers a waiting motor; count it if it is unmatched."""
        reply = self._reply(message)
        if reply is None:
            return
        can_id, data = reply
        if can_id in self._waiting:
            replies[can_id] = data
            self._waiting.discard(can_id)
        else:
            self._unmatch(can_id)

    def _late(self) -> MotorBusError:
        late = ", ".join(_motor_name(self.motors[m]) for m in sorted(self._waiting))
        return MotorBusError(f"no reply from {late} within reply_timeout {self.config.reply_timeout} s; "
                             "check its power, wiring and can_id")

    def _drain(self) -> None:
        """Every frame received so far, without waiting; a reply among them answers no frame of this driver
        (``send_all`` runs once the previous frames were collected)."""
        stop = time.monotonic() + self.config.reply_timeout
        while time.monotonic() < stop and (message := self._receive(0.0)) is not None:
            reply = self._reply(message)
            if reply is not None:
                self._unmatch(reply[0])

    def _unmatch(self, can_id: int) -> None:
        self.unmatched[can_id] = self.unmatched.get(can_id, 0) + 1
        self._unmatched_now[can_id] = self._unmatched_now.get(can_id, 0) + 1

    def _judge_unmatched(self) -> None:
        """A warning per motor that sent unmatched replies in the cycle now ending; a fault when it did in
        ``unmatched_fault_cycles`` cycles in a row."""
        limit = self.config.unmatched_fault_cycles
        for can_id in sorted(set(self._streak) | set(self._unmatched_now)):
            count = self._unmatched_now.get(can_id, 0)
            if not count:
                del self._streak[can_id]
                continue
            streak = self._streak[can_id] = self._streak.get(can_id, 0) + 1
            motor = self.motors.get(can_id)
            if motor is None:
                name = (f"a device answering as motor {can_id:#x}, not on this bus (ids "
                        f"{', '.join(hex(i) for i in self.motors)})")
                cause = (f"a device this bus does not know answers on master_id {self.config.master_id:#x}; "
                         "check the can_id params against the motors' ids")
                why = "a device not configured here, or a motor whose id differs from its can_id param"
            else:
                name = _motor_name(motor)
                cause = (f"a second device answers for CAN id {can_id:#x}, or another node commands it, so "
                         "its replies cannot be matched to these commands; check the bus for a duplicate id "
                         "or a second master")
                why = "a second answer to one frame, or the answer to a frame another node sent"
            if streak >= limit:
                raise MotorBusError(f"{name} sent replies no frame of this driver was waiting for in "
                                    f"{streak} cycles in a row (unmatched_fault_cycles {limit}): {cause}")
            self.warn(("unmatched reply", can_id),
                      f"{name}: dropped {count} reply(ies) no frame of this driver was waiting for ({why}); "
                      "the readings stay the answers to this driver's frames "
                      f"({self.unmatched[can_id]} since configure; unmatched_fault_cycles {limit} cycles "
                      "in a row are a fault)")
        self._unmatched_now.clear()

    def _receive(self, timeout: float) -> can.Message | None:
        assert self.bus is not None
        try:
            return self.bus.recv(timeout=timeout)
        except can.CanError as exc:
            raise MotorBusError(f"receiving on CAN channel '{self.config.channel}' failed: {exc}; the "
                                "interface is down or gone (check the adapter and its link)") from exc

    def _reply(self, message: can.Message) -> tuple[int, bytes] | None:
        """``(motor id, data)`` of a reply (the id in its first byte, possibly of no motor of this bus); None
        for other traffic; MotorBusError for bus-off or a corrupt frame on the master id."""
        if message.is_error_frame:
            if message.arbitration_id & CAN_ERR_BUSOFF:
                raise MotorBusError(f"the CAN controller reports bus-off on channel '{self.config.channel}' "
                                    f"(error frame class {message.arbitration_id:#x}); check wiring and "
                                    "termination")
            self.warn(("error frame", message.arbitration_id),
                      f"CAN error frame class {message.arbitration_id:#x} on channel "
                      f"'{self.config.channel}' (linux/can/error.h); the bus is degraded")
            return None
        if message.arbitration_id != self.config.master_id or message.is_extended_id:
            return None  # another device's traffic
        data = bytes(message.data)
        if not data:
            raise MotorBusError(f"corrupt frame on the master id {self.config.master_id:#x}: no data bytes "
                                "(a reply has 6 or 8, the first the motor's id)")
        motor = self.motors.get(data[0])
        if motor is not None and len(data) not in REPLY_LENGTHS:
            raise MotorBusError(f"corrupt reply from {_motor_name(motor)}: a reply has 6 or 8 data bytes, "
                                f"this frame has {len(data)} (data {data.hex(' ')})")
        return data[0], data
