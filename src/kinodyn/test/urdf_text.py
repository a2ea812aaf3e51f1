"""URDF text of the small robots the core tests write inline: a link with its inertial block, from numbers."""

from __future__ import annotations

Inertia = tuple[float, float, float, float, float, float]


def inertial_link(name: str, mass: float, inertia: Inertia, com: str = "0 0 0") -> str:
    """``<link>`` of ``mass`` with its centre of mass at ``com`` (``"x y z"`` in the link frame) and the
    rotational inertia ``(ixx, ixy, ixz, iyy, iyz, izz)`` about it, in the link axes (URDF ``<inertial>``)."""
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>'
            "</inertial></link>")
