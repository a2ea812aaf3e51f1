"""What the viewer draws: one description (``Scene``) that the browser view and the MarkerArray both render.

- the robot: each URDF primitive placed by its link's pose from /tf, ``T_frame_primitive = T_frame_link @
  T_link_primitive``;
- the estimated and the true base trajectories: polylines of bounded length;
- contact forces: an arrow per contact in touch, from the contact point along the ground reaction force
  (the force the ground exerts on the robot, ARCHITECTURE §3) times ``force_scale`` [m/N];
- the support polygon: the convex hull, in the ground plane (x, y), of the contact points in touch (Andrew's
  monotone chain, counter-clockwise), each vertex keeping its height;
- the centre of mass from joint positions and base pose through ``kinodyn.Model.com``, and its vertical
  projection onto the support plane (the mean height of the contact points; 0 without contacts);
- planned footholds: points;
- the planned base trajectory (a model predictive controller's prediction over its horizon): a polyline.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from kinodyn.spatial import matrix_to_quat
from kinodyn_common.conversions import InputError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from kinodyn import Model
    from kinodyn_tools.viewer.geometry import Primitive, Rgba


@dataclass(frozen=True)
class Style:
    """Colours (RGBA, 0-1) and sizes [m] of the overlays: one table that both renderings (the browser view and
    the MarkerArray) draw with."""

    estimated_path_color: Rgba = (0.10, 0.45, 0.90, 1.0)
    true_path_color: Rgba = (0.15, 0.70, 0.30, 1.0)
    force_color: Rgba = (0.90, 0.20, 0.15, 1.0)
    support_color: Rgba = (0.20, 0.75, 0.55, 0.35)
    support_edge_color: Rgba = (0.10, 0.55, 0.40, 1.0)
    com_color: Rgba = (0.95, 0.75, 0.10, 1.0)
    foothold_color: Rgba = (0.95, 0.50, 0.05, 1.0)
    planned_path_color: Rgba = (0.60, 0.25, 0.85, 1.0)
    path_width: float = 0.012
    """Line width of the trajectories and the support polygon's edges."""
    arrow: tuple[float, float, float] = (0.015, 0.035, 0.04)
    """A force arrow's shaft diameter, head diameter and head length (visualization_msgs/Marker's ARROW
    scale)."""
    com_diameter: float = 0.06
    """The CoM sphere and the disc that marks its projection on the ground (the disc is disc_height thick)."""
    disc_height: float = 0.004
    foothold_diameter: float = 0.05


STYLE = Style()


LINE_POINTS = 2  # the fewest points of a line
POLYGON_POINTS = 3  # and of a polygon with an area


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


_DIRECTIONS = np.array([[np.cos(a), np.sin(a)] for a in np.arange(8) * np.pi / 4])
"""Eight directions, counter-clockwise: their extreme points are hull vertices in counter-clockwise order."""


def _inside_extremes(xy: np.ndarray) -> np.ndarray:
    """Mask of the points strictly inside the convex polygon of the extreme points of ``xy`` (n x 2)."""
    if len(xy) <= len(_DIRECTIONS):
        return np.zeros(len(xy), dtype=bool)
    corners = xy[np.argmax(xy @ _DIRECTIONS.T, axis=0)]
    corners = corners[np.any(corners != np.roll(corners, 1, axis=0), axis=1)]  # consecutive repeats
    if len(corners) < POLYGON_POINTS:
        return np.zeros(len(xy), dtype=bool)
    edges = np.roll(corners, -1, axis=0) - corners
    rel = xy[:, None, :] - corners[None, :, :]
    cross = edges[None, :, 0] * rel[:, :, 1] - edges[None, :, 1] * rel[:, :, 0]
    inside: np.ndarray = np.all(cross > 0.0, axis=1)
    return inside


def support_polygon(points: np.ndarray) -> np.ndarray:
    """Vertices (k x 3) of the convex hull of ``points`` (n x 3) projected on x, y, counter-clockwise from
    the lowest-x point (Andrew's monotone chain, A. M. Andrew, Inf. Process. Lett. 9(5), 1979); collinear
    and repeated points are dropped, so two feet give a segment (2 vertices), one foot a point. Points
    strictly inside the octagon of the extreme points in eight directions are dropped first (Akl and
    Toussaint's heuristic: they cannot be vertices), so thousands of contacts cost a few vectorised passes."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    points = points[~_inside_extremes(points[:, :2])]
    order = np.lexsort((points[:, 1], points[:, 0]))
    ordered = points[order]
    if len(ordered) < POLYGON_POINTS:
        unique = [p for i, p in enumerate(ordered) if i == 0 or not np.allclose(p[:2], ordered[i - 1][:2])]
        return np.array(unique).reshape(-1, 3)
    lower: list[np.ndarray] = []
    for p in ordered:
        while len(lower) >= LINE_POINTS and _cross(lower[-2], lower[-1], p) <= 0.0:
            lower.pop()
        lower.append(p)
    upper: list[np.ndarray] = []
    for p in ordered[::-1]:
        while len(upper) >= LINE_POINTS and _cross(upper[-2], upper[-1], p) <= 0.0:
            upper.pop()
        upper.append(p)
    hull = lower[:-1] + upper[:-1]
    if len(hull) == LINE_POINTS and np.allclose(hull[0][:2], hull[1][:2]):
        hull = hull[:1]
    return np.array(hull).reshape(-1, 3)


def check_bounded(what: str, name: str, values: np.ndarray, bound: float, unit: str, parameter: str) -> None:
    """InputError ``<what>_out_of_range`` when a row of ``values`` (n x 3) is longer than ``bound``: finite
    but not physical (e.g. 1e308), which would blank the view (a camera or a grid scaled to it)."""
    values = np.asarray(values, dtype=np.float64).reshape(-1, 3)
    largest = np.abs(values).max(axis=1, initial=0.0)
    scale = np.where(largest > 0.0, largest, 1.0)
    norms = largest * np.linalg.norm(values / scale[:, None], axis=1)  # no overflow below ~1e308
    if np.any(norms > bound):
        raise InputError(
            f"{what}_out_of_range",
            f"{name} {norms.max():.3g} {unit} long, over the bound {bound:g} {unit} (parameter "
            f"{parameter}); a sensor or publisher fault, not a physical value",
        )


def evenly_picked(rows: np.ndarray, count: int) -> np.ndarray:
    """At most ``count`` rows of ``rows``, evenly spread, first and last included."""
    if len(rows) <= count:
        return rows
    picked: np.ndarray = rows[np.linspace(0, len(rows) - 1, count).round().astype(int)]
    return picked


def force_arrows(
    points: np.ndarray, forces: np.ndarray, in_contact: Sequence[bool] | np.ndarray, scale: float
) -> np.ndarray:
    """``(k, 2, 3)`` start and end of one arrow per contact in touch with a nonzero force:
    ``[p, p + scale * f]``."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    forces = np.asarray(forces, dtype=np.float64).reshape(-1, 3)
    keep = np.asarray(in_contact, dtype=bool) & (np.linalg.norm(forces, axis=1) > 0.0)
    return np.stack([points[keep], points[keep] + scale * forces[keep]], axis=1)


