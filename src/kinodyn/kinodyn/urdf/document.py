"""``read_urdf``: the one parse and validation of a URDF that every consumer reads.

``kinodyn.Model``, the TF tree of ``state_publisher``, ``control_node``'s ``<ros2_control>`` and limit
parsing, the simulator's contact spheres and the kinematics / dynamics nodes all take a ``ParsedURDF``, so a
file is accepted or refused identically everywhere, with the same one-line ``URDFError``.

Checks, in order: text (not empty, UTF-8), XML, ``<robot>`` root, every number (``kinodyn.urdf.numbers``),
urdf_parser_py's schema (required elements and attributes), then names, joint types, the tree, mass,
limits, axes, dynamics, collision spheres and mimic joints. What urdfdom and robot_state_publisher accept
but kinodyn does not model is accepted with one ``URDFWarning``: a ``<mimic>`` inside a fixed joint is
ignored (as Pinocchio does). Values follow urdfdom's defaults (joint.cpp): a ``<limit>`` without
``lower``/``upper`` bounds the joint to 0; a revolute or prismatic joint without ``<limit>`` (which urdfdom
refuses) is left unbounded.
"""

from __future__ import annotations

import copy
import difflib
import logging
import math
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from urdf_parser_py import urdf as _urdf  # untyped: its classes (URDF, Link, Joint, Pose) are Any to mypy
from urdf_parser_py.xml_reflection import core as _xml_core

from kinodyn.urdf.errors import URDFError, URDFWarning
from kinodyn.urdf.numbers import check_numbers
from kinodyn.urdf.source import urdf_text

if TYPE_CHECKING:
    from pathlib import Path

_log = logging.getLogger(__name__)

MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
SUPPORTED_TYPES = (*MOVABLE_TYPES, "fixed")
EXTENSION_ELEMENTS = ("transmission", "gazebo", "ros2_control")
"""Top-level elements that describe no kinematics or inertia: kept in ``ParsedURDF.root`` for the packages
that read them (kinodyn_control reads ``<ros2_control>``), left out of urdf_parser_py's parse so that their
many vendor-specific forms cannot break it."""
AXIS_NORM_MIN = 1e-12
"""A joint axis shorter than this is refused (it has no direction)."""

Vector3 = tuple[float, float, float]


@dataclass(frozen=True)
class Pose:
    """An ``<origin xyz rpy>`` (URDF fixed-axis roll-pitch-yaw)."""

    xyz: Vector3 = (0.0, 0.0, 0.0)
    rpy: Vector3 = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Inertial:
    """A link's ``<inertial>``: mass, centre-of-mass frame in the link frame, inertia about the COM."""

    mass: float
    origin: Pose
    inertia: np.ndarray = field(repr=False)  # 3x3, in the COM frame's axes


@dataclass(frozen=True)
class Sphere:
    """A ``<collision>`` sphere: centre (the collision ``<origin xyz>``) in the link frame, radius > 0."""

    center: Vector3
    radius: float


@dataclass(frozen=True)
class Link:
    name: str
    inertial: Inertial | None
    collision_spheres: tuple[Sphere, ...]


@dataclass(frozen=True)
class Mimic:
    """``q = multiplier * q[joint] + offset``; ``joint`` is an independent movable joint."""

    joint: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class Joint:
    """A validated URDF joint. ``axis`` is the unit axis (zeros for a fixed joint); ``lower``/``upper`` are
    +-inf for continuous and fixed joints and where the URDF gives no ``<limit>``; ``velocity`` and
    ``effort`` are inf without ``<limit>``."""

    name: str
    type: str
    parent: str
    child: str
    origin: Pose
    axis: Vector3
    lower: float
    upper: float
    velocity: float
    effort: float
    damping: float
    friction: float
    mimic: Mimic | None

    @property
    def movable(self) -> bool:
        return self.type != "fixed"


