"""No message can stop a node: a seeded fuzz of every subscribed topic and service.

Five node processes over DDS: state_publisher (joint_states, odometry), kinematics with CLIK (joint_states,
target_pose; compute_fk, compute_ik), dynamics (joint_states; inverse_dynamics, gravity_compensation,
mass_matrix), ee_pose_printer (/tf, /tf_static, joint_states) on urdf/arm7.urdf, and control_node on the
quadruped (GenericSystem, in namespace /quad so its joint_states stay apart) with a JointPDController on six
joints and a ForwardCommandController on the other six (JointPDCommand and Float64MultiArray commands).
test/fuzz_inputs.py draws the messages and requests (seed FUZZ_SEED): about 70 % adversarial, the rest valid.

Asserted: every node process is still alive; every message the nodes published (/tf, gravity_efforts,
joint_commands, /quad/joint_states, the IMU) and every service answer holds only finite numbers; each service
answered some requests with success and refused others; bad input was logged throttled per cause (far fewer
lines than bad messages); and afterwards each node still does its job on a valid input, checked against the
kinodyn core in this process (second source).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import PoseStamped
from kinodyn_common.conversions import matrix_to_pose, transform_to_matrix
from kinodyn_common.finite import non_finite_field
from kinodyn_control.testing import GENERIC_SYSTEM, QUADRUPED_JOINTS, pd_command
from kinodyn_ros.nodes.state_publisher import LATCHED_QOS, TF_QOS
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from kinodyn import Model
from kinodyn_interfaces.msg import JointPDCommand
from kinodyn_interfaces.srv import ComputeFK, ComputeIK, GravityCompensation, InverseDynamics, MassMatrix
from test.conftest import REPO, ProcessSpawner, wait_for  # pytest --import-mode=importlib names it so
from test.fuzz_inputs import Fuzzer
from test.ros_listener import Listener
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from rclpy.client import Client
    from rclpy.node import Node
    from rclpy.publisher import Publisher
    from rclpy.type_support import Srv

pytestmark = pytest.mark.system

Req = TypeVar("Req")  # a service request
Res = TypeVar("Res")  # its response

FUZZ_SEED = 20261123
ROS_LIB = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros"
CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"
ARM7_URDF = REPO / "urdf" / "arm7.urdf"
ARM7 = Model.from_urdf(str(ARM7_URDF))
JOINTS = list(ARM7.joint_names)
LINKS = list(ARM7.frame_names)
PD_JOINTS, EFFORT_JOINTS = list(QUADRUPED_JOINTS[:6]), list(QUADRUPED_JOINTS[6:])
MESSAGES_PER_TOPIC = 150
SERVICE_CALLS = {ComputeFK: 40, ComputeIK: 20, InverseDynamics: 40, GravityCompensation: 25, MassMatrix: 25}
MAX_LOG_LINES = 80  # warnings + errors per node: a handful per cause over the run, not one per message


def arm_nodes(spawn: ProcessSpawner) -> dict:
    arm = f"robot_description_file:={ARM7_URDF}"
    return {
        "state_publisher": spawn([str(ROS_LIB / "state_publisher"), "--ros-args", "-p", arm, "-p",
                                  "odometry_topic:=odom", "-p", "ignore_timestamp:=true"], "state_publisher"),
        "kinematics": spawn([str(ROS_LIB / "kinematics"), "--ros-args", "-p", arm, "-p", "ik_frame:=ee_link",
                             "-p", "ik_timeout:=0.2", "-p", "rate_hz:=50.0"], "kinematics"),
        "dynamics": spawn([str(ROS_LIB / "dynamics"), "--ros-args", "-p", arm, "-p", "publish_gravity:=true"],
                          "dynamics"),
        "ee_pose_printer": spawn([str(ROS_LIB / "ee_pose_printer"), "--ros-args", "-p", arm, "-p",
                                  "print_period:=0.25"], "ee_pose_printer"),
    }


def control_node(spawn: ProcessSpawner, tmp_path: Path) -> object:
    params = {
        "update_rate": 100,
        "robot_description_file": str(REPO / "urdf" / "quadruped.urdf"),
        "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"},
        "imu_sensor_broadcaster": {"type": "kinodyn_control/ImuSensorBroadcaster",
                                   "sensor_name": "imu_sensor"},
        "leg_pd_controller": {"type": "kinodyn_control/JointPDController", "joints": PD_JOINTS},
        "leg_effort_controller": {"type": "kinodyn_control/ForwardCommandController", "joints": EFFORT_JOINTS,
                                  "interface_name": "effort"},
    }
    assert GENERIC_SYSTEM in (REPO / "urdf" / "quadruped.urdf").read_text()
    param_file = tmp_path / "control_params.yaml"
    param_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}))
    return spawn([str(CONTROL_NODE), "--ros-args", "-r", "__ns:=/quad", "--params-file", str(param_file)],
                 "control_node")


class Outputs:
    """Everything the nodes publish, as received by the test process."""

    def __init__(self, listener: Listener) -> None:
        node = listener.node
        self.tf: list[TFMessage] = []
        self.by_topic: dict[str, list] = {"/tf": self.tf}
        self.subscriptions = {"/tf": node.create_subscription(TFMessage, "/tf", self._on_tf, TF_QOS)}
        for msg_type, topic in ((Float64MultiArray, "/dynamics/gravity_efforts"),
                                (Float64MultiArray, "/kinematics/joint_commands"),
                                (JointState, "/quad/joint_states"),
                                (Imu, "/quad/imu_sensor_broadcaster/imu")):
            received: list = []
            self.by_topic[topic] = received
            self.subscriptions[topic] = node.create_subscription(msg_type, topic, received.append,
                                                                 QoSProfile(depth=200))

    def _on_tf(self, msg: TFMessage) -> None:
        """Only what state_publisher sent: the fuzz's own /tf messages never end at a link of the robot."""
        children = {t.child_frame_id for t in msg.transforms}
        if children and children <= set(LINKS):
            self.tf.append(msg)

    def non_finite(self) -> list[str]:
        return [f"{topic}: {field}" for topic, messages in self.by_topic.items() for msg in messages
                if (field := non_finite_field(msg)) is not None]


