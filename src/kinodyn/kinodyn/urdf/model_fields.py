"""URDF -> flat kinematic-tree arrays (docs/core-model-layout.md).

Parsing uses ``urdf_parser_py`` (urdfdom-py). Fixed joints are merged into the parent body
(masses, centres of mass and inertias combined with the parallel-axis theorem, Seed 001 §8.2.1,
(8.26)-(8.27)); every link stays a frame. Mimic joints become coupled joints: their body reads
``multiplier * q[master] + offset`` and has no coordinate of its own.
"""

from __future__ import annotations

import difflib
import logging
import math
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from urdf_parser_py import urdf as _urdf
from urdf_parser_py.xml_reflection import core as _xml_core

from kinodyn._kernels.common import JOINT_FREEFLYER, JOINT_NONE, JOINT_PRISMATIC, JOINT_REVOLUTE

_log = logging.getLogger(__name__)

_MOVABLE = {"revolute": JOINT_REVOLUTE, "continuous": JOINT_REVOLUTE, "prismatic": JOINT_PRISMATIC}
_SUPPORTED = (*_MOVABLE, "fixed")
# Top-level elements that describe no kinematics or inertia; removed before parsing so that their
# many vendor-specific forms cannot break urdf_parser_py.
_IGNORED_ELEMENTS = ("transmission", "gazebo", "ros2_control")


class URDFError(ValueError):
    """The URDF is malformed or uses a feature kinodyn does not model."""


class URDFWarning(UserWarning):
    """The URDF is usable but physically suspicious (zero or singular inertia)."""


@dataclass
class _Inertial:
    mass: float
    com: np.ndarray  # in the body frame
    inertia: np.ndarray  # about the link's own COM, body axes


def _rpy_to_rotation(rpy: list[float]) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: ``C = Rz(yaw) Ry(pitch) Rx(roll)`` (Seed 000 §2.4.5, ZYX Euler)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def _origin(pose: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(C, r)`` of a URDF ``<origin>`` (identity when absent)."""
    if pose is None:
        return np.eye(3), np.zeros(3)
    xyz = pose.xyz if pose.xyz is not None else [0.0, 0.0, 0.0]
    rpy = pose.rpy if pose.rpy is not None else [0.0, 0.0, 0.0]
    return _rpy_to_rotation(rpy), np.asarray(xyz, dtype=np.float64)


def _read_text(source: str | Path) -> str:
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source
    path = Path(source)
    if not path.is_file():
        raise URDFError(f"URDF file not found: {str(path)!r} (pass a path, or XML text starting with '<')")
    return path.read_text()


def _parse_robot(text: str) -> Any:
    """Parse with urdf_parser_py after dropping non-model elements; its diagnostics go to the debug log."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"URDF is not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"URDF root element must be <robot>, got <{root.tag}>")
    for tag in _IGNORED_ELEMENTS:
        for element in root.findall(tag):
            root.remove(element)
    previous = _xml_core.on_error
    _xml_core.on_error = lambda message: _log.debug("urdf_parser_py: %s", message)
    try:
        return _urdf.URDF.from_xml_string(ET.tostring(root, encoding="unicode"))
    except Exception as exc:  # urdf_parser_py raises ParseError, ValueError, AssertionError, ...
        raise URDFError(f"malformed URDF: {exc}".replace("\n", " ")) from None
    finally:
        _xml_core.on_error = previous


