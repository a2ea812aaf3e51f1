"""Model.from_urdf: structure, fixed-joint merging, mimic coupling, limits, errors and warnings."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin  # test-only: locates example-robot-data
import pytest

import kinodyn as kd

ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"

INERTIA = '<inertia ixx="{i}" ixy="0" ixz="0" iyy="{i}" iyz="0" izz="{i}"/>'


def link(name: str, mass: float = 1.0, xyz: str = "0 0 0", rpy: str = "0 0 0", inertia: float = 0.01) -> str:
    return (
        f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
        f"{INERTIA.format(i=inertia)}</inertial></link>"
    )


def joint(
    name: str, jtype: str, parent: str, child: str, xyz: str = "0 0 0", rpy: str = "0 0 0", extra: str = ""
) -> str:
    return (
        f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}" rpy="{rpy or "0 0 0"}"/>{extra}</joint>'
    )


def robot(*parts: str) -> str:
    return '<robot name="test">' + "".join(parts) + "</robot>"


LIMIT = '<axis xyz="0 0 1"/><limit lower="-1" upper="1.5" effort="10" velocity="2"/>'

# base -(revolute)- a -(fixed)- tool, a -(prismatic)- b -(continuous)- c
TREE = robot(
    link("base"),
    link("a", 2.0, "0.1 0 0"),
    link("tool", 0.5, "0 0.2 0", "0.3 0.2 0.1", 0.02),
    link("b", 1.5, "0 0 0.1"),
    link("c", 0.7, "0.05 0 0"),
    joint(
        "j1",
        "revolute",
        "base",
        "a",
        "0 0 0.3",
        "0.1 0 0",
        LIMIT + '<dynamics damping="0.5" friction="0.2"/>',
    ),
    joint("fix", "fixed", "a", "tool", "0.4 0 0", "0 0.5 0"),
    joint(
        "j2",
        "prismatic",
        "a",
        "b",
        "0 0.1 0",
        "0 0 0.3",
        '<axis xyz="1 0 0"/><limit lower="0" upper="0.2" effort="5" velocity="1"/>',
    ),
    joint(
        "j3",
        "continuous",
        "b",
        "c",
        "0 0 0.2",
        "0 0 0",
        '<axis xyz="0 1 1"/><limit effort="3" velocity="4"/>',
    ),
)


def spatial_inertia_about_origin(mass: float, com: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """6x6 [[m I, -m [c]x], [m [c]x, I_c - m [c]x^2]] about the frame origin (independent formula)."""
    cx = np.array([[0, -com[2], com[1]], [com[2], 0, -com[0]], [-com[1], com[0], 0]])
    return np.block([[mass * np.eye(3), -mass * cx], [mass * cx, inertia - mass * cx @ cx]])


def test_structure_limits_and_frames() -> None:
    m = kd.Model.from_urdf(TREE)
    assert (m.nq, m.nv, m.nbodies) == (3, 3, 4)
    assert m.joint_names == ("j1", "j2", "j3")
    assert set(m.frame_names) == {"base", "a", "tool", "b", "c"}
    assert list(m.joint_type) == [kd.JOINT_NONE, kd.JOINT_REVOLUTE, kd.JOINT_PRISMATIC, kd.JOINT_REVOLUTE]
    np.testing.assert_allclose(m.joint_axis[3], [0, 1 / np.sqrt(2), 1 / np.sqrt(2)])
    np.testing.assert_array_equal(m.lower_limit, [-1, 0, -np.inf])
    np.testing.assert_array_equal(m.upper_limit, [1.5, 0.2, np.inf])
    np.testing.assert_array_equal(m.velocity_limit, [2, 1, 4])
    np.testing.assert_array_equal(m.effort_limit, [10, 5, 3])
    np.testing.assert_array_equal(m.damping, [0.5, 0, 0])
    np.testing.assert_array_equal(m.friction, [0.2, 0, 0])
    assert m.frame_body[m.frame_id("tool")] == m.frame_body[m.frame_id("a")] == 1
    assert m.frame_body[m.frame_id("base")] == 0


@pytest.mark.parametrize(
    "path",
    [
        str(Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"),
        str(ROBOTS / "solo_description" / "robots" / "solo12.urdf"),
    ],
)
def test_joints_follow_depth_first_order_of_the_tree(path: str) -> None:
    """docs/conventions.md: a whole leg comes before the next one, as in Pinocchio and ros2_control blocks."""
    m = kd.Model.from_urdf(path, floating_base=True)
    pinocchio_names = [n for n in pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()).names[2:]]
    assert list(m.joint_names) == pinocchio_names
    legs = [name.split("_")[0] for name in m.joint_names]
    assert legs == sorted(legs, key=legs.index)
    assert all(legs[i] == legs[i - i % 3] for i in range(len(legs)))


def test_fixed_link_is_merged_with_mass_and_inertia_preserved() -> None:
    """Merged body a+tool equals the sum of both links' spatial inertias about body a's origin."""
    m = kd.Model.from_urdf(TREE)
    q = np.array([0.3, 0.1, -0.4])
    T_a = m.frame_placement(q, "a")
    T_tool = m.frame_placement(q, "tool")
    T_a_tool = np.linalg.inv(T_a) @ T_tool
    # The tool frame is the fixed-joint origin: x 0.4, pitch 0.5.
    c, s = np.cos(0.5), np.sin(0.5)
    np.testing.assert_allclose(T_a_tool[:3, :3], [[c, 0, s], [0, 1, 0], [-s, 0, c]], atol=1e-15)
    np.testing.assert_allclose(T_a_tool[:3, 3], [0.4, 0, 0], atol=1e-15)
    # Tool link inertia expressed in frame a: rotate by the tool frame and its inertial rpy.
    cr, sr, cp, sp, cy, sy = np.cos(0.3), np.sin(0.3), np.cos(0.2), np.sin(0.2), np.cos(0.1), np.sin(0.1)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    R = T_a_tool[:3, :3] @ Rz @ Ry @ Rx
    tool_com = T_a_tool[:3, :3] @ [0, 0.2, 0] + T_a_tool[:3, 3]
    expected = spatial_inertia_about_origin(
        2.0, np.array([0.1, 0, 0]), 0.01 * np.eye(3)
    ) + spatial_inertia_about_origin(0.5, tool_com, R @ (0.02 * np.eye(3)) @ R.T)
    got = spatial_inertia_about_origin(m.mass[1], m.body_com[1], m.inertia[1])
    assert m.mass[1] == pytest.approx(2.5, abs=1e-15)
    np.testing.assert_allclose(got, expected, atol=1e-15)


def test_total_mass_excludes_world_welded_root_and_floating_base_includes_it() -> None:
    fixed = kd.Model.from_urdf(TREE)
    floating = kd.Model.from_urdf(TREE, floating_base=True)
    assert fixed.mass[1:].sum() == pytest.approx(2 + 0.5 + 1.5 + 0.7)
    assert floating.mass[1:].sum() == pytest.approx(1 + 2 + 0.5 + 1.5 + 0.7)
    assert (floating.nq, floating.nv) == (10, 9)
    np.testing.assert_array_equal(floating.neutral()[:7], [0, 0, 0, 0, 0, 0, 1])


def test_mimic_joint_is_coupled_to_its_master() -> None:
    """A mimic joint equals its master joint driven with multiplier * q + offset."""
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    y_axis = '<axis xyz="0 1 0"/>' + limit
    parts = [link("base"), link("l1"), link("l2"), link("l3", 0.3, "0.1 0 0")]
    master = joint("m", "revolute", "base", "l1", "0 0 0.1", "", y_axis)
    chain = joint("j", "prismatic", "l1", "l2", "0.2 0 0", "", '<axis xyz="1 0 0"/>' + limit)
    follower = '<mimic joint="m" multiplier="-2" offset="0.1"/>'
    coupled = kd.Model.from_urdf(
        robot(*parts, master, chain, joint("f", "revolute", "l2", "l3", "0 0 0.3", "", y_axis + follower))
    )
    free = kd.Model.from_urdf(
        robot(*parts, master, chain, joint("f", "revolute", "l2", "l3", "0 0 0.3", "", y_axis))
    )
    assert coupled.joint_names == ("m", "j")
    assert coupled.mimic_joint_names == ("f",)
    q = np.array([0.4, 0.05])
    q_free = np.array([0.4, 0.05, -2 * 0.4 + 0.1])
    G = np.array([[1, 0], [0, 1], [-2, 0]])
    np.testing.assert_allclose(
        coupled.frame_placement(q, "l3"), free.frame_placement(q_free, "l3"), atol=1e-15
    )
    for ref in ("world", "local", "local_world_aligned"):
        np.testing.assert_allclose(
            coupled.frame_jacobian(q, "l3", ref), free.frame_jacobian(q_free, "l3", ref) @ G, atol=1e-15
        )
    np.testing.assert_allclose(coupled.com_jacobian(q), free.com_jacobian(q_free) @ G, atol=1e-15)


def test_panda_fingers_mimic_and_every_link_is_a_frame(panda_path: str) -> None:
    m = kd.Model.from_urdf(panda_path)
    assert (m.nq, m.nv) == (8, 8)
    assert m.mimic_joint_names == ("panda_finger_joint2",)
    assert {"panda_link8", "panda_hand", "panda_hand_tcp", "panda_leftfinger", "panda_rightfinger"} <= set(
        m.frame_names
    )
    q = m.neutral()
    q[7] = 0.03
    left, right = m.frame_placement(q, "panda_leftfinger"), m.frame_placement(q, "panda_rightfinger")
    assert np.linalg.norm(left[:3, 3] - right[:3, 3]) == pytest.approx(0.06, abs=1e-14)


@pytest.fixture
def panda_path() -> str:
    return str(ROBOTS / "panda_description" / "urdf" / "panda.urdf")


def test_vendor_elements_are_tolerated_silently() -> None:
    xml = robot(
        link("base"),
        '<link name="tip"><visual><geometry><box size="1 1 1"/></geometry>'
        '<material name="red"><color rgba="1 0 0 1"/></material></visual>'
        '<inertial><mass value="1"/>' + INERTIA.format(i=0.1) + "</inertial></link>",
        joint("j", "revolute", "base", "tip", extra=LIMIT),
        '<transmission name="t"><type>SimpleTransmission</type><actuator name="x"/></transmission>',
        '<gazebo reference="tip"><mu1>0.9</mu1></gazebo>',
        '<material name="blue"><color rgba="0 0 1 1"/></material>',
        '<ros2_control name="hw" type="system"><hardware><plugin>mock</plugin></hardware></ros2_control>',
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = kd.Model.from_urdf(xml)
    assert m.frame_names == ("base", "tip")


def test_zero_mass_and_singular_inertia_warn() -> None:
    with pytest.warns(kd.URDFWarning, match="zero mass"):
        kd.Model.from_urdf(
            robot(link("base"), '<link name="tip"/>', joint("j", "revolute", "base", "tip", extra=LIMIT))
        )
    with pytest.warns(kd.URDFWarning, match="singular"):
        kd.Model.from_urdf(
            robot(
                link("base"),
                link("tip", 1.0, inertia=0.0),
                joint("j", "revolute", "base", "tip", extra=LIMIT),
            )
        )


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        ("<robot name='r'><link name='a'>", "not well-formed XML"),
        ("<model/>", "root element must be <robot>"),
        (robot(link("a"), link("b"), joint("j", "floating", "a", "b")), "type 'floating'"),
        (robot(link("a"), link("b"), joint("j", "ball", "a", "b")), "Invalid joint type: ball"),
        (
            robot(link("a"), link("b"), joint("j", "fixed", "a", "bb")),
            "child link 'bb', which is not defined",
        ),
        (robot(link("a"), link("b"), joint("j", "fixed", "a", "b"), joint("k", "fixed", "b", "a")), "cycle"),
        (
            robot(
                link("a"), link("b"), link("c"), joint("j", "fixed", "a", "c"), joint("k", "fixed", "b", "c")
            ),
            "child of two joints",
        ),
        (robot(link("a"), link("b"), link("c"), joint("j", "fixed", "a", "b")), "2 root links"),
        (
            robot(link("a"), link("b"), joint("j", "revolute", "a", "b", xyz="0 zero 0", extra=LIMIT)),
            """joint 'j' <origin xyz="0 zero 0">: 'zero' is not a number""",
        ),
        (
            robot(
                link("a"),
                link("b"),
                joint(
                    "j", "revolute", "a", "b", extra='<limit lower="x" upper="1" effort="1" velocity="1"/>'
                ),
            ),
            """joint 'j' <limit lower="x">: 'x' is not a number""",
        ),
        (robot(link("a"), link("b", mass=-1.0), joint("j", "fixed", "a", "b")), "mass -1.0"),
        (
            robot(link("a"), link("b"), joint("j", "revolute", "a", "b", extra='<axis xyz="0 0 0"/>')),
            "nonzero <axis",
        ),
        (
            robot(
                link("a"),
                link("b"),
                joint(
                    "j",
                    "revolute",
                    "a",
                    "b",
                    extra='<axis xyz="0 0 1"/><limit lower="1" upper="0" effort="1" velocity="1"/>',
                ),
            ),
            "lower limit 1.0 > upper",
        ),
        (
            robot(
                link("a"), link("b"), joint("j", "revolute", "a", "b", extra=LIMIT + '<mimic joint="nope"/>')
            ),
            "mimics 'nope'",
        ),
        (
            robot(
                link("a"),
                link("b"),
                link("c"),
                joint("j", "revolute", "a", "b", extra=LIMIT + '<mimic joint="k"/>'),
                joint("k", "revolute", "b", "c", extra=LIMIT + '<mimic joint="j"/>'),
            ),
            "not an independent",
        ),
        ("/nonexistent/robot.urdf", "URDF file not found"),
    ],
)
def test_malformed_urdf_raises_clear_error(xml: str, message: str) -> None:
    with pytest.raises(kd.URDFError, match=message):
        kd.Model.from_urdf(xml)


def test_input_validation_names_shapes_and_close_frames() -> None:
    m = kd.Model.from_urdf(TREE)
    with pytest.raises(ValueError, match=r"q must have shape \(3,\), got \(4,\)"):
        m.frame_placement(np.zeros(4), "c")
    with pytest.raises(ValueError, match=r"v must have shape \(3,\), got \(2,\)"):
        m.frame_bias_acceleration(np.zeros(3), np.zeros(2), "c", "world")
    with pytest.raises(KeyError, match="close names: \\['tool'\\]"):
        m.frame_jacobian(np.zeros(3), "tol", "world")
    with pytest.raises(ValueError, match="reference must be one of"):
        m.frame_jacobian(np.zeros(3), "c", "global")
    with pytest.raises(ValueError, match=r"Q must have shape \(N, 3\)"):
        m.frame_placements_batch(np.zeros((5, 2)), "c")
    with pytest.raises(AttributeError, match="cannot assign to field 'nq'"):
        m.nq = 5
    assert m.frame_id(m.frame_id("c")) == m.frame_id("c")


def test_random_configuration_is_within_limits_and_finite() -> None:
    m = kd.Model.from_urdf(TREE, floating_base=True)
    Q = np.array([m.random_configuration(np.random.default_rng(i)) for i in range(200)])
    assert np.all(np.isfinite(Q))
    assert np.all((Q[:, 7:9] >= m.lower_limit[7:9]) & (Q[:, 7:9] <= m.upper_limit[7:9]))
    assert np.all(np.abs(Q[:, 9]) <= np.pi)  # continuous joint: [-pi, pi]
    np.testing.assert_allclose(np.linalg.norm(Q[:, 3:7], axis=1), 1.0, atol=1e-15)


def test_batch_placements_equal_single_ones() -> None:
    m = kd.Model.from_urdf(TREE, floating_base=True)
    Q = np.array([m.random_configuration(i) for i in range(20)])
    batch = m.frame_placements_batch(Q, "c")
    for k in range(len(Q)):
        np.testing.assert_array_equal(batch[k], m.frame_placement(Q[k], "c"))
