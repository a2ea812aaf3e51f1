"""Hardware component base classes (System, Actuator, Sensor) with the ros2_control lifecycle.

Lifecycle (ros2_control ``lifecycle_of_a_hardware_component``): ``initialize`` runs ``on_init``
(UNKNOWN -> UNCONFIGURED: parse parameters, no communication); ``configure`` (-> INACTIVE: communication up,
states readable, commands not yet available); ``activate`` (-> ACTIVE: commands available); ``deactivate``
(-> INACTIVE); ``cleanup`` (-> UNCONFIGURED); ``shutdown`` (-> FINALIZED). A callback returning FAILURE leaves
the state unchanged; ERROR (from a callback, or from ``read``/``write`` through ``handle_error``) calls
``on_error``: SUCCESS there gives UNCONFIGURED, anything else FINALIZED (the component must be reloaded).

A component declares its interfaces in the URDF; extra ones come from ``export_unlisted_*_interfaces``. The
controller manager owns the values and binds each component to its slice: inside ``read``/``write`` a
component uses ``self.states`` and ``self.commands`` (``get``/``set`` by full name, or ``values`` as an
array).

A NaN command means "no command yet" (ros2_control) only until the interface's first finite command after
activation: ``unusable_commands`` names a command that is infinite, or NaN after it was given a value, and a
component's ``read``/``write`` returns ERROR for it instead of silently keeping the previous command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import numpy as np

from kinodyn_control.hardware.types import (
    CallbackReturn,
    InterfaceDescription,
    InterfaceView,
    LifecycleState,
    ReturnType,
)
from kinodyn_control.lifecycle import Lifecycle, LifecycleError

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn_control.hardware.description import HardwareInfo

_EMPTY = np.zeros(0)


class HardwareComponent(Lifecycle):
    """Common base of System, Actuator and Sensor; subclass one of those, not this."""

    kind: ClassVar[str] = ""
    what = "component"

    def __init__(self) -> None:
        super().__init__()
        self.info: HardwareInfo | None = None
        self.states = InterfaceView((), _EMPTY, "state")
        self.commands = InterfaceView((), _EMPTY, "command")
        self._commanded = np.zeros(0, dtype=bool)  # per command interface: finite value seen since activation

    @property
    def name(self) -> str:
        return self.info.name if self.info is not None else type(self).__name__

    # --- lifecycle hooks, overridden by components --------------------------------------------------------
    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        return CallbackReturn.SUCCESS

    def parsed(self, info: HardwareInfo, parse: Callable[[HardwareInfo], None], label: str) -> bool:
        """Whether ``parse(info)`` took the parameters; a ValueError it raises becomes ``last_error``
        ("<label> '<component>': <why>")."""
        try:
            parse(info)
        except ValueError as exc:
            self.last_error = f"{label} '{info.name}': {exc}"
            return False
        return True

    # --- interfaces -----------------------------------------------------------------------------------------
    def state_interface_descriptions(self) -> list[InterfaceDescription]:
        assert self.info is not None
        listed = [d for c in self.info.components for d in c.state_descriptions()]
        return listed + self.export_unlisted_state_interfaces()

    def command_interface_descriptions(self) -> list[InterfaceDescription]:
        assert self.info is not None
        listed = [d for c in self.info.components for d in c.command_descriptions()]
        return listed + self.export_unlisted_command_interfaces()

    def export_unlisted_state_interfaces(self) -> list[InterfaceDescription]:
        """State interfaces not in the URDF (called after ``on_init``)."""
        return []

    def export_unlisted_command_interfaces(self) -> list[InterfaceDescription]:
        """Command interfaces not in the URDF (called after ``on_init``)."""
        return []

    def bind(self, states: InterfaceView, commands: InterfaceView) -> None:
        """Called by the resource manager once, after ``initialize``, with this component's slices."""
        self.states = states
        self.commands = commands
        self._commanded = np.zeros(len(commands.names), dtype=bool)

    def unusable_commands(self) -> str:
        """'' when every command is finite or still unset (NaN since activation), else the ones that are not,
        with why; call it once per ``read`` or ``write`` that uses the commands."""
        values = self.commands.values
        finite = np.isfinite(values)
        if finite.all():  # every command given and usable
            self._commanded[:] = True
            return ""
        lost = np.isnan(values) & self._commanded
        bad = lost | (~finite & ~np.isnan(values))
        self._commanded |= finite
        return ", ".join(
            f"{self.commands.names[k]} = {values[k]}" + (" after a command was given" if lost[k] else "")
            for k in np.flatnonzero(bad)
        )

    # --- cyclic ---------------------------------------------------------------------------------------------
    def read(self, time: float, period: float) -> ReturnType:
        """Update ``self.states`` from the device; ``time`` and ``period`` in seconds."""
        raise NotImplementedError(f"{type(self).__name__} must implement read(time, period)")

    def write(self, time: float, period: float) -> ReturnType:
        """Send ``self.commands`` to the device."""
        raise NotImplementedError(f"{type(self).__name__} must implement write(time, period)")

    def prepare_command_mode_switch(self, start: list[str], stop: list[str]) -> ReturnType:
        """Check that claiming ``start`` and releasing ``stop`` (full names of this component) is possible."""
        return ReturnType.OK

    def perform_command_mode_switch(self, start: list[str], stop: list[str]) -> ReturnType:
        return ReturnType.OK

    def prepare_control_period(self, period: float) -> ReturnType:
        """Called once before a wall-clock control loop starts, with its nominal period ``1/update_rate``.
        Hardware with a clock of its own ignores it (this default); a simulator advances this much simulated
        time per ``write`` whatever the measured period, as Gazebo runs controllers at their rate in simulated
        time."""
        return ReturnType.OK

    def prepare_lockstep(self, period: float) -> ReturnType:
        """Called once before a lockstep loop starts: from then on the manager calls ``write`` only when the
        commands of a cycle have arrived, with ``period`` (1/update_rate) of simulated time per cycle. Only
        hardware without a clock of its own can wait like that: simulated or mock components return OK (a
        simulator then advances exactly ``period`` per ``write``); real hardware keeps this default
        ERROR."""
        self.last_error = (f"{type(self).__name__} cannot run in lockstep: real hardware does not wait for "
                           "commands; lockstep is for simulated or mock hardware")
        return ReturnType.ERROR

    # --- transitions, driven by the resource manager --------------------------------------------------------
    def activate(self) -> LifecycleState:
        """As ``Lifecycle.activate``; every command is unset again (NaN may mean "no command yet")."""
        state = super().activate()
        self._commanded[:] = False
        return state

    def initialize(self, info: HardwareInfo) -> LifecycleState:
        if self.lifecycle_state is not LifecycleState.UNKNOWN:
            raise LifecycleError(f"component '{info.name}' is already initialised")
        if info.type != self.kind:
            raise LifecycleError(
                f"<ros2_control name='{info.name}'> has type '{info.type}' but plugin '{info.plugin}' is a "
                f'{self.kind} component; set type="{self.kind}" or use a {info.type} plugin'
            )
        self.info = info
        return self._finish_init(self.on_init(info))


class System(HardwareComponent):
    """Many joints, sensors and GPIOs; reads states and writes commands."""

    kind = "system"


class Actuator(HardwareComponent):
    """One joint; reads states and writes commands."""

    kind = "actuator"

    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        if len(info.joints) != 1 or info.sensors or info.gpios:
            self.last_error = (
                f"actuator '{info.name}' must have exactly one <joint> and no sensor or gpio "
                f'(has {len(info.joints)} joints); use type="system" for more'
            )
            return CallbackReturn.ERROR
        return CallbackReturn.SUCCESS


class Sensor(HardwareComponent):
    """State interfaces only: exports no command interfaces, and ``write`` does nothing."""

    kind = "sensor"

    def command_interface_descriptions(self) -> list[InterfaceDescription]:
        assert self.info is not None
        if any(c.command_interfaces for c in self.info.components):
            raise LifecycleError(
                f"sensor component '{self.info.name}' lists command interfaces; a sensor has state "
                f"interfaces only"
            )
        return []

    def write(self, time: float, period: float) -> ReturnType:
        return ReturnType.OK
