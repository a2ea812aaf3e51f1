"""Robots shared by the simulator tests: the project's URDFs and two small test bodies."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

URDFS = Path(__file__).resolve().parents[4] / "urdf"
QUADRUPED_URDF = URDFS / "quadruped.urdf"
PLANAR_URDF = URDFS / "planar_2link.urdf"

# Nominal standing configuration of urdf/quadruped.urdf (urdf/README.md): base 0.5252 m above ground.
QUADRUPED_STANDING_JOINTS = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])
QUADRUPED_STANDING_HEIGHT = 0.5252

BOX_MASS = 3.0
BOX_SIZE = (0.4, 0.2, 0.1)
BOX_URDF = f"""<robot name="box">
  <link name="body">
    <inertial><mass value="{BOX_MASS}"/>
      <inertia ixx="{BOX_MASS / 12 * (0.2**2 + 0.1**2)}" ixy="0" ixz="0"
               iyy="{BOX_MASS / 12 * (0.4**2 + 0.1**2)}" iyz="0"
               izz="{BOX_MASS / 12 * (0.4**2 + 0.2**2)}"/></inertial>
  </link>
</robot>"""
"""A uniform box with its centre of mass at the link origin (principal axes = link axes)."""

PENDULUM_MASS, PENDULUM_COM, PENDULUM_INERTIA = 1.0, 0.5, 0.1
PENDULUM_URDF = f"""<robot name="pendulum">
  <link name="base"/>
  <link name="rod">
    <inertial><origin xyz="0 0 -{PENDULUM_COM}"/><mass value="{PENDULUM_MASS}"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="{PENDULUM_INERTIA}" iyz="0" izz="0.01"/></inertial>
  </link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/><axis xyz="0 1 0"/></joint>
</robot>"""
"""A rigid pendulum about y, centre of mass 0.5 m below the hinge, no damping or friction."""



def scaled_urdf(text: str, length: float, mass: float) -> str:
    """``text`` with every length times ``length`` and every mass times ``mass`` (inertias times
    ``mass * length**2``, effort limits times ``mass * length``, the torque of the same pose under gravity):
    the robot keeps its proportions and its mass distribution."""
    scales = {"origin": {"xyz": length}, "box": {"size": length}, "sphere": {"radius": length},
              "cylinder": {"radius": length, "length": length}, "mass": {"value": mass},
              "limit": {"effort": mass * length},
              "inertia": dict.fromkeys(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), mass * length**2)}
    root = ET.fromstring(text)
    for element in root.iter():
        for key, factor in scales.get(element.tag, {}).items():
            if key in element.attrib:
                element.set(key, " ".join(repr(float(x) * factor) for x in element.attrib[key].split()))
    return ET.tostring(root, encoding="unicode")


QUADRUPED_MASS = 36.0  # kg
SMALL_QUADRUPED_MASS, SMALL_QUADRUPED_LENGTH = 2.5, 0.5  # kg; the length scale (legs of 0.15 m)
SMALL_QUADRUPED_URDF = scaled_urdf(QUADRUPED_URDF.read_text(), SMALL_QUADRUPED_LENGTH,
                                   SMALL_QUADRUPED_MASS / QUADRUPED_MASS)
"""urdf/quadruped.urdf scaled to 2.5 kg and legs of 0.15 m, a Solo-sized quadruped: each shank with its
foot weighs 35 g (0.5 kg on the 36 kg robot)."""
