"""kinematics node over DDS: compute_fk, compute_ik, streaming CLIK, bad requests.

The node runs as its own process on urdf/arm7.urdf; the test process calls its services. Second sources:
kinodyn's FK computed in this process, scipy's Rotation for orientation errors (angle of C* C^T), and the
distance from the target for the unreachable case.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from kinodyn_common.conversions import (
    matrix_to_pose,
    multiarray_to_array,
    pose_to_matrix,
    q_to_joint_state,
)
from rclpy.qos import QoSProfile
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from kinodyn import Model
from kinodyn_interfaces.srv import ComputeFK, ComputeIK
from test.conftest import REPO, ProcessSpawner  # pytest --import-mode=importlib names it so
from test.ros_listener import Listener

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from rclpy.client import Client


pytestmark = pytest.mark.system

Req = TypeVar("Req")  # a service request
Res = TypeVar("Res")  # its response

KINEMATICS = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros" / "kinematics"
ARM7 = REPO / "urdf" / "arm7.urdf"
MODEL = Model.from_urdf(str(ARM7))
STAMP = Time()  # the services ignore stamps


def joint_state(q: np.ndarray, names: Sequence[str] = MODEL.joint_names) -> JointState:
    return q_to_joint_state(names, q, STAMP)


def pose_errors(T_target: np.ndarray, T: np.ndarray) -> tuple[float, float]:
    """Position distance and rotation angle between two poses (scipy for the angle)."""
    angle = Rotation.from_matrix(T_target[:3, :3] @ T[:3, :3].T).magnitude()
    return float(np.linalg.norm(T_target[:3, 3] - T[:3, 3])), float(angle)


def call(listener: Listener, client: Client[Req, Res], request: Req, timeout: float = 15.0) -> Res:
    future = client.call_async(request)
    assert listener.spin_until(future.done, timeout), f"no response from {client.srv_name} in {timeout} s"
    return future.result()


class Services:
    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.fk = listener.node.create_client(ComputeFK, "/kinematics/compute_fk")
        self.ik = listener.node.create_client(ComputeIK, "/kinematics/compute_ik")
        for client in (self.fk, self.ik):
            # the node's start-up included (a loaded machine)
            assert client.wait_for_service(timeout_sec=120.0), f"{client.srv_name} not available"

    def compute_fk(self, state: JointState, frames: list[str]) -> ComputeFK.Response:
        return call(self.listener, self.fk, ComputeFK.Request(joint_state=state, frames=frames))

    def compute_ik(self, frame: str, T: np.ndarray, **fields: object) -> ComputeIK.Response:
        target = PoseStamped(pose=matrix_to_pose(T))
        target.header.frame_id = fields.pop("target_frame", "base_link")
        return call(self.listener, self.ik, ComputeIK.Request(frame=frame, target=target, **fields))


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    spawner = ProcessSpawner(tmp_path_factory.mktemp("kinematics"))
    listener = None
    try:
        spawner([str(KINEMATICS), "--ros-args", "-p", f"robot_description_file:={ARM7}"], "kinematics")
        listener = Listener("kinematics_test")
        yield Services(listener)
    finally:
        if listener is not None:
            listener.close()
        spawner.stop_all()


def test_fk_matches_in_process_frame_placement(services: Services) -> None:
    rng = np.random.default_rng(1)
    frames = ["ee_link", "link4", "base_link", "link7"]
    for _ in range(3):
        q = MODEL.random_configuration(rng)
        order = rng.permutation(MODEL.nv)  # names in another order: mapped by name
        state = joint_state(q[order], [MODEL.joint_names[i] for i in order])
        response = services.compute_fk(state, frames)
        assert response.success, response.message
        assert [p.header.frame_id for p in response.poses] == ["base_link"] * len(frames)
        for frame, pose in zip(frames, response.poses, strict=True):
            T = MODEL.frame_placement(q, frame)
            # a pose travels as a unit quaternion: rotation exact to rounding, translation exact
            np.testing.assert_allclose(pose_to_matrix(pose.pose), T, rtol=0, atol=1e-15)


def test_ik_of_a_reachable_pose_succeeds_and_its_fk_matches(services: Services) -> None:
    rng = np.random.default_rng(2)
    q_goal = MODEL.random_configuration(rng)
    T_goal = MODEL.frame_placement(q_goal, "ee_link")
    response = services.compute_ik("ee_link", T_goal, seed=joint_state(MODEL.neutral()))
    assert response.success, response.message
    assert list(response.solution.name) == list(MODEL.joint_names)
    q = np.array(response.solution.position)
    assert np.all(q >= MODEL.lower_limit)
    assert np.all(q <= MODEL.upper_limit)
    position_error, orientation_error = pose_errors(T_goal, MODEL.frame_placement(q, "ee_link"))
    assert position_error < 1e-6
    assert orientation_error < 1e-6
    assert response.position_error == pytest.approx(position_error, abs=1e-12)
    assert response.orientation_error == pytest.approx(orientation_error, abs=1e-12)
    # per-request tolerances: a looser request is answered, and still within what it asked for
    loose = services.compute_ik("ee_link", T_goal, position_tolerance=1e-2, orientation_tolerance=1e-2)
    assert loose.success, loose.message
    q_loose = np.array(loose.solution.position)
    position_error, orientation_error = pose_errors(T_goal, MODEL.frame_placement(q_loose, "ee_link"))
    assert position_error < 1e-2
    assert orientation_error < 1e-2


def test_unreachable_target_returns_the_closest_solution_and_its_error(services: Services) -> None:
    T_goal = np.eye(4)
    T_goal[:3, 3] = [2.0, 0.5, 1.0]  # the arm reaches about 1.2 m from its base
    seed = joint_state(np.clip(MODEL.neutral(), MODEL.lower_limit, MODEL.upper_limit))
    response = services.compute_ik("ee_link", T_goal, seed=seed, timeout=2.0)  # call() gives up after 15 s
    assert not response.success
    assert "target not reached" in response.message
    assert "closest solution" in response.message
    q = np.array(response.solution.position)
    assert q.shape == (MODEL.nv,)
    assert np.all(q >= MODEL.lower_limit)
    assert np.all(q <= MODEL.upper_limit)
    position_error, orientation_error = pose_errors(T_goal, MODEL.frame_placement(q, "ee_link"))
    assert response.position_error == pytest.approx(position_error, abs=1e-12)
    assert response.orientation_error == pytest.approx(orientation_error, abs=1e-12)
    assert position_error > 1e-6
    # closest: IK minimizes |Δr|² + |Δφ|²; no configuration of a random search in the limits does better
    rng = np.random.default_rng(7)
    searched = min(
        sum(
            e * e
            for e in pose_errors(T_goal, MODEL.frame_placement(MODEL.random_configuration(rng), "ee_link"))
        )
        for _ in range(2000)
    )
    assert position_error**2 + orientation_error**2 <= searched


def _bad_fk_requests() -> list[tuple[str, ComputeFK.Request, str]]:
    q = MODEL.neutral()
    nan = q.copy()
    nan[2] = math.nan
    renamed = list(MODEL.joint_names)
    renamed[0] = "shoulder"
    return [
        (
            "unknown frame",
            ComputeFK.Request(joint_state=joint_state(q), frames=["ee_lnk"]),
            "unknown frame 'ee_lnk'",
        ),
        ("no frames", ComputeFK.Request(joint_state=joint_state(q), frames=[]), "frames is empty"),
        (
            "unknown joint",
            ComputeFK.Request(joint_state=joint_state(q, renamed), frames=["ee_link"]),
            "unknown joints 'shoulder'",
        ),
        (
            "missing joint",
            ComputeFK.Request(joint_state=joint_state(q[:6], MODEL.joint_names[:6]), frames=["ee_link"]),
            "lacks joints 'joint7'",
        ),
        (
            "NaN",
            ComputeFK.Request(joint_state=joint_state(nan), frames=["ee_link"]),
            "non-finite positions for 'joint3'",
        ),
    ]


def test_bad_fk_requests_get_a_clear_message_and_the_next_request_is_served(services: Services) -> None:
    q = MODEL.random_configuration(3)
    for case, request, expected in _bad_fk_requests():
        response = call(services.listener, services.fk, request)
        assert not response.success, case
        assert response.message.startswith("compute_fk: "), (case, response.message)
        assert expected in response.message, (case, response.message)
        assert list(response.poses) == []
        good = services.compute_fk(joint_state(q), ["ee_link"])
        assert good.success, (case, good.message)
        np.testing.assert_allclose(
            pose_to_matrix(good.poses[0].pose), MODEL.frame_placement(q, "ee_link"), atol=1e-15
        )


def far_away(T: np.ndarray, x: float) -> np.ndarray:
    """``T`` moved to ``x`` along the root's x axis."""
    T = T.copy()
    T[0, 3] = x
    return T


