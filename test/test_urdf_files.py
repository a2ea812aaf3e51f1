"""Validates every URDF the project ships (urdf/*.urdf) and the three robots' documented properties.

Structure (one tree, inertias physical and equal to their primitive's, limits), the `<ros2_control>` block
(ros2_control's conventions), the generator output, and per robot a second source: the planar arm against its
closed form (urdf/README.md (a), and the numbers printed there) through Pinocchio, `arm7` against the Panda
URDF of example-robot-data, the quadruped's stance by transform products cross-checked with Pinocchio.
Does not import kinodyn (the files must stand on their own).
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest
from urdf_parser_py.urdf import URDF, Box, Cylinder, Sphere

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from urdf_parser_py.urdf import Joint

REPO = Path(__file__).resolve().parents[1]
URDF_DIR = REPO / "urdf"
URDF_FILES = sorted(URDF_DIR.glob("*.urdf"))
SHIPPED = {"planar_2link.urdf", "arm7.urdf", "arm7_sim.urdf", "quadruped.urdf", "quadruped_sim.urdf"}
PLUGINS = {"kinodyn_control/GenericSystem", "kinodyn_control/SimulatedSystem"}
STANDARD_JOINT_INTERFACES = {"position", "velocity", "acceleration", "effort"}
JOINT_STATE_INTERFACES = ["position", "velocity", "effort"]
IMU_INTERFACES = [
    f"{group}.{axis}"
    for group, axes in (("orientation", "xyzw"), ("angular_velocity", "xyz"), ("linear_acceleration", "xyz"))
    for axis in axes
]
GRAVITY = 9.81
RNG_SEED = 20240611


def load(path: Path) -> URDF:
    return URDF.from_xml_string(path.read_text())


def ros2_control(path: Path) -> ET.Element:
    blocks = ET.parse(path).getroot().findall("ros2_control")
    assert len(blocks) == 1, f"{path.name}: expected one <ros2_control> block, found {len(blocks)}"
    return blocks[0]


def params(element: ET.Element) -> dict[str, str]:
    return {param.get("name"): (param.text or "").strip() for param in element.findall("param")}


def rpy_matrix(rpy: list[float]) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' formula for a unit axis."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def homogeneous(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = rotation, translation
    return T


def link_pose(robot: URDF, link: str, q: dict[str, float]) -> np.ndarray:
    """Pose of `link` in the root frame: the product of joint origin and joint motion transforms."""
    T = np.eye(4)
    while link in robot.parent_map:
        joint_name, parent = robot.parent_map[link]
        joint = robot.joint_map[joint_name]
        motion = np.eye(4)
        if joint.type != "fixed":
            motion = homogeneous(axis_rotation(np.asarray(joint.axis), q[joint_name]), np.zeros(3))
        origin = homogeneous(rpy_matrix(joint.origin.rpy), np.asarray(joint.origin.xyz))
        T = origin @ motion @ T
        link = parent
    return T


def primitive_inertia(geometry: Box | Cylinder | Sphere, mass: float) -> np.ndarray:
    """Inertia of a uniform solid about its centre in its own frame (cylinder axis = local z)."""
    if isinstance(geometry, Box):
        a, b, c = np.square(geometry.size)
        return mass / 12 * np.diag([b + c, a + c, a + b])
    if isinstance(geometry, Cylinder):
        radial = mass / 12 * (3 * geometry.radius**2 + geometry.length**2)
        return np.diag([radial, radial, mass / 2 * geometry.radius**2])
    if isinstance(geometry, Sphere):
        return np.eye(3) * 2 / 5 * mass * geometry.radius**2
    raise AssertionError(f"unsupported geometry {type(geometry).__name__}: use a box, cylinder or sphere")


def geometry_signature(geometry: Box | Cylinder | Sphere) -> tuple:
    if isinstance(geometry, Box):
        return ("box", *geometry.size)
    if isinstance(geometry, Cylinder):
        return ("cylinder", geometry.radius, geometry.length)
    return ("sphere", geometry.radius)


def movable_joints(robot: URDF) -> list:
    return [joint for joint in robot.joints if joint.type != "fixed"]


def depth_first_joints(
    robot: URDF, root: str, order_children: Callable[[list[Joint]], Iterable[Joint]]
) -> list[str]:
    children: dict[str, list] = {}
    for joint in robot.joints:
        children.setdefault(joint.parent, []).append(joint)
    names: list[str] = []

    def visit(link: str) -> None:
        for joint in order_children(children.get(link, [])):
            names.append(joint.name)
            visit(joint.child)

    visit(root)
    return names


def nominal_configuration(path: Path) -> dict[str, float]:
    """The `initial_value` of every joint's position state interface in the `<ros2_control>` block."""
    nominal = {}
    for joint in ros2_control(path).findall("joint"):
        state = joint.find("state_interface[@name='position']")
        nominal[joint.get("name")] = float(params(state)["initial_value"])
    return nominal


