"""``kinodyn_control/CanMotorSystem``: MIT-mode motors on one CAN bus (can_motor_protocol.py), one per joint.

Parameters and interfaces: can_motor_config.py. Lifecycle (ros2_control, ANCHORS §1.1):

- ``on_configure``: open the bus; send every motor ``exit motor mode`` (rest: no torque), whose reply gives
  the first states. In Katz's firmware a motor answers every frame addressed to it and applies commands only
  in motor mode, so this frame is also how ``read`` polls a motor while the component is INACTIVE.
- ``on_activate``: ``enter motor mode`` on every motor; every command becomes NaN ("no command yet").
- ``write``: one command frame per motor. Per joint, an unset (NaN) position sends kp = 0 (no stiffness
  towards an undefined target), an unset effort, velocity, kp or kd sends 0; joint values map to the motor's
  by ``direction``/``offset``. A command that is infinite, or NaN after a value was given, is ERROR
  (``unusable_commands``).
- ``read``: the replies to the frames of the previous ``write`` (or to a poll it sends when none is due).
- ``on_deactivate`` / ``on_error`` / ``on_shutdown``: ``exit motor mode`` on every motor (on_error: as far as
  the bus still works), then ``on_error`` closes the bus and returns SUCCESS (UNCONFIGURED: configure again).

Faults, each an ERROR of ``read``/``write`` (the controller manager then runs ``on_error``, stops the
controllers using the joints in safe mode and logs one line with ``last_error``): bus-off or a failed send, a
motor that does not answer within ``reply_timeout``, a corrupt reply (can_motor_bus.py), a motor reporting a
non-zero error code, or a temperature above ``max_temperature`` (or error code 1, over-temperature).
"""

from __future__ import annotations

import math

import numpy as np

from kinodyn_control.hardware.can_motor_bus import MotorBus, MotorBusError
from kinodyn_control.hardware.can_motor_config import (
    COMMANDS,
    STATES,
    BusConfig,
    MotorConfig,
    read_config,
)
from kinodyn_control.hardware.can_motor_protocol import (
    ENTER_MOTOR_MODE,
    EXIT_MOTOR_MODE,
    OVER_TEMPERATURE,
    Reply,
    describe_fault,
    pack_command,
)
from kinodyn_control.hardware.component import System
from kinodyn_control.hardware.description import HardwareInfo
from kinodyn_control.hardware.types import CallbackReturn, InterfaceView, ReturnType, full_name


def reply_fault(reply: Reply, motor: MotorConfig, max_temperature: float) -> str:
    """'' for a healthy reply, else what the motor reports."""
    name = f"motor {motor.can_id:#x} (joint '{motor.joint}')"
    if reply.error_code:
        what = "over-temperature" if reply.error_code == OVER_TEMPERATURE else "a fault"
        return (f"{name} reports {what}: error code {reply.error_code} ({describe_fault(reply.error_code)}); "
                "it needs attention before it is enabled again")
    if reply.temperature is not None and reply.temperature > max_temperature:
        return (f"{name} is over-temperature: {reply.temperature} °C above max_temperature {max_temperature} "
                "°C; let it cool down")
    return ""


