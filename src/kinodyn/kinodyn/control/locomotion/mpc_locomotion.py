"""``MpcLocomotion``: a centroidal MPC drives the ``LocomotionController``'s whole-body QP.

The two-level scheme of Robot Dynamics Essential §4.4 (after Di Carlo et al., IROS 2018): the convex
single-rigid-body MPC
(``kinodyn.control.mpc``) plans the contact forces and the body's motion over a horizon; the whole-body QP
tracks both. Plugged into the controller's ``planner`` hook, on every tick, in ``stand`` and in the gaits:

1. ``MpcPlanner.step`` advances the solve in progress by one part, or starts one (``rate``) from the
   tick's inputs: the SRB state of the measured ``(q, v)``; the reference states from the controller's own
   references (CoM (x, y), base height and orientation, the rate-limited command twist:
   ``schedule.velocity_reference``), so the MPC follows what the controller would; the contact schedule
   predicted from the gait state; the feet now (a swing foot at its foothold) and their next footholds (a
   swing foot's the controller's, a stance foot's the Raibert/capture-point foothold of its next stance with
   the controller's settings: ``footholds.raibert_foothold``);
2. with a plan in force (``max_age``), sampled at the tick's time from its start ``t0`` (zero-order hold
   of the forces over each MPC step, as its model): each foot's ``ContactForceTask`` (one per foot, added
   to the QP's first level) gets the planned force and the weight ``force_weight / m^2`` while the plan has
   the foot in stance and the QP holds its contact (a newton of force error counts as the CoM acceleration
   error it makes, times ``force_weight``: the same on any robot; 1 would weigh it as the CoM task's own
   error; the gait in force's, ``GAIT_WEIGHTS``, unless set), else weight 0; the CoM task gets the planned
   CoM position, velocity and acceleration (``sum f / m + g``, exact over a step), the base task the
   planned orientation with its rates. The base height keeps the controller's reference, anchored to the
   ground under the feet (the plan's starts from the measured height and returns to the reference over the
   horizon: following it, the body sank further under a push);
3. without one (no plan yet, a failed solve, a plan too old, or a mode other than ``stand`` and the gaits),
   the force tasks' weights are 0 and the controller's references stand: its behaviour without the MPC.
   ``status`` (``planner.PlannerStatus``) says which.

The MPC's friction pyramids take the controller's ``friction`` (a live change sets up a new MPC). Its step
and state weights (``MpcLocomotionParameters.mpc``) are given for a leg of ``REFERENCE_LEG_LENGTH`` and
scaled to the robot's leg (``LocomotionController.leg_length``) by dynamic similarity
(``MpcParameters.scaled``), as the gait's period follows the leg's pendulum time: the horizon spans about
one trot cycle, and an error of the same fraction of the robot's size costs the same, on any robot
(``scale_to_leg`` False: as given, SI). The MPC's SRB is the whole robot locked in its nominal
stance (``SingleRigidBody.from_model``); its contact points are the foot frames, the QP's. Each solve weighs
the roll, pitch and yaw with the weights of the gait in force when it starts (``stand`` while standing or
stopping; ``GAIT_WEIGHTS``, unless ``orientation_weight`` is set; ``CentroidalMpc.set_weights``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.locomotion.footholds import raibert_foothold
from kinodyn.control.locomotion.parameters import GAITS
from kinodyn.control.mpc import (
    CentroidalMpc,
    MpcParameters,
    contact_schedule,
    foothold_plan,
    velocity_reference,
)
from kinodyn.control.mpc.planner import Inputs, MpcPlanner, Plan, PlannerParameters, PlannerStatus
from kinodyn.control.mpc.srb import (
    ANGULAR_VELOCITY,
    LINEAR_VELOCITY,
    ORIENTATION,
    POSITION,
    rpy_matrices,
)
from kinodyn.control.wbc.tasks import ContactForceTask
from kinodyn.spatial.rotations import matrix_to_euler

if TYPE_CHECKING:
    from kinodyn.control.locomotion.controller import LocomotionController
    from kinodyn.control.locomotion.gait import GaitState

PLANNED_MODES = ("stand", *GAITS)
# m: the leg (hip to foot) MpcLocomotionParameters.mpc's dt and state weights are for: the project quadruped's
# (urdf/quadruped.urdf), on which they were chosen
REFERENCE_LEG_LENGTH = 0.5052
_AXES = 3  # roll, pitch, yaw


@dataclass(frozen=True)
class GaitWeights:
    """A mode's MPC ``orientation_weight`` (roll, pitch, yaw, per rad^2: ``MpcParameters``) and the force
    tasks' ``force_weight`` (in units of ``1 / m^2``: module doc)."""

    orientation_weight: tuple[float, float, float]
    force_weight: float


