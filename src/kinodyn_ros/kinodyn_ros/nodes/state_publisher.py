"""state_publisher: robot_state_publisher's job for kinodyn (docs/nodes/state_publisher.md).

Publishes the URDF on `robot_description`, every fixed joint on `/tf_static` (one TFMessage), at
`publish_frequency` (on the node's clock) the movable joints whose position changed since the last `/tf`
message, each stamped with its `joint_states` message's stamp, and, when `odometry_topic` is set, the floating
base `odom -> root link` from nav_msgs/Odometry.

Joint states are taken serialized and read into numpy (raw_messages: bytes that are not a JointState are one
line, the message dropped). The middleware keeps them until the next tick (kinodyn_common.polled: no callback
per message; with ``ignore_timestamp`` each is taken as it arrives), which takes every one and checks it
(names, sizes, finite, within the bounds, stamp), the name list once per list (a driver repeats it), so a
bad message is reported even when /tf will only carry a later one. A /tf message is built only while /tf has
a subscriber (a volatile topic delivers only to the readers matched when it is published: nobody misses one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import repeat

import numpy as np
from builtin_interfaces.msg import Time
from kinodyn_common.conversions import (
    InputError,
    joint_state_positions,
    odometry_to_pose,
    quoted,
    transform_stamped,
)
from kinodyn_common.finite import publish_finite
from kinodyn_common.input_bounds import declare_joint_bounds
from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import declare_positive
from kinodyn_common.polled import PolledSubscriptions
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.raw_messages import JointStateReader
from kinodyn_common.realtime import HeapFreeze
from kinodyn_common.robot_description import declare_and_read, load_urdf
from kinodyn_common.stamps import seconds_to_ns, stamp_to_ns
from kinodyn_common.tf_tree import TfTree, Transform
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from kinodyn import Model
from tf2_msgs.msg import TFMessage

NODE_NAME = "state_publisher"
LATCHED_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
"""robot_description and /tf_static: a late subscriber still gets the last message (tf2's static QoS)."""
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
"""/tf: tf2's dynamic broadcaster QoS."""
JOINT_STATES_QOS = QoSProfile(depth=200, reliability=ReliabilityPolicy.BEST_EFFORT)
"""joint_states taken at each tick: best effort (accepts reliable publishers), the newest 200 kept in between
(a 500 Hz loop running several times faster than real time at publish_frequency's default)."""


@dataclass(frozen=True)
class _NameLayout:
    """A JointState name list that passed the checks: its value counts (position, velocity, effort), the
    movable joints it carries (``used``), where they are in it (``index``) and their bounds."""

    names: list[str]
    sizes: tuple[int, int, int]
    used: tuple[str, ...]
    index: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


class StatePublisher(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        xml, source = declare_and_read(self)
        urdf = load_urdf(xml, source, self.get_logger())
        self._tree = TfTree.from_urdf(urdf)
        self._bounds = declare_joint_bounds(self, Model.from_urdf(urdf))  # the limits; urdf is validated
        frequency = declare_positive(self, "publish_frequency", 50.0)
        self._ignore_timestamp = bool(self.declare_parameter("ignore_timestamp", False).value)
        lead: float = self.declare_parameter("max_stamp_lead", 0.5).value
        if isinstance(lead, bool) or not isinstance(lead, (int, float)) or not (
            math.isfinite(lead) and lead > 0
        ):
            raise ValueError(f"parameter max_stamp_lead must be a positive number of seconds, got {lead!r}")
        self._max_lead_ns = seconds_to_ns(lead)
        self._prefix: str = self.declare_parameter("frame_prefix", "").value
        odometry_topic: str = self.declare_parameter("odometry_topic", "").value
        self._problems = DistinctProblemLog(self.get_logger())
        # joint -> newest (position, (stamp sec, nanosec)) not yet on /tf
        self._pending: dict[str, tuple[float, tuple[int, int]]] = {}
        self._layout: _NameLayout | None = None  # the last name list accepted
        self._joint_states = JointStateReader()

        description = self.create_publisher(String, "robot_description", LATCHED_QOS)
        description.publish(String(data=xml))
        static = self.create_publisher(TFMessage, "/tf_static", LATCHED_QOS)
        static_transforms = self._tree.static_transforms()
        static.publish(self._tf_message(static_transforms, self.get_clock().now().to_msg()))
        self._tf = self.create_publisher(TFMessage, "/tf", TF_QOS)
        self._published = 0  # /tf messages: the heap is frozen once the first have made every cache
        self._heap = HeapFreeze()
        self._take_joint_state = dropping_bad_messages(
            self._problems, "joint_states message",
            lambda raw: self._on_joint_state(self._joint_states.read(raw)))
        self._polled: PolledSubscriptions | None = None
        if self._ignore_timestamp:
            self.create_subscription(JointState, "joint_states", self._take_joint_state,
                                     qos_profile_sensor_data, raw=True)
        else:
            self._polled = PolledSubscriptions(self)
            self._joint_input = self._polled.subscribe(JointState, "joint_states", JOINT_STATES_QOS, raw=True)
            self.create_timer(1.0 / frequency, self._publish_pending)
        if odometry_topic:
            self.create_subscription(
                Odometry,
                odometry_topic,
                dropping_bad_messages(self._problems, "odometry message", self._on_odometry),
                qos_profile_sensor_data,
            )
        self.get_logger().info(
            f"URDF from {source}: root link {self._tree.root_link!r}, "
            f"{len(self._tree.movable_joint_names)} movable joints on /tf, "
            f"{len(static_transforms)} fixed joints on /tf_static"
            + (f", floating base from {odometry_topic!r}" if odometry_topic else "")
        )

    def _tf_message(self, transforms: list[Transform], stamp: Time) -> TFMessage:
        return TFMessage(
            transforms=[
                transform_stamped(self._prefix + parent, self._prefix + child, T, stamp)
                for parent, child, T in transforms
            ]
        )

    def _publish_joints(self, positions: dict[str, float], stamp: Time) -> None:
        """/tf of the joints at ``positions``, built only while /tf has a subscriber (module docstring)."""
        if self._tf.get_subscription_count():
            transforms = self._tree.moving_transforms(positions)
            publish_finite(self._tf, self._tf_message(transforms, stamp), self._problems)
            self._published += 1
            self._heap.after(self._published)

    def _publish_pending(self) -> None:
        """The joints received since the last tick, one /tf message per joint_states stamp among them: the
        joint_states held since then are taken (and checked) first, in the order they arrived."""
        if self._polled is not None:
            for raw in self._polled.all(self._joint_input):
                self._take_joint_state(raw)
        pending, self._pending = self._pending, {}
        by_stamp: dict[tuple[int, int], dict[str, float]] = {}
        for name, (position, key) in pending.items():
            by_stamp.setdefault(key, {})[name] = position
        for sec, nanosec in sorted(by_stamp):
            self._publish_joints(by_stamp[sec, nanosec], Time(sec=sec, nanosec=nanosec))

    def _on_joint_state(self, msg: JointState) -> None:
        """/tf for the joints of ``msg`` (a JointState or raw_messages' view of one); a message that is not
        usable raises InputError (dropped, logged)."""
        names, values = self._positions(msg)
        stamp = msg.header.stamp
        self._check_stamp("joint_states", stamp)
        if not names:
            return
        if self._ignore_timestamp:
            self._publish_joints(dict(zip(names, values.tolist(), strict=True)),
                                 Time(sec=stamp.sec, nanosec=stamp.nanosec))
            return
        key = (stamp.sec, stamp.nanosec)
        self._pending.update(zip(names, zip(values.tolist(), repeat(key)), strict=False))

    def _positions(self, msg: JointState) -> tuple[tuple[str, ...], np.ndarray]:
        """The movable joints ``msg`` carries and their positions, checked (JointStateError naming what is
        wrong: conversions.joint_state_positions, JointBounds.check); a name list is checked once and kept,
        a message of that list then has its values checked."""
        layout = self._layout
        sizes = (len(msg.position), len(msg.velocity), len(msg.effort))
        if layout is not None and sizes == layout.sizes and msg.name == layout.names:
            values = np.asarray(msg.position, dtype=np.float64)[layout.index]
            if np.isfinite(values).all() and not ((values < layout.lower) | (values > layout.upper)).any():
                return layout.used, values
        # the full checks, which name what is wrong; a name list that passes them is kept
        positions = joint_state_positions(
            msg,
            self._tree.movable_joint_names,
            allow_partial=True,
            ignored_names=self._tree.mimic_joint_names,
        )
        self._bounds.check(positions.names, positions.values)
        names = list(msg.name)
        bound = [self._bounds.names.index(n) for n in positions.names]
        self._layout = _NameLayout(names, sizes, positions.names,
                                   np.array([names.index(n) for n in positions.names], dtype=np.intp),
                                   self._bounds.lower[bound], self._bounds.upper[bound])
        return positions.names, positions.values

    def _check_stamp(self, topic: str, stamp: Time) -> None:
        """Raise InputError for a stamp rclpy cannot represent, or one more than ``max_stamp_lead`` ahead of
        the node's clock (not judged while a simulated clock has not started)."""
        stamp_ns = stamp_to_ns(stamp)
        clock_ns = self.get_clock().now().nanoseconds
        lead_ns = stamp_ns - clock_ns
        if clock_ns > 0 and lead_ns > self._max_lead_ns:
            raise InputError(
                "stamp_ahead",
                f"{topic} stamped {stamp_ns * 1e-9:.9f} s is {lead_ns * 1e-9:.3f} s ahead of the node's "
                f"clock ({clock_ns * 1e-9:.9f} s; more than max_stamp_lead {self._max_lead_ns * 1e-9:g} s): "
                "not put on /tf; check the publisher's clock (use_sim_time)",
                topic,
            )

    def _on_odometry(self, msg: Odometry) -> None:
        """The floating base on /tf; a message that is not usable raises InputError (dropped, logged)."""
        root = self._tree.root_link
        odom_frame, child, T = odometry_to_pose(msg)
        if child not in ("", root, self._prefix + root):
            raise InputError(
                "odometry_child",
                f"child_frame_id {quoted(child)} is not the URDF root link {root!r}; the floating base "
                "transform must end at the root link",
            )
        self._check_stamp("odometry", msg.header.stamp)
        if not self._tf.get_subscription_count():
            return
        publish_finite(
            self._tf,
            TFMessage(transforms=[transform_stamped(odom_frame, self._prefix + root, T, msg.header.stamp)]),
            self._problems,
        )


    def destroy_node(self) -> None:
        if self._polled is not None:
            self._polled.destroy()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, StatePublisher, args)


if __name__ == "__main__":
    raise SystemExit(main())
