"""The URDF joint tree as TF sees it: one transform parent link <- child link per joint.

robot_state_publisher semantics: every joint gives ``T_parent_child = T_origin @ T_motion(q)``,
where ``T_origin`` is the joint's ``<origin>`` (URDF roll-pitch-yaw, ``C = Cz(yaw) Cy(pitch) Cx(roll)``,
Robot Dynamics lecture notes (ETH), (2.41)) and ``T_motion`` is a rotation by q about the unit ``<axis>``
(revolute, continuous; Rodrigues, Robot Dynamics lecture notes (ETH), (2.48)) or a translation by q along it
(prismatic). Fixed joints have ``T_motion = I`` and go on ``/tf_static``; the others go on ``/tf``. Mimic
joints follow ``q = multiplier * q_master + offset``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from kinodyn.spatial import angle_axis_to_matrix, euler_to_matrix, homogeneous_transform
from kinodyn.urdf import Joint, ParsedURDF, read_urdf

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from kinodyn.urdf.document import Mimic

_KINDS = {"fixed": "fixed", "revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic"}

Transform = tuple[str, str, np.ndarray]
"""``(parent link, child link, T_parent_child)``."""


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


def _tree_joint(joint: Joint) -> TreeJoint:
    """A joint of ``kinodyn.urdf.read_urdf``, whose values are already checked (finite, unit axis)."""
    roll, pitch, yaw = joint.origin.rpy
    origin = homogeneous_transform(euler_to_matrix([yaw, pitch, roll], "zyx"), joint.origin.xyz)
    return TreeJoint(joint.name, _KINDS[joint.type], joint.parent, joint.child, origin, np.array(joint.axis),
                     joint.mimic)


class TfTree:
    """The joints of a URDF in depth-first order (children in file order), and their transforms."""

    def __init__(self, root_link: str, joints: tuple[TreeJoint, ...]) -> None:
        self.root_link = root_link
        self.joints = joints
        self.movable_joint_names = tuple(j.name for j in joints if j.kind != "fixed" and j.mimic is None)
        self.mimic_joint_names = tuple(j.name for j in joints if j.mimic is not None)
        self.links = (root_link, *(j.child for j in joints))

    @classmethod
    def from_urdf(cls, source: str | Path | bytes | ParsedURDF) -> TfTree:
        """Build from a URDF (XML text, a path, or ``kinodyn.urdf.read_urdf``'s result); a bad URDF raises
        ``kinodyn.URDFError``, as for every consumer."""
        urdf = read_urdf(source)
        return cls(urdf.root_link, tuple(_tree_joint(j) for j in urdf.joints))

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
            elif joint.mimic.joint in positions:
                q = joint.mimic.multiplier * positions[joint.mimic.joint] + joint.mimic.offset
                result.append((joint.parent, joint.child, joint.transform(q)))
        return result