@dataclass(frozen=True, eq=False)
class ParsedURDF:
    """A URDF that passed every check. ``joints`` are in depth-first order from ``root_link`` (children in
    file order), ``links`` in file order; ``root`` is the whole XML document (extension elements such as
    ``<ros2_control>`` included), ``robot`` urdf_parser_py's model of the kinematic elements, ``notes``
    what was accepted with a ``URDFWarning``, ``floating_joint`` the name of a floating root joint the
    document had (``detach_floating_root``; '' for none): the model then floats at ``root_link``."""

    name: str
    root_link: str
    links: tuple[Link, ...]
    joints: tuple[Joint, ...]
    notes: tuple[str, ...]
    text: str = field(repr=False)
    root: ET.Element = field(repr=False)
    robot: _urdf.URDF = field(repr=False)
    _children: dict[str, tuple[Joint, ...]] = field(repr=False)
    floating_joint: str = ""

    def children(self, link: str) -> tuple[Joint, ...]:
        """The joints whose parent is ``link``, in file order."""
        return self._children[link]


def _xml(text: str) -> ET.Element:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"URDF is not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"URDF root element must be <robot>, got <{root.tag}>")
    return root


def detach_floating_root(root: ET.Element) -> str:
    """Remove a floating root from ``root``, a URDF document: the ``floating`` joint from a massless root link
    (``<link name="world"/>``) to the robot's base that URDFs written for MuJoCo or Isaac carry. Returns the
    joint's name ('' when the document has no floating joint); the model then floats at the joint's child
    (``floating_base=True``), as Pinocchio reads such a joint (a free flyer). ``URDFError`` for any other
    floating joint, naming it."""
    floating = [joint for joint in root.findall("joint") if joint.get("type") == "floating"]
    if not floating:
        return ""
    joint = floating[0]
    name, parent = joint.get("name"), joint.find("parent")
    world = parent.get("link") if parent is not None else None  # the massless root it should hang from
    links = [link for link in root.findall("link") if link.get("name") == world]
    ends = [(end.tag, end.get("link")) for j in root.findall("joint") for end in j
            if end.tag in ("parent", "child")]
    inertial = links[0].find("inertial") if links else None
    mass = inertial.find("mass") if inertial is not None else None
    massless = inertial is None or (mass is not None and float(mass.get("value", "0")) == 0.0)
    alone = ends.count(("parent", world)) == 1 and ("child", world) not in ends
    if len(floating) > 1 or len(links) != 1 or not massless or not alone:
        raise URDFError(
            f"joint {name!r} has type 'floating'; only a floating root is read (one floating joint, from a "
            "massless root link that has no other joint, to the robot's base); otherwise a free-floating "
            "root comes from floating_base=True, or in the nodes from an Odometry topic")
    root.remove(joint)
    root.remove(links[0])
    return str(name)


def _urdf_parser_model(root: ET.Element) -> _urdf.URDF:
    """urdf_parser_py's model of ``root`` without its extension elements and without the empty ``<texture/>``
    elements of materials (no filename: urdf_parser_py refuses them, urdfdom and Pinocchio read no texture, as
    iCub's URDFs carry them); its notices go to the debug log."""
    kinematic = ET.Element(root.tag, root.attrib)
    kinematic.extend(child for child in root if child.tag not in EXTENSION_ELEMENTS)
    if any(texture.get("filename") is None for texture in kinematic.iter("texture")):
        kinematic = copy.deepcopy(kinematic)  # (its elements are the document's)
        for material in kinematic.iter("material"):
            for texture in material.findall("texture"):
                if texture.get("filename") is None:
                    material.remove(texture)
    previous = _xml_core.on_error
    _xml_core.on_error = lambda message: _log.debug("urdf_parser_py: %s", message)
    try:
        return _urdf.URDF.from_xml_string(ET.tostring(kinematic, encoding="unicode"))
    except Exception as exc:  # noqa: BLE001  (urdf_parser_py raises ParseError, ValueError, AssertionError, ...)
        raise URDFError(f"malformed URDF: {exc}".replace("\n", " ")) from None
    finally:
        _xml_core.on_error = previous


def _pose(origin: _urdf.Pose | None) -> Pose:
    if origin is None:
        return Pose()
    xyz = tuple(map(float, origin.xyz)) if origin.xyz is not None else (0.0, 0.0, 0.0)
    rpy = tuple(map(float, origin.rpy)) if origin.rpy is not None else (0.0, 0.0, 0.0)
    return Pose(xyz, rpy)  # type: ignore[arg-type]


def _unique(kind: str, names: list[str]) -> None:
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise URDFError(f"duplicate {kind} names: {twice}; every <{kind} name> must be unique")


