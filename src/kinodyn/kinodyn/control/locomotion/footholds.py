"""Footholds: the Raibert heuristic about the centre of mass, with capture-point feedback.

Raibert (1986, "Legged Robots That Balance", ch. 2-3): placing the foot at the *neutral point*, where the
support is centred under the body at the middle of the stance, keeps the forward speed; a foot placed ahead
of it slows the body down. Here the body is its centre of mass ``p`` (x, y) and the neutral point is the
foot's place ``r`` in the nominal support pattern centred under it (the controller passes ``r_i - mean(r)``,
so a CoM off the centre of the feet still gets its supports centred under it). The neutral point of the
next stance is predicted with the commanded body twist ``(vx, vy, wz)`` (heading frame) held constant: the
CoM moves along the arc ``p(tau)`` and turns by ``wz tau``, so with ``tau`` the time from now to the middle
of the next stance (the swing left plus half the stance)

    hip_mid = p + Rz(psi) a(tau) + Rz(psi + wz tau) r,
    a(tau) = [sin(wz tau) vx - (1 - cos(wz tau)) vy, (1 - cos(wz tau)) vx + sin(wz tau) vy] / wz

(``a = tau [vx, vy]`` when ``wz = 0``). Feedback on the velocity error is the capture
point of the linear inverted pendulum (Pratt, Carff, Drakunov, Goswami 2006, "Capture point: a step
toward humanoid push recovery"): a body at height ``z0`` moving ``dv`` faster than wanted comes to rest
over a point ``sqrt(z0 / g) dv`` ahead, so

    foothold = hip_mid + k sqrt(z0 / g) (v - v_cmd) + (z0 / g) (v_cmd x w_cmd)

with ``k`` the feedback gain (1: the capture point) and the last term the pendulum's zero-moment-point
offset for the centripetal acceleration of a turn (``p = c - (z0/g) a``, ``a = w x v``).

The foothold is replanned every tick of the swing from the measured velocity. A velocity error ``e = v -
v_cmd`` up to ``e_s`` (``deadbeat_speed``: the trot's own sway, which the stance corrects and a gain of 1
would amplify) gets the gain ``k``; its part beyond, ``e_p = e max(0, 1 - e_s / |e|)`` (a push), the full
capture point, and with ``T_r`` the swing time left the hip is predicted to touch down ``e_p T_r`` away from
where the command takes it (Raibert's hip moving with the measured velocity over the rest of the flight):

    foothold = hip_mid + e_p T_r + clip(sqrt(z0/g) (k e + (1 - k) e_p) + (z0/g) (v_cmd x w_cmd))

so the target a pushed robot's swing foot heads for moves with the hip from the tick the push is felt
instead of being chased in the swing's last instants (``e_p = 0`` or ``T_r = 0``: the formula above). The
clipped offset is the foot's reach about its place in the support pattern under that hip: its norm at most
``max_offset`` (``leg_reach``: what the leg's segments reach at the nominal height).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy import optimize

from kinodyn.model import JOINT_FREEFLYER

if TYPE_CHECKING:
    from kinodyn.model import Model

Vector = np.ndarray | Sequence[float]  # arrays or Python floats (the same arithmetic; floats cost less)
_STRAIGHT = 1e-9  # rad: a turn smaller than this over ``tau`` counts as a straight line


def arc_displacement(vx: float, vy: float, wz: float, tau: float) -> tuple[float, float]:
    """Displacement over ``tau`` [s] of a body moving at ``(vx, vy)`` in its own heading frame while turning
    at ``wz``, in the heading frame at the start (module doc's ``a(tau)``)."""
    angle = wz * tau
    if abs(angle) < _STRAIGHT:
        return vx * tau, vy * tau
    s, c = math.sin(angle) / wz, (1.0 - math.cos(angle)) / wz
    return s * vx - c * vy, c * vx + s * vy


def raibert_foothold(centre_xy: Vector, yaw: float, hip: Vector, velocity: Vector, command: Vector,
                     tau: float, height: float, gravity: float, gain: float, max_offset: float) -> np.ndarray:
    """The foothold (x, y), world, of a foot whose next stance is centred ``tau`` [s] from now, for the hip
    moving on command until then (``T_r = 0`` in the module doc; ``touchdown_drift`` adds the rest).

    ``centre_xy``: the CoM's (x, y) now, world, and ``yaw`` the base's; ``hip``: the foot's (x, y) in the
    nominal support pattern about the centre, base frame; ``velocity``: the CoM's horizontal velocity now,
    world; ``command``: ``(vx, vy, wz)`` in the heading
    frame; ``height`` [m] and ``gravity`` [m/s^2]: the pendulum's; ``gain``: the capture-point feedback gain;
    ``max_offset`` [m]: the largest distance of the foothold from the predicted hip (module doc). The
    vectors' entries are read one by one: numpy arrays or sequences of floats.
    """
    vx, vy, wz = float(command[0]), float(command[1]), float(command[2])
    dx, dy = arc_displacement(vx, vy, wz, tau)
    c0, s0 = math.cos(yaw), math.sin(yaw)
    c1, s1 = math.cos(yaw + wz * tau), math.sin(yaw + wz * tau)
    hip_x = centre_xy[0] + c0 * dx - s0 * dy + c1 * hip[0] - s1 * hip[1]
    hip_y = centre_xy[1] + s0 * dx + c0 * dy + s1 * hip[0] + c1 * hip[1]
    v_cmd_x, v_cmd_y = c0 * vx - s0 * vy, s0 * vx + c0 * vy
    error_x, error_y = velocity_error(yaw, velocity, command)
    capture = gain * math.sqrt(height / gravity)
    turn = height / gravity
    off_x = capture * error_x + turn * v_cmd_y * wz  # (v x w)_x = vy wz
    off_y = capture * error_y - turn * v_cmd_x * wz  # (v x w)_y = -vx wz
    norm = math.hypot(off_x, off_y)
    if norm > max_offset:
        off_x, off_y = off_x * max_offset / norm, off_y * max_offset / norm
    return np.array([hip_x + off_x, hip_y + off_y])


def capture_gain(gain: float, error: float, deadbeat_speed: float) -> float:
    """The capture point's feedback gain for a velocity error of norm ``error`` [m/s]: ``gain`` up to
    ``deadbeat_speed`` [m/s] (the trot's own sway, which a gain of 1 would amplify), slope 1 beyond it (a
    push: the full capture point for the excess), so the feedback is ``k e`` up to it and
    ``e - (1 - k) e_s e / |e|`` past it, continuous in ``e``."""
    if error <= deadbeat_speed:
        return gain
    return 1.0 - (1.0 - gain) * deadbeat_speed / error


def velocity_error(yaw: float, velocity: Vector, command: Vector) -> tuple[float, float]:
    """The horizontal ``velocity`` (world) less the commanded ``(vx, vy)`` of ``command`` (heading frame of
    ``yaw``), world [m/s]."""
    c, s = math.cos(yaw), math.sin(yaw)
    vx, vy = float(command[0]), float(command[1])
    return float(velocity[0]) - (c * vx - s * vy), float(velocity[1]) - (s * vx + c * vy)


def touchdown_drift(yaw: float, velocity: Vector, command: Vector, remaining: float,
                    deadbeat_speed: float) -> tuple[float, float]:
    """``e_p T_r`` (module doc): how far [m] (x, y, world) from where the command takes it the hip touches
    down ``remaining`` [s] from now, moving with the part ``e_p = e max(0, 1 - e_s / |e|)`` of the velocity
    error ``e`` (``velocity_error``) beyond ``deadbeat_speed`` ``e_s`` [m/s] (a push's, not the trot's own
    sway, which the stance corrects: ``capture_gain``)."""
    error_x, error_y = velocity_error(yaw, velocity, command)
    norm = math.hypot(error_x, error_y)
    if norm <= deadbeat_speed:
        return 0.0, 0.0
    scale = (1.0 - deadbeat_speed / norm) * remaining
    return error_x * scale, error_y * scale


def leg_chain(model: Model, q: np.ndarray, foot: str) -> tuple[np.ndarray, list[int]]:
    """The foot's point, then the origins of the joints up to its leg's first (the hip), at ``q``: (k, 3);
    and the configuration indices of the leg's joints."""
    root = int(np.flatnonzero(model.joint_type == JOINT_FREEFLYER)[0])
    points = [model.frame_placement(q, foot)[:3, 3]]
    indices: list[int] = []
    body = int(model.frame_body[model.frame_id(foot)])
    while body != root:
        points.append(model.frame_placement(q, model.body_names[body])[:3, 3])
        indices.extend(range(int(model.idx_q[body]), int(model.idx_q[body] + model.nq_joint[body])))
        body = int(model.parent[body])
    return np.array(points), indices


def segments_length(chain: np.ndarray) -> float:
    """The sum of a leg's segments [m] (``leg_chain``'s points)."""
    return float(np.linalg.norm(np.diff(chain, axis=0), axis=1).sum())


def leg_extension(model: Model, q: np.ndarray, foot: str) -> float:
    """The farthest [m] the foot gets from its hip (``leg_chain``) with the leg's joints within their
    limits, the rest of ``q`` held: the distance maximised from ``q`` (L-BFGS-B, bounded). A straight
    leg's, or its knee's limit's; below the sum of the segments when a segment is off the leg's line (a
    hip's sideways offset)."""
    chain, indices = leg_chain(model, q, foot)
    hip = chain[-1]
    trial = np.array(q, dtype=float)

    def negative_square(x: np.ndarray) -> float:
        trial[indices] = x
        return -float(np.sum((model.frame_placement(trial, foot)[:3, 3] - hip) ** 2))

    bounds = list(zip(model.lower_limit[indices], model.upper_limit[indices], strict=True))
    result = optimize.minimize(negative_square, np.asarray(q, dtype=float)[indices], method="L-BFGS-B",
                               bounds=[(lo if np.isfinite(lo) else None, hi if np.isfinite(hi) else None)
                                       for lo, hi in bounds])
    return math.sqrt(max(-float(result.fun), float(np.sum((chain[0] - hip) ** 2))))


def leg_reach(model: Model, q: np.ndarray, feet: Sequence[str], ratio: float) -> float:
    """How far [m] every foot can be moved horizontally, in any direction, from where it stands at ``q``
    (the nominal stance, base level) while its distance from its hip stays within ``ratio`` of its leg's
    full extension (here the sum of its segments, ``segments_length``):
    ``min over the feet of sqrt((ratio l)^2 - h^2) - d``, ``h`` the hip's height above the foot and ``d``
    their horizontal distance. ``ValueError`` when a foot has no such room."""
    reach = math.inf
    for foot in feet:
        chain, _ = leg_chain(model, q, foot)  # the foot, then the joints up to the leg's first (the hip)
        extension = ratio * segments_length(chain)
        height = float(chain[-1, 2] - chain[0, 2])
        across = float(np.linalg.norm(chain[-1, :2] - chain[0, :2]))
        room = math.sqrt(max(extension**2 - height**2, 0.0)) - across
        if room <= 0.0:
            raise ValueError(f"foot {foot!r} stands {math.hypot(height, across):.4f} m from its hip in the "
                             f"nominal stance: no room within foothold_reach_ratio {ratio} of its leg's full "
                             f"extension ({extension / ratio:.4f} m): raise the ratio or bend the stance")
        reach = min(reach, room)
    return reach


def reach_height(foot: Sequence[float], hip: Sequence[float], velocity: Sequence[float],
                 horizons: Sequence[float], limit: float) -> float:
    """The highest [m] a hip at ``hip`` (x, y) moving at ``velocity`` (x, y) may stand above the ground
    for its foot at ``foot`` (x, y) to stay within ``limit`` [m] of it at each of the times ``horizons``
    [s] from now: ``sqrt(limit^2 - d^2)`` with ``d`` the largest of their horizontal distances (0 when a
    distance is beyond ``limit``)."""
    far = 0.0
    for tau in horizons:
        dx = foot[0] - hip[0] - velocity[0] * tau
        dy = foot[1] - hip[1] - velocity[1] * tau
        far = max(far, dx * dx + dy * dy)
    return math.sqrt(max(limit * limit - far, 0.0))