# The body held level: the roll and pitch weighted heavily (at speed, the trot's pitching and rolling
# otherwise grows until a stance leg's joints pass their velocity limits and the QP has no answer), and the
# plan's forces weighed below the CoM task's error: the QP's own CoM and base feedback keeps the last word
# over forces planned on a model that sees neither the swing legs nor the stance legs' compliance.
_LEVEL = GaitWeights((60.0, 60.0, 10.0), 0.1)

GAIT_WEIGHTS = MappingProxyType({
    "stand": _LEVEL,
    "walk": _LEVEL,
    "trot": _LEVEL,  # the diagonal supports cross under the CoM: the body need not roll nor pitch
    # A pace's supports (the left pair, the right pair) stand beside the CoM, a bound's (the front pair, the
    # hind pair) before and behind it: the body rolls (pace) or pitches (bound) over each support as part of
    # the gait, so that angle's weight is low (the plan lets the body tip over the pair it stands on and be
    # caught by the next, rather than spend the forces holding it level against the gait; the convex MPC's
    # dynamics, linearised about the reference yaw, take the roll and pitch as small: Robot Dynamics
    # Essential §4.4 after Di Carlo et al., IROS 2018), and the plan's forces are followed closely (a force
    # error weighs as the CoM error it makes): they carry the CoM from one support line to the next, which
    # the QP's own CoM feedback, holding the CoM over the centre of the feet, would not do.
    "pace": GaitWeights((10.0, 60.0, 10.0), 1.0),
    "bound": GaitWeights((60.0, 2.0, 10.0), 1.0),
})
"""The MPC weights of ``stand`` and each gait: ``MpcLocomotionParameters.orientation_weight`` and
``force_weight`` left unset take the weights of the gait in force."""


def _locomotion_mpc() -> MpcParameters:
    """The MPC's defaults with the CoM's horizontal position and velocity weighted more: over the whole-body
    QP (its own feedback on the CoM, swing legs the SRB does not see) they track the command closer. (Its
    orientation weight is the gait's: ``GAIT_WEIGHTS``.)"""
    return MpcParameters(position_weight=(40.0, 40.0, 100.0), linear_velocity_weight=(40.0, 40.0, 2.0))


@dataclass(frozen=True)
class MpcLocomotionParameters:
    """``mpc``: the MPC's settings but its ``orientation_weight`` (left at ``MpcParameters``' default: the one
    below replaces it, and a different value is refused rather than ignored), its ``dt`` and state weights
    for a leg of ``REFERENCE_LEG_LENGTH``; ``scale_to_leg``: those scaled to the robot's leg (module doc;
    False: ``mpc`` as given);
    ``planner``: its rate and the largest age of a plan applied; ``orientation_weight``: the MPC's roll,
    pitch and yaw weights in every mode (``None``: the gait in force's, ``GAIT_WEIGHTS``); ``force_weight``:
    the force tasks' weight in units of ``1 / m^2`` (module doc) in every mode, finite and > 0 (0: the gait
    in force's, ``GAIT_WEIGHTS``)."""

    mpc: MpcParameters = field(default_factory=_locomotion_mpc)
    planner: PlannerParameters = field(default_factory=PlannerParameters)
    force_weight: float = 0.0
    orientation_weight: tuple[float, float, float] | None = None
    scale_to_leg: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.mpc, MpcParameters) or not isinstance(self.planner, PlannerParameters):
            raise TypeError("MpcLocomotionParameters takes an MpcParameters (mpc) and a PlannerParameters "
                            "(planner)")
        inner = self.mpc.orientation_weight
        if inner != MpcParameters().orientation_weight:
            raise ValueError(f"MPC locomotion parameters: mpc.orientation_weight {inner!r} would not be read "
                             f"(each mode sets the MPC's orientation weight): set "
                             f"MpcLocomotionParameters.orientation_weight (every mode) or leave it None "
                             f"(each gait's own)")
        if self.mpc.friction != MpcParameters().friction:
            raise ValueError(f"MPC locomotion parameters: mpc.friction {self.mpc.friction!r} would not be "
                             f"read (the MPC takes the controller's, so that it plans forces the whole-body "
                             f"QP can follow): set LocomotionParameters.friction")
        if not isinstance(self.scale_to_leg, bool):
            raise ValueError(f"MPC locomotion parameter scale_to_leg must be True or False, got "
                             f"{self.scale_to_leg!r}")
        w = self.force_weight
        if not (isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w >= 0.0):
            raise ValueError(f"MPC locomotion parameter force_weight must be a finite number > 0 (0: each "
                             f"gait's own), got {w!r}")
        o = self.orientation_weight
        if o is not None:
            if not (isinstance(o, (tuple, list)) and len(o) == _AXES
                    and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                            and x >= 0.0 for x in o)):
                raise ValueError(f"MPC locomotion parameter orientation_weight must be three finite numbers "
                                 f">= 0 (roll, pitch, yaw) or None (each gait's own), got {o!r}")
            object.__setattr__(self, "orientation_weight", tuple(float(x) for x in o))

    def weights(self, mode: str) -> GaitWeights:
        """The orientation and force weights in ``mode`` (``stand`` or a gait): each as set, or the mode's
        own (``GAIT_WEIGHTS``)."""
        own = GAIT_WEIGHTS[mode]
        return GaitWeights(self.orientation_weight if self.orientation_weight is not None
                           else own.orientation_weight,
                           self.force_weight if self.force_weight > 0.0 else own.force_weight)