class CanMotorSystem(System):
    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        try:
            self.config: BusConfig = read_config(info)
        except ValueError as exc:
            self.last_error = str(exc)
            return CallbackReturn.ERROR
        self.bus = MotorBus(self.config, self.logger.warning)
        return CallbackReturn.SUCCESS

    def bind(self, states: InterfaceView, commands: InterfaceView) -> None:
        """Also the index of each motor's interfaces in the component's slices (-1: not listed)."""
        super().bind(states, commands)

        def indices(view: InterfaceView, names: tuple[str, ...]) -> np.ndarray:
            return np.array([[view.index.get(full_name(m.joint, n), -1) for n in names]
                             for m in self.config.motors], dtype=np.intp)

        self._state_index = indices(states, STATES)
        self._command_index = indices(commands, COMMANDS)
        self._last_frames = {m.can_id: EXIT_MOTOR_MODE for m in self.config.motors}

    # --- lifecycle ------------------------------------------------------------------------------------------
    def _to_all(self, data: bytes) -> str:
        """Send ``data`` to every motor and store the replies; '' or what failed."""
        try:
            self.bus.send_all({m.can_id: data for m in self.config.motors})
            return self._store(self.bus.collect())
        except MotorBusError as exc:
            return str(exc)

    def on_configure(self) -> CallbackReturn:
        try:
            self.bus.open()
        except MotorBusError as exc:
            self.last_error = str(exc)
            return CallbackReturn.FAILURE
        problem = self._to_all(EXIT_MOTOR_MODE) or self._temperature_reported()
        if problem:
            self.bus.close()
            self.last_error = problem
            return CallbackReturn.FAILURE
        return CallbackReturn.SUCCESS

    def _temperature_reported(self) -> str:
        index = self._state_index[:, 3]
        missing = [m.joint for i, m in zip(index, self.config.motors, strict=True)
                   if i >= 0 and math.isnan(self.states.values[i])]
        return (f"joint(s) {', '.join(missing)} list a temperature state interface but their motors' replies "
                "carry none (6-byte replies); remove the interface" if missing else "")

    def on_activate(self) -> CallbackReturn:
        problem = self._to_all(ENTER_MOTOR_MODE)
        if problem:
            self.last_error = problem
            return CallbackReturn.ERROR
        self.commands.values[:] = math.nan
        self._last_frames = {m.can_id: self._frame(k, m) for k, m in enumerate(self.config.motors)}
        return CallbackReturn.SUCCESS

    def on_deactivate(self) -> CallbackReturn:
        problem = self._to_all(EXIT_MOTOR_MODE)
        self._last_frames = dict.fromkeys(self._last_frames, EXIT_MOTOR_MODE)
        if problem:
            self.last_error = problem
            return CallbackReturn.ERROR
        return CallbackReturn.SUCCESS

    def on_cleanup(self) -> CallbackReturn:
        self.bus.close()
        return CallbackReturn.SUCCESS

    def on_error(self) -> CallbackReturn:
        """Rest every motor the bus still reaches (without waiting for replies), close the bus."""
        if self.bus.is_open:
            for motor in self.config.motors:
                try:
                    self.bus.send(motor.can_id, EXIT_MOTOR_MODE)
                except MotorBusError:
                    break
            self.bus.close()
        self._last_frames = dict.fromkeys(self._last_frames, EXIT_MOTOR_MODE)
        return CallbackReturn.SUCCESS

    def on_shutdown(self) -> CallbackReturn:
        if self.bus.is_open:
            problem = self._to_all(EXIT_MOTOR_MODE)
            self.bus.close()
            if problem:
                self.last_error = problem
                return CallbackReturn.FAILURE
        return CallbackReturn.SUCCESS

    # --- cyclic ---------------------------------------------------------------------------------------------
    def _store(self, replies: dict[int, Reply]) -> str:
        """Joint states from ``replies``; '' or the first fault a motor reports."""
        values = self.states.values
        for k, motor in enumerate(self.config.motors):
            reply = replies.get(motor.can_id)
            if reply is None:
                continue
            fault = reply_fault(reply, motor, self.config.max_temperature)
            if fault:
                return fault
            measured = (motor.direction * reply.position + motor.offset, motor.direction * reply.velocity,
                        motor.direction * reply.torque,
                        math.nan if reply.temperature is None else float(reply.temperature))
            for i, value in zip(self._state_index[k], measured, strict=True):
                if i >= 0:
                    values[i] = value
        return ""

    def read(self, time: float, period: float) -> ReturnType:
        try:
            if not self.bus.waiting:  # no write since the last read: poll (rest frame while inactive)
                self.bus.send_all(self._last_frames)
            problem = self._store(self.bus.collect())
        except MotorBusError as exc:
            problem = str(exc)
        if problem:
            self.last_error = problem
            return ReturnType.ERROR
        return ReturnType.OK

    def _frame(self, k: int, motor: MotorConfig) -> bytes:
        """Motor ``k``'s command frame from the command interfaces (NaN: not commanded yet)."""
        given = [self.commands.values[i] if i >= 0 else math.nan for i in self._command_index[k]]
        position, velocity, effort, kp, kd = given
        listed = self._command_index[k] >= 0
        if not listed[3]:
            kp = motor.kp
        if not listed[4]:
            kd = motor.kd
        if math.isnan(position):
            position, kp = motor.offset, 0.0
        velocity, effort, kp, kd = (0.0 if math.isnan(x) else x for x in (velocity, effort, kp, kd))
        d = motor.direction
        return pack_command(d * (position - motor.offset), d * velocity, kp, kd, d * effort, motor.ranges)

    def write(self, time: float, period: float) -> ReturnType:
        problem = self.unusable_commands()
        if problem:
            self.last_error = f"unusable command(s): {problem}; no frame sent"
            return ReturnType.ERROR
        self._last_frames = {m.can_id: self._frame(k, m) for k, m in enumerate(self.config.motors)}
        try:
            self.bus.send_all(self._last_frames)
        except MotorBusError as exc:
            self.last_error = str(exc)
            return ReturnType.ERROR
        return ReturnType.OK
