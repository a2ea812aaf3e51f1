"""kinematics: forward and inverse kinematics services and streaming CLIK (docs/nodes/kinematics.md).

Services `~/compute_fk` (kinodyn.Model.frame_placement) and `~/compute_ik` (kinodyn.ik.solve_ik). When
`ik_frame` is set, a `~/target_pose` topic drives closed-loop IK (kinodyn.ik.clik, Robot Dynamics lecture
notes (ETH) §2.9.4) from the
current `joint_states`, and joint position commands are published on `~/joint_commands` at `rate_hz`.
With `floating_base`, the base pose comes with each request (`base_pose`) and, for CLIK, from
nav_msgs/Odometry on `odometry`; poses are in `world_frame` and only the joints move.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import PoseStamped
from kinodyn.ik import FrameTask, solve_ik
from kinodyn.ik.clik import ClosedLoopIK
from kinodyn_common.conversions import (
    InputError,
    array_to_multiarray,
    joint_state_to_q,
    matrix_to_pose,
    pose_to_matrix,
    q_to_joint_state,
    quoted,
)
from kinodyn_common.finite import publish_finite
from kinodyn_common.floating_base import base_induced_twist, configuration, odometry_base_state
from kinodyn_common.input_bounds import check_reach, declare_joint_bounds, reach_radius
from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import check_fields, declare_dataclass
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.robot_description import declare_and_load_model
from kinodyn_common.service_call import answering_bad_requests, error_text
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header

from kinodyn_interfaces.srv import ComputeFK, ComputeIK

NODE_NAME = "kinematics"
ZERO_TWIST = np.zeros(6)
"""CLIK feed-forward: a target pose topic carries no desired velocity."""


@dataclass(frozen=True)
class KinematicsParameters:
    """The node's own parameters (docs/nodes/kinematics.md) but for those of a floating base and of streaming
    CLIK (below; the robot description's and the joint bounds' are declared by their helpers)."""

    floating_base: bool = False
    ik_frame: str = ""  # the frame streaming CLIK moves; '' for none
    ik_target_margin: float = 1.0  # m beyond the frame's reach a target may lie
    ik_position_tolerance: float = 1e-6  # m, a request's default
    ik_orientation_tolerance: float = 1e-6  # rad, a request's default
    ik_timeout: float = 1.0  # s, a request's default

    def __post_init__(self) -> None:
        check_fields(self, positive=("ik_position_tolerance", "ik_orientation_tolerance", "ik_timeout"),
                     non_negative=("ik_target_margin",))


@dataclass(frozen=True)
class WorldFrame:
    """Declared with ``floating_base`` only: the frame of poses (a fixed base's is its root link)."""

    world_frame: str = "odom"


@dataclass(frozen=True)
class ClikParameters:
    """Declared with ``ik_frame`` only: streaming CLIK's rate, gain and damping."""

    rate_hz: float = 50.0
    clik_gain: float = 10.0
    clik_damping: float = 1e-2

    def __post_init__(self) -> None:
        check_fields(self, positive=("rate_hz", "clik_gain"), non_negative=("clik_damping",))


def request_tolerance(value: float, default: float, name: str) -> float:
    """A tolerance or timeout of a request: 0 means the node's ``default``, else positive and finite."""
    if value == 0.0:
        return default
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be positive (or 0 for the node's default {default}), got {value}")
    return value


def mid_range(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Middle of each joint's range, 0 where a limit is infinite: the IK seed when a request gives none (as
    solve_ik's default, TRAC-IK's)."""
    finite = np.isfinite(lower) & np.isfinite(upper)
    middle = np.zeros(lower.shape)
    middle[finite] = 0.5 * (lower[finite] + upper[finite])
    return middle


def velocity_limited_step(qdot: np.ndarray, velocity_limit: np.ndarray) -> np.ndarray:
    """``qdot`` scaled down uniformly (direction kept) so that no joint exceeds its velocity limit."""
    scale = float(np.max(np.abs(qdot) / velocity_limit, initial=1.0))
    return qdot / scale


class Kinematics(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self._params = declare_dataclass(self, KinematicsParameters)
        floating_base = self._params.floating_base
        self._model, _, source = declare_and_load_model(self, floating_base)
        self._root = self._model.frame_names[0]
        self._world = declare_dataclass(self, WorldFrame).world_frame if floating_base else self._root
        self._first = self._model.nq - len(self._model.joint_names)  # a floating base's 7 coordinates first
        self._joint_lower = self._model.lower_limit[self._first :]
        self._joint_upper = self._model.upper_limit[self._first :]
        self._active_joints = self._model.joint_names if floating_base else None  # IK holds the base
        self._bounds = declare_joint_bounds(self, self._model)
        self._problems = DistinctProblemLog(self.get_logger())
        self._compile_kernels()
        self.create_service(
            ComputeFK, "~/compute_fk", answering_bad_requests("compute_fk", self._problems, self._compute_fk)
        )
        self.create_service(
            ComputeIK, "~/compute_ik", answering_bad_requests("compute_ik", self._problems, self._compute_ik)
        )
        ik_frame = self._params.ik_frame
        streaming = f"streaming CLIK for {ik_frame!r}" if ik_frame else "no streaming (ik_frame not set)"
        if ik_frame:
            self._start_streaming(ik_frame)
        self.get_logger().info(
            f"URDF from {source}: {len(self._model.joint_names)} joints, {self._model.nframes} frames in "
            f"{self._world!r}{' on a floating base' if floating_base else ''}; "
            f"services {self.get_fully_qualified_name()}/compute_fk and compute_ik; {streaming}"
        )

    def _compile_kernels(self) -> None:
        """One FK and one IK step, so numba compiles (or loads from its disk cache) before the services
        exist and the first request's timeout is not spent compiling."""
        model = self._model
        frame = model.frame_names[-1]
        q = np.clip(model.neutral(), model.lower_limit, model.upper_limit)
        target = model.frame_placement(q, frame)
        target[:3, 3] += 0.01
        solve_ik(model, frame, target, q_seed=q, max_iterations=1, restarts=0)

    # --- services ------------------------------------------------------------------------------
    def _compute_fk(self, request: ComputeFK.Request, response: ComputeFK.Response) -> ComputeFK.Response:
        joints = self._bounds.check_q(joint_state_to_q(request.joint_state, self._model.joint_names))
        q = configuration(self._model, joints, request.base_pose, "base_pose")
        if not request.frames:
            raise ValueError("frames is empty; name at least one URDF link")
        placements = [self._model.frame_placement(q, frame) for frame in request.frames]
        header = Header(stamp=self.get_clock().now().to_msg(), frame_id=self._world)
        response.poses = [PoseStamped(header=header, pose=matrix_to_pose(T)) for T in placements]
        response.success = True
        return response

    def _target_in_root(self, msg: PoseStamped, frame: str) -> np.ndarray:
        """``T_world_target`` of ``frame``; the pose must be given in the model's world frame (the root link,
        or ``world_frame`` with a floating base; no tf lookup here) and lie within the frame's reach plus
        ``ik_target_margin`` (else InputError)."""
        if msg.header.frame_id not in ("", self._world):
            raise InputError(
                "target_frame_id",
                f"target pose is in frame {quoted(msg.header.frame_id)}; give it in the model's world frame "
                f"{self._world!r} (or leave header.frame_id empty)",
            )
        reach = reach_radius(self._model, frame)
        return check_reach(pose_to_matrix(msg.pose), reach, self._params.ik_target_margin, frame)

    def _compute_ik(self, request: ComputeIK.Request, response: ComputeIK.Response) -> ComputeIK.Response:
        model = self._model
        self._model.frame_id(request.frame)  # KeyError naming close link names
        target = self._target_in_root(request.target, request.frame)
        if request.seed.name or request.seed.position:
            seed = np.clip(
                self._bounds.check_q(joint_state_to_q(request.seed, model.joint_names)),
                self._joint_lower,
                self._joint_upper,
            )
        else:
            seed = mid_range(self._joint_lower, self._joint_upper)
        result = solve_ik(
            model,
            request.frame,
            target,
            q_seed=configuration(model, seed, request.base_pose, "base_pose"),
            active_joints=self._active_joints,
            position_tolerance=request_tolerance(
                request.position_tolerance, self._params.ik_position_tolerance, "position_tolerance"
            ),
            orientation_tolerance=request_tolerance(
                request.orientation_tolerance, self._params.ik_orientation_tolerance, "orientation_tolerance"
            ),
            timeout=request_tolerance(request.timeout, self._params.ik_timeout, "timeout"),
        )
        response.success = result.success
        joints = result.q[self._first :]
        response.solution = q_to_joint_state(model.joint_names, joints, self.get_clock().now().to_msg())
        response.position_error = result.position_error
        response.orientation_error = result.orientation_error
        if not result.success:
            response.message = (
                f"compute_ik: target not reached ({result.status} after {result.iterations} iterations, "
                f"{result.restarts} restarts); the closest solution is returned, with position error "
                f"{result.position_error:.3g} m and orientation error {result.orientation_error:.3g} rad"
            )
        return response

    # --- streaming CLIK --------------------------------------------------------------------------
    def _start_streaming(self, frame: str) -> None:
        model = self._model
        try:
            task = FrameTask(model, frame, model.frame_placement(model.neutral(), frame))
        except KeyError as exc:
            raise ValueError(f"parameter ik_frame: {error_text(exc)}") from None
        clik = declare_dataclass(self, ClikParameters)
        self._clik = ClosedLoopIK(model, [task], clik.clik_gain, clik.clik_damping, self._active_joints)
        self._ik_frame = frame
        self._dt = 1.0 / clik.rate_hz
        self._q: np.ndarray | None = None
        self._target: np.ndarray | None = None
        self._base: tuple[np.ndarray, np.ndarray] | None = None  # (q[:7], v[:6]) of the latest odometry
        if model.floating_base:
            self.create_subscription(
                Odometry,
                "odometry",
                dropping_bad_messages(self._problems, "odometry message", self._on_odometry),
                qos_profile_sensor_data,
            )
        self.create_subscription(
            JointState,
            "joint_states",
            dropping_bad_messages(self._problems, "joint_states message", self._on_joint_state),
            qos_profile_sensor_data,
        )
        self.create_subscription(
            PoseStamped,
            "~/target_pose",
            dropping_bad_messages(self._problems, "target pose", self._on_target_pose),
            QoSProfile(depth=10),
        )
        self._commands = self.create_publisher(Float64MultiArray, "~/joint_commands", QoSProfile(depth=10))
        self.create_timer(self._dt, dropping_bad_messages(self._problems, "CLIK step", self._step))

    def _on_joint_state(self, msg: JointState) -> None:
        """Keep the positions of ``msg`` for CLIK; a message that is not usable raises (dropped, logged)."""
        self._q = self._bounds.check_q(joint_state_to_q(msg, self._model.joint_names))

    def _on_target_pose(self, msg: PoseStamped) -> None:
        """Take the CLIK target; a pose that is not usable raises (dropped, logged)."""
        target = self._target_in_root(msg, self._ik_frame)
        self._clik.tasks[0].set_target(target)  # validates before the target is taken
        self._target = target

    def _on_odometry(self, msg: Odometry) -> None:
        """Take the base pose and twist for CLIK; a message that is not usable raises (dropped, logged)."""
        frame, q_base, v_base = odometry_base_state(msg, self._root)
        if frame != self._world:
            raise InputError(
                "odometry_frame_id",
                f"Odometry header.frame_id {quoted(frame)} is not the world frame {self._world!r} (parameter "
                "world_frame) that target poses are given in",
            )
        self._base = (q_base, v_base)

    def _step(self) -> None:
        """One CLIK step from the latest joint state (and base state): ``q_cmd = q ⊕ q̇ dt`` over the joints,
        within their limits; with a floating base, the twist the base velocity gives the frame is subtracted
        as feed-forward (the target holds still in the world)."""
        if self._q is None or self._target is None:
            return
        model = self._model
        q, feedforward = self._q, ZERO_TWIST
        if model.floating_base:
            if self._base is None:
                return
            q = np.concatenate([self._base[0], self._q])
            feedforward = -base_induced_twist(model, q, self._ik_frame, self._base[1])
        qdot = velocity_limited_step(
            self._clik.velocity(q, [self._target], [feedforward]), model.velocity_limit
        )
        joints = model.integrate(q, qdot, self._dt)[self._first :]
        command = np.clip(joints, self._joint_lower, self._joint_upper)
        publish_finite(self._commands, array_to_multiarray(command, ["joints"]), self._problems)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, Kinematics, args)


if __name__ == "__main__":
    raise SystemExit(main())
