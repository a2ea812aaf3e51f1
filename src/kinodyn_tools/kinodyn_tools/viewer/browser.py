"""A ``Scene`` in the browser, through viser (a three.js client served over HTTP and a websocket; z up).

Scene tree: ``/ground`` (grid, z = 0), ``/robot/<link>.visual_<i>`` one node per URDF primitive (viser's box
is centred with edges ``dimensions``, its cylinder centred along z with ``radius`` and ``height``, as URDF),
``/overlays/...`` the trajectories (estimated, true, planned), force arrows, support polygon, CoM and
footholds, redrawn on each update.
A "follow the robot" checkbox (on by default) moves every client's camera with the robot's root link.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import viser
from kinodyn.spatial import matrix_to_quat

from kinodyn_tools.viewer.scene import LINE_POINTS, POLYGON_POINTS, STYLE, Scene

if TYPE_CHECKING:
    from kinodyn_tools.viewer.geometry import Primitive, Rgba

CAMERA_OFFSET = np.array([1.1, -1.4, 0.7])
"""Initial camera position relative to the point it looks at (front right, above) [m]."""
FOLLOW_STEP = 0.05
"""Horizontal distance [m] the robot moves before following cameras are shifted."""
GROUND_SIZE = 20.0
LEGEND = (
    "**kinodyn viewer**  \n"
    "blue: estimated base path · green: true base path  \n"
    "red: contact forces · teal: support polygon  \n"
    "yellow: centre of mass · orange: planned footholds · purple: planned base path"
)


def rgb(color: Rgba) -> tuple[int, int, int]:
    """0-255 RGB of a 0-1 RGBA colour (viser takes opacity apart)."""
    r, g, b, _ = color
    return round(255 * r), round(255 * g), round(255 * b)


def wxyz(T: np.ndarray) -> np.ndarray:
    """viser's (w, x, y, z) quaternion of the rotation of ``T`` (kinodyn stores (x, y, z, w))."""
    x, y, z, w = matrix_to_quat(T[:3, :3])
    return np.array([w, x, y, z])


def _segments(points: np.ndarray, closed: bool = False) -> np.ndarray:
    """Consecutive pairs of a polyline, ``(n - 1, 2, 3)`` (``n`` for a closed one)."""
    if closed:
        points = np.vstack([points, points[:1]])
    return np.stack([points[:-1], points[1:]], axis=1)


def aim(camera: viser.CameraHandle, focus: np.ndarray) -> None:
    """Camera at ``focus + CAMERA_OFFSET`` looking at ``focus``. Position first: viser's position setter
    moves the look-at point along with the camera."""
    camera.position = focus + CAMERA_OFFSET
    camera.look_at = focus


