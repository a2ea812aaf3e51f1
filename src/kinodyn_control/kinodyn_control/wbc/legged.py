"""The `wbc` node's legged mode: a thin adapter over ``kinodyn.control.locomotion.LocomotionController``.

The node's own legged settings (``LeggedSettings``) sit beside the controller's ``LocomotionParameters``
(same ROS parameter names as the fields). The command sent on a solved tick is the QP's torque as feed-forward
with the joint positions and velocities it predicts over ``pd_horizon`` as PD targets (gains ``joint_kp``,
``joint_kd``; 0 by default: pure torque). While no base state is available the node holds the posture with a
joint PD (``hold``); when control starts (again), the command is blended from that hold to the QP's over
``handover_time``: ``effort = s tau``, ``kp = (1 - s) hold_kp + s joint_kp`` (kd alike), desired position
and velocity the posture's until ``s = 1``, ``s = (t - t_start + pd_horizon) / handover_time`` (``pd_horizon``
is the tick, so the first tick has ``s = tick / handover_time``; 0 s: no blend). A switch in one tick from
the hold's torques to the QP's (quadruped in kinodyn.sim, 1.57 s of hold) drove the knee to its 80 N m limit
on the next tick and the base up at 0.2 m/s; with a 0.1 s handover the largest torque stays at the stance's
15 N m. A changed ``LocomotionParameters`` is applied live by ``LocomotionController.set_parameters`` (the
state kept; new gait timings at once, every foot's phase continuous; ``wbc_mode`` and ``solver`` refused:
restart the node). A gait the robot cannot make (``LocomotionController.unavailable``) is refused with the
reason. With ``planner`` ``mpc`` a centroidal MPC drives the QP (``MpcLocomotion``, docs/mpc.md) at
``mpc_rate``, its plans applied up to ``mpc_max_age`` old (both live; ``planner`` at start-up only).
The hold's gains are per joint: ``hold_kp`` / ``hold_kd`` when set (> 0), else (0, the default) derived from
the robot at its posture for a PD sampled every ``pd_horizon`` (the tick) with its fastest mode at
``hold_stability`` of the explicit PD's stability limit (``kinodyn.control.pd_stability.sampled_pd_gains``):
one absolute gain that holds a 36 kg robot makes a 13 kg robot's light calf diverge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from kinodyn.control.locomotion import MODES, LocomotionController, LocomotionParameters
from kinodyn.control.locomotion.mpc_locomotion import MpcLocomotion, MpcLocomotionParameters
from kinodyn.control.mpc import PlannerParameters
from kinodyn.control.pd_stability import sampled_pd_gains

from kinodyn_control.wbc.command import JointCommand, TickResult

if TYPE_CHECKING:
    from kinodyn import Model

PLANNERS = ("none", "mpc")
MIN_FEET = 3  # a support polygon, not a line


@dataclass(frozen=True)
class LeggedSettings:
    """The legged mode's node parameters (docs/nodes/wbc.md)."""

    feet: tuple[str, ...] = field(default=())
    posture: tuple[float, ...] = field(default=())  # nominal standing joint positions, URDF joint order
    locomotion_mode: str = "stand"  # requested: sit, stand, trot or walk (pace, bound: if the robot can)
    joint_kp: float = 0.0  # PD part of the command on a solved tick
    joint_kd: float = 0.0
    hold_kp: float = 0.0  # joint PD to the posture while no base state is available; 0: derived (module doc)
    hold_kd: float = 0.0
    hold_stability: float = 0.5  # of the sampled PD's stability limit, for the derived hold gains
    cmd_vel_timeout: float = 0.5  # s without cmd_vel: the velocity command goes to zero
    handover_time: float = 0.1  # s, blend from the hold to the QP's command when control starts
    base_max_speed: float = 5.0  # m/s: the base state gate (base_gate.py)
    base_max_rate: float = 10.0  # rad/s
    base_jump_position: float = 0.05  # m allowed on top of base_max_speed |dt|
    base_jump_angle: float = 0.1  # rad allowed on top of base_max_rate |dt|
    base_reanchor_time: float = 1.0  # s of refused base states after which the next one is the reference
    planner: str = "none"  # "mpc": a centroidal MPC drives the QP (module doc)
    mpc_rate: float = 50.0  # Hz, MPC solves started per second at most
    mpc_max_age: float = 0.06  # s: an older MPC plan is not applied (the controller's own references)

    def __post_init__(self) -> None:
        object.__setattr__(self, "feet", tuple(self.feet))
        object.__setattr__(self, "posture", tuple(float(x) for x in self.posture))
        if len(self.feet) < MIN_FEET or len(set(self.feet)) != len(self.feet) or not all(self.feet):
            raise ValueError(f"parameter feet must name at least three distinct foot frames, got "
                             f"{list(self.feet)}")
        if not self.posture or not all(math.isfinite(x) for x in self.posture):
            raise ValueError("parameter posture must hold the nominal standing joint positions (finite, in "
                             f"the URDF's joint order), got {list(self.posture)}")
        if self.locomotion_mode not in MODES:
            raise ValueError(f"parameter locomotion_mode must be one of {', '.join(MODES)}, got "
                             f"{self.locomotion_mode!r}")
        for name in ("joint_kp", "joint_kd", "hold_kp", "hold_kd", "handover_time"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"parameter {name} must be a finite number >= 0, got {value}")
        if not (math.isfinite(self.hold_stability) and 0.0 < self.hold_stability < 1.0):
            raise ValueError(f"parameter hold_stability must be in (0, 1) (of the sampled PD's stability "
                             f"limit), got {self.hold_stability}")
        for name in ("cmd_vel_timeout", "base_max_speed", "base_max_rate", "base_jump_position",
                     "base_jump_angle", "base_reanchor_time"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"parameter {name} must be a positive finite number, got {value}")
        if self.planner not in PLANNERS:
            raise ValueError(f"parameter planner must be one of {', '.join(PLANNERS)}, got {self.planner!r}")
        self.planner_parameters()  # ValueError naming the parameter

    def planner_parameters(self) -> PlannerParameters:
        """``mpc_rate`` and ``mpc_max_age`` as the MPC planner's parameters (ValueError naming them)."""
        try:
            return PlannerParameters(rate=self.mpc_rate, max_age=self.mpc_max_age)
        except ValueError as error:
            raise ValueError(f"parameters mpc_rate and mpc_max_age: {error}") from None