def center_of_mass(model: Model, T_frame_root: np.ndarray, joint_positions: np.ndarray) -> np.ndarray:
    """The CoM in the fixed frame: ``Model.com`` of ``q = [base position, base quaternion (x, y, z, w),
    joints]`` for a floating-base model, ``T_frame_root`` applied to ``Model.com(joints)`` for a fixed one
    (whose CoM leaves out the root link welded to the world, as Pinocchio)."""
    if model.floating_base:
        q = np.concatenate([T_frame_root[:3, 3], matrix_to_quat(T_frame_root[:3, :3]), joint_positions])
        return np.asarray(model.com(q), dtype=np.float64)
    com: np.ndarray = T_frame_root[:3, :3] @ np.asarray(model.com(joint_positions)) + T_frame_root[:3, 3]
    return com


class Polyline:
    """The last ``max_points`` points of a path, a new point kept when it is ``min_spacing`` [m] or more from
    the previous one (a robot standing still adds nothing)."""

    def __init__(self, max_points: int, min_spacing: float = 0.005) -> None:
        if max_points < LINE_POINTS:
            raise ValueError(f"a trajectory needs at least {LINE_POINTS} points, "
                             f"got a length of {max_points}")
        self._points: deque[np.ndarray] = deque(maxlen=max_points)
        self._min_spacing = min_spacing

    def add(self, point: np.ndarray) -> None:
        point = np.asarray(point, dtype=np.float64)
        if not self._points or np.linalg.norm(point - self._points[-1]) >= self._min_spacing:
            self._points.append(point)

    def clear(self) -> None:
        self._points.clear()

    def points(self) -> np.ndarray:
        return np.array(self._points).reshape(-1, 3)


@dataclass(frozen=True)
class Body:
    """A URDF primitive placed in the fixed frame."""

    primitive: Primitive
    T: np.ndarray


def _empty(*shape: int) -> np.ndarray:
    return np.zeros((0, *shape))


@dataclass(frozen=True)
class Scene:
    """Everything drawn, in the coordinates of ``frame``; empty arrays where nothing is known yet."""

    frame: str
    bodies: tuple[Body, ...] = ()
    estimated_path: np.ndarray = field(default_factory=lambda: _empty(3))
    true_path: np.ndarray = field(default_factory=lambda: _empty(3))
    force_arrows: np.ndarray = field(default_factory=lambda: _empty(2, 3))
    support_polygon: np.ndarray = field(default_factory=lambda: _empty(3))
    com: np.ndarray | None = None
    com_ground: np.ndarray | None = None
    footholds: np.ndarray = field(default_factory=lambda: _empty(3))
    planned_path: np.ndarray = field(default_factory=lambda: _empty(3))
    focus: np.ndarray = field(default_factory=lambda: np.zeros(3))
    """Where a camera should look: the root link's origin once it is known."""

    def arrays(self) -> list[np.ndarray]:
        """Every number of the scene, for the finiteness check."""
        extra = [a for a in (self.com, self.com_ground) if a is not None]
        return [b.T for b in self.bodies] + [
            self.estimated_path,
            self.true_path,
            self.force_arrows,
            self.support_polygon,
            self.footholds,
            self.planned_path,
            self.focus,
            *extra,
        ]

    def is_finite(self) -> bool:
        return all(bool(np.all(np.isfinite(a))) for a in self.arrays())


def place_bodies(primitives: Sequence[Primitive], link_poses: Mapping[str, np.ndarray]) -> tuple[Body, ...]:
    """The primitives of the links whose pose is known (``T_frame_link``), placed in the fixed frame."""
    return tuple(Body(p, link_poses[p.link] @ p.T_link) for p in primitives if p.link in link_poses)


def com_ground(com: np.ndarray, support: np.ndarray) -> np.ndarray:
    """The CoM projected vertically on the support plane (mean height of the support polygon, else 0)."""
    height = float(np.mean(support[:, 2])) if len(support) else 0.0
    return np.array([com[0], com[1], height])
