"""``kinodyn_control/GenericSystem``: mock hardware that mirrors commands to states.

Behaviour of ros2_control's ``mock_components/GenericSystem`` (mock_components_userdoc):

- Hardware parameters (defaults): ``calculate_dynamics=false``, ``custom_interface_with_following_offset=""``,
  ``disable_commands=false``, ``mock_gpio_commands=false``, ``mock_sensor_commands=false``,
  ``position_state_following_offset=0.0``; the deprecated spellings ``fake_sensor_commands`` and
  ``fake_gpio_commands`` are accepted.
- ``write`` does nothing; all mirroring happens in ``read``.
- ``on_configure``: NaN joint states become 0; every ``position`` state gets ``+ offset`` (or the custom
  interface does, when one is set).
- Without ``calculate_dynamics``: ``position = command.position + offset``; every other state with a command
  of the same name is copied from it. NaN commands are ignored (not set yet); a ±inf command, or a NaN on an
  interface that had a command since activation, makes ``read`` return ERROR (``unusable_commands``). With
  ``custom_interface_with_following_offset = X``: ``X = command.position + offset`` and
  ``position`` is mirrored without offset.
- With ``calculate_dynamics``: each joint is in position (default), velocity or acceleration mode, chosen by
  the command interface claimed (``perform_command_mode_switch``; claiming two of the three on one joint is
  refused). Position mode: velocity and acceleration are finite differences over ``period``; velocity mode:
  position by an Euler step with the previous velocity, acceleration by finite difference; acceleration mode:
  position by an Euler step with the previous velocity, then velocity by an Euler step.
- ``disable_commands=true``: states stay as they are (a warning is logged once per activation).
- ``mock_sensor_commands`` / ``mock_gpio_commands``: a command interface with the same full name is exported
for
  every sensor / GPIO state interface and mirrored into it (GPIO commands listed in the URDF always mirror).
- Mimic joints (joint params ``mimic``, ``multiplier`` (1), ``offset`` (0)): ``position = offset + multiplier
*
  position of the mimicked joint``; velocity and acceleration are scaled by the multiplier.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from kinodyn_control.hardware.component import System
from kinodyn_control.hardware.types import (
    ACCELERATION,
    POSITION,
    VELOCITY,
    CallbackReturn,
    InterfaceDescription,
    InterfaceInfo,
    InterfaceView,
    ReturnType,
    full_name,
)

if TYPE_CHECKING:
    from kinodyn_control.hardware.description import HardwareInfo

BOOL_PARAMS = ("calculate_dynamics", "disable_commands", "mock_sensor_commands", "mock_gpio_commands")
DEPRECATED = {"fake_sensor_commands": "mock_sensor_commands", "fake_gpio_commands": "mock_gpio_commands"}
KNOWN_PARAMS = (
    *BOOL_PARAMS,
    *DEPRECATED,
    "position_state_following_offset",
    "custom_interface_with_following_offset",
)
CONTROL_MODES = (POSITION, VELOCITY, ACCELERATION)


def _bool(text: str, where: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"{where} must be true or false, got '{text}'")
    return value == "true"


class GenericSystem(System):
    def __init__(self) -> None:
        super().__init__()
        self.calculate_dynamics = False
        self.disable_commands = False
        self.mock_sensor_commands = False
        self.mock_gpio_commands = False
        self.offset = 0.0
        self.custom_offset_interface = ""
        self._warned_disabled = False

    # --- on_init: parameters -------------------------------------------------------------------------------
    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        if not self.parsed(info, self._parse_params, "GenericSystem"):
            return CallbackReturn.ERROR
        self.control_mode = dict.fromkeys((j.name for j in info.joints), POSITION)
        return CallbackReturn.SUCCESS

    def _parse_params(self, info: HardwareInfo) -> None:
        params = dict(info.params)
        for old, new in DEPRECATED.items():
            if old in params:
                self.logger.warning(
                    f"GenericSystem '{info.name}': parameter '{old}' is deprecated, use '{new}'"
                )
                params.setdefault(new, params.pop(old))
        unknown = sorted(set(params) - set(KNOWN_PARAMS))
        if unknown:
            raise ValueError(
                f"unknown hardware parameter(s) {', '.join(unknown)}; known: {', '.join(KNOWN_PARAMS)}"
            )
        for key in BOOL_PARAMS:
            if key in params:
                setattr(self, key, _bool(params[key], f"parameter {key}"))
        offset = params.get("position_state_following_offset", "0.0")
        try:
            self.offset = float(offset)
        except ValueError:
            raise ValueError(
                f"parameter position_state_following_offset '{offset}' is not a number"
            ) from None
        self.custom_offset_interface = params.get("custom_interface_with_following_offset", "")
        if self.custom_offset_interface:
            missing = [
                j.name
                for j in info.joints
                if self.custom_offset_interface not in {s.name for s in j.state_interfaces}
            ]
            if missing:
                raise ValueError(
                    f"custom_interface_with_following_offset '{self.custom_offset_interface}' is not a state "
                    f"interface of joint(s) {', '.join(missing)}"
                )
        names = {j.name for j in info.joints}
        self._mimics: list[tuple[str, str, float, float]] = []
        for joint in info.joints:
            if "mimic" in joint.params:
                target = joint.params["mimic"]
                if target not in names:
                    raise ValueError(
                        f"joint '{joint.name}' mimics '{target}', which is not a joint of this system"
                    )
                self._mimics.append(
                    (
                        joint.name,
                        target,
                        float(joint.params.get("multiplier", "1")),
                        float(joint.params.get("offset", "0")),
                    )
                )

    def export_unlisted_command_interfaces(self) -> list[InterfaceDescription]:
        assert self.info is not None
        mocked = []
        for enabled, components in (
            (self.mock_sensor_commands, self.info.sensors),
            (self.mock_gpio_commands, self.info.gpios),
        ):
            if not enabled:
                continue
            for component in components:
                listed = {c.name for c in component.command_interfaces}
                mocked += [
                    InterfaceDescription(component.name, InterfaceInfo(s.name))
                    for s in component.state_interfaces
                    if s.name not in listed
                ]
        return mocked

    # --- lifecycle ------------------------------------------------------------------------------------------
    def on_configure(self) -> CallbackReturn:
        assert self.info is not None
        for joint in self.info.joints:
            for state in joint.state_interfaces:
                key = full_name(joint.name, state.name)
                value = self.states.get(key)
                if math.isnan(value):
                    value = 0.0
                if state.name == (self.custom_offset_interface or POSITION):
                    value += self.offset
                self.states.set(key, value)
        return CallbackReturn.SUCCESS

    def on_activate(self) -> CallbackReturn:
        self._warned_disabled = False
        return CallbackReturn.SUCCESS

    def prepare_command_mode_switch(self, start: list[str], stop: list[str]) -> ReturnType:
        if not self.calculate_dynamics:
            return ReturnType.OK
        by_joint: dict[str, list[str]] = {}
        for name in start:
            joint, _, interface = name.rpartition("/")
            if interface in CONTROL_MODES and joint in self.control_mode:
                by_joint.setdefault(joint, []).append(interface)
        several = {j: modes for j, modes in by_joint.items() if len(modes) > 1}
        if several:
            self.last_error = "; ".join(
                f"joint '{j}' would be controlled through {', '.join(m)} at once; claim one of them"
                for j, m in several.items()
            )
            return ReturnType.ERROR
        return ReturnType.OK

    def perform_command_mode_switch(self, start: list[str], stop: list[str]) -> ReturnType:
        for name in start:
            joint, _, interface = name.rpartition("/")
            if interface in CONTROL_MODES and joint in self.control_mode:
                self.control_mode[joint] = interface
        return ReturnType.OK

    # --- cyclic ---------------------------------------------------------------------------------------------
    def prepare_lockstep(self, period: float) -> ReturnType:
        """Mock hardware has no clock of its own: it follows the ``period`` it is given; lockstep is fine."""
        return ReturnType.OK

    def write(self, time: float, period: float) -> ReturnType:
        return ReturnType.OK

    def bind(self, states: InterfaceView, commands: InterfaceView) -> None:
        """Also precomputes which command feeds which state: ``state[s] = command[c] + add``."""
        super().bind(states, commands)
        plan: list[tuple[int, int, float]] = []
        for c, key in enumerate(commands.names):
            prefix, _, interface = key.rpartition("/")
            is_joint = prefix in self.control_mode
            if is_joint and self.calculate_dynamics and interface in CONTROL_MODES:
                continue  # integrated per control mode in read()
            if is_joint and interface == POSITION and self.custom_offset_interface:
                plan.append((c, states.index[full_name(prefix, self.custom_offset_interface)], self.offset))
                add = 0.0
            else:
                add = self.offset if is_joint and interface == POSITION else 0.0
            if key in states:
                plan.append((c, states.index[key], add))
        self._mirror_command = np.array([p[0] for p in plan], dtype=np.intp)
        self._mirror_state = np.array([p[1] for p in plan], dtype=np.intp)
        self._mirror_add = np.array([p[2] for p in plan], dtype=np.float64)

    def read(self, time: float, period: float) -> ReturnType:
        assert self.info is not None
        if self.disable_commands:
            if not self._warned_disabled:
                self.logger.warning(
                    f"GenericSystem '{self.name}': Command propagation is disabled - no values will "
                    f"be returned!"
                )
                self._warned_disabled = True
            return ReturnType.OK
        commands = self.commands.values
        problem = self.unusable_commands()
        if problem:
            self.last_error = f"unusable command(s): {problem}"
            return ReturnType.ERROR
        if self.calculate_dynamics:
            for joint in self.control_mode:
                self._integrate(joint, period)
        values = commands[self._mirror_command]
        given = ~np.isnan(values)  # NaN: not commanded yet
        self.states.values[self._mirror_state[given]] = values[given] + self._mirror_add[given]
        for joint, target, multiplier, offset in self._mimics:
            self._apply_mimic(joint, target, multiplier, offset)
        return ReturnType.OK

    def _command(self, joint: str, interface: str) -> float:
        key = full_name(joint, interface)
        return self.commands.get(key) if key in self.commands else math.nan

    def _state(self, joint: str, interface: str) -> float:
        key = full_name(joint, interface)
        return self.states.get(key) if key in self.states else 0.0

    def _set_state(self, joint: str, interface: str, value: float) -> None:
        key = full_name(joint, interface)
        if key in self.states:
            self.states.set(key, value)

    def _integrate(self, joint: str, dt: float) -> None:
        mode = self.control_mode[joint]
        command = self._command(joint, mode)
        position, velocity, acceleration = (self._state(joint, i) for i in CONTROL_MODES)
        if mode == POSITION:
            if math.isnan(command):
                return
            new_velocity = (command - position) / dt
            self._set_state(joint, POSITION, command)
            self._set_state(joint, VELOCITY, new_velocity)
            self._set_state(joint, ACCELERATION, (new_velocity - velocity) / dt)
        elif mode == VELOCITY:
            self._set_state(joint, POSITION, position + velocity * dt)
            if not math.isnan(command):
                self._set_state(joint, VELOCITY, command)
                self._set_state(joint, ACCELERATION, (command - velocity) / dt)
        else:
            self._set_state(joint, POSITION, position + velocity * dt)
            if not math.isnan(command):
                acceleration = command
                self._set_state(joint, ACCELERATION, acceleration)
            self._set_state(joint, VELOCITY, velocity + acceleration * dt)

    def _apply_mimic(self, joint: str, target: str, multiplier: float, offset: float) -> None:
        self._set_state(joint, POSITION, offset + multiplier * self._state(target, POSITION))
        for interface in (VELOCITY, ACCELERATION):
            self._set_state(joint, interface, multiplier * self._state(target, interface))
