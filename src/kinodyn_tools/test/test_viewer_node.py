"""The viewer node in-process (no other process): its inputs turned into a scene, bad input refused with one
warning while the node goes on, and its configuration errors. Second source: hand-built messages whose scene
is known, kinodyn's CoM."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, PoseArray, PoseStamped, Vector3
from kinodyn_common.conversions import transform_stamped
from kinodyn_common.tf_tree import TfTree
from kinodyn_control.testing import in_process_node
from kinodyn_tools.viewer.markers import scene_markers
from kinodyn_tools.viewer.node import Viewer, check_host
from nav_msgs.msg import Path as NavPath
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker

from kinodyn_interfaces.msg import ContactStates
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kinodyn_common.polled import PolledSubscriptions

URDF = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"


class Queued:
    """Stands in for the viewer's polled subscriptions (kinodyn_common.polled, tested with DDS in
    kinodyn_common's test_polled): what a test feeds is what an update takes."""

    def __init__(self) -> None:
        self.messages: dict[int, list[object]] = {}

    def newest(self, subscription: object) -> object | None:
        queued = self.messages.pop(id(subscription), [])
        return queued[-1] if queued else None

    def all(self, subscription: object) -> list[object]:
        return self.messages.pop(id(subscription), [])


@pytest.fixture
def viewer() -> Iterator[Viewer]:
    with in_process_node(Viewer, {"robot_description_file": URDF, "port": 0}) as node:
        polled = node._polled  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
        node._polled = cast("PolledSubscriptions", Queued())  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
        try:
            yield node
        finally:
            node._polled = polled  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)


def feed(viewer: Viewer, what: str, message: object) -> None:
    """``message`` (bytes of input ``what``; ``what`` "/tf": a TFMessage) for the viewer's next update."""
    subscription = viewer._tf_input if what == "/tf" else viewer._inputs[what]  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    cast("Queued", viewer._polled).messages.setdefault(id(subscription), []).append(message)  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)


def contacts(frame: str, points: list[list[float]], forces: list[list[float]], touching: list[bool]) -> bytes:
    msg = ContactStates(names=[f"foot{i}" for i in range(len(touching))], in_contact=touching)
    msg.header.frame_id = frame
    msg.points = [Point(x=x, y=y, z=z) for x, y, z in points]
    msg.forces = [Vector3(x=x, y=y, z=z) for x, y, z in forces]
    return serialize_message(msg)


def test_inputs_become_the_scene_and_bad_ones_are_dropped_with_a_reason(
    viewer: Viewer, caplog: pytest.LogCaptureFixture,
) -> None:
    tree = TfTree.from_urdf(URDF)
    T_base = np.eye(4)
    T_base[:3, 3] = [1.0, 2.0, 0.5]
    stamp = Time(sec=1)
    for transforms, static in (
        ([*tree.static_transforms(), ("world", "odom", np.eye(4))], True),  # odom placed by /tf
        (tree.moving_transforms(dict.fromkeys(tree.movable_joint_names, 0.0)), False),
        ([("odom", "base_link", T_base)], False),
    ):
        msg = TFMessage(transforms=[transform_stamped(p, c, T, stamp) for p, c, T in transforms])
        if static:
            viewer._add_static_tf(msg)  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
        else:
            feed(viewer, "/tf", msg)
    feet = [[1.3, 2.2, 0.0], [0.7, 2.2, 0.0], [1.3, 1.8, 0.0], [0.7, 1.8, 0.0]]
    feed(viewer, "contacts", contacts("world", feet, [[0.0, 0.0, 50.0]] * 4, [True, True, True, False]))
    joints = JointState(name=list(viewer._model.joint_names), position=[0.0] * 12)  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    feed(viewer, "joint_states", serialize_message(joints))
    footholds = PoseArray(poses=[Pose()])
    footholds.header.frame_id = "odom"
    footholds.poses[0].position.x = 1.5
    footholds.poses[0].orientation.w = 1.0
    feed(viewer, "footholds", serialize_message(footholds))
    viewer._update()  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    links = viewer._link_poses()  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    scene = viewer._scene(links)  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    assert len(scene.bodies) == 17
    np.testing.assert_allclose(scene.focus, [1.0, 2.0, 0.5])
    assert len(scene.force_arrows) == 3
    assert len(scene.support_polygon) == 3
    np.testing.assert_allclose(scene.force_arrows[0][1] - scene.force_arrows[0][0], [0.0, 0.0, 0.15])
    q = np.concatenate([[1.0, 2.0, 0.5, 0.0, 0.0, 0.0, 1.0], np.zeros(12)])
    np.testing.assert_allclose(scene.com, viewer._model.com(q), atol=1e-12)  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    np.testing.assert_allclose(scene.footholds, [[1.5, 0.0, 0.0]])

    # bad input: each dropped with a reason, the previous overlay kept, the node goes on
    feed(viewer, "contacts", contacts("world", feet[:2], [[0.0, 0.0, 1.0]] * 4, [True] * 4))
    bad = PoseArray(header=footholds.header, poses=[Pose()])
    bad.poses[0].position.y = float("nan")
    feed(viewer, "footholds", serialize_message(bad))
    feed(viewer, "joint_states", serialize_message(JointState(name=["LF_HAA"], position=[0.0])))
    viewer._update()  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    again = viewer._scene(viewer._link_poses())  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    np.testing.assert_array_equal(again.force_arrows, scene.force_arrows)
    np.testing.assert_array_equal(again.footholds, scene.footholds)
    np.testing.assert_array_equal(again.com, scene.com)
    feed(viewer, "contacts", contacts("map", feet, [[0.0, 0.0, 1.0]] * 4, [True] * 4))
    viewer._update()  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    assert len(viewer._scene(viewer._link_poses()).force_arrows) == 3  # noqa: SLF001  (the node driven without DDS: its callbacks and scene); still the last good one
    problems = viewer._problems._last  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    assert {key[0] for key in problems} >= {"contacts message", "footholds message", "joint_states message"}


