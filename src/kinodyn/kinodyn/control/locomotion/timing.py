"""The two-beat gaits' duty factor and swing shape fitted to the legs' joint speeds and torques.

A swing foot of a gait with period ``T`` and duty ``d`` at body speed ``v`` lands one stride ``v T`` ahead of
where it lifted off, in the swing time ``(1 - d) T``: its mean speed over the ground is ``v / (1 - d)``, and
relative to its hip (which moves at ``v``) its peak horizontal speed is

    H = v (c / (1 - d) - 1),

``c`` the peak over the mean of the swing's horizontal blend (``swing.py``: 15/8 for minimum jerk,
``1 / (1 - a)`` for the flat-topped blend of ramp ``a``). Its vertical bump of height ``h`` peaks at
``V = b'_max h / ((1 - d) T)``, ``b'_max = 192 / (25 sqrt 5)`` (at ``s = (1 - 1/sqrt 5) / 2``). ``H`` does not
depend on the period: at a given duty the swing's speed grows with the body's, whatever the gait's
frequency, and only a lower duty (more of the cycle in swing), a flatter blend or a lower step bring it down
(animals lower their duty factor as they speed up: Alexander 1984, "The gaits of bipedal and quadrupedal
animals", Int. J. Robotics Research 3(2)).

The joints give the foot at most ``u`` [m/s] relative to its hip (``foot_speed_limit``: the URDF's joint
velocity limits through the leg's Jacobian at the nominal stance, in the least favourable of the x, y and z
directions). ``fit_swing`` keeps the settings as given while the swing's peak at the command limits, bounded
by ``sqrt(H^2 + V^2)`` (the two peaks need not coincide), stays within ``ratio u``; past it, the fast swing:
the flat-topped blend, the lowest step height, and the largest duty in ``[min_duty, duty]`` that fits.

The torques bound the step height. The stance legs carry the weight and the swing legs' reaction: a swing
foot accelerating upwards at ``a`` (the trunk held) raises the CoM at ``rho a`` (``swing_lift``: ``rho`` the
CoM's height per unit of the foot's, from the CoM Jacobian through the leg's), so the stance feet push
``m rho a`` harder. The bump's largest upward acceleration is ``b''_max h / T_sw^2`` with ``b''_max = 96 / 5``
(at ``s = (1 - sqrt(3/5)) / 2``), at lift-off and again before touchdown. With ``lambda`` the largest fraction
of its effort limit a leg joint needs to hold the weight on one group of feet (``stance_load``: ``J^T f``,
each foot pushing ``m g / n`` straight down at the nominal stance), the stance joints' peak load is about
``lambda (1 + sum(rho) b''_max h / (g T_sw^2))`` (the swing group's ``rho`` summed), linear in ``h``;
``load_step_height`` is the largest ``h`` keeping it within a budget. A robot of weak motors for its size (a
large ``lambda``) and heavy lower legs (a large ``rho``) steps lower; it swings its feet as high otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.locomotion.swing import swing_point

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn.model import Model

MINIMUM_JERK_PEAK = 15.0 / 8.0  # peak over mean speed of the minimum-jerk blend (swing.py)
BUMP_PEAK_RATE = 192.0 / (25.0 * math.sqrt(5.0))  # max b'(s) of the swing's bump 64 s^3 (1 - s)^3
BUMP_PEAK_LIFT = 96.0 / 5.0  # max b''(s) > 0 of the bump: its largest upward acceleration (module doc)
_BISECTIONS = 40  # of the duty's interval [min_duty, duty]
_UNUSED_COLUMN = 1e-12  # a Jacobian column this small (summed): a joint not on the foot's leg
SAMPLES = 101  # phases of a swing at which its speeds are taken
_ORIGIN, _UNIT_X = np.zeros(3), np.array([1.0, 0.0, 0.0])


@dataclass(frozen=True)
class SwingFit:
    """The gait's ``duty``, the swing's ``ramp`` (0: minimum jerk) and ``step_height`` [m] for the top body
    ``speed`` [m/s]; ``swing_speed``: the swing foot's peak speed relative to its hip there [m/s]; ``fast``:
    the fast swing was needed; ``fits``: ``swing_speed`` within the budget."""

    duty: float
    ramp: float
    step_height: float
    speed: float
    swing_speed: float
    fast: bool
    fits: bool


def _leg_jacobian(model: Model, q: np.ndarray, foot: str) -> tuple[np.ndarray, np.ndarray]:
    """The foot's position Jacobian (world axes) over its leg's joints, and those joints' velocity indices
    less the base's six."""
    jacobian = model.frame_jacobian(q, foot, "local_world_aligned")[:3, 6:]
    columns = np.flatnonzero(np.abs(jacobian).sum(axis=0) > _UNUSED_COLUMN)
    return jacobian[:, columns], columns