@pytest.fixture
def graph(spawn: ProcessSpawner, tmp_path: Path) -> Iterator[tuple[dict, Listener]]:
    processes = {**arm_nodes(spawn), "control_node": control_node(spawn, tmp_path)}
    listener = Listener("fuzz_test")
    try:
        yield processes, listener
    finally:
        listener.close()


def good_q(rng: np.random.Generator) -> np.ndarray:
    return ARM7.random_configuration(rng)


def good_joint_state(q: np.ndarray, sec: int) -> JointState:
    msg = JointState(name=JOINTS, position=q.tolist())
    msg.header.stamp.sec = sec
    return msg


def call(listener: Listener, client: Client[Req, Res], request: Req) -> Res:
    future = client.call_async(request)
    assert listener.spin_until(future.done, 20.0), f"no answer from {client.srv_name}"
    return future.result()


def fuzz_requests(fuzz: Fuzzer) -> dict:
    """One request factory per service type: 40 % valid requests (one has too many fields to be valid by
    chance), the others fuzzed."""
    lower, upper = ARM7.lower_limit, ARM7.upper_limit

    def joint_state() -> JointState:
        return fuzz.joint_state(JOINTS, lower, upper)

    def valid_state() -> JointState:
        return good_joint_state(good_q(fuzz.rng), 0)

    def fk() -> ComputeFK.Request:
        if not fuzz.bad(0.6):
            return ComputeFK.Request(joint_state=valid_state(), frames=["ee_link", "link3"])
        frames = [fuzz.frame_id(LINKS) for _ in range(fuzz.choice([0, 1, 3]))]
        return ComputeFK.Request(joint_state=joint_state(), frames=frames)

    def ik() -> ComputeIK.Request:
        if not fuzz.bad(0.6):
            target = PoseStamped(pose=matrix_to_pose(ARM7.frame_placement(good_q(fuzz.rng), "ee_link")))
            return ComputeIK.Request(frame="ee_link", target=target)
        return ComputeIK.Request(frame=fuzz.frame_id(["ee_link", "link4"]),
                                 target=fuzz.pose_stamped(["", "base_link"], scale=0.3), seed=joint_state(),
                                 position_tolerance=fuzz.tolerance(), orientation_tolerance=fuzz.tolerance(),
                                 timeout=fuzz.tolerance())

    def inverse_dynamics() -> InverseDynamics.Request:
        if not fuzz.bad(0.6):
            state = valid_state()
            state.velocity = fuzz.rng.normal(size=ARM7.nv).tolist()
            acceleration = fuzz.rng.normal(size=ARM7.nv).tolist()
            return InverseDynamics.Request(joint_state=state, acceleration=acceleration)
        state = joint_state()
        state.velocity = fuzz.array(len(state.name), scale=2.0)
        return InverseDynamics.Request(joint_state=state, acceleration=fuzz.array(len(state.name), scale=5.0),
                                       external_wrenches=fuzz.wrenches(LINKS))

    def at_joint_state(srv: type[Srv]) -> Callable[[], Any]:  # Any: rclpy types no request per service type
        return lambda: srv.Request(joint_state=joint_state() if fuzz.bad(0.6) else valid_state())

    return {
        ComputeFK: fk,
        ComputeIK: ik,
        InverseDynamics: inverse_dynamics,
        GravityCompensation: at_joint_state(GravityCompensation),
        MassMatrix: at_joint_state(MassMatrix),
    }


