"""A serial CAN adapter speaking the Lawicel / slcan ASCII protocol on a pseudo-terminal, in front of emulated
devices: a driver in another process opens ``device.port`` with python-can's ``slcan`` interface, as it
would a CANable or CAN232 adapter.

Protocol (Lawicel CAN232 manual, "ASCII commands"; each command ends with CR): ``O`` open, ``C`` close,
``S0``-``S8`` bit rate, ``L`` listen only, ``V``/``N`` version and serial number: answered with CR (``V1013``,
``NKD01`` first). ``tiiildd..`` sends a standard frame (3 hex digits of id, 1 of length, 2 per byte), answered
``z`` CR; frames from the bus go out the same way. Anything else is answered with BEL (error).
``handle`` maps a frame to the frames the devices answer (e.g. ``MitMotorBank.handle``); error frames cannot
be carried by slcan and are dropped. ``inject`` queues frames of the devices' own (answering nothing), written
at the thread's next turn.
"""

from __future__ import annotations

import os
import pty
import select
import threading
import tty
from typing import TYPE_CHECKING

import can

if TYPE_CHECKING:
    from collections.abc import Callable

OK, ERROR = b"\r", b"\a"
MAX_DLC = 8  # a classic CAN frame's most data bytes
REPLIES = {b"O": OK, b"C": OK, b"L": OK, b"V": b"V1013\r", b"N": b"NKD01\r"}


def encode_frame(message: can.Message) -> bytes:
    return f"t{message.arbitration_id:03X}{message.dlc:d}{bytes(message.data).hex().upper()}\r".encode()


def decode_frame(line: bytes) -> can.Message:
    """A ``t`` command (without CR) as a standard data frame; ValueError if malformed."""
    dlc = int(line[4:5], 16)
    data = bytes.fromhex(line[5:5 + 2 * dlc].decode())
    if len(data) != dlc or dlc > MAX_DLC:
        raise ValueError(f"slcan frame {line!r} has {len(data)} data bytes for length {dlc}")
    return can.Message(arbitration_id=int(line[1:4], 16), data=data, is_extended_id=False)


class SlcanPtyDevice:
    """The adapter: ``port`` is the pty path to give the driver; ``start``/``stop`` run it on a thread."""

    def __init__(self, handle: Callable[[can.Message], list[can.Message]]) -> None:
        self.handle = handle
        self._master, slave = pty.openpty()
        tty.setraw(slave)
        self.port = os.ttyname(slave)
        self._slave = slave  # kept open so the pty survives between driver sessions
        self._stop = threading.Event()
        self._injected: list[can.Message] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="slcan-pty", daemon=True)

    def start(self) -> SlcanPtyDevice:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        os.close(self._master)
        os.close(self._slave)

    def answer(self, line: bytes) -> bytes:
        """What the adapter writes back for one command line (without its CR)."""
        if line[:1] == b"t":
            try:
                frame = decode_frame(line)
            except ValueError:
                return ERROR
            return b"z\r" + b"".join(encode_frame(m) for m in self.handle(frame) if not m.is_error_frame)
        if line[:1] == b"S" and line[1:2].isdigit():
            return OK
        return REPLIES.get(line, ERROR)

    def inject(self, messages: list[can.Message]) -> None:
        """Frames the devices send on their own (e.g. ``MitMotorBank.unsolicited``), out within 50 ms."""
        with self._lock:
            self._injected += messages

    def _run(self) -> None:
        buffer = b""
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.05)
            with self._lock:
                injected, self._injected = self._injected, []
            out = b"".join(encode_frame(m) for m in injected)
            if ready:
                buffer += os.read(self._master, 4096)
                *lines, buffer = buffer.split(b"\r")
                out += b"".join(self.answer(line) for line in lines if line)
            if out:
                os.write(self._master, out)