class MpcLocomotion:
    """The MPC of ``controller``'s robot, plugged into its ``planner`` hook (module doc). It moves the CoM
    over each support (``moves_com``): with it the controller also takes the pace and the bound."""

    moves_com = True

    def __init__(self, controller: LocomotionController,
                 params: MpcLocomotionParameters | None = None) -> None:
        if controller.planner is not None:
            raise ValueError("the controller already has a planner")
        self.params = params if params is not None else MpcLocomotionParameters()
        model = controller.model
        q_nominal = model.neutral()
        q_nominal[7:] = controller.nominal_joints
        self.feet = controller.feet
        # per mode (module doc): the MPC's settings with its orientation weights, the force tasks' weight
        self._mode_weights = {mode: self.params.weights(mode) for mode in PLANNED_MODES}
        mpc = self.params.mpc
        if self.params.scale_to_leg:
            mpc = mpc.scaled(controller.leg_length / REFERENCE_LEG_LENGTH)
        mpc = replace(mpc, friction=controller.params.friction)
        self._mode_mpc = {mode: replace(mpc, orientation_weight=w.orientation_weight)
                          for mode, w in self._mode_weights.items()}
        self.mpc = CentroidalMpc.from_model(model, self.feet, q_nominal, self._mode_mpc["stand"])
        self.planner = MpcPlanner(self.mpc, self.params.planner)
        self.force_tasks = {f: ContactForceTask(f, 3, weight=0.0, name=f"mpc_force_{f}") for f in self.feet}
        for task in self.force_tasks.values():
            controller.wbc.add_task(task, level=1)
        mass = self.mpc.body.mass
        self._weights = {mode: w.force_weight / mass**2 for mode, w in self._mode_weights.items()}
        self._offsets = {f: controller.stance_offsets[i] for i, f in enumerate(self.feet)}
        controller.set_planner(self)

    @property
    def status(self) -> PlannerStatus:
        """The planner's state and why (``planner.PlannerStatus``)."""
        return self.planner.status

    def __call__(self, ctl: LocomotionController, q: np.ndarray, v: np.ndarray, t: float,
                 gait_state: GaitState, footholds: dict[str, np.ndarray], command: np.ndarray) -> None:
        """The hook: one tick (module doc)."""
        if ctl.params.friction != self.mpc.params.friction:
            self._set_friction(ctl.params.friction)
        plan = None
        if ctl.mode in PLANNED_MODES:
            plan = self.planner.step(t, lambda: self._inputs(ctl, q, v, gait_state, footholds, command))
        elif self.planner.status.reason != f"not planned in mode {ctl.mode}":
            self.planner.idle(t, f"not planned in mode {ctl.mode}")
        if plan is None:
            for task in self.force_tasks.values():
                task.weight[:] = 0.0
            return
        self._apply(ctl, plan, t)

    def _set_friction(self, friction: float) -> None:
        """The controller's friction changed (``LocomotionController.set_parameters``): a new MPC set up with
        it (the friction shapes the problem); the solve in progress and the plan are dropped."""
        self._mode_mpc = {mode: replace(p, friction=friction) for mode, p in self._mode_mpc.items()}
        self.mpc = CentroidalMpc(self.mpc.body, self.feet, self._mode_mpc["stand"])
        self.planner.mpc = self.mpc
        self.planner.reset(f"the controller's friction changed to {friction}: a new MPC set up")

    def _inputs(self, ctl: LocomotionController, q: np.ndarray, v: np.ndarray, gait_state: GaitState,
                footholds: dict[str, np.ndarray], command: np.ndarray) -> Inputs:
        """The MPC's state, reference, contact schedule and footholds at this tick (module doc, item 1), and
        the MPC's weights for the gait in force."""
        self.mpc.set_weights(self._mode_mpc[ctl.scheduler.gait.name])
        body, p = self.mpc.body, self.mpc.params
        x0 = body.state_from_floating_base(q, v)
        pose = ctl.base_task.pose
        assert pose is not None  # (the controller set it and the CoM's this tick)
        assert ctl.com_task.position is not None
        start = x0.copy()
        start[ORIENTATION] = matrix_to_euler(pose[:3, :3], "zyx")[::-1]
        start[POSITION][:2] = ctl.com_task.position[:2]
        com_height = float(pose[2, 3] + body.com_offset[2])  # the reference's, world z
        reference = velocity_reference(start, command, com_height, p.dt, p.horizon)
        reference[:, ORIENTATION][:, :2] = start[ORIENTATION][:2]  # a standing pose's roll and pitch
        stance = contact_schedule(gait_state, self.feet, p.dt, p.horizon)
        model = ctl.model
        current = np.array([model.frame_placement(q, f)[:3, 3] for f in self.feet])
        down = [i for i, f in enumerate(self.feet) if gait_state.feet[f].in_stance]
        ground = float(current[down, 2].min()) if down else float(current[:, 2].min())
        height = max(float(x0[5]) - ground, 1e-3 * ctl.nominal_height)  # the pendulum's, above the ground
        planned = current.copy()
        for i, foot in enumerate(self.feet):
            phase = gait_state.feet[foot]
            if foot in footholds:  # in swing: the controller's foothold
                planned[i] = current[i] = footholds[foot]
            elif phase.lifts_next:
                tau = phase.time_left + phase.swing_duration + 0.5 * phase.stance_duration
                if math.isfinite(tau):
                    planned[i, :2] = raibert_foothold(x0[3:5], float(x0[2]), self._offsets[foot], x0[9:11],
                                                      command, tau, height, ctl.gravity,
                                                      ctl.params.capture_gain, ctl.max_foothold_offset)
                    planned[i, 2] = ground
        return x0, reference, stance, foothold_plan(stance, current, planned, reference)

    def _apply(self, ctl: LocomotionController, plan: Plan, t: float) -> None:
        """The plan sampled at ``t`` into the tasks' references (module doc, item 2)."""
        solution, body, dt = plan.solution, self.mpc.body, self.mpc.params.dt
        assert solution.forces is not None  # (a plan is a solved answer)
        assert solution.states is not None
        steps = solution.forces.shape[0]
        elapsed = max(t - plan.t0, 0.0)
        k = min(int(elapsed / dt), steps - 1)
        r = elapsed - k * dt
        forces, x, x_next = solution.forces[k], solution.states[k], solution.states[k + 1]
        acceleration = forces.sum(axis=0) / body.mass + body.gravity
        position = x[POSITION] + x[LINEAR_VELOCITY] * r + 0.5 * acceleration * r * r
        velocity = x[LINEAR_VELOCITY] + acceleration * r
        angular_acceleration = (x_next[ANGULAR_VELOCITY] - x[ANGULAR_VELOCITY]) / dt
        angular_velocity = x[ANGULAR_VELOCITY] + angular_acceleration * r
        rpy = x[ORIENTATION] + (x_next[ORIENTATION] - x[ORIENTATION]) * (r / dt)
        rotation = rpy_matrices(rpy[None])[0]
        ctl.com_task.set_reference(position, velocity, acceleration)
        ctl.base_task.set_orientation_reference(rotation, angular_velocity, angular_acceleration,
                                                known_rotation=True)
        stance = plan.inputs[2][k]
        active = ctl.wbc.active_contacts()
        weight = self._weights[ctl.scheduler.gait.name]
        for i, (foot, task) in enumerate(self.force_tasks.items()):
            tracked = bool(stance[i]) and foot in active
            task.set_reference(forces[i] if tracked else None)
            task.weight[:] = weight if tracked else 0.0
