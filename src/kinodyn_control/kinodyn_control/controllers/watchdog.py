"""Command watchdog: when commands stop for longer than ``watchdog_timeout``, switch to a safe command.

Safe commands (``safe_mode``):
- ``hold_position``: hold the position measured when the watchdog tripped; effort joints get
  ``effort = safe_kp (q_hold - q) - safe_kd qdot``, position joints get ``q_hold``;
- ``zero_effort``: ``effort = -safe_kd qdot`` (damping only); needs effort command interfaces.
The watchdog trips at the first update whose time is more than ``timeout`` after the last accepted command,
logs it once, and re-arms when the next command arrives. Before the first command it is not armed.

Gains are bounded (``max_kp``, ``max_kd``: finite and > 0): ``safe_kp``/``safe_kd`` here, and the gains of
every JointPDCommand (joint_pd.py), must be finite, >= 0 and at most these.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from kinodyn_common.stamps import seconds_to_ns

from kinodyn_control.controllers.base import Parameter
from kinodyn_control.hardware.types import EFFORT, POSITION

SAFE_MODES = ("hold_position", "zero_effort")
WATCHDOG_PARAMETERS = {
    "watchdog_timeout": Parameter("float", 0.25, "seconds without a command before the safe command"),
    "safe_mode": Parameter("str", "zero_effort", "safe command: hold_position or zero_effort"),
    "safe_kp": Parameter("float", 0.0, "stiffness of hold_position on effort joints [N m/rad]"),
    "safe_kd": Parameter("float", 1.0, "damping of the safe command on effort joints [N m s/rad]"),
    "max_kp": Parameter("float", 1e5, "largest stiffness accepted (safe_kp, command kp) [N m/rad or N/m]"),
    "max_kd": Parameter("float", 1e4, "largest damping accepted (safe_kd, command kd) [N m s/rad or N s/m]"),
}


def gain_bounds(params: dict[str, Any]) -> tuple[float, float]:
    """``(max_kp, max_kd)`` of ``params``; ValueError unless both are finite and > 0."""
    bounds = float(params["max_kp"]), float(params["max_kd"])
    if not all(np.isfinite(b) and b > 0.0 for b in bounds):
        raise ValueError(f"parameters max_kp and max_kd must be finite and > 0, got {bounds[0]} and "
                         f"{bounds[1]}")
    return bounds


class CommandWatchdog:
    def __init__(self, params: dict[str, Any], interface: str) -> None:
        self.timeout = float(params["watchdog_timeout"])
        if not (np.isfinite(self.timeout) and self.timeout > 0.0):
            raise ValueError(
                f"parameter watchdog_timeout must be a positive number of seconds, got {self.timeout}"
            )
        self.mode = params["safe_mode"]
        if self.mode not in SAFE_MODES:
            raise ValueError(f"parameter safe_mode must be one of {', '.join(SAFE_MODES)}, got '{self.mode}'")
        if interface not in (EFFORT, POSITION):
            raise ValueError(
                f"the watchdog's safe command needs effort or position interfaces, not '{interface}'"
            )
        if self.mode == "zero_effort" and interface != EFFORT:
            raise ValueError("safe_mode zero_effort needs effort command interfaces; use hold_position")
        self.kp, self.kd = float(params["safe_kp"]), float(params["safe_kd"])
        max_kp, max_kd = gain_bounds(params)
        if not (0.0 <= self.kp <= max_kp and 0.0 <= self.kd <= max_kd):
            raise ValueError(f"safe_kp and safe_kd must be in [0, max_kp = {max_kp}] and [0, max_kd = "
                             f"{max_kd}], got {self.kp} and {self.kd}")
        self.interface = interface
        self.last_command_time: float | None = None
        self.tripped = False
        self.hold = np.zeros(0)

    def reset(self) -> None:
        self.last_command_time, self.tripped = None, False

    def feed(self, time: float) -> None:
        self.last_command_time, self.tripped = time, False

    def check(self, time: float, q: np.ndarray) -> float | None:
        """The silence in seconds if the watchdog trips now (once per silence), else None."""
        if self.tripped or self.last_command_time is None:
            return None
        silence = time - self.last_command_time
        # Whole nanoseconds (ROS time's resolution): 50 periods of 2 ms must equal a 0.1 s timeout, not
        # exceed it by a rounding error and trip one cycle early.
        if seconds_to_ns(time) - seconds_to_ns(self.last_command_time) <= seconds_to_ns(self.timeout):
            return None
        self.tripped, self.hold = True, q.copy()
        return silence

    def describe(self) -> str:
        gains = f"kp {self.kp}, kd {self.kd}" if self.mode == "hold_position" else f"kd {self.kd}"
        return f"{self.mode} ({gains})" if self.interface == EFFORT else "hold_position"

    def safe_command(self, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        if self.interface == POSITION:
            return self.hold
        if self.mode == "hold_position":
            effort: np.ndarray = self.kp * (self.hold - q) - self.kd * qdot
            return effort
        damping: np.ndarray = -self.kd * qdot
        return damping