def pinocchio_model(path: Path) -> tuple[pin.Model, pin.Data]:
    model = pin.buildModelFromXML(path.read_text())
    return model, model.createData()


def pinocchio_q(model: pin.Model, q: dict[str, float]) -> np.ndarray:
    q_pin = pin.neutral(model)
    for name, value in q.items():
        q_pin[model.joints[model.getJointId(name)].idx_q] = value
    return q_pin


# --- every shipped file -------------------------------------------------------------------------------------


def test_the_three_robots_are_shipped() -> None:
    assert {path.name for path in URDF_FILES} == SHIPPED


@pytest.mark.parametrize("path", URDF_FILES, ids=lambda p: p.name)
def test_one_connected_tree(path: Path) -> None:
    robot = load(path)
    link_names = [link.name for link in robot.links]
    joint_names = [joint.name for joint in robot.joints]
    assert len(set(link_names)) == len(link_names), "duplicate link names"
    assert len(set(joint_names)) == len(joint_names), "duplicate joint names"
    for joint in robot.joints:
        assert joint.parent in link_names, f"{joint.name}: unknown parent/child"
        assert joint.child in link_names, f"{joint.name}: unknown parent/child"
    children = [joint.child for joint in robot.joints]
    assert len(set(children)) == len(children), "a link is the child of two joints"
    roots = [name for name in link_names if name not in children]
    assert roots == ["base_link"]
    reached = {"base_link"}
    frontier = ["base_link"]
    while frontier:
        parent = frontier.pop()
        for joint in robot.joints:
            if joint.parent == parent and joint.child not in reached:
                reached.add(joint.child)
                frontier.append(joint.child)
    assert reached == set(link_names), f"links not connected to base_link: {set(link_names) - reached}"


@pytest.mark.parametrize("path", URDF_FILES, ids=lambda p: p.name)
def test_depth_first_joint_order_does_not_depend_on_the_parser(path: Path) -> None:
    robot = load(path)
    file_order = depth_first_joints(robot, "base_link", list)
    name_order = depth_first_joints(robot, "base_link", lambda joints: sorted(joints, key=lambda j: j.name))
    assert file_order == name_order == [joint.name for joint in robot.joints]