def _link(link: _urdf.Link) -> Link:
    inertial = None
    if link.inertial is not None:
        mass = float(link.inertial.mass) if link.inertial.mass is not None else 0.0
        if mass < 0.0:
            raise URDFError(f'link {link.name!r} <inertial> <mass value="{mass}">: mass {mass} must be >= 0')
        i = link.inertial.inertia
        inertia = np.zeros((3, 3)) if i is None else np.array(
            [[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]], dtype=np.float64)
        inertia.flags.writeable = False
        inertial = Inertial(mass, _pose(link.inertial.origin), inertia)
    spheres = []
    for collision in link.collisions:
        if type(collision.geometry).__name__ != "Sphere":
            continue
        radius = float(collision.geometry.radius)
        if not radius > 0.0:
            raise URDFError(f'link {link.name!r} <collision> <geometry> <sphere radius="{radius}">: a '
                            "collision sphere radius must be > 0")
        spheres.append(Sphere(_pose(collision.origin).xyz, radius))
    return Link(link.name, inertial, tuple(spheres))


def _axis(joint: _urdf.Joint) -> Vector3:
    if joint.type == "fixed":
        return (0.0, 0.0, 0.0)
    axis = np.asarray(joint.axis if joint.axis is not None else [1.0, 0.0, 0.0], dtype=np.float64)
    norm = float(np.linalg.norm(axis))
    if not norm > AXIS_NORM_MIN:
        xyz = " ".join(map(str, axis.tolist()))
        raise URDFError(f'joint {joint.name!r} <axis xyz="{xyz}">: give a finite nonzero <axis xyz>')
    x, y, z = (axis / norm).tolist()
    return (x, y, z)


def _limits(joint: _urdf.Joint) -> tuple[float, float, float, float]:
    """``(lower, upper, velocity, effort)`` with urdfdom's defaults (lower, upper: 0 in a ``<limit>``)."""
    lim = joint.limit
    if lim is None:
        return -math.inf, math.inf, math.inf, math.inf
    lower, upper = -math.inf, math.inf
    if joint.type in ("revolute", "prismatic"):
        lower = float(lim.lower) if lim.lower is not None else 0.0
        upper = float(lim.upper) if lim.upper is not None else 0.0
        if lower > upper:
            raise URDFError(f'joint {joint.name!r} <limit lower="{lower}" upper="{upper}">: '
                            f"lower limit {lower} > upper limit {upper}")
    velocity, effort = float(lim.velocity), float(lim.effort)
    for key, value in (("velocity", velocity), ("effort", effort)):
        if value < 0.0:
            raise URDFError(f'joint {joint.name!r} <limit {key}="{value}">: the {key} limit must be >= 0')
    return lower, upper, velocity, effort


def _dynamics(joint: _urdf.Joint) -> tuple[float, float]:
    dyn = joint.dynamics
    damping = float(dyn.damping) if dyn is not None and dyn.damping is not None else 0.0
    friction = float(dyn.friction) if dyn is not None and dyn.friction is not None else 0.0
    for key, value in (("damping", damping), ("friction", friction)):
        if value < 0.0:
            raise URDFError(f'joint {joint.name!r} <dynamics {key}="{value}">: {key} must be >= 0')
    return damping, friction


def _joint(joint: _urdf.Joint, link_names: list[str], notes: list[str]) -> Joint:
    if joint.type not in SUPPORTED_TYPES:
        raise URDFError(
            f"joint {joint.name!r} has type {joint.type!r}; supported: {', '.join(SUPPORTED_TYPES)} "
            "(a free-floating root comes from floating_base=True, or in the nodes from an Odometry topic)"
        )
    for role, name in (("parent", joint.parent), ("child", joint.child)):
        if name not in link_names:
            close = difflib.get_close_matches(str(name), link_names, n=3)
            raise URDFError(f'joint {joint.name!r} <{role} link="{name}">: names {role} link {name!r}, '
                            f"which is not defined; close link names: {close}")
    mimic = None
    if joint.mimic is not None:
        if joint.type == "fixed":
            notes.append(f'fixed joint {joint.name!r} carries <mimic joint="{joint.mimic.joint}">; ignored '
                         "(a fixed joint does not move), as urdfdom, robot_state_publisher and Pinocchio do")
        else:
            m = joint.mimic
            mimic = Mimic(m.joint, 1.0 if m.multiplier is None else float(m.multiplier),
                          0.0 if m.offset is None else float(m.offset))
    limits = _limits(joint)
    if joint.type in ("revolute", "prismatic") and limits[0] == limits[1]:
        notes.append(_one_point_range(joint, limits[0]))
    return Joint(joint.name, joint.type, joint.parent, joint.child, _pose(joint.origin), _axis(joint),
                 *limits, *_dynamics(joint), mimic)


