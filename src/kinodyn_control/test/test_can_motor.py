"""``kinodyn_control/CanMotorSystem`` against the emulated motors (emulators/mit_motor.py) on python-can's
virtual bus, through the resource and controller managers: states and commands with direction and offset, the
in-motor PD, the lifecycle's special frames, configuration refusals, and each fault (ERROR, controllers in
safe mode, one error line, motors resting)."""

from __future__ import annotations

import math
import re
import time
import uuid
from typing import TYPE_CHECKING

import can
import numpy as np
import pytest
from kinodyn_control.hardware.can_motor_bus import MotorBus, MotorBusError
from kinodyn_control.hardware.can_motor_protocol import (
    MotorRanges,
    float_to_uint,
    pack_command,
    uint_to_float,
)
from kinodyn_control.hardware.emulators.mit_motor import BusServer, MitMotor, MitMotorBank
from kinodyn_control.hardware.types import LifecycleState, ReturnType
from kinodyn_control.manager import HardwareError
from kinodyn_control.testing import Harness, param, pd_command, robot_xml, system_block
from std_msgs.msg import Float64MultiArray

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

CAN = "kinodyn_control/CanMotorSystem"
R = MotorRanges(p_max=12.5, v_max=50.0, kp_max=500.0, kd_max=5.0, t_max=18.0)
RANGE_PARAMS = "".join(param(k, getattr(R, k)) for k in ("p_max", "v_max", "kp_max", "kd_max", "t_max"))
P_STEP, T_STEP = 25.0 / 65535, 36.0 / 4095


def quantised(x: float, lo: float, hi: float, bits: int) -> float:
    return uint_to_float(float_to_uint(x, lo, hi, bits), lo, hi, bits)


def effort_joint(name: str, can_id: int, direction: int = 1, offset: float = 0.0, extra: str = "",
                 commands: tuple[str, ...] = ("effort",),
                 states: tuple[str, ...] = ("position", "velocity", "effort")) -> str:
    bounds = {"effort": (-10, 10), "position": (-1, 1), "velocity": (-2, 2), "kp": (0, 100), "kd": (0, 5),
              "current": (-1, 1)}
    cmd = "".join(f'<command_interface name="{c}">{param("min", bounds[c][0])}{param("max", bounds[c][1])}'
                  "</command_interface>" for c in commands)
    st = "".join(f'<state_interface name="{s}"/>' for s in states)
    return (f'<joint name="{name}">{cmd}{st}{param("can_id", can_id)}{param("direction", direction)}'
            f'{param("offset", offset)}{extra}</joint>')


# Margins that leave only the motor's encodable ranges as the reading checks: the tests of other behaviour
# drive the emulated joints past the URDF limits of robot_xml (±1 rad, 2 rad/s, 10 N m) on a loaded machine's
# wall clock; the reading checks have tests of their own with the defaults.
LOOSE = param("position_margin", 11) + param("velocity_margin", 24) + param("effort_margin", 0.8)


# The emulated motors answer from a thread of the test's process: on a loaded machine 50 ms pass without it
# being scheduled (a real bus's 5 ms deadline would time out on scheduling alone).
REPLY_TIMEOUT = 0.5


def block(channel: str, joints: str, params: str = LOOSE) -> str:
    hardware = (param("interface", "virtual") + param("channel", channel)
                + param("reply_timeout", REPLY_TIMEOUT) + RANGE_PARAMS + params)
    return system_block(hardware, joints, plugin=CAN)


