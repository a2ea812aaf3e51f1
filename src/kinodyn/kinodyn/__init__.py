"""kinodyn: URDF-driven rigid-body kinematics, dynamics, estimation, control and simulation.

The core never imports ROS. The README and docs/core-model-layout.md show the public API.
"""

from kinodyn import (
    _numba_cache,  # noqa: F401  (first: files the kernels by package, _numba_cache.py)
    control,
    sim,
)
from kinodyn.ik import FrameTask, IKResult, solve_ik
from kinodyn.model import JOINT_FREEFLYER, JOINT_NONE, JOINT_PRISMATIC, JOINT_REVOLUTE, Model
from kinodyn.urdf import URDFError, URDFWarning

__all__ = [
    "JOINT_FREEFLYER",
    "JOINT_NONE",
    "JOINT_PRISMATIC",
    "JOINT_REVOLUTE",
    "FrameTask",
    "IKResult",
    "Model",
    "URDFError",
    "URDFWarning",
    "control",
    "sim",
    "solve_ik",
]
