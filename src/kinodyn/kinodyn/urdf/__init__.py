"""The one URDF front door: ``read_urdf`` parses and validates a URDF once for every consumer.

``kinodyn.Model.from_urdf``, ``kinodyn.sim.collision_spheres``, the TF tree of kinodyn_ros and the
``<ros2_control>`` / limit parser of kinodyn_control all go through ``read_urdf`` (``document.py``), so a
file is accepted or refused identically everywhere with the same one-line ``URDFError``.
"""

from kinodyn.urdf.document import Inertial, Joint, Link, Mimic, ParsedURDF, Pose, Sphere, read_urdf
from kinodyn.urdf.errors import URDFError, URDFWarning
from kinodyn.urdf.model_fields import model_fields, rpy_to_rotation
from kinodyn.urdf.source import decode

__all__ = [
    "Inertial",
    "Joint",
    "Link",
    "Mimic",
    "ParsedURDF",
    "Pose",
    "Sphere",
    "URDFError",
    "URDFWarning",
    "decode",
    "model_fields",
    "read_urdf",
    "rpy_to_rotation",
]
