"""Generates the three robots the project ships: planar_2link.urdf, arm7.urdf and quadruped.urdf.

Every link with mass is one primitive (box, cylinder or sphere). Its inertia is computed here from that
primitive and the mass, about the primitive centre and in the primitive's frame, and the `<inertial>`,
`<visual>` and `<collision>` elements share that one origin, so the inertia is consistent with the geometry
by construction. Each file ends with a `<ros2_control>` block for
`kinodyn_control/GenericSystem`.

Usage: `python urdf/generate.py` rewrites the three files next to this script. The output is deterministic;
test/test_urdf_files.py checks that the committed files equal it. The numbers and their sources are in
urdf/README.md.
"""

from __future__ import annotations

import dataclasses
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

Hardware = tuple[str, tuple[tuple[str, str], ...]]  # plugin, <param>s of the <hardware> tag
# Only the plugin: GenericSystem's defaults (calculate_dynamics false) are what the robots need, so swapping
# the plugin for kinodyn_control/SimulatedSystem (every param has a default) is the only change to simulate.
MOCK_HARDWARE: Hardware = ("kinodyn_control/GenericSystem", ())
# The quadruped demo in kinodyn.sim (config/quadruped_sim.yaml): defaults (floating base, RK4, soft ground
# contact) except one 2 ms physics step per 500 Hz control cycle.
SIM_HARDWARE: Hardware = ("kinodyn_control/SimulatedSystem", (("dt", "0.002"),))
# arm7 in kinodyn.sim (config/arm7_wbc.yaml): fixed to the world (its root link is base_link, not world), no
# ground contact, 2 ms steps; the simulator takes effort commands only, so its joints command effort alone.
ARM7_SIM_HARDWARE: Hardware = ("kinodyn_control/SimulatedSystem",
                               (("floating_base", "false"), ("dt", "0.002"), ("contact", "none")))
# The IMU's 10 standard state interfaces, each with the reading of an IMU at rest and level (identity
# orientation, no rotation, specific force +g up), so mock hardware reports a plausible IMU from the start.
IMU_STATE_INTERFACES = {
    "orientation.x": 0.0,
    "orientation.y": 0.0,
    "orientation.z": 0.0,
    "orientation.w": 1.0,
    "angular_velocity.x": 0.0,
    "angular_velocity.y": 0.0,
    "angular_velocity.z": 0.0,
    "linear_acceleration.x": 0.0,
    "linear_acceleration.y": 0.0,
    "linear_acceleration.z": 9.81,
}
JOINT_STATE_INTERFACES = ("position", "velocity", "effort")

Vec3 = tuple[float, float, float]
ZERO3: Vec3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Box:
    size: Vec3


@dataclass(frozen=True)
class Cylinder:
    """A solid cylinder whose axis is the z axis of its frame (URDF convention)."""

    radius: float
    length: float


@dataclass(frozen=True)
class Sphere:
    radius: float


Shape = Box | Cylinder | Sphere


def principal_inertia(shape: Shape, mass: float) -> Vec3:
    """Moments (Ixx, Iyy, Izz) of a uniform solid about its centre, in its own frame (products are zero)."""
    if isinstance(shape, Box):
        x, y, z = shape.size
        return (mass / 12 * (y * y + z * z), mass / 12 * (x * x + z * z), mass / 12 * (x * x + y * y))
    if isinstance(shape, Cylinder):
        radial = mass / 12 * (3 * shape.radius**2 + shape.length**2)
        return (radial, radial, mass / 2 * shape.radius**2)
    moment = 2 / 5 * mass * shape.radius**2
    return (moment, moment, moment)


@dataclass(frozen=True)
class Body:
    """A uniform primitive of the given mass, centred at `xyz` and oriented by `rpy` in its link frame."""

    shape: Shape
    mass: float
    xyz: Vec3 = ZERO3
    rpy: Vec3 = ZERO3


@dataclass(frozen=True)
class Link:
    name: str
    body: Body | None = None  # None: a massless frame (tool, end effector, IMU)
    contact_spheres: tuple[tuple[Vec3, float], ...] = ()  # (centre, radius): extra collision spheres


@dataclass(frozen=True)
class Limit:
    lower: float
    upper: float
    effort: float
    velocity: float


@dataclass(frozen=True)
class Joint:
    name: str
    parent: str
    child: str
    xyz: Vec3 = ZERO3
    rpy: Vec3 = ZERO3
    axis: Vec3 | None = None  # None: a fixed joint
    limit: Limit | None = None
    damping: float | None = None
    friction: float | None = None


@dataclass(frozen=True)
class ControlledJoint:
    """A joint in the `<ros2_control>` block: its command interfaces and its nominal position."""

    name: str
    command_interfaces: tuple[str, ...]
    nominal: float


