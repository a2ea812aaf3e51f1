"""``kinodyn_control/CanMotorSystem``: MIT-mode motors on one CAN bus (can_motor_protocol.py), one per joint.

Parameters and interfaces: can_motor_config.py. Lifecycle (ros2_control):

- ``on_configure``: open the bus; send every motor ``exit motor mode`` (rest: no torque), whose reply gives
  the first states. In Katz's firmware a motor answers every frame addressed to it and applies commands only
  in motor mode, so this frame is also how ``read`` polls a motor while the component is INACTIVE.
- ``on_activate``: ``enter motor mode`` on every motor; every command becomes NaN ("no command yet").
- ``write``: one command frame per motor. Per joint, an unset (NaN) position sends kp = 0 (no stiffness
  towards an undefined target), an unset effort, velocity, kp or kd sends 0; joint values map to the motor's
  by ``direction``/``offset``. A command that is infinite, or NaN after a value was given, is ERROR
  (``unusable_commands``).
- ``read``: the replies to the frames of the previous ``write`` (or to a poll it sends when none is due),
  each matched to its frame (can_motor_bus.py: the first reply after a frame is its answer, any other reply
  is dropped and reported).

Each cycle packs every motor's command and decodes every reply at once (``pack_commands``/``unpack_replies``,
arrays built once in ``bind``); ``reply_fault`` reads the reference ``Reply`` of a faulty motor only.
- ``on_deactivate`` / ``on_error`` / ``on_shutdown``: ``exit motor mode`` on every motor (on_error: as far as
  the bus still works), then ``on_error`` closes the bus and returns SUCCESS (UNCONFIGURED: configure again).

Faults, each an ERROR of ``read``/``write`` (the controller manager then runs ``on_error``, stops the
controllers using the joints in safe mode and logs one line with ``last_error``): bus-off or a failed send, a
motor that does not answer within ``reply_timeout``, a corrupt reply, unmatched replies in
``unmatched_fault_cycles`` cycles in a row (can_motor_bus.py), a motor reporting a non-zero error code, or a
temperature above ``max_temperature`` (or error code 1, over-temperature), and a reading the joint cannot
have: outside its ``ReadingBounds`` (URDF limits and margins, can_motor_config.py), or a position or velocity
at an end of what the motor encodes (``Replies.saturated``: the firmware clamps, the true value is unknown; a
torque at ±t_max is a motor at its torque limit and is checked against the URDF effort limit only). A faulty
reply's values are not stored.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from kinodyn_common.problem_log import DistinctProblemLog

from kinodyn_control.hardware.can_motor_bus import MotorBus, MotorBusError
from kinodyn_control.hardware.can_motor_config import (
    COMMANDS,
    RANGE_PARAMS,
    STATES,
    BusConfig,
    MotorConfig,
    read_config,
)
from kinodyn_control.hardware.can_motor_protocol import (
    ENTER_MOTOR_MODE,
    EXIT_MOTOR_MODE,
    OVER_TEMPERATURE,
    RangeTable,
    Reply,
    describe_fault,
    pack_commands,
    unpack_replies,
)
from kinodyn_control.hardware.component import System
from kinodyn_control.hardware.types import CallbackReturn, InterfaceView, ReturnType, full_name

if TYPE_CHECKING:
    from kinodyn_control.hardware.description import HardwareInfo

SATURATION_CHECKED = np.array([True, True, False])  # position, velocity, torque


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
        self.bus = MotorBus(self.config, DistinctProblemLog(self.logger).warn)
        return CallbackReturn.SUCCESS

    def bind(self, states: InterfaceView, commands: InterfaceView) -> None:
        """Also the index of each motor's interfaces in the component's slices (-1: not listed)."""
        super().bind(states, commands)

        def indices(view: InterfaceView, names: tuple[str, ...]) -> np.ndarray:
            return np.array([[view.index.get(full_name(m.joint, n), -1) for n in names]
                             for m in self.config.motors], dtype=np.intp)

        motors = self.config.motors
        self._state_index = indices(states, STATES)
        self._command_index = indices(commands, COMMANDS)
        self._ids = tuple(m.can_id for m in motors)
        self._row = {m.can_id: k for k, m in enumerate(motors)}
        self._table = RangeTable.of([m.ranges for m in motors])
        self._direction = np.array([m.direction for m in motors])
        self._offset = np.array([m.offset for m in motors])
        self._listed = self._command_index >= 0
        self._listed_index = self._command_index[self._listed]
        # commands in COMMANDS order; an interface not listed keeps its constant: NaN, or the kp/kd param
        self._given = np.full((len(motors), len(COMMANDS)), math.nan)
        self._given[:, 3:] = np.where(self._listed[:, 3:], math.nan, [[m.kp, m.kd] for m in motors])
        self._state_listed = self._state_index >= 0
        self._reading_lo = np.array([m.bounds.lo for m in motors])
        self._reading_hi = np.array([m.bounds.hi for m in motors])
        self._encoded = np.array([[m.ranges.p_max, m.ranges.v_max] for m in motors])  # checked for saturation
        self._rest = EXIT_MOTOR_MODE * len(motors)
        self._last_frames = self._rest

    # --- lifecycle ------------------------------------------------------------------------------------------
    def _to_all(self, data: bytes) -> str:
        """Send ``data`` to every motor and store the replies; '' or what failed."""
        try:
            self.bus.send_all(self._ids, data * len(self._ids))
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
        self._last_frames = self._frames()
        return CallbackReturn.SUCCESS

    def on_deactivate(self) -> CallbackReturn:
        problem = self._to_all(EXIT_MOTOR_MODE)
        self._last_frames = self._rest
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
        self._last_frames = self._rest
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
    def _store(self, replies: dict[int, bytes]) -> str:
        """Joint states from ``replies`` (motor id -> reply data); '' or the first fault a motor reports."""
        data = bytearray(8 * len(self._ids))
        lengths = np.zeros(len(self._ids), dtype=np.intp)
        for can_id, reply in replies.items():
            k = self._row[can_id]
            data[8 * k:8 * k + len(reply)] = reply
            lengths[k] = len(reply)
        r = unpack_replies(bytes(data), lengths, self._table)
        hot = r.temperature > self.config.max_temperature  # NaN (6-byte reply): False
        faulty = np.flatnonzero((lengths > 0) & ((r.error_code != 0) | hot))
        if faulty.size:
            k = int(faulty[0])
            first = Reply(int(r.motor_id[k]), float(r.position[k]), float(r.velocity[k]), float(r.torque[k]),
                          int(r.temperature[k]), int(r.error_code[k]))
            return reply_fault(first, self.config.motors[k], self.config.max_temperature)
        d = self._direction
        measured = np.column_stack((d * r.position + self._offset, d * r.velocity, d * r.torque,
                                    r.temperature))
        joint = measured[:, :3]
        # a torque at an end of its range is a motor at its torque limit (t_max is the model's peak torque)
        saturated = r.saturated & SATURATION_CHECKED
        outside = saturated | (joint < self._reading_lo) | (joint > self._reading_hi)
        outside &= (lengths > 0)[:, None]
        if outside.any():
            k, q = (int(i) for i in np.argwhere(outside)[0])
            return self._implausible(k, q, float(joint[k, q]), bool(saturated[k, q]))
        store = self._state_listed & (lengths > 0)[:, None]
        self.states.values[self._state_index[store]] = measured[store]
        return ""

    def _implausible(self, k: int, quantity: int, value: float, saturated: bool) -> str:
        """The fault line of motor ``k``'s reading ``value`` of ``STATES[quantity]``."""
        motor = self.config.motors[k]
        name, unit = STATES[quantity], motor.bounds.units[quantity]
        head = f"joint '{motor.joint}' (motor {motor.can_id:#x}) reads {name} {value:.6g} {unit}"
        if saturated:
            param = RANGE_PARAMS[quantity]  # p_max, v_max
            end = self._encoded[k, quantity]
            return (f"{head}, an end of the range its motor encodes (±{end:g}, {param}; the firmware sends a "
                    f"value beyond as the end), so the true value is unknown; check the {param} param "
                    "against the motor's firmware, and the joint's offset and the motor's zero")
        lo, hi = self._reading_lo[k, quantity], self._reading_hi[k, quantity]
        return (f"{head}, outside [{lo:.6g}, {hi:.6g}] ({motor.bounds.why[quantity]}); no such reading is "
                "plausible: check the motor's zero, the joint's direction, offset and can_id, and the URDF "
                "limits")

    def read(self, time: float, period: float) -> ReturnType:
        try:
            if not self.bus.waiting:  # no write since the last read: poll (rest frame while inactive)
                self.bus.send_all(self._ids, self._last_frames)
            problem = self._store(self.bus.collect())
        except MotorBusError as exc:
            problem = str(exc)
        if problem:
            self.last_error = problem
            return ReturnType.ERROR
        return ReturnType.OK

    def _frames(self) -> bytes:
        """Every motor's command frame from the command interfaces, 8 bytes each in ``_ids`` order. Per
        joint: an unset (NaN) position sends the offset with kp = 0, an unset velocity, effort, kp or kd sends
        0; an interface not listed sends its constant (kp/kd: the joint's param); joint -> motor by
        direction/offset."""
        given = self._given
        given[self._listed] = self.commands.values[self._listed_index]
        unset = np.isnan(given[:, 0])
        value = np.where(np.isnan(given), 0.0, given)  # position, velocity, effort, kp, kd
        d = self._direction
        motor = np.column_stack((np.where(unset, 0.0, d * (value[:, 0] - self._offset)), d * value[:, 1],
                                 np.where(unset, 0.0, value[:, 3]), value[:, 4], d * value[:, 2]))
        return pack_commands(motor, self._table)

    def write(self, time: float, period: float) -> ReturnType:
        problem = self.unusable_commands()
        if problem:
            self.last_error = f"unusable command(s): {problem}; no frame sent"
            return ReturnType.ERROR
        self._last_frames = self._frames()
        try:
            self.bus.send_all(self._ids, self._last_frames)
        except MotorBusError as exc:
            self.last_error = str(exc)
            return ReturnType.ERROR
        return ReturnType.OK
