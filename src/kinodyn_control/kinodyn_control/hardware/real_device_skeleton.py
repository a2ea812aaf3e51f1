"""``kinodyn_control/RealDeviceSkeleton``: the shape of a driver for a real device, with a test double.

Copy this file to write a driver. What goes where (ros2_control's lifecycle):

- ``on_init(info)``: read the ``<hardware><param>`` values (address, ids, gear ratios); no communication.
- ``on_configure``: open the connection; read the first states so ``self.states`` is valid (INACTIVE: states
  readable, commands not yet sent).
- ``on_activate``: enable the drives (power, brakes off); set every command to the measured state (or NaN) so
  the first ``write`` does not move the robot.
- ``read(time, period)``: fetch the latest measurement into ``self.states``; return ERROR on a lost
  connection.
- ``write(time, period)``: send ``self.commands`` (skip NaN: no command yet); return ERROR on a failed send or
  an unusable command (``unusable_commands``: infinite, or NaN after a value was sent, which a driver must
  never read as "keep the previous command"), or DEACTIVATE to ask the manager to deactivate the component
  (e.g. an emergency stop).
- ``on_deactivate``: hold/brake the drives; ``on_cleanup``: close the connection; ``on_error``: try to recover
  (SUCCESS -> UNCONFIGURED, reconfigure later) or give up (FAILURE -> FINALIZED).

The device is reached through a ``DeviceLink`` (send commands, receive states, by interface name). The
``LoopbackLink`` double answers each ``send`` with states equal to the commands sent, so a test checks the
read/write contract without hardware; ``fail_next`` makes the next exchange fail. A real driver replaces
``make_link`` with its bus/socket class.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

from kinodyn_control.hardware.component import System
from kinodyn_control.hardware.types import CallbackReturn, ReturnType

if TYPE_CHECKING:
    from kinodyn_control.hardware.description import HardwareInfo


class DeviceLink(Protocol):
    def open(self) -> None: ...

    def close(self) -> None: ...

    def receive(self) -> dict[str, float]: ...

    def send(self, commands: dict[str, float]) -> None: ...


class LinkError(IOError):
    """The device did not answer or refused a message."""


class LoopbackLink:
    """Test double: every state equals the last command sent to the interface of the same full name."""

    def __init__(self, initial: dict[str, float]) -> None:
        self.values = dict(initial)
        self.sent: list[dict[str, float]] = []
        self.is_open = False
        self.fail_next = False

    def open(self) -> None:
        self.is_open = True

    def close(self) -> None:
        self.is_open = False

    def _check(self) -> None:
        if not self.is_open or self.fail_next:
            self.fail_next = False
            raise LinkError("device link is closed or did not answer")

    def receive(self) -> dict[str, float]:
        self._check()
        return dict(self.values)

    def send(self, commands: dict[str, float]) -> None:
        self._check()
        self.sent.append(dict(commands))
        self.values.update(commands)


class RealDeviceSkeleton(System):
    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        self.link: DeviceLink | None = None
        return CallbackReturn.SUCCESS

    def make_link(self) -> DeviceLink:
        """The connection to the device; the skeleton uses the loopback double (initial values from the
        URDF)."""
        return LoopbackLink(
            {
                n: (0.0 if math.isnan(v) else v)
                for n, v in zip(self.states.names, self.states.values, strict=True)
            }
        )

    def on_configure(self) -> CallbackReturn:
        self.link = self.make_link()
        try:
            self.link.open()
            self._store(self.link.receive())
        except LinkError as exc:
            self.last_error = f"cannot reach the device: {exc}"
            return CallbackReturn.FAILURE
        return CallbackReturn.SUCCESS

    def on_activate(self) -> CallbackReturn:
        self.commands.values[:] = math.nan  # no command until a controller writes one
        return CallbackReturn.SUCCESS

    def on_cleanup(self) -> CallbackReturn:
        if self.link is not None:
            self.link.close()
        return CallbackReturn.SUCCESS

    def on_error(self) -> CallbackReturn:
        if self.link is not None:
            self.link.close()
        return CallbackReturn.SUCCESS

    def _store(self, measured: dict[str, float]) -> None:
        for name in self.states.names:
            if name in measured:
                self.states.set(name, measured[name])

    def read(self, time: float, period: float) -> ReturnType:
        assert self.link is not None
        try:
            self._store(self.link.receive())
        except LinkError as exc:
            self.last_error = f"read failed: {exc}"
            return ReturnType.ERROR
        return ReturnType.OK

    def write(self, time: float, period: float) -> ReturnType:
        assert self.link is not None
        problem = self.unusable_commands()
        if problem:
            self.last_error = f"unusable command(s): {problem}"
            return ReturnType.ERROR
        given = {
            n: float(v)
            for n, v in zip(self.commands.names, self.commands.values, strict=True)
            if not math.isnan(v)
        }
        try:
            if given:
                self.link.send(given)
        except LinkError as exc:
            self.last_error = f"write failed: {exc}"
            return ReturnType.ERROR
        return ReturnType.OK