@dataclass(frozen=True)
class Robot:
    name: str
    comments: tuple[str, ...]
    links: tuple[Link, ...]
    joints: tuple[Joint, ...]
    controlled: tuple[ControlledJoint, ...]
    imu_frame: str | None = None
    hardware: Hardware = MOCK_HARDWARE


def fmt(value: float) -> str:
    """Shortest text that parses back to the same float (no '-0.0')."""
    return repr(float(value) + 0.0)


def fmt3(values: Vec3) -> str:
    return " ".join(fmt(v) for v in values)


def axis_rpy(direction: Vec3) -> Vec3:
    """URDF rpy of a frame whose z axis points along `direction` (yaw about z after pitch about y)."""
    x, y, z = direction
    return (0.0, math.atan2(math.hypot(x, y), z), math.atan2(y, x) if math.hypot(x, y) > 0 else 0.0)


def segment_cylinder(start: Vec3, end: Vec3, radius: float, mass: float) -> Body:
    """A cylinder whose axis runs from `start` to `end` (link-frame points)."""
    direction = (end[0] - start[0], end[1] - start[1], end[2] - start[2])
    centre = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, (start[2] + end[2]) / 2)
    return Body(Cylinder(radius, math.dist(start, end)), mass, centre, axis_rpy(direction))


def _origin(parent: ET.Element, xyz: Vec3, rpy: Vec3) -> None:
    ET.SubElement(parent, "origin", xyz=fmt3(xyz), rpy=fmt3(rpy))


def _geometry(parent: ET.Element, shape: Shape) -> None:
    geometry = ET.SubElement(parent, "geometry")
    if isinstance(shape, Box):
        ET.SubElement(geometry, "box", size=fmt3(shape.size))
    elif isinstance(shape, Cylinder):
        ET.SubElement(geometry, "cylinder", radius=fmt(shape.radius), length=fmt(shape.length))
    else:
        ET.SubElement(geometry, "sphere", radius=fmt(shape.radius))


def _link_element(link: Link) -> ET.Element:
    element = ET.Element("link", name=link.name)
    for centre, radius in link.contact_spheres:  # the simulator's contact points (kinodyn.sim.collision)
        collision = ET.SubElement(element, "collision")
        _origin(collision, centre, ZERO3)
        _geometry(collision, Sphere(radius))
    body = link.body
    if body is None:
        return element
    inertial = ET.SubElement(element, "inertial")
    _origin(inertial, body.xyz, body.rpy)
    ET.SubElement(inertial, "mass", value=fmt(body.mass))
    ixx, iyy, izz = principal_inertia(body.shape, body.mass)
    moments = {"ixx": fmt(ixx), "ixy": "0.0", "ixz": "0.0", "iyy": fmt(iyy), "iyz": "0.0", "izz": fmt(izz)}
    ET.SubElement(inertial, "inertia", moments)
    for tag in ("visual", "collision"):
        shape_element = ET.SubElement(element, tag)
        _origin(shape_element, body.xyz, body.rpy)
        _geometry(shape_element, body.shape)
    return element


def _joint_element(joint: Joint) -> ET.Element:
    element = ET.Element("joint", name=joint.name, type="fixed" if joint.axis is None else "revolute")
    _origin(element, joint.xyz, joint.rpy)
    ET.SubElement(element, "parent", link=joint.parent)
    ET.SubElement(element, "child", link=joint.child)
    if joint.axis is not None:
        ET.SubElement(element, "axis", xyz=fmt3(joint.axis))
    if joint.limit is not None:
        lim = joint.limit
        ET.SubElement(
            element,
            "limit",
            lower=fmt(lim.lower),
            upper=fmt(lim.upper),
            effort=fmt(lim.effort),
            velocity=fmt(lim.velocity),
        )
    if joint.damping is not None and joint.friction is not None:
        ET.SubElement(element, "dynamics", damping=fmt(joint.damping), friction=fmt(joint.friction))
    return element


def _param(parent: ET.Element, name: str, value: str) -> None:
    ET.SubElement(parent, "param", name=name).text = value


def command_range(interface: str, limit: Limit) -> tuple[float, float]:
    """The `min`/`max` params of a command interface: the URDF joint limits of that quantity."""
    if interface == "position":
        return limit.lower, limit.upper
    if interface == "velocity":
        return -limit.velocity, limit.velocity
    if interface == "effort":
        return -limit.effort, limit.effort
    raise ValueError(f"no URDF limit for command interface {interface!r}; use position, velocity or effort")


