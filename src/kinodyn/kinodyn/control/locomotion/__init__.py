"""Legged locomotion over the whole-body QP: gaits, swing-foot trajectories, footholds, the controller.

- ``gait``: ``Gait``, ``stand``, ``trot``, ``alternating_groups``, ``GaitScheduler`` (phases, safe switching);
- ``swing``: ``SwingTrajectory`` / ``swing_point`` (minimum-jerk with a clearance bump, analytic derivatives);
- ``footholds``: ``raibert_foothold`` (Raibert 1986 with capture-point feedback, Pratt et al. 2006);
- ``controller``: ``LocomotionController`` (sit, stand, trot; ``LocomotionParameters``). docs/locomotion.md.
"""

from kinodyn.control.locomotion.controller import LocomotionController, LocomotionOutput
from kinodyn.control.locomotion.footholds import arc_displacement, raibert_foothold
from kinodyn.control.locomotion.gait import (
    FootPhase,
    Gait,
    GaitScheduler,
    GaitState,
    alternating_groups,
    stand,
    trot,
)
from kinodyn.control.locomotion.parameters import MODES, LocomotionParameters
from kinodyn.control.locomotion.swing import SwingTrajectory, swing_point

__all__ = [
    "MODES",
    "FootPhase",
    "Gait",
    "GaitScheduler",
    "GaitState",
    "LocomotionController",
    "LocomotionOutput",
    "LocomotionParameters",
    "SwingTrajectory",
    "alternating_groups",
    "arc_displacement",
    "raibert_foothold",
    "stand",
    "swing_point",
    "trot",
]
