"""Test doubles without ROS: a controller context recording topics and logs, a manager harness, URDF snippets,
and the quadruped's joints, stance and PD command shared by the unit and system tests; and an rclpy context
with a node built in it, for the node tests that drive a node's callbacks in-process.

Used by the tests and the benchmark; nothing here is used by the node."""

from __future__ import annotations

import copy
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import rclpy
from kinodyn_common.stamps import split_ns
from rclpy.node import Node
from rclpy.serialization import deserialize_message, serialize_message

from kinodyn_control.controllers.base import LevelLogger
from kinodyn_control.hardware.description import RobotDescription, parse_robot_description
from kinodyn_control.hardware.types import LifecycleState
from kinodyn_control.manager import ControllerManager, ResourceManager
from kinodyn_control.registry import controller_registry, hardware_registry
from kinodyn_interfaces.msg import JointPDCommand

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

GENERIC_SYSTEM = "kinodyn_control/GenericSystem"
SIMULATED_SYSTEM = "kinodyn_control/SimulatedSystem"
JOINT_PD = "kinodyn_control/JointPDController"
FORWARD_COMMAND = "kinodyn_control/ForwardCommandController"
JOINT_STATE_BROADCASTER = "kinodyn_control/JointStateBroadcaster"
ARM_JOINTS = ("j1", "j2")
"""The joints of ``robot_xml``'s chain by default and of ``two_joint_arm``."""
QUADRUPED_JOINTS = [f"{leg}_{j}" for leg in ("LF", "LH", "RF", "RH") for j in ("HAA", "HFE", "KFE")]
# urdf/README.md (c): the nominal standing configuration (HAA, HFE, KFE per leg) and the base height it gives
QUADRUPED_STANCE_BY_LEG = {"LF": (0.0, 0.6, -1.2), "RF": (0.0, 0.6, -1.2), "LH": (0.0, -0.6, 1.2),
                           "RH": (0.0, -0.6, 1.2)}
QUADRUPED_STANCE = [QUADRUPED_STANCE_BY_LEG[j[:2]][("HAA", "HFE", "KFE").index(j[3:])]
                    for j in QUADRUPED_JOINTS]
QUADRUPED_STANDING_HEIGHT = 0.5252


def pd_command(names: Iterable[str], position: Iterable[float], velocity: Iterable[float],
               effort: Iterable[float], kp: Iterable[float], kd: Iterable[float], stamp_ns: int = 0
               ) -> JointPDCommand:
    """A JointPDCommand (kinodyn_interfaces) with ``header.stamp = stamp_ns``."""
    msg = JointPDCommand(name=list(names), position=[float(x) for x in position],
                         velocity=[float(x) for x in velocity], effort=[float(x) for x in effort],
                         kp=[float(x) for x in kp], kd=[float(x) for x in kd])
    msg.header.stamp.sec, msg.header.stamp.nanosec = split_ns(stamp_ns)
    return msg


class FakePublisher:
    def __init__(self, msg_type: type, topic: str) -> None:
        self.msg_type, self.topic = msg_type, topic
        self.messages: list[Any] = []

    def publish(self, msg: Any) -> None:  # noqa: ANN401  (any rosidl message, or its bytes)
        """Keeps a copy: rclpy's publish serialises the message at once, so a publisher may refill it; a
        message published as its serialized bytes is kept deserialized."""
        if isinstance(msg, bytes):
            self.messages.append(deserialize_message(msg, self.msg_type))
        else:
            self.messages.append(copy.deepcopy(msg))


class FakeContext:
    """A controller's host without ROS: topics resolve ``~/x`` to ``/<controller>/x``; ``time`` is set by
    tests."""

    def __init__(self, name: str, description: RobotDescription, records: list[tuple[str, str]]) -> None:
        self.name = name
        self.description = description
        self.time = 0.0
        self.publishers: dict[str, FakePublisher] = {}
        self.subscriptions: dict[str, Callable[[Any], None]] = {}
        self.logger = ListLogger(name, records)

    def now(self) -> float:
        return self.time

    def _topic(self, topic: str) -> str:
        return f"/{self.name}/{topic[2:]}" if topic.startswith("~/") else "/" + topic.lstrip("/")

    def create_publisher(self, msg_type: type, topic: str) -> FakePublisher:
        publisher = FakePublisher(msg_type, self._topic(topic))
        self.publishers[publisher.topic] = publisher
        return publisher

    def create_subscription(self, msg_type: type, topic: str, callback: Callable[[Any], None],
                            raw: bool = False) -> str:
        """Tests call ``subscriptions[topic]`` with a message; a ``raw`` subscriber gets it serialized."""
        self.subscriptions[self._topic(topic)] = (
            (lambda msg: callback(serialize_message(msg))) if raw else callback)
        return self._topic(topic)

    def destroy(self, entity: FakePublisher | str) -> None:
        if isinstance(entity, FakePublisher):
            self.publishers.pop(entity.topic, None)
        else:
            self.subscriptions.pop(entity, None)