def _ros2_control_element(robot: Robot) -> ET.Element:
    element = ET.Element("ros2_control", name=f"{robot.name}_system", type="system")
    hardware = ET.SubElement(element, "hardware")
    plugin, params = robot.hardware
    ET.SubElement(hardware, "plugin").text = plugin
    for name, value in params:
        _param(hardware, name, value)
    limits = {joint.name: joint.limit for joint in robot.joints if joint.limit is not None}
    for controlled in robot.controlled:
        joint_element = ET.SubElement(element, "joint", name=controlled.name)
        for interface in controlled.command_interfaces:
            low, high = command_range(interface, limits[controlled.name])
            command = ET.SubElement(joint_element, "command_interface", name=interface)
            _param(command, "min", fmt(low))
            _param(command, "max", fmt(high))
        for interface in JOINT_STATE_INTERFACES:
            state = ET.SubElement(joint_element, "state_interface", name=interface)
            _param(state, "initial_value", fmt(controlled.nominal if interface == "position" else 0.0))
    if robot.imu_frame is not None:
        sensor = ET.SubElement(element, "sensor", name="imu_sensor")
        for interface, at_rest in IMU_STATE_INTERFACES.items():
            state = ET.SubElement(sensor, "state_interface", name=interface)
            _param(state, "initial_value", fmt(at_rest))
        _param(sensor, "frame_id", robot.imu_frame)
    return element


