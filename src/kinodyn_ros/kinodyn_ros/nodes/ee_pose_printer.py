"""ee_pose_printer: the end-effector pose composed from /tf and /tf_static (docs/nodes/ee_pose_printer.md).

Once per `print_period` it composes root link -> `ee_frame` from the received transforms and prints the
joint angles, the position, its norm and the roll-pitch-yaw angles (URDF convention,
``C = Cz(yaw) Cy(pitch) Cx(roll)``), next to the difference from kinodyn's own forward kinematics at the
joint angles of the `joint_states` message with the same stamp: a self-check that should be at rounding level.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np
from kinodyn.spatial import matrix_to_euler, matrix_to_rotvec
from kinodyn_common.conversions import joint_state_to_q
from kinodyn_common.input_bounds import declare_joint_bounds
from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import declare_positive
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.robot_description import declare_and_read, load_urdf
from kinodyn_common.stamps import stamp_to_ns
from kinodyn_common.tf_buffer import TransformBuffer
from kinodyn_common.tf_tree import TfTree
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState

from kinodyn import Model
from kinodyn_ros.nodes.state_publisher import TF_QOS
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Iterable

NODE_NAME = "ee_pose_printer"
STATIC_LISTENER_QOS = QoSProfile(
    depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
"""tf2's static listener QoS."""
JOINT_STATE_HISTORY = 500
"""Joint states kept to match /tf stamps (10 s at 50 Hz)."""


def deepest_link(tree: TfTree) -> str:
    """The link with the most joints between it and the root, first in depth-first order."""
    depth = {tree.root_link: 0}
    for joint in tree.joints:
        depth[joint.child] = depth[joint.parent] + 1
    return max(tree.links, key=lambda link: depth[link])


def _vector(values: Iterable[float], digits: int) -> str:
    return "[" + ", ".join(f"{v:+.{digits}f}" for v in values) + "]"


class EePosePrinter(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        xml, source = declare_and_read(self)
        urdf = load_urdf(xml, source, self.get_logger())
        tree = TfTree.from_urdf(urdf)
        self._model = Model.from_urdf(urdf)
        self._root = tree.root_link
        self._bounds = declare_joint_bounds(self, self._model)
        self._ee: str = self.declare_parameter("ee_frame", "").value or deepest_link(tree)
        if self._ee not in tree.links:
            raise ValueError(
                f"parameter ee_frame {self._ee!r} is not a link of the URDF; links: {list(tree.links)}"
            )
        period = declare_positive(self, "print_period", 0.5)
        self._buffer = TransformBuffer()
        self._joint_states: OrderedDict[int, np.ndarray] = OrderedDict()
        self._problems = DistinctProblemLog(self.get_logger())
        problems = self._problems
        for topic, static, qos in (("/tf", False, TF_QOS), ("/tf_static", True, STATIC_LISTENER_QOS)):
            add = dropping_bad_messages(problems, f"{topic} message", self._buffer.add)
            self.create_subscription(TFMessage, topic, lambda msg, a=add, s=static: a(msg, s), qos)
        self.create_subscription(
            JointState,
            "joint_states",
            dropping_bad_messages(problems, "joint_states message (for the FK check)", self._on_joint_state),
            qos_profile_sensor_data,
        )
        self._start_ns = self.get_clock().now().nanoseconds
        self.create_timer(period, dropping_bad_messages(problems, "pose print", self._print))
        self.get_logger().info(f"printing the pose of {self._ee!r} in {self._root!r} every {period} s")

    def _on_joint_state(self, msg: JointState) -> None:
        """Keep ``msg``'s positions for the FK check; an unusable message raises (dropped, logged)."""
        q = self._bounds.check_q(joint_state_to_q(msg, self._model.joint_names))
        self._joint_states[stamp_to_ns(msg.header.stamp)] = q
        if len(self._joint_states) > JOINT_STATE_HISTORY:
            self._joint_states.popitem(last=False)

    def _fk_check(self, T: np.ndarray, stamps_ns: frozenset[int]) -> tuple[str, str]:
        """``(joint angles, FK difference)`` texts for the joint state the transforms were made from."""
        if len(stamps_ns) != 1:
            return "q = ?", f"FK check: the chain mixes {len(stamps_ns)} stamps"
        (stamp,) = stamps_ns
        q = self._joint_states.get(stamp)
        if q is None:
            return "q = ?", "FK check: no complete joint_states message with the stamp of the /tf transforms"
        T_fk = self._model.frame_placement(q, self._ee)
        dp = float(np.linalg.norm(T[:3, 3] - T_fk[:3, 3]))
        dr = float(np.linalg.norm(matrix_to_rotvec(T[:3, :3].T @ T_fk[:3, :3])))
        return f"q = {_vector(q, 4)} rad", f"/tf vs kinodyn FK: |dp| = {dp:.1e} m, |dR| = {dr:.1e} rad"

    def _print(self) -> None:
        try:
            composed = self._buffer.lookup(self._root, self._ee)
        except LookupError as exc:
            self._problems.warn(("waiting", str(exc)), f"waiting for transforms: {exc}")
            return
        T = composed.T
        joints, check = self._fk_check(T, composed.stamps_ns)
        yaw, pitch, roll = matrix_to_euler(T[:3, :3], "zyx")
        stamp = (max(composed.stamps_ns, default=self._start_ns) - self._start_ns) * 1e-9
        self.get_logger().info(
            f"t = {stamp:+.3f} s  {joints}  {self._ee} in {self._root}: p = {_vector(T[:3, 3], 5)} m, "
            f"|p| = {np.linalg.norm(T[:3, 3]):.5f} m, rpy = {_vector([roll, pitch, yaw], 4)} rad  {check}"
        )


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, EePosePrinter, args)


if __name__ == "__main__":
    raise SystemExit(main())
