"""Robots shared by the simulator tests: the project's URDFs and two small test bodies."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..urdf_text import inertial_link

URDFS = Path(__file__).resolve().parents[4] / "urdf"
sys.path.insert(0, str(URDFS))
import generate  # noqa: E402  (urdf/generate.py: the robots and their scaling)

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
  {inertial_link("rod", PENDULUM_MASS, (0.1, 0, 0, PENDULUM_INERTIA, 0, 0.01), f"0 0 -{PENDULUM_COM}")}
  <joint name="hinge" type="continuous"><parent link="base"/><child link="rod"/><axis xyz="0 1 0"/></joint>
</robot>"""
"""A rigid pendulum about y, centre of mass 0.5 m below the hinge, no damping or friction."""



QUADRUPED_MASS = 36.0  # kg
SMALL_QUADRUPED_MASS, SMALL_QUADRUPED_LENGTH = 2.5, 0.5  # kg; the length scale (legs of 0.15 m)
SMALL_QUADRUPED_URDF = generate.render(generate.scaled(generate.quadruped(), SMALL_QUADRUPED_LENGTH,
                                                       SMALL_QUADRUPED_MASS / QUADRUPED_MASS))
"""urdf/quadruped.urdf scaled to 2.5 kg and legs of 0.15 m, a Solo-sized quadruped: each shank with its
foot weighs 35 g (0.5 kg on the 36 kg robot)."""
TINY_QUADRUPED_MASS, TINY_QUADRUPED_LENGTH = 0.5, 0.16  # kg; the length scale (legs of 8 cm)
TINY_QUADRUPED_URDF = generate.render(generate.scaled(generate.quadruped(), TINY_QUADRUPED_LENGTH,
                                                      TINY_QUADRUPED_MASS / QUADRUPED_MASS))
"""A toy-sized quadruped, shanks with their feet of 10 g: on a ground scaled to its legs with the dampers
scaled as the springs, their ``(d / m_c) dt`` would be beyond what the explicit integrators resolve at
1 ms."""