def render(robot: Robot) -> str:
    """The URDF text of `robot`."""
    root = ET.Element("robot", name=robot.name)
    for comment in robot.comments:
        root.append(ET.Comment(f" {comment} "))
    for link in robot.links:
        root.append(_link_element(link))
    for joint in robot.joints:
        root.append(_joint_element(joint))
    root.append(_ros2_control_element(robot))
    ET.indent(root, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --- (a) planar 2-link arm: Robot Dynamics lecture notes (ETH), Ex. 2.8.5, with masses ------------------

PLANAR_M1, PLANAR_M2 = 1.0, 2.0  # link masses [kg]
PLANAR_L1, PLANAR_L2 = 1.0, 0.8  # joint 1 -> joint 2, joint 2 -> tool [m]
PLANAR_LC1, PLANAR_LC2 = 0.5, 0.4  # joint -> link CoM along the link [m]
PLANAR_I1, PLANAR_I2 = 0.1, 0.2  # inertia about the CoM, about the joint axis y [kg m^2]
PLANAR_THICKNESS = 0.05  # plate thickness along y, the joint axis [m]


def plate(mass: float, length: float, inertia_about_y: float) -> Box:
    """A uniform plate in the x-z plane, `length` along z, as wide along x as `inertia_about_y` requires.

    Iyy = m (w² + length²) / 12, so w = sqrt(12 Iyy / m - length²); a thin rod (w -> 0) cannot reach the
    README's inertias, a plate can.
    """
    width = math.sqrt(12 * inertia_about_y / mass - length**2)
    return Box((width, PLANAR_THICKNESS, length))


def planar_2link() -> Robot:
    """The 2-link planar arm of the Robot Dynamics lecture notes (ETH), Ex. 2.8.5, with masses (urdf/README.md
    (a)): joints about +y, links along +z at q = 0, gravity along -z."""
    revolute_y = (0.0, 1.0, 0.0)
    return Robot(
        name="planar_2link",
        comments=(
            "Planar 2-link arm of the Robot Dynamics lecture notes (ETH), Ex. 2.8.5, with masses (README):",
            "joints about +y, links along +z at q = 0, motion in the x-z plane, gravity -z in that plane.",
            f"Closed-form parameters: m1={fmt(PLANAR_M1)} m2={fmt(PLANAR_M2)} l1={fmt(PLANAR_L1)} "
            f"l2={fmt(PLANAR_L2)} lc1={fmt(PLANAR_LC1)} lc2={fmt(PLANAR_LC2)} I1={fmt(PLANAR_I1)} "
            f"I2={fmt(PLANAR_I2)} (SI units).",
            "I1, I2 are CoM inertias about y; the links are uniform plates whose width gives them exactly.",
            "M11 = I1+I2+m1 lc1^2+m2(l1^2+lc2^2+2 l1 lc2 c2), M12 = I2+m2(lc2^2+l1 lc2 c2),",
            "M22 = I2+m2 lc2^2,",
            "g(q) = (-m1 g lc1 s1 - m2 g (l1 s1 + lc2 s12), -m2 g lc2 s12). No joint damping or friction.",
        ),
        links=(
            Link("base_link", Body(Box((0.2, 0.2, 0.1)), 2.0, (0.0, 0.0, -0.05))),
            Link("link1", Body(plate(PLANAR_M1, PLANAR_L1, PLANAR_I1), PLANAR_M1, (0.0, 0.0, PLANAR_LC1))),
            Link("link2", Body(plate(PLANAR_M2, PLANAR_L2, PLANAR_I2), PLANAR_M2, (0.0, 0.0, PLANAR_LC2))),
            Link("tool"),
        ),
        joints=(
            Joint(
                "joint1", "base_link", "link1", axis=revolute_y, limit=Limit(-math.pi, math.pi, 50.0, 10.0)
            ),
            Joint(
                "joint2",
                "link1",
                "link2",
                xyz=(0.0, 0.0, PLANAR_L1),
                axis=revolute_y,
                limit=Limit(-math.pi, math.pi, 20.0, 10.0),
            ),
            Joint("tool_joint", "link2", "tool", xyz=(0.0, 0.0, PLANAR_L2)),
        ),
        controlled=(ControlledJoint("joint1", ("effort",), 0.0), ControlledJoint("joint2", ("effort",), 0.0)),
    )


# --- (b) 7-DoF torque-controlled arm at Franka Panda scale ------------------------------------------------

HALF_PI = math.pi / 2
ARM7_RADIUS = 0.06  # every link is a cylinder of this radius [m]
ARM7_HOUSING = 0.12  # length of the joint housing of links whose next joint has no offset [m]
# Joint origins of the Panda URDF (DH: d1=0.333, d3=0.316, a4=0.0825, a5=-0.0825, d5=0.384, a7=0.088),
# limits (lower, upper, effort, velocity), link masses [kg], and the nominal "ready" pose.
ARM7_JOINTS: tuple[tuple[Vec3, Vec3, Limit, float, float], ...] = (
    ((0.0, 0.0, 0.333), (0.0, 0.0, 0.0), Limit(-2.8973, 2.8973, 87.0, 2.175), 3.0, 0.0),
    ((0.0, 0.0, 0.0), (-HALF_PI, 0.0, 0.0), Limit(-1.7628, 1.7628, 87.0, 2.175), 3.0, -math.pi / 4),
    ((0.0, -0.316, 0.0), (HALF_PI, 0.0, 0.0), Limit(-2.8973, 2.8973, 87.0, 2.175), 2.5, 0.0),
    ((0.0825, 0.0, 0.0), (HALF_PI, 0.0, 0.0), Limit(-3.0718, -0.0698, 87.0, 2.175), 2.5, -3 * math.pi / 4),
    ((-0.0825, 0.384, 0.0), (-HALF_PI, 0.0, 0.0), Limit(-2.8973, 2.8973, 12.0, 2.61), 2.5, 0.0),
    ((0.0, 0.0, 0.0), (HALF_PI, 0.0, 0.0), Limit(-0.0175, 3.7525, 12.0, 2.61), 2.0, math.pi / 2),
    ((0.088, 0.0, 0.0), (HALF_PI, 0.0, 0.0), Limit(-2.8973, 2.8973, 12.0, 2.61), 2.0, math.pi / 4),
)
ARM7_FLANGE: Vec3 = (0.0, 0.0, 0.107)
ARM7_BASE_MASS = 4.0
ARM7_DAMPING, ARM7_FRICTION = 0.05, 0.1  # viscous [N m s/rad], Coulomb [N m]


def rpy_z_axis(rpy: Vec3) -> Vec3:
    """The z axis of a frame with URDF angles rpy (R = Rz(yaw) Ry(pitch) Rx(roll)), in the parent frame."""
    roll, pitch, yaw = rpy
    return (
        math.cos(yaw) * math.sin(pitch) * math.cos(roll) + math.sin(yaw) * math.sin(roll),
        math.sin(yaw) * math.sin(pitch) * math.cos(roll) - math.cos(yaw) * math.sin(roll),
        math.cos(pitch) * math.cos(roll),
    )


def arm7_link_body(next_xyz: Vec3, next_rpy: Vec3, mass: float) -> Body:
    """The cylinder from the link origin to the next joint; if they meet, a housing along that joint axis."""
    if math.hypot(*next_xyz) > 0:
        return segment_cylinder(ZERO3, next_xyz, ARM7_RADIUS, mass)
    return Body(Cylinder(ARM7_RADIUS, ARM7_HOUSING), mass, ZERO3, axis_rpy(rpy_z_axis(next_rpy)))


def arm7() -> Robot:
    """A 7-DoF arm with the Panda's kinematics and limits, cylinders for links (README: table (b))."""
    names = ["base_link"] + [f"link{i}" for i in range(1, 8)]
    next_origins = [(xyz, rpy) for xyz, rpy, *_ in ARM7_JOINTS] + [(ARM7_FLANGE, ZERO3)]
    masses = [ARM7_BASE_MASS] + [mass for *_, mass, _ in ARM7_JOINTS]
    links = [
        Link(name, arm7_link_body(xyz, rpy, mass))
        for name, (xyz, rpy), mass in zip(names, next_origins, masses, strict=True)
    ]
    joints = [
        Joint(
            f"joint{i}",
            names[i - 1],
            names[i],
            xyz,
            rpy,
            (0.0, 0.0, 1.0),
            limit,
            ARM7_DAMPING,
            ARM7_FRICTION,
        )
        for i, (xyz, rpy, limit, _, _) in enumerate(ARM7_JOINTS, start=1)
    ]
    return Robot(
        name="arm7",
        comments=(
            "7-DoF torque-controlled arm at Franka Panda scale: the Panda URDF's joint origins and limits,",
            "one uniform cylinder per link (radius 0.06 m) from the link origin to the next joint origin,",
            "or a 0.12 m housing along the next joint axis when they coincide. Masses in urdf/README.md.",
        ),
        links=(*links, Link("ee_link")),
        joints=(*joints, Joint("ee_joint", "link7", "ee_link", ARM7_FLANGE)),
        controlled=tuple(
            ControlledJoint(f"joint{i}", ("position", "effort"), nominal)
            for i, (*_, nominal) in enumerate(ARM7_JOINTS, start=1)
        ),
    )


# --- (c) 12-DoF quadruped at ANYmal scale ------------------------------------------------------------------

BASE_SIZE: Vec3 = (0.6, 0.3, 0.15)
BASE_MASS = 20.0
HAA_X, HAA_Y = 0.25, 0.1  # HAA joint positions (±x, ±y) in base_link [m]
HIP_OFFSET = 0.1  # HAA -> HFE, laterally outwards [m]
THIGH_LENGTH = SHANK_LENGTH = 0.3  # HFE -> KFE, KFE -> foot centre, along -z at q = 0 [m]
HIP_RADIUS, THIGH_RADIUS, SHANK_RADIUS, FOOT_RADIUS = 0.05, 0.03, 0.02, 0.03
HIP_MASS, THIGH_MASS, SHANK_MASS, FOOT_MASS = 2.0, 1.5, 0.4, 0.1
IMU_XYZ: Vec3 = (0.0, 0.0, 0.05)
LEG_EFFORT, LEG_VELOCITY = 80.0, 8.0
HAA_RANGE = (-0.8, 0.8)
HFE_RANGE = (-2.0, 2.0)
KFE_FRONT_RANGE = (-2.6, 0.0)  # front knees bend backwards (KFE < 0); hind legs mirror this
HFE_NOMINAL, KFE_NOMINAL = 0.6, -1.2  # front legs; hind legs use the negatives
# name, fore/aft sign, left/right sign. Alphabetical, so that the depth-first joint order of the file equals
# that of parsers which visit child joints sorted by name (urdfdom, hence Pinocchio).
LEGS = (("LF", 1, 1), ("LH", -1, 1), ("RF", 1, -1), ("RH", -1, -1))


def leg(name: str, fore: int, side: int) -> tuple[list[Link], list[Joint], list[ControlledJoint]]:
    """Hip (HAA about x), thigh (HFE about y), shank (KFE about y), and a foot frame with a contact sphere."""
    down: Vec3 = (0.0, 0.0, -THIGH_LENGTH)
    links = [
        Link(f"{name}_HIP", segment_cylinder(ZERO3, (0.0, side * HIP_OFFSET, 0.0), HIP_RADIUS, HIP_MASS)),
        Link(f"{name}_THIGH", segment_cylinder(ZERO3, down, THIGH_RADIUS, THIGH_MASS)),
        Link(f"{name}_SHANK", segment_cylinder(ZERO3, (0.0, 0.0, -SHANK_LENGTH), SHANK_RADIUS, SHANK_MASS)),
        Link(f"{name}_FOOT", Body(Sphere(FOOT_RADIUS), FOOT_MASS)),
    ]
    knee_range = KFE_FRONT_RANGE if fore > 0 else (-KFE_FRONT_RANGE[1], -KFE_FRONT_RANGE[0])
    x_axis, y_axis = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)
    joints = [
        Joint(
            f"{name}_HAA",
            "base_link",
            f"{name}_HIP",
            (fore * HAA_X, side * HAA_Y, 0.0),
            axis=x_axis,
            limit=Limit(*HAA_RANGE, LEG_EFFORT, LEG_VELOCITY),
        ),
        Joint(
            f"{name}_HFE",
            f"{name}_HIP",
            f"{name}_THIGH",
            (0.0, side * HIP_OFFSET, 0.0),
            axis=y_axis,
            limit=Limit(*HFE_RANGE, LEG_EFFORT, LEG_VELOCITY),
        ),
        Joint(
            f"{name}_KFE",
            f"{name}_THIGH",
            f"{name}_SHANK",
            down,
            axis=y_axis,
            limit=Limit(*knee_range, LEG_EFFORT, LEG_VELOCITY),
        ),
        Joint(f"{name}_foot_fixed", f"{name}_SHANK", f"{name}_FOOT", (0.0, 0.0, -SHANK_LENGTH)),
    ]
    nominal = (0.0, fore * HFE_NOMINAL, fore * KFE_NOMINAL)
    controlled = [
        ControlledJoint(f"{name}_{joint}", ("effort",), value)
        for joint, value in zip(("HAA", "HFE", "KFE"), nominal, strict=True)
    ]
    return links, joints, controlled


