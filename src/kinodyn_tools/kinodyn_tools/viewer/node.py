"""viewer: the robot and its overlays in a browser (viser) and as a MarkerArray (docs/nodes/viewer.md).

The robot is drawn from the URDF's primitive geometry placed by /tf and /tf_static; the overlays are the
estimated and the true base trajectories, contact forces, the support polygon, the centre of mass, the
planned footholds and the planned base trajectory (the wbc's MPC prediction, nav_msgs/Path;
kinodyn_tools.viewer.scene). Every ``1 / rate_hz`` s of wall time the node builds one
``Scene`` from the newest message of each input and renders it both ways, so the two views never disagree;
each only while someone looks (``~/markers`` has a subscriber, a browser is connected: a client connecting
gets the scene at the next update).
The inputs are read only then (kinodyn_common.polled: the middleware keeps them, nothing of the node runs per
message): of each input but /tf and /tf_static the newest message, taken serialized and decoded once; of
/tf the messages since the last update (up to tf2's depth of 100), of which the newest transform of each
frame is used. /tf_static, latched and rare, is taken as it arrives.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseArray
from kinodyn_common.cdr import ContactArrays, contact_arrays_from_cdr
from kinodyn_common.conversions import (
    InputError,
    joint_state_positions,
    odometry_to_pose,
    pose_to_matrix,
    quoted,
    transform_stamped,
)
from kinodyn_common.finite import publish_finite
from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import check_count, check_fields, declare_dataclass, declare_value
from kinodyn_common.polled import PolledSubscriptions
from kinodyn_common.problem_log import INPUT_ERRORS, DistinctProblemLog, error_text, problem_key
from kinodyn_common.robot_description import declare_and_read, load_urdf
from kinodyn_common.stamps import stamp_to_ns
from kinodyn_common.tf_buffer import TransformBuffer
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from kinodyn import Model
from kinodyn_interfaces.msg import ContactStates
from kinodyn_tools.viewer.anchor import heading_anchor
from kinodyn_tools.viewer.browser import BrowserView
from kinodyn_tools.viewer.geometry import robot_primitives
from kinodyn_tools.viewer.markers import scene_markers
from kinodyn_tools.viewer.scene import (
    Polyline,
    Scene,
    center_of_mass,
    check_bounded,
    com_ground,
    evenly_picked,
    force_arrows,
    place_bodies,
    support_polygon,
)
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Callable

    from rclpy.subscription import Subscription

NODE_NAME = "viewer"
LATCHED_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
NEWEST_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.BEST_EFFORT, durability=DurabilityPolicy.VOLATILE
)
"""The other inputs: sensor data QoS keeping only the newest message (best effort matches every publisher)."""
WAIT_FOR_TF = 5.0
"""Seconds without the robot's transforms before the node says what it is waiting for."""
PATH_INPUTS = {"odometry": "estimated", "true_odometry": "true"}
"""Odometry inputs and the trajectory each one draws."""
ANCHOR_STAMP_GAP_NS = 50_000_000
"""Largest stamp difference [ns] of the estimated and true poses that anchor the estimate's frame."""
T = TypeVar("T")


MAX_PORT = 65535  # the largest TCP port number


def check_host(host: str) -> None:
    """Raise ValueError when no server can listen on ``host`` (viser would wait for ever)."""
    try:
        family = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
    except OSError as exc:
        raise ValueError(
            f"parameter host {host!r}: cannot listen there ({exc}); use 127.0.0.1, 0.0.0.0 (every "
            "interface) or an address of this machine"
        ) from None


