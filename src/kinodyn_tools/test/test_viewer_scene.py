"""kinodyn_tools.viewer: the scene geometry (no DDS, no browser).

Second sources: scipy's Qhull for the support polygon, Pinocchio's visual geometry placements (``oMg``) and
shapes and kinodyn's forward kinematics for the URDF primitives placed by the TF tree, Pinocchio's
``centerOfMass`` and the mass-weighted link centres for the CoM, hand-computed arrows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
import pytest
from builtin_interfaces.msg import Time
from kinodyn.spatial import matrix_to_quat
from kinodyn.urdf import read_urdf
from kinodyn_common.conversions import transform_stamped
from kinodyn_common.tf_buffer import TransformBuffer
from kinodyn_common.tf_tree import TfTree
from kinodyn_tools.viewer import scene
from kinodyn_tools.viewer.geometry import BODY_COLOR, SPHERE_COLOR, robot_primitives
from scipy.spatial import ConvexHull

from kinodyn import Model
from tf2_msgs.msg import TFMessage

URDF_DIR = Path(__file__).resolve().parents[3] / "urdf"


def random_pose(rng: np.random.Generator) -> np.ndarray:
    q = rng.normal(size=4)
    T = np.eye(4)
    T[:3, :3] = pin.Quaternion(*(q / np.linalg.norm(q))).toRotationMatrix()  # (w, x, y, z)
    T[:3, 3] = rng.uniform(-2.0, 2.0, 3)
    return T


def tf_link_poses(
    urdf_name: str, T_frame_root: np.ndarray, joints: dict[str, float]
) -> dict[str, np.ndarray]:
    """Link poses as the viewer gets them: state_publisher's transforms (TfTree) and the base pose as
    TFMessages into the viewer's TransformBuffer, looked up from frame "odom"."""
    tree = TfTree.from_urdf(URDF_DIR / urdf_name)
    buffer = TransformBuffer()
    stamp = Time(sec=1)
    for transforms, static in (
        (tree.static_transforms(), True),
        (tree.moving_transforms(joints), False),
        ([("odom", tree.root_link, T_frame_root)], False),
    ):
        buffer.add(
            TFMessage(transforms=[transform_stamped(p, c, T, stamp) for p, c, T in transforms]), static
        )
    return {link: buffer.lookup("odom", link).T for link in tree.links}


def q_for_pinocchio(pin_model: pin.Model, model: Model, q: np.ndarray) -> np.ndarray:
    """kinodyn's floating-base q put in Pinocchio's joint order (by name)."""
    q_pin = np.zeros(pin_model.nq)
    q_pin[:7] = q[:7]
    for name, value in zip(model.joint_names, q[7:], strict=True):
        q_pin[pin_model.idx_qs[pin_model.getJointId(name)]] = value
    return q_pin


# --- support polygon ---------------------------------------------------------------------------------------


def signed_area(polygon: np.ndarray) -> float:
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


