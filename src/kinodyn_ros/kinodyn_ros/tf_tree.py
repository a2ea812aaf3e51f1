"""The URDF joint tree as TF sees it: one transform parent link <- child link per joint.

robot_state_publisher semantics (ANCHORS §2): every joint gives ``T_parent_child = T_origin @ T_motion(q)``,
where ``T_origin`` is the joint's ``<origin>`` (URDF roll-pitch-yaw, ``C = Cz(yaw) Cy(pitch) Cx(roll)``,
seed 000 (2.41)) and ``T_motion`` is a rotation by q about the unit ``<axis>`` (revolute, continuous;
Rodrigues, seed 000 (2.48)) or a translation by q along it (prismatic). Fixed joints have
``T_motion = I`` and go on ``/tf_static``; the others go on ``/tf``. Mimic joints follow
``q = multiplier * q_master + offset``.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from kinodyn.spatial import angle_axis_to_matrix, euler_to_matrix, homogeneous_transform
from urdf_parser_py import urdf as urdf_model
from urdf_parser_py.xml_reflection import core as urdf_reflection

_KINDS = {"fixed": "fixed", "revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic"}

Transform = tuple[str, str, np.ndarray]
"""``(parent link, child link, T_parent_child)``."""


class URDFTreeError(ValueError):
    """The URDF is not well-formed or not a tree of supported joints; the message says which and why."""


@dataclass(frozen=True)
class Mimic:
    master: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class TreeJoint:
    """One URDF joint: ``kind`` is "fixed", "revolute" (also continuous) or "prismatic"."""

    name: str
    kind: str
    parent: str
    child: str
    origin: np.ndarray  # T_parent_joint at q = 0, 4x4
    axis: np.ndarray  # unit axis in the joint (child) frame
    mimic: Mimic | None

    def transform(self, q: float = 0.0) -> np.ndarray:
        """``T_parent_child(q) = T_origin @ T_motion(q)``."""
        if self.kind == "revolute":
            return self.origin @ homogeneous_transform(angle_axis_to_matrix(q, self.axis), np.zeros(3))
        if self.kind == "prismatic":
            return self.origin @ homogeneous_transform(np.eye(3), q * self.axis)
        return self.origin


def _origin_matrix(joint: Any) -> np.ndarray:
    """``T_parent_joint`` of the joint's ``<origin xyz rpy>`` (identity when absent)."""
    pose = joint.origin
    xyz = pose.xyz if pose is not None and pose.xyz is not None else [0.0, 0.0, 0.0]
    rpy = pose.rpy if pose is not None and pose.rpy is not None else [0.0, 0.0, 0.0]
    if not np.all(np.isfinite([*xyz, *rpy])):
        raise URDFTreeError(f"joint {joint.name!r} has a non-finite <origin xyz={xyz} rpy={rpy}>")
    roll, pitch, yaw = rpy
    return homogeneous_transform(euler_to_matrix([yaw, pitch, roll], "zyx"), xyz)


def _tree_joint(joint: Any) -> TreeJoint:
    kind = _KINDS.get(joint.type)
    if kind is None:
        raise URDFTreeError(
            f"joint {joint.name!r} has type {joint.type!r}; supported types are fixed, revolute, continuous "
            "and prismatic (a floating base comes from an Odometry topic instead, see odometry_topic)"
        )
    origin = _origin_matrix(joint)
    axis = np.zeros(3)
    if kind != "fixed":  # URDF's default axis is x
        axis = np.asarray(joint.axis if joint.axis is not None else [1.0, 0.0, 0.0], dtype=np.float64)
        norm = float(np.linalg.norm(axis))
        if not (math.isfinite(norm) and norm > 1e-12):
            raise URDFTreeError(
                f"joint {joint.name!r} has axis {axis.tolist()}; it needs a finite non-zero <axis xyz>"
            )
        axis = axis / norm
    mimic = None
    if joint.mimic is not None:
        mimic = Mimic(
            joint.mimic.joint,
            1.0 if joint.mimic.multiplier is None else float(joint.mimic.multiplier),
            0.0 if joint.mimic.offset is None else float(joint.mimic.offset),
        )
    return TreeJoint(joint.name, kind, joint.parent, joint.child, origin, axis, mimic)


