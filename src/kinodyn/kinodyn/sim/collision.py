"""Contact spheres of a URDF: the ``<collision><geometry><sphere>`` elements of its links.

The simulator's contact points are spheres against the ground plane (urdf/README.md: the foot
frame of the quadruped is the centre of a 0.03 m sphere). Other collision shapes (boxes,
cylinders) are not contact geometry here and are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.urdf import URDFError, _parse_robot, _read_text

if TYPE_CHECKING:
    from kinodyn.model import Model


@dataclass(frozen=True)
class ContactSphere:
    """A sphere of radius ``radius`` centred at ``center`` (link frame) on URDF link ``link``."""

    link: str
    center: tuple[float, float, float]
    radius: float


def collision_spheres(source: str | Path) -> tuple[ContactSphere, ...]:
    """Every ``<collision>`` sphere of the URDF (path or XML text), in link order.

    The centre is the collision ``<origin xyz>`` (a sphere's orientation does not matter).
    """
    robot = _parse_robot(_read_text(source))
    spheres = []
    for link in robot.links:
        for collision in link.collisions:
            geometry = collision.geometry
            if type(geometry).__name__ != "Sphere":
                continue
            if not geometry.radius > 0.0:
                raise URDFError(f"link {link.name!r}: collision sphere radius must be > 0, "
                                f"got {geometry.radius}")
            origin = collision.origin
            xyz = origin.xyz if origin is not None and origin.xyz is not None else [0.0, 0.0, 0.0]
            spheres.append(ContactSphere(link.name, tuple(float(x) for x in xyz), float(geometry.radius)))
    return tuple(spheres)


def sphere_arrays(model: Model, spheres: tuple[ContactSphere, ...]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(body, offset, radius)``: each sphere's body index, its centre in the body frame, its radius."""
    body = np.empty(len(spheres), dtype=np.int64)
    offset = np.empty((len(spheres), 3))
    radius = np.empty(len(spheres))
    for k, sphere in enumerate(spheres):
        frame = model.frame_id(sphere.link)
        body[k] = model.frame_body[frame]
        offset[k] = model.frame_rotation[frame] @ np.asarray(sphere.center) + model.frame_translation[frame]
        radius[k] = sphere.radius
    return body, offset, radius
