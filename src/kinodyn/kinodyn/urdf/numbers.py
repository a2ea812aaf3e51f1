"""Every number of a URDF is finite: one pass over the XML before anything reads a value.

The numeric attributes of urdfdom's schema (joint.cpp, link.cpp, pose.cpp: origin, mass, inertia, axis,
limit, dynamics, mimic, safety_controller, calibration, geometry, color) must be numbers, as many as the
attribute takes, and finite; so must ros2_control's numeric interface params (``min``, ``max``,
``initial_value``, hardware_info.cpp). Any other attribute value or element text anywhere in the file
(``<gazebo>``, ``<transmission>``, hardware params, ...) that reads as a number must be finite too. Every
number must also be within +-``MAX_MAGNITUDE``, so that no sum or product the model forms overflows.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kinodyn.urdf.errors import URDFError

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET
    from collections.abc import Iterator

SCHEMA: dict[str, dict[str, int]] = {
    "origin": {"xyz": 3, "rpy": 3},
    "mass": {"value": 1},
    "inertia": {name: 1 for name in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")},
    "axis": {"xyz": 3},
    "limit": {"lower": 1, "upper": 1, "effort": 1, "velocity": 1},
    "dynamics": {"damping": 1, "friction": 1},
    "mimic": {"multiplier": 1, "offset": 1},
    "safety_controller": {"soft_lower_limit": 1, "soft_upper_limit": 1, "k_position": 1, "k_velocity": 1},
    "calibration": {"rising": 1, "falling": 1, "reference_position": 1},
    "box": {"size": 3},
    "cylinder": {"radius": 1, "length": 1},
    "capsule": {"radius": 1, "length": 1},
    "sphere": {"radius": 1},
    "mesh": {"scale": 3},
    "color": {"rgba": 4},
}
"""Numeric attributes and how many numbers each takes, inside ``<link>``, ``<joint>`` and ``<material>``."""
SCHEMA_ELEMENTS = ("link", "joint", "material")
INTERFACE_TAGS = ("command_interface", "state_interface")
INTERFACE_NUMBERS = ("min", "max", "initial_value")
MAX_MAGNITUDE = 1e100
"""Largest |number| accepted: far beyond any robot quantity in SI units, and small enough that what the model
forms from the file (a merged body's m d^2, chains of placements) stays finite."""
NAMES = frozenset({"name", "link", "joint", "type", "filename", "reference"})
"""Attributes that hold names, never numbers (a link may be called "inf")."""


def label(element: ET.Element) -> str:
    """``joint 'j'`` for a named element, ``<gazebo reference="base">`` or ``<inertial>`` otherwise."""
    name = element.get("name")
    if name is not None:
        return f"{element.tag} '{name}'"
    names = "".join(f' {key}="{value}"' for key, value in element.attrib.items() if key in NAMES)
    return f"<{element.tag}{names}>"


def numbers(text: str, count: int, where: str) -> list[float]:
    """The ``count`` numbers of ``text``, each finite and within +-``MAX_MAGNITUDE``; ``URDFError`` naming
    ``where`` otherwise."""
    tokens = text.split()
    if len(tokens) != count:
        raise URDFError(f"{where}: needs {count} number{'s' if count > 1 else ''}, got {len(tokens)}")
    values = []
    for token in tokens:
        try:
            value = float(token)
        except ValueError:
            raise URDFError(f"{where}: {token!r} is not a number") from None
        if not abs(value) <= MAX_MAGNITUDE:
            raise _unusable(where, token, value)
        values.append(value)
    return values


def _unusable(where: str, token: str, value: float) -> URDFError:
    if not math.isfinite(value):
        return URDFError(f"{where}: {token!r} is not a finite number; every number in a URDF must be finite")
    return URDFError(f"{where}: {token!r} is out of range; every number in a URDF must be within "
                     f"+-{MAX_MAGNITUDE:g}")


def _check_tokens(text: str, where: str) -> None:
    """Every token of ``text`` that reads as a number is finite and within +-``MAX_MAGNITUDE``."""
    for token in text.split():
        try:
            value = float(token)
        except ValueError:
            continue
        if not abs(value) <= MAX_MAGNITUDE:
            raise _unusable(where, token, value)


def _walk(element: ET.Element, parent: ET.Element | None, context: str
          ) -> Iterator[tuple[ET.Element, ET.Element | None, str]]:
    """Every element under ``element`` with its parent and the labels of its ancestors."""
    yield element, parent, context
    inner = f"{context} {label(element)}".strip()
    for child in element:
        yield from _walk(child, element, inner)


def _check_element(element: ET.Element, context: str, schema: dict[str, int], interface: bool) -> None:
    prefix = f"{context} " if context else ""
    for attr, value in element.attrib.items():
        where = f'{prefix}<{element.tag} {attr}="{value}">'
        if attr in schema:
            numbers(value, schema[attr], where)
        elif attr not in NAMES:
            _check_tokens(value, where)
    text = (element.text or "").strip()
    if not text:
        return
    attrs = "".join(f' {key}="{value}"' for key, value in element.attrib.items())
    where = f"{prefix}<{element.tag}{attrs}>{text}</{element.tag}>"
    if interface and element.tag == "param" and element.get("name") in INTERFACE_NUMBERS:
        numbers(text, 1, where)
    else:
        _check_tokens(text, where)


def check_numbers(root: ET.Element) -> None:
    """Raise ``URDFError`` for the first number of the document that is malformed, not finite or out of
    range."""
    _check_element(root, "", {}, False)
    for top in root:
        in_schema = top.tag in SCHEMA_ELEMENTS
        for element, parent, context in _walk(top, None, ""):
            schema = SCHEMA.get(element.tag, {}) if in_schema else {}
            interface = top.tag == "ros2_control" and parent is not None and parent.tag in INTERFACE_TAGS
            _check_element(element, context, schema, interface)
