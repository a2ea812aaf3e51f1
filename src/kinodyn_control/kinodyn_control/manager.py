"""Resource manager and controller manager, without ROS (the node in control_node.py wraps them).

``ResourceManager`` loads one component per ``<ros2_control>`` block, owns every state and command value and
drives the components' lifecycle and ``read``/``write``: a state interface is available
while its component is INACTIVE or ACTIVE, a command interface only while it is ACTIVE. ``read`` returning
ERROR (or DEACTIVATE, treated as ERROR) calls the component's ``on_error``; ``write`` returning DEACTIVATE
deactivates it.

``ControllerManager`` loads, configures, switches and updates controllers. One control cycle is
``read -> update active controllers -> write``. Command interfaces are claimed exclusively, state interfaces
are shared; a switch deactivates first, then activates, between two cycles (it holds the cycle
lock). Every value a controller writes is checked before it reaches the command table (finite and within the
interface's ``min``/``max``: ``LoanedInterfaces.set``). A controller that writes an unsafe value, whose
``update`` returns ERROR or DEACTIVATE, or raises, is deactivated with one error line and its command
interfaces go to their safe mode (``safe_command``); so is every controller using an interface of a component
that failed, after which ``on_hardware_failure`` gets one message saying what failed and what was stopped
(the default logs it as an error; control_node logs it and exits non-zero).
``enter_lockstep`` switches to lockstep cycles (lockstep.py), in which a cycle waits for the external commands
answering its state.

Chained controllers (chain.py): a ``ChainableController`` exports state interfaces ``<controller>/<name>``
that others read. Active controllers update in chain order (exporters first); a switch deactivates readers
before their exporters and activates exporters first; a controller is not activated while a state interface
it reads in the same cycle is unavailable (its exporter inactive), and an exporter is not deactivated while
an active controller that stays active reads it. A controller that the manager stops (unsafe command, ERROR,
a raise, failed hardware) takes its readers with it, all in safe mode. Each controller's ``update_rate``
(``<name>.update_rate``, Hz, as ros2_control since Iron) runs it every (loop rate / update_rate)-th cycle;
0 runs it every cycle, a rate that does not divide the loop rate is refused at load.
"""

from __future__ import annotations

import math
import sys
import threading
import time as _time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from kinodyn_common.stamps import NS

from kinodyn_control.chain import ChainedStates, chain_order, exporter_of
from kinodyn_control.controllers.base import ALL, INDIVIDUAL, NONE, Controller, ControllerContext, Logger
from kinodyn_control.controllers.chainable import ChainableController
from kinodyn_control.hardware.types import (
    ACCELERATION,
    EFFORT,
    POSITION,
    VELOCITY,
    InterfaceDescription,
    InterfaceInfo,
    InterfaceTable,
    LifecycleState,
    LoanedInterfaces,
    ReturnType,
    UnsafeCommandError,
)
from kinodyn_control.lifecycle import LifecycleError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kinodyn_control.hardware.component import HardwareComponent
    from kinodyn_control.hardware.description import RobotDescription
    from kinodyn_control.lockstep import LockstepGate
    from kinodyn_control.registry import PluginRegistry

BEST_EFFORT = 1
STRICT = 2
_PATH_UP = (LifecycleState.UNCONFIGURED, LifecycleState.INACTIVE, LifecycleState.ACTIVE)
_READABLE = _PATH_UP[1:]  # a component whose state interfaces are available
ZERO_IN_SAFE_MODE = (VELOCITY, ACCELERATION, EFFORT)
SAFE_MODE = "safe mode: effort, velocity and acceleration 0, position held"


def safe_command(name: str, command: float, states: InterfaceTable) -> float:
    """The safe value of command interface ``name`` (``<joint>/<interface>``), last commanded ``command``.

    As ros2_control's controllers do on deactivation (joint_trajectory_controller): effort, velocity and
    acceleration commands become 0 (the joint goes limp and stops being driven), a position command holds
    the measured position (state ``<joint>/position``; the last command when there is none or it is not
    finite); any other interface keeps its last command (which passed the checks when it was written).
    """
    interface = name.rpartition("/")[2]
    if interface in ZERO_IN_SAFE_MODE:
        return 0.0
    if interface == POSITION and name in states.index:
        measured = float(states.values[states.index[name]])
        return measured if math.isfinite(measured) else command
    return command


class HardwareError(RuntimeError):
    """A component that cannot be loaded or brought to the requested state."""