def quadruped() -> Robot:
    """A 12-DoF quadruped between ANYmal and Solo in size (README: table (c))."""
    links = [Link("base_link", Body(Box(BASE_SIZE), BASE_MASS))]
    joints: list[Joint] = []
    controlled: list[ControlledJoint] = []
    for name, fore, side in LEGS:
        leg_links, leg_joints, leg_controlled = leg(name, fore, side)
        links += leg_links
        joints += leg_joints
        controlled += leg_controlled
    links.append(Link("imu_link"))
    joints.append(Joint("imu_joint", "base_link", "imu_link", IMU_XYZ))
    return Robot(
        name="quadruped",
        comments=(
            "12-DoF quadruped at ANYmal scale: box base, legs LF LH RF RH with HAA (x), HFE (y), KFE (y),",
            "foot frames at the centre of a contact sphere, an IMU frame fixed to the base.",
            f"Nominal stance: HAA 0; front HFE {fmt(HFE_NOMINAL)}, KFE {fmt(KFE_NOMINAL)}; "
            f"hind HFE {fmt(-HFE_NOMINAL)}, KFE {fmt(-KFE_NOMINAL)}.",
        ),
        links=tuple(links),
        joints=tuple(joints),
        controlled=tuple(controlled),
        imu_frame="imu_link",
    )


