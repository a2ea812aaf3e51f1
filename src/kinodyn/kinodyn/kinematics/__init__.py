"""Kinematics: forward kinematics, frame Jacobians and their drift, CoM, configuration space.

Each function takes the model first; ``kinodyn.Model`` exposes them as methods.
"""

from kinodyn.kinematics.center_of_mass import com, com_jacobian
from kinodyn.kinematics.configuration import difference, integrate
from kinodyn.kinematics.forward import frame_placement, frame_placements, frame_placements_batch
from kinodyn.kinematics.jacobians import REFERENCES, frame_bias_acceleration, frame_jacobian, manipulability

__all__ = [
    "REFERENCES",
    "com",
    "com_jacobian",
    "difference",
    "frame_bias_acceleration",
    "frame_jacobian",
    "frame_placement",
    "frame_placements",
    "frame_placements_batch",
    "integrate",
    "manipulability",
]