def settled(predicate: Callable[[], bool], timeout: float = 1.0) -> bool:
    """``predicate`` once the emulator thread has handled what was sent (polled up to ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.005)
    return predicate()


class Rig:
    """Emulated motors (ids 1, 2 by default: joints j1, j2) serving a unique virtual channel, and a harness
    over ``joints``."""

    def __init__(self, joints: str | None = None, params: str = LOOSE, reply_length: int = 8,
                 ids: tuple[int, ...] = (1, 2)) -> None:
        self.channel = f"can-test-{uuid.uuid4().hex[:8]}"
        # damping 2: the motors run on the wall clock, and an effort held through late cycles on a loaded
        # machine drives a joint at most at effort / 2 rad/s: the efforts the controller tests hold
        # (<= 2.5 N m) stay under robot_xml's 2 rad/s, where the controllers' limiters cut an effort
        # (limits.py), and 10 N m stays far from v_max
        self.motors = {i: MitMotor(i, R, inertia=0.01, damping=2.0, reply_length=reply_length)
                       for i in ids}
        self.bank = MitMotorBank(list(self.motors.values()))
        self.server = BusServer(self.bank, can.Bus(interface="virtual", channel=self.channel)).start()
        joints = joints or effort_joint("j1", 1) + effort_joint("j2", 2, direction=-1, offset=0.1)
        self.h = Harness(robot_xml(block(self.channel, joints, params), tuple(f"j{i}" for i in ids)))
        self.component = self.h.resources.components["sys"]

    def cycles(self, n: int, period: float = 0.002) -> None:
        for k in range(n):
            self.h.manager.cycle(k * period, period)
            time.sleep(period)

    def close(self) -> None:
        self.h.manager.shutdown()
        self.server.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    try:
        yield r
    finally:
        r.close()


def test_configure_reads_states_with_direction_and_offset_in_rest_mode(rig: Rig) -> None:
    rig.motors[1].position, rig.motors[2].position = 0.3, 0.2
    rig.h.resources.set_component_state("sys", LifecycleState.INACTIVE)
    assert rig.h.state("j1/position") == pytest.approx(0.3, abs=P_STEP / 2)
    assert rig.h.state("j2/position") == pytest.approx(-0.2 + 0.1, abs=P_STEP / 2)
    assert not rig.motors[1].motor_mode
    assert not rig.motors[2].motor_mode
    rig.h.resources.set_component_state("sys", LifecycleState.ACTIVE)
    assert rig.motors[1].motor_mode
    assert rig.motors[2].motor_mode
    rig.h.resources.set_component_state("sys", LifecycleState.INACTIVE)
    assert not rig.motors[1].motor_mode


def test_effort_commands_reach_the_motors_with_direction(rig: Rig) -> None:
    rig.h.activate_hardware()
    rig.cycles(2)  # no command yet: limp frames (zero gains, the torque code nearest 0: 0 lies between two)
    assert rig.motors[1].command[2:] == (0.0, 0.0, quantised(0.0, -18.0, 18.0, 12))
    assert 0.0 < rig.motors[1].command[4] <= T_STEP / 2
    rig.h.set_command("j1/effort", 2.0)
    rig.h.set_command("j2/effort", 3.0)
    rig.cycles(1)
    q18 = (-18.0, 18.0, 12)
    assert rig.motors[1].command[4] == pytest.approx(quantised(2.0, *q18), abs=1e-12)
    assert rig.motors[2].command[4] == pytest.approx(quantised(-3.0, *q18), abs=1e-12)  # direction -1
    assert rig.motors[1].command[2:4] == (0.0, 0.0)
    rig.cycles(2)  # the effort state: the torque the motor applied (replies lag one frame), mapped back
    assert rig.h.state("j2/effort") == pytest.approx(3.0, abs=T_STEP)


def test_command_frames_follow_the_per_joint_rules_byte_for_byte() -> None:
    """The frames ``write`` sends (all motors packed at once) against ``pack_command`` joint by joint, as the
    rules say: unset position -> offset with kp 0, unset others -> 0, unlisted kp/kd -> the params, joint ->
    motor by direction and offset; over random commands within the interfaces' bounds, some left unset."""
    every = ("position", "velocity", "effort", "kp", "kd")
    rules = {1: (-1, 0.1, ("effort",), 0.0, 0.0), 2: (1, -0.2, every, 0.0, 0.0),
             3: (-1, 0.3, ("position", "effort"), 40.0, 0.5), 4: (1, 0.0, ("position", "kd"), 25.0, 0.0)}
    joints = "".join(effort_joint(f"j{i}", i, d, off, param("kp", kp) + param("kd", kd), commands)
                     for i, (d, off, commands, kp, kd) in rules.items())
    rig = Rig(joints, ids=tuple(rules))
    listener = can.Bus(interface="virtual", channel=rig.channel)
    bounds = {"effort": (-10, 10), "position": (-1, 1), "velocity": (-2, 2), "kp": (0, 100), "kd": (0, 5)}
    rng = np.random.default_rng(5)
    try:
        rig.h.activate_hardware()
        while listener.recv(timeout=0.0) is not None:
            pass
        for round_ in range(30):
            given: dict[int, dict[str, float]] = {}
            for i, (_, _, commands, _, _) in rules.items():
                given[i] = {}
                for c in commands:
                    value = math.nan if round_ == 0 else float(rng.uniform(*bounds[c]))
                    given[i][c] = value
                    if not math.isnan(value):
                        rig.h.set_command(f"j{i}/{c}", value)
            assert rig.h.resources.write(0.0, 0.002) == []
            sent = {}
            while len(sent) < len(rules):
                message = listener.recv(timeout=1.0)
                assert message is not None
                if message.arbitration_id in rules:
                    sent[message.arbitration_id] = bytes(message.data)
            assert rig.h.resources.read(0.0, 0.002) == [], rig.h.resources.errors
            for i, (d, off, _, kp_param, kd_param) in rules.items():
                g = {c: given[i].get(c, math.nan) for c in every}
                kp = g["kp"] if "kp" in given[i] else kp_param
                kd = g["kd"] if "kd" in given[i] else kd_param
                position = g["position"]
                if math.isnan(position):
                    position, kp = off, 0.0
                velocity, effort, kp, kd = (0.0 if math.isnan(x) else x
                                            for x in (g["velocity"], g["effort"], kp, kd))
                expected = pack_command(d * (position - off), d * velocity, kp, kd, d * effort, R)
                assert sent[i] == expected, (i, g)
    finally:
        listener.shutdown()
        rig.close()