@pytest.mark.parametrize("path", URDF_FILES, ids=lambda p: p.name)
def test_inertias_are_physical_and_those_of_the_primitive(path: Path) -> None:
    for link in load(path).links:
        if link.inertial is None:
            assert not link.visuals, f"{link.name}: geometry without mass"
            assert not link.collisions, f"{link.name}: geometry without mass"
            continue
        inertial = link.inertial
        assert inertial.mass > 0, f"{link.name}: mass {inertial.mass}"
        i = inertial.inertia
        inertia = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])
        principal = np.linalg.eigvalsh(inertia)
        assert principal[0] > 0, f"{link.name}: inertia not positive definite, principal moments {principal}"
        for a, b, c in itertools.permutations(principal):
            assert a + b >= c * (1 - 1e-12), f"{link.name}: principal moments {principal} violate a + b >= c"
        assert len(link.visuals) == 1, f"{link.name}: one visual, one collision"
        assert len(link.collisions) == 1, f"{link.name}: one visual, one collision"
        visual, collision = link.visuals[0], link.collisions[0]
        assert geometry_signature(visual.geometry) == geometry_signature(collision.geometry)
        for element in (visual, collision):
            assert element.origin.xyz == inertial.origin.xyz, (
                f"{link.name}: the inertial origin must be the primitive's centre and orientation"
            )
            assert element.origin.rpy == inertial.origin.rpy, (
                f"{link.name}: the inertial origin must be the primitive's centre and orientation"
            )
        np.testing.assert_allclose(
            inertia, primitive_inertia(collision.geometry, inertial.mass), rtol=0, atol=1e-9
        )


@pytest.mark.parametrize("path", URDF_FILES, ids=lambda p: p.name)
def test_movable_joints_have_limits(path: Path) -> None:
    robot = load(path)
    assert movable_joints(robot), "no movable joint"
    for joint in movable_joints(robot):
        assert joint.type == "revolute", f"{joint.name}: type {joint.type}"
        assert np.linalg.norm(joint.axis) == pytest.approx(1.0, abs=1e-15), f"{joint.name}: axis not unit"
        limit = joint.limit
        assert limit is not None, f"{joint.name}: no <limit>"
        assert limit.lower < limit.upper, f"{joint.name}: {limit}"
        assert limit.velocity > 0, f"{joint.name}: {limit}"
        assert limit.effort > 0, f"{joint.name}: {limit}"


@pytest.mark.parametrize("path", URDF_FILES, ids=lambda p: p.name)
def test_ros2_control_block_follows_the_conventions(path: Path) -> None:
    robot = load(path)
    block = ros2_control(path)
    assert block.get("type") == "system"
    assert block.get("name")
    hardware = block.find("hardware")
    assert hardware is not None
    assert hardware.findtext("plugin").strip() in PLUGINS
    if hardware.findtext("plugin").strip() == "kinodyn_control/GenericSystem":
        assert params(hardware) == {}  # only the plugin: swapping it is all it takes to simulate the robot
    elif path.name == "arm7_sim.urdf":  # fixed to the world although its root is base_link, no ground
        assert params(hardware) == {"floating_base": "false", "dt": "0.002", "contact": "none"}
    else:  # SimulatedSystem builds its physics from this URDF; the demo sets one 2 ms step per 500 Hz cycle
        assert params(hardware) == {"dt": "0.002"}
    assert [joint.get("name") for joint in block.findall("joint")] == [j.name for j in movable_joints(robot)]
    for element in block.findall("joint"):
        limit = robot.joint_map[element.get("name")].limit
        commands = element.findall("command_interface")
        assert commands, f"{element.get('name')}: no command interface"
        expected_range = {
            "position": (limit.lower, limit.upper),
            "velocity": (-limit.velocity, limit.velocity),
            "effort": (-limit.effort, limit.effort),
        }
        for command in commands:
            name = command.get("name")
            assert name in STANDARD_JOINT_INTERFACES, f"{element.get('name')}: command interface {name!r}"
            values = params(command)
            assert (float(values["min"]), float(values["max"])) == expected_range[name]
        states = element.findall("state_interface")
        assert [state.get("name") for state in states] == JOINT_STATE_INTERFACES
        position = float(params(states[0])["initial_value"])
        assert limit.lower <= position <= limit.upper, f"{element.get('name')}: nominal outside the limits"
    for sensor in block.findall("sensor"):
        assert sensor.get("name") == "imu_sensor"
        assert [state.get("name") for state in sensor.findall("state_interface")] == IMU_INTERFACES
        assert params(sensor)["frame_id"] in robot.link_map


