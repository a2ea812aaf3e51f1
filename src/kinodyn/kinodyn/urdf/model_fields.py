"""A validated URDF -> the flat kinematic-tree arrays of ``kinodyn.Model`` (docs/core-model-layout.md).

Fixed joints are merged into the parent body (masses, centres of mass and inertias combined with the
parallel-axis theorem, Modern Robotics, §8.2.1, (8.26)-(8.27)); every link stays a frame. Mimic joints become
coupled joints: their body reads ``multiplier * q[master] + offset`` and has no coordinate of its own.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn.kernel_data import JOINT_FREEFLYER, JOINT_NONE, JOINT_PRISMATIC, JOINT_REVOLUTE
from kinodyn.urdf.errors import URDFWarning

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike

    from kinodyn.urdf.document import Joint, Link, ParsedURDF, Pose

_MOVABLE = {"revolute": JOINT_REVOLUTE, "continuous": JOINT_REVOLUTE, "prismatic": JOINT_PRISMATIC}


@dataclass
class _Inertial:
    mass: float
    com: np.ndarray  # in the body frame
    inertia: np.ndarray  # about the link's own COM, body axes


def rpy_to_rotation(rpy: tuple[float, float, float]) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: ``C = Rz(yaw) Ry(pitch) Rx(roll)`` (Robot Dynamics lecture notes (ETH),
    §2.4.5, ZYX Euler)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def _origin(pose: Pose) -> tuple[np.ndarray, np.ndarray]:
    return rpy_to_rotation(pose.rpy), np.asarray(pose.xyz, dtype=np.float64)


def _link_inertial(link: Link, C_body_link: np.ndarray, r_body_link: np.ndarray) -> _Inertial | None:
    if link.inertial is None:
        return None
    C_lc, r_lc = _origin(link.inertial.origin)
    C_bc = C_body_link @ C_lc
    inertia = C_bc @ link.inertial.inertia @ C_bc.T
    return _Inertial(link.inertial.mass, r_body_link + C_body_link @ r_lc, inertia)


def _combine(parts: list[_Inertial]) -> _Inertial:
    """Merge rigidly attached inertias: parallel-axis theorem (Modern Robotics, §8.2.1, (8.27))."""
    mass = sum(p.mass for p in parts)
    com = sum((p.mass * p.com for p in parts), np.zeros(3)) / mass if mass > 0.0 else np.zeros(3)
    inertia = np.zeros((3, 3))
    for p in parts:
        d = p.com - com
        inertia += p.inertia + p.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return _Inertial(mass, com, 0.5 * (inertia + inertia.T))


def model_fields(urdf: ParsedURDF, floating_base: bool = False) -> dict[str, Any]:
    """The ``Model`` fields of docs/core-model-layout.md for a validated URDF, by name for ``Model(**fields)``
    (values of mixed types: the dict's Any).

    Warns ``URDFWarning`` for moving bodies with zero mass or a singular rotational inertia, and for a URDF
    with a floating root joint (``ParsedURDF.floating_joint``) read with a fixed base (its base is then
    fixed, the joint left out as robot_state_publisher leaves it).
    """
    if urdf.floating_joint and not floating_base:
        warnings.warn(f"the URDF's root joint {urdf.floating_joint!r} is floating; this model fixes its base "
                      f"{urdf.root_link!r} (floating_base=False): give floating_base=True for the "
                      "free-flying robot", URDFWarning, stacklevel=3)
    tree = _Tree.of(urdf, floating_base)
    nb = len(tree.body_names)
    merged = [_combine(parts) for parts in tree.inertials]
    for b in range(1, nb):
        _warn_if_degenerate(tree.body_names[b], tree.body_links[b], merged[b])
    return {
        "name": urdf.name,
        "nbodies": nb,
        "body_names": tuple(tree.body_names),
        "parent": _read_only(tree.parent, np.int64),
        "joint_type": _read_only(tree.joint_type, np.int64),
        "joint_axis": _read_only(tree.axes),
        "joint_rotation": _read_only(tree.rotations),
        "joint_translation": _read_only(tree.translations),
        "mass": _read_only([m.mass for m in merged]),
        "body_com": _read_only([m.com for m in merged]),
        "inertia": _read_only([m.inertia for m in merged]),
        "gravity": _read_only([0.0, 0.0, -9.81]),
        "floating_base": floating_base,
        **_coordinate_fields(tree.body_joint, floating_base),
        "frame_names": tuple(tree.frame_names),
        "frame_body": _read_only(tree.frame_body, np.int64),
        "frame_rotation": _read_only(tree.frame_rot),
        "frame_translation": _read_only(tree.frame_trans),
    }


def _read_only(a: ArrayLike, dtype: DTypeLike = np.float64) -> np.ndarray:
    arr: np.ndarray = np.array(a, dtype=dtype)
    arr.flags.writeable = False
    return arr


@dataclass
class _Tree:
    """The bodies (one per movable joint, fixed joints merged) and frames (one per link) of a URDF."""

    links: dict[str, Link]
    body_names: list[str] = field(default_factory=lambda: ["universe"])
    body_links: list[list[str]] = field(default_factory=lambda: [[]])
    parent: list[int] = field(default_factory=lambda: [-1])
    joint_type: list[int] = field(default_factory=lambda: [JOINT_NONE])
    axes: list[np.ndarray] = field(default_factory=lambda: [np.zeros(3)])
    rotations: list[np.ndarray] = field(default_factory=lambda: [np.eye(3)])
    translations: list[np.ndarray] = field(default_factory=lambda: [np.zeros(3)])
    body_joint: list[Joint | None] = field(default_factory=lambda: [None])
    inertials: list[list[_Inertial]] = field(default_factory=lambda: [[]])
    frame_names: list[str] = field(default_factory=list)
    frame_body: list[int] = field(default_factory=list)
    frame_rot: list[np.ndarray] = field(default_factory=list)
    frame_trans: list[np.ndarray] = field(default_factory=list)

    @classmethod
    def of(cls, urdf: ParsedURDF, floating_base: bool) -> _Tree:
        tree = cls({link.name: link for link in urdf.links})
        root_body = tree.new_body(urdf.root_link, 0, JOINT_FREEFLYER, np.zeros(3), np.eye(3), np.zeros(3),
                                  None) if floating_base else 0
        # Depth-first, children in file order. A movable joint's body is numbered when its child link is
        # visited (not when its parent is), so bodies, q and v follow the depth-first order of
        # docs/conventions.md.
        stack: list[tuple[str, int, np.ndarray, np.ndarray, Joint | None]] = [
            (urdf.root_link, root_body, np.eye(3), np.zeros(3), None)
        ]
        while stack:
            link_name, body, C_bl, r_bl, joint = stack.pop()
            if joint is not None and joint.movable:
                body = tree.new_body(link_name, body, _MOVABLE[joint.type], np.array(joint.axis), C_bl, r_bl,
                                     joint)
                C_bl, r_bl = np.eye(3), np.zeros(3)
            tree.attach(link_name, body, C_bl, r_bl)
            pending = []
            for child_joint in urdf.children(link_name):
                C_o, r_o = _origin(child_joint.origin)
                pending.append((child_joint.child, body, C_bl @ C_o, r_bl + C_bl @ r_o, child_joint))
            stack.extend(reversed(pending))
        return tree

    def attach(self, link_name: str, body: int, C: np.ndarray, r: np.ndarray) -> None:
        self.frame_names.append(link_name)
        self.frame_body.append(body)
        self.frame_rot.append(C)
        self.frame_trans.append(r)
        self.body_links[body].append(link_name)
        part = _link_inertial(self.links[link_name], C, r)
        if part is not None:
            self.inertials[body].append(part)

    def new_body(self, name: str, parent_body: int, jtype: int, axis: np.ndarray, C: np.ndarray,
                 r: np.ndarray, joint: Joint | None) -> int:
        self.body_names.append(name)
        self.body_links.append([])
        self.parent.append(parent_body)
        self.joint_type.append(jtype)
        self.axes.append(axis)
        self.rotations.append(C)
        self.translations.append(r)
        self.body_joint.append(joint)
        self.inertials.append([])
        return len(self.body_names) - 1


def _coordinate_fields(body_joint: list[Joint | None], floating_base: bool) -> dict[str, Any]:
    """Coordinates: free flyer first, then the independent joints in body order; mimic bodies share."""
    nb = len(body_joint)
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
        lower.append(joint.lower)
        upper.append(joint.upper)
        velocity.append(joint.velocity)
        effort.append(joint.effort)
        damping.append(joint.damping)
        friction.append(joint.friction)
    mimic_names, mimic_body = [], []
    for b in range(1, nb):
        joint = body_joint[b]
        if joint is None or joint.mimic is None:
            continue
        master = body_of_joint[joint.mimic.joint]
        idx_q[b], idx_v[b] = idx_q[master], idx_v[master]
        multiplier[b], offset[b] = joint.mimic.multiplier, joint.mimic.offset
        mimic_names.append(joint.name)
        mimic_body.append(b)
    return {
        "idx_q": _read_only(idx_q, np.int64),
        "idx_v": _read_only(idx_v, np.int64),
        "nq_joint": _read_only(nq_joint, np.int64),
        "nv_joint": _read_only(nv_joint, np.int64),
        "joint_multiplier": _read_only(multiplier),
        "joint_offset": _read_only(offset),
        "nq": nq,
        "nv": nv,
        "joint_names": tuple(joint_names),
        "joint_body": _read_only(joint_body_list, np.int64),
        "mimic_joint_names": tuple(mimic_names),
        "mimic_body": _read_only(mimic_body, np.int64),
        "lower_limit": _read_only(lower),
        "upper_limit": _read_only(upper),
        "velocity_limit": _read_only(velocity),
        "effort_limit": _read_only(effort),
        "damping": _read_only(damping),
        "friction": _read_only(friction),
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