def _check_tree(robot: Any) -> tuple[str, dict[str, list[Any]]]:
    """Validate names and topology; return the root link and each link's child joints in file order."""
    link_names = [link.name for link in robot.links]
    if len(set(link_names)) != len(link_names):
        dup = sorted({n for n in link_names if link_names.count(n) > 1})
        raise URDFError(f"duplicate link names: {dup}")
    joint_names = [joint.name for joint in robot.joints]
    if len(set(joint_names)) != len(joint_names):
        dup = sorted({n for n in joint_names if joint_names.count(n) > 1})
        raise URDFError(f"duplicate joint names: {dup}")
    if not link_names:
        raise URDFError("URDF has no <link>")
    known = set(link_names)
    parent_joint: dict[str, Any] = {}
    children: dict[str, list[Any]] = {name: [] for name in link_names}
    for joint in robot.joints:
        if joint.type not in _SUPPORTED:
            raise URDFError(
                f"joint {joint.name!r} has type {joint.type!r}; supported: {', '.join(_SUPPORTED)} "
                "(use floating_base=True for a free-floating root instead of a 'floating' joint)"
            )
        for role, name in (("parent", joint.parent), ("child", joint.child)):
            if name not in known:
                close = difflib.get_close_matches(str(name), link_names, n=3)
                raise URDFError(f"joint {joint.name!r} names {role} link {name!r}, which is not defined; "
                                f"close link names: {close}")
        if joint.child in parent_joint:
            raise URDFError(f"link {joint.child!r} is the child of two joints "
                            f"({parent_joint[joint.child].name!r}, {joint.name!r}): a URDF must be a tree")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = [name for name in link_names if name not in parent_joint]
    if len(roots) != 1:
        if not roots:
            raise URDFError("URDF has no root link: the joints form a cycle")
        raise URDFError(f"URDF has {len(roots)} root links {roots}: every link but one needs a parent joint")
    reached = {roots[0]}
    stack = [roots[0]]
    while stack:
        for joint in children[stack.pop()]:
            reached.add(joint.child)
            stack.append(joint.child)
    if len(reached) != len(link_names):
        cyclic = sorted(known - reached)
        raise URDFError(f"links {cyclic} are unreachable from root {roots[0]!r}: their joints form a cycle")
    return roots[0], children


def _link_inertial(link: Any, C_body_link: np.ndarray, r_body_link: np.ndarray) -> _Inertial | None:
    inertial = link.inertial
    if inertial is None:
        return None
    mass = float(inertial.mass) if inertial.mass is not None else 0.0
    if not math.isfinite(mass) or mass < 0.0:
        raise URDFError(f"link {link.name!r} has mass {mass}; it must be finite and >= 0")
    C_lc, r_lc = _origin(inertial.origin)
    I_c = np.asarray(inertial.inertia.to_matrix(), dtype=np.float64) if inertial.inertia is not None \
        else np.zeros((3, 3))
    if not np.all(np.isfinite(I_c)):
        raise URDFError(f"link {link.name!r} has a non-finite inertia")
    C_bc = C_body_link @ C_lc
    return _Inertial(mass, r_body_link + C_body_link @ r_lc, C_bc @ I_c @ C_bc.T)


def _combine(parts: list[_Inertial]) -> _Inertial:
    """Merge rigidly attached inertias: parallel-axis theorem (Seed 001 §8.2.1, (8.27))."""
    mass = sum(p.mass for p in parts)
    com = sum((p.mass * p.com for p in parts), np.zeros(3)) / mass if mass > 0.0 else np.zeros(3)
    inertia = np.zeros((3, 3))
    for p in parts:
        d = p.com - com
        inertia += p.inertia + p.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return _Inertial(mass, com, 0.5 * (inertia + inertia.T))


def _joint_axis(joint: Any) -> np.ndarray:
    axis = np.asarray(joint.axis if joint.axis is not None else [1.0, 0.0, 0.0], dtype=np.float64)
    norm = float(np.linalg.norm(axis))
    if not math.isfinite(norm) or norm < 1e-12:
        raise URDFError(f"joint {joint.name!r} has axis {axis.tolist()}; give a finite nonzero <axis xyz>")
    return axis / norm


def _joint_limits(joint: Any) -> tuple[float, float, float, float]:
    """``(lower, upper, velocity, effort)``: +-inf for continuous joints and where the URDF is silent."""
    lim = joint.limit
    lower, upper = -math.inf, math.inf
    velocity, effort = math.inf, math.inf
    if lim is not None:
        if joint.type != "continuous":
            lower = float(lim.lower) if lim.lower is not None else -math.inf
            upper = float(lim.upper) if lim.upper is not None else math.inf
        velocity = float(lim.velocity) if lim.velocity is not None else math.inf
        effort = float(lim.effort) if lim.effort is not None else math.inf
    if lower > upper:
        raise URDFError(f"joint {joint.name!r} has lower limit {lower} > upper limit {upper}")
    return lower, upper, velocity, effort