def test_bad_ik_requests_get_a_clear_message_and_the_next_request_is_served(services: Services) -> None:
    q_goal = MODEL.random_configuration(4)
    T_goal = MODEL.frame_placement(q_goal, "ee_link")
    T_nan = T_goal.copy()
    T_nan[0, 3] = math.nan
    nan_seed = MODEL.neutral()
    nan_seed[6] = math.nan
    cases = [
        ("unknown frame", dict(frame="tool0", T=T_goal), "unknown frame 'tool0'"),
        ("NaN target", dict(frame="ee_link", T=T_nan), "non-finite translation or rotation"),
        (
            "target frame",
            dict(frame="ee_link", T=T_goal, target_frame="world"),
            "target pose is in frame 'world'",
        ),
        (
            "unknown seed joint",
            dict(frame="ee_link", T=T_goal, seed=joint_state(np.zeros(1), ["elbow"])),
            "unknown joints 'elbow'",
        ),
        (
            "NaN seed",
            dict(frame="ee_link", T=T_goal, seed=joint_state(nan_seed)),
            "non-finite positions for 'joint7'",
        ),
        (
            "negative tolerance",
            dict(frame="ee_link", T=T_goal, position_tolerance=-1.0),
            "position_tolerance must be",
        ),
        ("NaN timeout", dict(frame="ee_link", T=T_goal, timeout=math.nan), "timeout must be positive"),
        # finite but absurd targets are refused like NaN; the reach of ee_link on arm7 is 1.31926 m
        ("target at x = 1e300", dict(frame="ee_link", T=far_away(T_goal, 1e300)), "exceeds 1e+09 m"),
        (
            "target beyond reach",
            dict(frame="ee_link", T=far_away(T_goal, 2.5)),
            "beyond the reach of 'ee_link' (1.31926 m from the URDF) plus ik_target_margin (1 m)",
        ),
        (
            "seed at 1e300",
            dict(frame="ee_link", T=T_goal, seed=joint_state(np.where(np.arange(7) == 0, 1e300, q_goal))),
            "joint1 = 1e+300 not in",
        ),
    ]
    for case, fields, expected in cases:
        response = services.compute_ik(fields.pop("frame"), fields.pop("T"), **fields)
        assert not response.success, case
        assert response.message.startswith("compute_ik: "), (case, response.message)
        assert expected in response.message, (case, response.message)
        assert list(response.solution.name) == []
        assert list(response.solution.position) == []
        good = services.compute_ik("ee_link", T_goal)
        assert good.success, (case, good.message)
        q = np.array(good.solution.position)
        position_error, orientation_error = pose_errors(T_goal, MODEL.frame_placement(q, "ee_link"))
        assert position_error < 1e-6
        assert orientation_error < 1e-6