class ControllerError(RuntimeError):
    """A controller request (load, configure, switch, unload) that was refused; the message says why."""


class ResourceManager:
    def __init__(self, description: RobotDescription, registry: PluginRegistry[HardwareComponent],
                 logger: Logger) -> None:
        self.description = description
        self.logger = logger
        self.components: dict[str, HardwareComponent] = {}
        self.errors: dict[str, str] = {}  # component -> why it went through on_error (the latest time)
        states: list[tuple[str, list[InterfaceDescription]]] = []
        commands: list[tuple[str, list[InterfaceDescription]]] = []
        for info in description.hardware:
            if info.rw_rate:
                raise HardwareError(
                    f"<ros2_control name='{info.name}'>: rw_rate is not supported; remove it (the "
                    f"component is "
                    "read and written every control cycle)"
                )
            component = registry.create(info.plugin)
            component.logger = logger
            if component.initialize(info) is not LifecycleState.UNCONFIGURED:
                raise HardwareError(
                    f"component '{info.name}' ({info.plugin}) failed on_init: {component.last_error}"
                )
            self.components[info.name] = component
            states.append((info.name, component.state_interface_descriptions()))
            commands.append((info.name, component.command_interface_descriptions()))
        self.states = InterfaceTable([d for _, ds in states for d in ds], "state")
        self.commands = InterfaceTable([d for _, ds in commands for d in ds], "command")
        self.state_owner: dict[str, str] = {}
        self.command_owner: dict[str, str] = {}
        state_start = command_start = 0
        for (name, state_ds), (_, command_ds) in zip(states, commands, strict=True):
            state_stop, command_stop = state_start + len(state_ds), command_start + len(command_ds)
            self.components[name].bind(
                self.states.view(state_start, state_stop), self.commands.view(command_start, command_stop)
            )
            self.state_owner.update(dict.fromkeys(self.states.names[state_start:state_stop], name))
            self.command_owner.update(dict.fromkeys(self.commands.names[command_start:command_stop], name))
            state_start, command_start = state_stop, command_stop

    # --- lifecycle ------------------------------------------------------------------------------------------
    def set_component_state(self, name: str, target: LifecycleState) -> None:
        """Walk component ``name`` through configure/activate or deactivate/cleanup until it is in
        ``target``."""
        if name not in self.components:
            raise HardwareError(f"no hardware component '{name}'; components: {', '.join(self.components)}")
        if target not in _PATH_UP:
            raise HardwareError(f"target state must be unconfigured, inactive or active, not {target.value}")
        component = self.components[name]
        while component.lifecycle_state is not target:
            current = component.lifecycle_state
            if current not in _PATH_UP:
                raise HardwareError(
                    f"component '{name}' is {current.value} and cannot be brought to {target.value}"
                )
            up = _PATH_UP.index(target) > _PATH_UP.index(current)
            step = {
                LifecycleState.UNCONFIGURED: "configure",
                LifecycleState.INACTIVE: "activate" if up else "cleanup",
                LifecycleState.ACTIVE: "deactivate",
            }[current]
            if getattr(component, step)() is current:
                raise HardwareError(f"component '{name}' failed to {step}: {component.last_error}")

    def state_available(self, name: str) -> bool:
        owner = self.state_owner.get(name)
        return owner is not None and self.components[owner].lifecycle_state in _READABLE

    def command_available(self, name: str) -> bool:
        owner = self.command_owner.get(name)
        return owner is not None and self.components[owner].lifecycle_state is LifecycleState.ACTIVE

    # --- cyclic ---------------------------------------------------------------------------------------------
    def read(self, time: float, period: float) -> list[str]:
        """Read every INACTIVE or ACTIVE component; returns the names of those that failed."""
        failed = []
        for component in self.components.values():
            if component.lifecycle_state not in _READABLE:
                continue
            if self._call(component, "read", time, period) is not ReturnType.OK:
                self._fail(component, "read")
                failed.append(component.name)
        return failed

    def write(self, time: float, period: float) -> list[str]:
        """Write every ACTIVE component; returns the names of those that failed or deactivated themselves."""
        failed = []
        for component in self.components.values():
            if component.lifecycle_state is not LifecycleState.ACTIVE:
                continue
            result = self._call(component, "write", time, period)
            if result is ReturnType.DEACTIVATE:
                component.deactivate()
                failed.append(component.name)
            elif result is not ReturnType.OK:
                self._fail(component, "write")
                failed.append(component.name)
        return failed

    @staticmethod
    def _call(component: HardwareComponent, what: str, time: float, period: float) -> ReturnType:
        """``component.read`` or ``write``; an exception is an ERROR (``last_error`` says what was raised)."""
        try:
            result: ReturnType = getattr(component, what)(time, period)
        except Exception as exc:  # noqa: BLE001  (a component's failure is its ERROR state, not the loop's end)
            component.last_error = f"{what}() raised {type(exc).__name__}: {exc}"
            return ReturnType.ERROR
        return result

    def _fail(self, component: HardwareComponent, what: str) -> None:
        """``on_error``; ``errors[name]`` says what failed (the controller manager reports it)."""
        state = component.handle_error()
        self.errors[component.name] = (
            f"component '{component.name}' returned an error from {what}(): "
            f"{component.last_error or 'no detail'}; it is now {state.value} and its interfaces are "
            "unavailable"
        )

    def components_of(self, names: Sequence[str], owners: dict[str, str]) -> dict[str, list[str]]:
        grouped: dict[str, list[str]] = {}
        for name in names:
            grouped.setdefault(owners[name], []).append(name)
        return grouped


