"""state_publisher, joint_motion, ee_pose_printer as separate processes over DDS.

Expected transforms are written by hand from the URDFs' numbers (urdf/README.md): joint origin translation,
then a rotation about the joint axis, ``Ry(q) = [[c, 0, s], [0, 1, 0], [-s, 0, c]]`` for the planar arm,
``Rx(q)`` for the quadruped's HAA joints, and the planar arm's closed form
``tool (x, z) = (l1 s1 + l2 s12, l1 c1 + l2 c12)``.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from kinodyn_ros.nodes.ee_pose_printer import STATIC_LISTENER_QOS
from kinodyn_ros.nodes.state_publisher import LATCHED_QOS, TF_QOS
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from urdf_parser_py import urdf as urdf_model

from test.conftest import PYTHON, REPO, wait_for  # pytest --import-mode=importlib names it so
from test.ros_listener import Listener, transforms_by_child
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rclpy.qos import QoSProfile

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

Msg = TypeVar("Msg")  # a message class

BIN = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros"
TOOLS_BIN = REPO / "install" / "kinodyn_tools" / "lib" / "kinodyn_tools"
PLANAR = REPO / "urdf" / "planar_2link.urdf"
ARM7 = REPO / "urdf" / "arm7.urdf"
QUADRUPED = REPO / "urdf" / "quadruped.urdf"
L1, L2 = 1.0, 0.8  # urdf/README.md (a): joint2 origin z, tool_joint origin z
TOL = 1e-15  # the transforms cross DDS as float64 and are rebuilt from quaternions: rounding only


def transform(R: np.ndarray, p: tuple[float, float, float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def rot_y(q: float) -> np.ndarray:
    c, s = math.cos(q), math.sin(q)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_x(q: float) -> np.ndarray:
    c, s = math.cos(q), math.sin(q)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z(q: float) -> np.ndarray:
    c, s = math.cos(q), math.sin(q)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@pytest.fixture
def listener() -> Iterator[Listener]:
    node = Listener("state_publisher_test")
    try:
        yield node
    finally:
        node.close()


def collect(listener: Listener, msg_type: type[Msg], topic: str, qos: QoSProfile | int) -> list[Msg]:
    received: list = []
    listener.node.create_subscription(msg_type, topic, received.append, qos)
    return received


def test_late_subscriber_gets_description_static_and_joint_transforms(
    spawn: ProcessSpawner, listener: Listener,
) -> None:
    q1, q2 = 0.3, -0.5
    publisher = spawn(
        [str(BIN / "state_publisher"), "--ros-args", "-p", f"robot_description_file:={PLANAR}"],
        "state_publisher",
    )
    spawn(
        [PYTHON, str(REPO / "test" / "fixtures" / "joint_state_source.py"), f"joint1={q1}", f"joint2={q2}"],
        "joint_state_source",
    )
    # robot_description and /tf_static are published once, before this line is logged: the subscriptions
    # below join late and can only get them through transient-local durability.
    assert wait_for(lambda: "URDF from" in publisher.log_path.read_text(), 120), \
        publisher.log_path.read_text()
    descriptions = collect(listener, String, "robot_description", LATCHED_QOS)
    statics = collect(listener, TFMessage, "/tf_static", STATIC_LISTENER_QOS)
    dynamics = collect(listener, TFMessage, "/tf", TF_QOS)
    # joint_state_source's start-up included (a loaded machine)
    assert listener.spin_until(lambda: descriptions and statics and len(dynamics) >= 5, 120)

    assert [d.data for d in descriptions] == [PLANAR.read_text()]
    assert len(statics) == 1
    static = transforms_by_child(statics[0])
    assert set(static) == {"tool"}
    parent, T_tool, _ = static["tool"]
    assert parent == "link2"
    np.testing.assert_allclose(T_tool, transform(np.eye(3), (0.0, 0.0, L2)), rtol=0, atol=TOL)

    expected_link1 = transform(rot_y(q1), (0.0, 0.0, 0.0))
    expected_link2 = transform(rot_y(q2), (0.0, 0.0, L1))
    s1, c1, s12, c12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
    for msg in dynamics:
        tf = transforms_by_child(msg)
        assert set(tf) == {"link1", "link2"}
        (p1, T1, stamp1), (p2, T2, stamp2) = tf["link1"], tf["link2"]
        assert (p1, p2) == ("base_link", "link1")
        # stamped with the joint state's stamp (sec = 1000 + k, nanosec = 0), not with the time of publishing
        assert stamp1 == stamp2
        assert stamp1[0] >= 1000
        assert stamp1[1] == 0
        np.testing.assert_allclose(T1, expected_link1, rtol=0, atol=TOL)
        np.testing.assert_allclose(T2, expected_link2, rtol=0, atol=TOL)
        tool = T1 @ T2 @ T_tool
        np.testing.assert_allclose(
            tool[:3, 3], [L1 * s1 + L2 * s12, 0.0, L1 * c1 + L2 * c12], rtol=0, atol=4 * TOL
        )
    assert len({transforms_by_child(m)["link1"][2] for m in dynamics}) == len(dynamics)


def test_floating_base_from_odometry_partial_joint_states_and_frame_prefix(
    spawn: ProcessSpawner, listener: Listener,
) -> None:
    publisher = spawn(
        [
            str(BIN / "state_publisher"),
            "--ros-args",
            "-p",
            f"robot_description_file:={QUADRUPED}",
            "-p",
            "odometry_topic:=odom",
            "-p",
            "frame_prefix:=robot1/",
        ],
        "state_publisher",
    )
    assert wait_for(lambda: "URDF from" in publisher.log_path.read_text(), 120), \
        publisher.log_path.read_text()
    statics = collect(listener, TFMessage, "/tf_static", STATIC_LISTENER_QOS)
    dynamics = collect(listener, TFMessage, "/tf", TF_QOS)
    odometry_pub = listener.node.create_publisher(Odometry, "odom", 10)
    joints_pub = listener.node.create_publisher(JointState, "joint_states", 10)
    assert listener.spin_until(
        lambda: odometry_pub.get_subscription_count() and joints_pub.get_subscription_count(), 60
    )

    xyzw = np.array([0.1, -0.2, 0.3, 0.9]) / np.linalg.norm([0.1, -0.2, 0.3, 0.9])
    odom = Odometry()
    odom.header.frame_id, odom.child_frame_id = "odom", "base_link"
    odom.header.stamp.sec = 42
    odom.pose.pose.position.x, odom.pose.pose.position.y, odom.pose.pose.position.z = 1.0, -2.0, 0.5
    o = odom.pose.pose.orientation
    o.x, o.y, o.z, o.w = xyzw
    joints = JointState(name=["LF_HAA"], position=[0.2])  # partial: only one of twelve joints
    joints.header.stamp.sec = 43

    def received(child: str) -> bool:
        return any(child in transforms_by_child(m) for m in dynamics)

    def publish_until_received() -> bool:
        odometry_pub.publish(odom)
        joints_pub.publish(joints)
        return received("robot1/base_link") and received("robot1/LF_HIP")

    assert listener.spin_until(publish_until_received, 10)
    for msg in dynamics:
        tf = transforms_by_child(msg)
        if "robot1/base_link" in tf:
            assert set(tf) == {"robot1/base_link"}
            parent, T, stamp = tf["robot1/base_link"]
            assert (parent, stamp) == ("odom", (42, 0))
            x, y, z, w = xyzw  # Robot Dynamics lecture notes (ETH), (2.54), written out
            R = np.array(
                [
                    [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
                ]
            )
            np.testing.assert_allclose(T, transform(R, (1.0, -2.0, 0.5)), rtol=0, atol=4 * TOL)
        else:
            assert set(tf) == {"robot1/LF_HIP"}  # joints missing from the message get no transform
            parent, T, stamp = tf["robot1/LF_HIP"]
            assert (parent, stamp) == ("robot1/base_link", (43, 0))
            np.testing.assert_allclose(T, transform(rot_x(0.2), (0.25, 0.1, 0.0)), rtol=0, atol=TOL)

    assert listener.spin_until(lambda: statics, 60)
    static = transforms_by_child(statics[-1])
    assert set(static) == {f"robot1/{leg}_FOOT" for leg in ("LF", "LH", "RF", "RH")} | {"robot1/imu_link"}
    for leg in ("LF", "LH", "RF", "RH"):
        parent, T, _ = static[f"robot1/{leg}_FOOT"]
        assert parent == f"robot1/{leg}_SHANK"
        np.testing.assert_allclose(T, transform(np.eye(3), (0.0, 0.0, -0.3)), rtol=0, atol=TOL)
    parent, T, _ = static["robot1/imu_link"]
    assert parent == "robot1/base_link"
    np.testing.assert_allclose(T, transform(np.eye(3), (0.0, 0.0, 0.05)), rtol=0, atol=TOL)


def test_tf_goes_out_at_publish_frequency_of_simulated_time(
    spawn: ProcessSpawner, listener: Listener,
) -> None:
    """1000 joint states over 2 s of simulated time (a 500 Hz loop) give about 2 s x publish_frequency /tf
    messages, each stamped with one of the joint states' stamps, ascending, the last one the newest."""
    publisher = spawn(
        [str(BIN / "state_publisher"), "--ros-args", "-p", f"robot_description_file:={PLANAR}",
         "-p", "use_sim_time:=true", "-p", "publish_frequency:=10.0"],
        "state_publisher",
    )
    assert wait_for(lambda: "URDF from" in publisher.log_path.read_text(), 120), \
        publisher.log_path.read_text()
    dynamics = collect(listener, TFMessage, "/tf", TF_QOS)
    clock_pub = listener.node.create_publisher(Clock, "/clock", 10)
    joints_pub = listener.node.create_publisher(JointState, "joint_states", 100)
    tf_reader = next(s for s in listener.node.subscriptions if s.topic_name == "/tf")
    # this process's /tf reader too: the /tf of the stream below goes out while it is sent
    assert listener.spin_until(
        lambda: clock_pub.get_subscription_count() and joints_pub.get_subscription_count()
        and tf_reader.get_publisher_count(), 60
    )
    sent = []
    for k in range(1, 1001):  # 2 ms steps: clock, then the joint state stamped with it
        stamp = Time(sec=100 + (2 * k) // 1000, nanosec=(2 * k) % 1000 * 1_000_000)
        clock_pub.publish(Clock(clock=stamp))
        msg = JointState(name=["joint1", "joint2"], position=[0.001 * k, -0.001 * k])
        msg.header.stamp = stamp
        joints_pub.publish(msg)
        sent.append((stamp.sec, stamp.nanosec))
        listener.spin_until(lambda: False, 0.002)
    last = Time(sec=103)  # one more tick of the timer after the last joint state
    for _ in range(20):
        clock_pub.publish(Clock(clock=last))
        listener.spin_until(lambda: False, 0.05)
    newest = lambda: transforms_by_child(dynamics[-1])["link1"][2]  # noqa: E731
    assert listener.spin_until(lambda: dynamics and newest() == sent[-1], 10)
    stamps = [transforms_by_child(m)["link1"][2] for m in dynamics]
    assert 2 <= len(stamps) <= 2 * 10 + 3, stamps  # not one per joint state (1000)
    assert stamps == sorted(set(stamps))
    assert set(stamps) <= set(sent)


def test_joint_motion_stays_within_limits_and_spans_them(spawn: ProcessSpawner, listener: Listener) -> None:
    robot = urdf_model.URDF.from_xml_file(str(ARM7))
    limits = {j.name: (j.limit.lower, j.limit.upper) for j in robot.joints if j.type == "revolute"}
    spawn(
        [
            str(BIN / "joint_motion"),
            "--ros-args",
            "-p",
            f"robot_description_file:={ARM7}",
            "-p",
            "amplitude:=4.0",
            "-p",
            "period:=1.0",
            "-p",
            "rate_hz:=100.0",
        ],
        "joint_motion",
    )
    states = collect(listener, JointState, "joint_states", 10)
    # more than one period; the node's start-up included (a loaded machine)
    assert listener.spin_until(lambda: len(states) >= 130, 120)
    names = [f"joint{i}" for i in range(1, 8)]
    q = np.array([m.position for m in states])
    assert all(list(m.name) == names for m in states)
    lower = np.array([limits[n][0] for n in names])
    upper = np.array([limits[n][1] for n in names])
    assert np.all(q >= lower)
    assert np.all(q <= upper)
    # amplitude 4 rad exceeds every half range: each joint sweeps (nearly, at 100 Hz sampling) its whole range
    assert np.all(q.max(axis=0) - q.min(axis=0) > 0.99 * (upper - lower))


def test_demo_graph_prints_ee_pose_that_matches_the_closed_form(spawn: ProcessSpawner) -> None:
    """config/planar_demo.yaml (the README's first tour): its printer lines are checkable by hand."""
    demo = spawn(
        [str(TOOLS_BIN / "kinodyn"), "up", str(REPO / "config" / "planar_demo.yaml"), "--timeout", "300"],
        "kinodyn_up",
    )
    pattern = re.compile(
        r"q = \[([^\]]+)\] rad .*p = \[([^\]]+)\] m, \|p\| = (\S+) m, rpy = \[([^\]]+)\] rad  "
        r"/tf vs kinodyn FK: \|dp\| = (\S+) m, \|dR\| = (\S+) rad"
    )

    def lines() -> list[re.Match]:
        return [m for m in map(pattern.search, demo.log_path.read_text().splitlines()) if m]

    # the graph's start-up included (a loaded machine)
    assert wait_for(lambda: len(lines()) >= 4, 120), demo.log_path.read_text()[-3000:]
    for match in lines():
        q1, q2 = (float(v) for v in match.group(1).split(","))
        x, y, z = (float(v) for v in match.group(2).split(","))
        roll, pitch, yaw = (float(v) for v in match.group(4).split(","))
        # printed with 4 (angles) and 5 (positions) decimals
        assert abs(x - (L1 * math.sin(q1) + L2 * math.sin(q1 + q2))) < 2e-4
        assert abs(z - (L1 * math.cos(q1) + L2 * math.cos(q1 + q2))) < 2e-4
        assert abs(y) < 1e-5
        R = rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)  # URDF rpy convention
        np.testing.assert_allclose(R, rot_y(q1 + q2), rtol=0, atol=4e-4)
        assert abs(float(match.group(3)) - math.hypot(x, z)) < 2e-5
        assert float(match.group(5)) < 1e-14
        assert float(match.group(6)) < 1e-14
    assert demo.poll() is None
