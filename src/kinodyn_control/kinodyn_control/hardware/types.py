"""Interface names, return codes, lifecycle states and the value tables behind interface handles.

Follows ros2_control: an interface's full name is ``<joint or sensor>/<interface>``; the
standard joint interfaces are position, velocity, acceleration and effort; an IMU exports the 10 keys of
``semantic_components::IMUSensor`` in that order. Values live in one float64 array per kind (state, command)
owned by the resource manager; a component sees its own contiguous slice (``InterfaceView``), a controller
sees the interfaces it claimed (``LoanedInterfaces``), both without copies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

POSITION = "position"
VELOCITY = "velocity"
ACCELERATION = "acceleration"
EFFORT = "effort"
STANDARD_INTERFACES = (POSITION, VELOCITY, ACCELERATION, EFFORT)
IMU_INTERFACES = (
    "orientation.x",
    "orientation.y",
    "orientation.z",
    "orientation.w",
    "angular_velocity.x",
    "angular_velocity.y",
    "angular_velocity.z",
    "linear_acceleration.x",
    "linear_acceleration.y",
    "linear_acceleration.z",
)


def full_name(prefix: str, interface: str) -> str:
    """``<joint or sensor>/<interface>``, the key of every state and command interface."""
    return f"{prefix}/{interface}"


class ReturnType(Enum):
    """Result of ``read``/``write``/``update`` (hardware_interface::return_type of Jazzy and later)."""

    OK = 0
    ERROR = 1
    DEACTIVATE = 2


class CallbackReturn(Enum):
    """Result of a lifecycle callback: FAILURE stays in the previous state, ERROR goes to ``on_error``."""

    SUCCESS = 0
    FAILURE = 1
    ERROR = 2


class LifecycleState(Enum):
    UNKNOWN = "unknown"
    UNCONFIGURED = "unconfigured"
    INACTIVE = "inactive"
    ACTIVE = "active"
    FINALIZED = "finalized"


@dataclass(frozen=True)
class InterfaceInfo:
    """One ``<state_interface>`` or ``<command_interface>`` of a ``<ros2_control>`` block.

    ``initial_value`` is NaN unless the URDF sets it (ros2_control's default for ``double``); ``min``/``max``
    are the command limits the URDF gives (infinite when absent).
    """

    name: str
    min: float = -math.inf
    max: float = math.inf
    initial_value: float = math.nan
    data_type: str = "double"
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class InterfaceDescription:
    """An interface of one joint, sensor or GPIO: ``prefix`` is its name, ``info`` the interface."""

    prefix: str
    info: InterfaceInfo

    @property
    def full_name(self) -> str:
        return full_name(self.prefix, self.info.name)


class InterfaceTable:
    """Named float64 values in one array, in the order of ``descriptions``, starting at their initial
    values."""

    def __init__(self, descriptions: Sequence[InterfaceDescription], what: str) -> None:
        self.descriptions = tuple(descriptions)
        self.names = tuple(d.full_name for d in self.descriptions)
        self.index: dict[str, int] = {}
        for i, name in enumerate(self.names):
            if name in self.index:
                raise ValueError(
                    f"{what} interface '{name}' is exported twice; each full name must be unique"
                )
            self.index[name] = i
        self.values = np.array([d.info.initial_value for d in self.descriptions], dtype=np.float64)
        self._what = what

    def indices(self, names: Sequence[str]) -> np.ndarray:
        missing = [n for n in names if n not in self.index]
        if missing:
            raise KeyError(
                f"unknown {self._what} interface(s) {', '.join(missing)}; known: "
                f"{', '.join(self.names) or 'none'}"
            )
        return np.array([self.index[n] for n in names], dtype=np.intp)

    def view(self, start: int, stop: int) -> InterfaceView:
        return InterfaceView(self.names[start:stop], self.values[start:stop], self._what)


class InterfaceView:
    """A component's own interfaces: ``values`` is a view into the manager's table (writes go through)."""

    def __init__(self, names: Sequence[str], values: np.ndarray, what: str) -> None:
        self.names = tuple(names)
        self.values = values
        self.index = {name: i for i, name in enumerate(self.names)}
        self._what = what

    def __contains__(self, name: str) -> bool:
        return name in self.index

    def _position(self, name: str) -> int:
        try:
            return self.index[name]
        except KeyError:
            raise KeyError(f"this component has no {self._what} interface '{name}'") from None

    def get(self, name: str) -> float:
        return float(self.values[self._position(name)])

    def set(self, name: str, value: float) -> None:
        self.values[self._position(name)] = value


class UnsafeCommandError(ValueError):
    """Values a controller tried to write that are non-finite or outside their interface's ``min``/``max``."""


class LoanedInterfaces:
    """The interfaces a controller was given, in the order it asked for them (``names``).

    ``get()`` copies the current values; ``set(values)`` writes all of them (command interfaces only). A
    command loan has the interfaces' ``min``/``max`` (``bounded=True``): ``set`` then raises
    UnsafeCommandError, writing nothing, unless every value is finite and within them, so a non-finite or
    out-of-range command never reaches the table the hardware reads.
    """

    def __init__(self, names: Sequence[str], table: InterfaceTable, bounded: bool = False) -> None:
        self.names = tuple(names)
        self._indices = table.indices(self.names)
        self._values = table.values
        self._bounds: tuple[np.ndarray, np.ndarray] | None = None
        self._finite_bounds = False  # every min and max finite: a value within them is finite too
        if bounded:
            infos = [table.descriptions[i].info for i in self._indices]
            lower, upper = np.array([i.min for i in infos]), np.array([i.max for i in infos])
            self._bounds = (lower, upper)
            self._finite_bounds = bool(np.isfinite(lower).all() and np.isfinite(upper).all())

    def check(self, values: np.ndarray) -> str:
        """'' if ``values`` may be written, else which ones may not and why."""
        if self._bounds is None:
            return ""
        lower, upper = self._bounds
        if (type(values) is np.ndarray and values.shape == lower.shape and values.dtype == np.float64
                and ((values >= lower) & (values <= upper)).all()
                and (self._finite_bounds or np.isfinite(values).all())):
            return ""  # every value within its bounds (NaN compares false) and finite
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), lower.shape)
        bad = ~((values >= lower) & (values <= upper) & np.isfinite(values))  # NaN bounds refuse too
        return ", ".join(
            f"{self.names[k]} = {values[k]} "
            + ("(non-finite)" if not math.isfinite(values[k]) else f"(outside [{lower[k]}, {upper[k]}])")
            for k in np.flatnonzero(bad)
        )

    def __len__(self) -> int:
        return len(self.names)

    def get(self) -> np.ndarray:
        values: np.ndarray = self._values[self._indices]
        return values

    def set(self, values: np.ndarray) -> None:
        problem = self.check(values)
        if problem:
            raise UnsafeCommandError(problem)
        self._values[self._indices] = values

    def subset(self, names: Sequence[str]) -> np.ndarray:
        """Positions of ``names`` within this loan (for controllers that group interfaces by kind)."""
        position = {name: i for i, name in enumerate(self.names)}
        return np.array([position[n] for n in names], dtype=np.intp)