@dataclass(frozen=True)
class ViewerParameters:
    """The node's parameters (docs/nodes/viewer.md) but the robot description's and the inputs' topics
    (``<input>_topic``, declared with their inputs). ``trajectory_length`` is checked by ``Polyline``,
    ``host`` by ``check_host``."""

    floating_base: bool = True
    fixed_frame: str = "world"
    frame_aliases: tuple[str, ...] = ()
    anchor_estimate: bool = True
    host: str = "127.0.0.1"
    port: int = 8080
    rate_hz: float = 20.0
    trajectory_length: int = 2000
    force_scale: float = 0.003  # m/N
    max_position: float = 1e4  # m
    max_force: float = 1e6  # N
    max_drawn_contacts: int = 64

    def __post_init__(self) -> None:
        if not 0 <= self.port <= MAX_PORT:
            raise ValueError(f"parameter port must be 0 (any free port) to 65535, got {self.port}")
        check_fields(self, positive=("rate_hz", "max_position", "max_force"), non_negative=("force_scale",))
        check_count("max_drawn_contacts", self.max_drawn_contacts, "contacts drawn")


class Viewer(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        xml, source = declare_and_read(self)
        urdf = load_urdf(xml, source, self.get_logger())
        params = declare_dataclass(self, ViewerParameters)
        self._model = Model.from_urdf(urdf, floating_base=params.floating_base)
        self._root = urdf.root_link
        self._primitives, skipped = robot_primitives(urdf)
        self._links = tuple(dict.fromkeys(p.link for p in self._primitives))
        self._frame = params.fixed_frame
        self._aliases = set(params.frame_aliases)
        self._anchor_pending = params.anchor_estimate
        host, port, length = params.host, params.port, params.trajectory_length
        check_host(host)
        self._force_scale = params.force_scale
        self._max_position = params.max_position
        self._max_force = params.max_force
        self._max_arrows = params.max_drawn_contacts
        self._decimation_said = False
        self._paths = {path: Polyline(length) for path in PATH_INPUTS.values()}
        self._contact_overlays: tuple[np.ndarray, np.ndarray] = (np.zeros((0, 2, 3)), np.zeros((0, 3)))
        self._com_point: np.ndarray | None = None
        self._foothold_points = np.zeros((0, 3))
        self._planned_points = np.zeros((0, 3))
        self._length = length
        self._problems = DistinctProblemLog(self.get_logger())
        self._tf = TransformBuffer()
        self._polled = PolledSubscriptions(self)
        self._inputs: dict[str, Subscription[bytes]] = {}
        self._types: dict[str, type] = {}
        for what, default, msg_type in (
            ("joint_states", "joint_states", JointState),
            ("odometry", "odometry/filtered", Odometry),
            ("true_odometry", "/quadruped_system/odometry", Odometry),
            ("contacts", "/quadruped_system/contacts", ContactStates),
            ("footholds", "wbc/footholds", PoseArray),
            ("planned_path", "wbc/mpc/path", Path),
        ):
            topic = declare_value(self, f"{what}_topic", default, ParameterDescriptor())
            self._subscribe_latest(what, topic, msg_type)
        self._tf_input: Subscription[TFMessage] = self._polled.subscribe(TFMessage, "/tf", TF_QOS)
        self.create_subscription(TFMessage, "/tf_static", self._add_static_tf, LATCHED_QOS)
        self._markers = self.create_publisher(MarkerArray, "~/markers", 1)

        self._browser = BrowserView(host, port, self._primitives)
        self._started = time.monotonic()
        self._robot_seen = False
        self.create_timer(1.0 / params.rate_hz, self._update, clock=Clock(clock_type=ClockType.STEADY_TIME))
        shown = "localhost" if host in ("0.0.0.0", "::", "127.0.0.1") else host
        moved = f" (port {port} was taken)" if port not in (0, self._browser.port) else ""
        self.get_logger().info(
            f"URDF from {source}: {len(self._primitives)} primitives on {len(self._links)} links in frame "
            f"{self._frame!r}; markers on {self._markers.topic_name}; "
            f"open http://{shown}:{self._browser.port} in a browser{moved}"
        )
        if skipped:
            self.get_logger().warning(
                f"mesh visuals are not drawn (only box, cylinder and sphere): links {', '.join(skipped)}"
            )

    # --- inputs ---------------------------------------------------------------------------------------------
    def _subscribe_latest(self, what: str, topic: str, msg_type: type) -> None:
        """Poll the newest serialized message of ``topic`` (empty: not subscribed)."""
        if not topic:
            return
        self._types[what] = msg_type
        self._inputs[what] = self._polled.subscribe(msg_type, topic, NEWEST_QOS, raw=True)

    def _newest_bytes(self, what: str) -> bytes | None:
        """The serialized newest message of input ``what`` (None when none arrived since the last one)."""
        subscription = self._inputs.get(what)
        return None if subscription is None else self._polled.newest(subscription)

    def _newest(self, what: str) -> Any | None:  # noqa: ANN401  (deserialize_message returns the class given at run time)
        """The newest message of input ``what``, decoded, once (None when none arrived since)."""
        data = self._newest_bytes(what)
        return None if data is None else deserialize_message(data, self._types[what])

    def _decoded(self, what: str, use: Callable[[Any], T]) -> T | None:
        """``use(message)`` of the newest message of ``what``; None when none arrived since the last one."""
        msg = self._newest(what)
        return None if msg is None else use(msg)

    def _add_static_tf(self, msg: TFMessage) -> None:
        self._guarded("/tf_static message", lambda: self._tf.add(msg, static=True))

    def _add_tf(self) -> None:
        """The newest transform of each frame among the /tf messages since the last update into the transform
        buffer (an older one of the same frame would be replaced before anything is drawn)."""
        newest = {t.child_frame_id: t for msg in self._polled.all(self._tf_input) for t in msg.transforms}
        if newest:
            self._guarded("/tf message", partial(self._tf.add, TFMessage(transforms=list(newest.values())),
                                                 False))

    def _guarded(self, what: str, step: Callable[[], T]) -> T | None:
        """``step()``, or None with one throttled warning when the input it reads is unusable."""
        try:
            return step()
        except INPUT_ERRORS as exc:
            self._problems.warn(problem_key(what, exc), f"ignoring {what}: {error_text(exc)}")
            return None

    def _to_frame(self, frame_id: str) -> np.ndarray:
        """``T_fixed_frame`` of a message frame: identity for the fixed frame and its aliases, else /tf."""
        if frame_id == self._frame or frame_id in self._aliases:
            return np.eye(4)
        try:
            return self._tf.lookup(self._frame, frame_id).T
        except LookupError as exc:
            if self._anchor_pending:
                raise InputError(
                    "frame_not_anchored_yet",
                    f"frame {quoted(frame_id)} is not placed in {self._frame!r} yet: with anchor_estimate "
                    "the estimate's frame is placed at the first estimated and true base poses (or by /tf)",
                ) from None
            raise InputError(
                "unknown_frame",
                f"frame {quoted(frame_id)} is neither the fixed frame {self._frame!r} nor one of "
                f"frame_aliases {sorted(self._aliases)}, and /tf does not connect them ({exc}); set "
                "fixed_frame or frame_aliases",
            ) from None

    # --- scene ----------------------------------------------------------------------------------------------
    def _link_poses(self) -> dict[str, np.ndarray]:
        poses = {}
        for link in self._links:
            try:
                poses[link] = self._tf.lookup(self._frame, link).T
            except LookupError as exc:
                if not self._robot_seen and time.monotonic() - self._started > WAIT_FOR_TF:
                    self._problems.warn(
                        ("waiting_for_tf",),
                        f"robot not drawn: {exc}; is state_publisher "
                        f"running, and is fixed_frame {self._frame!r} the right frame?",
                    )
        self._robot_seen = self._robot_seen or bool(poses)
        return poses

    def _add_point(self, path: Polyline, pose: tuple[str, np.ndarray, int]) -> None:
        """The base position of ``pose`` (frame, transform, stamp), in the fixed frame, added to ``path``."""
        path.add((self._to_frame(pose[0]) @ pose[1])[:3, 3])

    def _base_pose(self, what: str) -> tuple[str, np.ndarray, int] | None:
        """``(frame, T_frame_base, stamp ns)`` of the newest odometry of ``what`` (None: none new)."""
        msg = self._newest(what)
        if msg is None:
            return None
        frame, _, T = odometry_to_pose(msg)
        return frame, T, stamp_to_ns(msg.header.stamp)

    def _anchor(self, estimate: tuple[str, np.ndarray, int], truth: tuple[str, np.ndarray, int]) -> None:
        """Place the estimate's frame in the fixed frame where the true base was (viewer/anchor.py), once,
        when /tf does not connect the two and both poses are at most ANCHOR_STAMP_GAP_NS apart."""
        frame = estimate[0]
        if frame == self._frame or frame in self._aliases or self._connected(frame):
            self._anchor_pending = False
            return
        if abs(estimate[2] - truth[2]) > ANCHOR_STAMP_GAP_NS:
            return
        T = heading_anchor(self._to_frame(truth[0]) @ truth[1], estimate[1])
        self._tf.add(TFMessage(transforms=[transform_stamped(self._frame, frame, T, Time())]), static=True)
        self._anchor_pending = False
        x, y, z = T[:3, 3]
        self.get_logger().info(
            f"frame {frame!r} (the estimate's) placed in {self._frame!r} where the true base was at "
            f"t = {estimate[2] * 1e-9:.3f} s: origin ({x:.3f}, {y:.3f}, {z:.3f}) m, yaw "
            f"{np.degrees(np.arctan2(T[1, 0], T[0, 0])):.1f} deg"
        )

    def _connected(self, frame: str) -> bool:
        try:
            self._tf.lookup(self._frame, frame)
        except LookupError:
            return False
        return True

    def _sample_paths(self) -> None:
        """One point per new odometry message on its trajectory; the estimate's frame anchored first."""
        poses = {what: self._guarded(f"{what} message", partial(self._base_pose, what))
                 for what in PATH_INPUTS}
        estimate, truth = poses["odometry"], poses["true_odometry"]
        if self._anchor_pending and estimate is not None and truth is not None:
            self._guarded("true_odometry message", lambda: self._anchor(estimate, truth))
        for what, pose in poses.items():
            if pose is not None:
                path = self._paths[PATH_INPUTS[what]]
                self._guarded(f"{what} message", partial(self._add_point, path, pose))

    def _newest_contacts(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``_contacts`` of the newest ContactStates, decoded from its bytes (None: none new)."""
        data = self._newest_bytes("contacts")
        if data is None:
            return None
        try:
            arrays = contact_arrays_from_cdr(data)
        except ValueError as exc:
            raise InputError("contacts_cdr", f"ContactStates bytes cannot be read: {exc}") from None
        return self._contacts(arrays)

    def _contacts(self, msg: ContactArrays) -> tuple[np.ndarray, np.ndarray]:
        """``(force arrows, support polygon)`` of a ContactStates message, in the fixed frame."""
        n = msg.names
        if not len(msg.in_contact) == len(msg.points) == len(msg.forces) == n:
            raise InputError(
                "contacts_sizes",
                f"ContactStates has {n} names, {len(msg.in_contact)} in_contact, "
                f"{len(msg.points)} points and {len(msg.forces)} forces; they must be equal",
            )
        points, forces = msg.points, msg.forces
        if not (np.all(np.isfinite(points)) and np.all(np.isfinite(forces))):
            raise InputError("contacts_non_finite", "ContactStates has a non-finite point or force")
        check_bounded("contacts", "ContactStates point", points, self._max_position, "m", "max_position")
        check_bounded("contacts", "ContactStates force", forces, self._max_force, "N", "max_force")
        T = self._to_frame(msg.frame_id)
        points, forces = points @ T[:3, :3].T + T[:3, 3], forces @ T[:3, :3].T
        touching = msg.in_contact
        arrows = force_arrows(points, forces, touching, self._force_scale)
        return self._decimated(arrows), support_polygon(points[touching])

    def _decimated(self, arrows: np.ndarray) -> np.ndarray:
        """At most ``max_drawn_contacts`` arrows, evenly picked (drawing thousands would stall the view)."""
        if len(arrows) > self._max_arrows and not self._decimation_said:
            self._decimation_said = True
            self.get_logger().info(
                f"{len(arrows)} contact forces: drawing {self._max_arrows} of them, evenly picked (parameter "
                "max_drawn_contacts); the support polygon uses every contact"
            )
        return evenly_picked(arrows, self._max_arrows)

    def _footholds(self, msg: PoseArray) -> np.ndarray:
        positions = np.array([[p.position.x, p.position.y, p.position.z] for p in msg.poses]).reshape(-1, 3)
        if not np.all(np.isfinite(positions)):
            raise InputError("footholds_non_finite", "PoseArray has a non-finite foothold position")
        check_bounded("footholds", "foothold position", positions, self._max_position, "m",
                          "max_position")
        T = self._to_frame(msg.header.frame_id)
        return np.array([(T @ pose_to_matrix(p))[:3, 3] for p in msg.poses]).reshape(-1, 3)

    def _planned_path(self, msg: Path) -> np.ndarray:
        """The positions of a planned base trajectory in the fixed frame (the path's header frame, as RViz's
        Path display), at most ``trajectory_length`` of them, evenly picked."""
        positions = np.array([[p.pose.position.x, p.pose.position.y, p.pose.position.z]
                              for p in msg.poses]).reshape(-1, 3)
        if not np.all(np.isfinite(positions)):
            raise InputError("planned_path_non_finite", "Path has a non-finite pose position")
        check_bounded("planned_path", "planned path position", positions, self._max_position, "m",
                      "max_position")
        T = self._to_frame(msg.header.frame_id)
        return evenly_picked(positions @ T[:3, :3].T + T[:3, 3], self._length)

    def _com(self, msg: JointState, root: np.ndarray) -> np.ndarray:
        positions = joint_state_positions(msg, self._model.joint_names)
        return center_of_mass(self._model, root, positions.values)

    def _update(self) -> None:
        self._add_tf()
        self._sample_paths()
        links = self._link_poses()
        contacts = self._guarded("contacts message", self._newest_contacts)
        self._contact_overlays = contacts or self._contact_overlays
        footholds = self._guarded("footholds message", lambda: self._decoded("footholds", self._footholds))
        self._foothold_points = self._foothold_points if footholds is None else footholds
        planned = self._guarded("planned_path message",
                                lambda: self._decoded("planned_path", self._planned_path))
        self._planned_points = self._planned_points if planned is None else planned
        if self._root in links:
            root = links[self._root]
            com = self._guarded(
                "joint_states message",
                lambda: self._decoded("joint_states", lambda msg: self._com(msg, root)),
            )
            self._com_point = self._com_point if com is None else com
        markers, browser = self._markers.get_subscription_count() > 0, self._browser.has_clients()
        if markers or browser:
            self._publish(self._scene(links), markers, browser)

    def _scene(self, links: dict[str, np.ndarray]) -> Scene:
        arrows, support = self._contact_overlays
        com = self._com_point
        return Scene(
            frame=self._frame,
            bodies=place_bodies(self._primitives, links),
            estimated_path=self._paths["estimated"].points(),
            true_path=self._paths["true"].points(),
            force_arrows=arrows,
            support_polygon=support,
            com=com,
            com_ground=None if com is None else com_ground(com, support),
            footholds=self._foothold_points,
            planned_path=self._planned_points,
            focus=links[self._root][:3, 3] if self._root in links else np.zeros(3),
        )

    def _publish(self, scene: Scene, markers: bool, browser: bool) -> None:
        """Draw ``scene`` as markers and (or) in the browser."""
        if not scene.is_finite():
            self._problems.error(
                ("non_finite_scene",),
                "not drawing: the scene has a non-finite number (the "
                "inputs that produced it passed validation; please report it)",
            )
            return
        if markers:
            publish_finite(self._markers, scene_markers(scene), self._problems)
        if browser:
            self._browser.update(scene)

    def destroy_node(self) -> None:
        self._browser.stop()
        self._polled.destroy()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, Viewer, args)


if __name__ == "__main__":
    raise SystemExit(main())
