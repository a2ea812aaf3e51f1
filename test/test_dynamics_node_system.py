"""dynamics node over DDS: inverse dynamics, gravity, mass matrix, bad requests.

The node runs as its own process on urdf/arm7.urdf; the test process calls its services. Second sources: the
same kinodyn functions in this process, and identities between the services: an external wrench F on a link
changes the efforts by ``-J^T F`` (J: the link's Jacobian in its own frame, finite-difference checked in the
core), ``g(q) = ID(q, 0, 0)``, ``M(q) a = ID(q, 0, a) - g(q)`` and M symmetric positive definite.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from kinodyn_common.conversions import multiarray_to_array, q_to_joint_state
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from kinodyn import Model
from kinodyn_interfaces.srv import GravityCompensation, InverseDynamics, MassMatrix
from test.conftest import REPO, ProcessSpawner  # pytest --import-mode=importlib names it so
from test.ros_listener import Listener

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from rclpy.client import Client
    from rclpy.type_support import Srv

pytestmark = pytest.mark.system

Req = TypeVar("Req")  # a service request
Res = TypeVar("Res")  # its response

DYNAMICS = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros" / "dynamics"
ARM7 = REPO / "urdf" / "arm7.urdf"
MODEL = Model.from_urdf(str(ARM7))
NAMES = list(MODEL.joint_names)
TOL = 1e-12  # identities between different algorithms (RNEA, CRBA, Jacobian), at rounding level


def joint_state(q: np.ndarray, v: np.ndarray | None = None, names: Sequence[str] = NAMES) -> JointState:
    return q_to_joint_state(names, q, Time(), v)


def wrench(link: str, values: np.ndarray) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.frame_id = link
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in values)
    return msg


def call(listener: Listener, client: Client[Req, Res], request: Req, timeout: float = 15.0) -> Res:
    future = client.call_async(request)
    assert listener.spin_until(future.done, timeout), f"no response from {client.srv_name} in {timeout} s"
    return future.result()


class Services:
    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.clients = {
            InverseDynamics: listener.node.create_client(InverseDynamics, "/dynamics/inverse_dynamics"),
            GravityCompensation: listener.node.create_client(
                GravityCompensation, "/dynamics/gravity_compensation"
            ),
            MassMatrix: listener.node.create_client(MassMatrix, "/dynamics/mass_matrix"),
        }
        for client in self.clients.values():
            # the node's start-up included (a loaded machine)
            assert client.wait_for_service(timeout_sec=120.0), f"{client.srv_name} not available"

    def __call__(self, srv_type: type[Srv], **fields: object) -> Any:  # noqa: ANN401  (rclpy types no response per service type)
        return call(self.listener, self.clients[srv_type], srv_type.Request(**fields))


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Services, ProcessSpawner]]:
    spawner = ProcessSpawner(tmp_path_factory.mktemp("dynamics"))
    listener = None
    try:
        proc = spawner(
            [
                str(DYNAMICS),
                "--ros-args",
                "-p",
                f"robot_description_file:={ARM7}",
                "-p",
                "publish_gravity:=true",
            ],
            "dynamics",
        )
        listener = Listener("dynamics_test")
        yield Services(listener), proc
    finally:
        if listener is not None:
            listener.close()
        spawner.stop_all()


@pytest.fixture(scope="module")
def services(node: tuple[Services, ProcessSpawner]) -> Services:
    return node[0]


def test_inverse_dynamics_with_an_external_wrench_equals_rnea(services: Services) -> None:
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v, a = MODEL.random_configuration(rng), rng.normal(size=MODEL.nv), rng.normal(size=MODEL.nv)
        F5, F7 = rng.normal(size=6), rng.normal(size=6)
        order = rng.permutation(MODEL.nv)  # another name order: mapped by name, answered in model order
        names = [NAMES[i] for i in order]
        response = services(
            InverseDynamics,
            joint_state=joint_state(q[order], v[order], names),
            acceleration=a[order].tolist(),
            external_wrenches=[wrench("link5", F5), wrench("ee_link", F7)],
        )
        assert response.success, response.message
        assert list(response.name) == NAMES
        tau = np.array(response.effort)
        np.testing.assert_array_equal(tau, MODEL.rnea(q, v, a, {"link5": F5, "ee_link": F7}))
        # the wrenches act through -J^T F, J in each link's own frame (second source: the Jacobians)
        free = MODEL.rnea(q, v, a)
        J5, J7 = (MODEL.frame_jacobian(q, link, "local") for link in ("link5", "ee_link"))
        np.testing.assert_allclose(tau, free - J5.T @ F5 - J7.T @ F7, rtol=0, atol=TOL * np.max(np.abs(free)))


def test_inverse_dynamics_without_velocity_and_acceleration_is_gravity(services: Services) -> None:
    q = MODEL.random_configuration(2)
    id_response = services(InverseDynamics, joint_state=joint_state(q))
    gravity = services(GravityCompensation, joint_state=joint_state(q))
    assert id_response.success, (id_response.message, gravity.message)
    assert gravity.success, (id_response.message, gravity.message)
    assert list(gravity.name) == NAMES
    np.testing.assert_array_equal(gravity.effort, MODEL.gravity_torques(q))
    np.testing.assert_allclose(id_response.effort, gravity.effort, rtol=0, atol=1e-12)
    assert np.max(np.abs(gravity.effort)) > 1.0  # the arm is not in a gravity-free pose: a real check


def test_mass_matrix_equals_crba_and_is_consistent_with_inverse_dynamics(services: Services) -> None:
    rng = np.random.default_rng(3)
    q, a = MODEL.random_configuration(rng), rng.normal(size=MODEL.nv)
    response = services(MassMatrix, joint_state=joint_state(q))
    assert response.success, response.message
    assert list(response.name) == NAMES
    dims = [(d.label, d.size, d.stride) for d in response.mass_matrix.layout.dim]
    assert dims == [("rows", 7, 49), ("columns", 7, 7)]
    M = multiarray_to_array(response.mass_matrix)
    np.testing.assert_array_equal(M, MODEL.mass_matrix(q))
    np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-15)
    assert np.all(np.linalg.eigvalsh(M) > 0.0)
    id_response = services(InverseDynamics, joint_state=joint_state(q), acceleration=a.tolist())
    g = MODEL.gravity_torques(q)
    np.testing.assert_allclose(M @ a, np.array(id_response.effort) - g, rtol=0, atol=TOL * np.max(np.abs(g)))


def test_gravity_efforts_are_published_for_each_good_joint_state(
    node: tuple[Services, ProcessSpawner],
) -> None:
    services, proc = node
    listener = services.listener
    received: list[Float64MultiArray] = []
    listener.node.create_subscription(Float64MultiArray, "/dynamics/gravity_efforts", received.append, 10)
    publisher = listener.node.create_publisher(JointState, "joint_states", QoSProfile(depth=10))
    configurations = [MODEL.random_configuration(k) for k in (10, 11, 12)]
    warm_up = MODEL.random_configuration(9)

    def answered() -> bool:  # sent until the node answers: then both sides are matched and nothing is lost
        publisher.publish(joint_state(warm_up))
        return bool(received)

    def answers() -> list[np.ndarray]:
        """What the node published, but for the answers to the warm-up messages (some arrive late)."""
        g_warm_up = MODEL.gravity_torques(warm_up)
        return [g for g in map(multiarray_to_array, received) if not np.array_equal(g, g_warm_up)]

    assert listener.spin_until(answered, 60), proc.log_path.read_text()  # discovery of both new endpoints
    for q in configurations:
        count = len(answers())
        publisher.publish(joint_state(q))
        assert listener.spin_until(lambda count=count: len(answers()) > count, 10)
        bad = joint_state(q)
        bad.position[0] = math.nan
        publisher.publish(bad)  # ignored with a warning; the next good message is answered
    assert all([(d.label, d.size) for d in msg.layout.dim] == [("joints", 7)] for msg in received)
    assert len(answers()) == 3  # one per good message, none for the bad ones
    for g, q in zip(answers(), configurations, strict=True):
        np.testing.assert_array_equal(g, MODEL.gravity_torques(q))
    log = proc.log_path.read_text()
    assert (
        log.count("ignoring joint_states message: JointState has non-finite positions for 'joint1'") == 1
    ), log


def _bad_requests() -> list[tuple[str, type, dict, str]]:
    q = MODEL.neutral()
    nan_q = q.copy()
    nan_q[3] = math.nan
    nan_v = np.zeros(MODEL.nv)
    nan_v[1] = math.inf
    renamed = list(NAMES)
    renamed[6] = "wrist"
    return [
        (
            "unknown joint",
            InverseDynamics,
            dict(joint_state=joint_state(q, names=renamed)),
            "unknown joints 'wrist'",
        ),
        (
            "missing joint",
            GravityCompensation,
            dict(joint_state=joint_state(q[:6], names=NAMES[:6])),
            "lacks joints",
        ),
        (
            "NaN position",
            MassMatrix,
            dict(joint_state=joint_state(nan_q)),
            "non-finite positions for 'joint4'",
        ),
        (
            "inf velocity",
            InverseDynamics,
            dict(joint_state=joint_state(q, nan_v)),
            "non-finite velocity for 'joint2'",
        ),
        (
            "acceleration length",
            InverseDynamics,
            dict(joint_state=joint_state(q), acceleration=[1.0, 2.0]),
            "2 acceleration values for 7 joint names",
        ),
        (
            "wrench on unknown link",
            InverseDynamics,
            dict(joint_state=joint_state(q), external_wrenches=[wrench("link9", np.ones(6))]),
            "external wrench on an unknown link: unknown frame 'link9'",
        ),
        (
            "NaN wrench",
            InverseDynamics,
            dict(joint_state=joint_state(q), external_wrenches=[wrench("link3", [0, 0, math.nan, 0, 0, 0])]),
            "wrench 0 on 'link3' is not finite",
        ),
        # finite but absurd: a velocity of 1e200 would give NaN efforts; refused like NaN
        (
            "velocity 1e200",
            InverseDynamics,
            dict(joint_state=joint_state(q, np.full(7, 1e200))),
            "velocity 1e+200 exceeds joint_velocity_bound = 1000",
        ),
        (
            "position 1e300",
            GravityCompensation,
            dict(joint_state=joint_state(np.where(np.arange(7) == 2, 1e300, q))),
            "joint3 = 1e+300 not in [-2.9973, 2.9973]",
        ),
        (
            "acceleration 1e300",
            InverseDynamics,
            dict(joint_state=joint_state(q), acceleration=[1e300] * 7),
            "acceleration 1e+300 exceeds joint_acceleration_bound = 100000",
        ),
        (
            "wrench 1e300",
            InverseDynamics,
            dict(joint_state=joint_state(q), external_wrenches=[wrench("link3", [0, 0, 1e300, 0, 0, 0])]),
            "external wrench on 'link3' 1e+300 exceeds wrench_bound = 1e+06",
        ),
    ]


BAD_REQUESTS = _bad_requests()


@pytest.mark.parametrize(
    ("case", "srv_type", "fields", "expected"), BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS]
)
def test_bad_requests_get_a_clear_message_and_the_next_request_is_served(
    services: Services, case: str, srv_type: type[Srv], fields: dict, expected: str
) -> None:
    response = services(srv_type, **fields)
    assert not response.success, case
    service = {InverseDynamics: "inverse_dynamics", GravityCompensation: "gravity_compensation"}.get(
        srv_type, "mass_matrix"
    )
    assert response.message.startswith(f"{service}: "), response.message
    assert expected in response.message, response.message
    assert list(response.name) == []
    q = MODEL.random_configuration(4)
    good = services(srv_type, joint_state=joint_state(q))
    assert good.success, good.message
    assert list(good.name) == NAMES
