"""A CAN bus between processes for the emulated devices: SocketCAN frames over a Unix socket, registered as
the python-can interface ``kinodyn_unixcan`` (python-can's plugin entry point group ``can.interface``,
setup.py).

``UnixCanHub`` listens on a filesystem path, the bus's ``channel``, and plays the wire and the devices behind
it: every frame a client sends reaches every other client and ``handle`` (e.g. ``MitMotorBank.handle``),
whose answers reach every client. Each datagram of the ``SOCK_SEQPACKET`` socket is one ``struct can_frame``
of linux/can.h (16 bytes: the id with the EFF/RTR/ERR flags, the length, the data; error frames included),
built and parsed on the client side by python-can's own SocketCAN functions (``build_can_frame``,
``capture_message``, with the kernel's receive timestamp): a driver on ``UnixCanBus`` does in Python what it
does on SocketCAN, while the devices run in another process (``hub.serve`` in a child, e.g. forked), so the
driver's cycle is not shared with them under one interpreter lock. The hub closing (the "cable pulled") is a
``CanOperationError`` on the client's next send or receive.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import struct
import tempfile
import uuid
from typing import TYPE_CHECKING, Any

import can
from can.interfaces.socketcan.constants import SO_TIMESTAMPNS
from can.interfaces.socketcan.socketcan import build_can_frame, capture_message

if TYPE_CHECKING:
    from collections.abc import Callable

INTERFACE = "kinodyn_unixcan"
POLL = 0.05  # seconds between the hub's checks of ``until``


def _timestamped(sock: socket.socket) -> socket.socket:
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)  # capture_message reads the receive time
    return sock


def _receive(sock: socket.socket) -> can.Message | None:
    """The next frame on ``sock``, or None if the peer closed (end of stream, or reset with frames unread)."""
    try:
        return capture_message(sock)
    except (struct.error, can.CanOperationError):  # a datagram of 0 bytes, or ECONNRESET
        return None


class UnixCanBus(can.BusABC):
    """The client side: ``channel`` is the path of a ``UnixCanHub``."""

    def __init__(self, channel: str, **kwargs: Any) -> None:  # noqa: ANN401  (python-can's BusABC options: several types)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.connect(channel)
        except OSError as exc:
            sock.close()
            raise can.CanInitializationError(f"no emulated CAN bus at {channel}: {exc.strerror}") from exc
        self.socket = _timestamped(sock)
        self.channel = channel
        self.channel_info = f"emulated CAN bus {channel}"
        super().__init__(channel, **kwargs)

    def _recv_internal(self, timeout: float | None) -> tuple[can.Message | None, bool]:
        ready, _, _ = select.select([self.socket], [], [], timeout)
        if not ready:
            return None, False
        message = _receive(self.socket)
        if message is None:
            raise can.CanOperationError(f"the emulated CAN bus {self.channel} closed")
        return message, False

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        try:
            self.socket.send(build_can_frame(msg))
        except OSError as exc:
            raise can.CanOperationError(f"sending on the emulated CAN bus {self.channel} failed: "
                                        f"{exc.strerror}") from exc

    def fileno(self) -> int:
        return self.socket.fileno()

    def shutdown(self) -> None:
        super().shutdown()
        self.socket.close()


class UnixCanHub:
    """The wire and the devices: ``channel`` is the path to give the clients (a fresh one in the temporary
    directory by default); ``serve`` forwards and answers frames until ``until()`` is true."""

    def __init__(self, handle: Callable[[can.Message], list[can.Message]], channel: str = "") -> None:
        self.handle = handle
        self.channel = channel or os.path.join(tempfile.gettempdir(), f"kinodyn-can-{uuid.uuid4().hex[:12]}")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._listener.bind(self.channel)
        self._listener.listen()
        self._clients: list[socket.socket] = []

    def serve(self, until: Callable[[], bool]) -> None:
        while not until():
            ready, _, _ = select.select([self._listener, *self._clients], [], [], POLL)
            for sock in ready:
                if sock is self._listener:
                    self._clients.append(_timestamped(self._listener.accept()[0]))
                    continue
                message = _receive(sock)
                if message is None:
                    self._clients.remove(sock)
                    sock.close()
                    continue
                self._send(build_can_frame(message), skip=sock)
                for answer in self.handle(message):
                    self._send(build_can_frame(answer))

    def _send(self, frame: bytes, skip: socket.socket | None = None) -> None:
        for client in self._clients:
            if client is not skip:
                with contextlib.suppress(OSError):  # a client gone: dropped at its end of stream
                    client.send(frame)

    def close(self) -> None:
        """Close every connection (the clients' next receive fails) and remove the path."""
        for sock in (*self._clients, self._listener):
            sock.close()
        self._clients.clear()
        if os.path.exists(self.channel):
            os.unlink(self.channel)
