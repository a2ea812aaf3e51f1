"""What the `wbc` node does with each message, without a node (docs/nodes/wbc.md): testable without DDS.

Every joint state is answered by exactly one JointPDCommand stamped with the joint state's stamp (lockstep,
docs/simulator.md), whatever happens:

- a usable state: the mode's controller (arm: ``ArmController``; legged: ``LeggedController`` once a base
  state no older than ``base_state_max_age`` is paired with it, ``hold`` until then);
- an unusable joint state, a controller that raises, a QP that fails, or a command with a non-finite number:
  damping (``kp = 0``, ``kd = damping_kd``, no feed-forward), with one log line per cause (throttled);
- every command is within the URDF limits and finite (``CommandLimits.finalize``) before it leaves.

Stamps are claims, bounded against the node's clock (``clock``: the ROS clock, simulated time with
``use_sim_time``): a joint state, base state, cmd_vel or pose stamped more than ``max_stamp_lead`` ahead
of it is refused with one line (a joint state refused so is not answered: its command would carry the
future stamp and the controller's time would jump there). A cmd_vel is judged by its receipt time: it
counts until ``cmd_vel_timeout`` after it arrived, whatever its stamp; one stamped more than
``cmd_vel_timeout`` behind the clock is stale and refused. While the clock reads 0 (simulated time before
the first /clock) stamps cannot be judged and are taken. Base states also pass the plausibility gate
(base_gate.py): a refused one is not used, the joint states are answered with the last accepted one while
it is within ``base_state_max_age`` and then with the hold (legged.py).

Legged mode also publishes the contact schedule (kinodyn_interfaces/ContactStates, the feet in stance),
stamped ``contact_schedule_lead`` after the joint state it answers: the estimator orders its inputs by
stamp, and the schedule of ``t_k`` must not wait for the command of ``t_k``, which waits for the estimate
of ``t_k``; and, at ``footholds_rate`` (stamp time), the planned footholds of the swinging feet
(geometry_msgs/PoseArray in the base state's frame, for viewers); with the MPC planner, each new plan's
predicted base trajectory once (nav_msgs/Path in the base state's frame, stamped from the plan's start: at
the MPC's rate), with it the plan's forces at its start (visualization_msgs/MarkerArray: an arrow per foot in
stance from its contact point along the ground's force, as long as the nominal base height for the robot's
weight; a foot in swing deletes its arrow) and the planner's state in the diagnostics.
"""

from __future__ import annotations

import math
import operator
from array import array
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from geometry_msgs.msg import Point, Pose, PoseArray, PoseStamped, TwistStamped, Vector3
from kinodyn.control.mpc.srb import rpy_matrices
from kinodyn.control.wbc.controller import RELAXED
from kinodyn.spatial.rotations import (
    matrix_to_euler,
    matrix_to_quat,
)
from kinodyn_common.conversions import (
    InputError,
    JointStateError,
    checked_pose_array,
    joint_state_positions,
    joint_state_vector,
    pose_to_matrix,
)
from kinodyn_common.floating_base import linear_angular, pose_array
from kinodyn_common.input_bounds import JointBounds, check_reach, reach_radius
from kinodyn_common.problem_log import INPUT_ERRORS, DistinctProblemLog, error_text
from kinodyn_common.stamps import NS, ns_to_stamp, stamp_to_ns
from nav_msgs.msg import Odometry, Path
from visualization_msgs.msg import Marker, MarkerArray

from kinodyn_control.estimation.messages import diagnostics_message, status_name
from kinodyn_control.wbc.arm import ArmController
from kinodyn_control.wbc.base_gate import BaseStateGate
from kinodyn_control.wbc.base_sync import BaseStateSync, Paired
from kinodyn_control.wbc.command import CommandLimits, JointCommand, TickResult
from kinodyn_control.wbc.legged import LeggedController
from kinodyn_interfaces.msg import ContactStates, JointPDCommand

if TYPE_CHECKING:
    from collections.abc import Callable

    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState

    from kinodyn import Model

NODE_NAME = "wbc"
_ZERO_POINT, _ZERO_VECTOR = Point(), Vector3()
Joints = tuple[np.ndarray, np.ndarray] | JointStateError
"""A joint state's ``(q, v)`` in the model's order, or why it is unusable (answered with damping)."""
WbcPaired = Paired[tuple[Joints, int], tuple[np.ndarray, np.ndarray]]  # (joints, received ns), (q7, v6)