def foot_speed_limit(model: Model, q: np.ndarray, feet: Sequence[str]) -> float:
    """The smallest, over ``feet`` and the horizontal directions x and y, of the largest speed [m/s] the foot
    gets relative to the base from its leg's joints within their URDF velocity limits at ``q`` (the
    least-norm joint velocities of the leg's columns of the foot's position Jacobian; exact for a leg of
    three joints). ``inf`` when no leg joint has a finite velocity limit."""
    limits = np.asarray(model.velocity_limit, dtype=float)[6:]
    best = math.inf
    for foot in feet:
        jacobian, columns = _leg_jacobian(model, q, foot)
        limit = limits[columns]
        limited = np.isfinite(limit) & (limit > 0.0)
        rates = np.abs(np.linalg.pinv(jacobian)[limited, :2])  # joint speed per foot speed
        with np.errstate(divide="ignore"):
            best = min(best, float((limit[limited][:, None] / rates).min(initial=math.inf)))
    return best


def stance_load(model: Model, q: np.ndarray, feet: Sequence[str], stance_feet: int) -> float:
    """The largest fraction of its URDF effort limit any joint of ``feet``'s legs needs to hold the robot's
    weight shared by ``stance_feet`` of them, each pushing ``m g / stance_feet`` straight down at ``q``
    (``tau = J^T f``; module doc). 0 when no leg joint has a finite effort limit."""
    effort = np.asarray(model.effort_limit, dtype=float)[6:]
    weight = float(model.mass.sum()) * float(np.linalg.norm(model.gravity))
    force = np.array([0.0, 0.0, weight / stance_feet])
    load = 0.0
    for foot in feet:
        jacobian, columns = _leg_jacobian(model, q, foot)
        limited = np.isfinite(effort[columns]) & (effort[columns] > 0.0)
        torque = np.abs(jacobian.T @ force)[limited]
        load = max(load, float((torque / effort[columns][limited]).max(initial=0.0)))
    return load


def swing_lift(model: Model, q: np.ndarray, foot: str) -> float:
    """``rho`` (module doc): the CoM's rise per unit rise of ``foot`` moved by its leg's joints alone at ``q``
    (the trunk held; the least-norm joint motion of the leg's Jacobian)."""
    jacobian, columns = _leg_jacobian(model, q, foot)
    com_rows = model.com_jacobian(q)[2, 6:][columns]
    return abs(float(com_rows @ np.linalg.pinv(jacobian) @ np.array([0.0, 0.0, 1.0])))


def load_step_height(load: float, lift: float, budget: float, swing_time: float, gravity: float) -> float:
    """The largest step height [m] whose swing keeps the stance joints' peak load
    ``load (1 + lift BUMP_PEAK_LIFT h / (gravity swing_time^2))`` within ``budget`` (module doc: ``load`` the
    static ``lambda``, ``lift`` the swing group's summed ``rho``): ``inf`` when nothing limits it, 0 when
    the weight alone takes the budget."""
    if load <= 0.0 or lift <= 0.0:
        return math.inf
    return max(budget / load - 1.0, 0.0) * gravity * swing_time**2 / (lift * BUMP_PEAK_LIFT)


def _profiles(ramp: float) -> tuple[np.ndarray, np.ndarray]:
    """The horizontal blend's rate ``m'(s)`` and the bump's ``b'(s)`` over ``SAMPLES`` phases of a swing of
    unit length, height and duration (``swing.swing_point``)."""
    out = np.empty((3, 3))
    rates = np.empty((2, SAMPLES))
    for k, s in enumerate(np.linspace(0.0, 1.0, SAMPLES)):
        swing_point(float(s), 1.0, _ORIGIN, _UNIT_X, 1.0, out, ramp)
        rates[:, k] = out[1, 0], out[1, 2]
    return rates[0], rates[1]


def swing_speed(speed: float, duty: float, ramp: float, step_height: float, period: float) -> float:
    """The swing foot's peak speed [m/s] relative to its hip at body ``speed`` [m/s] (module doc; ``ramp`` 0:
    the minimum-jerk blend)."""
    blend, bump = _profiles(ramp)
    horizontal = speed * (blend / (1.0 - duty) - 1.0)
    vertical = bump * step_height / ((1.0 - duty) * period)
    return float(np.sqrt(horizontal**2 + vertical**2).max())


def fit_swing(speed: float, period: float, budget: float, duty: float, ramp: float, step_height: float,
              min_duty: float, fast_ramp: float, fast_step_height: float) -> SwingFit:
    """The settings for a top body ``speed`` [m/s] whose swing foot stays within ``budget`` [m/s] of speed
    relative to its hip (``swing_speed``; module doc): ``duty``, ``ramp`` and ``step_height`` as given when it
    does; else ``fast_ramp`` (``ramp`` if it is set), the lower of the two step heights and the largest duty
    in ``[min_duty, duty]`` within it (``min_duty`` when none is: ``fits`` False)."""
    given = swing_speed(speed, duty, ramp, step_height, period)
    if given <= budget:
        return SwingFit(duty, ramp, step_height, speed, given, fast=False, fits=True)
    ramp = ramp if ramp > 0.0 else fast_ramp
    height = min(step_height, fast_step_height)
    low = min(min_duty, duty)
    fits = swing_speed(speed, low, ramp, height, period) <= budget
    high = duty if fits else low  # the speed grows with the duty: bisect for the largest duty within budget
    for _ in range(_BISECTIONS if fits else 0):
        middle = 0.5 * (low + high)
        if swing_speed(speed, middle, ramp, height, period) <= budget:
            low = middle
        else:
            high = middle
    return SwingFit(low, ramp, height, speed, swing_speed(speed, low, ramp, height, period), fast=True,
                    fits=fits)
