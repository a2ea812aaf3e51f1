"""Non-physical link inertias of a URDF, found and (on request) repaired as MuJoCo's compiler does.

MuJoCo refuses a model with a link whose principal moments of inertia A, B, C violate the triangle
inequality ``A + B >= C`` (no rigid body has them), a moving link (the child of a movable joint, or the root
of a floating base) with a mass or a principal moment below ``MINVAL``, and a link whose inertia has a
principal moment below ``MINVAL`` (zero, or negative). MuJoCo checks a moving body together with the bodies
welded to it (its descendants through fixed joints): a massless moving link is accepted when a link fixed to
it has a mass and principal moments of at least ``MINVAL`` (a massless root link fixed to the trunk, as in
many robots' URDFs), and is left alone here too. MuJoCo's compiler repairs the others on request (MuJoCo
documentation, XML reference, ``compiler``): ``balanceinertia`` sets the three principal moments to their
mean, ``boundmass`` and ``boundinertia`` raise masses and principal moments to a lower bound.
``repair_inertias`` applies those rules to the URDF itself, so that kinodyn's model and MuJoCo's simulate the
same bodies (``create_backend(..., balance_inertia=True)``):

1. mass below ``MINVAL`` on a moving link: raised to ``min_mass``;
2. a principal moment below ``MINVAL`` on a moving link or on a link with any nonzero inertia entry: the
   principal moments below ``min_inertia`` raised to it (principal axes kept);
3. principal moments violating ``A + B >= C``: all three set to their mean (an isotropic inertia).

The centre of mass stays where the URDF puts it.
"""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from kinodyn.urdf import ParsedURDF, read_urdf

MINVAL = 1e-15  # MuJoCo's mjMINVAL: the smallest mass and principal moment it accepts
MIN_MASS = 1e-6  # kg: lower bound of a moving link's mass (MuJoCo's boundmass)
MIN_INERTIA = 1e-10  # kg m^2: lower bound of a principal moment (MuJoCo's boundinertia)
INERTIA_NAMES = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclass(frozen=True)
class InertiaRepair:
    """One link's repaired inertial: ``what`` was wrong and the new mass [kg] and inertia (3x3, kg m^2, about
    the centre of mass in the URDF's ``<inertial>`` axes)."""

    link: str
    what: str
    mass: float
    inertia: np.ndarray


def moving_links(parsed: ParsedURDF, floating_base: bool) -> set[str]:
    """The links MuJoCo gives a joint: children of movable joints, and the root of a floating base."""
    moving = {j.child for j in parsed.joints if j.movable}
    return moving | {parsed.root_link} if floating_base else moving


def welded_links(parsed: ParsedURDF, link: str) -> list[str]:
    """``link`` and the links fixed to it through fixed joints only (one rigid body), ``link`` first."""
    group, stack = [], [link]
    while stack:
        name = stack.pop()
        group.append(name)
        stack.extend(joint.child for joint in parsed.children(name) if not joint.movable)
    return group


def inertia_repairs(parsed: ParsedURDF, floating_base: bool, min_mass: float = MIN_MASS,
                    min_inertia: float = MIN_INERTIA) -> list[InertiaRepair]:
    """The links whose inertial the rules of the module doc change, in file order, with their repair."""
    carriers = {link.name for link in parsed.links if link.inertial is not None
                and link.inertial.mass >= MINVAL and min(np.linalg.eigvalsh(link.inertial.inertia)) >= MINVAL}
    moving = {name for name in moving_links(parsed, floating_base)
              if not carriers.intersection(welded_links(parsed, name)[1:])}  # bare: nothing welded carries it
    repairs = []
    for link in parsed.links:
        mass = link.inertial.mass if link.inertial is not None else 0.0
        inertia = link.inertial.inertia if link.inertial is not None else np.zeros((3, 3))
        what = []
        if link.name in moving and mass < MINVAL:
            what.append(f"mass {mass:.3g} kg on a moving link (set to {min_mass:.3g} kg)")
            mass = min_mass
        moments, axes = np.linalg.eigh(inertia)
        if (link.name in moving or np.any(inertia != 0.0)) and moments.min() < MINVAL:
            what.append(f"principal moments {_fmt(moments)} kg m^2 not all > 0 (raised to {min_inertia:.3g})")
            moments = np.maximum(moments, min_inertia)
        if moments[0] + moments[1] < moments[2]:
            what.append(f"principal moments {_fmt(moments)} kg m^2 violate A + B >= C (set to their mean)")
            moments = np.full(3, moments.mean())
        if what:
            repairs.append(InertiaRepair(link.name, "; ".join(what), mass, (axes * moments) @ axes.T))
    return repairs


def repair_inertias(parsed: ParsedURDF, repairs: list[InertiaRepair]) -> ParsedURDF:
    """``parsed`` with the ``<inertial>`` of each repaired link replaced (its ``<origin>`` kept)."""
    root = copy.deepcopy(parsed.root)
    elements = {link.get("name"): link for link in root.findall("link")}
    for repair in repairs:
        link = elements[repair.link]
        inertial = link.find("inertial")
        if inertial is None:
            inertial = ET.SubElement(link, "inertial")
        for tag in ("mass", "inertia"):
            for element in inertial.findall(tag):
                inertial.remove(element)
        ET.SubElement(inertial, "mass", value=repr(repair.mass))
        rows, cols = np.triu_indices(3)  # ixx ixy ixz iyy iyz izz
        values = repair.inertia[rows, cols]
        ET.SubElement(inertial, "inertia", {k: repr(float(v)) for k, v in zip(INERTIA_NAMES, values,
                                                                                  strict=True)})
    return read_urdf(ET.tostring(root, encoding="unicode"))


def _fmt(values: np.ndarray) -> str:
    return "(" + ", ".join(f"{v:.4g}" for v in values) + ")"