@pytest.mark.parametrize("n", [3, 4, 6, 12, 40])
def test_support_polygon_is_qhulls_hull_counter_clockwise(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(20):
        points = np.column_stack([rng.uniform(-0.5, 0.5, (n, 2)), rng.uniform(0.0, 0.05, n)])
        polygon = scene.support_polygon(points)
        hull = ConvexHull(points[:, :2])
        assert sorted(map(tuple, polygon)) == sorted(map(tuple, points[hull.vertices]))  # heights kept
        assert signed_area(polygon) == pytest.approx(hull.volume, rel=1e-12)  # 2-D volume = area, > 0: CCW


def test_support_polygon_of_a_standing_quadruped_is_the_rectangle_of_its_feet() -> None:
    feet = np.array(
        [[0.25, 0.2, 0.0], [-0.25, 0.2, 0.0], [0.25, -0.2, 0.0], [-0.25, -0.2, 0.0], [0.0, 0.0, 0.0]]
    )
    polygon = scene.support_polygon(feet)
    assert polygon.tolist() == [[-0.25, -0.2, 0.0], [0.25, -0.2, 0.0], [0.25, 0.2, 0.0], [-0.25, 0.2, 0.0]]


def test_support_polygon_of_fewer_than_three_distinct_feet() -> None:
    a, b, c = [0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, 2.0, 0.0]
    assert scene.support_polygon(np.zeros((0, 3))).shape == (0, 3)
    assert scene.support_polygon(np.array([a])).tolist() == [a]
    assert scene.support_polygon(np.array([b, a])).tolist() == [a, b]  # a trot's diagonal pair: a segment
    assert scene.support_polygon(np.array([c, a, b])).tolist() == [a, c]  # collinear: the two ends
    assert scene.support_polygon(np.array([a, a, a])).tolist() == [a]
    assert scene.support_polygon(np.array([a, a])).tolist() == [a]


# --- arrows, CoM, polyline ---------------------------------------------------------------------------------


def test_force_arrows_start_at_the_contact_and_scale_the_force() -> None:
    points = np.array([[0.3, 0.2, 0.0], [-0.3, 0.2, 0.01], [0.3, -0.2, 0.0], [-0.3, -0.2, 0.0]])
    forces = np.array([[1.0, -2.0, 60.0], [0.0, 0.0, 80.0], [0.0, 0.0, 0.0], [5.0, 0.0, 40.0]])
    arrows = scene.force_arrows(points, forces, [True, False, True, True], scale=0.01)
    # the foot in the air and the contact without force get no arrow
    expected = [[[0.3, 0.2, 0.0], [0.31, 0.18, 0.6]], [[-0.3, -0.2, 0.0], [-0.25, -0.2, 0.4]]]
    np.testing.assert_allclose(arrows, expected, rtol=0, atol=1e-15)
    assert scene.force_arrows(points, forces, [False] * 4, 0.01).shape == (0, 2, 3)


def test_com_of_the_floating_quadruped_against_pinocchio_and_the_link_centres() -> None:
    urdf = read_urdf(URDF_DIR / "quadruped.urdf")
    model = Model.from_urdf(urdf, floating_base=True)
    pin_model = pin.buildModelFromUrdf(str(URDF_DIR / "quadruped.urdf"), pin.JointModelFreeFlyer())
    rng = np.random.default_rng(1)
    for _ in range(5):
        T_base = random_pose(rng)
        joints = model.random_configuration(rng)[7:]
        com = scene.center_of_mass(model, T_base, joints)
        q = np.concatenate([T_base[:3, 3], matrix_to_quat(T_base[:3, :3]), joints])
        expected = pin.centerOfMass(pin_model, pin_model.createData(), q_for_pinocchio(pin_model, model, q))
        np.testing.assert_allclose(com, expected, atol=1e-12)
        # the same from the link poses a TF listener has: sum m_i (T_i c_i) / sum m_i
        poses = tf_link_poses("quadruped.urdf", T_base, dict(zip(model.joint_names, joints, strict=True)))
        weighted = [
            (lk.inertial.mass, poses[lk.name][:3, :3] @ lk.inertial.origin.xyz + poses[lk.name][:3, 3])
            for lk in urdf.links
            if lk.inertial is not None
        ]
        total = sum(m for m, _ in weighted)
        np.testing.assert_allclose(com, sum(m * c for m, c in weighted) / total, atol=1e-12)


def test_com_of_a_fixed_base_arm_leaves_out_the_root_link_and_follows_its_pose() -> None:
    model = Model.from_urdf(URDF_DIR / "arm7.urdf")
    pin_model = pin.buildModelFromUrdf(str(URDF_DIR / "arm7.urdf"))
    rng = np.random.default_rng(2)
    q = model.random_configuration(rng)
    T = random_pose(rng)
    expected = pin.centerOfMass(pin_model, pin_model.createData(), q)  # Pinocchio leaves out the universe too
    np.testing.assert_allclose(scene.center_of_mass(model, T, q), T[:3, :3] @ expected + T[:3, 3], atol=1e-12)


def test_com_ground_is_the_vertical_projection_on_the_support_plane() -> None:
    com = np.array([0.1, -0.05, 0.48])
    support = np.array([[0.0, 0.0, 0.02], [1.0, 0.0, 0.04], [0.0, 1.0, 0.03]])
    assert scene.com_ground(com, support).tolist() == [0.1, -0.05, pytest.approx(0.03)]
    assert scene.com_ground(com, np.zeros((0, 3))).tolist() == [0.1, -0.05, 0.0]


def test_polyline_keeps_the_last_points_spaced_apart() -> None:
    line = scene.Polyline(max_points=5, min_spacing=0.25)
    for x in np.arange(0.0, 2.0, 0.125):  # every other point is too close to the previous one kept
        line.add(np.array([x, 0.0, 0.3]))
    assert line.points()[:, 0].tolist() == [0.75, 1.0, 1.25, 1.5, 1.75]
    line.add(np.array([1.875, 0.0, 0.3]))
    assert line.points()[:, 0].tolist() == [0.75, 1.0, 1.25, 1.5, 1.75]
    line.clear()
    assert line.points().shape == (0, 3)
    with pytest.raises(ValueError, match="at least 2 points"):
        scene.Polyline(max_points=1)


# --- URDF primitives ---------------------------------------------------------------------------------------


def coal_extent(shape: Any) -> tuple[float, float, float]:  # noqa: ANN401  (a coal shape: coal has no type hints)
    """Box edges, cylinder diameter, diameter, length, sphere diameter of a coal shape (half sizes)."""
    kind = type(shape).__name__
    if kind == "Box":
        return tuple(2 * shape.halfSide)
    if kind == "Cylinder":
        return (2 * shape.radius, 2 * shape.radius, 2 * shape.halfLength)
    assert kind == "Sphere", kind
    return (2 * shape.radius,) * 3


@pytest.mark.parametrize(
    ("urdf_name", "floating"), [("quadruped.urdf", True), ("arm7.urdf", False), ("planar_2link.urdf", False)]
)
def test_primitives_placed_by_tf_match_pinocchio_visuals_and_kinodyn_fk(
    urdf_name: str, floating: bool
) -> None:
    urdf = read_urdf(URDF_DIR / urdf_name)
    primitives, skipped = robot_primitives(urdf)
    assert skipped == ()
    model = Model.from_urdf(urdf, floating_base=floating)
    root = pin.JointModelFreeFlyer() if floating else None
    args = [str(URDF_DIR / urdf_name), [], root] if floating else [str(URDF_DIR / urdf_name), []]
    pin_model, _, visual_model = pin.buildModelsFromUrdf(*args)
    pin_data, visual_data = pin_model.createData(), visual_model.createData()
    visuals = {g.name: g for g in visual_model.geometryObjects}
    assert len(visuals) == len(primitives)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = model.random_configuration(rng)
        T_root = random_pose(rng) if floating else np.eye(4)
        if floating:
            q[:7] = np.concatenate([T_root[:3, 3], matrix_to_quat(T_root[:3, :3])])
        joints = q[7:] if floating else q
        bodies = scene.place_bodies(
            primitives, tf_link_poses(urdf_name, T_root, dict(zip(model.joint_names, joints, strict=True)))
        )
        assert [b.primitive for b in bodies] == list(primitives)
        q_pin = q_for_pinocchio(pin_model, model, q) if floating else q
        pin.forwardKinematics(pin_model, pin_data, q_pin)
        pin.updateGeometryPlacements(pin_model, pin_data, visual_model, visual_data)
        for body in bodies:
            p = body.primitive
            np.testing.assert_allclose(body.T, model.frame_placement(q, p.link) @ p.T_link, atol=1e-12)
            name = f"{p.link}_{p.index}"
            oMg = visual_data.oMg[visual_model.getGeometryId(name)]
            np.testing.assert_allclose(body.T[:3, :3], oMg.rotation, atol=1e-12)
            np.testing.assert_allclose(body.T[:3, 3], oMg.translation, atol=1e-12)
    for p in primitives:  # sizes against the shapes Pinocchio built (coal: half sizes)
        np.testing.assert_allclose(p.scale, coal_extent(visuals[f"{p.link}_{p.index}"].geometry), atol=1e-15)


MATERIAL_URDF = """<robot name="r">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <link name="base">
    <visual><geometry><box size="1 2 3"/></geometry></visual>
    <visual><geometry><sphere radius="0.5"/></geometry><material name="red"/></visual>
    <visual><geometry><cylinder radius="0.1" length="2"/></geometry>
      <material name="own"><color rgba="0 0.5 1 0.25"/></material></visual>
    <visual><geometry><mesh filename="package://x/m.stl"/></geometry></visual>
  </link>
  <link name="arm"><visual><geometry><mesh filename="file:///m.dae"/></geometry></visual>
    <visual><geometry><sphere radius="0.2"/></geometry></visual></link>
  <joint name="j" type="fixed"><parent link="base"/><child link="arm"/></joint>
</robot>"""


def test_primitives_colours_and_skipped_meshes() -> None:
    primitives, skipped = robot_primitives(read_urdf(MATERIAL_URDF))
    assert [(p.name, p.kind, p.scale, p.color) for p in primitives] == [
        ("base/visual_0", "box", (1.0, 2.0, 3.0), BODY_COLOR),
        ("base/visual_1", "sphere", (1.0, 1.0, 1.0), (1.0, 0.0, 0.0, 1.0)),  # the robot-level material
        ("base/visual_2", "cylinder", (0.2, 0.2, 2.0), (0.0, 0.5, 1.0, 0.25)),  # its own colour
        ("arm/visual_1", "sphere", (0.4, 0.4, 0.4), SPHERE_COLOR),
    ]
    assert skipped == ("base", "arm")


def test_scene_finiteness() -> None:
    finite = scene.Scene("odom", com=np.array([0.0, 0.0, 0.4]), com_ground=np.zeros(3))
    assert finite.is_finite()
    assert not scene.Scene("odom", true_path=np.array([[0.0, np.nan, 0.0], [1.0, 0.0, 0.0]])).is_finite()
    assert not scene.Scene("odom", com=np.array([np.inf, 0.0, 0.0]), com_ground=np.zeros(3)).is_finite()