def test_committed_files_equal_the_generator_output() -> None:
    spec = importlib.util.spec_from_file_location("kinodyn_urdf_generate", URDF_DIR / "generate.py")
    generator = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = generator  # dataclasses resolve their module through sys.modules
    try:
        spec.loader.exec_module(generator)
        generated = generator.robots()
    finally:
        del sys.modules[spec.name]
    assert set(generated) == SHIPPED
    for file_name, text in generated.items():
        assert (URDF_DIR / file_name).read_text() == text, f"{file_name} differs: run python urdf/generate.py"


@pytest.mark.parametrize("path", URDF_FILES, ids=lambda p: p.name)
def test_pinocchio_loads_the_same_tree(path: Path) -> None:
    robot = load(path)
    model, _ = pinocchio_model(path)
    assert list(model.names)[1:] == [joint.name for joint in movable_joints(robot)]
    moving_mass = sum(
        link.inertial.mass for link in robot.links if link.inertial and link.name != "base_link"
    )
    assert pin.computeTotalMass(model) == pytest.approx(moving_mass, rel=1e-14)


# --- (a) planar 2-link arm ----------------------------------------------------------------------------------

PLANAR = URDF_DIR / "planar_2link.urdf"


def readme_planar_parameters() -> dict[str, float]:
    readme = (URDF_DIR / "README.md").read_text()
    section = readme[readme.index("## (a)") : readme.index("## (b)")]
    rows = re.findall(r"^\|\s*`(\w+)`\s*\|\s*([-+0-9.eE]+)\s*\|", section, re.M)
    values = dict(rows)
    assert len(values) == len(rows) == 8, f"README parameter table rows: {rows}"
    return {name: float(value) for name, value in values.items()}


def planar_closed_form(p: dict[str, float], q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, ...]:
    """The 2-link arm's M, b, g (urdf/README.md (a)): joints about +y, links along +z, gravity -z."""
    m1, m2, l1, lc1, lc2, I1, I2 = (p[k] for k in ("m1", "m2", "l1", "lc1", "lc2", "I1", "I2"))
    s1, s2, s12, c2 = math.sin(q[0]), math.sin(q[1]), math.sin(q[0] + q[1]), math.cos(q[1])
    M12 = I2 + m2 * (lc2**2 + l1 * lc2 * c2)
    M = np.array(
        [[I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2), M12], [M12, I2 + m2 * lc2**2]]
    )
    b = np.array([-m2 * l1 * lc2 * s2 * (2 * qd[0] * qd[1] + qd[1] ** 2), m2 * l1 * lc2 * s2 * qd[0] ** 2])
    g = np.array([-m1 * GRAVITY * lc1 * s1 - m2 * GRAVITY * (l1 * s1 + lc2 * s12), -m2 * GRAVITY * lc2 * s12])
    return M, b, g


def test_planar_parameters_equal_the_readme() -> None:
    robot = load(PLANAR)
    joint1, joint2, tool = (robot.joint_map[name] for name in ("joint1", "joint2", "tool_joint"))
    assert joint1.axis == joint2.axis == [0.0, 1.0, 0.0]
    for joint in (joint1, joint2, tool):
        assert joint.origin.rpy == [0.0, 0.0, 0.0]
        assert joint.origin.xyz[:2] == [0.0, 0.0]
    link1, link2 = robot.link_map["link1"].inertial, robot.link_map["link2"].inertial
    for inertial in (link1, link2):
        assert inertial.origin.rpy == [0.0, 0.0, 0.0]
        assert inertial.origin.xyz[:2] == [0.0, 0.0]
    from_urdf = {
        "m1": link1.mass, "m2": link2.mass, "l1": joint2.origin.xyz[2], "l2": tool.origin.xyz[2],
        "lc1": link1.origin.xyz[2], "lc2": link2.origin.xyz[2],
        "I1": link1.inertia.iyy, "I2": link2.inertia.iyy,
    }  # fmt: skip
    readme = readme_planar_parameters()
    assert readme.keys() == from_urdf.keys()
    for name, value in readme.items():
        assert from_urdf[name] == pytest.approx(value, rel=1e-15, abs=1e-16), name


