"""URDF text of the small robots the core tests write inline: a link with its inertial block, from numbers,
and a robot the tests of several modules share."""

from __future__ import annotations

Inertia = tuple[float, float, float, float, float, float]


def inertial_link(name: str, mass: float, inertia: Inertia, com: str = "0 0 0") -> str:
    """``<link>`` of ``mass`` with its centre of mass at ``com`` (``"x y z"`` in the link frame) and the
    rotational inertia ``(ixx, ixy, ixz, iyy, iyz, izz)`` about it, in the link axes (URDF ``<inertial>``)."""
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>'
            "</inertial></link>")


MIMIC_URDF = f"""<robot name="mimic">
  {inertial_link("base", 2.0, (0.02, 0, 0, 0.03, 0, 0.025))}
  {inertial_link("a", 1.2, (0.01, 0.001, 0, 0.02, 0.002, 0.015), "0.1 0 0.02")}
  {inertial_link("b", 0.7, (0.005, 0, 0.0005, 0.004, 0, 0.006), "0 0.05 0.1")}
  {inertial_link("c", 0.4, (0.002, 0, 0, 0.003, 0, 0.002), "0.02 0 0.03")}
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.1" rpy="0.2 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <joint name="j2" type="prismatic"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0" rpy="0 0.3 0"/>
    <axis xyz="0.6 0.8 0"/><limit lower="-1" upper="1" effort="10" velocity="10"/></joint>
  <joint name="j3" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0.2 0"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/>
    <mimic joint="j1" multiplier="-1.5" offset="0.1"/></joint>
</robot>"""
"""Three bodies on a revolute, a prismatic (oblique axis) and a revolute joint that mimics the first
(multiplier -1.5, offset 0.1), with off-diagonal inertias and off-origin centres of mass."""
