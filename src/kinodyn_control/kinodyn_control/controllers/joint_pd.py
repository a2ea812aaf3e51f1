"""``kinodyn_control/JointPDController``: joint-level PD + feed-forward, the interface legged robots use.

Takes kinodyn_interfaces/JointPDCommand on ``~/commands`` (per joint, by name: desired position, velocity,
feed-forward effort, kp, kd) and writes ``effort = effort_ff + kp (position - q) + kd (velocity - qdot)`` to
``<joint>/effort``, then the URDF limits (±effort, no push past a position or velocity limit). A message is
rejected when an array is not as long as ``name``, a name is unknown, repeated or missing, a value is NaN/inf,
kp or kd is negative or above ``max_kp`` / ``max_kd`` (watchdog.py), or a desired position/velocity/
feed-forward effort is outside the URDF limits. Each cause (and each field, for lengths and non-finite values)
is throttled on its own.
``header.stamp`` is used in lockstep only (docs/simulator.md): the stamp of the joint states the command
answers.
Watchdog and limit enforcement: joint_command.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from kinodyn_common.conversions import InputError
from kinodyn_common.raw_messages import JointPDCommandReader

from kinodyn_control.controllers.joint_command import JointCommandController
from kinodyn_control.hardware.types import EFFORT, POSITION, VELOCITY
from kinodyn_interfaces.msg import JointPDCommand

if TYPE_CHECKING:
    from collections.abc import Sequence

FIELDS = ("position", "velocity", "effort", "kp", "kd")


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


class JointPDController(JointCommandController):
    MESSAGE = JointPDCommand
    READER = JointPDCommandReader  # taken serialized, read into numpy
    STAMPED_COMMANDS = True  # header.stamp: the stamp of the joint states the command answers (lockstep)
    _checked_names: list[str] | None = None  # the last name list accepted, for the joints _checked_for
    _checked_for: list[str] | None = None
    _checked_order: np.ndarray | None = None

    def command_interface_name(self) -> str:
        return EFFORT

    def parse(self, msg: JointPDCommand) -> np.ndarray:
        """Rows position, velocity, effort, kp, kd; columns in the controller's joint order."""
        names = list(msg.name)
        if not names:
            raise InputError("empty", f"the message names no joint; command {_names(self.joints)}")
        for field in FIELDS:
            if len(getattr(msg, field)) != len(names):
                raise InputError(
                    "length", f"{field} has {len(getattr(msg, field))} values for {len(names)} names", field
                )
        order = self._order(names)
        rows = np.array([getattr(msg, field) for field in FIELDS], dtype=np.float64)
        if order is not None:
            rows = rows[:, order]
        if not np.isfinite(rows).all():
            fields = ", ".join(FIELDS[r] for r in sorted(set(np.nonzero(~np.isfinite(rows))[0])))
            raise InputError("nan", f"non-finite values in {fields}", fields)
        if (rows[3:] < 0.0).any():
            raise InputError("gains", "kp and kd must be >= 0")
        for row, bound in ((3, 0), (4, 1)):
            above = np.flatnonzero(rows[row] > self.max_gains[bound])
            if above.size:
                field = FIELDS[row]
                raise InputError(
                    f"max_{field}",
                    f"{field} {rows[row][above[0]]} for {self.joints[above[0]]} is above max_{field} = "
                    f"{self.max_gains[bound]} (a controller parameter)",
                )
        for row, kind in ((0, POSITION), (1, VELOCITY), (2, EFFORT)):
            problem = self.limits.check(rows[row], kind)
            if problem:
                raise InputError("limits", f"out of limits: {problem}", kind)
        return rows

    def _order(self, names: list[str]) -> np.ndarray | None:
        """The column of each of the controller's joints in a message naming ``names`` (None: the same order),
        after checking the names; checked and mapped once per name list (a sender repeats the same one)."""
        if names == self._checked_names and self._checked_for is self.joints:
            return self._checked_order
        twice = sorted({n for n in names if names.count(n) > 1})
        unknown = [n for n in names if n not in self.joints]
        missing = [j for j in self.joints if j not in names]
        for key, found, text in (
            ("twice", twice, "named twice"),
            ("unknown", unknown, f"not commanded by this controller (joints: {_names(self.joints)})"),
            ("missing", missing, "missing"),
        ):
            if found:  # the key is the cause, not the names: a stream of random names is one cause
                raise InputError(key, f"joint(s) {_names(found)} {text}")
        order = [names.index(j) for j in self.joints]
        self._checked_names, self._checked_for = names, self.joints
        self._checked_order = None if order == list(range(len(names))) else np.array(order, dtype=np.intp)
        return self._checked_order

    def compute(self, target: np.ndarray, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        position, velocity, effort, kp, kd = target
        command: np.ndarray = effort + kp * (position - q) + kd * (velocity - qdot)
        return command
