"""Contact spheres of a URDF: the ``<collision><geometry><sphere>`` elements of its links.

The simulator's contact points are spheres against the ground plane (urdf/README.md: the foot
frame of the quadruped is the centre of a 0.03 m sphere). Other collision shapes (boxes,
cylinders) are not contact geometry here and are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.urdf import ParsedURDF, read_urdf

if TYPE_CHECKING:
    from pathlib import Path

    from kinodyn.model import Model


@dataclass(frozen=True)
class ContactSphere:
    """A sphere of radius ``radius`` centred at ``center`` (link frame) on URDF link ``link``."""

    link: str
    center: tuple[float, float, float]
    radius: float


def collision_spheres(source: str | Path | ParsedURDF) -> tuple[ContactSphere, ...]:
    """Every ``<collision>`` sphere of the URDF (path, XML text or ``read_urdf`` result), in link order.

    The centre is the collision ``<origin xyz>`` (a sphere's orientation does not matter); ``read_urdf``
    has checked that every radius is positive and every number finite.
    """
    return tuple(ContactSphere(link.name, sphere.center, sphere.radius)
                 for link in read_urdf(source).links for sphere in link.collision_spheres)


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
