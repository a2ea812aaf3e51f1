"""kinematics and dynamics nodes on a floating base over DDS.

The nodes run as their own processes on urdf/quadruped.urdf with `floating_base:=true`; the test process
calls their services with a base pose (and twist, acceleration) and feeds their topics with nav_msgs/Odometry.
Second source: kinodyn.Model.from_urdf(..., floating_base=True) in this process, on the same q and v (answers
equal to 1e-12 relative), plus the identity ``M a = ID(q, 0, a) - g(q)`` between the services.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Accel, Point, Pose, PoseStamped, Quaternion, Twist, Vector3, WrenchStamped
from kinodyn.ik import solve_ik
from kinodyn.spatial import quat_to_matrix
from kinodyn_common.conversions import matrix_to_pose, multiarray_to_array, pose_to_matrix, q_to_joint_state
from kinodyn_common.floating_base import BASE_COORDINATE_NAMES
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from kinodyn import Model
from kinodyn_interfaces.srv import ComputeFK, ComputeIK, GravityCompensation, InverseDynamics, MassMatrix
from test.conftest import REPO, ProcessSpawner  # pytest --import-mode=importlib names it so
from test.ros_listener import Listener

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from numpy.typing import ArrayLike
    from rclpy.type_support import Srv


pytestmark = pytest.mark.system

LIB = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros"
QUADRUPED = REPO / "urdf" / "quadruped.urdf"
MODEL = Model.from_urdf(str(QUADRUPED), floating_base=True)
JOINTS = list(MODEL.joint_names)
COORDINATES = [*BASE_COORDINATE_NAMES, *JOINTS]
TOL = 1e-12


def joint_state(joints: np.ndarray, velocities: np.ndarray | None = None) -> JointState:
    return q_to_joint_state(JOINTS, joints, Time(), velocities)


def base_pose(q: np.ndarray) -> Pose:
    x, y, z, qx, qy, qz, qw = (float(c) for c in q[:7])
    return Pose(position=Point(x=x, y=y, z=z), orientation=Quaternion(x=qx, y=qy, z=qz, w=qw))


def six(values: Sequence[float]) -> dict[str, Vector3]:
    a = [float(c) for c in values]
    return dict(linear=Vector3(x=a[0], y=a[1], z=a[2]), angular=Vector3(x=a[3], y=a[4], z=a[5]))


def wrench(link: str, values: np.ndarray) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.frame_id = link
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in values)
    return msg


def odometry(q: np.ndarray, frame: str = "odom") -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = frame, "base_link"
    msg.pose.pose = base_pose(q)
    return msg


def configuration(rng: np.random.Generator) -> np.ndarray:
    """A random q: base anywhere within 1 m, any orientation, joints within their limits."""
    return MODEL.random_configuration(rng)


class Services:
    def __init__(self, listener: Listener, prefix: str, types: dict) -> None:
        self.listener = listener
        self.clients = {t: listener.node.create_client(t, f"/{prefix}/{name}") for t, name in types.items()}
        for client in self.clients.values():
            # three nodes' start-up included (a loaded machine)
            assert client.wait_for_service(timeout_sec=120.0), f"{client.srv_name} not available"

    def __call__(self, srv_type: type[Srv], **fields: object) -> Any:  # noqa: ANN401  (rclpy types no response per service type)
        future = self.clients[srv_type].call_async(srv_type.Request(**fields))
        assert self.listener.spin_until(future.done, 20.0), (
            f"no response from {self.clients[srv_type].srv_name}"
        )
        return future.result()


DYNAMICS_SERVICES = {
    InverseDynamics: "inverse_dynamics",
    GravityCompensation: "gravity_compensation",
    MassMatrix: "mass_matrix",
}


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    spawner = ProcessSpawner(tmp_path_factory.mktemp("floating_base"))
    listener = None
    common = ["-p", f"robot_description_file:={QUADRUPED}"]
    try:
        dynamics = spawner(
            [
                str(LIB / "dynamics"),
                "--ros-args",
                *common,
                "-p",
                "floating_base:=true",
                "-p",
                "publish_gravity:=true",
            ],
            "dynamics",
        )
        fixed = spawner(
            [str(LIB / "dynamics"), "--ros-args", "-r", "__node:=dynamics_fixed", *common], "dynamics_fixed"
        )
        kinematics = spawner(
            [
                str(LIB / "kinematics"),
                "--ros-args",
                *common,
                "-p",
                "floating_base:=true",
                "-p",
                "world_frame:=odom",
            ],
            "kinematics",
        )
        listener = Listener("floating_base_test")
        yield {
            "listener": listener,
            "dynamics": Services(listener, "dynamics", DYNAMICS_SERVICES),
            "fixed": Services(listener, "dynamics_fixed", DYNAMICS_SERVICES),
            "kinematics": Services(
                listener, "kinematics", {ComputeFK: "compute_fk", ComputeIK: "compute_ik"}
            ),
            "dynamics_proc": dynamics,
            "processes": (dynamics, fixed, kinematics),
        }
    finally:
        if listener is not None:
            listener.close()
        spawner.stop_all()


def assert_close(actual: ArrayLike, expected: ArrayLike) -> None:
    expected = np.asarray(expected)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=TOL * max(1.0, float(np.max(np.abs(expected)))))


def test_fk_poses_are_in_the_world_frame_and_equal_the_core(nodes: dict) -> None:
    rng = np.random.default_rng(1)
    frames = ["base_link", "LF_FOOT", "RH_SHANK", "imu_link"]
    for _ in range(3):
        q = configuration(rng)
        response = nodes["kinematics"](
            ComputeFK, joint_state=joint_state(q[7:]), frames=frames, base_pose=base_pose(q)
        )
        assert response.success, response.message
        assert [p.header.frame_id for p in response.poses] == ["odom"] * len(frames)
        for frame, pose in zip(frames, response.poses, strict=True):
            assert_close(pose_to_matrix(pose.pose), MODEL.frame_placement(q, frame))


def test_ik_moves_the_joints_with_the_base_held(nodes: dict) -> None:
    rng = np.random.default_rng(2)
    q_goal = configuration(rng)
    T_goal = MODEL.frame_placement(q_goal, "LF_FOOT")  # a pose the leg reaches from this base pose
    target = PoseStamped(pose=matrix_to_pose(T_goal))
    target.header.frame_id = "odom"
    response = nodes["kinematics"](ComputeIK, frame="LF_FOOT", target=target, base_pose=base_pose(q_goal))
    assert response.success, response.message
    assert list(response.solution.name) == JOINTS
    q = np.concatenate([q_goal[:7], response.solution.position])
    T = MODEL.frame_placement(q, "LF_FOOT")
    assert np.linalg.norm(T[:3, 3] - T_goal[:3, 3]) < 1e-6
    np.testing.assert_allclose(T[:3, :3], T_goal[:3, :3], rtol=0, atol=1e-6)
    # the same solve in this process (same seed: mid-range joints, the base pose; same restarts stream)
    lower, upper = MODEL.lower_limit[7:], MODEL.upper_limit[7:]
    seed = np.concatenate([q_goal[:7], 0.5 * (lower + upper)])
    core = solve_ik(MODEL, "LF_FOOT", T_goal, q_seed=seed, active_joints=JOINTS, timeout=1.0)
    assert core.success
    assert response.position_error == pytest.approx(core.position_error, abs=1e-9)


def test_inverse_dynamics_returns_the_base_wrench_and_joint_efforts_of_the_core(nodes: dict) -> None:
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, a = configuration(rng), rng.normal(size=MODEL.nv), rng.normal(size=MODEL.nv)
        F = rng.normal(size=6) * 10.0
        response = nodes["dynamics"](
            InverseDynamics,
            joint_state=joint_state(q[7:], v[6:]),
            acceleration=a[6:].tolist(),
            external_wrenches=[wrench("LF_FOOT", F)],
            base_pose=base_pose(q),
            base_twist=Twist(**six(v[:6])),
            base_acceleration=Accel(**six(a[:6])),
        )
        assert response.success, response.message
        assert list(response.name) == COORDINATES
        assert_close(response.effort, MODEL.rnea(q, v, a, {"LF_FOOT": F}))


def test_gravity_and_mass_matrix_equal_the_core_and_each_other(nodes: dict) -> None:
    rng = np.random.default_rng(4)
    q, a = configuration(rng), rng.normal(size=MODEL.nv)
    services = nodes["dynamics"]
    gravity = services(GravityCompensation, joint_state=joint_state(q[7:]), base_pose=base_pose(q))
    mass = services(MassMatrix, joint_state=joint_state(q[7:]), base_pose=base_pose(q))
    inverse = services(
        InverseDynamics,
        joint_state=joint_state(q[7:]),
        acceleration=a[6:].tolist(),
        base_pose=base_pose(q),
        base_acceleration=Accel(**six(a[:6])),
    )
    assert gravity.success, (gravity.message, mass.message)
    assert mass.success, (gravity.message, mass.message)
    assert inverse.success, (gravity.message, mass.message)
    assert list(gravity.name) == COORDINATES
    assert list(mass.name) == COORDINATES
    g = np.array(gravity.effort)
    assert_close(g, MODEL.gravity_torques(q))
    # second source for the base entries: the weight, pointing up, and its moment about the base origin, in
    # base axes, from the total mass and the centre of mass
    weight = np.array([0.0, 0.0, float(np.sum(MODEL.mass)) * 9.81])
    C = quat_to_matrix(q[3:7])
    assert_close(g[:3], C.T @ weight)
    assert_close(g[3:6], C.T @ np.cross(MODEL.com(q) - q[:3], weight))
    M = multiarray_to_array(mass.mass_matrix)
    assert M.shape == (MODEL.nv, MODEL.nv)
    assert_close(M, MODEL.mass_matrix(q))
    assert_close(M @ a, np.array(inverse.effort) - g)


def test_gravity_efforts_use_the_base_orientation_from_odometry(nodes: dict) -> None:
    listener, proc = nodes["listener"], nodes["dynamics_proc"]
    received: list[Float64MultiArray] = []
    listener.node.create_subscription(Float64MultiArray, "/dynamics/gravity_efforts", received.append, 10)
    joint_states = listener.node.create_publisher(JointState, "joint_states", QoSProfile(depth=10))
    odometries = listener.node.create_publisher(Odometry, "odometry", QoSProfile(depth=10))
    rng = np.random.default_rng(5)
    q = configuration(rng)

    bad = odometry(q)
    bad.pose.pose.orientation.w = 0.0  # a zero quaternion never becomes the base pose

    def refused() -> bool:  # no usable odometry yet: nothing is published, one warning each says why
        odometries.publish(bad)
        joint_states.publish(joint_state(q[7:]))
        log = proc.log_path.read_text()
        return "ignoring joint_states message: no usable odometry yet" in log and (
            "ignoring odometry message: Odometry pose: Pose rotation is not a unit quaternion" in log
        )

    assert listener.spin_until(refused, 15), proc.log_path.read_text()
    assert received == []
    for k in range(3):
        q = configuration(rng)
        expected = MODEL.gravity_torques(q)[6:]
        atol = TOL * float(np.max(np.abs(expected)))

        def answered(q: np.ndarray = q, expected: np.ndarray = expected, atol: float = atol) -> bool:
            odometries.publish(odometry(q))
            joint_states.publish(joint_state(q[7:]))
            return any(np.allclose(multiarray_to_array(m), expected, rtol=0, atol=atol) for m in received)

        assert listener.spin_until(answered, 15), (k, proc.log_path.read_text())
    for msg in received:
        assert [(d.label, d.size) for d in msg.layout.dim] == [("joints", len(JOINTS))]
        assert np.all(np.isfinite(multiarray_to_array(msg)))


def _bad_requests() -> list[tuple[str, str, type, dict, str]]:
    q = MODEL.neutral()
    reachable = PoseStamped(pose=matrix_to_pose(MODEL.frame_placement(q, "LF_FOOT")))
    zero = base_pose(q)
    zero.orientation.w = 0.0
    long = base_pose(q)
    long.orientation.w = 2.0
    nan = base_pose(q)
    nan.position.y = math.nan
    return [
        (
            "zero quaternion",
            "kinematics",
            ComputeFK,
            dict(frames=["LF_FOOT"], base_pose=zero),
            "compute_fk: base_pose: Pose rotation is not a unit quaternion",
        ),
        (
            "NaN base position",
            "kinematics",
            ComputeIK,
            dict(frame="LF_FOOT", target=reachable, base_pose=nan),
            "compute_ik: base_pose: Pose has a non-finite",
        ),
        (
            "non-unit quaternion",
            "dynamics",
            GravityCompensation,
            dict(base_pose=long),
            "gravity_compensation: base_pose: Pose rotation is not a unit quaternion",
        ),
        (
            "NaN base twist",
            "dynamics",
            InverseDynamics,
            dict(base_twist=Twist(**six([0, 0, 0, math.nan, 0, 0]))),
            "inverse_dynamics: base_twist is not finite",
        ),
        (
            "inf base acceleration",
            "dynamics",
            InverseDynamics,
            dict(base_acceleration=Accel(**six([math.inf, 0, 0, 0, 0, 0]))),
            "inverse_dynamics: base_acceleration is not finite",
        ),
        (
            "base pose on a fixed base",
            "fixed",
            MassMatrix,
            dict(base_pose=base_pose(MODEL.random_configuration(0))),
            "mass_matrix: base_pose is set but the model is fixed-base (parameter floating_base is false)",
        ),
        (
            "base twist on a fixed base",
            "fixed",
            InverseDynamics,
            dict(base_twist=Twist(**six([0.1, 0, 0, 0, 0, 0]))),
            "inverse_dynamics: base_twist is set but the model is fixed-base",
        ),
    ]


BAD_REQUESTS = _bad_requests()


@pytest.mark.parametrize(
    ("case", "node", "srv_type", "fields", "expected"), BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS]
)
def test_bad_base_inputs_are_refused_with_a_reason(
    nodes: dict, case: str, node: str, srv_type: type[Srv], fields: dict[str, object], expected: str
) -> None:
    joints = MODEL.neutral()[7:]  # within the limits; the IK case's target is this configuration's foot pose
    response = nodes[node](srv_type, joint_state=joint_state(joints), **fields)
    assert not response.success, case
    assert response.message.startswith(expected), response.message
    good = nodes[node](
        srv_type,
        joint_state=joint_state(joints),
        **{k: v for k, v in fields.items() if not k.startswith("base_")},
    )
    assert good.success, good.message  # the node goes on; the default base input is accepted everywhere


def test_streaming_clik_on_a_floating_base_reaches_the_target_in_the_world(spawn: ProcessSpawner) -> None:
    proc = spawn(
        [
            str(LIB / "kinematics"),
            "--ros-args",
            "-r",
            "__node:=clik_floating",
            "-p",
            f"robot_description_file:={QUADRUPED}",
            "-p",
            "floating_base:=true",
            "-p",
            "ik_frame:=LF_FOOT",
        ],
        "clik_floating",
    )
    listener = Listener("clik_floating_test")
    try:
        rng = np.random.default_rng(6)
        q_goal = configuration(rng)
        q_start = q_goal.copy()
        q_start[7:10] += [0.05, -0.1, 0.1]  # the LF leg away from the goal; the others where they are
        q_start[7:] = np.clip(q_start[7:], MODEL.lower_limit[7:], MODEL.upper_limit[7:])
        T_goal = MODEL.frame_placement(q_goal, "LF_FOOT")
        state = {"joints": q_start[7:].copy(), "commands": 0}
        joint_states = listener.node.create_publisher(JointState, "joint_states", QoSProfile(depth=10))
        odometries = listener.node.create_publisher(Odometry, "odometry", QoSProfile(depth=10))

        def on_command(msg: Float64MultiArray) -> None:  # a perfect position controller
            command = multiarray_to_array(msg)
            assert command.shape == (len(JOINTS),)
            state["joints"] = command
            state["commands"] += 1

        def robot() -> None:
            odometries.publish(odometry(q_goal))  # the base stands still at the goal's base pose
            joint_states.publish(joint_state(state["joints"]))

        listener.node.create_timer(0.01, robot)
        listener.node.create_subscription(
            Float64MultiArray, "/clik_floating/joint_commands", on_command, QoSProfile(depth=10)
        )
        targets = listener.node.create_publisher(
            PoseStamped, "/clik_floating/target_pose", QoSProfile(depth=10)
        )
        goal = PoseStamped(pose=matrix_to_pose(T_goal))
        goal.header.frame_id = "odom"

        def placed() -> np.ndarray:
            return MODEL.frame_placement(np.concatenate([q_goal[:7], state["joints"]]), "LF_FOOT")

        assert np.linalg.norm(placed()[:3, 3] - T_goal[:3, 3]) > 0.01

        def converged() -> bool:
            targets.publish(goal)  # until the node has it (both sides matched)
            T = placed()
            return bool(
                np.linalg.norm(T[:3, 3] - T_goal[:3, 3]) < 1e-6
                and np.max(np.abs(T[:3, :3] - T_goal[:3, :3])) < 1e-6
            )

        # the node's start-up included (a loaded machine)
        assert listener.spin_until(converged, 120), (state, proc.log_path.read_text())
        assert state["commands"] > 10
        np.testing.assert_allclose(state["joints"][3:], q_goal[10:], rtol=0, atol=1e-12)  # other legs held
    finally:
        listener.close()
