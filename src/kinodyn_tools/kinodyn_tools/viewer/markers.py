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

from kinodyn_tools.viewer.scene import LINE_POINTS, POLYGON_POINTS, STYLE, Scene

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
    m = _marker(scene, marker_id, Marker.LINE_STRIP, color, (STYLE.path_width, 0.0, 0.0))
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
        (ESTIMATED_PATH_ID, scene.estimated_path, STYLE.estimated_path_color),
        (TRUE_PATH_ID, scene.true_path, STYLE.true_path_color),
        (PLANNED_PATH_ID, scene.planned_path, STYLE.planned_path_color),
    ):
        if len(path) >= LINE_POINTS:
            markers.append(_line(scene, marker_id, path, color))
    for i, (start, end) in enumerate(scene.force_arrows):
        arrow = _marker(scene, FORCE_ID + i, Marker.ARROW, STYLE.force_color, STYLE.arrow)
        arrow.points = _points(np.array([start, end]))
        markers.append(arrow)
    polygon = scene.support_polygon
    if len(polygon) >= POLYGON_POINTS:
        fill = _marker(scene, SUPPORT_FILL_ID, Marker.TRIANGLE_LIST, STYLE.support_color, (1.0, 1.0, 1.0))
        fill.points = _points(_fan(polygon))
        markers.append(fill)
    if len(polygon) >= LINE_POINTS:
        edge = np.vstack([polygon, polygon[:1]])
        markers.append(_line(scene, SUPPORT_EDGE_ID, edge, STYLE.support_edge_color))
    if scene.com is not None and scene.com_ground is not None:
        com = _marker(scene, COM_ID, Marker.SPHERE, STYLE.com_color, (STYLE.com_diameter,) * 3)
        com.pose.position = _points(scene.com)[0]
        markers.append(com)
        markers.append(_line(scene, COM_LINE_ID, np.array([scene.com, scene.com_ground]), STYLE.com_color))
        disc_size = (STYLE.com_diameter, STYLE.com_diameter, STYLE.disc_height)
        disc = _marker(scene, COM_GROUND_ID, Marker.CYLINDER, STYLE.com_color, disc_size)
        disc.pose.position = _points(scene.com_ground)[0]
        markers.append(disc)
    if len(scene.footholds):
        footholds = _marker(
            scene, FOOTHOLDS_ID, Marker.SPHERE_LIST, STYLE.foothold_color, (STYLE.foothold_diameter,) * 3
        )
        footholds.points = _points(scene.footholds)
        markers.append(footholds)
    return MarkerArray(markers=markers)
