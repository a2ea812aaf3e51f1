"""The ``<ros2_control>`` blocks of a URDF as ``HardwareInfo`` dataclasses, and the URDF's joint limits.

Tag and attribute names follow ros2_control's component parser: ``<ros2_control name type>``
with ``<hardware><plugin/><param name/></hardware>``, ``<joint>``, ``<sensor>``, ``<gpio>`` each holding
``<command_interface name>``/``<state_interface name>`` whose ``<param>`` children ``min``, ``max`` and
``initial_value`` are numbers, and ``<param>`` children of the joint/sensor itself. Every ``<joint>`` of a
block must be a joint of the URDF. Only ``double`` interfaces are supported (the values live in float64
arrays); any other ``data_type`` is an error.

The URDF itself is read and checked by ``kinodyn.urdf.read_urdf``, the one front door of every consumer: it
has refused any malformed or non-finite number (including ``min``/``max``/``initial_value`` and the
``<limit>`` values) before the blocks are read here, and the joint limits are its values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kinodyn.urdf import ParsedURDF, URDFError, read_urdf

from kinodyn_control.hardware.types import InterfaceDescription, InterfaceInfo

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

COMPONENT_TYPES = ("system", "actuator", "sensor")
INTERFACE_NUMBER_PARAMS = ("min", "max", "initial_value")


class DescriptionError(URDFError):
    """A ``<ros2_control>`` block that cannot be used; the message names the element and the fix."""


@dataclass(frozen=True)
class ComponentInfo:
    """A ``<joint>``, ``<sensor>`` or ``<gpio>`` of a block (``kind``), with its interfaces and params."""

    name: str
    kind: str
    command_interfaces: tuple[InterfaceInfo, ...]
    state_interfaces: tuple[InterfaceInfo, ...]
    params: dict[str, str] = field(default_factory=dict)

    def command_descriptions(self) -> list[InterfaceDescription]:
        return [InterfaceDescription(self.name, i) for i in self.command_interfaces]

    def state_descriptions(self) -> list[InterfaceDescription]:
        return [InterfaceDescription(self.name, i) for i in self.state_interfaces]


@dataclass(frozen=True)
class HardwareInfo:
    """One ``<ros2_control>`` block: ``type`` is system/actuator/sensor, ``plugin`` the registry name.

    ``original_xml`` is the whole URDF the block came from (ros2_control's ``HardwareInfo::original_xml``),
    and ``urdf`` the same URDF as ``kinodyn.urdf.read_urdf`` validated it, so a simulated component builds
    its physics model from the robot description the controller manager has, without parsing it again.
    """

    name: str
    type: str
    plugin: str
    params: dict[str, str]
    joints: tuple[ComponentInfo, ...]
    sensors: tuple[ComponentInfo, ...]
    gpios: tuple[ComponentInfo, ...]
    original_xml: str = field(repr=False)
    urdf: ParsedURDF = field(repr=False, compare=False)
    rw_rate: int = 0

    @property
    def components(self) -> tuple[ComponentInfo, ...]:
        return self.joints + self.sensors + self.gpios


@dataclass(frozen=True)
class JointLimits:
    """``<limit>`` of a URDF joint: position bounds (infinite for continuous joints), |velocity|, |effort|."""

    lower: float = -math.inf
    upper: float = math.inf
    velocity: float = math.inf
    effort: float = math.inf


@dataclass(frozen=True)
class RobotDescription:
    """What the controller manager needs from a URDF: its hardware blocks and its joints' limits."""

    robot_name: str
    hardware: tuple[HardwareInfo, ...]
    joint_limits: dict[str, JointLimits]


def _params(element: ET.Element, where: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for param in element.findall("param"):
        name = param.get("name")
        if not name:
            raise DescriptionError(f"{where}: <param> without a name attribute")
        params[name] = (param.text or "").strip()
    return params


def _interface(element: ET.Element, where: str) -> InterfaceInfo:
    name = element.get("name")
    if not name:
        raise DescriptionError(f"{where}: <{element.tag}> without a name attribute")
    where = f"{where} {element.tag} '{name}'"
    data_type = element.get("data_type", "double")
    if data_type != "double":
        raise DescriptionError(f"{where}: data_type '{data_type}' is not supported; only double is")
    params = _params(element, where)
    # read_urdf has checked that each is one finite number
    numbers = {key: float(params.pop(key)) for key in INTERFACE_NUMBER_PARAMS if key in params}
    lower, upper = numbers.get("min", -math.inf), numbers.get("max", math.inf)
    if lower > upper:
        raise DescriptionError(f"{where}: min {lower} is greater than max {upper}")
    return InterfaceInfo(
        name=name,
        min=lower,
        max=upper,
        initial_value=numbers.get("initial_value", math.nan),
        data_type=data_type,
        params=params,
    )


def _component(element: ET.Element, where: str) -> ComponentInfo:
    name = element.get("name")
    if not name:
        raise DescriptionError(f"{where}: <{element.tag}> without a name attribute")
    where = f"{where} {element.tag} '{name}'"
    commands = tuple(_interface(e, where) for e in element.findall("command_interface"))
    states = tuple(_interface(e, where) for e in element.findall("state_interface"))
    for kind, interfaces in (("command", commands), ("state", states)):
        names = [i.name for i in interfaces]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise DescriptionError(f"{where}: {kind} interface(s) {', '.join(twice)} listed twice")
    return ComponentInfo(name, element.tag, commands, states, _params(element, where))


def _hardware(element: ET.Element, urdf: ParsedURDF) -> HardwareInfo:
    name = element.get("name")
    if not name:
        raise DescriptionError("<ros2_control> without a name attribute")
    where = f"<ros2_control name='{name}'>"
    kind = element.get("type", "").lower()
    if kind not in COMPONENT_TYPES:
        raise DescriptionError(
            f"{where}: type '{element.get('type')}' must be one of {', '.join(COMPONENT_TYPES)}"
        )
    hardware = element.find("hardware")
    plugin = hardware.findtext("plugin", "").strip() if hardware is not None else ""
    if not plugin:
        raise DescriptionError(f"{where}: needs <hardware><plugin>package/Class</plugin></hardware>")
    joints = tuple(_component(e, where) for e in element.findall("joint"))
    unknown = [j.name for j in joints if j.name not in {joint.name for joint in urdf.joints}]
    if unknown:
        raise DescriptionError(
            f"{where}: joint(s) {', '.join(unknown)} are not joints of the URDF; every <joint> of a "
            "<ros2_control> block must exist in the robot"
        )
    rw_rate = element.get("rw_rate", "0")
    if not rw_rate.isdigit():
        raise DescriptionError(f"{where}: rw_rate '{rw_rate}' must be a non-negative integer [Hz]")
    return HardwareInfo(
        name=name,
        type=kind,
        plugin=plugin,
        params=_params(hardware, where) if hardware is not None else {},
        joints=joints,
        sensors=tuple(_component(e, where) for e in element.findall("sensor")),
        gpios=tuple(_component(e, where) for e in element.findall("gpio")),
        original_xml=urdf.text,
        urdf=urdf,
        rw_rate=int(rw_rate),
    )


def parse_robot_description(urdf: str | ParsedURDF) -> RobotDescription:
    """Every ``<ros2_control>`` block of the URDF (XML text or ``read_urdf``'s result, in file order) and
    the limits of its joints. A bad URDF raises ``kinodyn.URDFError`` (``read_urdf``), a bad block
    ``DescriptionError``."""
    parsed = read_urdf(urdf)
    blocks = tuple(_hardware(e, parsed) for e in parsed.root.findall("ros2_control"))
    if not blocks:
        raise DescriptionError(
            "robot_description has no <ros2_control> block; add one per hardware component (urdf/README.md)"
        )
    names = [b.name for b in blocks]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DescriptionError(f"<ros2_control> name(s) {', '.join(twice)} used by more than one block")
    limits = {j.name: JointLimits(j.lower, j.upper, j.velocity, j.effort) for j in parsed.joints}
    return RobotDescription(parsed.name, blocks, limits)
