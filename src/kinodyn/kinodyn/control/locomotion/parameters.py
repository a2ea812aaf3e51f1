"""``LocomotionParameters``: every setting of the ``LocomotionController``, validated at construction.

One field per setting with its unit, so a ROS node maps its parameters 1:1 (docs/locomotion.md lists them).
Lengths of the legs' motion (step height, foothold reach) are fractions of the robot's leg length (the
controller measures it in the nominal stance), the gait period follows the leg's pendulum time
(``gait.pendulum_period``) with each two-beat gait's own ratio and duty unless set (``GAIT_TIMING``,
``LocomotionParameters.timing``), the contact ramp the gait's handover time and the joint limits'
look-ahead the trot's swing time unless set in seconds, and the joint acceleration cap is a multiple of
what the URDF's torque limits give the joints, so the defaults suit any size of robot.
Gains are given as the natural frequency of the task's error dynamics and a damping ratio
(``kinodyn.control.gains_from_frequency``: ``kp = omega^2``, ``kd = 2 D omega``, Robot Dynamics lecture
notes (ETH) (3.78)-(3.79)),
not as raw gains, so they do not depend on the robot's mass; unless set in Hz, each frequency is a multiple
of the leg's pendulum frequency ``sqrt(g / l) / (2 pi)`` (``task_frequencies``), so they follow the robot's
own time scale as the period does (dynamic similarity, ``gait.pendulum_period``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from types import MappingProxyType

from kinodyn.control.wbc import MODES as WBC_MODES
from kinodyn.control.wbc import Relaxation
from kinodyn.control.wbc.relaxation import DEFAULT_BOUND, DEFAULT_WEIGHT

GAITS = ("trot", "walk", "pace", "bound")
MODES = ("sit", "stand", *GAITS)


@dataclass(frozen=True)
class GaitTiming:
    """A two-beat gait's default ``period_ratio`` (its period over the leg's pendulum time ``2 pi
    sqrt(l / g)``, ``gait.pendulum_period``) and ``duty`` (stance fraction, in (0.5, 1))."""

    period_ratio: float
    duty: float


GAIT_TIMING = MappingProxyType({
    # the diagonal pairs' supports cross under the CoM; the CoM still sways off each diagonal as it moves
    # along it (with the stance time squared), and the legs' momentum surges the trunk while both pairs stand
    # (docs/locomotion.md): a short cycle and a short handover
    "trot": GaitTiming(0.3, 0.55),
    # each pair stands beside (pace: half the track away) or before or behind (bound: half the body's length)
    # the CoM, which falls away from that support line as an inverted pendulum while it stands on it: the
    # sway grows with the square of the time on one support, so these gaits cycle faster and each pair
    # stands for less of the cycle than the trot's (the bound's supports, farther away, the shortest cycle)
    "pace": GaitTiming(0.28, 0.55),
    "bound": GaitTiming(0.245, 0.55),
})
"""The trot's, pace's and bound's own timing: ``LocomotionParameters.period_ratio`` and ``duty`` left at 0
take these (``LocomotionParameters.timing``). The walk's cycle is ``walk_period_factor`` times the trot's."""

_POSITIVE = ("walk_period_factor", "yaw_frequency_ratio", "yaw_damping_ratio", "contact_ramp_ratio",
             "joint_acceleration_ratio", "fast_step_height_ratio", "joint_limit_horizon_ratio",
             "base_frequency_ratio",
             "swing_frequency_ratio", "posture_frequency_ratio", "friction", "transition_time",
             "max_tracking_error", "pd_horizon",
             "max_linear_acceleration", "max_angular_acceleration", "pose_linear_rate", "pose_angular_rate",
             "crouch_speed_ratio", "rise_speed_ratio", "foothold_reach_ratio",
             "relaxation_weight", "relaxation_bound")
HANDOVER_DUTY = 0.5  # a two-beat gait's duty above it: both groups down while the load changes hands
MAX_RAMP = 0.5  # a flat-topped swing's ramps up and down meet at its middle
_DERIVED = ("period", "contact_ramp", "joint_limit_horizon", "base_frequency",
            "swing_frequency", "posture_frequency")  # 0: derived from the robot (controller doc)
_NON_NEGATIVE = ("period", "period_ratio", "contact_ramp", "joint_limit_horizon", "base_frequency",
                 "swing_frequency", "posture_frequency", "qp_regularization", "max_support_offset_ratio",
                 "step_height_ratio", "swing_speed_ratio", "deadbeat_speed_ratio", "swing_load_ratio",
                 "min_step_height_ratio",
                 "swing_ramp", "damping_ratio", "com_damping_ratio", "swing_weight", "fast_swing_weight",
                 "posture_weight", "capture_gain",
                 "stance_reach_ratio", "max_forward_velocity", "max_lateral_velocity",
                 "max_yaw_rate",
                 "max_pose_shift", "max_pose_angle")

_AT_MOST_ONE = {"contact_ramp_ratio": "(0, 1]",
                "foothold_reach_ratio": "(0, 1] (of the legs' full extension)",
                "stance_reach_ratio": "[0, 1] (of the legs' full extension; 0: never lower the base for it)"}


@dataclass(frozen=True)
class LocomotionParameters:
    """Settings of the ``LocomotionController`` (SI units; docs/locomotion.md)."""

    period: float = 0.0  # s, cycle of the trot, pace and bound; 0: period_ratio 2 pi sqrt(l / g)
    period_ratio: float = 0.0  # k of that law, l the leg length, hip to foot (gait.pendulum_period); 0: each
    # gait's own (GAIT_TIMING), > 0: this for the trot, pace and bound
    duty: float = 0.0  # stance fraction of the trot, pace and bound, in (1/2, 1) (both groups down at a
    # handover); 0: each gait's own (GAIT_TIMING)
    walk_period_factor: float = 7.0 / 3.0  # the walk's cycle over the trot's (with the trot's own timing: 0.7
    # 2 pi sqrt(l / g), its swing 0.2 x 0.7 of that unit, about the trot's 0.45 x 0.3)
    walk_duty: float = 0.8  # stance fraction of the walk (> 3/4 on four feet: all four down at a handover)
    step_height_ratio: float = 0.16  # swing foot clearance at mid-swing, a fraction of the leg length
    swing_speed_ratio: float = 0.75  # the swing foot's peak speed relative to its hip at the command limits
    # over the speed its leg's joints give it (timing.py) at most this: past it, the fast swing below; 0: the
    # duty, swing blend and step height as set at any speed
    min_duty: float = 0.52  # the fast swing: the largest duty in [min_duty, duty] within that ratio (in
    # (0.5, 1); the lower of the two when min_duty > duty),
    fast_swing_ramp: float = 0.3  # the flat-topped blend (unless swing_ramp is set)
    fast_step_height_ratio: float = 0.1  # and the lower of this and step_height_ratio (of the leg length)
    swing_load_ratio: float = 0.75  # the stance joints' peak load over their effort limits, with the weight
    # on one group of feet and the swing legs' reaction, at most this: a lower step past it (timing.py); 0:
    # the step height as set whatever the torques
    min_step_height_ratio: float = 0.05  # of the leg length: that fit's lowest step
    swing_ramp: float = 0.0  # 0: minimum-jerk horizontal swing; in (0, 1/2]: flat-topped, its speed ramping
    # up and down over this fraction of the swing at each end (lower peak joint speeds; swing.py)
    contact_ramp: float = 0.0  # s, force ramp at lift-off and touchdown, <= the gait's handover time;
    # 0: contact_ramp_ratio of the handover (Gait.handover: (duty - 1/2) period for the two-beat gaits)
    contact_ramp_ratio: float = 0.8  # in (0, 1]
    max_support_offset_ratio: float = 0.1  # a gait whose stance feet leave the centre of their pattern more
    # than this (of the leg length) outside their support at some phase is refused (gait.support_distance)
    joint_acceleration_ratio: float = 2.0  # joint acceleration cap over the largest a joint gets from the
    # torque limits at the nominal stance, body free (controller doc)
    joint_limit_horizon: float = 0.0  # s, look-ahead of the joint position/velocity limits (wbc JointLimits);
    # 0: joint_limit_horizon_ratio of the trot's swing time (1 - duty) period, at construction
    joint_limit_horizon_ratio: float = 0.1
    base_frequency: float = 0.0  # Hz, CoM (x, y), base height and orientation error dynamics; 0: the ratio
    base_frequency_ratio: float = 4.28  # below times the leg's pendulum frequency sqrt(g / l) / (2 pi)
    yaw_frequency_ratio: float = 1.0  # the base yaw's error dynamics at this multiple of the base frequency
    # (> 1: a stiffer yaw against the swing legs' reaction about the vertical, docs/locomotion.md)
    yaw_damping_ratio: float = 2.0  # the base yaw's (its yaw-rate feedback 2 D omega; damping_ratio the other
    # tasks'); higher damps the swing legs' reaction about the vertical (docs/locomotion.md)
    swing_frequency: float = 0.0  # Hz, swing feet; 0: swing_frequency_ratio times the pendulum frequency
    swing_frequency_ratio: float = 7.13
    posture_frequency: float = 0.0  # Hz, joint posture (null space); 0: posture_frequency_ratio times it
    posture_frequency_ratio: float = 1.43
    damping_ratio: float = 1.0  # of every task but the CoM's and the yaw's (1: critical)
    com_damping_ratio: float = 2.0  # the CoM (x, y) task's (its velocity feedback 2 D omega): at 1 the CoM's
    # sideways position and the footholds' cycle-averaged velocity feedback beat slowly (docs/locomotion.md);
    # damping_ratio on the plan of a planner that moves the CoM
    swing_weight: float = 0.3  # of the swing-foot tasks (the base and CoM tasks have weight 1: below it, a
    # swing foot chasing its foothold yields to the body's balance, docs/locomotion.md)
    fast_swing_weight: float = 1.0  # theirs in the fast swing (a long stride near the joints' speed limits:
    # a foot that lags lands short)
    posture_weight: float = 1e-4
    friction: float = 0.6  # the controller's Coulomb coefficient (a margin below the ground's)
    capture_gain: float = 0.6  # foothold feedback gain on the capture point (1: the pendulum's, deadbeat; it
    # also takes the trot's own lateral sway on a diagonal support line for an error and amplifies it)
    deadbeat_speed_ratio: float = 0.1  # of sqrt(g l): a velocity error beyond it (a push, not the trot's own
    # sway) gets the full capture point for its excess (footholds.capture_gain)
    foothold_reach_ratio: float = 0.85  # in (0, 1]: the footholds' offset from their place in the support
    # pattern at most what keeps each foot within this fraction of its leg's full extension (leg_reach) at the
    # nominal height; the rest is room for the body rising while it brakes a push (docs/locomotion.md)
    stance_reach_ratio: float = 0.95  # in [0, 1]: the base is lowered (down to the sitting height) so that
    # every stance leg stays within this fraction of its full extension until it lifts, and every swing
    # leg at its foothold until the end of its next stance, the hips moving at the CoM's velocity (a pushed
    # robot crouches instead of vaulting over straight legs, docs/locomotion.md); 0: never
    crouch_speed_ratio: float = 0.5  # of sqrt(g l): how fast [m/s] the base goes down for it,
    rise_speed_ratio: float = 0.1  # and back up
    max_forward_velocity: float = 0.5  # m/s, |vx| command clipped to it (the defaults: what the quadruped
    max_lateral_velocity: float = 0.2  # m/s  tracks under any mix of them, docs/locomotion.md); for the trot,
    max_yaw_rate: float = 0.6  # rad/s     pace and bound; scaled for the walk (controller doc)
    max_linear_acceleration: float = 1.0  # m/s^2, of the command (rate limiter)
    max_angular_acceleration: float = 2.0  # rad/s^2
    max_tracking_error: float = 0.1  # m (and rad for the yaw): the integrated reference stays this close
    sit_height_ratio: float = 0.5  # base height sitting, as a fraction of the nominal stance's
    transition_time: float = 1.5  # s, stand-up and sit-down (minimum-jerk height change)
    max_pose_shift: float = 0.1  # m, standing base pose offsets (x, y, height) at most
    max_pose_angle: float = 0.35  # rad, standing base roll, pitch, yaw offsets at most
    pose_linear_rate: float = 0.1  # m/s, how fast the standing pose offsets move
    pose_angular_rate: float = 0.5  # rad/s
    pd_horizon: float = 0.002  # s, the desired joint positions/velocities predict this far (the tick)
    initial_mode: str = "stand"  # at the first update: "sit" or "stand" (height goes there, min-jerk)
    wbc_mode: str = "weighted"  # or "hierarchical"
    solver: str = "daqp"
    qp_regularization: float = 1e-7  # the QP's ridge (WholeBodyController regularization; controller doc)
    fallback_solver: str = "osqp"  # asked when ``solver`` fails a tick ("" for none); named in the message
    relaxation: bool = True  # a tick whose QP is infeasible answered with soft limits (wbc ``Relaxation``)
    relaxation_weight: float = DEFAULT_WEIGHT  # the soft limits' penalty over the QP's largest cost curvature
    relaxation_bound: float = DEFAULT_BOUND  # the largest violation of a bounded stage, of each row's limit

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _POSITIVE and not (isinstance(value, (int, float)) and math.isfinite(value)
                                            and value > 0.0):
                raise ValueError(f"locomotion parameter {f.name} must be a finite number > 0, got {value!r}")
            if f.name in _NON_NEGATIVE and not (isinstance(value, (int, float)) and math.isfinite(value)
                                                and value >= 0.0):
                derived = " (0: derived from the robot)" if f.name in _DERIVED else \
                    " (0: each gait's own, GAIT_TIMING)" if f.name == "period_ratio" else ""
                raise ValueError(f"locomotion parameter {f.name} must be a finite number >= 0{derived}, got "
                                 f"{value!r}")
        if not (isinstance(self.duty, (int, float)) and (self.duty == 0.0 or HANDOVER_DUTY < self.duty < 1)):
            raise ValueError(f"locomotion parameter duty must be in (0.5, 1) (both groups of a trot, pace or "
                             f"bound must share the load while it changes hands) or 0 (each gait's own), got "
                             f"{self.duty!r}")
        if not (isinstance(self.min_duty, (int, float)) and HANDOVER_DUTY < self.min_duty < 1.0):
            raise ValueError(f"locomotion parameter min_duty must be in (0.5, 1), got {self.min_duty!r}")
        if not (isinstance(self.fast_swing_ramp, (int, float)) and 0.0 < self.fast_swing_ramp <= MAX_RAMP):
            raise ValueError(f"locomotion parameter fast_swing_ramp must be in (0, 1/2], got "
                             f"{self.fast_swing_ramp!r}")
        if self.swing_ramp > MAX_RAMP:
            raise ValueError(f"locomotion parameter swing_ramp must be in [0, 1/2] (0: minimum jerk), got "
                             f"{self.swing_ramp!r}")
        if not (0.0 < self.walk_duty < 1.0):
            raise ValueError(f"locomotion parameter walk_duty must be in (0, 1), got {self.walk_duty!r}")
        for name, allowed in _AT_MOST_ONE.items():
            if getattr(self, name) > 1.0:
                raise ValueError(f"locomotion parameter {name} must be in {allowed}, got "
                                 f"{getattr(self, name)!r}")
        duty = self.timing("trot")[1]
        if self.period > 0.0 and self.contact_ramp > (duty - 0.5) * self.period + 1e-12:
            raise ValueError(f"locomotion parameter contact_ramp ({self.contact_ramp} s) must fit in the "
                             f"time both trot groups are down, (duty - 1/2) period = "
                             f"{(duty - 0.5) * self.period:.4f} s: lower it, or raise duty or period")
        if not (0.0 < self.sit_height_ratio < 1.0):
            raise ValueError(f"locomotion parameter sit_height_ratio must be in (0, 1), got "
                             f"{self.sit_height_ratio!r}")
        if self.initial_mode not in ("sit", "stand"):
            raise ValueError(f"locomotion parameter initial_mode must be 'sit' or 'stand', got "
                             f"{self.initial_mode!r}")
        if not isinstance(self.relaxation, bool):
            raise ValueError(f"locomotion parameter relaxation must be true or false, got "
                             f"{self.relaxation!r}")
        if self.wbc_mode not in WBC_MODES:
            raise ValueError(f"locomotion parameter wbc_mode must be one of {WBC_MODES}, got "
                             f"{self.wbc_mode!r}")

    def wbc_relaxation(self) -> Relaxation:
        """How the whole-body QP answers an infeasible tick (``relaxation``, its weight and bound)."""
        return Relaxation(self.relaxation, self.relaxation_weight, self.relaxation_bound)

    def timing(self, gait: str) -> tuple[float, float]:
        """The period ratio and the duty of the two-beat ``gait`` (``trot``, ``pace``, ``bound``): each as
        set, or (0) the gait's own (``GAIT_TIMING``)."""
        own = GAIT_TIMING[gait]
        return (self.period_ratio if self.period_ratio > 0.0 else own.period_ratio,
                self.duty if self.duty > 0.0 else own.duty)

    def task_frequencies(self, pendulum_frequency: float) -> tuple[float, float, float]:
        """The base, swing and posture tasks' frequencies [Hz] for a leg of ``pendulum_frequency``
        ``sqrt(g / l) / (2 pi)`` [Hz]: each as set, or (0) its ratio times the pendulum frequency."""
        return tuple(given if given > 0.0 else ratio * pendulum_frequency  # type: ignore[return-value]
                     for given, ratio in ((self.base_frequency, self.base_frequency_ratio),
                                          (self.swing_frequency, self.swing_frequency_ratio),
                                          (self.posture_frequency, self.posture_frequency_ratio)))

    def limit_horizon(self, swing_time: float) -> float:
        """The joint limits' look-ahead [s]: ``joint_limit_horizon``, or (0) its ratio of ``swing_time``
        [s]."""
        return self.joint_limit_horizon if self.joint_limit_horizon > 0.0 else \
            self.joint_limit_horizon_ratio * swing_time
