"""ROS side of ``SimulatedSystem``: a node of its own in the controller manager's process.

Hardware components get no node handle from the controller manager (hardware/component.py), so this
adapter creates one, named after the ``<ros2_control name>`` (``/<name>``, whatever the process's remappings),
and spins it on its own thread:

- ``/clock`` (rosgraph_msgs/Clock): the simulated time after every ``write`` (published as its bytes);
- ``~/odometry`` (nav_msgs/Odometry): ground truth of the base, frame ``world`` -> child ``<root link>``, pose
  in ``world``, twist in the child frame (the floating-base ``v`` of kinodyn); fixed-base models publish none.
  ``world`` is the simulator's own frame (ground plane z = 0), never ``odom``: ``odom`` is the estimator's
  (REP-105: its origin is where the estimate started), and two origins under one frame id would draw one of
  them in the wrong place;
- ``~/contacts`` (kinodyn_interfaces/ContactStates): each contact sphere's state and ground reaction, in
  ``world``. It and ``~/odometry`` are built and published only while they have a subscriber;
- ``~/reset`` (std_srvs/Trigger): back to the initial state; ``~/push`` (kinodyn_interfaces/Push): a wrench
  (world axes, about the link origin) on a link for a duration. Both take effect at the next ``write``. A
  refused request (``SimulatedSystem.request_push``: unknown link, non-finite, above the push limits) or a
  failure handling it is answered ``success=false`` with the reason, logged throttled per cause, and the node
  goes on.

The topics are published from the control loop's thread, through RealtimePublishers (the loop hands each
message to control_node's publishing thread: kinodyn_common/realtime_publisher.py).
"""

from __future__ import annotations

import struct
import threading
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np
import rclpy
from geometry_msgs.msg import Point, Vector3
from kinodyn_common.problem_log import DistinctProblemLog
from kinodyn_common.realtime_publisher import RealtimePublisher
from kinodyn_common.stamps import seconds_to_ns, seconds_to_stamp, split_ns
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from std_srvs.srv import Trigger

from kinodyn_interfaces.msg import ContactStates
from kinodyn_interfaces.srv import Push

if TYPE_CHECKING:
    from collections.abc import Callable

    from builtin_interfaces.msg import Time

    from kinodyn import sim
    from kinodyn_control.hardware.simulated_system import SimulatedSystem

WORLD_FRAME = "world"


class _Result(Protocol):
    """A service response with ``success`` and ``message``."""

    success: bool
    message: str


ResultT = TypeVar("ResultT", bound=_Result)
MsgT = TypeVar("MsgT")


CLOCK_CDR = struct.Struct("<4siI")
"""rosgraph_msgs/Clock serialized: the little-endian CDR encapsulation header, then builtin_interfaces/Time's
int32 sec and uint32 nanosec (no padding)."""
CDR_LITTLE_ENDIAN = b"\x00\x01\x00\x00"


def clock_bytes(t: float) -> bytes:
    """The serialized rosgraph_msgs/Clock of simulated time ``t`` [s], what rclpy would publish for
    ``Clock(clock=seconds_to_stamp(t))`` without building the message every step."""
    sec, nanosec = split_ns(seconds_to_ns(t))
    return CLOCK_CDR.pack(CDR_LITTLE_ENDIAN, sec, nanosec)


