"""The nodes that take their streams serialized (state_estimator, wbc, state_publisher): bytes that are not a
message of the topic's type are one line naming topic and type (throttled) and the node goes on; the same
message taken serialized is used as the typed one was. In-process nodes, no other process."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import rclpy
from kinodyn_common.conversions import JointStateError
from kinodyn_common.stamps import NS, split_ns
from kinodyn_control.estimation.messages import estimate_fields, odometry_message, transform_message
from kinodyn_control.estimation.pipeline import EstimateRows
from kinodyn_ros.nodes.state_estimator import StateEstimator
from kinodyn_ros.nodes.state_publisher import StatePublisher
from kinodyn_ros.nodes.wbc import Wbc
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Imu, JointState

from kinodyn_interfaces.msg import ContactStates
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from rclpy.node import Node

    NodeFactory = Callable[[type, list[str]], Any]  # a node with its warning and error lines in .lines

# The private reads marked SLF001 are the node's state under test (its callbacks driven directly).
REPO = Path(__file__).resolve().parents[3]
QUADRUPED = REPO / "urdf" / "quadruped_sim.urdf"
ARM7 = REPO / "urdf" / "arm7.urdf"
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]
GARBAGE = [b"", b"\x00\x01\x00\x00\x05", b"\x00\x00\x00\x00" + bytes(60), bytes(range(256)) * 3]


@pytest.fixture
def make_node() -> Iterator[NodeFactory]:
    """Builds a node class with ``-p`` parameters; its warning and error lines are kept in ``node.lines``."""
    made: list[Node] = []

    def make(cls: type, params: list[str]) -> Any:  # noqa: ANN401  (the node, its lines attached)
        args = ["--ros-args"] + [a for p in params for a in ("-p", p)]
        rclpy.init(args=args)
        node = cls()
        node.lines = []
        logger = node.get_logger()
        logger.warning = node.lines.append
        logger.error = node.lines.append
        made.append(node)
        return node

    yield make
    for node in made:
        node.destroy_node()
    rclpy.try_shutdown()


def callbacks(node: Node) -> dict[str, Callable[..., None]]:
    """``{topic: callback}`` of the node's subscriptions that take serialized messages."""
    return {s.topic_name: s.callback for s in node.subscriptions if s.raw}


def garbage_is_one_line(node: Any, topic: str, msgtype: str,  # noqa: ANN401  (as make_node's)
                        callback: Callable[[bytes], None] | None = None) -> None:
    """Garbage given to ``callback`` (default: the node's subscription callback of ``topic``) is one line."""
    callback = callback or callbacks(node)[topic]
    before = len(node.lines)
    for data in GARBAGE * 3:
        callback(data)  # never raises
    lines = node.lines[before:]
    assert len(lines) == 1, lines  # throttled: one line for the cause
    assert lines[0].startswith(f"ignoring {topic.lstrip('/')} message: ")
    assert f"not a {msgtype}" in lines[0]


def joint_state(names: list[str], positions: list[float], sec: int = 0) -> JointState:
    msg = JointState(name=names, position=positions, velocity=[0.0] * len(names))
    msg.header.stamp.sec = sec
    return msg


def test_state_publisher_reads_joint_states_and_checks_each_one(make_node: NodeFactory) -> None:
    node = make_node(StatePublisher, [f"robot_description_file:={QUADRUPED}"])
    assert not callbacks(node)  # no callback per message: the joint states are taken at each /tf tick
    polled = node._joint_input  # noqa: SLF001  (the node's state under test)
    assert polled.raw
    assert polled.topic_name == "/joint_states"
    take = node._take_joint_state  # noqa: SLF001  (what each /tf tick gives every message it takes)
    garbage_is_one_line(node, "/joint_states", "sensor_msgs/msg/JointState", take)
    names = list(node._tree.movable_joint_names)  # noqa: SLF001  (the node's state under test)
    take(serialize_message(joint_state(names, [0.1] * 12, sec=0)))
    assert node._pending == {n: (0.1, (0, 0)) for n in names}  # noqa: SLF001  (the node's state under test)
    layout = node._layout  # noqa: SLF001  (the node's state under test)
    # the same name list again: kept, and each message's values still checked (a NaN, a position past its
    # limit: refused naming the joint, nothing of the message taken)
    for bad, what in ((np.nan, "non-finite positions for 'LF_KFE'"), (1e3, "LF_KFE = 1000")):
        positions = [0.2] * 12
        positions[names.index("LF_KFE")] = bad
        with pytest.raises(JointStateError, match=what):
            node._on_joint_state(node._joint_states.read(serialize_message(joint_state(names, positions))))  # noqa: SLF001
    assert node._layout is layout  # noqa: SLF001  (the node's state under test)
    assert node._pending["LF_HAA"] == (0.1, (0, 0))  # noqa: SLF001  (the node's state under test)
    # another name list is checked again: a name the URDF lacks is refused, a subset in another order taken
    with pytest.raises(JointStateError, match="unknown joints 'elbow'"):
        node._on_joint_state(joint_state([*names[:11], "elbow"], [0.0] * 12))  # noqa: SLF001
    take(serialize_message(joint_state(names[5::-1], [0.05] * 6, sec=0)))
    assert len(node.lines) == 1  # the garbage's line only
    assert node._layout is not layout  # noqa: SLF001  (the node's state under test)
    assert node._layout.used == tuple(n for n in names if n in names[:6])  # noqa: SLF001
    assert node._pending[names[0]] == (0.05, (0, 0))  # noqa: SLF001  (the node's state under test)
    assert node._pending[names[11]] == (0.1, (0, 0))  # noqa: SLF001  (the node's state under test)


