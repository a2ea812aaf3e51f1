"""The joint-level command the `wbc` node sends (kinodyn_interfaces/JointPDCommand): what it may contain.

``JointPDController`` (kinodyn_control/controllers/joint_pd.py) computes ``effort + kp (position - q) +
kd (velocity - qdot)`` and refuses a whole message with a non-finite value, a negative gain, or a desired
position, velocity or feed-forward effort outside the URDF limits. ``CommandLimits.finalize`` makes every
outgoing command acceptable: a command with a non-finite number (or a negative gain) is replaced by damping
(``kp = 0``, ``kd > 0``, zero feed-forward); a finite one is clipped to the limits (effort saturation is what
the actuators would do anyway; the count of clipped joints is reported).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from kinodyn import Model

FIELDS = ("position", "velocity", "effort", "kp", "kd")


class JointCommand(NamedTuple):
    """Per-joint arrays in the model's joint order (a named tuple: a tick builds several)."""

    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    kp: np.ndarray
    kd: np.ndarray

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The fields in the order of FIELDS."""
        return tuple(self)


@dataclass(frozen=True)
class Finalized:
    """The command to send; ``problem`` is '' unless it had to be replaced by damping (then it says why);
    ``saturated`` counts the joints whose feed-forward effort was clipped."""

    command: JointCommand
    problem: str
    saturated: int


class CommandLimits:
    """The URDF limits of the model's joints, the bounds JointPDController checks."""

    def __init__(self, model: Model) -> None:
        first = model.nq - len(model.joint_names)  # a floating base's 7 coordinates come first
        self.names = tuple(model.joint_names)
        self.lower = np.asarray(model.lower_limit[first:], dtype=float)
        self.upper = np.asarray(model.upper_limit[first:], dtype=float)
        vfirst = model.nv - len(model.joint_names)
        self.velocity = np.asarray(model.velocity_limit[vfirst:], dtype=float)
        self.effort = np.asarray(model.effort_limit[vfirst:], dtype=float)
        # the bounds of the five fields (FIELDS) as rows, for one clip of all; the gains are checked >= 0 and
        # never clipped
        unbounded = np.full((2, len(self.names)), np.inf)
        self._low = np.vstack([self.lower, -self.velocity, -self.effort, -unbounded])
        self._high = np.vstack([self.upper, self.velocity, self.effort, unbounded])

    def hold_position(self, q: np.ndarray | None) -> np.ndarray:
        """``q`` within the position limits, 0 (clipped) where ``q`` is unknown or non-finite."""
        q = np.zeros(len(self.names)) if q is None else np.nan_to_num(np.asarray(q, float), nan=0.0,
                                                                     posinf=0.0, neginf=0.0)
        return np.clip(q, self.lower, self.upper)

    def damping(self, q: np.ndarray | None, kd: float) -> JointCommand:
        """Pure damping ``-kd qdot``: ``kp = 0``, zero desired velocity and feed-forward; the desired position
        (unused with ``kp = 0``, but checked by the controller) is ``q`` within the limits."""
        n = len(self.names)
        return JointCommand(self.hold_position(q), np.zeros(n), np.zeros(n), np.zeros(n), np.full(n, kd))

    def finalize(self, command: JointCommand, q: np.ndarray | None, damping_kd: float) -> Finalized:
        """``command`` clipped to the limits, or damping when it holds a non-finite number or a negative gain
        (the docstring of the module)."""
        arrays = command.arrays()
        n = len(self.names)
        try:
            stacked = np.array(arrays, dtype=np.float64)  # (5, n): one check and one clip of all five fields
        except (TypeError, ValueError):  # fields of different shapes, or not numbers
            stacked = None
        if stacked is None or stacked.shape != (len(FIELDS), n):
            wrong = [(name, np.shape(a)) for name, a in zip(FIELDS, arrays, strict=True)
                     if np.shape(a) != (n,)]
            problem = f"{wrong[0][0]} has shape {wrong[0][1]}, not ({n},)" if wrong else \
                "the fields are not numbers"
            return Finalized(self.damping(q, damping_kd), problem, 0)
        flat = stacked.ravel()
        # a finite sum of squares: every number finite; else the loop names the first bad one
        if not (math.isfinite(flat.dot(flat)) or np.isfinite(flat).all()):
            for name, a in zip(FIELDS, arrays, strict=True):
                if not np.isfinite(a).all():
                    bad = [j for j, ok in zip(self.names, np.isfinite(a), strict=True) if not ok]
                    return Finalized(self.damping(q, damping_kd), f"non-finite {name} for {', '.join(bad)}",
                                     0)
        if np.count_nonzero(stacked[3:] < 0.0):
            return Finalized(self.damping(q, damping_kd), "a negative kp or kd", 0)
        # np.minimum(np.maximum(.)) is np.clip's definition, without its dispatch (a tick's cost); the gains'
        # bounds are infinite, so they come out as they went in (-0.0 included)
        clipped = np.minimum(np.maximum(stacked, self._low), self._high)
        return Finalized(JointCommand(*clipped), "", int(np.count_nonzero(clipped[2] != stacked[2])))


class TickResult(NamedTuple):
    """One tick of a mode controller. ``command`` None: the controller failed (``status`` and ``message`` say
    how) and the node sends damping. ``task_errors``: an error vector per task (the diagnostics report its
    norm: only those ticks compute it); ``stance``: the planned contact per
    foot (legged); ``footholds``: each swinging foot's planned touchdown point in the base state's frame
    (legged); ``solve_time``: seconds in the QP (legged)."""

    command: JointCommand | None
    status: str
    message: str = ""
    task_errors: dict[str, np.ndarray] | None = None
    stance: dict[str, bool] | None = None
    solve_time: float | None = None
    mode: str = ""  # the locomotion mode (sit, standing_up, stand, sitting_down, trot); '' for an arm
    footholds: dict[str, np.ndarray] | None = None