def _one_point_range(joint: _urdf.Joint, value: float) -> str:
    """The warning for a revolute or prismatic joint whose ``<limit>`` range is one point: files that write
    ``lower`` and ``upper`` equal, or leave them out (urdfdom's default 0), often mean unbounded."""
    return (f"joint {joint.name!r} <limit>: its range is the one point {value:g} (lower = upper; urdfdom "
            f"reads a lower or upper left out as 0), so it cannot move within its limits; give its range (a "
            f'revolute joint without bounds is type="continuous")')


def _check_mimics(joints: list[Joint]) -> None:
    by_name = {j.name: j for j in joints}
    for joint in joints:
        if joint.mimic is None:
            continue
        master = by_name.get(joint.mimic.joint)
        if master is None:
            raise URDFError(f'joint {joint.name!r} <mimic joint="{joint.mimic.joint}">: mimics '
                            f"{joint.mimic.joint!r}, not a joint of the URDF")
        if not master.movable or master.mimic is not None:
            raise URDFError(f'joint {joint.name!r} <mimic joint="{master.name}">: mimics {master.name!r}, '
                            "which is not an independent movable joint; a mimic joint must follow a "
                            "revolute, continuous or prismatic non-mimic joint")


def _tree(link_names: list[str], joints: list[Joint]
          ) -> tuple[str, dict[str, tuple[Joint, ...]], list[Joint]]:
    """``(root link, child joints of each link, joints in depth-first order)``; ``URDFError`` if no tree."""
    parent_joint: dict[str, Joint] = {}
    children: dict[str, list[Joint]] = {name: [] for name in link_names}
    for joint in joints:
        if joint.child in parent_joint:
            raise URDFError(f"link {joint.child!r} is the child of two joints "
                            f"({parent_joint[joint.child].name!r}, {joint.name!r}): a URDF must be a tree")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in link_names if name not in parent_joint]
    if not roots:
        raise URDFError("URDF has no root link: the joints form a cycle")
    if len(roots) > 1:
        raise URDFError(f"URDF has {len(roots)} root links {roots}: every link but one needs a parent joint")
    ordered: list[Joint] = []
    stack = list(reversed(children[roots[0]]))
    while stack:
        joint = stack.pop()
        ordered.append(joint)
        stack.extend(reversed(children[joint.child]))
    if len(ordered) != len(joints):
        cyclic = sorted(set(link_names) - {roots[0]} - {j.child for j in ordered})
        raise URDFError(f"links {cyclic} are unreachable from root {roots[0]!r}: their joints form a cycle")
    return roots[0], {name: tuple(js) for name, js in children.items()}, ordered


def read_urdf(source: str | Path | bytes | ParsedURDF) -> ParsedURDF:
    """Parse and validate a URDF (XML text, a path, a file's bytes, or an already parsed one).

    Raises ``URDFError`` with one line naming the element and attribute; warns ``URDFWarning`` once per
    thing it ignores (``ParsedURDF.notes``).
    """
    if isinstance(source, ParsedURDF):
        return source
    text = urdf_text(source)
    root = _xml(text)
    check_numbers(root)
    floating_joint = detach_floating_root(root)
    robot = _urdf_parser_model(root)
    link_names = [link.name for link in robot.links]
    _unique("link", link_names)
    _unique("joint", [joint.name for joint in robot.joints])
    if not link_names:
        raise URDFError("URDF has no <link>")
    links = tuple(_link(link) for link in robot.links)
    notes: list[str] = []
    joints = [_joint(joint, link_names, notes) for joint in robot.joints]
    root_link, children, ordered = _tree(link_names, joints)
    _check_mimics(joints)
    for note in notes:
        warnings.warn(note, URDFWarning, stacklevel=2)
    return ParsedURDF(robot.name, root_link, links, tuple(ordered), tuple(notes), text, root, robot, children,
                      floating_joint)
