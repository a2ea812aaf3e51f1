"""kinodyn: URDF-driven rigid-body kinematics, dynamics, estimation, control and simulation.

The core never imports ROS. See ARCHITECTURE.md §2 for the public API.
"""

from kinodyn.model import JOINT_FREEFLYER, JOINT_NONE, JOINT_PRISMATIC, JOINT_REVOLUTE, Model
from kinodyn.urdf import URDFError, URDFWarning

__all__ = [
    "JOINT_FREEFLYER",
    "JOINT_NONE",
    "JOINT_PRISMATIC",
    "JOINT_REVOLUTE",
    "Model",
    "URDFError",
    "URDFWarning",
]