@dataclass(frozen=True)
class WbcParameters:
    """The parameters of both modes that the node applies live (docs/nodes/wbc.md)."""

    damping_kd: float = 2.0  # N m s/rad, the fallback's damping
    base_state_max_age: float = 0.05  # s of stamp time: an older base state is missing (legged)
    contact_schedule_lead: float = 0.002  # s, the schedule's stamp after the joint state's (legged)
    target_margin: float = 0.05  # m beyond the frame's reach a target may lie (arm)
    diagnostics_rate: float = 2.0  # Hz of stamp time
    footholds_rate: float = 50.0  # Hz of stamp time (legged)
    max_stamp_lead: float = 0.1  # s: an input stamped further ahead of the node's clock is refused

    def __post_init__(self) -> None:
        for name in ("damping_kd", "base_state_max_age", "diagnostics_rate", "footholds_rate",
                     "max_stamp_lead"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"parameter {name} must be a positive finite number, got {value}")
        for name in ("contact_schedule_lead", "target_margin"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"parameter {name} must be a finite number >= 0, got {value}")


@dataclass
class Answer:
    """What one joint state (stamped ``stamp_ns``) produces: the command, as the finalised arrays in the
    model's joint order (``joint_command``) and as the message ``command``; in legged mode the planned
    ``stance`` and, when a schedule is sent (``schedule_ns``, its stamp), its message ``contacts``;
    diagnostics, footholds and the MPC's path and forces when due. ``command`` and ``contacts`` are built
    when first read, so a caller that applies the arrays (the whole-body controller) or writes its bytes
    from them (the node: raw_messages.joint_pd_command_writer, contact_schedule_writer) builds no message it
    does not publish."""

    stamp_ns: int
    names: list[str]
    joint_command: JointCommand
    stance: dict[str, bool] | None = None
    schedule_ns: int | None = None
    diagnostics: DiagnosticArray | None = None
    footholds: PoseArray | None = None
    mpc_path: Path | None = None
    mpc_forces: MarkerArray | None = None
    received_ns: int | None = None
    """When the joint state this command answers arrived (monotonic clock): the node records the tick's
    latency (``WbcCore.record_latency``) once the command is published."""

    @cached_property
    def command(self) -> JointPDCommand:
        msg = JointPDCommand()
        msg.header.stamp = ns_to_stamp(self.stamp_ns)
        msg.name = self.names
        # array.array('d') fields are taken as they are (a list is checked value by value: a tick's cost)
        msg.position, msg.velocity, msg.effort, msg.kp, msg.kd = (
            array("d", np.ascontiguousarray(a, dtype=np.float64).tobytes())
            for a in self.joint_command.arrays())
        return msg

    @cached_property
    def contacts(self) -> ContactStates | None:
        """The contact schedule (the feet in stance), or None when none is sent with this answer."""
        if self.schedule_ns is None or self.stance is None:
            return None
        msg = ContactStates()
        msg.header.stamp = ns_to_stamp(self.schedule_ns)
        msg.names = list(self.stance)
        msg.in_contact = list(self.stance.values())
        msg.points = [_ZERO_POINT] * len(self.stance)  # a schedule has no contact points or forces (one
        msg.forces = [_ZERO_VECTOR] * len(self.stance)  # zero message shared: never changed)
        return msg


class Window:
    """Counts and timings between two diagnostics messages."""

    def __init__(self) -> None:
        self.ticks = self.damped = self.held = self.saturated = self.failed = self.relaxed = 0
        self.refused_stamps = self.refused_base_states = 0
        self.solve: list[float] = []
        self.latency: list[float] = []


def _stats(values: list[float], prefix: str) -> dict[str, float]:
    if not values:
        return {f"{prefix}_median_ms": math.nan, f"{prefix}_max_ms": math.nan}
    return {f"{prefix}_median_ms": 1e3 * float(np.median(values)), f"{prefix}_max_ms": 1e3 * max(values)}