# --- (d) a 12-DoF legged humanoid on flat feet (generated for tests, not shipped as a file) -------------

HUMANOID_TORSO = Box((0.2, 0.3, 0.5))
HUMANOID_TORSO_MASS = 20.0
HUMANOID_HIP_Y = 0.1  # base origin (between the hips) -> each hip, along y [m]
HUMANOID_THIGH, HUMANOID_SHANK = 0.4, 0.4  # [m]
HUMANOID_ANKLE_HEIGHT = 0.06  # ankle axis above the sole [m]
HUMANOID_FOOT = Box((0.22, 0.11, 0.04))  # sole: half-length 0.11, half-width 0.055
HUMANOID_FOOT_X = 0.02  # the foot's centre ahead of the ankle [m]
HUMANOID_SOLE_SPHERE = 0.01  # radius of the four contact spheres under the sole's corners [m]
HUMANOID_EFFORT, HUMANOID_VELOCITY = 300.0, 10.0
# hip yaw (z), hip roll (x), hip pitch (y), knee (y), ankle pitch (y), ankle roll (x); knees bend forwards
HUMANOID_JOINTS = (("HIP_YAW", (0.0, 0.0, 1.0), (-0.8, 0.8)), ("HIP_ROLL", (1.0, 0.0, 0.0), (-0.6, 0.6)),
                   ("HIP_PITCH", (0.0, 1.0, 0.0), (-2.0, 1.0)), ("KNEE", (0.0, 1.0, 0.0), (0.0, 2.4)),
                   ("ANKLE_PITCH", (0.0, 1.0, 0.0), (-1.0, 1.0)),
                   ("ANKLE_ROLL", (1.0, 0.0, 0.0), (-0.5, 0.5)))
HUMANOID_NOMINAL = {"HIP_PITCH": -0.35, "KNEE": 0.7, "ANKLE_PITCH": -0.35}  # flat feet, knees bent