def _check_mimic(joints: dict[str, Any]) -> None:
    for joint in joints.values():
        if joint.mimic is None:
            continue
        master = joints.get(joint.mimic.joint)
        if master is None:
            raise URDFError(f"joint {joint.name!r} mimics {joint.mimic.joint!r}, not a joint of the URDF")
        if master.type not in _MOVABLE or master.mimic is not None:
            raise URDFError(f"joint {joint.name!r} mimics {master.name!r}, which is not an independent "
                            "movable joint; a mimic joint must follow a revolute, continuous or prismatic "
                            "non-mimic joint")
        if joint.type not in _MOVABLE:
            raise URDFError(f"fixed joint {joint.name!r} cannot carry <mimic>")


def parse_urdf(source: str | Path, floating_base: bool = False) -> dict[str, Any]:
    """Parse a URDF (path or XML string) into the Model fields of docs/core-model-layout.md.

    Raises ``URDFError`` for malformed files; warns ``URDFWarning`` for moving bodies with zero
    mass or a singular rotational inertia.
    """
    robot = _parse_robot(_read_text(source))
    root_link, children = _check_tree(robot)
    links = {link.name: link for link in robot.links}
    joints = {joint.name: joint for joint in robot.joints}
    _check_mimic(joints)

    body_names = ["universe"]
    body_links: list[list[str]] = [[]]
    parent, joint_type = [-1], [JOINT_NONE]
    axes, rotations, translations = [np.zeros(3)], [np.eye(3)], [np.zeros(3)]
    body_joint: list[Any] = [None]
    inertials: list[list[_Inertial]] = [[]]
    frame_names: list[str] = []
    frame_body: list[int] = []
    frame_rot: list[np.ndarray] = []
    frame_trans: list[np.ndarray] = []

    def attach(link_name: str, body: int, C: np.ndarray, r: np.ndarray) -> None:
        frame_names.append(link_name)
        frame_body.append(body)
        frame_rot.append(C)
        frame_trans.append(r)
        body_links[body].append(link_name)
        part = _link_inertial(links[link_name], C, r)
        if part is not None:
            inertials[body].append(part)

    def new_body(name: str, parent_body: int, jtype: int, axis: np.ndarray, C: np.ndarray, r: np.ndarray,
                 joint: Any) -> int:
        body_names.append(name)
        body_links.append([])
        parent.append(parent_body)
        joint_type.append(jtype)
        axes.append(axis)
        rotations.append(C)
        translations.append(r)
        body_joint.append(joint)
        inertials.append([])
        return len(body_names) - 1

    root_body = new_body(root_link, 0, JOINT_FREEFLYER, np.zeros(3), np.eye(3), np.zeros(3), None) \
        if floating_base else 0
    # Depth-first, children in file order. A movable joint's body is numbered when its child link is
    # visited (not when its parent is), so bodies, q and v follow the depth-first order of ARCHITECTURE.md §3.
    stack: list[tuple[str, int, np.ndarray, np.ndarray, Any]] = [
        (root_link, root_body, np.eye(3), np.zeros(3), None)
    ]
    while stack:
        link_name, body, C_bl, r_bl, joint = stack.pop()
        if joint is not None and joint.type != "fixed":
            body = new_body(link_name, body, _MOVABLE[joint.type], _joint_axis(joint), C_bl, r_bl, joint)
            C_bl, r_bl = np.eye(3), np.zeros(3)
        attach(link_name, body, C_bl, r_bl)
        pending = []
        for child_joint in children[link_name]:
            C_o, r_o = _origin(child_joint.origin)
            pending.append((child_joint.child, body, C_bl @ C_o, r_bl + C_bl @ r_o, child_joint))
        stack.extend(reversed(pending))

    nb = len(body_names)
    merged = [_combine(parts) for parts in inertials]
    for b in range(1, nb):
        _warn_if_degenerate(body_names[b], body_links[b], merged[b])

    # Coordinates: free flyer first, then the independent joints in body order; mimic bodies share.
    idx_q, idx_v = np.full(nb, -1, dtype=np.int64), np.full(nb, -1, dtype=np.int64)
    nq_joint, nv_joint = np.zeros(nb, dtype=np.int64), np.zeros(nb, dtype=np.int64)
    multiplier, offset = np.ones(nb), np.zeros(nb)
    nq = nv = 0
    if floating_base:
        idx_q[1], idx_v[1], nq_joint[1], nv_joint[1] = 0, 0, 7, 6
        nq, nv = 7, 6
    joint_names, joint_body_list = [], []
    lower, upper = [-math.inf] * nq, [math.inf] * nq
    velocity, effort, damping, friction = [math.inf] * nv, [math.inf] * nv, [0.0] * nv, [0.0] * nv
    body_of_joint: dict[str, int] = {}
    for b in range(1, nb):
        joint = body_joint[b]
        if joint is None:
            continue
        body_of_joint[joint.name] = b
        nq_joint[b], nv_joint[b] = 1, 1
        if joint.mimic is not None:
            continue
        idx_q[b], idx_v[b] = nq, nv
        nq, nv = nq + 1, nv + 1
        joint_names.append(joint.name)
        joint_body_list.append(b)
        lo, hi, vel, eff = _joint_limits(joint)
        lower.append(lo)
        upper.append(hi)
        velocity.append(vel)
        effort.append(eff)
        dyn = joint.dynamics
        damping.append(float(dyn.damping) if dyn is not None and dyn.damping is not None else 0.0)
        friction.append(float(dyn.friction) if dyn is not None and dyn.friction is not None else 0.0)
    mimic_names, mimic_body = [], []
    for b in range(1, nb):
        joint = body_joint[b]
        if joint is None or joint.mimic is None:
            continue
        master = body_of_joint[joint.mimic.joint]
        idx_q[b], idx_v[b] = idx_q[master], idx_v[master]
        multiplier[b] = float(joint.mimic.multiplier) if joint.mimic.multiplier is not None else 1.0
        offset[b] = float(joint.mimic.offset) if joint.mimic.offset is not None else 0.0
        mimic_names.append(joint.name)
        mimic_body.append(b)

    def ro(a: Any, dtype: type = np.float64) -> np.ndarray:
        arr = np.array(a, dtype=dtype)
        arr.flags.writeable = False
        return arr

    return {
        "name": robot.name,
        "nbodies": nb,
        "body_names": tuple(body_names),
        "parent": ro(parent, np.int64),
        "joint_type": ro(joint_type, np.int64),
        "joint_axis": ro(axes),
        "joint_rotation": ro(rotations),
        "joint_translation": ro(translations),
        "idx_q": ro(idx_q, np.int64),
        "idx_v": ro(idx_v, np.int64),
        "nq_joint": ro(nq_joint, np.int64),
        "nv_joint": ro(nv_joint, np.int64),
        "joint_multiplier": ro(multiplier),
        "joint_offset": ro(offset),
        "mass": ro([m.mass for m in merged]),
        "body_com": ro([m.com for m in merged]),
        "inertia": ro([m.inertia for m in merged]),
        "gravity": ro([0.0, 0.0, -9.81]),
        "nq": nq,
        "nv": nv,
        "floating_base": floating_base,
        "joint_names": tuple(joint_names),
        "joint_body": ro(joint_body_list, np.int64),
        "mimic_joint_names": tuple(mimic_names),
        "mimic_body": ro(mimic_body, np.int64),
        "lower_limit": ro(lower),
        "upper_limit": ro(upper),
        "velocity_limit": ro(velocity),
        "effort_limit": ro(effort),
        "damping": ro(damping),
        "friction": ro(friction),
        "frame_names": tuple(frame_names),
        "frame_body": ro(frame_body, np.int64),
        "frame_rotation": ro(frame_rot),
        "frame_translation": ro(frame_trans),
    }


def _warn_if_degenerate(body: str, links: list[str], inertial: _Inertial) -> None:
    eig = np.linalg.eigvalsh(inertial.inertia)
    if inertial.mass <= 0.0:
        problem = "zero mass"
    elif eig[0] <= 1e-12 * max(1.0, eig[-1]):
        problem = f"a singular or indefinite rotational inertia (eigenvalues {eig.tolist()})"
    else:
        return
    warnings.warn(
        f"moving body {body!r} (links {links}) has {problem}; forward dynamics needs a positive-definite "
        "joint-space inertia, so give these links an <inertial> or merge them with fixed joints",
        URDFWarning,
        stacklevel=4,
    )
