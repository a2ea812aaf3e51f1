"""Controller base class: lifecycle, parameters, and which interfaces a controller claims.

As ros2_control's ``controller_interface``: after ``configure`` a controller says which command
interfaces it needs (``command_interface_configuration``; claimed exclusively while it is active) and which
state interfaces (``state_interface_configuration``; shared). ``activate`` receives them as
``LoanedInterfaces`` in the order asked for; ``update(time, period)`` runs every control cycle while active.

Parameters are declared in ``PARAMETERS`` (name -> ``Parameter``); the manager passes the values given for
``<controller>.<name>`` and ``init`` rejects unknown names and wrong types. A controller talks to ROS only
through its ``ControllerContext`` (publishers, subscriptions, clock, logger), so it runs without ROS in tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from kinodyn_control.hardware.types import CallbackReturn, LifecycleState, LoanedInterfaces, ReturnType
from kinodyn_control.lifecycle import Lifecycle, LifecycleError

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn_control.hardware.description import RobotDescription

ALL = "all"
INDIVIDUAL = "individual"
NONE = "none"


@dataclass(frozen=True)
class InterfaceConfiguration:
    """``kind`` is ALL (every available interface), INDIVIDUAL (``names``) or NONE. ``previous_cycle``: those
    of ``names`` (state interfaces another controller exports) read as the previous cycle left them
    (chain.py)."""

    kind: str
    names: tuple[str, ...] = ()
    previous_cycle: tuple[str, ...] = ()


PARAMETER_TYPES: dict[str, Callable[[Any], bool]] = {
    "bool": lambda v: isinstance(v, bool),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "str_list": lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v),
    "float_list": lambda v: (
        isinstance(v, (list, tuple))
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
    ),
}


@dataclass(frozen=True)
class Parameter:
    """A controller parameter: ``type`` is a key of PARAMETER_TYPES; ``doc`` goes into messages and docs."""

    type: str
    default: Any
    doc: str


class Logger(Protocol):
    """The lines a controller logs (rclpy's logger, logging.Logger or a test's recording logger)."""

    def info(self, message: str, /) -> object: ...

    def warning(self, message: str, /) -> object: ...

    def error(self, message: str, /) -> object: ...


class LevelLogger:
    """A Logger whose three levels go through one method, ``log(level, message)`` (level "info", "warning" or
    "error"): a subclass says where the lines go (a test's list, stderr)."""

    def log(self, level: str, message: str) -> None:
        raise NotImplementedError

    def info(self, message: str) -> None:
        self.log("info", message)

    def warning(self, message: str) -> None:
        self.log("warning", message)

    def error(self, message: str) -> None:
        self.log("error", message)


class ControllerContext(Protocol):
    """What a controller may use of its host (the ROS node, or a test double)."""

    name: str
    description: RobotDescription

    @property
    def logger(self) -> Logger: ...

    def now(self) -> float: ...

    def create_publisher(self, msg_type: type, topic: str) -> Any: ...  # noqa: ANN401  (rclpy's publisher / subscription of any rosidl type, or a test double's: testing.py)

    def create_subscription(self, msg_type: type, topic: str, callback: Callable[[Any], None],
                            raw: bool = False) -> Any:  # noqa: ANN401  (rclpy's publisher / subscription of any rosidl type, or a test double's: testing.py)
        """``raw``: the callback gets each message's serialized bytes (rclpy's ``raw=True``)."""

    def destroy(self, entity: Any) -> None: ...  # noqa: ANN401  (rclpy's publisher / subscription of any rosidl type, or a test double's: testing.py)


def _no_listener() -> None:
    return None


def _any_stamp(stamp_ns: int) -> tuple[str, str]:
    return "", ""


class Controller(Lifecycle):
    what = "controller"
    PARAMETERS: ClassVar[dict[str, Parameter]] = {}
    # Takes commands from other processes (a ~/commands topic). In lockstep the manager waits for them, which
    # needs STAMPED_COMMANDS: each command's header.stamp names the state it answers (``command_stamp``).
    EXTERNAL_COMMANDS: ClassVar[bool] = False
    STAMPED_COMMANDS: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self.controller_name = ""
        self.params: dict[str, Any] = {}
        self.context: ControllerContext | None = None
        self.commands: LoanedInterfaces | None = None
        self.states: LoanedInterfaces | None = None
        # the context's publishers and subscriptions on_configure opened; on_cleanup destroys them
        self.endpoints: list[Any] = []  # rclpy's (or a test double's) endpoints of any rosidl type
        self.command_arrived: Callable[[], None] = _no_listener  # set by the manager; per accepted command
        # set by the manager: ('', '') when a command stamped so may be used now, else (cause, why not)
        self.stamp_problem: Callable[[int], tuple[str, str]] = _any_stamp

    @property
    def name(self) -> str:
        return self.controller_name or type(self).__name__

    def init(self, name: str, params: dict[str, Any], context: ControllerContext) -> LifecycleState:
        """Check ``params`` against PARAMETERS (defaults fill the rest), then ``on_init``."""
        if self.lifecycle_state is not LifecycleState.UNKNOWN:
            raise LifecycleError(f"controller '{name}' is already initialised")
        self.controller_name, self.context, self.logger = name, context, context.logger
        unknown = sorted(set(params) - set(self.PARAMETERS))
        if unknown:
            known = ", ".join(sorted(self.PARAMETERS)) or "none"
            raise ValueError(
                f"controller '{name}': unknown parameter(s) {', '.join(unknown)}; known: {known}"
            )
        values = {}
        for key, spec in self.PARAMETERS.items():
            value = params.get(key, spec.default)
            if not PARAMETER_TYPES[spec.type](value):
                raise ValueError(
                    f"controller '{name}': parameter {key} must be of type {spec.type} "
                    f"({spec.doc}), got {value!r}"
                )
            values[key] = list(value) if isinstance(value, (list, tuple)) else value
        self.params = values
        return self._finish_init(self.on_init())

    def on_init(self) -> CallbackReturn:
        return CallbackReturn.SUCCESS

    def on_cleanup(self) -> CallbackReturn:
        """Destroy the publishers and subscriptions in ``endpoints``."""
        if self.endpoints:
            assert self.context is not None  # they were opened in it
            for entity in self.endpoints:
                self.context.destroy(entity)
            self.endpoints = []
        return CallbackReturn.SUCCESS

    def command_interface_configuration(self) -> InterfaceConfiguration:
        return InterfaceConfiguration(NONE)

    def state_interface_configuration(self) -> InterfaceConfiguration:
        return InterfaceConfiguration(NONE)

    def assign_interfaces(self, commands: LoanedInterfaces, states: LoanedInterfaces) -> None:
        """Called by the manager right before ``activate``."""
        self.commands, self.states = commands, states

    def release_interfaces(self) -> None:
        self.commands = self.states = None

    def command_stamp(self) -> int | None:
        """Header stamp [ns] of the latest accepted external command (None before the first or unstamped)."""
        return None

    def update(self, time: float, period: float) -> ReturnType:
        raise NotImplementedError(f"{type(self).__name__} must implement update(time, period)")

    # helpers for subclasses -------------------------------------------------------------------------------
    def fail(self, message: str) -> CallbackReturn:
        """Record why a hook failed and return FAILURE (the state stays as it was)."""
        self.last_error = f"controller '{self.name}': {message}"
        return CallbackReturn.FAILURE

    def positive(self, key: str) -> float:
        value = float(self.params[key])
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"parameter {key} must be a positive finite number, got {value}")
        return value