def test_in_motor_pd_reaches_the_commanded_position() -> None:
    joints = effort_joint("j1", 1, commands=("position", "velocity", "effort", "kp", "kd"),
                          offset=0.2) + effort_joint("j2", 2, commands=("position",),
                                                                  extra=param("kp", 30) + param("kd", 1))
    rig = Rig(joints)
    try:
        rig.h.activate_hardware()
        for name, value in (("j1/position", 0.5), ("j1/velocity", 0.0), ("j1/effort", 0.0), ("j1/kp", 20.0),
                            ("j1/kd", 1.0), ("j2/position", -0.4)):
            rig.h.set_command(name, value)
        rig.cycles(1)

        def received() -> bool:  # the emulated motors answer from their own thread, later on loaded cores
            return (rig.motors[1].command[0] == pytest.approx(0.3, abs=P_STEP)  # motor = joint - offset
                    and rig.motors[2].command[2] == pytest.approx(30.0, abs=500 / 4095))  # the kp param

        deadline = time.monotonic() + 5.0
        while not received() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert received(), (rig.motors[1].command, rig.motors[2].command)
        rig.cycles(300)  # at least 0.6 s of an overdamped 20 N m/rad loop (slow pole 6.8 /s) on 0.01 kg m^2
        assert not rig.h.messages("error"), rig.h.records
        assert rig.h.state("j1/position") == pytest.approx(0.5, abs=0.01)
        assert rig.h.state("j2/position") == pytest.approx(-0.4, abs=0.01)
    finally:
        rig.close()


def test_joint_pd_controller_drives_the_motors_and_temperature_is_a_state() -> None:
    rig = Rig(effort_joint("j1", 1, states=("position", "velocity", "effort", "temperature"))
              + effort_joint("j2", 2))
    try:
        rig.motors[1].temperature = 41
        rig.h.activate_hardware()
        rig.h.start("pd", "kinodyn_control/JointPDController",
                    {"joints": ["j1", "j2"], "watchdog_timeout": 10.0})
        rig.h.contexts["pd"].subscriptions["/pd/commands"](
            pd_command(["j2", "j1"], [0.0, 0.0], [0.0, 0.0], [-2.5, 1.5], [0.0, 0.0], [0.0, 0.0]))
        rig.cycles(3)
        assert rig.motors[1].command[4] == pytest.approx(1.5, abs=T_STEP / 2)
        assert rig.motors[2].command[4] == pytest.approx(-2.5, abs=T_STEP / 2)
        assert rig.h.state("j1/temperature") == 41.0
    finally:
        rig.close()


def inject(rig: Rig, fault: str) -> None:
    motor = rig.motors[2]
    with rig.bank.lock:
        if fault == "silent":
            motor.silent = True
        elif fault == "corrupt":
            motor.corrupt = True
        elif fault == "fault flag":
            motor.error_code = 2
        elif fault == "over-temperature report":
            motor.error_code = 1
        elif fault == "hot":
            motor.temperature = 95
        else:
            rig.bank.bus_off()