def test_streaming_clik_drives_the_frame_to_the_target_pose(spawn: ProcessSpawner) -> None:
    proc = spawn(
        [
            str(KINEMATICS),
            "--ros-args",
            "-r",
            "__node:=clik",
            "-p",
            f"robot_description_file:={ARM7}",
            "-p",
            "ik_frame:=ee_link",
            "-p",
            "rate_hz:=50.0",
        ],
        "clik",
    )
    listener = Listener("clik_test")
    try:
        q_start = MODEL.random_configuration(5)
        q_goal = 0.7 * q_start + 0.3 * MODEL.random_configuration(6)  # within the (convex) joint limits
        T_goal = MODEL.frame_placement(q_goal, "ee_link")
        state = {"q": q_start.copy(), "commands": 0}
        joint_states = listener.node.create_publisher(JointState, "joint_states", QoSProfile(depth=10))

        def on_command(msg: Float64MultiArray) -> None:
            # the "robot": a perfect position controller that reaches each command at once
            command = multiarray_to_array(msg)
            assert command.shape == (MODEL.nv,)
            state["q"] = command
            state["commands"] += 1

        # the robot's joint_states loop, at 100 Hz, twice the CLIK rate
        listener.node.create_timer(0.01, lambda: joint_states.publish(joint_state(state["q"])))
        listener.node.create_subscription(
            Float64MultiArray, "/clik/joint_commands", on_command, QoSProfile(depth=10)
        )
        targets = listener.node.create_publisher(PoseStamped, "/clik/target_pose", QoSProfile(depth=10))
        assert listener.spin_until(
            lambda: joint_states.get_subscription_count() > 0 and targets.get_subscription_count() > 0, 120
        ), proc.log_path.read_text()  # the node's start-up included
        listener.spin_for(0.3)
        assert state["commands"] == 0  # no target yet: nothing is commanded

        wrong = PoseStamped(pose=matrix_to_pose(T_goal))
        wrong.header.frame_id = "world"
        warning = "ignoring target pose: target pose is in frame 'world'"

        def wrong_target_refused() -> bool:  # sent until the node has it: then the goal cannot be lost
            targets.publish(wrong)
            return warning in proc.log_path.read_text()

        assert listener.spin_until(wrong_target_refused, 10), proc.log_path.read_text()
        # a target at x = 1e300 would drive CLIK to the joint limits: it is refused like NaN
        for x, refusal in ((1e300, "exceeds 1e+09 m"), (2.5, "beyond the reach of 'ee_link'")):
            absurd = PoseStamped(pose=matrix_to_pose(far_away(T_goal, x)))
            targets.publish(absurd)
            assert listener.spin_until(lambda r=refusal: r in proc.log_path.read_text(), 10), x
        listener.spin_for(0.3)
        assert state["commands"] == 0

        goal = PoseStamped(pose=matrix_to_pose(T_goal))
        goal.header.frame_id = "base_link"
        targets.publish(goal)

        def converged() -> bool:
            position_error, orientation_error = pose_errors(
                T_goal, MODEL.frame_placement(state["q"], "ee_link")
            )
            return position_error < 1e-6 and orientation_error < 1e-6

        start_error = pose_errors(T_goal, MODEL.frame_placement(q_start, "ee_link"))
        assert start_error[0] > 0.05
        assert listener.spin_until(converged, 15), (
            pose_errors(T_goal, MODEL.frame_placement(state["q"], "ee_link")),
            state["commands"],
        )
        assert state["commands"] > 10
        assert np.all(state["q"] >= MODEL.lower_limit)
        assert np.all(state["q"] <= MODEL.upper_limit)
    finally:
        listener.close()


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        (["ik_frame:=tool0"], "parameter ik_frame: unknown frame 'tool0'"),
        (["ik_frame:=ee_link", "clik_gain:=-1.0"], "parameter clik_gain must be a positive finite number"),
    ],
)
def test_bad_streaming_parameters_exit_with_one_error_line(
    spawn: ProcessSpawner, parameters: list[str], expected: str
) -> None:
    arguments = [arg for parameter in parameters for arg in ("-p", parameter)]
    proc = spawn(
        [str(KINEMATICS), "--ros-args", "-p", f"robot_description_file:={ARM7}", *arguments], "kinematics_bad"
    )
    assert proc.wait(timeout=120) == 1  # a Python node's start-up on a loaded machine included
    log = proc.log_path.read_text()
    errors = [line for line in log.splitlines() if "[ERROR]" in line]
    assert len(errors) == 1, log
    assert expected in errors[0], log
    assert "Traceback" not in log
