"""Robots shared by the IK tests: the project's 7-DoF arm, the Panda, and the planar 3-link arm of the Robot
Dynamics lecture notes (ETH), Ex. 2.8.5."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kinodyn.model import Model

ROOT = Path(__file__).resolve().parents[4]
ARM7 = ROOT / "urdf" / "arm7.urdf"
ROBOTS = Path(np.__file__).parents[1] / "cmeel.prefix/share/example-robot-data/robots"
PANDA = ROBOTS / "panda_description/urdf/panda.urdf"

_LINK = ('<link name="{}"><inertial><mass value="1"/>'
         '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>')
_JOINT = ('<joint name="{}" type="revolute"><parent link="{}"/><child link="{}"/>'
          '<origin xyz="0 0 1"/><axis xyz="0 1 0"/>'
          '<limit lower="{}" upper="{}" effort="10" velocity="2"/></joint>')


def planar_3link_urdf(lower: float = -3.0, upper: float = 3.0) -> str:
    """Robot Dynamics lecture notes (ETH), Ex. 2.8.5: unit links along local +z, joints about +y, base offset
    l0 = 1 along z."""
    links = "".join(_LINK.format(name) for name in ("base", "l1", "l2", "l3", "ee"))
    pairs = [("base", "l1"), ("l1", "l2"), ("l2", "l3")]
    joints = "".join(_JOINT.format(f"j{i}", parent, child, lower, upper)
                     for i, (parent, child) in enumerate(pairs, start=1))
    fixed = ('<joint name="ee_joint" type="fixed"><parent link="l3"/><child link="ee"/>'
             '<origin xyz="0 0 1"/></joint>')
    return f'<robot name="planar3">{links}{joints}{fixed}</robot>'


@pytest.fixture(scope="session")
def arm7() -> Model:
    return Model.from_urdf(ARM7)


@pytest.fixture(scope="session")
def panda() -> Model:
    return Model.from_urdf(PANDA)


@pytest.fixture(scope="session")
def planar3() -> Model:
    return Model.from_urdf(planar_3link_urdf())