def running(rig: Rig, efforts: tuple[float, float] = (1.5, -2.5)) -> None:
    """Hardware active, a ForwardCommandController holding ``efforts`` on j1, j2, 3 cycles without error."""
    rig.h.activate_hardware()
    rig.h.start("fwd", "kinodyn_control/ForwardCommandController",
                {"joints": ["j1", "j2"], "interface_name": "effort", "watchdog_timeout": 10.0})
    rig.h.contexts["fwd"].subscriptions["/fwd/commands"](Float64MultiArray(data=list(efforts)))
    rig.cycles(3)
    assert rig.h.command("j1/effort") == efforts[0], rig.h.records
    assert not rig.h.messages("error"), rig.h.records


def assert_fault(rig: Rig, needle: str, rests: bool = True, cycles: int = 3) -> None:
    """After ``cycles`` more cycles: one error line with ``needle``, the component UNCONFIGURED, the
    controller stopped with its commands in safe mode, every motor the bus reaches resting."""
    rig.cycles(cycles)
    errors = rig.h.messages("error")
    assert len(errors) == 1, errors
    assert needle in errors[0], errors[0]
    assert "it is now unconfigured" in errors[0], errors[0]
    assert "controller(s) fwd deactivated" in errors[0]
    assert rig.component.lifecycle_state is LifecycleState.UNCONFIGURED
    assert rig.h.manager.controllers["fwd"].state is LifecycleState.INACTIVE
    assert rig.h.command("j1/effort") == 0.0
    assert rig.h.command("j2/effort") == 0.0
    # on_error rested every motor the bus still reaches (bus-off: none is reached)
    assert settled(lambda: rig.motors[1].motor_mode is not rests)


@pytest.mark.parametrize(("fault", "needle", "rests"), [
    ("silent", "no reply from motor 0x2 (joint 'j2') within reply_timeout 0.5 s", True),
    ("corrupt", "corrupt reply from motor 0x2 (joint 'j2'): a reply has 6 or 8 data bytes, this frame has 5",
     True),
    ("fault flag", "motor 0x2 (joint 'j2') reports a fault: error code 2 (over-current)", True),
    ("over-temperature report", "motor 0x2 (joint 'j2') reports over-temperature: error code 1", True),
    ("hot", "motor 0x2 (joint 'j2') is over-temperature: 95 °C above max_temperature 80.0 °C", True),
    ("bus off", "the CAN controller reports bus-off on channel", False),
])
def test_each_fault_is_an_error_with_controllers_in_safe_mode(rig: Rig, fault: str, needle: str,
                                                              rests: bool) -> None:
    running(rig)
    inject(rig, fault)
    assert_fault(rig, needle, rests)


# --- replies matched to frames ----------------------------------------------------------------------------
def effort_steps(rig: Rig, steps: int, before: Callable[[int], None] = lambda k: None) -> None:
    """``steps`` write/read pairs, each with a new effort on j2; the effort read back after each must be the
    previous step's command: the motor reports the torque it applied until the frame it answers (one frame
    late, as the firmware's filtered current), so a reply taken one frame late reads two steps back."""
    previous = None
    for k in range(steps):
        before(k)
        command = (-1.0) ** k * (0.5 + 0.1 * k)
        rig.h.set_command("j2/effort", command)
        assert rig.h.resources.write(0.0, 0.002) == [], rig.h.resources.errors
        assert rig.h.resources.read(0.0, 0.002) == [], rig.h.resources.errors
        if previous is not None:
            assert rig.h.state("j2/effort") == pytest.approx(previous, abs=T_STEP), (k, previous)
        previous = command


def dropped_once(rig: Rig, motor: int) -> str:
    """After one reply from ``motor`` that no frame waited for: the driver counted it, warned once (the line
    is returned), logged no error and is still active."""
    assert rig.component.bus.unmatched == {motor: 1}
    (warning,) = [m for m in rig.h.messages("warning") if "dropped" in m]
    assert not rig.h.messages("error")
    assert rig.component.lifecycle_state is LifecycleState.ACTIVE
    return warning