class ListLogger(LevelLogger):
    """Keeps (level, message) pairs for assertions."""

    def __init__(self, name: str, records: list[tuple[str, str]]) -> None:
        self.name, self.records = name, records

    def log(self, level: str, message: str) -> None:
        self.records.append((level, message))


class Harness:
    """A resource manager and controller manager over ``urdf_xml``, with fake contexts per controller."""

    def __init__(self, urdf_xml: str) -> None:
        self.records: list[tuple[str, str]] = []
        self.logger = ListLogger("manager", self.records)
        self.description = parse_robot_description(urdf_xml)
        self.resources = ResourceManager(self.description, hardware_registry(), self.logger)
        self.contexts: dict[str, FakeContext] = {}
        self.manager = ControllerManager(self.resources, controller_registry(), self._context, self.logger)

    def _context(self, name: str) -> FakeContext:
        self.contexts[name] = FakeContext(name, self.description, self.records)
        return self.contexts[name]

    def activate_hardware(self) -> None:
        for name in self.resources.components:
            self.resources.set_component_state(name, LifecycleState.ACTIVE)

    def start(self, name: str, type_name: str, params: dict[str, Any] | None = None) -> None:
        self.manager.load(name, type_name, params or {})
        self.manager.configure(name)
        ok, message = self.manager.switch([name], [])
        assert ok, message

    def state(self, name: str) -> float:
        return float(self.resources.states.values[self.resources.states.index[name]])

    def command(self, name: str) -> float:
        return float(self.resources.commands.values[self.resources.commands.index[name]])

    def set_command(self, name: str, value: float) -> None:
        self.resources.commands.values[self.resources.commands.index[name]] = value

    def messages(self, level: str) -> list[str]:
        return [m for lv, m in self.records if lv == level]

    def send(self, controller: str, msg: object, time: float = 0.0) -> None:
        """``msg`` on the ``~/commands`` topic of ``controller``, whose context's clock reads ``time``."""
        self.contexts[controller].time = time
        self.contexts[controller].subscriptions[f"/{controller}/commands"](msg)


def robot_xml(ros2_control: str, joints: tuple[str, ...] = ARM_JOINTS) -> str:
    """A chain of revolute joints (limits ±1 rad, 2 rad/s, 10 N m) with the given <ros2_control> block(s)."""
    links = "".join(f'<link name="l{i}"/>' for i in range(len(joints) + 1))
    chain = "".join(
        f'<joint name="{j}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/><axis xyz="0 0 1"/>'
        f'<limit lower="-1" upper="1" velocity="2" effort="10"/></joint>'
        for i, j in enumerate(joints)
    )
    return f'<robot name="r">{links}{chain}{ros2_control}</robot>'


def system_block(params: str = "", joints: str = "", extra: str = "", name: str = "sys",
                 plugin: str = GENERIC_SYSTEM) -> str:
    return (
        f'<ros2_control name="{name}" type="system"><hardware><plugin>{plugin}</plugin>'
        f"{params}</hardware>{joints}{extra}</ros2_control>"
    )


def param(name: str, value: object) -> str:
    return f'<param name="{name}">{value}</param>'


def joint(
    name: str,
    commands: tuple[str, ...],
    states: tuple[str, ...],
    initial: dict[str, float] | None = None,
    params: str = "",
) -> str:
    initial = initial or {}
    cmd = "".join(f'<command_interface name="{c}"/>' for c in commands)
    st = "".join(
        f'<state_interface name="{s}">'
        + (param("initial_value", initial[s]) if s in initial else "")
        + "</state_interface>"
        for s in states
    )
    return f'<joint name="{name}">{cmd}{st}{params}</joint>'


def two_joint_arm(params: str = "") -> Harness:
    """Joints j1, j2 (limits ±1 rad, 2 rad/s, 10 N m; initial positions 0.2, 0.4) with effort and position
    commands on GenericSystem (hardware ``params`` added), hardware active."""
    joints = "".join(
        joint(j, ("position", "effort"), ("position", "velocity", "effort"), {"position": 0.2 * (k + 1),
                                                                              "velocity": 0.0})
        for k, j in enumerate(ARM_JOINTS)
    )
    h = Harness(robot_xml(system_block(params, joints), ARM_JOINTS))
    h.activate_hardware()
    return h


NodeT = TypeVar("NodeT", bound=Node)


@contextmanager
def rclpy_context(parameters: Mapping[str, object]) -> Iterator[None]:
    """rclpy initialised with ``--ros-args -p name:=value`` for each of ``parameters``; shut down on exit."""
    args = ["--ros-args"]
    for name, value in parameters.items():
        args += ["-p", f"{name}:={value}"]
    rclpy.init(args=args)
    try:
        yield
    finally:
        rclpy.shutdown()


@contextmanager
def in_process_node(make: Callable[[], NodeT], parameters: Mapping[str, object]) -> Iterator[NodeT]:
    """The node ``make()`` builds in an :func:`rclpy_context` of ``parameters``; destroyed before shutdown."""
    with rclpy_context(parameters):
        node = make()
        try:
            yield node
        finally:
            node.destroy_node()