class SimulatorRosInterface:
    def __init__(self, system: SimulatedSystem) -> None:
        assert system.info is not None
        assert system.simulator is not None
        if not rclpy.ok():
            rclpy.init()
        self.system = system
        model = system.simulator.model
        self.base_link = model.body_names[1] if model.floating_base else ""
        # Without the process's global arguments: a launcher's `-r __node:=controller_manager` would rename
        # this node too (two nodes of one name, ~/odometry under /controller_manager).
        self.node = rclpy.create_node(system.info.name, use_global_arguments=False)
        self.problems = DistinctProblemLog(self.node.get_logger())
        self.clock_pub = self._publisher(Clock, "/clock")
        self.odom_pub = None
        if model.floating_base:
            self.odom_pub = self._publisher(Odometry, "~/odometry")
        self.contacts_pub = self._publisher(ContactStates, "~/contacts")
        self.node.create_service(Trigger, "~/reset", self._reset)
        self.node.create_service(Push, "~/push", self._push)
        self.executor = SingleThreadedExecutor(context=self.node.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, name=f"{system.info.name}_ros", daemon=True)
        self.thread.start()
        system.on_step.append(self.publish)

    def _publisher(self, msg_type: type[MsgT], topic: str) -> RealtimePublisher[MsgT]:
        """A publisher of the node (depth 10); the loop's thread publishes, so a RealtimePublisher."""
        publisher = self.node.create_publisher(msg_type, topic, QoSProfile(depth=10),
                                               publisher_class=RealtimePublisher)
        assert isinstance(publisher, RealtimePublisher)
        return publisher

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except Exception:  # noqa: BLE001  (the context shut down under the spinning executor: Ctrl-C)
            return

    def shutdown(self) -> None:
        if self.publish in self.system.on_step:
            self.system.on_step.remove(self.publish)
        self.executor.shutdown()  # wakes the spinning thread, which then returns
        self.thread.join()
        self.node.destroy_node()

    # --- publishers (control thread) ------------------------------------------------------------------------
    def publish(self, s: sim.PhysicsBackend) -> None:
        """/clock, and the ground truth while its topic has a subscriber (a volatile topic delivers only to
        the readers matched when it is published: nobody misses a message that is not built)."""
        try:
            self.clock_pub.publish(clock_bytes(s.t))
            if self.odom_pub is not None and self.odom_pub.get_subscription_count():
                self.odom_pub.publish(self._odometry(s, seconds_to_stamp(s.t)))
            if self.contacts_pub.get_subscription_count():
                self.contacts_pub.publish(self._contacts(s, seconds_to_stamp(s.t)))
        except Exception as exc:  # publishing after the context shut down (Ctrl-C): stop publishing
            if rclpy.ok():
                raise
            self.system.logger.debug(f"simulator publish skipped: {exc}")

    def _odometry(self, s: sim.PhysicsBackend, stamp: Time) -> Odometry:
        msg = Odometry()
        msg.header.stamp = stamp
        msg.header.frame_id = WORLD_FRAME
        msg.child_frame_id = self.base_link
        p, quat = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z = (float(x) for x in s.q[:3])
        quat.x, quat.y, quat.z, quat.w = (float(x) for x in s.q[3:7])
        lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
        lin.x, lin.y, lin.z = (float(x) for x in s.v[:3])
        ang.x, ang.y, ang.z = (float(x) for x in s.v[3:6])
        return msg

    def _contacts(self, s: sim.PhysicsBackend, stamp: Time) -> ContactStates:
        msg = ContactStates()
        msg.header.stamp = stamp
        msg.header.frame_id = WORLD_FRAME
        msg.names = [sphere.link for sphere in s.contact.spheres]
        msg.in_contact = [bool(x) for x in s.in_contact]
        msg.points = [Point(x=float(a), y=float(b), z=float(c)) for a, b, c in s.contact_points]
        msg.forces = [Vector3(x=float(a), y=float(b), z=float(c)) for a, b, c in s.contact_forces]
        return msg

    # --- services (adapter thread) --------------------------------------------------------------------------
    def _answer(self, what: str, response: ResultT, action: Callable[[], str]) -> ResultT:
        """``success`` and ``action()``'s message, or ``success=false`` and why (logged, throttled per
        cause)."""
        try:
            response.success, response.message = True, action()
        except ValueError as exc:  # refused: an InputError's key names the cause
            response.success, response.message = False, f"{what} refused: {exc}"
            self.problems.warn((what, getattr(exc, "key", type(exc).__name__)), response.message)
        except Exception as exc:  # noqa: BLE001  a failure handling this one request must not stop the node
            response.success, response.message = False, f"{what} failed: {type(exc).__name__}: {exc}"
            self.problems.error((what, type(exc).__name__), response.message)
        return response

    def _reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        def reset() -> str:
            self.system.request_reset()
            return "reset at the next control cycle"

        return self._answer("reset", response, reset)

    def _push(self, request: Push.Request, response: Push.Response) -> Push.Response:
        def push() -> str:
            f, t = request.wrench.force, request.wrench.torque
            wrench = np.array([f.x, f.y, f.z, t.x, t.y, t.z])
            self.system.request_push(request.link, wrench, request.duration)
            return f"pushing {request.link} for {request.duration} s"

        return self._answer("push", response, push)