def humanoid_leg(side_name: str, side: int) -> tuple[list[Link], list[Joint], list[ControlledJoint]]:
    """Hip yaw-roll-pitch at one point, knee, ankle pitch-roll at one point, a box foot and its sole frame
    ``<side>_SOLE`` (the sole's centre, z up) with contact spheres under the corners."""
    small = Body(Cylinder(0.04, 0.06), 0.5)
    hx, hy, hz = HUMANOID_FOOT.size
    corners = tuple(((sx * hx / 2, sy * hy / 2, HUMANOID_SOLE_SPHERE), HUMANOID_SOLE_SPHERE)
                    for sx in (1, -1) for sy in (1, -1))
    bodies = [small, small, segment_cylinder(ZERO3, (0.0, 0.0, -HUMANOID_THIGH), 0.05, 4.0),
              segment_cylinder(ZERO3, (0.0, 0.0, -HUMANOID_SHANK), 0.04, 2.5), small,
              Body(HUMANOID_FOOT, 1.0, (HUMANOID_FOOT_X, 0.0, hz / 2 - HUMANOID_ANKLE_HEIGHT))]
    origins = [(0.0, side * HUMANOID_HIP_Y, 0.0), ZERO3, ZERO3, (0.0, 0.0, -HUMANOID_THIGH),
               (0.0, 0.0, -HUMANOID_SHANK), ZERO3]
    links, joints, controlled = [], [], []
    parent = "base_link"
    for (joint, axis, limits), body, xyz in zip(HUMANOID_JOINTS, bodies, origins, strict=True):
        child = f"{side_name}_{joint}_LINK"
        links.append(Link(child, body))
        joints.append(Joint(f"{side_name}_{joint}", parent, child, xyz, axis=axis,
                            limit=Limit(*limits, HUMANOID_EFFORT, HUMANOID_VELOCITY)))
        nominal = HUMANOID_NOMINAL.get(joint, 0.0)
        controlled.append(ControlledJoint(f"{side_name}_{joint}", ("effort",), nominal))
        parent = child
    links.append(Link(f"{side_name}_SOLE", contact_spheres=corners))
    joints.append(Joint(f"{side_name}_sole_fixed", parent, f"{side_name}_SOLE",
                        (HUMANOID_FOOT_X, 0.0, -HUMANOID_ANKLE_HEIGHT)))
    return links, joints, controlled


def humanoid() -> Robot:
    """A 12-DoF legged humanoid (about 39 kg): a box torso as the floating base, two 6-DoF legs with box
    feet; the sole frames L_SOLE and R_SOLE (the sole's centre, z up, x forward) carry 6-D surface contacts
    of half-sizes (0.11, 0.055); the simulator touches the ground with four spheres under the sole's
    corners. Nominal stance: hip pitch -0.35, knee 0.7, ankle pitch -0.35 (flat feet)."""
    links = [Link("base_link", Body(HUMANOID_TORSO, HUMANOID_TORSO_MASS, (0.0, 0.0, 0.3)))]
    joints: list[Joint] = []
    controlled: list[ControlledJoint] = []
    for side_name, side in (("L", 1), ("R", -1)):
        leg_links, leg_joints, leg_controlled = humanoid_leg(side_name, side)
        links += leg_links
        joints += leg_joints
        controlled += leg_controlled
    return Robot(name="humanoid", comments=("12-DoF legged humanoid on flat feet (generated for tests).",),
                 links=tuple(links), joints=tuple(joints), controlled=tuple(controlled),
                 hardware=SIM_HARDWARE)


# --- (e) quadruped variants for acceptance on robots nobody tuned for (generated, not shipped) ----------

KNEE_SIGN = {"backward": -1, "forward": 1}  # sign of KFE in the stance of a knee pointing that way


def robot_mass(robot: Robot) -> float:
    """The total mass of `robot` [kg]."""
    return sum(link.body.mass for link in robot.links if link.body is not None)


def _scaled_shape(shape: Shape, length: float) -> Shape:
    if isinstance(shape, Box):
        return Box(_times(shape.size, length))
    if isinstance(shape, Cylinder):
        return Cylinder(shape.radius * length, shape.length * length)
    return Sphere(shape.radius * length)


def _times(v: Vec3, k: float) -> Vec3:
    return (v[0] * k, v[1] * k, v[2] * k)


def scaled(robot: Robot, length: float, mass: float) -> Robot:
    """`robot` with every length times `length` and every mass times `mass`. Effort limits times
    `mass * length` (dynamic similarity: holding the weight takes torques ~ m g l); velocity limits times
    `1 / length`, so a joint at full speed moves the foot as fast on any size of leg. Dynamic similarity's
    `1 / sqrt(length)` (joint speeds ~ sqrt(g / l)) would be too slow for small robots: they are asked the
    same absolute speeds as large ones (a higher Froude number `v^2 / (g l)`), and their low-ratio gearboxes
    make their joints faster than that law. Inertias follow from the scaled primitives
    (`mass * length**2`)."""
    def body(b: Body | None) -> Body | None:
        if b is None:
            return None
        return Body(_scaled_shape(b.shape, length), b.mass * mass, _times(b.xyz, length), b.rpy)

    def limit(lim: Limit | None) -> Limit | None:
        return None if lim is None else Limit(lim.lower, lim.upper, lim.effort * mass * length,
                                              lim.velocity / length)

    links = tuple(Link(link.name, body(link.body), tuple((_times(c, length), r * length)
                                                         for c, r in link.contact_spheres))
                  for link in robot.links)
    joints = tuple(dataclasses.replace(j, xyz=_times(j.xyz, length), limit=limit(j.limit))
                   for j in robot.joints)
    return dataclasses.replace(robot, links=links, joints=joints)


