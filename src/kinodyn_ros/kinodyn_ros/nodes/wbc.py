"""wbc: whole-body control over ROS 2, a thin adapter over kinodyn.control (docs/nodes/wbc.md).

``mode: legged``: kinodyn.control.locomotion.LocomotionController (sit, stand, trot on ``~/cmd_vel``) from
``joint_states`` and the base state (nav_msgs/Odometry on ``base_state_topic``); also publishes the contact
schedule. ``mode: arm``: operational space control of ``frame`` towards ``~/target_pose`` with a null-space
posture. Each joint state is answered by one kinodyn_interfaces/JointPDCommand on ``joint_pd_command``
stamped with it (lockstep). The logic is WbcCore's (kinodyn_control/wbc/core.py); this node only moves
messages.
The joint states and base states are taken serialized and read into numpy (raw_messages: bytes that are not a
message of the type are one line, the message dropped); the command and the contact schedule are published as
bytes written from the finalised arrays and the planned stance (raw_messages.joint_pd_command_writer,
contact_schedule_writer), a command only when all its numbers are finite.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseArray, PoseStamped, TwistStamped
from kinodyn.control.locomotion import LocomotionParameters
from kinodyn_common.finite import publish_finite
from kinodyn_common.input_bounds import declare_joint_bounds
from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import apply_changes, declare_count, declare_dataclass, declare_non_negative
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.raw_messages import (
    JointStateReader,
    OdometryReader,
    contact_schedule_writer,
    joint_pd_command_writer,
)
from kinodyn_common.realtime import HeapFreeze, set_fifo_priority
from kinodyn_common.robot_description import declare_and_load_model
from kinodyn_common.stamps import stamp_to_ns
from kinodyn_control.wbc.arm import ArmController, ArmParameters
from kinodyn_control.wbc.core import NODE_NAME, Answer, WbcCore, WbcParameters
from kinodyn_control.wbc.legged import LeggedController, LeggedSettings
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from kinodyn_interfaces.msg import ContactStates, JointPDCommand

if TYPE_CHECKING:
    from collections.abc import Callable

    from rclpy.parameter import Parameter

MODES = ("legged", "arm")
STARTUP_ONLY = ("mode", "robot_description", "robot_description_file", "base_state_topic", "qos_depth",
                "qos_reliable", "base_state_wait", "base_state_lockstep", "joint_position_margin",
                "continuous_position_bound", "realtime_priority")
"""Parameters a running node refuses to change (restart it); the controllers refuse ``frame`` (arm), ``feet``
and ``posture`` (legged) themselves."""
POLL_PERIOD = 0.005  # s of the monotonic clock: how often a joint state waiting for its base state is checked


class Wbc(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        mode: str = self.declare_parameter("mode", "legged").value
        if mode not in MODES:
            raise ValueError(f"parameter mode must be one of {', '.join(MODES)}, got {mode!r}")
        model, _, source = declare_and_load_model(self, floating_base=mode == "legged")
        bounds = declare_joint_bounds(self, model)
        self._params = declare_dataclass(self, WbcParameters)
        depth = declare_count(self, "qos_depth", 10, "messages queued per topic")
        reliable = bool(self.declare_parameter("qos_reliable", True).value)
        self._problems = DistinctProblemLog(self.get_logger())
        controller: ArmController | LeggedController
        wait, topic, lockstep = 0.0, "", False
        if mode == "arm":
            self._arm = declare_dataclass(self, ArmParameters)
            controller = ArmController(model, self._arm)
        else:
            wait = declare_non_negative(self, "base_state_wait", 0.05)
            lockstep = self.declare_parameter("base_state_lockstep", False).value
            if not isinstance(lockstep, bool):
                raise ValueError(f"parameter base_state_lockstep must be true or false, got {lockstep!r}")
            topic = self.declare_parameter("base_state_topic", "odometry/filtered").value
            self._legged = declare_dataclass(self, LeggedSettings)
            self._locomotion = declare_dataclass(self, LocomotionParameters)
            controller = LeggedController(model, self._legged, self._locomotion)
        self._core = WbcCore(model, controller, self._params, bounds, self._problems, self.get_logger().info,
                             wait, topic, clock=lambda: self.get_clock().now().nanoseconds,
                             base_state_lockstep=lockstep)
        inputs = QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=depth, durability=DurabilityPolicy.VOLATILE,
            reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT)
        outputs = QoSProfile(depth=max(depth, 10))
        self._command = self.create_publisher(JointPDCommand, "joint_pd_command", outputs)
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", outputs)
        self._contacts = self._footholds = self._mpc_path = self._mpc_forces = None
        self._heap = HeapFreeze()  # once the first ticks have made every kernel and cache
        self._command_writer, self._schedule_writer = joint_pd_command_writer(), contact_schedule_writer()
        self._joint_states, self._base_states = JointStateReader(), OdometryReader()
        if mode == "legged":  # the executor runs callbacks in arrival order: a base state that came first
            # (ground truth) is paired before its joint state, which then need not wait for it
            self.create_subscription(Odometry, topic, self._callback(topic, self._on_base_state), inputs,
                                     raw=True)
        self.create_subscription(JointState, "joint_states",
                                 self._callback("joint_states", self._on_joint_state), inputs, raw=True)
        if mode == "legged":
            self._contacts = self.create_publisher(ContactStates, "contact_schedule", outputs)
            self._footholds = self.create_publisher(PoseArray, "~/footholds", outputs)
            if self._legged.planner == "mpc":
                self._mpc_path = self.create_publisher(Path, "~/mpc/path", outputs)
                self._mpc_forces = self.create_publisher(MarkerArray, "~/mpc/forces", outputs)
            self.create_subscription(TwistStamped, "~/cmd_vel", self._callback("cmd_vel", self._on_cmd_vel),
                                     inputs)
            self.create_subscription(PoseStamped, "~/base_pose",
                                     self._callback("base_pose", self._core.on_base_pose), inputs)
            if wait > 0.0:
                self.create_timer(POLL_PERIOD, self._callback("poll", self._poll),
                                  clock=Clock(clock_type=ClockType.STEADY_TIME))
        else:
            self.create_subscription(PoseStamped, "~/target_pose",
                                     self._callback("target_pose", self._core.on_target_pose), inputs)
        priority: int = self.declare_parameter("realtime_priority", 0).value
        problem = set_fifo_priority(priority)  # this thread runs the executor (run_node)
        if problem is not None:
            self.get_logger().warning(problem)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        what = (f"frame {self._arm.frame!r} towards ~/target_pose" if mode == "arm" else
                f"feet {list(self._legged.feet)}, base state from {topic!r}, {self._legged.locomotion_mode}")
        self.get_logger().info(f"URDF from {source}: {mode} mode, joints {list(model.joint_names)}; {what}")

    # ----- callbacks ---------------------------------------------------------------------------------

    def _callback(self, what: str, take: Callable[..., None]) -> Callable[..., None]:
        return dropping_bad_messages(self._problems, f"{what} message", take)

    def _on_joint_state(self, raw: bytes) -> None:
        received = time.monotonic_ns()
        self._publish(self._core.on_joint_state(self._joint_states.read(raw), received))

    def _on_base_state(self, raw: bytes) -> None:
        msg = self._base_states.read(raw)
        self._publish(self._core.on_base_state_arrays(stamp_to_ns(msg.header.stamp), msg.header.frame_id,
                                                      msg.child_frame_id, msg.pose, msg.twist))

    def _poll(self) -> None:
        self._publish(self._core.poll(time.monotonic_ns()))

    def _on_cmd_vel(self, msg: TwistStamped) -> None:
        self._core.on_cmd_vel(msg, self.get_clock().now().nanoseconds)

    def _publish(self, answers: list[Answer]) -> None:
        for answer in answers:
            self._publish_command(answer)
            if answer.received_ns is not None:
                self._core.record_latency(answer.received_ns, time.monotonic_ns())
            if answer.schedule_ns is not None and answer.stance is not None and self._contacts is not None:
                self._contacts.publish(self._schedule_writer.write(  # flags only: nothing non-finite
                    answer.schedule_ns, list(answer.stance), in_contact=list(answer.stance.values())))
            if answer.diagnostics is not None:
                publish_finite(self._diagnostics, answer.diagnostics, self._problems)
            if (answer.footholds is not None and self._footholds is not None
                    and self._footholds.get_subscription_count()):  # a viewer's: often none
                publish_finite(self._footholds, answer.footholds, self._problems)
            if answer.mpc_path is not None and self._mpc_path is not None:
                publish_finite(self._mpc_path, answer.mpc_path, self._problems)
            if answer.mpc_forces is not None and self._mpc_forces is not None:
                publish_finite(self._mpc_forces, answer.mpc_forces, self._problems)
        self._heap.after(self._core.controlled_ticks)

    def _publish_command(self, answer: Answer) -> None:
        """The command as bytes written from its arrays when they are finite; otherwise the typed message
        goes to ``publish_finite``, which drops it with one line naming the field."""
        arrays = answer.joint_command.arrays()
        if not np.isfinite(arrays).all():
            publish_finite(self._command, answer.command, self._problems)
            return
        position, velocity, effort, kp, kd = arrays
        self._command.publish(self._command_writer.write(
            answer.stamp_ns, answer.names, position=position, velocity=velocity, effort=effort, kp=kp, kd=kd))

    # ----- live parameters ---------------------------------------------------------------------------

    def _on_set_parameters(self, parameters: list[Parameter[Any]]) -> SetParametersResult:
        """Validate every change first (a bad value changes nothing), then apply."""
        startup = [p.name for p in parameters if p.name in STARTUP_ONLY]
        if startup:
            return SetParametersResult(
                successful=False, reason=f"{', '.join(startup)} apply at start-up only: restart the node")
        changes = {p.name: p.value for p in parameters}
        try:
            params = apply_changes(self._params, changes)
            if isinstance(self._core.controller, ArmController):
                arm = apply_changes(self._arm, changes)
                self._core.controller.reconfigure(arm)
                self._arm = arm
            else:
                legged = apply_changes(self._legged, changes)
                locomotion = apply_changes(self._locomotion, changes)
                self._core.controller.reconfigure(legged, locomotion)
                self._legged, self._locomotion = legged, locomotion
        except ValueError as exc:
            return SetParametersResult(successful=False, reason=str(exc))
        self._params = self._core.params = params
        return SetParametersResult(successful=True)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, Wbc, args)


if __name__ == "__main__":
    raise SystemExit(main())