def test_a_stray_reply_between_cycles_is_dropped_and_reported(rig: Rig) -> None:
    """A reply no frame asked for (here sent between two cycles, as a motor answers another node's frame) is
    not taken as the answer to the next frame: every later reading is still the answer to its own frame."""
    rig.h.activate_hardware()

    def stray(k: int) -> None:
        if k == 3:
            rig.server.inject([rig.bank.unsolicited(2)])

    effort_steps(rig, 12, stray)
    warning = dropped_once(rig, 2)
    assert warning.startswith("motor 0x2 (joint 'j2'): dropped 1 reply(ies) no frame of this driver was "
                              "waiting for"), warning


def test_a_double_reply_is_dropped_and_reported(rig: Rig) -> None:
    """A frame answered twice: the first reply is the answer, the second is dropped and reported (whether it
    arrives while the other motors' replies are awaited or before the next frames go out)."""
    rig.h.activate_hardware()

    def double(k: int) -> None:
        if k == 3:
            with rig.bank.lock:
                rig.motors[2].double = 1

    effort_steps(rig, 12, double)
    assert rig.motors[2].double == 0  # the emulator did answer one frame twice
    warning = dropped_once(rig, 2)
    assert "motor 0x2 (joint 'j2'): dropped 1 reply(ies)" in warning
    assert "a second answer to one frame" in warning


def test_unmatched_replies_in_consecutive_cycles_are_a_fault(rig: Rig) -> None:
    """Every frame answered twice (two devices with one id, or a second master): the replies of a cycle are
    judged when the next frames go out, so the third cycle in a row (unmatched_fault_cycles 3) is a fault at
    the fourth write, after a warning (throttled)."""
    running(rig)
    with rig.bank.lock:
        rig.motors[2].double = 1000
    assert_fault(rig, "motor 0x2 (joint 'j2') sent replies no frame of this driver was waiting for in 3 "
                      "cycles in a row (unmatched_fault_cycles 3): a second device answers for CAN id 0x2",
                 cycles=4)
    dropped = [m for m in rig.h.messages("warning") if "motor 0x2 (joint 'j2'): dropped" in m]
    assert len(dropped) == 1, rig.h.records  # throttled


def foreign_reply() -> list[can.Message]:
    """A reply on the master id naming motor 0x9, which the rig's bus does not have."""
    return [can.Message(arbitration_id=0, data=MitMotor(9, R).reply(), is_extended_id=False)]


def test_a_reply_naming_a_motor_not_on_the_bus_is_dropped_and_reported(rig: Rig) -> None:
    rig.h.activate_hardware()
    effort_steps(rig, 12, lambda k: rig.server.inject(foreign_reply()) if k == 3 else None)
    warning = dropped_once(rig, 9)
    assert warning.startswith("a device answering as motor 0x9, not on this bus (ids 0x1, 0x2): dropped 1 "
                              "reply(ies)"), warning


def test_replies_naming_a_motor_not_on_the_bus_cycle_after_cycle_are_a_fault(rig: Rig) -> None:
    running(rig)
    for _ in range(4):  # judged when the next frames go out: the third cycle in a row at the fourth write
        rig.server.inject(foreign_reply())
        rig.cycles(1)
    assert_fault(rig, "a device answering as motor 0x9, not on this bus (ids 0x1, 0x2) sent replies no frame "
                      "of this driver was waiting for in 3 cycles in a row (unmatched_fault_cycles 3): a "
                      "device this bus does not know answers on master_id 0x0", cycles=0)


class EndlessTraffic:
    """A python-can bus on which another device's frames never stop arriving; what is sent is dropped."""

    def __init__(self) -> None:
        self.received = 0

    def recv(self, timeout: float | None = None) -> can.Message:
        self.received += 1
        return can.Message(arbitration_id=0x123, data=bytes(8), is_extended_id=False)

    def send(self, message: can.Message) -> None:
        pass


def test_traffic_that_never_stops_cannot_hold_the_driver() -> None:
    """Frames of other devices arriving without a pause: taking what arrived between cycles ends, and a motor
    that does not answer is still a fault (the bus is never quiet, so a timeout judged only on an empty
    receive would wait forever)."""
    config = Harness(robot_xml(block("unused", effort_joint("j1", 1) + effort_joint("j2", 2)))).resources \
        .components["sys"].config
    bus = MotorBus(config, lambda key, line: None)
    traffic = EndlessTraffic()
    bus.bus = traffic  # type: ignore[assignment]
    bus.send_all((1, 2), bytes(16))
    assert traffic.received > 0
    late = "no reply from motor 0x1 (joint 'j1'), motor 0x2 (joint 'j2') within reply_timeout 0.5 s"
    with pytest.raises(MotorBusError, match=re.escape(late)):
        bus.collect()


