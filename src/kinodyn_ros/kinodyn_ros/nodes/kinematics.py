"""kinematics: forward and inverse kinematics services and streaming CLIK (docs/nodes/kinematics.md).

Services `~/compute_fk` (kinodyn.Model.frame_placement) and `~/compute_ik` (kinodyn.ik.solve_ik). When
`ik_frame` is set, a `~/target_pose` topic drives closed-loop IK (kinodyn.ik.clik, Seed 000 §2.9.4) from the
current `joint_states`, and joint position commands are published on `~/joint_commands` at `rate_hz`.
"""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import PoseStamped
from kinodyn.ik import FrameTask, solve_ik
from kinodyn.ik.clik import ClosedLoopIK
from rclpy.node import Node
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header

from kinodyn_interfaces.srv import ComputeFK, ComputeIK
from kinodyn_ros.conversions import (
    JointStateError,
    array_to_multiarray,
    joint_state_to_q,
    matrix_to_pose,
    pose_to_matrix,
    q_to_joint_state,
)
from kinodyn_ros.node_runner import run_node
from kinodyn_ros.parameters import declare_positive
from kinodyn_ros.problem_log import DistinctProblemLog
from kinodyn_ros.robot_description import declare_and_load_model
from kinodyn_ros.service_call import answering_bad_requests, error_text

NODE_NAME = "kinematics"
ZERO_TWIST = np.zeros(6)
"""CLIK feed-forward: a target pose topic carries no desired velocity."""


def request_tolerance(value: float, default: float, name: str) -> float:
    """A tolerance or timeout of a request: 0 means the node's ``default``, else positive and finite."""
    if value == 0.0:
        return default
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be positive (or 0 for the node's default {default}), got {value}")
    return value


def velocity_limited_step(qdot: np.ndarray, velocity_limit: np.ndarray) -> np.ndarray:
    """``qdot`` scaled down uniformly (direction kept) so that no joint exceeds its velocity limit."""
    scale = float(np.max(np.abs(qdot) / velocity_limit, initial=1.0))
    return qdot / scale


class Kinematics(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self._model, _, source = declare_and_load_model(self)
        self._root = self._model.frame_names[0]
        self._position_tolerance = declare_positive(self, "ik_position_tolerance", 1e-6)
        self._orientation_tolerance = declare_positive(self, "ik_orientation_tolerance", 1e-6)
        self._timeout = declare_positive(self, "ik_timeout", 1.0)
        self._problems = DistinctProblemLog(self.get_logger())
        self._compile_kernels()
        self.create_service(
            ComputeFK, "~/compute_fk", answering_bad_requests("compute_fk", self._problems, self._compute_fk)
        )
        self.create_service(
            ComputeIK, "~/compute_ik", answering_bad_requests("compute_ik", self._problems, self._compute_ik)
        )
        ik_frame = self.declare_parameter("ik_frame", "").value
        streaming = f"streaming CLIK for {ik_frame!r}" if ik_frame else "no streaming (ik_frame not set)"
        if ik_frame:
            self._start_streaming(ik_frame)
        self.get_logger().info(
            f"URDF from {source}: {self._model.nv} joints, {self._model.nframes} frames in {self._root!r}; "
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
        q = joint_state_to_q(request.joint_state, self._model.joint_names)
        if not request.frames:
            raise ValueError("frames is empty; name at least one URDF link")
        placements = [self._model.frame_placement(q, frame) for frame in request.frames]
        header = Header(stamp=self.get_clock().now().to_msg(), frame_id=self._root)
        response.poses = [PoseStamped(header=header, pose=matrix_to_pose(T)) for T in placements]
        response.success = True
        return response

    def _target_in_root(self, msg: PoseStamped) -> np.ndarray:
        """``T_root_target``; the pose must be given in the root link (no tf lookup here)."""
        if msg.header.frame_id not in ("", self._root):
            raise ValueError(
                f"target pose is in frame {msg.header.frame_id!r}; give it in the root link {self._root!r} "
                "(or leave header.frame_id empty)"
            )
        return pose_to_matrix(msg.pose)

    def _compute_ik(self, request: ComputeIK.Request, response: ComputeIK.Response) -> ComputeIK.Response:
        model = self._model
        self._model.frame_id(request.frame)  # KeyError naming close link names
        target = self._target_in_root(request.target)
        seed = None
        if request.seed.name or request.seed.position:
            seed = np.clip(
                joint_state_to_q(request.seed, model.joint_names), model.lower_limit, model.upper_limit
            )
        result = solve_ik(
            model,
            request.frame,
            target,
            q_seed=seed,
            position_tolerance=request_tolerance(
                request.position_tolerance, self._position_tolerance, "position_tolerance"
            ),
            orientation_tolerance=request_tolerance(
                request.orientation_tolerance, self._orientation_tolerance, "orientation_tolerance"
            ),
            timeout=request_tolerance(request.timeout, self._timeout, "timeout"),
        )
        response.success = result.success
        response.solution = q_to_joint_state(model.joint_names, result.q, self.get_clock().now().to_msg())
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
        rate_hz = declare_positive(self, "rate_hz", 50.0)
        gain = declare_positive(self, "clik_gain", 10.0)
        damping = self.declare_parameter("clik_damping", 1e-2).value
        if not (math.isfinite(damping) and damping >= 0.0):
            raise ValueError(f"parameter clik_damping must be a finite number >= 0, got {damping}")
        self._clik = ClosedLoopIK(model, [task], gain, damping)
        self._dt = 1.0 / rate_hz
        self._q: np.ndarray | None = None
        self._target: np.ndarray | None = None
        self.create_subscription(JointState, "joint_states", self._on_joint_state, qos_profile_sensor_data)
        self.create_subscription(PoseStamped, "~/target_pose", self._on_target_pose, QoSProfile(depth=10))
        self._commands = self.create_publisher(Float64MultiArray, "~/joint_commands", QoSProfile(depth=10))
        self.create_timer(self._dt, self._step)

    def _on_joint_state(self, msg: JointState) -> None:
        try:
            self._q = joint_state_to_q(msg, self._model.joint_names)
        except JointStateError as exc:
            self._problems.warn(exc.key, f"ignoring joint_states message: {exc}")

    def _on_target_pose(self, msg: PoseStamped) -> None:
        try:
            target = self._target_in_root(msg)
            self._clik.tasks[0].set_target(target)  # validates before the target is taken
        except ValueError as exc:
            self._problems.warn(("target_pose", str(exc)), f"ignoring target pose: {exc}")
            return
        self._target = target

    def _step(self) -> None:
        """One CLIK step from the latest joint state: ``q_cmd = q ⊕ q̇ dt``, within the joint limits."""
        if self._q is None or self._target is None:
            return
        model = self._model
        qdot = velocity_limited_step(
            self._clik.velocity(self._q, [self._target], [ZERO_TWIST]), model.velocity_limit
        )
        command = np.clip(model.integrate(self._q, qdot, self._dt), model.lower_limit, model.upper_limit)
        self._commands.publish(array_to_multiarray(command, ["joints"]))


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, Kinematics, args)


if __name__ == "__main__":
    raise SystemExit(main())