class BrowserView:
    """A viser server on ``host:port`` (port 0: any free port) showing ``Scene`` updates."""

    def __init__(self, host: str, port: int, primitives: tuple[Primitive, ...]) -> None:
        self.server = viser.ViserServer(host=host, port=port, label="kinodyn", verbose=False)
        scene = self.server.scene
        scene.set_up_direction("+z")
        # Default lights and a sky/ground hemisphere instead of viser's HDR environment map, whose decoding
        # keeps a software-rendered page washed out for many seconds.
        scene.configure_environment_map(hdri=None)
        scene.add_light_hemisphere(
            "/sky", sky_color=(255, 255, 255), ground_color=(120, 120, 130), intensity=2.0
        )
        scene.add_grid(
            "/ground",
            GROUND_SIZE,
            GROUND_SIZE,
            plane="xy",
            cell_size=0.25,
            section_size=1.0,
            cell_color=(210, 212, 216),
            section_color=(150, 154, 160),
            plane_color=(245, 246, 248),
            plane_opacity=1.0,
            position=(0.0, 0.0, -0.001),
        )
        self.server.initial_camera.look_at = (0.0, 0.0, 0.3)
        self.server.initial_camera.position = tuple(np.array([0.0, 0.0, 0.3]) + CAMERA_OFFSET)
        self.server.gui.add_markdown(LEGEND)
        self._follow = self.server.gui.add_checkbox("Follow the robot", initial_value=True)
        self.bodies = {p.name: self._add_primitive(p) for p in primitives}
        self._focus: np.ndarray | None = None
        self._aimed: set[int] = set()  # clients whose camera was aimed at the robot
        self.overlays: dict[str, viser.SceneNodeHandle] = {}

    @property
    def port(self) -> int:
        return self.server.get_port()

    def has_clients(self) -> bool:
        """Whether a browser is connected (viser keeps the scene for one connecting later)."""
        return bool(self.server.get_clients())

    def _add_primitive(self, p: Primitive) -> viser.SceneNodeHandle:
        name = "/robot/" + p.name.replace("/", ".")
        color, opacity = rgb(p.color), (None if p.color[3] >= 1.0 else p.color[3])
        scene = self.server.scene
        if p.kind == "box":
            return scene.add_box(name, color=color, dimensions=p.scale, opacity=opacity, visible=False)
        if p.kind == "cylinder":
            return scene.add_cylinder(
                name, radius=p.scale[0] / 2, height=p.scale[2], color=color, opacity=opacity, visible=False
            )
        return scene.add_icosphere(name, radius=p.scale[0] / 2, color=color, opacity=opacity, visible=False)

    def update(self, s: Scene) -> None:
        """Draw ``s`` (finite: the caller checked ``Scene.is_finite``)."""
        with self.server.atomic():
            placed = set()
            for body in s.bodies:
                handle = self.bodies[body.primitive.name]
                handle.position = body.T[:3, 3]
                handle.wxyz = wxyz(body.T)
                handle.visible = True
                placed.add(body.primitive.name)
            for name, handle in self.bodies.items():
                if name not in placed:
                    handle.visible = False
            self._draw_overlays(s)
        if s.bodies:
            self._move_cameras(s.focus)

    def _draw_overlays(self, s: Scene) -> None:
        """(Re)draw every overlay of ``s``; the ones ``s`` no longer has are removed. ``self.overlays`` holds
        the handles of those drawn, by scene-tree name."""
        scene = self.server.scene
        drawn: dict[str, viser.SceneNodeHandle] = {}

        def lines(name: str, segments: np.ndarray, color: Rgba) -> None:
            drawn[name] = scene.add_line_segments(name, segments, rgb(color), thickness=STYLE.path_width)

        for name, path, color in (
            ("/overlays/estimated_path", s.estimated_path, STYLE.estimated_path_color),
            ("/overlays/true_path", s.true_path, STYLE.true_path_color),
            ("/overlays/planned_path", s.planned_path, STYLE.planned_path_color),
        ):
            if len(path) >= LINE_POINTS:
                lines(name, _segments(path), color)
        if len(s.force_arrows):
            shaft_diameter, head_diameter, head_length = STYLE.arrow
            drawn["/overlays/forces"] = scene.add_arrows(
                "/overlays/forces",
                s.force_arrows,
                rgb(STYLE.force_color),
                shaft_radius=shaft_diameter / 2,
                head_radius=head_diameter / 2,
                head_length=head_length,
            )
        polygon = s.support_polygon
        if len(polygon) >= POLYGON_POINTS:
            faces = np.array([[0, i, i + 1] for i in range(1, len(polygon) - 1)], dtype=np.uint32)
            drawn["/overlays/support_fill"] = scene.add_mesh_simple(
                "/overlays/support_fill",
                polygon + np.array([0.0, 0.0, 0.002]),  # just above the ground grid
                faces,
                color=rgb(STYLE.support_color),
                opacity=STYLE.support_color[3],
                side="double",
            )
        if len(polygon) >= LINE_POINTS:
            lines("/overlays/support_edge", _segments(polygon, closed=True), STYLE.support_edge_color)
        if s.com is not None and s.com_ground is not None:
            drawn["/overlays/com"] = scene.add_icosphere(
                "/overlays/com", radius=STYLE.com_diameter / 2, color=rgb(STYLE.com_color), position=s.com
            )
            lines("/overlays/com_line", np.array([[s.com, s.com_ground]]), STYLE.com_color)
            drawn["/overlays/com_ground"] = scene.add_cylinder(
                "/overlays/com_ground",
                radius=STYLE.com_diameter / 2,
                height=STYLE.disc_height,
                color=rgb(STYLE.com_color),
                position=s.com_ground,
            )
        for i, point in enumerate(s.footholds):
            name = f"/overlays/foothold_{i}"
            drawn[name] = scene.add_icosphere(
                name, radius=STYLE.foothold_diameter / 2, color=rgb(STYLE.foothold_color), position=point
            )
        for name in self.overlays.keys() - drawn.keys():
            scene.remove_by_name(name)
        self.overlays = drawn

    def _move_cameras(self, focus: np.ndarray) -> None:
        """Aim each client's camera at the robot once, as soon as the client reported its camera (a client
        connecting while the robot is away from the origin would otherwise look at where the initial camera
        was); then, with "follow", shift them with it each time it has moved FOLLOW_STEP horizontally (the
        "Reset View" target follows too)."""
        clients = [c for c in self.server.get_clients().values() if c.camera.update_timestamp != 0.0]
        for client in clients:
            if client.client_id not in self._aimed:
                self._aimed.add(client.client_id)
                aim(client.camera, focus)
        if self._focus is not None and np.linalg.norm((focus - self._focus)[:2]) < FOLLOW_STEP:
            return
        self.server.initial_camera.look_at = tuple(focus)
        self.server.initial_camera.position = tuple(focus + CAMERA_OFFSET)
        for client in clients:
            camera = client.camera
            if self._focus is None:
                aim(camera, focus)
            elif self._follow.value:
                delta = focus - self._focus
                camera.position = camera.position + delta  # viser moves the look-at point along
        self._focus = focus.copy()

    def stop(self) -> None:
        self.server.stop()