@dataclass
class ControllerEntry:
    name: str
    type: str
    controller: Controller
    command_names: list[str] = field(default_factory=list)
    state_names: list[str] = field(default_factory=list)
    divisor: int = 1  # updated every divisor-th cycle (loop rate / update_rate)
    exported: InterfaceTable | None = None  # its exported state interfaces (a ChainableController)
    chained: list[str] = field(default_factory=list)  # state interfaces of exporters, read in the same cycle
    previous_cycle: list[str] = field(default_factory=list)  # ... read from the previous cycle
    last_time: float | None = None  # time of its latest update
    dependents_stopped: list[str] = field(default_factory=list)  # readers stopped with it (the last stop)

    @property
    def state(self) -> LifecycleState:
        return self.controller.lifecycle_state

    def reads(self, exporter: str) -> list[str]:
        """The state interfaces of ``exporter`` this controller reads in the same cycle."""
        return [n for n in self.chained if exporter_of(n) == exporter]


class ControllerManager:
    def __init__(
        self,
        resources: ResourceManager,
        registry: PluginRegistry[Controller],
        make_context: Callable[[str], ControllerContext],
        logger: Logger,
    ) -> None:
        self.resources = resources
        self.registry = registry
        self.make_context = make_context
        self.logger = logger
        self.controllers: dict[str, ControllerEntry] = {}
        self.claimed: dict[str, str] = {}  # command interface -> controller
        self._active: list[ControllerEntry] = []  # replaced, never changed in place (_order_active)
        self._internal: list[ControllerEntry] = []  # ... of them without external commands, in that order
        self._external: list[ControllerEntry] = []  # ... with external commands
        self._broadcasters: list[ControllerEntry] = []  # ... in no chain, claiming nothing (republished)
        self.cycle_lock = threading.Lock()
        self.gate: LockstepGate | None = None
        self._lockstep_stamp: int | None = None  # stamp [ns] of the state the lockstep cycle waits for
        self.loop_rate: int | None = None  # Hz, known once a loop is entered (per-controller update_rate)
        self.cycles = 0  # cycles run (a controller with divisor d updates when cycles % d == 0)
        self._next_yield = 0.0  # monotonic wall time [s] from which a lockstep cycle yields the GIL again
        # called (in the control thread) with one message after components failed and their users were stopped
        self.on_hardware_failure: Callable[[str], object] = logger.error

    def enter_wall_clock_loop(self, period: float) -> None:
        """Before the first cycle of a wall-clock loop: every component learns the nominal period."""
        self.loop_rate = round(1.0 / period)
        for name, component in self.resources.components.items():
            if component.prepare_control_period(period) is not ReturnType.OK:
                raise HardwareError(f"component '{name}': {component.last_error}")

    def enter_lockstep(self, gate: LockstepGate, period: float) -> None:
        """Before the first cycle: every component must accept lockstep with ``period`` per cycle; from now on
        controllers with unstamped external commands cannot be activated."""
        self.loop_rate = round(1.0 / period)
        for name, component in self.resources.components.items():
            if component.prepare_lockstep(period) is not ReturnType.OK:
                raise HardwareError(f"component '{name}': {component.last_error}")
        self.gate = gate

    # --- administration -------------------------------------------------------------------------------------
    def load(self, name: str, type_name: str, params: dict[str, Any]) -> ControllerEntry:
        """Create and initialise controller ``name``; ``params`` are its parameters, ``update_rate`` the
        manager's (module doc)."""
        if name in self.controllers:
            raise ControllerError(f"a controller named '{name}' is already loaded")
        params = dict(params)
        divisor = self._divisor(name, params.pop("update_rate", 0))
        try:
            controller = self.registry.create(type_name)
            state = controller.init(name, params, self.make_context(name))
        except (LookupError, ValueError) as exc:
            raise ControllerError(f"cannot load controller '{name}': {exc}") from None
        if state is not LifecycleState.UNCONFIGURED:
            raise ControllerError(f"controller '{name}' failed on_init: {controller.last_error}")
        controller.command_arrived = self._command_arrived
        controller.stamp_problem = self._stamp_problem
        entry = ControllerEntry(name, type_name, controller, divisor=divisor)
        self.controllers[name] = entry
        return entry

    def _divisor(self, name: str, rate: object) -> int:
        """Cycles per update of a controller with ``update_rate`` ``rate`` (0: every cycle)."""
        if not isinstance(rate, int) or isinstance(rate, bool) or rate < 0:
            raise ControllerError(f"controller '{name}': update_rate must be an integer >= 0 [Hz] (0: the "
                                  f"loop rate), got {rate!r}")
        if rate == 0:
            return 1
        loop = self.loop_rate
        if loop is None:
            raise ControllerError(f"controller '{name}': update_rate {rate} Hz needs the loop rate, which is "
                                  "not known before the control loop is set up")
        if rate > loop or loop % rate:
            divisors = ", ".join(str(loop // k) for k in range(1, loop + 1) if loop % k == 0)
            raise ControllerError(
                f"controller '{name}': update_rate {rate} Hz does not divide the loop rate {loop} Hz (a "
                f"controller runs every (loop rate / update_rate)-th cycle); use 0 (every cycle) or one of "
                f"{divisors}")
        return loop // rate

    def _command_arrived(self) -> None:
        if self.gate is not None:
            self.gate.notify()

    def _stamp_problem(self, stamp_ns: int) -> tuple[str, str]:
        """``(cause, why)`` a command stamped ``stamp_ns`` may not be used now (``('', '')`` when it may): in
        lockstep only the stamp of the state the cycle in progress published and waits for; outside lockstep
        the stamp is not used."""
        if self.gate is None:
            return "", ""
        expected = self._lockstep_stamp
        if expected is None:
            return "early", (f"header.stamp {stamp_ns / NS:.9f} s arrived before any state was "
                             "published (lockstep: a command answers a published state)")
        if stamp_ns == expected:
            return "", ""
        cause, side = ("ahead", "ahead of") if stamp_ns > expected else ("behind", "behind")
        return cause, (f"header.stamp {stamp_ns / NS:.9f} s is {side} the state waiting for its "
                       f"command, t = {expected / NS:.9f} s (lockstep takes only a command stamped "
                       "with the joint states it answers); the cycle keeps waiting")

    def _entry(self, name: str) -> ControllerEntry:
        if name not in self.controllers:
            loaded = ", ".join(self.controllers) or "none"
            raise ControllerError(f"no controller '{name}' is loaded (loaded: {loaded})")
        return self.controllers[name]

    def configure(self, name: str) -> None:
        entry = self._entry(name)
        # an inactive controller is cleaned up and configured again, as in ros2_control
        if (
            entry.state is LifecycleState.INACTIVE
            and entry.controller.cleanup() is not LifecycleState.UNCONFIGURED
        ):
            raise ControllerError(f"controller '{name}' failed to clean up: {entry.controller.last_error}")
        if entry.state is not LifecycleState.UNCONFIGURED:
            raise ControllerError(
                f"controller '{name}' is {entry.state.value}; only an inactive or unconfigured "
                "controller can be configured"
            )
        try:
            state = entry.controller.configure()
        except ValueError as exc:
            raise ControllerError(f"controller '{name}' failed to configure: {exc}") from None
        if state is not LifecycleState.INACTIVE:
            raise ControllerError(f"controller '{name}' failed to configure: {entry.controller.last_error}")
        entry.command_names = self._resolve(entry, "command")
        entry.state_names = self._resolve(entry, "state")
        controller = entry.controller
        if isinstance(controller, ChainableController):
            local = controller.exported_state_interfaces()
            entry.exported = InterfaceTable(
                [InterfaceDescription(name, InterfaceInfo(n)) for n in local], "exported state")
            controller.exported = entry.exported.values

    def unload(self, name: str) -> None:
        entry = self._entry(name)
        if entry.state is LifecycleState.ACTIVE:
            raise ControllerError(f"controller '{name}' is active; deactivate it before unloading")
        if entry.state is LifecycleState.INACTIVE:
            entry.controller.cleanup()
        if entry.controller.lifecycle_state is not LifecycleState.FINALIZED:
            entry.controller.shutdown()
        del self.controllers[name]

    def _resolve(self, entry: ControllerEntry, kind: str) -> list[str]:
        config = getattr(entry.controller, f"{kind}_interface_configuration")()
        table = self.resources.commands if kind == "command" else self.resources.states
        if config.kind == ALL:
            return list(table.names)
        if config.kind == NONE:
            return []
        if config.kind != INDIVIDUAL:
            raise ControllerError(
                f"controller '{entry.name}': unknown interface configuration '{config.kind}'"
            )
        if kind == "state":
            delayed = set(config.previous_cycle)
            chained = [n for n in config.names if n not in table.index and exporter_of(n) in self.controllers]
            entry.chained = [n for n in chained if n not in delayed]
            entry.previous_cycle = [n for n in chained if n in delayed]
        unknown = [n for n in config.names if n not in table.index
                   and not (kind == "state" and exporter_of(n) in self.controllers)]
        if unknown:
            entry.controller.cleanup()
            raise ControllerError(
                f"controller '{entry.name}' needs {kind} interface(s) {', '.join(unknown)}, which "
                f"no hardware component (nor, for a state interface, a loaded controller) exports; "
                f"{kind} interfaces: {', '.join(table.names)}"
            )
        return list(config.names)

    # --- switching ------------------------------------------------------------------------------------------
    def _activation_problem(self, entry: ControllerEntry, releasing: set[str], taking: dict[str, str],
                            starting: frozenset[str] | set[str] = frozenset()) -> str:
        if entry.state is not LifecycleState.INACTIVE:
            return (
                f"controller '{entry.name}' is {entry.state.value}; only an inactive "
                f"(configured) controller can be activated"
            )
        c = entry.controller
        if self.gate is not None and c.EXTERNAL_COMMANDS and not c.STAMPED_COMMANDS:
            return (
                f"Unable to activate controller '{entry.name}' in lockstep: its commands ({entry.type}) "
                "carry no header stamp, so the manager cannot tell which state they answer; use a stamped "
                "command controller (kinodyn_control/JointPDController) or run without lockstep"
            )
        for name in entry.command_names:
            if not self.resources.command_available(name):
                return (
                    f"Unable to activate controller '{entry.name}' since the command interface "
                    f"'{name}' is not available"
                )
            holder = self.claimed.get(name)
            if holder is not None and holder not in releasing:
                return (
                    f"Unable to activate controller '{entry.name}' since the command interface '{name}' is "
                    f"currently claimed by controller '{holder}'"
                )
            if name in taking:
                return (
                    f"Resource conflict for controller '{entry.name}'. Command interface '{name}' is already "
                    f"claimed by controller '{taking[name]}' activated in the same switch"
                )
        for name in entry.state_names:
            if name in entry.chained or name in entry.previous_cycle:
                problem = self._chained_problem(entry, name, releasing, starting)
                if problem:
                    return problem
            elif not self.resources.state_available(name):
                return (
                    f"Unable to activate controller '{entry.name}' since the state interface "
                    f"'{name}' is not available"
                )
        return ""

    def _chained_problem(self, entry: ControllerEntry, name: str, releasing: set[str],
                         starting: frozenset[str] | set[str]) -> str:
        """Why ``entry`` cannot read the exported state interface ``name`` ('' if it can): its exporter must
        export it and, for a same-cycle input, be active (and stay so) or be activated before it."""
        exporter = self.controllers.get(exporter_of(name))
        if exporter is None or exporter.exported is None or name not in exporter.exported.index:
            owner = f"controller '{exporter_of(name)}'"
            return (f"Unable to activate controller '{entry.name}' since the state interface '{name}' is not "
                    f"exported ({owner} is " + ("not loaded" if exporter is None else
                                                 "not configured or does not export it") + ")")
        if name in entry.previous_cycle:
            return ""  # NaN until its exporter runs
        running = exporter.state is LifecycleState.ACTIVE and exporter.name not in releasing
        if running or exporter.name in starting:
            return ""
        return (f"Unable to activate controller '{entry.name}' since the state interface '{name}' is not "
                f"available (controller '{exporter.name}', which exports it, is {exporter.state.value}); "
                f"activate '{exporter.name}' first or in the same switch")

    def switch(
        self,
        activate: Sequence[str],
        deactivate: Sequence[str],
        strictness: int = BEST_EFFORT,
        timeout: float = 0.0,
    ) -> tuple[bool, str]:
        """Deactivate then activate controllers between two cycles; returns ``(ok, message)``.

        STRICT refuses the whole switch when any part is impossible; BEST_EFFORT (also 0) does what it can and
        reports the rest (ok is then false if anything was skipped). ``timeout`` [s] (0: 1 s) bounds the wait
        for the control loop to be between two cycles.
        """
        strictness = strictness or BEST_EFFORT
        refusal = ""
        if strictness not in (BEST_EFFORT, STRICT):
            refusal = f"strictness must be 1 (BEST_EFFORT) or 2 (STRICT), got {strictness}"
        elif not (math.isfinite(timeout) and timeout >= 0.0):
            refusal = f"timeout must be a finite number of seconds >= 0 (0 means 1 s), got {timeout}"
        elif not self.cycle_lock.acquire(timeout=timeout or 1.0):
            refusal = f"the control loop was not between two cycles within timeout {timeout or 1.0} s"
        if refusal:
            self.logger.error(f"switch refused: {refusal}")
            return False, f"switch refused: {refusal}"
        try:
            return self._switch(list(activate), list(deactivate), strictness)
        finally:
            self.cycle_lock.release()

    def _stopping(self, deactivate: list[str], problems: list[str]) -> list[ControllerEntry]:
        """The controllers of ``deactivate`` that can stop, readers before their exporters; why each other
        one cannot is appended to ``problems``."""
        stopping: list[ControllerEntry] = []
        for name in deactivate:
            entry = self.controllers.get(name)
            if entry is None or entry.state is not LifecycleState.ACTIVE:
                problems.append(f"controller '{name}' is not " + ("loaded" if entry is None else "active"))
            else:
                stopping.append(entry)
        releasing = {e.name for e in stopping}
        for entry in list(stopping):
            readers = [e.name for e in self._active if e.name not in releasing and e.reads(entry.name)]
            if readers:
                problems.append(f"controller '{entry.name}' cannot be deactivated: active controller(s) "
                                f"{', '.join(readers)} read its state interfaces; deactivate them in the "
                                "same switch")
                stopping.remove(entry)
        return chain_order(stopping)[::-1]

    def _switch(self, activate: list[str], deactivate: list[str], strictness: int) -> tuple[bool, str]:
        problems: list[str] = []
        stopping = self._stopping(deactivate, problems)
        releasing = {e.name for e in stopping}
        starting: list[ControllerEntry] = []
        taking: dict[str, str] = {}
        requested: list[ControllerEntry] = []
        for name in activate:
            entry = self.controllers.get(name)
            if entry is None:
                problems.append(f"controller '{name}' is not loaded")
            else:
                requested.append(entry)
        try:
            requested = chain_order(requested)  # exporters first: from the hardware side up
        except ValueError as exc:
            problems.append(f"Unable to activate {', '.join(e.name for e in requested)}: {exc}")
            requested = []
        for entry in requested:
            problem = self._activation_problem(entry, releasing, taking, {e.name for e in starting})
            if problem:
                problems.append(problem)
                continue
            starting.append(entry)
            taking.update(dict.fromkeys(entry.command_names, entry.name))
        if problems and strictness == STRICT:
            return False, "switch refused (STRICT): " + "; ".join(problems)
        start = [n for e in starting for n in e.command_names]
        stop = [n for e in stopping for n in e.command_names]
        owners = self.resources.command_owner
        starts = self.resources.components_of(start, owners)
        stops = self.resources.components_of(stop, owners)
        for component in set(starts) | set(stops):
            hw = self.resources.components[component]
            if (
                hw.prepare_command_mode_switch(starts.get(component, []), stops.get(component, []))
                is not ReturnType.OK
            ):
                return (
                    False,
                    f"switch refused: hardware '{component}' cannot switch command modes: {hw.last_error}",
                )
        for entry in stopping:
            self._deactivate(entry)
        for component in set(starts) | set(stops):
            self.resources.components[component].perform_command_mode_switch(
                starts.get(component, []), stops.get(component, [])
            )
        for entry in starting:
            problem = self._activate(entry)
            if problem:
                problems.append(problem)
        for problem in problems:
            self.logger.error(problem)
        return not problems, "; ".join(problems) if problems else "ok"

    def _activate(self, entry: ControllerEntry) -> str:
        states: Any
        if entry.chained or entry.previous_cycle:
            exported = {e.name: e.exported for e in self.controllers.values() if e.exported is not None}
            states = ChainedStates(entry.state_names, self.resources.states, exported)
        else:
            states = LoanedInterfaces(entry.state_names, self.resources.states)
        entry.controller.assign_interfaces(
            LoanedInterfaces(entry.command_names, self.resources.commands, bounded=True), states)
        if entry.controller.activate() is not LifecycleState.ACTIVE:
            entry.controller.release_interfaces()
            return f"controller '{entry.name}' failed to activate: {entry.controller.last_error}"
        self.claimed.update(dict.fromkeys(entry.command_names, entry.name))
        entry.last_time = None
        self._order_active()
        return ""

    def _order_active(self) -> None:
        """The active controllers in chain order (exporters first), otherwise in load order, and the lists of
        them a cycle runs (made here, once per switch, not in every cycle)."""
        active = chain_order([e for e in self.controllers.values() if e.state is LifecycleState.ACTIVE])
        self._active = active
        self._internal = [e for e in active if not e.controller.EXTERNAL_COMMANDS]
        self._external = [e for e in active if e.controller.EXTERNAL_COMMANDS]
        self._broadcasters = [e for e in self._internal if not (
            e.command_names or e.exported or e.chained or e.previous_cycle)]

    def _deactivate(self, entry: ControllerEntry) -> None:
        if entry.state is LifecycleState.ACTIVE:
            entry.controller.deactivate()
        entry.controller.release_interfaces()
        for name in entry.command_names:
            if self.claimed.get(name) == entry.name:
                del self.claimed[name]
        if entry.exported is not None:
            entry.exported.values[:] = np.nan  # its readers see no value, not a stale one
        self._order_active()

    # --- the control cycle ----------------------------------------------------------------------------------
    def cycle(self, time: float, period: float) -> None:
        """One control cycle: read -> update -> write; ``time`` and ``period`` in seconds."""
        with self.cycle_lock:
            self._stop_users_of(self.resources.read(time, period))
            self._update_each(self._active, time, period)
            self._stop_users_of(self.resources.write(time, period))
            self.cycles += 1

    def lockstep_cycle(self, time: float, period: float, gate: LockstepGate) -> bool:
        """One lockstep cycle (lockstep.py): read -> controllers without external commands -> wait until every
        active controller with external commands holds the command stamped ``time`` (the controllers refuse
        any other stamp: ``_stamp_problem``) -> those controllers -> write. Returns False (without writing)
        when ``gate`` was stopped while waiting."""
        with self.cycle_lock:
            self._lockstep_stamp = round(time * NS)
            self._stop_users_of(self.resources.read(time, period))
            self._update_each(self._internal, time, period)

        def republish() -> None:  # the broadcasters again (not a chain: it would see the same cycle twice)
            with self.cycle_lock:
                self._update_each(self._broadcasters, time, period)

        def missing() -> str:
            return ", ".join(
                f"'{name}' (latest stamp {'none' if stamp is None else f'{stamp / NS:.6f} s'})"
                for name, stamp in self.missing_commands(time)
            )

        if not self._external:
            # cycles back to back: let the executor's thread (topics, parameters, services) have the GIL
            # between two cycles at least once per switch interval of wall time (sys.getswitchinterval(): how
            # long the interpreter lets a thread keep the GIL from a waiting one, which the loop's many short
            # releases of it would otherwise defeat), so what a controller's node takes is taken between
            # cycles, not seconds later, without paying the yield (a sleep: tens of microseconds of wall time)
            # every cycle
            now = _time.monotonic()
            if now >= self._next_yield:
                _time.sleep(0.0)
                self._next_yield = now + sys.getswitchinterval()
        while gate.wait(lambda: not self.missing_commands(time), missing, republish, time):
            with self.cycle_lock:
                if self.missing_commands(time):
                    continue  # a switch between the wait and the lock activated a controller without one
                self._update_each(self._external, time, period)
                self._stop_users_of(self.resources.write(time, period))
                self.cycles += 1
                return True
        return False

    def missing_commands(self, time: float) -> list[tuple[str, int | None]]:
        """``(controller, latest stamp [ns])`` of each active controller with external commands that holds no
        command stamped exactly ``time``."""
        time_ns = round(time * NS)
        missing = []
        for entry in self._external:
            stamp = entry.controller.command_stamp()
            if stamp != time_ns:
                missing.append((entry.name, stamp))
        return missing

    def _update_each(self, entries: list[ControllerEntry], time: float, period: float) -> None:
        """``_update`` of ``entries`` in order (a list taken before: an update may stop controllers)."""
        if not entries:
            return
        with np.errstate(all="ignore"):  # what a controller writes is checked; numpy need not warn
            for entry in entries:
                self._update(entry, time, period)

    def _update(self, entry: ControllerEntry, time: float, period: float) -> None:
        """``entry``'s update when it is active and due (its update_rate); ``period`` then is the time since
        its previous update (``divisor`` loop periods at its first)."""
        if entry.state is not LifecycleState.ACTIVE or self.cycles % entry.divisor:
            return
        own = period * entry.divisor if entry.last_time is None else time - entry.last_time
        entry.last_time = time
        try:
            result = entry.controller.update(time, own)
        except UnsafeCommandError as exc:
            self._stop(entry)
            self.logger.error(f"controller '{entry.name}' wrote an unsafe command: {exc}"
                              f"{self._stopped(entry)}")
            return
        except Exception:  # noqa: BLE001  a controller bug must not stop the loop: deactivate it and say why
            self._stop(entry)
            self.logger.error(f"controller '{entry.name}' raised in update(){self._stopped(entry)}:\n"
                              f"{traceback.format_exc()}")
            return
        if result is not ReturnType.OK:
            self._stop(entry)
            self.logger.error(f"controller '{entry.name}' returned {result.name} from update()"
                              f"{self._stopped(entry)}")

    def _stop(self, entry: ControllerEntry) -> list[str]:
        """Deactivate ``entry`` on the manager's own decision and put its command interfaces in safe mode;
        the active controllers reading its state interfaces in the same cycle go with it (recursively).
        Returns the names of those dependents."""
        commands = self.resources.commands
        readers = [e for e in self._active if e is not entry and e.reads(entry.name)]
        self._deactivate(entry)
        for name in entry.command_names:
            i = commands.index[name]
            commands.values[i] = safe_command(name, float(commands.values[i]), self.resources.states)
        stopped: list[str] = []
        for reader in readers:
            if reader.state is LifecycleState.ACTIVE:
                stopped += [reader.name, *self._stop(reader)]
        entry.dependents_stopped = stopped
        return stopped

    def _stopped(self, entry: ControllerEntry) -> str:
        n = len(entry.command_names)
        text = f"; deactivated it, its {n} command interface(s) in {SAFE_MODE}" if n else "; deactivated it"
        if entry.dependents_stopped:
            text += (f"; the controller(s) reading its state interfaces deactivated too: "
                     f"{', '.join(entry.dependents_stopped)}"
                     f" (their command interfaces in {SAFE_MODE})")
        return text

    def _stop_users_of(self, failed: list[str]) -> None:
        """Stop (safe mode) every active controller using an interface of the components ``failed``; then one
        message: ``on_hardware_failure`` for components that went through on_error, a warning for those that
        asked to be deactivated."""
        if not failed:
            return
        broken = set(failed)
        stopped = []
        for entry in list(self._active):
            used = [n for n in entry.command_names if self.resources.command_owner[n] in broken]
            used += [n for n in entry.state_names if self.resources.state_owner[n] in broken]
            if used and entry.state is LifecycleState.ACTIVE:
                stopped += [entry.name, *self._stop(entry)]
        effect = (f"; controller(s) {', '.join(stopped)} deactivated, their command interfaces in {SAFE_MODE}"
                  if stopped else "")
        states = {n: self.resources.components[n].lifecycle_state for n in sorted(broken)}
        errored = [n for n, state in states.items() if state not in _READABLE]
        if errored:  # went through on_error (a component that asked to be deactivated is INACTIVE)
            self.on_hardware_failure("; ".join(self.resources.errors[n] for n in errored) + effect)
        asked = [n for n in states if n not in errored]
        if asked:
            self.logger.warning(f"component(s) {', '.join(asked)} asked to be deactivated from write()"
                                f"{effect}")

    def shutdown(self) -> None:
        """Deactivate every controller, then deactivate and shut down every component."""
        with self.cycle_lock:
            for entry in list(self._active):
                self._deactivate(entry)
            for component in self.resources.components.values():
                if component.lifecycle_state is LifecycleState.ACTIVE:
                    component.deactivate()
                if component.lifecycle_state in _PATH_UP:
                    try:
                        component.shutdown()
                    except LifecycleError as exc:
                        self.logger.error(str(exc))