def test_state_estimator_reads_its_three_streams(make_node: NodeFactory) -> None:
    node = make_node(StateEstimator, [f"robot_description_file:={QUADRUPED}", "contact_source:=schedule",
                                      f"feet:={FEET}".replace("'", "")])
    topics = {"/imu/data": "sensor_msgs/msg/Imu", "/joint_states": "sensor_msgs/msg/JointState",
              "/contact_schedule": "kinodyn_interfaces/msg/ContactStates"}
    assert set(callbacks(node)) == set(topics)
    for topic, msgtype in topics.items():
        garbage_is_one_line(node, topic, msgtype)
    imu = Imu()
    imu.header.frame_id, imu.linear_acceleration.z = "imu_link", 9.81
    contacts = ContactStates(names=FEET, in_contact=[True] * 4)
    joints = joint_state(list(node._pipeline._model.joint_names), [0.0] * 12)  # noqa: SLF001
    before = list(node.lines)
    now = node.get_clock().now().nanoseconds
    for k in range(1, 4):  # 1, 2, 3 ms from now: each stream's messages are taken in stamp order
        for msg in (imu, contacts, joints):
            msg.header.stamp.sec, msg.header.stamp.nanosec = split_ns(now + k * 1_000_000)
        for topic, msg in (("/imu/data", imu), ("/contact_schedule", contacts), ("/joint_states", joints)):
            callbacks(node)[topic](serialize_message(msg))
    assert node.lines == before  # nothing refused
    processed = node._pipeline.counts.processed  # noqa: SLF001  (the node's state under test)
    assert processed["imu"] >= 2
    assert processed["contacts"] >= 2
    assert processed["joint_states"] >= 2


def test_wbc_reads_joint_states_and_answers_them(make_node: NodeFactory) -> None:
    node = make_node(Wbc, [f"robot_description_file:={ARM7}", "mode:=arm"])
    assert set(callbacks(node)) == {"/joint_states"}
    garbage_is_one_line(node, "/joint_states", "sensor_msgs/msg/JointState")
    assert node._core.controlled_ticks == 0  # no command for bytes that are not a joint state  # noqa: SLF001
    names = list(node._core.names)  # noqa: SLF001  (the node's state under test)
    within = np.clip(0.0, node._core._q_lower, node._core._q_upper).tolist()  # the model's joint order  # noqa: SLF001
    callbacks(node)["/joint_states"](serialize_message(joint_state(names, within)))
    assert node._core.controlled_ticks == 1, node.lines  # noqa: SLF001  (the node's state under test)


class Published:
    """Stands in for a publisher with one subscriber: keeps what is published."""

    def __init__(self) -> None:
        self.messages: list[bytes] = []

    def get_subscription_count(self) -> int:
        return 1

    def publish(self, data: bytes) -> None:
        self.messages.append(data)


def test_state_estimator_publishes_tf_at_tf_rate(make_node: NodeFactory) -> None:
    """/tf of every estimate by default; at ``tf_rate`` Hz of stamp time the first estimate, then the first at
    or after each multiple of the period, with the odometry's pose and stamp (estimation.messages'
    transform_message of the same row); a bad live value is refused and changes nothing."""
    node = make_node(StateEstimator, [f"robot_description_file:={QUADRUPED}"])
    odometry, tf = Published(), Published()
    node._odometry, node._tf = odometry, tf  # noqa: SLF001  (the node's outputs under test)
    stamps = np.arange(NS, NS + 100_000_000, 2_000_000)  # 50 estimates, 2 ms apart, from 1 s
    rows = np.random.default_rng(3).normal(size=(len(stamps), 85))
    estimates = EstimateRows(stamps, "odom", "base_link", rows)
    node._publish_estimates(estimates)  # noqa: SLF001  (the node's output path under test)
    assert len(odometry.messages) == len(tf.messages) == 50
    result = node.set_parameters([Parameter("tf_rate", value=100.0)])[0]
    assert result.successful, result.reason
    tf.messages.clear()
    node._publish_estimates(estimates._replace(stamps_ns=stamps + 1_000_000))  # noqa: SLF001  (as above)
    published = [deserialize_message(data, TFMessage) for data in tf.messages]
    shifted = stamps + 1_000_000  # 1.001 s, 1.003 s, ...: due at the first, then at 1.011 s, 1.021 s, ...
    every_10ms = [0, *(k for k in range(1, 50) if shifted[k] // 10_000_000 > shifted[k - 1] // 10_000_000)]
    assert every_10ms == list(range(0, 50, 5))  # 100 ms of estimates at 100 Hz
    assert len(published) == len(every_10ms)
    for msg, k in zip(published, every_10ms, strict=True):
        expected = transform_message(odometry_message(estimate_fields(rows[k]), int(stamps[k]) + 1_000_000,
                                                      "odom", "base_link"))
        assert msg == expected
    for bad in (-1.0, float("nan"), float("inf")):
        result = node.set_parameters([Parameter("tf_rate", value=bad)])[0]
        assert not result.successful
        assert "tf_rate must be a finite number >= 0" in result.reason
    assert node._tf_publishing.rate == 100.0  # noqa: SLF001  (the node's state under test)