READERS = {  # the node(s) reading each fuzzed topic (test_fuzzed_... publishers' names)
    "joint_states": {"state_publisher", "kinematics", "dynamics", "ee_pose_printer"},
    "odom": {"state_publisher"}, "target_pose": {"kinematics"}, "tf": {"ee_pose_printer"},
    "tf_static": {"ee_pose_printer"}, "pd": {"controller_manager"}, "effort": {"controller_manager"},
}
WRITERS = {  # the node writing each output the test checks after the fuzz
    "/tf": {"state_publisher"}, "/dynamics/gravity_efforts": {"dynamics"},
    "/kinematics/joint_commands": {"kinematics"},
}


def _all_matched(node: Node, publishers: dict[str, Publisher], outputs: Outputs) -> bool:
    """Each publisher matched to every reader the graph shows on its topic, READERS among them; each of
    ``outputs``' readers of WRITERS' topics matched to every writer there, WRITERS among them."""
    for name, publisher in publishers.items():
        infos = node.get_subscriptions_info_by_topic(publisher.topic_name)
        if not (READERS[name] <= {i.node_name for i in infos}
                and publisher.get_subscription_count() >= len(infos)):
            return False
    for topic, nodes in WRITERS.items():
        infos = node.get_publishers_info_by_topic(topic)
        if not (nodes <= {i.node_name for i in infos}
                and outputs.subscriptions[topic].get_publisher_count() >= len(infos)):
            return False
    return True


def _check_alive_and_finite(processes: dict, outputs: Outputs, answers: dict[type, list]) -> None:
    """Every node alive, every output and answer finite, refusals with a reason, few log lines."""
    dead = {name: p.log_path.read_text()[-3000:] for name, p in processes.items() if p.poll() is not None}
    assert not dead, dead
    assert outputs.non_finite() == []
    for srv, responses in answers.items():
        bad = [non_finite_field(r) for r in responses if non_finite_field(r) is not None]
        assert bad == [], (srv.__name__, bad)
        succeeded = sum(r.success for r in responses)
        assert 0 < succeeded < len(responses), (srv.__name__, [r.message for r in responses])
        assert all(r.message for r in responses if not r.success)
    for name, proc in processes.items():
        log = proc.log_path.read_text()
        assert "Traceback" not in log, (name, log[-3000:])
        problems = [line for line in log.splitlines() if "[WARN]" in line or "[ERROR]" in line]
        assert len(problems) <= MAX_LOG_LINES, (name, len(problems), problems[:20])


