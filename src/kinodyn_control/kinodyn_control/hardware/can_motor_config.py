"""The ``<ros2_control>`` parameters of ``kinodyn_control/CanMotorSystem``, read and checked once in
``on_init``.

Hardware ``<param>``: ``interface`` (python-can interface: ``socketcan`` on a robot, ``virtual`` in tests,
``slcan`` for a serial adapter), ``channel`` (``can0``, a bus name, a serial port), ``bitrate`` (optional,
bit/s),
``reply_timeout`` (seconds a motor has to answer a frame, default 0.005), ``master_id`` (the CAN id replies
come on, default 0), ``max_temperature`` (°C; a motor reporting more is over-temperature, default 80),
``unmatched_fault_cycles`` (cycles in a row in which one motor sends replies no frame was waiting for before
that is a fault, default 3, can_motor_bus.py). The range params ``p_max``, ``v_max``, ``kp_max``, ``kd_max``,
``t_max`` and the margin params may sit here as defaults for every joint.

Joint ``<param>``: ``can_id`` (1..0x7FF, unique, not the master id), the five ranges (of the motor model's
firmware, can_motor_protocol.py), ``direction`` (+1 or -1), ``offset`` [rad] and ``kp``/``kd`` (the in-motor
gains used when the joint has no kp/kd command interface, default 0). Joint and motor coordinates:
``q = direction * motor + offset``,
 ``qdot = direction * motor_velocity``, ``effort = direction * motor_torque``.

Readings a joint may report (``ReadingBounds``): its URDF position limits widened by ``position_margin``
(joint units, default 0.1), its URDF velocity and effort limits widened by the fractions ``velocity_margin``
and ``effort_margin`` (default 0.5 each: a plausibility gate against readings no motor makes, not a limit on
the motion); a quantity the URDF does not limit (continuous joint, no ``<limit>``) is bounded only by what the
motor encodes.

Command interfaces: any of position, velocity, effort, kp, kd (MIT mode: the motor applies
``t = kp (p_des - p) + kd (v_des - v) + t_ff``); JointPDController claims effort only and computes its PD
law itself, so effort alone is the common case. Every command interface needs ``min``/``max`` inside what
the motor can encode, so a value the manager lets through is never clamped by the packing.
State interfaces: position, velocity, effort, and temperature (needs 8-byte replies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kinodyn_control.hardware.can_motor_protocol import MotorRanges
from kinodyn_control.hardware.types import EFFORT, POSITION, VELOCITY

if TYPE_CHECKING:
    from kinodyn.urdf import Joint

    from kinodyn_control.hardware.description import ComponentInfo, HardwareInfo

KP, KD, TEMPERATURE = "kp", "kd", "temperature"
COMMANDS = (POSITION, VELOCITY, EFFORT, KP, KD)
STATES = (POSITION, VELOCITY, EFFORT, TEMPERATURE)
RANGE_PARAMS = ("p_max", "v_max", "kp_max", "kd_max", "t_max")
MARGIN_DEFAULTS = {"position_margin": "0.1", "velocity_margin": "0.5", "effort_margin": "0.5"}
PER_JOINT = (*RANGE_PARAMS, *MARGIN_DEFAULTS)  # joint params a hardware param may give for every joint
HARDWARE_PARAMS = ("interface", "channel", "bitrate", "reply_timeout", "master_id", "max_temperature",
                   "unmatched_fault_cycles", *PER_JOINT)
JOINT_PARAMS = ("can_id", "direction", "offset", KP, KD, *PER_JOINT)
MAX_STANDARD_ID = 0x7FF  # CAN 2.0A: 11-bit identifiers
UNITS = {"prismatic": ("m", "m/s", "N")}  # any other joint type: rad, rad/s, N m
ANGULAR_UNITS = ("rad", "rad/s", "N m")


@dataclass(frozen=True)
class ReadingBounds:
    """What a joint may read, in joint coordinates: ``lo``/``hi`` per position, velocity, effort (infinite
    where the URDF gives no limit), ``units``, and ``why`` each bound is what it is (for the fault line)."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    units: tuple[str, str, str]
    why: tuple[str, str, str]


