"""Legged locomotion over the whole-body QP: gaits, swing-foot trajectories, footholds, the controller.

- ``gait``: ``Gait``, ``stand``, ``walk``, ``trot``, ``pace``, ``bound`` (``two_beat``), their feet's groups
  (``alternating_groups``, ``lateral_groups``, ``fore_aft_groups``, ``footfall_sequence``), the period law
  ``pendulum_period``, ``support_distance``, ``GaitScheduler`` (phases, phase-continuous switching);
- ``swing``: ``SwingTrajectory`` / ``swing_point`` (minimum-jerk with a clearance bump, analytic derivatives);
- ``footholds``: ``raibert_foothold`` (Raibert 1986 with capture-point feedback, Pratt et al. 2006);
- ``controller``: ``LocomotionController`` (sit, stand and the gaits; ``LocomotionParameters``, the
  two-beat gaits' own timing ``GAIT_TIMING``), ``leg_length`` (what its defaults scale with).
  docs/locomotion.md.
"""

from kinodyn.control.locomotion.controller import (
    LocomotionController,
    LocomotionOutput,
    leg_length,
    torque_acceleration,
)
from kinodyn.control.locomotion.footholds import arc_displacement, raibert_foothold
from kinodyn.control.locomotion.gait import (
    FootPhase,
    Gait,
    GaitScheduler,
    GaitState,
    alternating_groups,
    bound,
    footfall_sequence,
    fore_aft_groups,
    lateral_groups,
    pace,
    pendulum_period,
    stand,
    support_distance,
    trot,
    two_beat,
    walk,
)
from kinodyn.control.locomotion.parameters import GAIT_TIMING, GAITS, MODES, GaitTiming, LocomotionParameters
from kinodyn.control.locomotion.swing import SwingTrajectory, swing_point

__all__ = [
    "GAITS",
    "GAIT_TIMING",
    "MODES",
    "FootPhase",
    "Gait",
    "GaitScheduler",
    "GaitState",
    "GaitTiming",
    "LocomotionController",
    "LocomotionOutput",
    "LocomotionParameters",
    "SwingTrajectory",
    "alternating_groups",
    "arc_displacement",
    "bound",
    "footfall_sequence",
    "fore_aft_groups",
    "lateral_groups",
    "leg_length",
    "pace",
    "pendulum_period",
    "raibert_foothold",
    "stand",
    "support_distance",
    "swing_point",
    "torque_acceleration",
    "trot",
    "two_beat",
    "walk",
]