def test_fuzzed_messages_and_requests_stop_no_node_and_every_output_stays_finite(
    graph: tuple[dict, Listener],
) -> None:
    processes, listener = graph
    node = listener.node
    outputs = Outputs(listener)
    publishers = {
        "joint_states": node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data),
        "odom": node.create_publisher(Odometry, "/odom", qos_profile_sensor_data),
        "target_pose": node.create_publisher(PoseStamped, "/kinematics/target_pose", QoSProfile(depth=10)),
        "tf": node.create_publisher(TFMessage, "/tf", TF_QOS),
        "tf_static": node.create_publisher(TFMessage, "/tf_static", LATCHED_QOS),
        "pd": node.create_publisher(JointPDCommand, "/quad/leg_pd_controller/commands", QoSProfile(depth=10)),
        "effort": node.create_publisher(Float64MultiArray, "/quad/leg_effort_controller/commands",
                                        QoSProfile(depth=10)),
    }
    clients = {
        ComputeFK: node.create_client(ComputeFK, "/kinematics/compute_fk"),
        ComputeIK: node.create_client(ComputeIK, "/kinematics/compute_ik"),
        InverseDynamics: node.create_client(InverseDynamics, "/dynamics/inverse_dynamics"),
        GravityCompensation: node.create_client(GravityCompensation, "/dynamics/gravity_compensation"),
        MassMatrix: node.create_client(MassMatrix, "/dynamics/mass_matrix"),
    }
    for client in clients.values():
        assert client.wait_for_service(timeout_sec=60.0), f"{client.srv_name} not available"
    assert listener.spin_until(lambda: len(outputs.by_topic["/quad/joint_states"]) > 0, 60.0), (
        processes["control_node"].log_path.read_text())
    # every reader of each topic matched (a count above zero is not enough: /joint_states has four readers,
    # /tf this process's own), and this process's readers of the outputs checked after the fuzz matched
    # their nodes' writers: else the valid messages in the fuzz can go unanswered here
    assert listener.spin_until(lambda: _all_matched(node, publishers, outputs), 60.0), (
        {name: (p.get_subscription_count(), [i.node_name for i in node.get_subscriptions_info_by_topic(
            p.topic_name)]) for name, p in publishers.items()},
        {t: (s.get_publisher_count(), [i.node_name for i in node.get_publishers_info_by_topic(t)])
         for t, s in outputs.subscriptions.items()})

    fuzz = Fuzzer(FUZZ_SEED)
    rng = np.random.default_rng(FUZZ_SEED + 1)
    topics = {
        "joint_states": lambda: fuzz.joint_state(JOINTS, ARM7.lower_limit, ARM7.upper_limit),
        "odom": lambda: fuzz.odometry(["", "base_link"]),
        "target_pose": lambda: fuzz.pose_stamped(["", "base_link"], scale=0.3),
        "tf": lambda: fuzz.tf_message(LINKS),
        "tf_static": lambda: fuzz.tf_message(LINKS),
        "pd": lambda: fuzz.pd_command(PD_JOINTS),
        "effort": lambda: fuzz.multiarray(len(EFFORT_JOINTS)),
    }
    for k in range(MESSAGES_PER_TOPIC):
        for name, make in topics.items():
            publishers[name].publish(make())
        if k % 5 == 0:  # valid input in between, so the nodes also produce output during the fuzz
            publishers["joint_states"].publish(good_joint_state(good_q(rng), 1000 + k))
        listener.executor.spin_once(timeout_sec=0.002)

    answers: dict[type, list] = {srv: [] for srv in clients}
    for srv, make in fuzz_requests(fuzz).items():
        for _ in range(SERVICE_CALLS[srv]):
            answers[srv].append(call(listener, clients[srv], make()))
    listener.spin_for(0.5)  # the last outputs of the fuzz

    _check_alive_and_finite(processes, outputs, answers)
    assert len(outputs.tf) > 0
    assert len(outputs.by_topic["/dynamics/gravity_efforts"]) > 0

    # --- afterwards every node still does its job (second source: the core in this process) ---------
    q = good_q(rng)
    stamp = 5000
    good = good_joint_state(q, stamp)

    def tf_for(sec: int) -> dict | None:
        for msg in outputs.tf:
            by_child = {t.child_frame_id: t for t in msg.transforms}
            if "link1" in by_child and by_child["link1"].header.stamp.sec == sec:
                return by_child
        return None

    gravity = outputs.by_topic["/dynamics/gravity_efforts"]
    expected_g = ARM7.gravity_torques(q)

    def gravity_for_q() -> bool:
        return any(np.allclose(np.array(m.data), expected_g, rtol=0, atol=1e-12) for m in gravity)

    target = PoseStamped()
    T_target = ARM7.frame_placement(q, "ee_link")
    target.pose.position.x, target.pose.position.y, target.pose.position.z = T_target[:3, 3].tolist()
    target.pose.orientation.w = 1.0
    commands = outputs.by_topic["/kinematics/joint_commands"]
    commands_before = len(commands)
    states_before = len(outputs.by_topic["/quad/joint_states"])

    hold = pd_command(PD_JOINTS, [0.0] * 6, [0.0] * 6, [1.0] * 6, [10.0] * 6, [1.0] * 6)

    def step() -> bool:
        publishers["joint_states"].publish(good)
        publishers["target_pose"].publish(target)
        publishers["pd"].publish(hold)
        return (tf_for(stamp) is not None and gravity_for_q() and len(commands) > commands_before
                and len(outputs.by_topic["/quad/joint_states"]) > states_before + 5)

    assert listener.spin_until(step, 20.0), {
        "tf": tf_for(stamp) is not None, "gravity": gravity_for_q(), "commands": commands[commands_before:]
    }
    tf = tf_for(stamp)
    np.testing.assert_allclose(
        transform_to_matrix(tf["link1"].transform), ARM7.frame_placement(q, "link1"), rtol=0, atol=1e-12
    )
    command = np.array(commands[-1].data)
    assert np.all(np.isfinite(command))
    assert command.shape == (ARM7.nv,)
    assert np.all((ARM7.lower_limit <= command) & (command <= ARM7.upper_limit))
    assert outputs.non_finite() == []
    fk = call(listener, clients[ComputeFK], ComputeFK.Request(joint_state=good, frames=["ee_link"]))
    assert fk.success
    p = fk.poses[0].pose.position
    np.testing.assert_allclose([p.x, p.y, p.z], T_target[:3, 3], rtol=0, atol=1e-12)
    printer_log = processes["ee_pose_printer"].log_path
    printed = printer_log.read_text().count("p = [")
    assert wait_for(lambda: printer_log.read_text().count("p = [") > printed, 30.0), printer_log.read_text()
    assert [name for name, p in processes.items() if p.poll() is not None] == []
