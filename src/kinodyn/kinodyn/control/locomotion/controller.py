"""``LocomotionController``: sit, stand, walk, trot, pace, bound on any legged robot over the whole-body QP.

Inputs are the robot, its feet (frame names) and its nominal standing joint positions; nothing is
specific to four legs. From the nominal posture's forward kinematics (base at the origin, level): each
foot's horizontal place ``r_i`` (under its hip), the nominal base height above the feet ``h0``, the leg
length ``L`` (the mean distance of the feet from their legs' first joints, the hips;
``step_height = step_height_ratio L``, ``max_foothold_offset``: ``footholds.leg_reach`` within
``foothold_reach_ratio`` of the legs' full extension, and each two-beat
gait's period ``period_ratio 2 pi sqrt(L / g)`` unless ``period`` is set, ``gait.pendulum_period``: the leg
as a pendulum about its hip, so a sprawling leg counts with its length, not its hip's height; the trot, the
pace and the bound each with its own ratio and duty unless ``period_ratio`` and ``duty`` are set,
``parameters.GAIT_TIMING``), the gaits'
groups (``gait``: the trot's from ``alternating_groups`` unless ``trot_groups`` is given; a gait the feet
cannot make, such as a bound on a hexapod whose middle legs are level with the centre, is refused when
requested, with the reason). The controller holds the CoM over the centre of the support pattern, so it
takes only the gaits whose stance feet keep that centre within ``max_support_offset_ratio L`` of their
support at every phase (``gait.support_distance``: static stability's rule, Robot Dynamics Essential §2.8):
the
trot (its diagonals cross at the centre), a walk with ``walk_duty > 3/4`` on four feet, any gait standing on
three feet or more around the centre; a pace or a bound (their pairs stand half a track or a body length
away) needs a planner that moves the CoM over each support, such as a centroidal MPC: refused with the
distance unless one is plugged in (``set_planner`` with a planner whose ``moves_com`` is true).
The command limits are the trot's; a gait of duty ``d`` takes them times
``min(1, [d_trot / (1 - d_trot)] / [d / (1 - d)])``: a swing foot travels ``v d T`` relative to its hip in
``(1 - d) T``, so at the same joint speeds the walk (0.8) goes 0.375 times as fast as the trot (0.6).
The trot's, pace's and bound's duty and the swing's blend and step height are fitted, each gait's at its own
period and duty, to the legs' joint speeds at the command limits (``swing_fits``, the trot's ``swing_fit``;
``timing.fit_swing``): as set while the swing foot's peak speed relative to its hip stays within
``swing_speed_ratio`` of what the joints' velocity limits give it (``foot_speed_limit``), else the fast swing
(a flat-topped blend, a lower step and duty); the step height is first bounded by the joints' torques
(``swing_load_ratio``: the stance joints' peak load holding the weight and the swing legs' reaction,
``timing.load_step_height``, from ``stance_load`` and ``swing_lift`` at the nominal stance). The swings take
the moving gait's fit (the walk: the trot's).

The joint acceleration cap of the QP (``JointLimits.max_acceleration``) is ``joint_acceleration_ratio``
times the largest acceleration any joint can get from the URDF torque limits at the nominal stance with the
body free, ``max_i sum_j |(M^-1)_ij| tau_max_j`` over the joint rows and columns of the floating-base
``M^-1`` (the exact maximum over the box of torques): it scales with the robot's inertia and motors (it is
``max_joint_acceleration``); the limits' look-ahead ``joint_limit_horizon`` is by default a fraction of the
trot's swing time (``joint_limit_horizon_ratio``): the joints' speeds and accelerations in a swing scale with
the robot's time scale, and so must the time the QP takes to stop a joint at its velocity limit. The tasks'
gains are by default multiples of the leg's pendulum frequency ``sqrt(g / L) / (2 pi)``
(``pendulum_frequency``; ``LocomotionParameters.task_frequencies``), the base yaw's ``yaw_frequency_ratio``
times the base's with its own damping ratio ``yaw_damping_ratio`` (the swing legs' reaction about the
vertical turns the trunk at the gait frequency and above: its yaw rate is damped harder), the CoM (x, y)
task's damping ratio ``com_damping_ratio`` (its velocity feedback works with the footholds', which lag by
the gait cycle they average over: critical damping leaves a slow sideways beat; ``damping_ratio`` on the
plan of a planner that moves the CoM). The QP's ridge is
``qp_regularization``: on a two-foot support the internal force along the line between the feet is seen by no
task and set by the ridge alone; the task rows are of order 1 on any size of robot, and a ridge of 1e-7 keeps
the solver's factorisations conditioned where 1e-10 (the WholeBodyController's default) let DAQP cycle and
1e-8 let it fail now and then on feasible QPs of a 6 kg robot's random run (the fallback solved them).

Every ``update(q, v, t, command)`` (full floating-base state, kinodyn's convention; ``command`` the body
twist ``(vx, vy, wz)`` in the heading frame):

1. modes: ``sit`` <-> ``stand`` through a minimum-jerk height change (stand-up, sit-down) lasting
   ``transition_time`` for the whole way between the two heights, less for part of it; ``stand`` -> a
   gait (``walk``, ``trot``, ``pace``, ``bound``), a gait -> another at speed, and a gait -> ``stand``
   through the gait scheduler's phase-continuous switch (``gait.GaitScheduler``: the feet in swing land as
   planned; the mode is ``stand`` once every foot is down); ``request_mode`` walks there one mode at a time;
2. the command, clipped to the parameters' limits, goes through an acceleration limiter (zero unless
   trotting); its integral is the reference of the CoM (x, y) and of the base yaw, held within
   ``max_tracking_error`` of the measured ones (no wind-up when the robot lags);
3. the gait: a foot whose stance ends within the contact ramp (``contact_ramp``, or ``contact_ramp_ratio``
   of the gait's ``handover``) is unloaded (``set_contact_active`` ramps
   its force bound to 0 by lift-off; one carrying under 1 % of its share of the weight is released at
   once); in swing, a ``FrameTask`` on the foot (x, y, z) follows
   ``swing.swing_point`` from the lift-off point to the Raibert/capture-point foothold about the CoM
   (``footholds``: the nominal support pattern ``r_i - mean(r)`` centred under the CoM's projection, the
   capture point from the CoM's velocity and height; replanned every tick; the velocity error fed back is
   its mean over the last gait cycle plus what varies within the cycle, shrunk while under
   ``deadbeat_speed`` (the gait's own sway; ``cycle_average``), whole beyond; the part of the velocity error
   beyond ``push_speed`` (``deadbeat_speed = deadbeat_speed_ratio sqrt(g L)``, or the gait's own sway speed
   if larger: a push) gets the full capture point,
   ``footholds.capture_gain``, and moves the hip for the swing time left, ``footholds.touchdown_drift``); at
   touchdown the contact is
   back with its force bound ramping up;
4. the ``WholeBodyController`` (a ``PointContact`` per foot) solves for ``tau`` with the tasks CoM (x, y),
   base height and orientation (``FrameTask`` masked to ``[z rx ry rz]``, height ``h`` above the lowest
   loaded foot: the ground estimate, also the swing feet's touchdown height; while pushed, lowered at
   ``crouch_speed_ratio sqrt(g L)`` so that no stance leg is predicted beyond ``stance_reach_ratio`` of its
   full extension ``leg_extensions`` before it lifts, nor a swing leg at its foothold by the end of its next
   stance, and back at ``rise_speed_ratio sqrt(g L)``: braking a push, the QP presses the feet down for
   friction and a body held at its height vaults over straight legs), the swing feet and the
   posture; gains from the error dynamics. Before it, ``planner`` (``None`` unless set) is called with
   ``(controller, q, v, t, gait_state, footholds, command)`` and may replace the tasks' references
   (``mpc_locomotion.MpcLocomotion``: a centroidal MPC's).

The answer carries ``tau``, the joint positions and velocities the QP's accelerations predict over
``pd_horizon`` (``q + v h + qdd h^2 / 2``, ``v + qdd h``: targets for a joint PD that only corrects what
happens within a tick), the contact schedule, the footholds and the task errors. A failed QP answers
``ok == False`` and no torque (``tau``, ``q_des``, ``v_des`` are ``None``); bad inputs raise ``ValueError``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control.joint_space import gains_from_frequency
from kinodyn.control.locomotion import gait as gait_patterns
from kinodyn.control.locomotion.cycle_average import CycleAverage
from kinodyn.control.locomotion.footholds import (
    capture_gain,
    leg_extension,
    leg_reach,
    raibert_foothold,
    reach_height,
    touchdown_drift,
    velocity_error,
)
from kinodyn.control.locomotion.parameters import GAIT_TIMING, GAITS, MODES, LocomotionParameters
from kinodyn.control.locomotion.swing import swing_point
from kinodyn.control.locomotion.timing import (
    SwingFit,
    fit_swing,
    foot_speed_limit,
    load_step_height,
    stance_load,
    swing_lift,
)
from kinodyn.control.wbc import PointContact, WholeBodyController
from kinodyn.control.wbc.limits import JointLimits
from kinodyn.control.wbc.tasks import ComTask, FrameTask, PostureTask
from kinodyn.model import JOINT_FREEFLYER, Model
from kinodyn.spatial.rotations import as_vector, rot_x, rot_y, rot_z

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from numpy.typing import ArrayLike

    from kinodyn.evaluation import Evaluation

BASE_MASK = (False, False, True, True, True, True)  # height and orientation
FOOT_MASK = (True, True, True, False, False, False)
YAW_AXIS = 5  # the base task's rz (its gains over [x y z rx ry rz])
MIN_FEET = 3  # a support polygon, not a line
UNIT_TOLERANCE = 1e-3  # |norm - 1| of the base quaternion accepted (the heading divides by the norm)
_EYE4 = np.eye(4)


@dataclass(frozen=True)
class LocomotionOutput:
    """One tick's answer (module doc). ``mode``: ``sit``, ``standing_up``, ``stand``, ``sitting_down`` or
    a gait (``walk``, ``trot``, ``pace``, ``bound``; also while stopping, until every foot is down);
    ``stance``: per foot, in stance in the schedule; ``footholds``: per foot in swing, its
    planned touchdown point (world); ``command``: the rate-limited twist in force; ``solve_time`` [s]."""

    ok: bool
    status: str
    message: str
    mode: str
    tau: np.ndarray | None
    q_des: np.ndarray | None
    v_des: np.ndarray | None
    stance: dict[str, bool]
    footholds: dict[str, np.ndarray]
    task_errors: dict[str, np.ndarray]
    command: np.ndarray
    solve_time: float


def _pd_gains(frequency_hz: float, damping_ratio: float) -> tuple[float, float]:
    return gains_from_frequency(2.0 * math.pi * frequency_hz, damping_ratio)


def _min_jerk(u: float) -> tuple[float, float, float]:
    """``s(u) = 10 u^3 - 15 u^4 + 6 u^5`` on [0, 1] (clamped) and its first two derivatives."""
    if u >= 1.0:
        return 1.0, 0.0, 0.0
    u = max(u, 0.0)
    return (u**3 * (10.0 - 15.0 * u + 6.0 * u * u), 30.0 * u * u * (1.0 - u) ** 2,
            60.0 * u * (1.0 - u) * (1.0 - 2.0 * u))


def _approached(value: list[float], target: list[float], step: list[float]) -> list[float]:
    """``value`` moved towards ``target`` by at most ``step`` per entry."""
    return [x + min(max(goal - x, -d), d) for x, goal, d in zip(value, target, step, strict=True)]


def _yaw(quaternion: np.ndarray, norm: float) -> float:
    """The heading ``atan2(C[1, 0], C[0, 0])`` of the rotation ``C`` of the quaternion ``(x, y, z, w)``
    divided by its ``norm`` (Robot Dynamics lecture notes (ETH) (2.54); ``update`` checked that the norm is
    1 within 1e-3)."""
    x, y, z, w = quaternion.tolist()
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return math.atan2(2.0 * (x * y + z * w), 1.0 - 2.0 * (y * y + z * z))


def _hips(model: Model, q: np.ndarray, feet: Sequence[str]) -> np.ndarray:
    """Each foot's leg's first joint (the origin of the first body below the floating base on the way to
    the foot) at ``q``: an (n, 3) array."""
    root = int(np.flatnonzero(model.joint_type == JOINT_FREEFLYER)[0])
    hips = []
    for foot in feet:
        body = int(model.frame_body[model.frame_id(foot)])
        if body == root:
            raise ValueError(f"foot {foot!r} is on the floating base itself, not on a leg")
        while model.parent[body] != root:
            body = int(model.parent[body])
        hips.append(model.frame_placement(q, model.body_names[body])[:3, 3])
    return np.array(hips)


def leg_length(model: Model, q: np.ndarray, feet: Sequence[str]) -> float:
    """The legs' mean length at ``q`` (m): each foot's distance from its hip (``_hips``), the length the
    locomotion layer's defaults scale with (and the simulator's contact, ``sim.ContactModel.length``)."""
    stance = np.array([model.frame_placement(q, foot)[:3, 3] for foot in feet])
    return float(np.linalg.norm(stance - _hips(model, q, feet), axis=1).mean())


def torque_acceleration(model: Model, q: np.ndarray) -> float:
    """The largest acceleration [rad/s^2 or m/s^2] any joint of the floating-base ``model`` gets from its
    torque limits at ``q``, at rest with the body free: ``max_i sum_j |(M^-1)_ij| tau_max_j`` over the joints
    (module doc). ``ValueError`` when no joint has a finite URDF effort limit."""
    effort = model.effort_limit[6:]
    limited = np.isfinite(effort) & (effort > 0.0)
    if not limited.any():
        raise ValueError("the URDF gives no joint a finite effort limit: the joint acceleration cap is "
                         "derived from them (add <limit effort=...> to the joints)")
    inverse = np.linalg.inv(model.mass_matrix(q))[6:, 6:]
    return float((np.abs(inverse[:, limited]) @ effort[limited]).max())


def _pose_limit(p: LocomotionParameters) -> np.ndarray:
    """Bounds of the standing pose offsets (x, y, height, roll, pitch, yaw)."""
    return np.array([p.max_pose_shift] * 3 + [p.max_pose_angle] * 3)


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


class LocomotionController:
    """Sit, stand and the gaits for ``model`` (floating base) on ``feet`` with ``nominal_joints`` (module
    doc)."""

    def __init__(self, model: Model, feet: Sequence[str], nominal_joints: ArrayLike,
                 params: LocomotionParameters | None = None,
                 trot_groups: Sequence[Sequence[str]] | None = None) -> None:
        if not model.floating_base:
            raise ValueError("locomotion needs a floating-base model (from_urdf(..., floating_base=True))")
        self.model, self.params = model, params or LocomotionParameters()
        p = self.params
        self.feet = tuple(feet)
        if len(self.feet) < MIN_FEET or len(set(self.feet)) != len(self.feet):
            raise ValueError(f"locomotion needs at least three distinct feet, got {list(feet)}")
        for foot in self.feet:
            model.frame_id(foot)  # KeyError naming close frames
        n = model.nv - 6
        self.nominal_joints = as_vector(nominal_joints, n, "nominal joint positions")
        q0 = model.neutral()
        q0[7:] = self.nominal_joints
        stance = np.array([model.frame_placement(q0, foot)[:3, 3] for foot in self.feet])
        self.hips = np.ascontiguousarray(stance[:, :2])  # nominal (x, y) of each foot, base frame
        # each foot about the centre of the nominal support pattern: placed about the CoM's projection
        self.stance_offsets = np.ascontiguousarray(self.hips - self.hips.mean(axis=0))
        self._stance_offsets = self.stance_offsets.tolist()  # (Python floats for the footholds' arithmetic)
        self.nominal_height = float(-stance[:, 2].mean())  # base above the feet's mean
        self._nominal_q = q0
        if self.nominal_height <= 0.0:
            raise ValueError(f"the nominal posture puts the feet {stance[:, 2].tolist()} not below the base")
        self.leg_length = leg_length(model, q0, self.feet)
        self._hip_offsets = _hips(model, q0, self.feet).tolist()  # each leg's first joint, base frame
        self.leg_extensions = tuple(leg_extension(model, q0, foot) for foot in self.feet)  # m
        self.gravity = float(np.linalg.norm(model.gravity))
        self._groups = tuple(map(tuple, trot_groups)) if trot_groups is not None else \
            gait_patterns.alternating_groups(self.feet, self.hips)
        self._stand_gait = gait_patterns.stand(self.feet)
        self.planner: Callable[..., None] | None = None  # module doc, item 4 (``set_planner``)
        self.foot_speed_limit = foot_speed_limit(model, q0, self.feet)  # m/s, the swing's budget's unit
        # the step height's torque budget (timing.py): the joints' load holding the weight on half the feet,
        # and the CoM's rise per unit rise of the other half's feet
        group = len(self.feet) // 2
        self.stance_load = stance_load(model, q0, self.feet, group)
        self.swing_lift = (len(self.feet) - group) * max(swing_lift(model, q0, f) for f in self.feet)
        # the gaits this robot makes (name -> Gait), why not the others, each gait's contact ramp [s], and
        # each two-beat gait's duty and swing shape (timing.fit_swing)
        self.gaits, self.unavailable, self.contact_ramps, self.swing_fits = self._gaits_for(p)
        self.scheduler = gait_patterns.GaitScheduler(self.feet)
        self._moving_gait = self.gaits["trot"]  # the last moving gait set (its ramp while stopping)
        self._push_gait: gait_patterns.Gait | None = None  # the gait and deadbeat_speed of ``_push_speed``
        self._push_deadbeat, self._push_speed = math.nan, 0.0
        self.max_joint_acceleration = p.joint_acceleration_ratio * torque_acceleration(model, q0)
        self.pendulum_frequency = math.sqrt(self.gravity / self.leg_length) / (2.0 * math.pi)  # Hz
        self.joint_limit_horizon = p.limit_horizon(self.gaits["trot"].swing_duration)  # s

        # gains, weights and friction: set by _configure below
        limits = JointLimits.from_model(model, self.joint_limit_horizon, self.max_joint_acceleration)
        self.wbc = WholeBodyController(model, [PointContact(f) for f in self.feet], mode=p.wbc_mode,
                                       solver=p.solver, fallback_solver=p.fallback_solver or None,
                                       limits=limits, regularization=p.qp_regularization)
        self.com_task = ComTask(0.0, 0.0, mask=(True, True, False))
        self.base_task = FrameTask(model, model.body_names[1], 0.0, 0.0, mask=BASE_MASK, name="base")
        self.base_task.set_reference(_EYE4)  # (every tick sets it; the two halves need one to start from)
        self.swing_tasks = {f: FrameTask(model, f, 0.0, 0.0, weight=0.0, mask=FOOT_MASK, name=f"swing_{f}")
                            for f in self.feet}
        self.posture_task = PostureTask(model, self.nominal_joints, 0.0, 0.0)
        self.wbc.add_task(self.com_task, level=1)
        self.wbc.add_task(self.base_task, level=1)
        for task in self.swing_tasks.values():
            self.wbc.add_task(task, level=1)
        self.wbc.add_task(self.posture_task, level=2)
        self._init_tick_state(p.initial_mode)
        self._configure(p, leg_reach(model, q0, self.feet, p.foothold_reach_ratio))

    def _init_tick_state(self, initial_mode: str) -> None:
        """The state the ticks carry, before the first one (construction)."""
        self._requested = initial_mode
        self._mode = initial_mode
        self._t: float | None = None
        self._ev: Evaluation | None = None
        # the small vectors of the tick's own arithmetic are lists of Python floats (no per-op numpy cost)
        self._cmd = [0.0, 0.0, 0.0]
        self._cmd_prev = [0.0, 0.0, 0.0]
        self._ref_xy = [0.0, 0.0]
        self._ref_yaw = 0.0
        self._height = (0.0, 0.0, 0.0, 1.0)  # min-jerk profile: from, to, start time, duration
        self._pose = [0.0] * 6  # standing offsets x, y, height, roll, pitch, yaw (rate limited)
        self._pose_target = np.zeros(6)
        self._loaded = dict.fromkeys(self.feet, True)
        self._swinging = dict.fromkeys(self.feet, False)
        self._lift_off = {f: np.zeros(3) for f in self.feet}
        self._target = {f: np.zeros(3) for f in self.feet}
        self._swing = np.zeros((3, 3))
        self._ground = 0.0
        self._forces: dict[str, np.ndarray] = {}
        self._cycle = CycleAverage()  # the CoM velocity error over the last gait cycle (_average_error)
        self._feedback_velocity = [0.0, 0.0]  # world, the footholds' (_average_error)
        self._com_velocity = [0.0, 0.0]  # world, measured (_average_error)
        self._crouch = 0.0  # m, the base below its height profile for the legs' reach (_reach_crouch)
        self._crouch_goal = 0.0
        self._release_force = 0.01 * float(self.model.mass.sum()) * self.gravity / len(self.feet)  # N, _feet

    # ----- commands ---------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def period(self) -> float:
        """The trot's period in force [s]: ``period``, or the pendulum law's."""
        return self.gaits["trot"].period

    @property
    def swing_fit(self) -> SwingFit:
        """The trot's swing fit (``swing_fits``; module doc)."""
        return self.swing_fits["trot"]

    @property
    def step_height(self) -> float:
        """The swing's step height in force [m]: the moving gait's fit's (the walk: the trot's)."""
        return self.swing_fits.get(self._moving_gait.name, self.swing_fit).step_height

    @property
    def swing_weight(self) -> float:
        """The swing-foot tasks' weight in force: ``fast_swing_weight`` when the moving gait's fit is the fast
        swing, else ``swing_weight`` (module doc)."""
        fit = self.swing_fits.get(self._moving_gait.name, self.swing_fit)
        return self.params.fast_swing_weight if fit.fast else self.params.swing_weight

    @property
    def swing_ramp(self) -> float:
        """The swing blend's ramp in force (0: minimum jerk): the moving gait's fit's (the walk: the
        trot's)."""
        return self.swing_fits.get(self._moving_gait.name, self.swing_fit).ramp

    def request_mode(self, name: str) -> None:
        """Go to ``sit``, ``stand`` or a gait, through the modes between (module doc)."""
        if name not in MODES:
            raise ValueError(f"unknown locomotion mode {name!r}; modes: {MODES}")
        if name in self.unavailable:
            raise ValueError(f"this robot cannot {name}: {self.unavailable[name]}")
        self._requested = name

    def set_planner(self, planner: Callable[..., None] | None) -> None:
        """Plug ``planner`` in (module doc, item 4; ``None`` unplugs it). A planner whose ``moves_com``
        attribute is true moves the CoM over each support: with it the gaits refused for their support
        distance (the pace, the bound) are available. ``ValueError`` (nothing changed) when the gait in
        force would not be."""
        previous = self.planner
        self.planner = planner
        try:
            gaits, unavailable, ramps, _ = self._gaits_for(self.params)
        except ValueError:
            self.planner = previous
            raise
        if self.scheduler.gait.moves and self.scheduler.gait.name in unavailable:
            self.planner = previous
            raise ValueError(f"the gait in force cannot go on without this planner: "
                             f"{unavailable[self.scheduler.gait.name]}")
        self.gaits, self.unavailable, self.contact_ramps = gaits, unavailable, ramps
        self._moving_gait = gaits.get(self._moving_gait.name, gaits["trot"])
        self._set_com_damping()

    def _set_com_damping(self) -> None:
        """The CoM task's velocity gain: damped at ``com_damping_ratio`` against the integrated command and
        the footholds' cycle-averaged feedback, at ``damping_ratio`` on a plan of a planner that moves the
        CoM (replanned from the measured state: not that loop)."""
        p = self.params
        planned = bool(getattr(self.planner, "moves_com", False))
        ratio = p.damping_ratio if planned else p.com_damping_ratio
        self.com_task.kd[:] = _pd_gains(self.task_frequencies[0], ratio)[1]

    def set_pose_offset(self, x: float = 0.0, y: float = 0.0, height: float = 0.0, roll: float = 0.0,
                        pitch: float = 0.0, yaw: float = 0.0) -> None:
        """Standing base pose about the nominal stance: shift (x, y, heading frame) and height [m], roll,
        pitch, yaw [rad]; within ``max_pose_shift`` / ``max_pose_angle``. Reached at the pose rates while
        standing; zero while trotting or sitting."""
        offset = np.array([x, y, height, roll, pitch, yaw], dtype=float)
        limit = _pose_limit(self.params)
        if not (np.isfinite(offset).all() and (np.abs(offset) <= limit).all()):
            raise ValueError(f"pose offset (x, y, height, roll, pitch, yaw) = {offset.tolist()} must be "
                             f"finite and within +-{limit.tolist()} (max_pose_shift, max_pose_angle)")
        self._pose_target[:] = offset

    def set_parameters(self, params: LocomotionParameters) -> None:
        """Apply new ``params`` live, keeping the state (mode, gait clock, contacts, references, pose offset).

        Gains, weights, friction and limits apply from the next tick; new gait timings (``period``,
        ``period_ratio``, ``duty``, the walk's, the contact ramp) at once, through the scheduler's
        phase-continuous switch when moving; ``sit_height_ratio`` and ``transition_time`` from the next
        sit-down or stand-up; ``initial_mode`` only before the first ``update``. ``ValueError`` (nothing
        changed) for a new ``wbc_mode``, ``solver``, ``fallback_solver``, ``joint_acceleration_ratio``,
        ``joint_limit_horizon`` or its ratio (they shape the QP: build a new controller; the derived
        look-ahead keeps the swing time of construction), pose limits below the standing pose offset in
        force, or timings the gait in force cannot take (a contact ramp beyond its handover)."""
        if not isinstance(params, LocomotionParameters):
            raise TypeError(f"set_parameters takes a LocomotionParameters, got {type(params).__name__}")
        old = self.params
        for name in ("wbc_mode", "solver", "fallback_solver", "joint_acceleration_ratio",
                     "joint_limit_horizon", "joint_limit_horizon_ratio"):
            if getattr(params, name) != getattr(old, name):
                raise ValueError(f"locomotion parameter {name} cannot change live ({getattr(old, name)!r} -> "
                                 f"{getattr(params, name)!r}): build a new LocomotionController")
        limit = _pose_limit(params)
        if (np.abs(self._pose_target) > limit).any():
            raise ValueError(f"the standing pose offset {self._pose_target.tolist()} exceeds the new limits "
                             f"+-{limit.tolist()} (max_pose_shift, max_pose_angle): set a smaller one first")
        reach = leg_reach(self.model, self._nominal_q, self.feet, params.foothold_reach_ratio)
        gaits, unavailable, ramps, fits = self._gaits_for(params)
        moving = self.scheduler.gait.moves
        if moving and self.scheduler.gait.name in unavailable:
            raise ValueError(f"the gait in force cannot take these parameters: "
                             f"{unavailable[self.scheduler.gait.name]}")
        self.params, self.swing_fits = params, fits
        self._configure(params, reach)
        self.gaits, self.unavailable, self.contact_ramps = gaits, unavailable, ramps
        self._moving_gait = gaits.get(self._moving_gait.name, gaits["trot"])
        if moving and gaits[self.scheduler.gait.name] != self.scheduler.gait:
            self._set_gait(gaits[self.scheduler.gait.name])
        if self._t is None:
            if self._requested == self._mode:
                self._requested = params.initial_mode
            self._mode = params.initial_mode

    # ----- one tick ----------------------------------------------------------------------------------

    def update(self, q: ArrayLike, v: ArrayLike, t: float,
               command: ArrayLike = (0.0, 0.0, 0.0)) -> LocomotionOutput:
        """One control tick at the measured state (module doc)."""
        q, v, norm = self._check_state(q, v)
        cmd = np.asarray(command, dtype=float)
        if cmd.shape != (3,) or not math.isfinite(float(cmd.sum())):  # (a finite sum: finite entries)
            cmd = as_vector(command, 3, "velocity command (vx, vy, wz)")  # ValueError naming what is wrong
        if not math.isfinite(t):
            raise ValueError(f"t must be finite, got {t}")
        yaw = _yaw(q[3:7], norm)
        if self._t is None:
            self._start(q, t, yaw)
        elif t < self._t:
            raise ValueError(f"time went backwards: {t} after {self._t}")
        dt = t - (self._t if self._t is not None else t)
        self._t = t
        self._step_modes(t)
        gait_state = self.scheduler.update(t)
        self._track_command(cmd, dt, yaw)
        self._average_error(t, q, v, yaw)
        self._set_base_references(t, dt)
        footholds = self._feet(gait_state, q, yaw)
        if self.planner is not None:
            self.planner(self, q, v, t, gait_state, footholds, np.array(self._cmd))
        start = time.perf_counter()
        result = self.wbc.update(q, v, t)
        solve_time = time.perf_counter() - start
        self._ev = result.evaluation
        self._forces = result.forces
        stance = {f: gait_state.feet[f].in_stance for f in self.feet}
        if not result.ok or result.tau is None or result.qdd is None:
            return LocomotionOutput(False, result.status, result.message, self._mode, None, None, None,
                                    stance, footholds, result.task_errors, np.array(self._cmd), solve_time)
        h = self.params.pd_horizon
        qdd, vj = result.qdd[6:], v[6:]
        q_des = q[7:] + vj * h + 0.5 * qdd * h * h
        v_des = vj + qdd * h
        return LocomotionOutput(True, result.status, result.message, self._mode, result.tau, q_des, v_des,
                                stance, footholds, result.task_errors, np.array(self._cmd), solve_time)

    # ----- pieces ------------------------------------------------------------------------------------

    def _gaits_for(self, p: LocomotionParameters) -> tuple[dict[str, gait_patterns.Gait], dict[str, str],
                                                           dict[str, float], dict[str, SwingFit]]:
        """The gaits ``p`` gives this robot, the reasons of those it cannot make, each gait's contact ramp
        and each two-beat gait's swing fitted to the command limits (module doc). ``ValueError`` when the
        trot is not possible."""
        periods, fits = {}, {}
        for name in GAIT_TIMING:
            ratio, duty = p.timing(name)
            periods[name] = p.period if p.period > 0.0 else \
                gait_patterns.pendulum_period(self.leg_length, self.gravity, ratio)
            fits[name] = self._fit_swing(p, periods[name], duty)
        feet, hips = self.feet, self.hips
        makers = {
            "trot": lambda: gait_patterns.trot(self._groups, periods["trot"], fits["trot"].duty),
            "pace": lambda: gait_patterns.pace(gait_patterns.lateral_groups(feet, hips), periods["pace"],
                                               fits["pace"].duty),
            "bound": lambda: gait_patterns.bound(gait_patterns.fore_aft_groups(feet, hips), periods["bound"],
                                                 fits["bound"].duty),
            "walk": lambda: gait_patterns.walk(gait_patterns.footfall_sequence(feet, hips),
                                               p.walk_period_factor * periods["trot"], p.walk_duty),
        }
        gaits, unavailable, ramps = {}, {}, {}
        positions = dict(zip(self.feet, self.hips, strict=True))
        for name in GAITS:
            try:
                gait = makers[name]()
            except ValueError as error:
                unavailable[name] = str(error)
                continue
            offset = gait_patterns.support_distance(gait, positions)
            planned = bool(getattr(self.planner, "moves_com", False))
            if offset > p.max_support_offset_ratio * self.leg_length and not planned:
                unavailable[name] = (f"its stance feet leave the centre of their pattern {offset:.3f} m "
                                     f"outside their support (more than max_support_offset_ratio "
                                     f"{p.max_support_offset_ratio} of the leg length {self.leg_length:.3f} "
                                     f"m): this controller holds the CoM over the centre; the {name} needs a "
                                     f"planner that moves the CoM over each support (a centroidal MPC)")
                continue
            handover = gait.handover
            ramp = p.contact_ramp if p.contact_ramp > 0.0 else p.contact_ramp_ratio * handover
            if not 0.0 < ramp <= handover + 1e-12:
                unavailable[name] = (f"its contact ramp ({ramp:.4f} s) must be > 0 and fit in its handover "
                                     f"time ({handover:.4f} s: from a touchdown to the next lift-off; "
                                     f"period {gait.period:.4f} s, duty {gait.duty}): lower contact_ramp or "
                                     f"raise the duty")
                continue
            gaits[name], ramps[name] = gait, ramp
        if "trot" in unavailable:
            raise ValueError(f"locomotion parameters: the trot is not possible: {unavailable['trot']}")
        return gaits, unavailable, ramps, fits

    def _fit_swing(self, p: LocomotionParameters, period: float, duty: float) -> SwingFit:
        """A two-beat gait's duty, the swing's blend and step height for the command limits' top speed at
        ``period`` [s] and ``duty`` (module doc; ``timing.fit_swing``), or as set when ``swing_speed_ratio``
        is 0."""
        speed = max(p.max_forward_velocity, p.max_lateral_velocity)
        height = p.step_height_ratio * self.leg_length
        if p.swing_load_ratio > 0.0:
            fitted = load_step_height(self.stance_load, self.swing_lift, p.swing_load_ratio,
                                      (1.0 - duty) * period, self.gravity)
            height = min(height, max(fitted, p.min_step_height_ratio * self.leg_length))
        if p.swing_speed_ratio == 0.0:
            return SwingFit(duty, p.swing_ramp, height, speed, math.nan, fast=False, fits=True)
        return fit_swing(speed, period, p.swing_speed_ratio * self.foot_speed_limit, duty, p.swing_ramp,
                         height, p.min_duty, p.fast_swing_ramp, p.fast_step_height_ratio * self.leg_length)

    def _set_gait(self, gait: gait_patterns.Gait) -> None:
        """Hand ``gait`` to the scheduler (a moving gait: no foot lifts within its contact ramp)."""
        if gait.moves:
            self._moving_gait = gait
            self.scheduler.set_gait(gait, lead=self.contact_ramps[gait.name])
        else:
            self.scheduler.set_gait(gait)

    def _command_scale(self, gait: gait_patterns.Gait) -> float:
        """The command limits' factor for ``gait`` (module doc: swing feet's speed relative to the hips)."""
        trot_duty = self.swing_fit.duty
        return min(1.0, (trot_duty / (1.0 - trot_duty)) / (gait.duty / (1.0 - gait.duty)))

    def _configure(self, p: LocomotionParameters, reach: float) -> None:
        """Gains, weights, friction and limits from ``p`` (construction and ``set_parameters``); ``reach``
        [m]: the footholds' (``footholds.leg_reach`` for ``p``)."""
        base, swing, posture = self.task_frequencies = p.task_frequencies(self.pendulum_frequency)
        for frequency, tasks in ((base, (self.com_task, self.base_task)),
                                 (swing, tuple(self.swing_tasks.values())),
                                 (posture, (self.posture_task,))):
            kp, kd = _pd_gains(frequency, p.damping_ratio)
            for task in tasks:
                task.kp[:], task.kd[:] = kp, kd
        self._set_com_damping()
        kp, kd = _pd_gains(p.yaw_frequency_ratio * base, p.yaw_damping_ratio)
        self.base_task.kp[YAW_AXIS], self.base_task.kd[YAW_AXIS] = kp, kd
        for foot, task in self.swing_tasks.items():
            task.weight[:] = self.swing_weight if self._swinging[foot] else 0.0
            self.wbc.replace_contact(PointContact(foot, mu=p.friction))
        self.wbc.relaxation = p.wbc_relaxation()
        self.posture_task.weight[:] = p.posture_weight
        self.wbc.regularization = p.qp_regularization
        # the CoM's horizontal demand within what friction gives (mu g), its position part within half of it
        self.com_task.max_acceleration = p.friction * self.gravity
        self.com_task.max_error = 0.5 * self.com_task.max_acceleration / float(self.com_task.kp[0])
        self.max_foothold_offset = reach  # m
        self.deadbeat_speed = p.deadbeat_speed_ratio * math.sqrt(self.gravity * self.leg_length)  # m/s
        self._pose_rate = [p.pose_linear_rate] * 3 + [p.pose_angular_rate] * 3
        self._reach_limits = [p.stance_reach_ratio * extension for extension in self.leg_extensions]
        speed = math.sqrt(self.gravity * self.leg_length)
        self._crouch_speeds = (p.crouch_speed_ratio * speed, p.rise_speed_ratio * speed)  # m/s, down and up
        self._cmd_limit = [p.max_forward_velocity, p.max_lateral_velocity, p.max_yaw_rate]
        self._cmd_rate = [p.max_linear_acceleration] * 2 + [p.max_angular_acceleration]

    @property
    def crouch(self) -> float:
        """How far [m] the base stands below its height profile for the legs' reach (module doc, item 4): 0
        unless pushed."""
        return self._crouch

    @property
    def push_speed(self) -> float:
        """The velocity error [m/s] beyond which the footholds take its excess for a push (module doc):
        ``deadbeat_speed``, or the moving gait's own sway speed if larger. A gait whose support leaves the
        centre of the feet's pattern by ``d`` (``gait.support_distance``: about 0 for a trot, half the hips'
        spacing for a pace or a bound) accelerates the CoM away from it at ``g d / h`` (the linear inverted
        pendulum at height ``h``) for each half of its period ``T``: its velocity swings by
        ``+-g d T / (4 h)`` about its mean, which is not a push."""
        gait, deadbeat = self._moving_gait, self.deadbeat_speed
        if self._push_gait is not gait or self._push_deadbeat != deadbeat:
            positions = dict(zip(self.feet, self.hips, strict=True))
            sway = (self.gravity * gait_patterns.support_distance(gait, positions) * gait.period
                    / (4.0 * self.nominal_height))
            self._push_speed = max(deadbeat, sway)
            self._push_gait, self._push_deadbeat = gait, deadbeat
        return self._push_speed

    def _moving(self) -> bool:
        """In a gait and staying so (not stopping)."""
        return self._mode in GAITS and self.scheduler.gait.moves

    def _check_state(self, q: ArrayLike, v: ArrayLike) -> tuple[np.ndarray, np.ndarray, float]:
        """``q`` and ``v`` as float vectors, checked, and the norm of the base quaternion."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        m = self.model
        if q.shape != (m.nq,) or v.shape != (m.nv,):
            raise ValueError(f"q must have {m.nq} entries and v {m.nv} (floating base first), got "
                             f"{q.shape} and {v.shape}")
        # a finite sum has finite terms; a non-finite one (or an overflow) is looked at entry by entry
        if not math.isfinite(float(q.sum()) + float(v.sum())) and \
                not (np.isfinite(q).all() and np.isfinite(v).all()):
            raise ValueError("q and v must be finite")
        quaternion = q[3:7]
        norm = math.sqrt(float(quaternion @ quaternion))
        if abs(norm - 1.0) > UNIT_TOLERANCE:
            raise ValueError(f"the base quaternion q[3:7] = {quaternion.tolist()} is not a unit quaternion")
        return q, v, norm

    def _start(self, q: np.ndarray, t: float, yaw: float) -> None:
        """First tick: references from the measured state (``yaw`` the base's), the height heading for the
        initial mode's."""
        feet = np.array([self.model.frame_placement(q, f)[:3, 3] for f in self.feet])
        self._ground = float(feet[:, 2].mean())
        self._ref_yaw = yaw
        self._ref_xy = self.model.com(q)[:2].tolist()
        for f, p in zip(self.feet, feet, strict=True):
            self.swing_tasks[f].set_reference(_translation(p))
        self._move_height(q[2] - self._ground, self._mode, t)
        self._mode = {"sit": "sitting_down", "stand": "standing_up"}[self._mode]

    def _mode_height(self, mode: str) -> float:
        return self.nominal_height * (self.params.sit_height_ratio if mode == "sit" else 1.0)

    def _move_height(self, start: float, mode: str, t: float) -> None:
        """A minimum-jerk height profile from ``start`` to ``mode``'s height, ``transition_time`` for the full
        sit-stand distance (proportionally less for less, at least one tick: ``pd_horizon``)."""
        goal = self._mode_height(mode)
        span = self.nominal_height * (1.0 - self.params.sit_height_ratio)
        duration = max(self.params.transition_time * abs(goal - start) / span, self.params.pd_horizon)
        self._height = (start, goal, t, duration)

    def _height_at(self, t: float) -> tuple[float, float, float]:
        start, goal, t0, duration = self._height
        s, ds, dds = _min_jerk((t - t0) / duration)
        delta = goal - start
        return start + delta * s, delta * ds / duration, delta * dds / duration**2

    def _step_modes(self, t: float) -> None:
        """Advance the mode machine one step towards the requested mode (module doc)."""
        mode, want = self._mode, self._requested
        t0, duration = self._height[2:]
        s = self.scheduler
        if mode in ("standing_up", "sitting_down") and t >= t0 + duration:
            mode = "stand" if mode == "standing_up" else "sit"
        elif mode in GAITS and not s.gait.moves and s.all_in_stance:  # stopped
            mode = "stand"
        if mode == "sit" and want != "sit":
            self._move_height(self._height_at(t)[0], "stand", t)
            mode = "standing_up"
        elif mode == "stand" and want == "sit":
            self._move_height(self._height_at(t)[0], "sit", t)
            mode = "sitting_down"
        elif mode in (*GAITS, "stand") and want in GAITS and s.gait is not self.gaits[want]:
            self._set_gait(self.gaits[want])  # from standing, from another gait at speed, or while stopping
            mode = want
        elif mode in GAITS and want not in GAITS and s.gait.moves:
            self._set_gait(self._stand_gait)
        self._mode = mode

    def _track_command(self, cmd: np.ndarray, dt: float, yaw: float) -> None:
        """Clip, rate-limit and integrate the command into the CoM (x, y) and yaw references (on Python
        floats: the 2- and 3-vectors' arithmetic entry by entry, without numpy's per-call cost)."""
        self._cmd_prev = previous = self._cmd
        if self._moving():
            scale = self._command_scale(self._moving_gait)
            bound = [b * scale for b in self._cmd_limit]
            target = [min(max(c, -b), b) for c, b in zip(cmd.tolist(), bound, strict=True)]
        else:
            target = [0.0, 0.0, 0.0]
        self._cmd = _approached(previous, target, [r * dt for r in self._cmd_rate])
        vx, vy, wz = self._cmd
        c, s = math.cos(self._ref_yaw), math.sin(self._ref_yaw)
        ref_x, ref_y = self._ref_xy
        ref_x, ref_y = ref_x + dt * (c * vx - s * vy), ref_y + dt * (s * vx + c * vy)
        self._ref_yaw = _wrap(self._ref_yaw + wz * dt)
        com_x, com_y = self._ev.com[:2].tolist() if self._ev is not None else (ref_x, ref_y)
        lag_x, lag_y = ref_x - com_x, ref_y - com_y
        distance = float(np.hypot(lag_x, lag_y))
        limit = self.params.max_tracking_error
        if distance > limit:
            ratio = limit / distance
            ref_x, ref_y = com_x + lag_x * ratio, com_y + lag_y * ratio
        self._ref_xy = [ref_x, ref_y]
        yaw_lag = _wrap(self._ref_yaw - yaw)
        if abs(yaw_lag) > limit:
            self._ref_yaw = _wrap(yaw + math.copysign(limit, yaw_lag))

    def _average_error(self, t: float, q: np.ndarray, v: np.ndarray, yaw: float) -> None:
        """The CoM velocity (world) whose error from the command the footholds feed back: the command plus
        ``CycleAverage.feedback`` while in a moving gait, the measured one otherwise."""
        jacobian = self._ev.com_jacobian if self._ev is not None else self.model.com_jacobian(q)
        vx, vy = (jacobian[:2] @ v).tolist()
        self._com_velocity = [vx, vy]
        if not self._moving():
            self._cycle.reset()
            self._feedback_velocity = [vx, vy]
            return
        c, s = math.cos(yaw), math.sin(yaw)
        cx, cy = self._cmd[0], self._cmd[1]
        error = (c * vx + s * vy - cx, -s * vx + c * vy - cy)  # heading frame
        fx, fy = self._cycle.feedback(t, self._moving_gait.period, error, self.deadbeat_speed)
        self._feedback_velocity = [c * (cx + fx) - s * (cy + fy), s * (cx + fx) + c * (cy + fy)]

    def _set_base_references(self, t: float, dt: float) -> None:
        target = self._pose_target.tolist() if self._mode == "stand" else [0.0] * 6
        self._pose = _approached(self._pose, target, [r * dt for r in self._pose_rate])
        x, y, dz, roll, pitch, dyaw = self._pose
        c, s = math.cos(self._ref_yaw), math.sin(self._ref_yaw)
        vx, vy, wz = self._cmd
        ax, ay, dwz = ([(a - b) / dt for a, b in zip(self._cmd, self._cmd_prev, strict=True)]
                       if dt > 0.0 else (0.0, 0.0, 0.0))
        velocity = (c * vx - s * vy, s * vx + c * vy, 0.0)
        acceleration = (c * ax - s * ay - wz * velocity[1], s * ax + c * ay + wz * velocity[0], 0.0)
        ref_x, ref_y = self._ref_xy
        # (checked=False: the values are this controller's, finite by construction from checked inputs)
        self.com_task.set_reference((ref_x + c * x - s * y, ref_y + s * x + c * y, 0.0), velocity,
                                    acceleration, checked=False)
        height, rate, accel = self._height_at(t)
        down, up = self._crouch_speeds  # (no velocity feed-forward: a reference rising fast lifts the body)
        self._crouch += min(max(self._crouch_goal - self._crouch, -up * dt), down * dt)
        self.base_task.set_position_reference((0.0, 0.0, self._ground + height + dz - self._crouch),
                                              (0.0, 0.0, rate), (0.0, 0.0, accel), checked=False)
        self.base_task.set_orientation_reference(rot_z(self._ref_yaw + dyaw) @ rot_y(pitch) @ rot_x(roll),
                                                 (0.0, 0.0, wz), (0.0, 0.0, dwz), checked=False)

    def _feet(self, gait_state: gait_patterns.GaitState, q: np.ndarray, yaw: float) -> dict[str, np.ndarray]:
        """Contact switching and swing references (module doc, item 3); the footholds of the swing feet."""
        p = self.params
        ev = self._ev
        footholds: dict[str, np.ndarray] = {}
        loaded_z = []
        ramp_time = self.contact_ramps[self._moving_gait.name]
        pendulum: tuple[list[float], list[float], float, list[float], float] | None = None  # the footholds'
        for i, foot in enumerate(self.feet):
            phase = gait_state.feet[foot]
            task = self.swing_tasks[foot]
            if phase.in_stance:
                if self._swinging[foot]:  # touchdown
                    self._swinging[foot] = False
                    task.weight[:] = 0.0
                want_loaded = not (phase.lifts_next and phase.time_left <= ramp_time)
                if want_loaded != self._loaded[foot]:
                    ramp = ramp_time if want_loaded else phase.time_left
                    if not want_loaded and self._normal_force(foot) < self._release_force:
                        ramp = 0.0  # nothing to ramp down (a ramp from ~0 N leaves the QP one feasible force)
                    self.wbc.set_contact_active(foot, want_loaded, ramp=ramp)
                    self._loaded[foot] = want_loaded
                if want_loaded:
                    loaded_z.append(ev.placement(foot)[2, 3] if ev is not None else self._lift_off[foot][2])
                continue
            if not self._swinging[foot]:  # lift-off
                self._swinging[foot] = True
                if ev is not None:
                    self._lift_off[foot][:] = ev.placement(foot)[:3, 3]
                if self._loaded[foot]:
                    self.wbc.set_contact_active(foot, False)
                    self._loaded[foot] = False
                task.weight[:] = self.swing_weight
            if pendulum is None:  # the CoM of the last tick's evaluation (at the first, q's)
                com = ev.com if ev is not None else self.model.com(q)
                com_velocity = self._feedback_velocity
                gain = capture_gain(p.capture_gain, math.hypot(*velocity_error(yaw, com_velocity, self._cmd)),
                                    self.push_speed)
                pendulum = (com[:2].tolist(), com_velocity,
                            max(float(com[2]) - self._ground, 1e-3 * self.nominal_height), self._cmd, gain)
            com_xy, com_velocity, com_height, command, gain = pendulum
            tau = phase.time_left + 0.5 * phase.stance_duration
            target = self._target[foot]
            target[:2] = raibert_foothold(com_xy, yaw, self._stance_offsets[i], com_velocity, command, tau,
                                          com_height, self.gravity, gain,
                                          self.max_foothold_offset)
            drift_x, drift_y = touchdown_drift(yaw, com_velocity, command, phase.time_left,
                                               self.push_speed)
            target[0] += drift_x
            target[1] += drift_y
            target[2] = self._ground
            footholds[foot] = target.copy()
            swing = self._swing
            swing_point(phase.phase, phase.swing_duration, self._lift_off[foot], target, self.step_height,
                        swing, self.swing_ramp)
            task.set_position_reference(swing[0], swing[1], swing[2], checked=False)
        if loaded_z:
            self._ground = float(min(loaded_z))
        self._crouch_goal = self._reach_crouch(gait_state, q, yaw, footholds)
        return footholds

    def _reach_crouch(self, gait_state: gait_patterns.GaitState, q: np.ndarray, yaw: float,
                      footholds: dict[str, np.ndarray]) -> float:
        """While pushed (the CoM's velocity error beyond ``push_speed``), how far [m] below its height profile
        (and standing pose offset) the base must stand for every leg to stay within ``stance_reach_ratio`` of
        its full extension, ``leg_extensions`` (module doc, item 4): a stance foot until it lifts, a swing
        foot's foothold from touchdown to the end of its next stance, each hip moving at the CoM's measured
        velocity (base level); at most down to the sitting height. 0 when not pushed."""
        p, ev = self.params, self._ev
        if p.stance_reach_ratio == 0.0 or ev is None or \
                math.hypot(*velocity_error(yaw, self._com_velocity, self._cmd)) <= self.push_speed:
            return 0.0
        height = self._height_at(gait_state.t)[0] + self._pose[2]
        c, s = math.cos(yaw), math.sin(yaw)
        x, y = float(q[0]), float(q[1])
        allowed = height
        for foot, (hx, hy, hz), limit in zip(self.feet, self._hip_offsets, self._reach_limits, strict=True):
            phase = gait_state.feet[foot]
            if phase.in_stance:
                point = ev.placement(foot)[:2, 3].tolist()
                horizons: tuple[float, ...] = (0.0, phase.time_left) if math.isfinite(phase.time_left) \
                    else (0.0,)
            else:
                point = footholds[foot][:2].tolist()
                horizons = (phase.time_left, phase.time_left + phase.stance_duration)
            hip = (x + c * hx - s * hy, y + s * hx + c * hy)
            allowed = min(allowed, reach_height(point, hip, self._com_velocity, horizons, limit) - hz)
        lowest = p.sit_height_ratio * self.nominal_height
        return max(height - max(allowed, lowest), 0.0)

    def _normal_force(self, foot: str) -> float:
        """The foot's normal force in the last solved tick (0 when it had none)."""
        f = self._forces.get(foot)
        return float(f[2]) if f is not None else 0.0


def _translation(p: np.ndarray) -> np.ndarray:
    T: np.ndarray = _EYE4.copy()
    T[:3, 3] = p
    return T