def _base_state(frame: str, child_frame: str, root: str, pose: np.ndarray, twist: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """``(q[:7], v[:6])`` of a base state's numbers, quaternion normalized; ValueError (InputError) for an
    empty ``frame``, a ``child_frame`` neither empty nor ``root``, a pose that ``conversions.pose_to_matrix``
    refuses (non-finite, too large, non-unit quaternion) or a non-finite twist."""
    if not frame:
        raise InputError("empty_frame_id", "base state has an empty header.frame_id; name the odometry frame "
                         "(e.g. 'odom')")
    if child_frame not in ("", root):
        raise InputError("child_frame_id", f"base state child_frame_id {child_frame!r} is not the URDF root "
                         f"link {root!r}; the base pose and twist must be those of the root link")
    v6 = np.array(twist, dtype=np.float64)
    if np.shape(pose) != (7,) or v6.shape != (6,):
        raise InputError("shape", f"base state pose has {np.size(pose)} numbers and twist {v6.size}: 7 and 6 "
                         "needed")
    q7 = checked_pose_array(pose, "base state pose")
    if not (math.isfinite(v6.dot(v6)) or np.isfinite(v6).all()):  # a finite sum of squares: all finite
        raise InputError("non_finite_twist", f"base state twist is not finite: linear {v6[:3]}, angular "
                         f"{v6[3:]}")
    return q7, v6


class WbcCore:
    """The `wbc` node's logic (module doc). ``controller`` is an ``ArmController`` or a ``LeggedController``;
    ``problems`` logs each distinct problem throttled; ``info`` logs one line; ``clock`` reads the node's
    clock [ns] (the ROS clock: simulated time with ``use_sim_time``); ``base_state_wait`` and
    ``base_state_lockstep`` set the base-state pairing (base_sync.BaseStateSync)."""

    def __init__(self, model: Model, controller: ArmController | LeggedController, params: WbcParameters,
                 bounds: JointBounds, problems: DistinctProblemLog, info: Callable[[str], Any],
                 base_state_wait: float = 0.05, base_state_topic: str = "odometry/filtered", *,
                 clock: Callable[[], int], base_state_lockstep: bool = False) -> None:
        self.model, self.controller, self.params = model, controller, params
        self.legged = isinstance(controller, LeggedController)
        self.names = list(model.joint_names)
        self.root = model.frame_names[0]  # the URDF root link
        self.robot = model.name  # the diagnostics' hardware_id
        self.limits = CommandLimits(model)
        self.bounds = bounds
        index = {n: i for i, n in enumerate(bounds.names)}
        order = [index[n] for n in self.names]  # the accepted ranges in the model's joint order
        self._q_lower, self._q_upper = bounds.lower[order], bounds.upper[order]
        self._q_bounds = (self._q_lower.tolist(), self._q_upper.tolist())
        self.problems, self.info = problems, info
        self.sync: BaseStateSync[tuple[Joints, int], tuple[np.ndarray, np.ndarray]] = BaseStateSync(
            round(base_state_wait * NS), base_state_lockstep)
        self.gate = BaseStateGate()
        self.clock = clock
        self.base_state_topic = base_state_topic
        self._reach = math.inf
        if isinstance(controller, ArmController):
            self._reach = reach_radius(model, controller.params.frame)
        self._cmd = np.zeros(3)
        self._cmd_received: int | None = None  # node clock [ns] when the cmd_vel in force arrived
        self._stance: dict[str, bool] = {}
        if isinstance(controller, LeggedController):
            self._stance = dict.fromkeys(controller.settings.feet, True)
        self._schedule_stamp = -1
        self._window = Window()
        self._next_diagnostics: int | None = None
        self._next_footholds: int | None = None
        self._mpc_path_t0 = math.nan  # the start of the last plan published
        self._mpc_state = ""  # the MPC planner's state at the last tick
        self._base_frame = "odom"  # header.frame_id of the last base state
        self._last: TickResult = TickResult(None, "no joint state yet")
        self._base_age = math.nan
        self._waiting_reported = False
        self.controlled_ticks = 0  # ticks the mode's controller ran (not held, not refused)

    # ----- inputs ------------------------------------------------------------------------------------

    def on_joint_state(self, msg: JointState, received_ns: int) -> list[Answer]:
        """``received_ns``: the monotonic clock when the message arrived (the tick's latency starts there).
        A joint state stamped ahead of the clock is refused (InputError) and not answered; an unusable one is
        answered with damping."""
        stamp = stamp_to_ns(msg.header.stamp)
        try:
            joints: Joints = self._joints(msg)
        except JointStateError as exc:
            joints = exc
        return self._joint_state(stamp, joints, received_ns)

    def on_joint_state_arrays(self, stamp: int, positions: np.ndarray, velocities: np.ndarray,
                              received_ns: int) -> list[Answer]:
        """A joint state stamped ``stamp`` [ns] as positions and velocities in the model's joint order, with
        ``on_joint_state``'s checks (finite, within the bounds) and answers."""
        try:
            joints: Joints = self._joint_arrays(positions, velocities)
        except JointStateError as exc:
            joints = exc
        return self._joint_state(stamp, joints, received_ns)

    def _joint_state(self, stamp: int, joints: Joints, received_ns: int) -> list[Answer]:
        """A joint state's ``(q, v)`` (or why it is unusable): refused when stamped ahead, else answered
        (legged: once paired with a base state)."""
        self._check_lead("joint_states", stamp, "not answered")
        if not self.legged:
            return [self._answer(Paired(stamp, (joints, received_ns), None, None, False))]
        return [self._answer(p) for p in self.sync.joint_state(stamp, (joints, received_ns), received_ns)]

    def on_base_state(self, msg: Odometry) -> list[Answer]:
        """A base state (legged) as nav_msgs/Odometry: its numbers to ``on_base_state_arrays``."""
        return self.on_base_state_arrays(stamp_to_ns(msg.header.stamp), msg.header.frame_id,
                                         msg.child_frame_id, pose_array(msg.pose.pose),
                                         linear_angular(msg.twist.twist))

    def on_base_state_arrays(self, stamp: int, frame: str, child_frame: str, pose: np.ndarray,
                             twist: np.ndarray) -> list[Answer]:
        """A base state (legged) stamped ``stamp`` [ns]: the pose ``[x, y, z, qx, qy, qz, qw]`` of
        ``child_frame`` (empty or the URDF root link) in ``frame`` and its twist ``[linear; angular]`` in
        ``child_frame``, as an Odometry carries them. Validated (stamp, frames, content, plausibility), then
        paired with a joint state that waits for it; ValueError (InputError) when refused."""
        self._check_lead(self.base_state_topic, stamp, "not used")
        q7, v6 = _base_state(frame, child_frame, self.root, pose, twist)
        verdict = self.gate.check(stamp, q7, v6, self.controller.settings,  # type: ignore[union-attr]
                                  self.params.base_state_max_age)
        if verdict.refused:
            self._window.refused_base_states += 1
            raise InputError("implausible", f"base state at t = {stamp / NS:.6f} s refused: {verdict.text}; "
                             "controlling on the last accepted one while it is within base_state_max_age = "
                             f"{self.params.base_state_max_age} s, then holding the posture", verdict.cause)
        if verdict.reanchored:
            self.problems.warn(("base_state", "reanchored"), f"{self.base_state_topic}: every base state "
                               "refused for base_reanchor_time; the one at t = "
                               f"{stamp / NS:.6f} s is the new reference ({verdict.text})")
        self._base_frame = frame
        return [self._answer(p) for p in self.sync.base_state(stamp, (q7, v6))]

    def _check_lead(self, topic: str, stamp: int, consequence: str) -> None:
        """InputError unless ``stamp`` is at most ``max_stamp_lead`` ahead of the clock (module doc)."""
        now = self.clock()
        if now > 0 and stamp - now > round(self.params.max_stamp_lead * NS):
            self._window.refused_stamps += 1
            raise InputError("stamp_ahead", f"{topic} stamped t = {stamp / NS:.6f} s is "
                             f"{(stamp - now) / NS:.6f} s ahead of this node's clock (t = {now / NS:.6f} s; "
                             f"max_stamp_lead = {self.params.max_stamp_lead} s): refused, {consequence}; "
                             "check the publisher's clock (in simulation every node runs with use_sim_time)",
                             topic)

    def record_latency(self, received_ns: int, sent_ns: int) -> None:
        """One tick's latency, from its joint state's arrival to its command's publication (monotonic ns)."""
        self._window.latency.append((sent_ns - received_ns) / NS)

    def poll(self, now_ns: int) -> list[Answer]:
        """Answer a joint state that has waited ``base_state_wait`` for its base state."""
        return [self._answer(p) for p in self.sync.poll(now_ns)]

    def on_cmd_vel(self, msg: TwistStamped, now_ns: int) -> None:
        """The body twist command (vx, vy, wz), received at ``now_ns`` (the node's clock): it counts until
        ``cmd_vel_timeout`` after that. A stamp (0: none) more than ``max_stamp_lead`` ahead of ``now_ns`` or
        more than ``cmd_vel_timeout`` behind it is refused (InputError)."""
        t = msg.twist
        cmd = np.array([t.linear.x, t.linear.y, t.angular.z])
        if not np.all(np.isfinite(cmd)):
            raise InputError("non_finite", f"cmd_vel (vx, vy, wz) = {cmd.tolist()} is not finite; ignored")
        others = np.array([t.linear.z, t.angular.x, t.angular.y])
        if np.any(others != 0.0):
            self.problems.warn(("cmd_vel", "unused"), "cmd_vel: linear.z, angular.x and angular.y are not "
                               "used (a legged base follows vx, vy and wz only)")
        stamp = stamp_to_ns(msg.header.stamp)
        if stamp > 0:
            self._check_lead("cmd_vel", stamp, "the previous command stays in force")
            timeout = self.controller.settings.cmd_vel_timeout  # type: ignore[union-attr]
            if now_ns > 0 and now_ns - stamp > round(timeout * NS):
                self._window.refused_stamps += 1
                raise InputError("stamp_stale", f"cmd_vel stamped t = {stamp / NS:.6f} s is "
                                 f"{(now_ns - stamp) / NS:.6f} s behind this node's clock (t = "
                                 f"{now_ns / NS:.6f} s), older than cmd_vel_timeout = {timeout} s: stale, "
                                 "refused; check the publisher's clock, or send stamp 0 (taken as received)")
        self._cmd, self._cmd_received = cmd, now_ns

    def on_target_pose(self, msg: PoseStamped) -> None:
        """The arm's target pose of ``frame``, in the root link (``header.frame_id`` empty or the root)."""
        self._check_lead("target_pose", stamp_to_ns(msg.header.stamp), "the previous target stays")
        if msg.header.frame_id not in ("", self.root):
            raise InputError("frame_id", f"target_pose header.frame_id {msg.header.frame_id!r} is not the "
                             f"URDF root link {self.root!r} (or empty); give the target in {self.root!r}")
        T = check_reach(pose_to_matrix(msg.pose), self._reach, self.params.target_margin,
                        self.controller.params.frame)  # type: ignore[union-attr]
        self.controller.target = T  # type: ignore[union-attr]

    def on_base_pose(self, msg: PoseStamped) -> None:
        """Standing base pose offsets (legged): position (x, y, height) and orientation (roll, pitch, yaw)."""
        self._check_lead("base_pose", stamp_to_ns(msg.header.stamp), "the previous pose stays")
        T = pose_to_matrix(msg.pose)
        yaw, pitch, roll = matrix_to_euler(T[:3, :3], "zyx")
        self.controller.set_pose_offset((*T[:3, 3], roll, pitch, yaw))  # type: ignore[union-attr]

    # ----- one answer --------------------------------------------------------------------------------

    def _answer(self, paired: WbcPaired) -> Answer:
        joints, received_ns = paired.joints
        stamp = paired.stamp_ns
        q: np.ndarray | None = None
        if isinstance(joints, JointStateError):
            exc = joints
            self.problems.warn(("joint_states", exc.key), f"joint_states at t = {stamp / NS:.6f} s unusable: "
                               f"{exc}; sending damping")
            result = TickResult(None, "bad_joint_state", str(exc))
        else:
            q, v = joints
            result = self._tick(stamp, q, v, paired)
        command = result.command
        if command is None:
            self._window.damped += 1
            command = self.limits.damping(q, self.params.damping_kd)
            if result.status not in ("bad_joint_state", "error"):
                self._window.failed += 1
                self.problems.error(("qp", result.status), f"QP failed at t = {stamp / NS:.6f} s "
                                    f"({result.status}: {result.message}); sending damping (kp 0, kd "
                                    f"{self.params.damping_kd})")
        elif result.status == RELAXED:
            self._window.relaxed += 1
            self.problems.warn(("qp_relaxed",), f"QP relaxed at t = {stamp / NS:.6f} s: its hard constraints "
                               f"could not all hold; {result.message}")
        final = self.limits.finalize(command, q, self.params.damping_kd)
        if final.problem:
            self._window.damped += 1
            self.problems.error(("non_finite_command",), f"command for t = {stamp / NS:.6f} s not sent: "
                                f"{final.problem}; sending damping instead")
        self._window.saturated += final.saturated > 0
        if result.stance is not None:
            self._stance = result.stance
        self._last = result
        out = Answer(stamp, self.names, final.command)
        if self.legged:
            out.stance, out.schedule_ns = self._stance, self._schedule(stamp)
            out.footholds = self._footholds(stamp, result)
            out.mpc_path = self._mpc_path(stamp)
            out.mpc_forces = self._mpc_forces() if out.mpc_path is not None else None
        self._window.ticks += 1
        if result.solve_time is not None:
            self._window.solve.append(result.solve_time)
        out.received_ns = received_ns
        out.diagnostics = self._diagnostics(stamp)
        return out

    def _joints(self, msg: JointState) -> tuple[np.ndarray, np.ndarray]:
        if len(msg.velocity) == 0:
            raise JointStateError("no_velocity", "JointState has no velocities; the controller needs them")
        n = len(self.names)
        sizes_match = len(msg.position) == len(msg.velocity) == n and len(msg.effort) in (0, n)
        if sizes_match and msg.name == self.names:
            # the usual message (control_node's: the model's joints in its order): no reordering; the same
            # checks (finite, within the bounds), a non-finite one left to the full path below to name it
            q, v = np.array(msg.position, dtype=np.float64), np.array(msg.velocity, dtype=np.float64)
            if self._usual(q, v):
                return q, v
        q = self.bounds.check_q(joint_state_positions(msg, self.names).values)
        return q, joint_state_vector(msg, msg.velocity, self.names, "velocity")

    def _usual(self, q: np.ndarray, v: np.ndarray) -> bool:
        """Whether ``(q, v)`` is the usual joint state: every number finite (a finite sum of squares) and
        every position within its range, on Python floats (else the caller's checks name the problem)."""
        lower, upper = self._q_bounds
        values = q.tolist()
        return (math.isfinite(q.dot(q)) and math.isfinite(v.dot(v)) and all(map(operator.le, lower, values))
                and all(map(operator.le, values, upper)))

    def _joint_arrays(self, positions: np.ndarray, velocities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(q, v)`` of positions and velocities in the model's order; JointStateError naming the joints
        whose values are not finite or out of their range."""
        q, v = np.array(positions, dtype=np.float64), np.array(velocities, dtype=np.float64)
        n = len(self.names)
        if q.shape != (n,) or v.shape != (n,):
            raise JointStateError("length_mismatch", f"{q.size} positions and {v.size} velocities for {n} "
                                  "joints; one each per joint")
        if self._usual(q, v):
            return q, v
        for values, what in ((q, "position"), (v, "velocity")):
            if not np.isfinite(values).all():
                bad = [name for name, x in zip(self.names, values.tolist(), strict=True)
                       if not math.isfinite(x)]
                raise JointStateError("non_finite", f"non-finite {what} for {', '.join(bad)}", what)
        if ((q < self._q_lower) | (q > self._q_upper)).any():
            self.bounds.check_q(q)  # raises, naming the joints outside their range
        return q, v

    def _tick(self, stamp: int, q: np.ndarray, v: np.ndarray, paired: WbcPaired) -> TickResult:
        try:
            if isinstance(self.controller, ArmController):
                self.controlled_ticks += 1
                return self.controller.tick(q, v)
            base = self._base(stamp, paired)
            if base is None:
                self._window.held += 1
                return TickResult(self.controller.hold(), "waiting_for_base_state",
                                  stance=dict.fromkeys(self.controller.settings.feet, True))
            q7, v6 = base
            self.controlled_ticks += 1
            return self.controller.tick(stamp / NS, np.concatenate([q7, q]), np.concatenate([v6, v]),
                                        self._command_at())
        except Exception as exc:  # noqa: BLE001  the controller refused the state or broke: damping, one line per cause
            kind = "bad state" if isinstance(exc, INPUT_ERRORS) else type(exc).__name__
            self.problems.error(("controller", type(exc).__name__),
                                f"controller failed at t = {stamp / NS:.6f} s ({kind}: {error_text(exc)}); "
                                "sending damping")
            return TickResult(None, "error", error_text(exc))

    def _base(self, stamp: int, paired: WbcPaired) -> tuple[np.ndarray, np.ndarray] | None:
        """The paired base state, or None (logged once per outage) when none or too old."""
        if paired.base is None or paired.base_stamp_ns is None:
            age = math.inf
        else:
            age = abs(stamp - paired.base_stamp_ns) / NS
        self._base_age = age
        if age <= self.params.base_state_max_age:
            if self._waiting_reported:
                self.info(f"base state on {self.base_state_topic} back at t = {stamp / NS:.6f} s; "
                          "controlling")
                self._waiting_reported = False
            return paired.base
        if not self._waiting_reported:
            self._waiting_reported = True
            self.problems.warn(("base_state",), f"no base state on {self.base_state_topic} within "
                               f"base_state_max_age = {self.params.base_state_max_age} s of t = "
                               f"{stamp / NS:.6f} s (the estimator initialising, or silent); holding the "
                               "posture")
        return None

    def _command_at(self) -> np.ndarray:
        """The cmd_vel in force: zero once ``cmd_vel_timeout`` passed since it arrived (the node's clock)."""
        settings = self.controller.settings  # type: ignore[union-attr]
        timeout = round(settings.cmd_vel_timeout * NS)
        if self._cmd_received is None or self.clock() - self._cmd_received > timeout:
            return np.zeros(3)
        return self._cmd

    # ----- outputs -----------------------------------------------------------------------------------

    def _schedule(self, stamp: int) -> int | None:
        """The stamp of the contact schedule answering ``stamp``; None when it would not be after the last
        one (stamps must increase: the estimator drops the others)."""
        at = stamp + round(self.params.contact_schedule_lead * NS)
        if at <= self._schedule_stamp:
            return None
        self._schedule_stamp = at
        return at

    def _footholds(self, stamp: int, result: TickResult) -> PoseArray | None:
        """The swinging feet's planned footholds (none: an empty array), every ``1 / footholds_rate`` s."""
        if self._next_footholds is not None and stamp < self._next_footholds:
            return None
        period = round(NS / self.params.footholds_rate)
        self._next_footholds = (stamp // period + 1) * period
        msg = PoseArray()
        msg.header.stamp = ns_to_stamp(stamp)
        msg.header.frame_id = self._base_frame
        for p in (result.footholds or {}).values():
            pose = Pose()
            pose.position.x, pose.position.y, pose.position.z = (float(x) for x in p)
            msg.poses.append(pose)
        return msg

    def _mpc_path(self, stamp: int) -> Path | None:
        """The base trajectory of the MPC's plan in force when it is new (module doc), else None; one
        (throttled) line each time the MPC falls back to the controller's own references."""
        mpc = self.controller.mpc if isinstance(self.controller, LeggedController) else None
        if mpc is None:
            return None
        status = mpc.status
        if status.state == "fallback" and self._mpc_state != "fallback":
            self.problems.warn(("mpc_fallback",), f"MPC plan not applied at t = {stamp / NS:.6f} s: "
                               f"{status.reason}; the locomotion controller's own references until the next "
                               "good solve")
        self._mpc_state = status.state
        plan = mpc.planner.plan
        if plan is None or plan.t0 == self._mpc_path_t0:
            return None
        self._mpc_path_t0 = plan.t0
        solution = plan.solution
        assert solution.base_positions is not None
        assert solution.states is not None  # (a plan has them)
        msg = Path()
        msg.header.stamp = ns_to_stamp(round(plan.t0 * NS))
        msg.header.frame_id = self._base_frame
        rotations = rpy_matrices(solution.states[:, :3])
        for dt, p, C in zip(solution.times, solution.base_positions, rotations, strict=True):
            pose = PoseStamped()
            pose.header.stamp = ns_to_stamp(round((plan.t0 + dt) * NS))
            pose.header.frame_id = self._base_frame
            pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = (float(x) for x in p)
            o = pose.pose.orientation
            o.x, o.y, o.z, o.w = (float(x) for x in matrix_to_quat(C))
            msg.poses.append(pose)
        return msg

    def _mpc_forces(self) -> MarkerArray:
        """The forces of the plan ``_mpc_path`` has just published, at its start (module doc): marker ``i``
        is foot ``i``'s arrow (shaft 4 % of the nominal base height thick), or its deletion in swing."""
        legged = self.controller
        assert isinstance(legged, LeggedController)
        assert legged.mpc is not None  # (_mpc_path published)
        plan = legged.mpc.planner.plan
        assert plan is not None
        assert plan.solution.forces is not None
        stance, contacts, forces = plan.inputs[2][0], plan.inputs[3][0], plan.solution.forces[0]
        height = legged.controller.nominal_height
        length = height / legged.mpc.mpc.body.weight  # m per N
        stamp = ns_to_stamp(round(plan.t0 * NS))
        msg = MarkerArray()
        for i in range(len(legged.mpc.feet)):
            marker = Marker()
            marker.header.stamp = stamp
            marker.header.frame_id = self._base_frame
            marker.ns, marker.id = "mpc_forces", i
            marker.type = Marker.ARROW
            if stance[i]:
                marker.action = Marker.ADD
                start, end = Point(), Point()
                start.x, start.y, start.z = (float(x) for x in contacts[i])
                end.x, end.y, end.z = (float(x) for x in contacts[i] + length * forces[i])
                marker.points = [start, end]
                marker.scale.x, marker.scale.y, marker.scale.z = 0.04 * height, 0.08 * height, 0.12 * height
                marker.color.r, marker.color.g, marker.color.b, marker.color.a = 1.0, 0.5, 0.0, 1.0
                marker.pose.orientation.w = 1.0
            else:
                marker.action = Marker.DELETE
            msg.markers.append(marker)
        return msg

    def _diagnostics(self, stamp: int) -> DiagnosticArray | None:
        if self._next_diagnostics is not None and stamp < self._next_diagnostics:
            return None
        period = round(NS / self.params.diagnostics_rate)
        self._next_diagnostics = (stamp // period + 1) * period
        w, last = self._window, self._last
        level = "error" if w.failed else "warn" if (w.damped or w.held or w.relaxed or w.refused_stamps or
                                                       w.refused_base_states) else "ok"
        values: dict[str, Any] = {"mode": "legged" if self.legged else "arm", "status": last.status,
                                  "message": last.message, "ticks": w.ticks, "damped_ticks": w.damped,
                                  "held_ticks": w.held, "qp_failures": w.failed, "relaxed_ticks": w.relaxed,
                                  "saturated_ticks": w.saturated, "refused_stamps": w.refused_stamps}
        values.update(_stats(w.solve, "solve_time"))
        values.update(_stats(w.latency, "tick_latency"))
        values["solve_times_us"] = " ".join(str(round(1e6 * x)) for x in w.solve)  # per tick, for reports
        values["tick_latencies_us"] = " ".join(str(round(1e6 * x)) for x in w.latency)
        if self.legged:
            values.update(locomotion_mode=last.mode, base_state_age_s=self._base_age,
                          base_state_waits_expired=self.sync.timeouts,
                          feet_in_stance=sum(self._stance.values()),
                          refused_base_states=w.refused_base_states)
            mpc = self.controller.mpc if isinstance(self.controller, LeggedController) else None
            if mpc is not None:
                m = mpc.status
                values.update(mpc_state=m.state, mpc_reason=m.reason, mpc_plan_age_s=m.plan_age,
                              mpc_solves=m.solves, mpc_failures=m.failures, mpc_late=m.late,
                              mpc_solve_time=m.solve_time)
        for name, error in (last.task_errors or {}).items():
            values[f"task_error_{name}"] = math.sqrt(float(error @ error))  # np.linalg.norm's number
        message = {"ok": "controlling", "error": "QP failures",
                   "warn": "fallback used (damping or holding), QP relaxed or input refused"}
        self._window = Window()
        return diagnostics_message(stamp, status_name(NODE_NAME, "whole-body control"), self.robot, level,
                                   f"{message[level]}: {last.status}", values)

