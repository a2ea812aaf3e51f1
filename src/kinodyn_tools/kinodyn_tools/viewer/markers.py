"""A ``Scene``'s overlays as a ``visualization_msgs/MarkerArray`` for RViz (the robot itself is RViz's
RobotModel display, from robot_description and /tf).

One marker per overlay, in namespace ``kinodyn_viewer``, stamped zero (RViz: the latest transform) in the
scene's frame. The array starts with a DELETEALL, so an overlay that became empty disappears. Marker types and
fields follow visualization_msgs/Marker.msg: LINE_STRIP (scale.x = line width), ARROW given by two points
(scale.x shaft diameter, scale.y head diameter, scale.z head length), TRIANGLE_LIST, SPHERE, SPHERE_LIST.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from kinodyn_tools.viewer.scene import (
    ARROW_HEAD_DIAMETER,
    ARROW_HEAD_LENGTH,
    ARROW_SHAFT_DIAMETER,
    COM_COLOR,
    COM_DIAMETER,
    DISC_HEIGHT,
    ESTIMATED_PATH_COLOR,
    FOOTHOLD_COLOR,
    FOOTHOLD_DIAMETER,
    FORCE_COLOR,
    LINE_POINTS,
    PATH_WIDTH,
    PLANNED_PATH_COLOR,
    POLYGON_POINTS,
    SUPPORT_COLOR,
    SUPPORT_EDGE_COLOR,
    TRUE_PATH_COLOR,
    Scene,
)

if TYPE_CHECKING:
    from kinodyn_tools.viewer.geometry import Rgba

NAMESPACE = "kinodyn_viewer"

# Marker ids, one per overlay (arrows take FORCE_ID + i).
ESTIMATED_PATH_ID, TRUE_PATH_ID, SUPPORT_FILL_ID, SUPPORT_EDGE_ID = range(4)
COM_ID, COM_LINE_ID, COM_GROUND_ID, FOOTHOLDS_ID, PLANNED_PATH_ID = range(4, 9)
FORCE_ID = 100


def _points(points: np.ndarray) -> list[Point]:
    return [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in np.asarray(points).reshape(-1, 3)]


def _marker(
    scene: Scene, marker_id: int, kind: int, color: Rgba, scale: tuple[float, float, float]
) -> Marker:
    m = Marker()
    m.header.frame_id = scene.frame
    m.ns = NAMESPACE
    m.id = marker_id
    m.type = kind
    m.action = Marker.ADD
    m.pose.orientation.w = 1.0
    m.scale.x, m.scale.y, m.scale.z = scale
    r, g, b, a = color
    m.color = ColorRGBA(r=r, g=g, b=b, a=a)
    return m


def _line(scene: Scene, marker_id: int, points: np.ndarray, color: Rgba) -> Marker:
    m = _marker(scene, marker_id, Marker.LINE_STRIP, color, (PATH_WIDTH, 0.0, 0.0))
    m.points = _points(points)
    return m


def _fan(polygon: np.ndarray) -> np.ndarray:
    """Triangles (3 vertices each) covering a convex polygon: a fan from its first vertex."""
    return np.array([[polygon[0], polygon[i], polygon[i + 1]] for i in range(1, len(polygon) - 1)])


def scene_markers(scene: Scene) -> MarkerArray:
    """The overlays of ``scene``; only those with something to show after the DELETEALL."""
    clear = Marker(ns=NAMESPACE, action=Marker.DELETEALL)
    clear.header.frame_id = scene.frame
    markers = [clear]
    for marker_id, path, color in (
        (ESTIMATED_PATH_ID, scene.estimated_path, ESTIMATED_PATH_COLOR),
        (TRUE_PATH_ID, scene.true_path, TRUE_PATH_COLOR),
        (PLANNED_PATH_ID, scene.planned_path, PLANNED_PATH_COLOR),
    ):
        if len(path) >= LINE_POINTS:
            markers.append(_line(scene, marker_id, path, color))
    for i, (start, end) in enumerate(scene.force_arrows):
        arrow = _marker(
            scene,
            FORCE_ID + i,
            Marker.ARROW,
            FORCE_COLOR,
            (ARROW_SHAFT_DIAMETER, ARROW_HEAD_DIAMETER, ARROW_HEAD_LENGTH),
        )
        arrow.points = _points(np.array([start, end]))
        markers.append(arrow)
    polygon = scene.support_polygon
    if len(polygon) >= POLYGON_POINTS:
        fill = _marker(scene, SUPPORT_FILL_ID, Marker.TRIANGLE_LIST, SUPPORT_COLOR, (1.0, 1.0, 1.0))
        fill.points = _points(_fan(polygon))
        markers.append(fill)
    if len(polygon) >= LINE_POINTS:
        markers.append(_line(scene, SUPPORT_EDGE_ID, np.vstack([polygon, polygon[:1]]), SUPPORT_EDGE_COLOR))
    if scene.com is not None and scene.com_ground is not None:
        com = _marker(scene, COM_ID, Marker.SPHERE, COM_COLOR, (COM_DIAMETER,) * 3)
        com.pose.position = _points(scene.com)[0]
        markers.append(com)
        markers.append(_line(scene, COM_LINE_ID, np.array([scene.com, scene.com_ground]), COM_COLOR))
        disc = _marker(
            scene, COM_GROUND_ID, Marker.CYLINDER, COM_COLOR, (COM_DIAMETER, COM_DIAMETER, DISC_HEIGHT)
        )
        disc.pose.position = _points(scene.com_ground)[0]
        markers.append(disc)
    if len(scene.footholds):
        footholds = _marker(scene, FOOTHOLDS_ID, Marker.SPHERE_LIST, FOOTHOLD_COLOR, (FOOTHOLD_DIAMETER,) * 3)
        footholds.points = _points(scene.footholds)
        markers.append(footholds)
    return MarkerArray(markers=markers)