def test_planar_dynamics_realise_the_closed_form() -> None:
    parameters = readme_planar_parameters()
    model, data = pinocchio_model(PLANAR)
    model.gravity.linear = np.array([0.0, 0.0, -GRAVITY])
    rng = np.random.default_rng(RNG_SEED)
    for q, qd in [(np.array([0.3, -0.5]), np.array([1.0, 2.0]))] + [
        (rng.uniform(-math.pi, math.pi, 2), rng.uniform(-3, 3, 2)) for _ in range(5)
    ]:
        M, b, g = planar_closed_form(parameters, q, qd)
        np.testing.assert_allclose(pin.crba(model, data, q), M, rtol=0, atol=1e-12)
        np.testing.assert_allclose(pin.computeGeneralizedGravity(model, data, q), g, rtol=0, atol=1e-12)
        np.testing.assert_allclose(pin.rnea(model, data, q, qd, np.zeros(2)) - g, b, rtol=0, atol=1e-12)
        tool = link_pose(load(PLANAR), "tool", {"joint1": q[0], "joint2": q[1]})[:3, 3]
        l1, l2 = parameters["l1"], parameters["l2"]
        expected = [
            l1 * math.sin(q[0]) + l2 * math.sin(q.sum()),
            0.0,
            l1 * math.cos(q[0]) + l2 * math.cos(q.sum()),
        ]
        np.testing.assert_allclose(tool, expected, rtol=0, atol=1e-14)


def test_planar_matches_the_printed_numbers() -> None:
    """urdf/README.md (a) prints M, b, g to 4 decimals at q = (0.3, -0.5), q̇ = (1, 2)."""
    M, b, g = planar_closed_form(readme_planar_parameters(), np.array([0.3, -0.5]), np.array([1.0, 2.0]))
    np.testing.assert_allclose(M, [[4.2741, 1.2221], [1.2221, 0.5200]], rtol=0, atol=5e-5)
    np.testing.assert_allclose(b, [3.0683, -0.3835], rtol=0, atol=5e-5)
    np.testing.assert_allclose(g, [-5.6885, 1.5592], rtol=0, atol=5e-5)


# --- (b) arm7 -----------------------------------------------------------------------------------------------

ARM7 = URDF_DIR / "arm7.urdf"
PANDA = Path(pin.__file__).parents[4] / "share/example-robot-data/robots/panda_description/urdf/panda.urdf"


def test_arm7_has_the_panda_limits_and_panda_scale_masses() -> None:
    robot = load(ARM7)
    panda = URDF.from_xml_string(PANDA.read_text())
    assert [joint.name for joint in movable_joints(robot)] == [f"joint{i}" for i in range(1, 8)]
    for i in range(1, 8):
        ours, theirs = robot.joint_map[f"joint{i}"], panda.joint_map[f"panda_joint{i}"]
        assert (ours.limit.lower, ours.limit.upper) == (theirs.limit.lower, theirs.limit.upper)
        assert (ours.limit.velocity, ours.limit.effort) == (theirs.limit.velocity, theirs.limit.effort)
        assert 0 < ours.dynamics.damping <= 0.1
        assert 0 <= ours.dynamics.friction <= 0.2
        assert 2.0 <= robot.link_map[f"link{i}"].inertial.mass <= 4.0
    assert robot.joint_map["ee_joint"].parent == "link7"
    assert robot.joint_map["ee_joint"].origin.xyz == [
        0,
        0,
        0.107,
    ]