class LeggedController:
    """``LocomotionController`` on ``model`` (floating base) with the node's settings (module doc)."""

    def __init__(self, model: Model, settings: LeggedSettings, params: LocomotionParameters) -> None:
        if not model.floating_base:
            raise ValueError("mode legged needs a floating-base model")
        n = model.nv - 6
        if len(settings.posture) != n:
            raise ValueError(f"parameter posture has {len(settings.posture)} values; the URDF has {n} joints "
                             f"({', '.join(model.joint_names)})")
        self.model = model
        self.settings = settings
        self.params = params
        self.controller = LocomotionController(model, settings.feet, settings.posture, params)
        self.controller.request_mode(settings.locomotion_mode)
        self.mpc = (MpcLocomotion(self.controller,
                                  MpcLocomotionParameters(planner=settings.planner_parameters()))
                    if settings.planner == "mpc" else None)
        self._control_start: float | None = None  # t of the first tick since the last hold
        self.hold_gains = self._hold_gains(settings, params)
        self._joint_gains = self._solved_gains(settings)

    def _solved_gains(self, settings: LeggedSettings) -> tuple[np.ndarray, np.ndarray]:
        """The PD gains of a solved tick per joint (``joint_kp``, ``joint_kd``), made once per setting."""
        n = self.model.nv - 6
        return np.full(n, settings.joint_kp), np.full(n, settings.joint_kd)

    def _hold_gains(self, settings: LeggedSettings,
                    params: LocomotionParameters) -> tuple[np.ndarray, np.ndarray]:
        """The hold's ``(kp, kd)`` per joint: as set, or (0) derived (module doc)."""
        q = self.model.neutral()
        q[7:] = settings.posture
        kp, kd = sampled_pd_gains(self.model, q, params.pd_horizon, settings.hold_stability)
        n = kp.size
        return (np.full(n, settings.hold_kp) if settings.hold_kp > 0.0 else kp,
                np.full(n, settings.hold_kd) if settings.hold_kd > 0.0 else kd)

    def reconfigure(self, settings: LeggedSettings, params: LocomotionParameters) -> None:
        """New settings (feet and posture apply at start-up only) and parameters (live, module doc);
        ValueError with the reason, nothing changed, for what cannot change."""
        if settings.feet != self.settings.feet or settings.posture != self.settings.posture:
            raise ValueError("parameters feet and posture apply at start-up only: restart the node")
        if settings.planner != self.settings.planner:
            raise ValueError("parameter planner applies at start-up only: restart the node")
        if self.mpc is not None:  # first: ValueError for an age beyond the MPC's horizon, nothing changed
            self.mpc.planner.set_parameters(settings.planner_parameters())
        try:
            if params != self.params:
                self.controller.set_parameters(params)  # ValueError: nothing changed in the controller
            try:
                self.controller.request_mode(settings.locomotion_mode)  # ValueError: a gait it cannot make
            except ValueError:
                if params != self.params:
                    self.controller.set_parameters(self.params)
                raise
        except ValueError:
            if self.mpc is not None:  # nothing changed
                self.mpc.planner.set_parameters(self.settings.planner_parameters())
            raise
        self.params = params
        self.settings = settings
        self.hold_gains = self._hold_gains(settings, params)
        self._joint_gains = self._solved_gains(settings)

    def set_pose_offset(self, offset: tuple[float, ...]) -> None:
        """Standing base pose offsets (x, y, height, roll, pitch, yaw); ValueError beyond the limits."""
        self.controller.set_pose_offset(*offset)

    def hold(self) -> JointCommand:
        """Joint PD to the posture (``hold_gains``), no feed-forward: while the base state is
        missing (the estimator initialising) the robot keeps standing still."""
        self._control_start = None
        return self._hold_command()

    def _hold_command(self) -> JointCommand:
        n = len(self.settings.posture)
        s = self.settings
        kp, kd = self.hold_gains
        return JointCommand(np.array(s.posture), np.zeros(n), np.zeros(n), kp.copy(), kd.copy())

    def _blend(self, command: JointCommand, s: float) -> JointCommand:
        """``s`` of ``command`` and ``1 - s`` of the hold (module doc)."""
        hold = self._hold_command()
        return JointCommand(hold.position, hold.velocity, s * command.effort,
                            (1 - s) * hold.kp + s * command.kp, (1 - s) * hold.kd + s * command.kd)

    def tick(self, t: float, q: np.ndarray, v: np.ndarray, cmd: np.ndarray) -> TickResult:
        """One tick at the full floating-base state ``(q, v)`` (kinodyn's convention) with the body twist
        command ``cmd = (vx, vy, wz)``."""
        out = self.controller.update(q, v, t, cmd)
        errors = out.task_errors  # the core's copies of this tick's errors
        if not out.ok or out.tau is None or out.q_des is None or out.v_des is None:
            return TickResult(None, out.status, out.message, errors, out.stance, out.solve_time, out.mode,
                              out.footholds)
        s = self.settings
        kp, kd = self._joint_gains
        command = JointCommand(out.q_des, out.v_des, out.tau, kp.copy(), kd.copy())
        if self._control_start is None:
            self._control_start = t
        elapsed = t - self._control_start + self.params.pd_horizon
        blend = elapsed / s.handover_time if s.handover_time > 0.0 else 1.0
        if blend < 1.0:
            command = self._blend(command, blend)
        return TickResult(command, out.status, out.message, errors, out.stance, out.solve_time, out.mode,
                          out.footholds)