@dataclass(frozen=True)
class MotorConfig:
    """One joint's motor: CAN id, ranges, joint <-> motor mapping, default in-motor gains."""

    joint: str
    can_id: int
    ranges: MotorRanges
    direction: float
    offset: float
    kp: float
    kd: float
    bounds: ReadingBounds


@dataclass(frozen=True)
class BusConfig:
    interface: str
    channel: str
    bitrate: int | None
    reply_timeout: float
    master_id: int
    max_temperature: float
    unmatched_fault_cycles: int
    motors: tuple[MotorConfig, ...]


def _number(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where} '{text}' is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{where} must be finite, got {text}")
    return value


def _can_id(text: str, where: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise ValueError(f"{where} '{text}' is not an integer (decimal or 0x hex)") from None
    if not 0 <= value <= MAX_STANDARD_ID:
        raise ValueError(f"{where} {value} is not a standard 11-bit CAN id (0..0x7FF)")
    return value


def _unknown(params: dict[str, str], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown param(s) {', '.join(unknown)}; known: {', '.join(known)}")


def _check_bounds(joint: ComponentInfo, motor: MotorConfig) -> None:
    """Every command interface's [min, max] must be encodable (joint coordinates mapped to the motor's)."""
    r = motor.ranges
    motor_limits = {
        POSITION: (motor.offset - r.p_max, motor.offset + r.p_max),
        VELOCITY: (-r.v_max, r.v_max),
        EFFORT: (-r.t_max, r.t_max),
        KP: (0.0, r.kp_max),
        KD: (0.0, r.kd_max),
    }
    for command in joint.command_interfaces:
        lo, hi = motor_limits[command.name]
        if not (lo <= command.min and command.max <= hi):
            raise ValueError(
                f"joint '{joint.name}' command interface {command.name} has [min, max] = [{command.min}, "
                f"{command.max}]; its motor encodes [{lo}, {hi}]: give the interface min/max params within "
                "that"
            )


def _bounds(limits: Joint, params: dict[str, str], where: str) -> ReadingBounds:
    """The readings ``limits`` (the URDF joint) allows, widened by the margin params."""
    margins = []
    for key in MARGIN_DEFAULTS:
        margin = _number(params[key], f"{where} {key}")
        if margin < 0.0:
            raise ValueError(f"{where} {key} must be >= 0, got {margin}")
        margins.append(margin)
    position, velocity, effort = margins
    for key, limit in (("velocity", limits.velocity), ("effort", limits.effort)):
        if limit == 0.0:
            raise ValueError(f"{where} has a URDF <limit {key}=\"0\">: its readings are checked against the "
                             f"URDF limits; give the joint's real {key} limit")
    units = UNITS.get(limits.type, ANGULAR_UNITS)
    return ReadingBounds(
        lo=(limits.lower - position, -limits.velocity * (1.0 + velocity), -limits.effort * (1.0 + effort)),
        hi=(limits.upper + position, limits.velocity * (1.0 + velocity), limits.effort * (1.0 + effort)),
        units=units,
        why=(f"URDF limits [{limits.lower:g}, {limits.upper:g}] {units[0]} ± position_margin {position:g}",
             f"URDF velocity limit {limits.velocity:g} {units[1]} + velocity_margin {velocity:g} of it",
             f"URDF effort limit {limits.effort:g} {units[2]} + effort_margin {effort:g} of it"),
    )


def _motor(joint: ComponentInfo, defaults: dict[str, str], limits: Joint) -> MotorConfig:
    where = f"joint '{joint.name}'"
    _unknown(joint.params, JOINT_PARAMS, where)
    params = {**MARGIN_DEFAULTS, **{k: v for k, v in defaults.items() if k in PER_JOINT}, **joint.params}
    if "can_id" not in params:
        raise ValueError(f"{where} has no can_id param; give each joint its motor's CAN id")
    missing = [k for k in RANGE_PARAMS if k not in params]
    if missing:
        raise ValueError(f"{where}: no {', '.join(missing)} (joint or hardware params: the motor model's "
                         "ranges)")
    ranges = MotorRanges(*(_number(params[k], f"{where} {k}") for k in RANGE_PARAMS))
    direction = _number(params.get("direction", "1"), f"{where} direction")
    if direction not in (1.0, -1.0):
        raise ValueError(f"{where} direction must be 1 or -1, got {params['direction']}")
    kp, kd = (_number(params.get(k, "0"), f"{where} {k}") for k in (KP, KD))
    if not (0.0 <= kp <= ranges.kp_max and 0.0 <= kd <= ranges.kd_max):
        raise ValueError(f"{where} kp {kp} / kd {kd} must be within [0, kp_max] / [0, kd_max]")
    names = {c.name for c in joint.command_interfaces}
    unknown = sorted(names - set(COMMANDS)) + sorted({s.name for s in joint.state_interfaces} - set(STATES))
    if unknown:
        raise ValueError(f"{where}: interface(s) {', '.join(unknown)} are not MIT-mode ones (commands "
                         f"{', '.join(COMMANDS)}; states {', '.join(STATES)})")
    for command, gain, interface in ((POSITION, kp, KP), (VELOCITY, kd, KD)):
        if command in names and interface not in names and gain == 0.0:
            raise ValueError(f"{where} has a {command} command but no {interface} command interface and no "
                             f"{interface} param > 0: the motor would ignore the {command}")
    motor = MotorConfig(joint.name, _can_id(params["can_id"], f"{where} can_id"), ranges, direction,
                        _number(params.get("offset", "0"), f"{where} offset"), kp, kd,
                        _bounds(limits, params, where))
    _check_bounds(joint, motor)
    return motor


def read_config(info: HardwareInfo) -> BusConfig:
    """The bus and motors of ``info``; ValueError saying what is wrong and how to fix it."""
    where = f"CanMotorSystem '{info.name}'"
    if info.sensors or info.gpios:
        raise ValueError(f"{where} drives joints only; put sensors and GPIOs in a <ros2_control> block of "
                         "their own")
    if not info.joints:
        raise ValueError(f"{where} has no <joint>")
    _unknown(info.params, HARDWARE_PARAMS, where)
    for key in ("interface", "channel"):
        if not info.params.get(key):
            raise ValueError(f"{where} needs the hardware param {key} (e.g. socketcan / can0)")
    bitrate = info.params.get("bitrate")
    timeout = _number(info.params.get("reply_timeout", "0.005"), f"{where} reply_timeout")
    if timeout <= 0.0:
        raise ValueError(f"{where} reply_timeout must be > 0 s, got {timeout}")
    master = _can_id(info.params.get("master_id", "0"), f"{where} master_id")
    cycles = info.params.get("unmatched_fault_cycles", "3")
    if not (cycles.isdigit() and int(cycles) >= 1):
        raise ValueError(f"{where} unmatched_fault_cycles '{cycles}' must be an integer >= 1")
    urdf_joints = {j.name: j for j in info.urdf.joints}
    motors = tuple(_motor(j, info.params, urdf_joints[j.name]) for j in info.joints)
    ids = [m.can_id for m in motors]
    clash = sorted({i for i in ids if ids.count(i) > 1 or i == master})
    if clash:
        raise ValueError(f"{where}: CAN id(s) {', '.join(hex(i) for i in clash)} used twice (or equal to "
                         "master_id); each motor needs its own id")
    return BusConfig(
        interface=info.params["interface"],
        channel=info.params["channel"],
        bitrate=None if bitrate is None else int(_number(bitrate, f"{where} bitrate")),
        reply_timeout=timeout,
        master_id=master,
        max_temperature=_number(info.params.get("max_temperature", "80"), f"{where} max_temperature"),
        unmatched_fault_cycles=int(cycles),
        motors=motors,
    )