def test_arm7_moves_like_the_panda() -> None:
    """ee_link follows panda_link8 (the Panda flange) for random configurations within the limits."""
    robot = load(ARM7)
    model, data = pinocchio_model(ARM7)
    panda_model, panda_data = pinocchio_model(PANDA)
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(10):
        q = {
            f"joint{i}": rng.uniform(
                robot.joint_map[f"joint{i}"].limit.lower, robot.joint_map[f"joint{i}"].limit.upper
            )
            for i in range(1, 8)
        }
        pin.framesForwardKinematics(model, data, pinocchio_q(model, q))
        panda_q = pinocchio_q(panda_model, {f"panda_{name}": value for name, value in q.items()})
        pin.framesForwardKinematics(panda_model, panda_data, panda_q)
        ours = data.oMf[model.getFrameId("ee_link")].homogeneous
        np.testing.assert_allclose(
            ours, panda_data.oMf[panda_model.getFrameId("panda_link8")].homogeneous, atol=1e-12
        )
        np.testing.assert_allclose(link_pose(robot, "ee_link", q), ours, rtol=0, atol=1e-12)


# --- (c) quadruped ------------------------------------------------------------------------------------------

QUADRUPED = URDF_DIR / "quadruped.urdf"
LEGS = ("LF", "LH", "RF", "RH")


def test_quadruped_structure() -> None:
    robot = load(QUADRUPED)
    axes = {"HAA": [1.0, 0.0, 0.0], "HFE": [0.0, 1.0, 0.0], "KFE": [0.0, 1.0, 0.0]}
    expected = [f"{leg}_{joint}" for leg in LEGS for joint in axes]
    assert [joint.name for joint in movable_joints(robot)] == expected
    for name in expected:
        assert robot.joint_map[name].axis == axes[name.split("_")[1]]
    feet = [link for link in robot.links if link.name.endswith("_FOOT")]
    assert [foot.name for foot in feet] == [f"{leg}_FOOT" for leg in LEGS]
    for foot in feet:
        assert robot.parent_map[foot.name] == (
            foot.name.replace("FOOT", "foot_fixed"),
            foot.name[:2] + "_SHANK",
        )
        assert isinstance(foot.collisions[0].geometry, Sphere)
        assert foot.collisions[0].origin.xyz == [0.0, 0.0, 0.0], "the foot frame is the contact sphere centre"
    imu_joint, imu_parent = robot.parent_map["imu_link"]
    assert imu_parent == "base_link"
    assert robot.joint_map[imu_joint].type == "fixed"
    assert len(ros2_control(QUADRUPED).findall("sensor")) == 1


def test_quadruped_stands_on_its_feet_at_the_nominal_configuration() -> None:
    robot = load(QUADRUPED)
    nominal = nominal_configuration(QUADRUPED)
    base_bottom = -robot.link_map["base_link"].collisions[0].geometry.size[2] / 2
    model, data = pinocchio_model(QUADRUPED)
    pin.framesForwardKinematics(model, data, pinocchio_q(model, nominal))
    heights = []
    for leg in LEGS:
        foot = link_pose(robot, f"{leg}_FOOT", nominal)[:3, 3]
        hip = link_pose(robot, f"{leg}_THIGH", nominal)[:3, 3]
        np.testing.assert_allclose(
            foot, data.oMf[model.getFrameId(f"{leg}_FOOT")].translation, rtol=0, atol=1e-14
        )
        radius = robot.link_map[f"{leg}_FOOT"].collisions[0].geometry.radius
        assert foot[2] + radius < base_bottom - 0.3, f"{leg}: foot at {foot} is not well below the base"
        assert np.hypot(*(foot - hip)[:2]) < 1e-12, (
            f"{leg}: foot {foot} not straight below the HFE joint {hip}"
        )
        heights.append(foot[2])
    assert np.ptp(heights) < 1e-14, f"feet not level: {heights}"