def _parse(xml: str) -> Any:
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise URDFTreeError(f"URDF is not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise URDFTreeError(f"URDF root element must be <robot>, got <{root.tag}>")
    previous = urdf_reflection.on_error
    urdf_reflection.on_error = lambda message: None  # notices about unknown tags (ros2_control, gazebo, ...)
    try:
        return urdf_model.URDF.from_xml_string(xml)
    except Exception as exc:  # urdf_parser_py raises ParseError, ValueError, AssertionError, ...
        raise URDFTreeError(f"malformed URDF: {exc}".replace("\n", " ")) from None
    finally:
        urdf_reflection.on_error = previous


class TfTree:
    """The joints of a URDF in depth-first order (children in file order), and their transforms."""

    def __init__(self, root_link: str, joints: tuple[TreeJoint, ...]) -> None:
        self.root_link = root_link
        self.joints = joints
        self.movable_joint_names = tuple(j.name for j in joints if j.kind != "fixed" and j.mimic is None)
        self.mimic_joint_names = tuple(j.name for j in joints if j.mimic is not None)
        self.links = (root_link, *(j.child for j in joints))

    @classmethod
    def from_urdf(cls, xml: str) -> TfTree:
        """Build from URDF XML text; raises URDFTreeError naming what is wrong."""
        robot = _parse(xml)
        link_names = [link.name for link in robot.links]
        if not link_names:
            raise URDFTreeError("URDF has no <link>")
        joints = [_tree_joint(j) for j in robot.joints]
        by_name = {j.name: j for j in joints}
        if len(by_name) != len(joints):
            raise URDFTreeError("URDF has two joints with the same name")
        parent_of: dict[str, str] = {}
        children: dict[str, list[TreeJoint]] = {name: [] for name in link_names}
        for joint in joints:
            for role, link in (("parent", joint.parent), ("child", joint.child)):
                if link not in children:
                    raise URDFTreeError(
                        f"joint {joint.name!r} names {role} link {link!r}, which is not a <link>"
                    )
            if joint.child in parent_of:
                raise URDFTreeError(
                    f"link {joint.child!r} is the child of joints {parent_of[joint.child]!r} and "
                    f"{joint.name!r}; a URDF must be a tree"
                )
            parent_of[joint.child] = joint.name
            children[joint.parent].append(joint)
            if joint.mimic is not None:
                master = by_name.get(joint.mimic.master)
                if master is None or master.kind == "fixed" or master.mimic is not None:
                    raise URDFTreeError(
                        f"joint {joint.name!r} mimics {joint.mimic.master!r}, which is not an "
                        "independent movable joint of the URDF"
                    )
        roots = [name for name in link_names if name not in parent_of]
        if len(roots) != 1:
            raise URDFTreeError(
                f"URDF must have exactly one root link (a link that is no joint's child); "
                f"it has {len(roots)}: {roots}"
            )
        ordered: list[TreeJoint] = []
        stack = list(reversed(children[roots[0]]))
        while stack:
            joint = stack.pop()
            ordered.append(joint)
            stack.extend(reversed(children[joint.child]))
        if len(ordered) != len(joints):
            unreached = sorted({j.child for j in joints} - {j.child for j in ordered})
            raise URDFTreeError(f"links {unreached} are not reachable from the root link {roots[0]!r}")
        return cls(roots[0], tuple(ordered))

    def static_transforms(self) -> list[Transform]:
        """``(parent, child, T)`` of every fixed joint."""
        return [(j.parent, j.child, j.transform()) for j in self.joints if j.kind == "fixed"]

    def moving_transforms(self, positions: Mapping[str, float]) -> list[Transform]:
        """``(parent, child, T)`` of each movable joint named in ``positions`` and of the mimic joints that
        follow one of them; joints without a position get no transform (as robot_state_publisher)."""
        result = []
        for joint in self.joints:
            if joint.kind == "fixed":
                continue
            if joint.mimic is None:
                if joint.name in positions:
                    result.append((joint.parent, joint.child, joint.transform(positions[joint.name])))
            elif joint.mimic.master in positions:
                q = joint.mimic.multiplier * positions[joint.mimic.master] + joint.mimic.offset
                result.append((joint.parent, joint.child, joint.transform(q)))
        return result
