"""kinodyn: URDF-driven rigid-body kinematics, dynamics, estimation, control and simulation.

The core never imports ROS. The README and docs/core-model-layout.md show the public API.
``kinodyn.control`` and ``kinodyn.sim`` are imported on first use (``kinodyn.sim.Simulator`` works after a
plain ``import kinodyn``): a process that needs neither, as most nodes, starts without them and SciPy's
optimizers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kinodyn import _numba_cache  # noqa: F401  (first: files the kernels by package, _numba_cache.py)
from kinodyn.ik import FrameTask, IKResult, solve_ik
from kinodyn.model import JOINT_FREEFLYER, JOINT_NONE, JOINT_PRISMATIC, JOINT_REVOLUTE, Model
from kinodyn.urdf import URDFError, URDFWarning

if TYPE_CHECKING:
    from types import ModuleType

    from kinodyn import control, sim

_ON_FIRST_USE = ("control", "sim")


def __getattr__(name: str) -> ModuleType:
    """``kinodyn.control`` and ``kinodyn.sim``, imported when first asked for."""
    if name in _ON_FIRST_USE:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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