def test_configuration_errors() -> None:
    with pytest.raises(ValueError, match=r"parameter host '10\.255\.255\.1': cannot listen there"):
        check_host("10.255.255.1")
    check_host("127.0.0.1")
    for args, message in (
        (["-p", "port:=70000"], "parameter port must be 0"),
        (["-p", "trajectory_length:=1"], "at least 2 points"),
        (["-p", "force_scale:=-1.0"], "force_scale must be a finite number >= 0"),
    ):
        rclpy.init(args=["--ros-args", "-p", f"robot_description_file:={URDF}", *args])
        try:
            with pytest.raises(ValueError, match=message):
                Viewer()
        finally:
            rclpy.shutdown()


def planned_path(frame: str, positions: np.ndarray) -> bytes:
    msg = NavPath(poses=[PoseStamped() for _ in positions])
    msg.header.frame_id = frame
    for pose, (x, y, z) in zip(msg.poses, positions, strict=True):
        pose.header.frame_id = frame
        pose.pose.position = Point(x=float(x), y=float(y), z=float(z))
        pose.pose.orientation.w = 1.0
    return serialize_message(msg)


def test_the_planned_base_path_is_drawn_in_the_fixed_frame_and_bad_ones_are_dropped(viewer: Viewer) -> None:
    """The wbc's MPC path (nav_msgs/Path in odom) placed by /tf's world -> odom (a yaw of 90 deg and a shift),
    checked against the rotation applied by hand; a non-finite or out-of-range path keeps the last one."""
    T_world_odom = np.eye(4)
    T_world_odom[:3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    T_world_odom[:3, 3] = [1.0, 2.0, 0.0]
    placed = transform_stamped("world", "odom", T_world_odom, Time())
    viewer._add_static_tf(TFMessage(transforms=[placed]))  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    positions = np.column_stack([0.01 * np.arange(17), np.zeros(17), np.full(17, 0.52)])
    feed(viewer, "planned_path", planned_path("odom", positions))
    viewer._update()  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    drawn = viewer._scene({}).planned_path  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    expected = np.column_stack([1.0 - positions[:, 1], 2.0 + positions[:, 0], positions[:, 2]])
    np.testing.assert_allclose(drawn, expected, atol=1e-12)
    assert scene_markers(viewer._scene({})).markers[-1].type == Marker.LINE_STRIP  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    for bad in (positions + np.array([0.0, np.nan, 0.0]), positions * 1e9):
        feed(viewer, "planned_path", planned_path("odom", bad))
        viewer._update()  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
        np.testing.assert_array_equal(viewer._scene({}).planned_path, drawn)  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    causes = {key[1][0] for key in viewer._problems._last if key[0] == "planned_path message"}  # noqa: SLF001  (the node driven without DDS: its callbacks and scene)
    assert causes == {"planned_path_non_finite", "planned_path_out_of_range"}, causes
