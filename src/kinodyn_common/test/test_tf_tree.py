"""kinodyn_common.tf_tree: per-joint transforms parent link <- child link (no DDS).

Second sources: transforms written by hand from the URDF numbers (urdf/README.md), and the composition of the
per-joint transforms along a chain against kinodyn's forward kinematics (kinodyn.Model.frame_placement).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from kinodyn_common.tf_tree import TfTree

from kinodyn import Model, URDFError

URDF_DIR = Path(__file__).resolve().parents[3] / "urdf"


def tree(name: str) -> TfTree:
    return TfTree.from_urdf((URDF_DIR / name).read_text())


def transform(R: np.ndarray, p: tuple[float, float, float]) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def test_planar_arm_transforms_written_by_hand() -> None:
    t = tree("planar_2link.urdf")
    assert t.root_link == "base_link"
    assert t.movable_joint_names == ("joint1", "joint2")
    assert [(p, c) for p, c, _ in t.static_transforms()] == [("link2", "tool")]
    np.testing.assert_array_equal(t.static_transforms()[0][2], transform(np.eye(3), (0.0, 0.0, 0.8)))
    q1, q2 = 0.7, -1.9
    moving = t.moving_transforms({"joint1": q1, "joint2": q2})
    assert [(p, c) for p, c, _ in moving] == [("base_link", "link1"), ("link1", "link2")]
    for (_, _, T), q, z in zip(moving, (q1, q2), (0.0, 1.0), strict=True):
        c, s = math.cos(q), math.sin(q)
        np.testing.assert_allclose(
            T, transform(np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]), (0.0, 0.0, z)), rtol=0, atol=4e-16
        )


def test_only_joints_with_a_position_get_a_transform() -> None:
    moving = tree("planar_2link.urdf").moving_transforms({"joint2": 0.1})
    assert [(p, c) for p, c, _ in moving] == [("link1", "link2")]


def test_arm7_joint2_origin_rpy_written_by_hand() -> None:
    """joint2 of arm7 has rpy = (-pi/2, 0, 0): T = [Rx(-pi/2), 0] @ Rz(q)."""
    q = 0.4
    ((_, _, T),) = [x for x in tree("arm7.urdf").moving_transforms({"joint2": q})]
    c, s = math.cos(q), math.sin(q)
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    Rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(T, transform(Rx @ Rz, (0.0, 0.0, 0.0)), rtol=0, atol=4e-16)


@pytest.mark.parametrize("name", ["planar_2link.urdf", "arm7.urdf", "quadruped.urdf"])
def test_chain_composition_matches_kinodyn_forward_kinematics(name: str) -> None:
    t = tree(name)
    model = Model.from_urdf(URDF_DIR / name)
    assert sorted(model.joint_names) == sorted(t.movable_joint_names)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = model.random_configuration(rng)
        positions = dict(zip(model.joint_names, q, strict=True))  # by name: the two orders need not agree
        edges = {c: (p, T) for p, c, T in t.static_transforms() + t.moving_transforms(positions)}
        for link in t.links:
            T, frame = np.eye(4), link
            while frame != t.root_link:
                parent, T_pc = edges[frame]
                T, frame = T_pc @ T, parent
            np.testing.assert_allclose(T, model.frame_placement(q, link), rtol=0, atol=1e-14)


def test_prismatic_and_mimic_joints() -> None:
    xml = """<robot name="r"><link name="a"/><link name="b"/><link name="c"/>
      <joint name="slide" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="0 0 2"/>
        <origin xyz="1 0 0"/><limit lower="0" upper="1" effort="1" velocity="1"/></joint>
      <joint name="follow" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>
        <mimic joint="slide" multiplier="-2" offset="0.5"/>
        <limit lower="-5" upper="5" effort="1" velocity="1"/>
      </joint></robot>"""
    t = TfTree.from_urdf(xml)
    assert t.movable_joint_names == ("slide",)
    assert t.mimic_joint_names == ("follow",)
    (_, _, T_ab), (_, _, T_bc) = t.moving_transforms({"slide": 0.3})
    np.testing.assert_allclose(T_ab, transform(np.eye(3), (1.0, 0.0, 0.3)), rtol=0, atol=4e-16)
    np.testing.assert_allclose(T_bc, transform(np.eye(3), (-0.1, 0.0, 0.0)), rtol=0, atol=4e-16)


@pytest.mark.parametrize(
    ("xml", "text"),
    [
        ("<robot name='x'><link name='a'/>", "not well-formed XML"),
        ("<model/>", "root element must be <robot>"),
        ("<robot name='x'><link name='a'/><link name='b'/></robot>", "2 root links"),
        (
            "<robot name='x'><link name='a'/><link name='b'/><link name='c'/><joint name='i' type='fixed'>"
            "<parent link='a'/><child link='b'/></joint><joint name='j' type='floating'>"
            "<parent link='b'/><child link='c'/></joint></robot>",
            "type 'floating'; only a floating root",
        ),
        (
            "<robot name='x'><link name='a'/><joint name='j' type='fixed'><parent link='a'/><child link='z'/>"
            "</joint></robot>",
            "child link 'z', which is not defined",
        ),
        (
            "<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
            "<parent link='a'/><child link='b'/><axis xyz='0 0 0'/>"
            "<limit lower='0' upper='1' effort='1' velocity='1'/></joint></robot>",
            "nonzero <axis xyz>",
        ),
    ],
)
def test_malformed_urdf_is_rejected_with_a_clear_message(xml: str, text: str) -> None:
    with pytest.raises(URDFError, match=text):
        TfTree.from_urdf(xml)
