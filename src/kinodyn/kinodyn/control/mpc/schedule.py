"""The MPC's inputs over the horizon from the gait, the footholds and the velocity command.

- ``contact_schedule``: each foot's stance at each step, predicted from the gait scheduler's ``GaitState``
  (the gait in force repeats; a pending gait switch is not foreseen). Step k is in stance when the foot is
  at the step's middle, ``t + (k + 1/2) dt``.
- ``foothold_plan``: where each stance foot is at each step: a foot in stance now stays where it is; its
  next stance is at the planned foothold; a later stance is the planned foothold moved with the reference
  CoM (x, y) between the starts of the two stances.
- ``velocity_reference``: the reference states of a body moving at a constant twist ``(vx, vy, wz)`` in its
  heading frame, level, at a given CoM height (Di Carlo et al. 2018: the reference from the commanded
  velocity).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.locomotion.footholds import arc_displacement
from kinodyn.control.mpc.dynamics import yaw_rotations
from kinodyn.control.mpc.srb import ANGULAR_VELOCITY, LINEAR_VELOCITY, ORIENTATION, POSITION, STATE_SIZE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn.control.locomotion.gait import GaitState


def contact_schedule(state: GaitState, feet: Sequence[str], dt: float, steps: int) -> np.ndarray:
    """(steps, len(feet)) bool: foot ``feet[i]`` in stance at step k (module doc). Each foot's current
    stance or swing ends after its ``time_left``; the segment after it lasts the ``FootPhase``'s duration of
    it; later ones follow the gait in force (a foot that lands under a gait that never lifts stays down)."""
    middle = (np.arange(steps) + 0.5) * dt
    gait = state.gait
    out = np.empty((steps, len(feet)), dtype=bool)
    for i, foot in enumerate(feet):
        p = state.feet[foot]
        if p.in_stance and not (p.lifts_next and np.isfinite(p.time_left)):
            out[:, i] = True
            continue
        after = middle - p.time_left  # time into the segment after the current one
        following = p.swing_duration if p.in_stance else p.stance_duration
        later = after - following  # time into the periodic gait after that one
        if not gait.moves:
            periodic = np.ones(steps, dtype=bool)
        elif p.in_stance:  # the periodic part starts with a stance
            periodic = np.mod(later, gait.period) < gait.stance_duration
        else:  # ... with a swing
            periodic = np.mod(later, gait.period) >= gait.swing_duration
        out[:, i] = np.where(after < 0.0, p.in_stance, np.where(later < 0.0, not p.in_stance, periodic))
    return out


def foothold_plan(stance: np.ndarray, current: np.ndarray, planned: np.ndarray,
                  reference: np.ndarray) -> np.ndarray:
    """(N, n_feet, 3): each foot's contact point at each stance step (NaN at swing steps; module doc).
    ``current`` and ``planned`` (n_feet, 3): the feet now and their next footholds, world; ``reference``
    (N, 12): the reference states of steps 1 .. N."""
    steps, feet = stance.shape
    out = np.full((steps, feet, 3), np.nan)
    for i in range(feet):
        starts = [k for k in range(steps) if stance[k, i] and (k == 0 or not stance[k - 1, i])]
        first_future = None
        for k0 in starts:
            end = k0
            while end < steps and stance[end, i]:
                end += 1
            if k0 == 0:
                out[:end, i] = current[i]
                continue
            if first_future is None:
                first_future = k0
            shift = reference[k0 - 1, POSITION] - reference[first_future - 1, POSITION]
            shift[2] = 0.0
            out[k0:end, i] = planned[i] + shift
    return out


def velocity_reference(x0: np.ndarray, command: np.ndarray, height: float, dt: float,
                       steps: int) -> np.ndarray:
    """(steps, 12): the states ``x_1 .. x_N`` of a level body starting at ``x0``'s CoM (x, y) and yaw, moving
    at ``command = (vx, vy, wz)`` (heading frame) with its CoM at ``height`` (world z)."""
    vx, vy, wz = (float(c) for c in command)
    t = (np.arange(steps) + 1.0) * dt
    yaw = x0[2] + wz * t
    R0 = yaw_rotations(np.array([x0[2]]))[0, :2, :2]
    out = np.zeros((steps, STATE_SIZE))
    out[:, ORIENTATION][:, 2] = yaw
    arcs = np.array([arc_displacement(vx, vy, wz, tau) for tau in t])
    out[:, POSITION][:, :2] = x0[POSITION][:2] + arcs @ R0.T
    out[:, POSITION][:, 2] = height
    out[:, ANGULAR_VELOCITY][:, 2] = wz
    out[:, LINEAR_VELOCITY] = yaw_rotations(yaw) @ np.array([vx, vy, 0.0])
    return out
