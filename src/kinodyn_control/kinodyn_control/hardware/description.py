"""The ``<ros2_control>`` blocks of a URDF as ``HardwareInfo`` dataclasses, and the URDF's joint limits.

Tag and attribute names follow ros2_control's component parser (ANCHORS §1.2): ``<ros2_control name type>``
with ``<hardware><plugin/><param name/></hardware>``, ``<joint>``, ``<sensor>``, ``<gpio>`` each holding
``<command_interface name>``/``<state_interface name>`` whose ``<param>`` children ``min``, ``max`` and
``initial_value`` are numbers, and ``<param>`` children of the joint/sensor itself. Every ``<joint>`` of a
block must be a joint of the URDF. Only ``double`` interfaces are supported (the values live in float64
arrays); any other ``data_type`` is an error.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from kinodyn_control.hardware.types import InterfaceDescription, InterfaceInfo

COMPONENT_TYPES = ("system", "actuator", "sensor")
INTERFACE_NUMBER_PARAMS = ("min", "max", "initial_value")


class DescriptionError(ValueError):
    """A ``<ros2_control>`` block or URDF that cannot be used; the message names the element and the fix."""


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
    so a simulated component builds its physics model from the robot description the controller manager
    has.
    """

    name: str
    type: str
    plugin: str
    params: dict[str, str]
    joints: tuple[ComponentInfo, ...]
    sensors: tuple[ComponentInfo, ...]
    gpios: tuple[ComponentInfo, ...]
    original_xml: str = field(repr=False)
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


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise DescriptionError(f"{where}: '{text}' is not a number") from None


def _interface(element: ET.Element, where: str) -> InterfaceInfo:
    name = element.get("name")
    if not name:
        raise DescriptionError(f"{where}: <{element.tag}> without a name attribute")
    where = f"{where} {element.tag} '{name}'"
    data_type = element.get("data_type", "double")
    if data_type != "double":
        raise DescriptionError(f"{where}: data_type '{data_type}' is not supported; only double is")
    params = _params(element, where)
    numbers = {
        key: _number(params.pop(key), f"{where} param {key}")
        for key in INTERFACE_NUMBER_PARAMS
        if key in params
    }
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


def _hardware(element: ET.Element, urdf_joints: set[str], urdf_xml: str) -> HardwareInfo:
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
    unknown = [j.name for j in joints if j.name not in urdf_joints]
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
        original_xml=urdf_xml,
        rw_rate=int(rw_rate),
    )


def _joint_limits(joint: ET.Element) -> JointLimits:
    limit = joint.find("limit")
    where = f"URDF joint '{joint.get('name')}' <limit>"
    if limit is None:
        return JointLimits()
    bounded = joint.get("type") in ("revolute", "prismatic")

    def value(key: str, default: float) -> float:
        text = limit.get(key)
        return _number(text, f"{where} {key}") if text is not None else default

    return JointLimits(
        lower=value("lower", 0.0) if bounded else -math.inf,
        upper=value("upper", 0.0) if bounded else math.inf,
        velocity=value("velocity", math.inf),
        effort=value("effort", math.inf),
    )


def parse_robot_description(urdf_xml: str) -> RobotDescription:
    """Every ``<ros2_control>`` block of ``urdf_xml`` (in file order) and the limits of its joints."""
    try:
        root = ET.fromstring(urdf_xml)
    except ET.ParseError as exc:
        raise DescriptionError(f"robot_description is not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise DescriptionError(f"robot_description's root element is <{root.tag}>, expected <robot>")
    joints = {j.get("name"): j for j in root.findall("joint")}
    blocks = tuple(_hardware(e, set(joints), urdf_xml) for e in root.findall("ros2_control"))
    if not blocks:
        raise DescriptionError(
            "robot_description has no <ros2_control> block; add one per hardware component (urdf/README.md)"
        )
    names = [b.name for b in blocks]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DescriptionError(f"<ros2_control> name(s) {', '.join(twice)} used by more than one block")
    limits = {name: _joint_limits(joint) for name, joint in joints.items()}
    return RobotDescription(root.get("name", ""), blocks, limits)
