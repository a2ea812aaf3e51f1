"""state_estimator: legged odometry from an IMU, joint states and contacts (docs/nodes/state_estimator.md).

Subscribes ``imu/data`` (sensor_msgs/Imu), ``joint_states`` and ``contacts`` or ``contact_schedule``
(kinodyn_interfaces/ContactStates); publishes ``odometry/filtered`` (nav_msgs/Odometry, ``odom`` -> URDF root
link, twist in the child frame), ``/tf`` and ``/diagnostics``. The work is EstimatorPipeline's (messages in
header stamp order, kinodyn.estimation.LeggedEstimator, Robot Dynamics Essential §5.3); this node only
moves messages, so its
output is the one ``kinodyn estimate`` computes offline from a bag of the same messages.

The inputs are taken serialized and read into numpy (raw_messages: bytes that are not a message of the type
are one line, the message dropped); each estimate is published as the CDR bytes of its Odometry
(kinodyn_common.cdr.odometry_rows_cdr) and, when ``/tf`` has a subscriber, of its TFMessage
(``transform_row_cdr``, the bytes of estimation.messages' transform_message of the same row): an output nobody
subscribes is not built (a volatile topic delivers only to the readers matched when it is published).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from diagnostic_msgs.msg import DiagnosticArray
from kinodyn.sim.collision import collision_spheres
from kinodyn_common.cdr import odometry_rows_cdr, transform_row_cdr
from kinodyn_common.finite import publish_finite
from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import declare_count, declare_value
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.raw_messages import ContactStatesReader, ImuReader, JointStateReader
from kinodyn_common.realtime import HeapFreeze
from kinodyn_common.robot_description import declare_and_load_model
from kinodyn_control.controllers.stamp_rate import StampRate, rate_parameter
from kinodyn_control.estimation.pipeline import EstimateRows, EstimatorParameters, EstimatorPipeline
from kinodyn_control.estimation.stamps import ClockReading
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
)
from sensor_msgs.msg import Imu, JointState

from kinodyn_interfaces.msg import ContactStates
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Callable

NODE_NAME = "state_estimator"
def output_qos(depth: int) -> QoSProfile:
    """odometry/filtered, /tf and /diagnostics: reliable (reliable and best-effort subscribers both match),
    volatile, keeping ``max(depth, 100)`` messages (100: tf2's depth), so that the burst a node catching up on
    ``qos_depth`` queued inputs publishes is not overwritten before a reliable reader has it."""
    return QoSProfile(
        depth=max(depth, 100), reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
    )

STARTUP_ONLY = ("qos_depth", "qos_reliable", "robot_description", "robot_description_file")
"""Parameters a running node refuses to change (restart it)."""
ESTIMATOR_PARAMETERS = frozenset(EstimatorParameters.flat_defaults())
CONTACT_TOPICS = {"message": "contacts", "schedule": "contact_schedule"}
Reader = ImuReader | JointStateReader | ContactStatesReader


def input_qos(depth: int, reliable: bool) -> QoSProfile:
    """Sensor-data QoS (best effort, volatile) with ``depth``; reliable when ``reliable`` (a bag replay that
    must not lose a message)."""
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE,
    )


class StateEstimator(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        model, xml, source = declare_and_load_model(self, floating_base=True)
        defaults = EstimatorParameters.flat_defaults()
        params = EstimatorParameters.from_flat({name: self._declare(name, v) for name, v in defaults.items()})
        self._publish_tf = bool(self.declare_parameter("publish_tf", True).value)
        tf_rate = rate_parameter("tf_rate", self.declare_parameter("tf_rate", 0.0).value)
        self._tf_publishing = StampRate(tf_rate)
        depth = declare_count(self, "qos_depth", 100, "messages queued per topic")
        reliable = bool(self.declare_parameter("qos_reliable", False).value)
        self._qos = input_qos(depth, reliable)
        self._problems = DistinctProblemLog(self.get_logger())
        self._clock_reading = ClockReading()
        self._pipeline = EstimatorPipeline(model, params, self.get_logger(), NODE_NAME,
                                           spheres=collision_spheres(xml), estimate_rows=True)
        outputs = output_qos(depth)
        self._odometry = self.create_publisher(Odometry, "odometry/filtered", outputs)
        self._estimates = 0  # published so far: the heap is frozen once the first have made every kernel
        self._heap = HeapFreeze()
        self._tf = self.create_publisher(TFMessage, "/tf", outputs)
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", outputs)
        self.create_subscription(Imu, "imu/data", self._input("imu/data", ImuReader(), self._pipeline.on_imu),
                                 self._qos, raw=True)
        joints = self._input("joint_states", JointStateReader(), self._pipeline.on_joint_state)
        self.create_subscription(JointState, "joint_states", joints, self._qos, raw=True)
        self._contacts_subscription: Any = None
        self._subscribe_contacts()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.get_logger().info(
            f"URDF from {source}: estimating {self._pipeline.base_frame!r} in {params.odom_frame!r}, filter "
            f"{params.filter}, contacts from {params.contact_source}, inputs "
            f"{'reliable' if reliable else 'best effort'} depth {depth}"
        )

    def _declare(self, name: str, default: Any) -> Any:  # noqa: ANN401  (an rclpy parameter value: untyped)
        if name == "feet":  # a string list, empty by default
            array = Parameter.Type.STRING_ARRAY
            descriptor = ParameterDescriptor(type=int(array))
            return list(declare_value(self, name, list(default), descriptor, array) or [])
        return self.declare_parameter(name, default).value

    def _subscribe_contacts(self) -> None:
        """Subscribe the contact topic the contact source reads (none for detection)."""
        if self._contacts_subscription is not None:
            self.destroy_subscription(self._contacts_subscription)
            self._contacts_subscription = None
        topic = CONTACT_TOPICS.get(self._pipeline.params.contact_source)
        if topic is not None:
            self._contacts_subscription = self.create_subscription(
                ContactStates, topic, self._input(topic, ContactStatesReader(), self._pipeline.on_contacts),
                self._qos, raw=True
            )

    # Any: the view the reader gives (ImuView, JointStateView or ContactStatesView), each to its own take
    def _input(self, topic: str, reader: Reader, take: Callable[[Any, int, int], object]
               ) -> Callable[..., None]:
        """A subscription callback: the message read from its bytes (``reader.read``) and its arrival time
        (which tells a topic queued behind the others from a silent one, EstimatorPipeline.on_imu) to the
        pipeline, then publish what came out. The pipeline logs bad input itself; bytes that are not a
        message, or anything else failing, are one line and the node goes on."""

        def callback(raw: bytes) -> None:
            steady = time.monotonic_ns()  # arrival; with the ROS clock, what bounds the stamp
            msg = reader.read(raw)
            take(msg, steady, self._clock_reading(self.get_clock().now().nanoseconds, steady))
            self._publish()

        return dropping_bad_messages(self._problems, f"{topic} message", callback)

    def _publish(self) -> None:
        for output in self._pipeline.drain():
            if output.kind == "odometry":
                self._publish_estimates(output.message)
            else:
                publish_finite(self._diagnostics, output.message, self._problems)

    def _publish_estimates(self, estimates: EstimateRows) -> None:
        """odometry/filtered and (``publish_tf``, at ``tf_rate``) /tf of estimates (the pipeline outputs
        finite estimates only), each built only when its topic has a subscriber (module docstring)."""
        self._estimates += len(estimates.rows)
        self._heap.after(self._estimates)
        if self._odometry.get_subscription_count():
            for data in odometry_rows_cdr(estimates.stamps_ns, estimates.frame_id, estimates.child_frame_id,
                                          estimates.rows):
                self._odometry.publish(data)
        if self._publish_tf and self._tf.get_subscription_count():
            for stamp_ns, row in zip(estimates.stamps_ns.tolist(), estimates.rows, strict=True):
                if self._tf_publishing.due(stamp_ns):
                    self._tf.publish(transform_row_cdr(stamp_ns, estimates.frame_id,
                                                       estimates.child_frame_id, row))

    def _on_set_parameters(self, parameters: list[Parameter[Any]]) -> SetParametersResult:
        """Validate and apply live changes: output parameters at once, the others restart the filter."""
        startup = [p.name for p in parameters if p.name in STARTUP_ONLY]
        if startup:
            return SetParametersResult(
                successful=False, reason=f"{', '.join(startup)} apply at start-up only: restart the node"
            )
        tf_rate = self._tf_publishing.rate
        for p in parameters:
            if p.name == "tf_rate":
                try:
                    tf_rate = rate_parameter(p.name, p.value)
                except (TypeError, ValueError) as exc:
                    return SetParametersResult(successful=False, reason=str(exc))
        changes = {p.name: p.value for p in parameters if p.name in ESTIMATOR_PARAMETERS}
        if changes:
            try:
                params = EstimatorParameters.from_flat({**self._pipeline.params.flat(), **changes})
                source_changed = params.contact_source != self._pipeline.params.contact_source
                self._pipeline.reconfigure(params)
            except ValueError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            if source_changed:
                self._subscribe_contacts()
        for p in parameters:
            if p.name == "publish_tf":
                self._publish_tf = bool(p.value)
        self._tf_publishing.rate = tf_rate
        return SetParametersResult(successful=True)


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, StateEstimator, args)


if __name__ == "__main__":
    raise SystemExit(main())