def with_knees(robot: Robot, knees: dict[str, str]) -> Robot:
    """`robot` (legs named like `quadruped()`'s) with the knees of the legs in `knees` pointing "backward" or
    "forward": where a leg's knee turns the other way, its KFE range is mirrored and its nominal HFE and KFE
    negated (the foot stays under the hip)."""
    def flipped(leg_name: str) -> bool:
        if leg_name not in knees:
            return False
        kfe = next(c for c in robot.controlled if c.name == f"{leg_name}_KFE")
        return math.copysign(1, kfe.nominal) != KNEE_SIGN[knees[leg_name]]

    flip = {leg_name for leg_name, _, _ in LEGS if flipped(leg_name)}
    joints = tuple(dataclasses.replace(j, limit=Limit(-j.limit.upper, -j.limit.lower, j.limit.effort,
                                                      j.limit.velocity))
                   if j.limit is not None and j.name[:2] in flip and j.name.endswith("_KFE") else j
                   for j in robot.joints)
    controlled = tuple(dataclasses.replace(c, nominal=-c.nominal)
                       if c.name[:2] in flip and c.name.endswith(("_HFE", "_KFE")) else c
                       for c in robot.controlled)
    return dataclasses.replace(robot, joints=joints, controlled=controlled)


@dataclass(frozen=True)
class QuadrupedVariant:
    """A quadruped like `quadruped()` scaled to `mass` and a leg (thigh + shank) of `leg_length`, with its
    front and hind knees pointing "backward" or "forward" and the trunk's centre of mass moved by
    `com_offset` (x, y) in the base frame."""

    name: str
    mass: float  # kg, the whole robot
    leg_length: float  # m
    front_knee: str = "backward"
    hind_knee: str = "forward"
    com_offset: tuple[float, float] = (0.0, 0.0)  # m


def quadruped_variant(variant: QuadrupedVariant) -> Robot:
    """The robot of `variant` on simulated hardware; feet `<leg>_FOOT`, nominal stance in `controlled`."""
    base = quadruped()
    robot = scaled(base, variant.leg_length / (THIGH_LENGTH + SHANK_LENGTH), variant.mass / robot_mass(base))
    robot = with_knees(robot, {name: variant.front_knee if fore > 0 else variant.hind_knee
                               for name, fore, _ in LEGS})
    trunk = robot.links[0]
    if trunk.body is None or trunk.name != "base_link":
        raise ValueError("quadruped() must start with its trunk, base_link, with a body")
    dx, dy = variant.com_offset
    moved = dataclasses.replace(trunk.body, xyz=(trunk.body.xyz[0] + dx, trunk.body.xyz[1] + dy,
                                                 trunk.body.xyz[2]))
    comment = (f"Generated quadruped variant {variant.name}: {fmt(variant.mass)} kg, legs of "
               f"{fmt(variant.leg_length)} m, front knees {variant.front_knee}, "
               f"hind knees {variant.hind_knee}, trunk CoM offset ({fmt(dx)}, {fmt(dy)}) m.")
    return dataclasses.replace(robot, name=variant.name, comments=(comment,), hardware=SIM_HARDWARE,
                               links=(dataclasses.replace(trunk, body=moved), *robot.links[1:]))


QUADRUPED_FEET = tuple(f"{name}_FOOT" for name, _, _ in LEGS)


def robots() -> dict[str, str]:
    """File name -> URDF text of every shipped robot (quadruped_sim, arm7_sim: on simulated hardware)."""
    files = {f"{robot.name}.urdf": render(robot) for robot in (planar_2link(), arm7(), quadruped())}
    files["quadruped_sim.urdf"] = render(dataclasses.replace(quadruped(), hardware=SIM_HARDWARE))
    arm = arm7()
    effort_only = tuple(dataclasses.replace(c, command_interfaces=("effort",)) for c in arm.controlled)
    arm_sim = dataclasses.replace(arm, hardware=ARM7_SIM_HARDWARE, controlled=effort_only)
    files["arm7_sim.urdf"] = render(arm_sim)
    return files


def main() -> None:
    directory = Path(__file__).resolve().parent
    for file_name, text in robots().items():
        (directory / file_name).write_text(text)


if __name__ == "__main__":
    main()
