"""kinodyn_tools.viewer: one Scene, two renderings (MarkerArray and the viser scene) that agree (no DDS).

The scene is the quadruped standing (kinodyn FK), two feet in contact, paths (estimated, true, planned), CoM
and footholds. Second sources: the scene's own numbers (each rendering must carry them unchanged), the
shoelace area of the support polygon against the triangles drawn, Pinocchio's quaternion for the bodies'
orientations in viser.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest
from kinodyn.urdf import read_urdf
from kinodyn_tools.viewer.browser import BrowserView
from kinodyn_tools.viewer.geometry import robot_primitives
from kinodyn_tools.viewer.markers import NAMESPACE, scene_markers
from kinodyn_tools.viewer.scene import (
    Scene,
    center_of_mass,
    com_ground,
    force_arrows,
    place_bodies,
    support_polygon,
)
from visualization_msgs.msg import Marker

from kinodyn import Model

if TYPE_CHECKING:
    from collections.abc import Iterable

    from geometry_msgs.msg import Point

URDF = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"
STANCE = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]


@pytest.fixture(scope="module")
def scene() -> Scene:
    urdf = read_urdf(URDF)
    model = Model.from_urdf(urdf, floating_base=True)
    primitives, _ = robot_primitives(urdf)
    q = np.concatenate([[0.3, -0.1, 0.5], [0.0, 0.0, np.sin(0.2), np.cos(0.2)], STANCE])
    poses = {link: model.frame_placement(q, link) for link in {p.link for p in primitives}}
    feet = np.array([poses[f][:3, 3] - [0.0, 0.0, 0.03] for f in FEET])
    touching = [True, True, True, False]
    support = support_polygon(feet[touching])
    com = center_of_mass(model, poses["base_link"], q[7:])
    t = np.linspace(0.0, 1.0, 30)
    return Scene(
        frame="odom",
        bodies=place_bodies(primitives, poses),
        estimated_path=np.column_stack([0.3 * t, 0.02 * np.sin(6 * t), 0.5 + 0 * t]),
        true_path=np.column_stack([0.3 * t, 0 * t, 0.5 + 0 * t]),
        force_arrows=force_arrows(feet, np.tile([2.0, -1.0, 80.0], (4, 1)), touching, 0.003),
        support_polygon=support,
        com=com,
        com_ground=com_ground(com, support),
        footholds=feet[3:] + np.array([0.1, 0.0, 0.0]),
        planned_path=np.column_stack([0.3 + 0.1 * t[:17], 0 * t[:17], 0.5 + 0 * t[:17]]),
        focus=poses["base_link"][:3, 3],
    )


def shoelace(polygon: np.ndarray) -> float:
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * abs(float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)))


def triangle_area(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    return 0.5 * float(np.linalg.norm(np.cross(b - a, c - a)))


def xyz(points: Iterable[Point]) -> np.ndarray:
    return np.array([[p.x, p.y, p.z] for p in points])


def by_id(markers: list[Marker]) -> dict[int, Marker]:
    return {m.id: m for m in markers}


def test_scene_of_the_fixture_has_every_overlay(scene: Scene) -> None:
    assert len(scene.bodies) == 17
    assert scene.force_arrows.shape == (3, 2, 3)
    assert len(scene.support_polygon) == 3
    assert len(scene.footholds) == 1
    assert scene.is_finite()


def test_markers_carry_the_scene(scene: Scene) -> None:
    markers = scene_markers(scene).markers
    assert markers[0].action == Marker.DELETEALL
    assert all(m.header.frame_id == "odom" and m.ns == NAMESPACE for m in markers)
    assert all(m.action == Marker.ADD and m.header.stamp.sec == 0 for m in markers[1:])
    m = by_id(markers[1:])
    assert len(m) == len(markers) - 1  # ids are unique
    assert m[0].type == m[1].type == Marker.LINE_STRIP
    np.testing.assert_array_equal(xyz(m[0].points), scene.estimated_path)
    np.testing.assert_array_equal(xyz(m[1].points), scene.true_path)
    arrows = [m[100 + i] for i in range(3)]
    assert all(a.type == Marker.ARROW for a in arrows)
    assert 103 not in m
    np.testing.assert_array_equal(np.array([xyz(a.points) for a in arrows]), scene.force_arrows)
    fill = xyz(m[2].points).reshape(-1, 3, 3)
    assert m[2].type == Marker.TRIANGLE_LIST
    assert sum(triangle_area(*t) for t in fill) == pytest.approx(shoelace(scene.support_polygon), rel=1e-12)
    edge = xyz(m[3].points)
    np.testing.assert_array_equal(edge[:-1], scene.support_polygon)
    np.testing.assert_array_equal(edge[-1], edge[0])  # closed
    assert m[4].type == Marker.SPHERE
    np.testing.assert_array_equal(xyz([m[4].pose.position])[0], scene.com)
    np.testing.assert_array_equal(xyz(m[5].points), [scene.com, scene.com_ground])
    assert m[6].type == Marker.CYLINDER
    assert m[6].scale.z < m[6].scale.x
    np.testing.assert_array_equal(xyz([m[6].pose.position])[0], scene.com_ground)
    assert m[7].type == Marker.SPHERE_LIST
    np.testing.assert_array_equal(xyz(m[7].points), scene.footholds)
    assert m[8].type == Marker.LINE_STRIP
    np.testing.assert_array_equal(xyz(m[8].points), scene.planned_path)


def test_an_empty_scene_clears_the_markers() -> None:
    markers = scene_markers(Scene("odom")).markers
    assert [m.action for m in markers] == [Marker.DELETEALL]


def test_browser_draws_the_same_scene(scene: Scene) -> None:
    view = BrowserView("127.0.0.1", 0, tuple(b.primitive for b in scene.bodies))
    try:
        assert view.port > 0
        assert not any(h.visible for h in view.bodies.values())  # nothing before the first pose
        view.update(scene)
        for body in scene.bodies:
            handle = view.bodies[body.primitive.name]
            assert handle.visible
            np.testing.assert_allclose(handle.position, body.T[:3, 3], atol=1e-12)
            w, x, y, z = handle.wxyz
            np.testing.assert_allclose(
                pin.Quaternion(w, x, y, z).toRotationMatrix(), body.T[:3, :3], atol=1e-12
            )
        o = view.overlays
        for name, path in (("estimated_path", scene.estimated_path), ("true_path", scene.true_path),
                           ("planned_path", scene.planned_path)):
            segments = o[f"/overlays/{name}"].points
            np.testing.assert_allclose(
                np.vstack([segments[:, 0], segments[-1:, 1]]), path, atol=1e-6
            )  # float32
        np.testing.assert_allclose(o["/overlays/forces"].points, scene.force_arrows, atol=1e-6)
        fill = o["/overlays/support_fill"]
        np.testing.assert_allclose(fill.vertices[:, :2], scene.support_polygon[:, :2], atol=1e-6)
        area = sum(triangle_area(*fill.vertices[f]) for f in fill.faces)
        assert area == pytest.approx(shoelace(scene.support_polygon), rel=1e-6)
        edge = o["/overlays/support_edge"].points
        np.testing.assert_allclose(edge[:, 0], scene.support_polygon, atol=1e-6)
        np.testing.assert_allclose(edge[:, 1], np.roll(scene.support_polygon, -1, axis=0), atol=1e-6)
        np.testing.assert_allclose(o["/overlays/com"].position, scene.com, atol=1e-12)
        np.testing.assert_allclose(o["/overlays/com_ground"].position, scene.com_ground, atol=1e-12)
        np.testing.assert_allclose(o["/overlays/foothold_0"].position, scene.footholds[0], atol=1e-12)
        assert view.server.initial_camera.look_at == pytest.approx(scene.focus)

        view.update(Scene("odom"))  # the robot and every overlay disappear
        assert view.overlays == {}
        assert not any(h.visible for h in view.bodies.values())
    finally:
        view.stop()