# --- readings checked -------------------------------------------------------------------------------------
@pytest.fixture
def strict() -> Iterator[Rig]:
    """Rig with the default margins: j1, j2 read within [-1.1, 1.1] rad, ±3 rad/s, ±15 N m."""
    r = Rig(params="")
    try:
        yield r
    finally:
        r.close()


@pytest.mark.parametrize(("misreport", "needle"), [
    ({"position": -1.5}, "joint 'j2' (motor 0x2) reads position 1.600"),  # quantised: 1.60015
    ({"velocity": 3.2}, "joint 'j2' (motor 0x2) reads velocity -3.2"),
    ({"torque": -16.0}, "joint 'j2' (motor 0x2) reads effort 15.99"),  # quantised: 15.9956
])
def test_a_reading_outside_the_joints_urdf_limits_is_a_fault(strict: Rig, misreport: dict[str, float],
                                                               needle: str) -> None:
    running(strict, (0.05, -0.05))
    stored = strict.h.state("j2/position")
    with strict.bank.lock:
        strict.motors[2].misreport = misreport
    assert_fault(strict, needle)
    assert "no such reading is plausible" in strict.h.messages("error")[0]
    if "position" in misreport:
        assert "rad, outside [-1.1, 1.1] (URDF limits [-1, 1] rad ± position_margin 0.1)" in \
            strict.h.messages("error")[0]
    if "velocity" in misreport:
        assert "outside [-3, 3] (URDF velocity limit 2 rad/s + velocity_margin 0.5 of it)" in \
            strict.h.messages("error")[0]
    if "torque" in misreport:
        assert "outside [-15, 15] (URDF effort limit 10 N m + effort_margin 0.5 of it)" in \
            strict.h.messages("error")[0]
    assert abs(strict.h.state("j2/position") - stored) < 0.1  # the refused reply was not stored


@pytest.mark.parametrize(("misreport", "needle"), [
    ({"position": 1e6}, "joint 'j2' (motor 0x2) reads position -12.4 rad, an end of the range its motor "
                        "encodes (±12.5, p_max;"),
    ({"velocity": -1e6}, "joint 'j2' (motor 0x2) reads velocity 50 rad/s, an end of the range its motor "
                         "encodes (±50, v_max;"),
])
def test_a_reading_at_an_end_of_the_encodable_range_is_a_fault(rig: Rig, misreport: dict[str, float],
                                                                 needle: str) -> None:
    """With margins wide enough that only the encodable range applies: a value the firmware clamped."""
    running(rig, (0.05, -0.05))
    with rig.bank.lock:
        rig.motors[2].misreport = misreport
    assert_fault(rig, needle)
    assert "so the true value is unknown" in rig.h.messages("error")[0]


def test_a_torque_at_t_max_is_a_motor_at_its_limit_not_a_fault(rig: Rig) -> None:
    running(rig, (0.05, -0.05))
    with rig.bank.lock:
        rig.motors[2].misreport = {"torque": 18.0}  # the code of +t_max; effort_margin 0.8: 18 N m allowed
    rig.cycles(5)
    assert rig.h.state("j2/effort") == -18.0
    assert not rig.h.messages("error")


def test_a_joint_outside_its_limits_fails_configure_naming_it() -> None:
    rig = Rig(params="")
    try:
        rig.motors[1].position = 1.3
        with pytest.raises(HardwareError, match=r"failed to configure: joint 'j1' \(motor 0x1\) reads "
                                                r"position 1.29988 rad, outside \[-1.1, 1.1\]"):
            rig.h.resources.set_component_state("sys", LifecycleState.INACTIVE)
        assert math.isnan(rig.h.state("j1/position")) or rig.h.state("j1/position") != pytest.approx(1.3)
    finally:
        rig.close()


def test_a_nan_after_a_command_is_an_error_and_no_frame_carries_it(rig: Rig) -> None:
    rig.h.activate_hardware()
    rig.h.set_command("j1/effort", 1.0)
    rig.cycles(1)
    frames = rig.motors[1].frames
    rig.h.set_command("j1/effort", math.nan)
    rig.cycles(1)
    assert "unusable command(s): j1/effort = nan after a command was given" in rig.h.messages("error")[0]
    assert rig.motors[1].command[4] == pytest.approx(1.0, abs=T_STEP)
    # the read of the failing cycle took the reply already due; on_error sent one rest frame
    assert settled(lambda: not rig.motors[1].motor_mode)
    assert rig.motors[1].frames == frames + 1


