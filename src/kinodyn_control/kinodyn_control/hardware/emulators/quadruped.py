"""The quadruped (urdf/quadruped.urdf) switched to the real drivers, and its 12 emulated motors: shared by
test/test_real_drivers_system.py and bench/bench_drivers.py.

``real_drivers_urdf`` changes plugin names and params only: the joints' block becomes
``kinodyn_control/CanMotorSystem`` (each joint's ``can_id`` is its place in the block, 1..12; ``direction`` -1
on the right legs, to exercise the mapping), and the IMU ``<sensor>`` moves to a ``kinodyn_control/
SerialImuSensor`` block of its own (a CAN motor bus carries joints only), or is left out without an IMU port.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from kinodyn_control.hardware.can_motor_protocol import MotorRanges
from kinodyn_control.hardware.emulators.mit_motor import MitMotor

URDF = Path(__file__).resolve().parents[5] / "urdf" / "quadruped.urdf"
RANGES = MotorRanges(p_max=12.5, v_max=50.0, kp_max=500.0, kd_max=5.0, t_max=100.0)


def direction(joint: str) -> int:
    return -1 if joint.startswith("R") else 1


def _block(root: ET.Element) -> ET.Element:
    block = root.find("ros2_control")
    if block is None:
        raise ValueError(f"{URDF} has no <ros2_control> block")
    return block


def can_ids() -> dict[str, int]:
    """Joint -> CAN id (its place in the block, from 1)."""
    return {j.get("name", ""): k + 1 for k, j in enumerate(_block(ET.parse(URDF).getroot()).findall("joint"))}


def _params(element: ET.Element, params: dict[str, object]) -> None:
    for key, value in params.items():
        ET.SubElement(element, "param", name=key).text = str(value)


def real_drivers_urdf(bus: dict[str, object], imu: dict[str, object] | None = None) -> str:
    """The quadruped with hardware params ``bus`` (interface, channel, ...; the ranges are ``RANGES``) and,
    with ``imu`` (port, ...), the IMU on SerialImuSensor with those sensor params."""
    root = ET.parse(URDF).getroot()
    block = _block(root)
    hardware = block.find("hardware")
    plugin = None if hardware is None else hardware.find("plugin")
    if hardware is None or plugin is None:
        raise ValueError(f"{URDF}: the <ros2_control> block has no <hardware><plugin>")
    plugin.text = "kinodyn_control/CanMotorSystem"
    _params(hardware, {**bus, **{k: getattr(RANGES, k) for k in ("p_max", "v_max", "kp_max", "kd_max",
                                                                   "t_max")}})
    ids = can_ids()
    for joint in block.findall("joint"):
        name = joint.get("name", "")
        _params(joint, {"can_id": ids[name], "direction": direction(name)})
    for sensor in block.findall("sensor"):
        block.remove(sensor)
        if imu is not None:
            imu_block = ET.SubElement(root, "ros2_control", name="imu", type="sensor")
            plugin = ET.SubElement(ET.SubElement(imu_block, "hardware"), "plugin")
            plugin.text = "kinodyn_control/SerialImuSensor"
            _params(sensor, imu)
            imu_block.append(sensor)
    return ET.tostring(root, encoding="unicode")


def quadruped_motors(positions: dict[str, float], missing: str = "") -> dict[str, MitMotor]:
    """Joint -> emulated motor (inertia 0.02 kg m^2, damping 2 N m s/rad) at the joint ``positions``. The
    damping stands for the leg the joint carries: the emulated motors advance on the wall clock, and a torque
    held through a late control cycle on a loaded machine moves a joint at most torque / damping, as it would
    a leg, not an unloaded rotor at the URDF's velocity limit."""
    return {j: MitMotor(i, RANGES, inertia=0.02, damping=2.0, position=direction(j) * positions[j])
            for j, i in can_ids().items() if j != missing}
