"""A URDF's visual geometry as primitives: box, cylinder and sphere, each placed in its link's frame.

URDF ``<visual>`` semantics (ROS URDF XML spec, link element): the geometry sits at the visual
``<origin>`` (roll-pitch-yaw about fixed axes, ``C = Cz(yaw) Cy(pitch) Cx(roll)``, Robot Dynamics lecture
notes (ETH), (2.41)) in the link frame; a box is centred with edges ``size``, a cylinder is centred with its
axis along z, a sphere is centred. Meshes are not drawn: ``robot_primitives`` names the links whose meshes it
left out (one log line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from kinodyn.spatial import euler_to_matrix, homogeneous_transform

if TYPE_CHECKING:
    from kinodyn.urdf import ParsedURDF

Rgba = tuple[float, float, float, float]

BODY_COLOR: Rgba = (0.16, 0.27, 0.42, 1.0)
"""Root link without a URDF material: slate blue."""
LIMB_COLOR: Rgba = (0.55, 0.58, 0.62, 1.0)
"""Boxes and cylinders of the other links without a URDF material: grey."""
SPHERE_COLOR: Rgba = (0.12, 0.12, 0.14, 1.0)
"""Spheres (feet, as a rule) without a URDF material: near black."""


@dataclass(frozen=True)
class Primitive:
    """One visual of ``link``: ``kind`` is "box", "cylinder" or "sphere"; ``scale`` is the extent along the
    primitive's x, y, z axes (RViz's Marker.scale: box edges, cylinder diameter, diameter, length, sphere
    diameter three times); ``T_link`` places the primitive's centre and axes in the link frame."""

    link: str
    index: int
    kind: str
    scale: tuple[float, float, float]
    T_link: np.ndarray
    color: Rgba

    @property
    def name(self) -> str:
        """Unique within a robot: ``<link>/visual_<index>``."""
        return f"{self.link}/visual_{self.index}"


def _origin(origin: Any) -> np.ndarray:  # noqa: ANN401  (urdf_parser_py has no type hints)
    xyz = [0.0, 0.0, 0.0] if origin is None or origin.xyz is None else [float(x) for x in origin.xyz]
    rpy = [0.0, 0.0, 0.0] if origin is None or origin.rpy is None else [float(x) for x in origin.rpy]
    roll, pitch, yaw = rpy
    return homogeneous_transform(euler_to_matrix([yaw, pitch, roll], "zyx"), np.array(xyz))


def _scale(geometry: Any) -> tuple[str, tuple[float, float, float]] | None:  # noqa: ANN401  (urdf_parser_py has no type hints)
    """``(kind, scale)`` of a primitive geometry; None for a mesh (or any other geometry)."""
    kind = type(geometry).__name__
    if kind == "Box":
        x, y, z = (float(s) for s in geometry.size)
        return "box", (x, y, z)
    if kind == "Cylinder":
        d = 2.0 * float(geometry.radius)
        return "cylinder", (d, d, float(geometry.length))
    if kind == "Sphere":
        d = 2.0 * float(geometry.radius)
        return "sphere", (d, d, d)
    return None


def _color(visual: Any, materials: dict[str, Any], default: Rgba) -> Rgba:  # noqa: ANN401  (urdf_parser_py has no type hints)
    """The visual's material colour: its own ``<color rgba>``, else the robot-level material of that name."""
    material = visual.material
    if material is None:
        return default
    color = (
        material.color if material.color is not None else getattr(materials.get(material.name), "color", None)
    )
    if color is None or color.rgba is None:
        return default
    r, g, b, a = (float(np.clip(c, 0.0, 1.0)) for c in color.rgba)
    return (r, g, b, a)


def robot_primitives(urdf: ParsedURDF) -> tuple[tuple[Primitive, ...], tuple[str, ...]]:
    """``(primitives, links whose mesh visuals were left out)``, links in file order."""
    materials = {m.name: m for m in urdf.robot.materials}
    primitives: list[Primitive] = []
    skipped: list[str] = []
    for link in urdf.robot.links:
        for index, visual in enumerate(link.visuals):
            shape = _scale(visual.geometry)
            if shape is None:
                skipped.append(link.name)
                continue
            kind, scale = shape
            if kind == "sphere":
                default = SPHERE_COLOR
            else:
                default = BODY_COLOR if link.name == urdf.root_link else LIMB_COLOR
            primitives.append(
                Primitive(
                    link.name, index, kind, scale, _origin(visual.origin), _color(visual, materials, default)
                )
            )
    return tuple(primitives), tuple(dict.fromkeys(skipped))