def test_a_temperature_interface_needs_8_byte_replies() -> None:
    rig = Rig(effort_joint("j1", 1, states=("position", "temperature")) + effort_joint("j2", 2),
              reply_length=6)
    try:
        with pytest.raises(HardwareError, match="joint\\(s\\) j1 list a temperature state interface but "
                                                "their motors' replies carry none"):
            rig.h.resources.set_component_state("sys", LifecycleState.INACTIVE)
    finally:
        rig.close()


def test_a_missing_motor_fails_configure_with_its_name() -> None:
    rig = Rig(effort_joint("j1", 1) + effort_joint("j2", 5))
    try:
        with pytest.raises(HardwareError, match="no reply from motor 0x5 \\(joint 'j2'\\) within"):
            rig.h.resources.set_component_state("sys", LifecycleState.ACTIVE)
    finally:
        rig.close()


@pytest.mark.parametrize(("joints", "params", "needle"), [
    (effort_joint("j1", 1) + '<joint name="j2"><command_interface name="effort"/></joint>', "",
     "joint 'j2' has no can_id param"),
    (effort_joint("j1", 1) + effort_joint("j2", 1), "", "CAN id(s) 0x1 used twice"),
    (effort_joint("j1", 0) + effort_joint("j2", 2), "", "CAN id(s) 0x0 used twice (or equal to master_id)"),
    (effort_joint("j1", 1) + effort_joint("j2", 0x800), "", "can_id 2048 is not a standard 11-bit CAN id"),
    (effort_joint("j1", 1, direction=2) + effort_joint("j2", 2), "", "direction must be 1 or -1"),
    (effort_joint("j1", 1) + effort_joint("j2", 2), LOOSE + param("bus_speed", 1),
     "unknown param(s) bus_speed"),
    (effort_joint("j1", 1) + effort_joint("j2", 2), LOOSE + param("position_margin", -0.1),
     "joint 'j1' position_margin must be >= 0, got -0.1"),
    (effort_joint("j1", 1) + effort_joint("j2", 2, extra=param("velocity_margin", "wide")), "",
     "joint 'j2' velocity_margin 'wide' is not a number"),
    (effort_joint("j1", 1) + effort_joint("j2", 2), LOOSE + param("unmatched_fault_cycles", 0),
     "unmatched_fault_cycles '0' must be an integer >= 1"),
    (effort_joint("j1", 1) + effort_joint("j2", 2, commands=("position",)), "",
     "has a position command but no kp command interface and no kp param > 0"),
    (effort_joint("j1", 1) + effort_joint("j2", 2, commands=("current",)), "",
     "interface(s) current are not MIT-mode ones"),
    (effort_joint("j1", 1) + '<joint name="j2"><command_interface name="effort"/>'
     f'{param("can_id", 2)}</joint>', "",
     "joint 'j2' command interface effort has [min, max] = [-inf, inf]; its motor encodes [-18.0, 18.0]"),
])
def test_bad_configurations_are_refused_at_init(joints: str, params: str, needle: str) -> None:
    with pytest.raises(HardwareError, match="failed on_init") as info:
        Harness(robot_xml(block("unused", joints, params)))
    assert needle in str(info.value)


def test_sensors_belong_in_their_own_block() -> None:
    imu = '<sensor name="imu"><state_interface name="orientation.x"/></sensor>'
    with pytest.raises(HardwareError, match="drives joints only"):
        Harness(robot_xml(block("unused", effort_joint("j1", 1) + effort_joint("j2", 2) + imu)))


def test_real_hardware_refuses_lockstep(rig: Rig) -> None:
    rig.h.activate_hardware()
    assert rig.component.prepare_lockstep(0.002) is ReturnType.ERROR


def test_a_urdf_limit_of_zero_is_refused_at_init() -> None:
    """The readings are checked against the URDF limits: a velocity limit of 0 would refuse every motion."""
    xml = robot_xml(block("unused", effort_joint("j1", 1) + effort_joint("j2", 2)))
    with pytest.raises(HardwareError, match='joint \'j1\' has a URDF <limit velocity="0">'):
        Harness(xml.replace('velocity="2"', 'velocity="0"', 1))
