"""The field's surfaces in process: devices behind the drivers (the emulators), the viewer's and the report's
contact inputs, and the QP solvers on an overdetermined working set.

Each payload drives the real component (a driver in a Harness against its emulator, the viewer's own
``_contacts`` method, ``read_series`` on a bag, a solver or the locomotion controller) and returns what it
said (``Said``): the error and warning lines it logged, a failed result's message, and whether a number out of
range got through (unsafe). ``classify_said`` turns that into a category with the matrix's rules.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

import can
import numpy as np
from geometry_msgs.msg import Point, TwistStamped, Vector3
from kinodyn.control.locomotion import LocomotionController, LocomotionParameters
from kinodyn.control.qp import QP, make_solver
from kinodyn.estimation.synthetic import trotting_walk
from kinodyn_common.cdr import contact_arrays_from_cdr
from kinodyn_common.conversions import InputError
from kinodyn_control.hardware.can_motor_protocol import MotorRanges
from kinodyn_control.hardware.emulators.mit_motor import BusServer, MitMotor, MitMotorBank
from kinodyn_control.hardware.emulators.serial_imu import XsensImuEmulator, constant_rate, level
from kinodyn_control.hardware.serial_imu import ACCEL_RANGE, GYRO_RANGE
from kinodyn_control.hardware.serial_imu_protocol import ImuSample, encode_message, encode_mtdata2
from kinodyn_control.hardware.types import IMU_INTERFACES
from kinodyn_control.testing import Harness, param, robot_xml, system_block
from kinodyn_tools.bags import BagWriter, open_bag
from kinodyn_tools.bags.mcap_format import FOOTER_SIZE
from kinodyn_tools.estimation.synthetic_bag import write_synthetic_bag
from kinodyn_tools.report.series import read_series
from kinodyn_tools.viewer.node import Viewer
from nav_msgs.msg import Odometry
from rclpy.duration import Duration
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Imu, JointState

import kinodyn as kd
from kinodyn_interfaces.msg import ContactStates, JointPDCommand
from test.bad_inputs.matrix import (
    CLEAR,
    CRASH,
    DOCUMENTED,
    SILENT,
    UNHELPFUL,
    UNSAFE,
    Case,
    Doc,
    NodeObservation,
    Outcome,
    Result,
    accepted,
    classify_call,
    classify_node,
    names_it,
    refused,
)
from test.ros_listener import Listener

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

REPO = Path(__file__).resolve().parents[2]
QUADRUPED = REPO / "urdf" / "quadruped.urdf"
STANCE = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
DRIVERS = "docs/hardware-drivers.md"


@dataclass
class Said:
    """What a surface said about one input: error lines (or a failed result's message), warning lines, and
    the first number out of range that got through (``unsafe``: '' when none)."""
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unsafe: str = ""


def classify_said(case: Case, said: Said) -> Outcome:
    """Unsafe when a number got through; a refusal (one error line naming the input: clear, else unhelpful);
    else accepted (documented if cited; with ``names``, only with exactly one warning naming one of them)."""
    if said.unsafe:
        return Outcome(UNSAFE, said.unsafe[:300])
    if said.errors:
        if len(said.errors) > 1:
            return Outcome(UNHELPFUL, f"{len(said.errors)} error lines: " + " | ".join(said.errors)[:300])
        return refused(case, said.errors[0])
    if case.names and not (len(said.warnings) == 1 and names_it(said.warnings[0], case.names)):
        return Outcome(SILENT, f"accepted without one warning naming {list(case.names)}: {said.warnings}")
    return accepted(case, "accepted" + (f"; warned: {said.warnings[0][:200]}" if said.warnings else ""))


def classify_field_call(case: Case) -> Outcome:
    """``case.payload()`` run as the matrix runs a call (an exception or a hang classified as there); what it
    returns (a ``Said``) by ``classify_said``."""
    box: list[Said] = []
    probe = replace(case, payload=lambda: box.append(case.payload()), expected=SILENT, doc=None,
                    returns_finite=None)
    outcome = classify_call(probe)
    return classify_said(case, box[0]) if box else outcome


# --- serial IMU against its emulator ------------------------------------------------------------------------
def _imu_said(inject: Callable[[XsensImuEmulator], None], cycles: int = 40) -> Said:
    """An IMU component (Xsens emulator on a pty, IMU broadcaster) streaming, ``inject`` applied to the
    emulator, then ``cycles`` cycles with a packet each: its error and warning lines, and unsafe if a
    broadcast rate of turn or acceleration exceeds the device's full-scale range or is not finite."""
    emulator = XsensImuEmulator(constant_rate((0.3, 0.0, 0.0)))
    try:
        states = "".join(f'<state_interface name="{i}"/>' for i in IMU_INTERFACES)
        block = ('<ros2_control name="imu" type="sensor"><hardware><plugin>kinodyn_control/SerialImuSensor'
                 f'</plugin></hardware><sensor name="imu_sensor">{states}{param("port", emulator.port)}'
                 f'{param("frame_id", "imu_link")}</sensor></ros2_control>')
        harness = Harness(robot_xml(block, ("j1",)))
        imu = harness.resources.components["imu"]
        now = [100.0]  # the component's clock: 2 ms per cycle, as control_node's at 500 Hz
        imu.clock = lambda: now[0]
        emulator.start()
        try:
            harness.activate_hardware()
        finally:
            emulator.stop()
        harness.start("imu_broadcaster", "kinodyn_control/ImuSensorBroadcaster",
                      {"sensor_name": "imu_sensor"})
        worst = 0.0
        inject(emulator)
        for k in range(cycles):
            before = (imu.last_counter, imu.stale)
            emulator.emit(1)
            now[0] += 0.002
            end = time.monotonic() + 2.0
            while time.monotonic() < end:  # until the component took it (a replayed copy: as stale)
                harness.manager.cycle(k * 0.002, 0.002)
                taken = (imu.last_counter, imu.stale) != before and imu.last_counter == emulator.counter - 1
                if taken or harness.messages("error"):
                    break
                time.sleep(0.001)
            for name in IMU_INTERFACES:
                value = harness.state(f"imu_sensor/{name}")
                worst = max(worst, abs(value) if math.isfinite(value) else math.inf)
            if harness.messages("error"):
                break
        published = [m for m in harness.contexts["imu_broadcaster"].publishers.values() for m in m.messages]
        over = [m for m in published if not _imu_message_in_range(m, GYRO_RANGE, ACCEL_RANGE)]
        unsafe = f"the broadcaster published {over[0]}" if over else (
            f"a state interface holds {worst:.3g}" if worst > ACCEL_RANGE else "")
        return Said(harness.messages("error"), harness.messages("warning"), unsafe)
    finally:
        emulator.close()


def _imu_message_in_range(msg: Imu, gyro: float, accel: float) -> bool:
    w, a = msg.angular_velocity, msg.linear_acceleration
    rates, forces = np.array([w.x, w.y, w.z]), np.array([a.x, a.y, a.z])
    return bool(np.all(np.isfinite(rates)) and np.all(np.abs(rates) <= gyro)
                and np.all(np.isfinite(forces)) and np.all(np.abs(forces) <= accel))


def _forged(counter_ahead: int) -> Callable[[XsensImuEmulator], None]:
    def inject(emulator: XsensImuEmulator) -> None:
        sample = ImuSample((0.0, 0.0, 0.0, 1.0), (1.5, 0.0, 0.0), (0.0, 0.0, 9.81),
                           (emulator.counter + counter_ahead) % 65536)
        emulator.garbage(encode_message(0x36, encode_mtdata2(sample)))
    return inject


def _misreport(rate: float = 0.0, accel: float = 0.0) -> Callable[[XsensImuEmulator], None]:
    def inject(emulator: XsensImuEmulator) -> None:
        emulator.misreport(ImuSample(None, (rate, 0.0, 0.0) if rate else None,
                                     (0.0, 0.0, accel) if accel else None))
    return inject


def _replay(emulator: XsensImuEmulator) -> None:
    emulator.replay(100_000)


def _no_counter(emulator: XsensImuEmulator) -> None:

    emulator.garbage(encode_message(0x36, encode_mtdata2(level())))


# --- CAN motors against their emulator ----------------------------------------------------------------------
def _can_said(
    inject: Callable[[MitMotorBank, dict[int, MitMotor]], None], steps: int = 12, margins: str = ""
) -> Said:
    """Two emulated MIT motors (ids 1, 2; joints j1, j2 of robot_xml: ±1 rad, 2 rad/s, 10 N m) on a virtual
    CAN channel; ``steps`` write/read pairs with ``inject(bank, motors)`` before the fourth: the component's
    error and warning lines, unsafe if a state beyond the joint's limits with margins was stored."""
    ranges = MotorRanges(p_max=12.5, v_max=50.0, kp_max=500.0, kd_max=5.0, t_max=18.0)
    channel = f"can-bad-{uuid.uuid4().hex[:8]}"
    motors = {i: MitMotor(i, ranges, inertia=0.01, damping=2.0) for i in (1, 2)}
    bank = MitMotorBank(list(motors.values()))
    server = BusServer(bank, can.Bus(interface="virtual", channel=channel)).start()
    try:
        hardware = (param("interface", "virtual") + param("channel", channel) + param("reply_timeout", 0.5)
                    + "".join(param(k, getattr(ranges, k)) for k in ("p_max", "v_max", "kp_max", "kd_max",
                                                                      "t_max")) + margins)
        joints = "".join(
            f'<joint name="j{i}"><command_interface name="effort">{param("min", -10)}{param("max", 10)}'
            '</command_interface><state_interface name="position"/><state_interface name="velocity"/>'
            f'<state_interface name="effort"/>{param("can_id", i)}</joint>' for i in (1, 2))
        harness = Harness(robot_xml(system_block(hardware, joints, plugin="kinodyn_control/CanMotorSystem"),
                                    ("j1", "j2")))
        harness.activate_hardware()
        worst = ""
        for k in range(steps):
            if k == 3:
                inject(bank, motors)
            harness.set_command("j2/effort", 0.05 * (-1) ** k)
            harness.manager.cycle(k * 0.002, 0.002)
            if harness.messages("error"):
                break
            for name, bound in (("position", 1.1), ("velocity", 3.0), ("effort", 15.0)):
                for j in ("j1", "j2"):
                    value = harness.state(f"{j}/{name}")
                    if not (math.isfinite(value) and abs(value) <= bound):
                        worst = worst or f"{j}/{name} = {value:.6g} stored"
        return Said(harness.messages("error"), harness.messages("warning"), worst)
    finally:
        server.stop()


def _misreport_motor(**values: float) -> Callable[[MitMotorBank, dict[int, MitMotor]], None]:
    def inject(bank: MitMotorBank, motors: dict[int, MitMotor]) -> None:
        with bank.lock:
            motors[2].misreport = values
    return inject


def _double(bank: MitMotorBank, motors: dict[int, MitMotor]) -> None:
    with bank.lock:
        motors[2].double = 1


# --- viewer and report -----------------------------------------------------------------------------------
def _viewer_contacts(points: np.ndarray, forces: np.ndarray) -> Said:
    """The viewer node's own ``_contacts`` (decoded from the CDR bytes of a ContactStates, as the node reads
    it) on a stand-in holding its parameters' defaults: the refusal, or unsafe when more than
    max_drawn_contacts arrows or a non-finite one come out."""
    msg = ContactStates(names=[f"c{k}" for k in range(len(points))], in_contact=[True] * len(points),
                        points=[Point(x=float(a), y=float(b), z=float(c)) for a, b, c in points],
                        forces=[Vector3(x=float(a), y=float(b), z=float(c)) for a, b, c in forces])
    msg.header.frame_id = "world"
    info: list[str] = []
    stand_in = SimpleNamespace(
        _max_position=1e4, _max_force=1e6, _force_scale=0.003, _max_arrows=64, _decimation_said=False,
        _to_frame=lambda frame: np.eye(4), get_logger=lambda: SimpleNamespace(info=info.append))
    # the viewer's own contact handling on a stand-in, without a node: the surface this case tests
    stand_in._decimated = lambda arrows: Viewer._decimated(stand_in, arrows)  # noqa: SLF001
    try:
        arrows, polygon = Viewer._contacts(stand_in, contact_arrays_from_cdr(serialize_message(msg)))  # noqa: SLF001
    except InputError as exc:
        return Said(errors=[str(exc)])
    unsafe = ""
    if len(arrows) > 64 or not (np.all(np.isfinite(arrows)) and np.all(np.isfinite(polygon))):
        unsafe = f"{len(arrows)} arrows drawn (max_drawn_contacts 64), finite: {np.all(np.isfinite(arrows))}"
    return Said(warnings=info, unsafe=unsafe)


def _report_forces(tmp: Path, name: str, force: float) -> Said:
    """``read_series`` (kinodyn report's reader) on a bag of 20 ContactStates, the tenth with a force of
    ``force`` N: what it left out, and unsafe if a force beyond max_force is in the series."""
    bag = tmp / f"report_{name}"
    with BagWriter(bag) as writer:
        writer.add_topic("/quadruped_system/contacts", "kinodyn_interfaces/msg/ContactStates")
        for k in range(20):
            msg = ContactStates(names=["LF_FOOT"], in_contact=[True], points=[Point()],
                                forces=[Vector3(z=force if k == 9 else 80.0)])
            msg.header.stamp.sec = 100 + k
            writer.write("/quadruped_system/contacts", (100 + k) * 1_000_000_000, msg)
    run = read_series(bag)
    left_out = [f"{why}: {n}" for why, n in run.skipped.items()]
    values = run.contact_force.array(missing=0.0)
    unsafe = "" if len(values) and np.all(np.abs(values) <= 1e6) else f"contact forces in the series {values}"
    return Said(warnings=left_out, unsafe=unsafe)


# --- solvers ---------------------------------------------------------------------------------------------
def _pinned_qp(offset: float) -> QP:
    """x0 pinned twice (x0 = 1 and 2 x0 = 2 + offset, both l = u): DAQP's initial working set is
    overdetermined (exit -6); consistent up to ``offset``."""
    C = np.array([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    return QP(np.eye(3), np.ones(3), C=C, l=np.array([1.0, 2.0 + offset, -1.0]),
              u=np.array([1.0, 2.0 + offset, 1.0]))


def _solve(name: str, offset: float) -> Said:
    """One solve: a failed result is a refusal with its message; a solved one must satisfy the pinned row."""
    result = make_solver(name).solve(_pinned_qp(offset))
    if not result.ok:
        return Said(errors=[f"{name}: {result.status.name}: {result.message}"])
    unsafe = "" if result.x is not None and np.all(np.isfinite(result.x)) and abs(result.x[0] - 1) < 1e-4 \
        else f"solved with x = {result.x}"
    return Said(unsafe=unsafe)


def _pinned_locomotion(tmp: Path) -> Said:
    """LocomotionController on the quadruped whose joint limits are lower = upper at the stance, legs moving:
    the hard level has no solution, and the tick is answered relaxed (the joint limits soft) with its message
    as the warning; or its failure. Unsafe if torques came out with a failed status, non-finite or beyond the
    URDF's effort limits."""
    text = QUADRUPED.read_text()
    for joint, value in zip(re.findall(r'<joint name="(\w+)" type="revolute"', text), STANCE, strict=True):
        text = re.sub(rf'(<joint name="{joint}".*?<limit )lower="[^"]*" upper="[^"]*"',
                      rf'\g<1>lower="{value}" upper="{value}"', text, count=1, flags=re.S)
    path = tmp / "pinned_quadruped.urdf"
    path.write_text(text)
    model = kd.Model.from_urdf(path, floating_base=True)
    parameters = LocomotionParameters(initial_mode="stand")
    controller = LocomotionController(model, FEET, np.array(STANCE), parameters)
    q = model.neutral()
    q[7:], q[2] = STANCE, 0.5252 - 0.03
    out = controller.update(q, np.random.default_rng(1).normal(scale=0.3, size=model.nv), 0.0)
    if out.ok:
        if out.tau is None or not np.all(np.isfinite(out.tau)):
            return Said(unsafe="ok with non-finite torques")
        over = np.abs(out.tau) > model.effort_limit[6:] * (1.0 + 1e-12)
        unsafe = f"torques beyond the effort limits: {out.tau[over]}" if over.any() else ""
        return Said(warnings=[out.message] if out.status == "relaxed" else [], unsafe=unsafe)
    return Said(errors=[out.message], unsafe="" if out.tau is None else "torques given with a failed tick")


# --- the cases -------------------------------------------------------------------------------------------
def _case(surface: str, name: str, given: str, expected: str, payload: Callable[[], Said],
          names: Sequence[str] = (), doc: Doc | None = None) -> Case:
    return Case(surface, name, given, expected, payload, tuple(names), doc)


def field_in_process_cases(tmp: Path) -> list[Case]:
    """Devices, viewer/report and solver cases, each run in this process."""
    far = Doc(DRIVERS, "it becomes the reference only when the next packet continues from it")
    unmatched = Doc(DRIVERS, "Any other reply is *unmatched* and dropped, never taken as the answer to a "
                             "later frame")
    drawn = Doc("docs/nodes/viewer.md", "more are evenly picked, said once in the log; the support polygon "
                                        "uses every contact")
    left_out = Doc("docs/report.md", "are left out and counted in the header")
    fallback = Doc("docs/qp-solvers.md", "NUMERICAL_ERROR, and OSQP (the fallback) solves such a problem")
    rng = np.random.default_rng(5)
    many = np.c_[rng.uniform(-1.0, 1.0, (5000, 2)), np.zeros(5000)]
    many_forces = np.c_[np.zeros((5000, 2)), rng.uniform(1.0, 50.0, 5000)]
    one = np.array([[0.3, 0.2, 0.0], [0.3, -0.2, 0.0], [-0.3, 0.2, 0.0]])
    up = np.array([[0.0, 0.0, 80.0]] * 3)
    return [
        _case("device", "imu_counter_far_ahead", "one forged IMU packet 20000 counts ahead, then the stream",
              DOCUMENTED, lambda: _imu_said(_forged(20000)), ("PacketCounter",), far),
        _case("device", "imu_counter_behind", "one IMU packet 100 counts behind, then the real stream",
              DOCUMENTED, lambda: _imu_said(_forged(-100)), ("does not advance",),
              Doc(DRIVERS, "A read that receives such packets is one `[WARN]` line")),
        _case("device", "imu_replayed_forever", "the IMU replays its last packet from now on", CLEAR,
              lambda: _imu_said(_replay), ("does not advance", "stale_fault_cycles")),
        _case("device", "imu_rate_1e6", "an IMU rate of turn of 1e6 rad/s", CLEAR,
              lambda: _imu_said(_misreport(rate=1e6)), ("gyro_range",)),
        _case("device", "imu_accel_3e38", "an IMU acceleration of 3e38 m/s²", CLEAR,
              lambda: _imu_said(_misreport(accel=3e38)), ("accel_range",)),
        _case("device", "imu_no_packet_counter", "an MTData2 message without PacketCounter", CLEAR,
              lambda: _imu_said(_no_counter), ("PacketCounter",)),
        _case("device", "can_double_reply", "motor 2 answers one frame twice", DOCUMENTED,
              lambda: _can_said(_double, margins=""), ("dropped",), unmatched),
        _case("device", "can_position_beyond_limits", "motor 2 reports a position of -1.5 rad (URDF ±1)",
              CLEAR,
              lambda: _can_said(_misreport_motor(position=-1.5)), ("reads position",)),
        _case("device", "can_velocity_encodable_end", "motor 2 reports 1e6 rad/s (saturates at v_max)",
              CLEAR, lambda: _can_said(_misreport_motor(velocity=-1e6)), ("reads velocity",)),
        _case("viewer/report", "viewer_contact_force_1e308", "a ContactStates force of 1e308 N", CLEAR,
              lambda: _viewer_contacts(one, np.array([[0.0, 0.0, 1e308], *up[1:]])), ("max_force",)),
        _case("viewer/report", "viewer_contact_point_1e308", "a ContactStates point at x = -1e308 m", CLEAR,
              lambda: _viewer_contacts(np.array([[-1e308, 0.0, 0.0], *one[1:]]), up), ("max_position",)),
        _case("viewer/report", "viewer_contact_force_nan", "a ContactStates force of NaN", CLEAR,
              lambda: _viewer_contacts(one, np.array([[0.0, np.nan, 1.0], *up[1:]])), ("non-finite",)),
        _case("viewer/report", "viewer_5000_contacts", "5000 contact points and forces", DOCUMENTED,
              lambda: _viewer_contacts(many, many_forces), ("max_drawn_contacts",), drawn),
        _case("viewer/report", "report_contact_force_1e308", "a bagged contact force of 1e308 N", DOCUMENTED,
              lambda: _report_forces(tmp, "1e308", 1e308), ("contact force",), left_out),
        _case("viewer/report", "report_contact_force_inf", "a bagged contact force of inf", DOCUMENTED,
              lambda: _report_forces(tmp, "inf", math.inf), ("non-finite",), left_out),
        _case("solver", "daqp_pinned_rows_dependent", "rows pinned by l = u, dependent, consistent to 4e-9",
              CLEAR, lambda: _solve("daqp", 4e-9), ("overdetermined",)),
        _case("solver", "osqp_pinned_rows_dependent", "the same problem given to the fallback (OSQP)",
              DOCUMENTED, lambda: _solve("osqp", 4e-9), (), fallback),
        _case("solver", "daqp_pinned_rows_contradict", "rows pinned by l = u that contradict each other",
              CLEAR,
              lambda: _solve("daqp", 0.5), ("contradict",)),
        _case("solver", "locomotion_joints_pinned_by_limits",
              "every quadruped joint's limits lower = upper, legs moving: a locomotion tick", DOCUMENTED,
              lambda: _pinned_locomotion(tmp), ("relaxed", "joint limits"),
              Doc("docs/wbc.md", "An infeasible hard level is answered relaxed")),
    ]


# --- bag files through the kinodyn commands -----------------------------------------------------------------
BAGS = "docs/bags.md"


@dataclass(frozen=True)
class Tool:
    """A ``kinodyn`` command line on a bag made by ``damage`` (the intact bag's directory, the case's
    directory) in the part's scratch directory."""
    args: tuple[str, ...]
    damage: Callable[[Path, Path], None]


def classify_tool(case: Case, code: int | None, stdout: str, stderr: str) -> Outcome:
    """A traceback, a signal or no exit within the wait is a crash; a non-zero exit is a refusal by its one
    ``error:`` line (several: unhelpful); exit 0 is an acceptance, with ``names`` only when exactly one
    line of its output names the damage (a damaged bag read without a word is a silent accept)."""
    if "Traceback" in stdout + stderr:
        return Outcome(CRASH, "traceback: " + " | ".join((stdout + stderr).strip().splitlines()[-2:])[:300])
    if code is None or code < 0:
        return Outcome(CRASH, "no exit within the wait" if code is None else f"killed by signal {-code}")
    lines = [line for line in stderr.splitlines() if line.strip()]
    if code != 0:
        errors = [line for line in lines if "error:" in line]
        if len(errors) > 1:
            return Outcome(UNHELPFUL, f"exit {code}, {len(errors)} error lines: " + " | ".join(errors)[:300])
        return refused(case, (errors or lines or stdout.strip().splitlines() or [""])[-1])
    naming = [line for line in lines + stdout.splitlines() if names_it(line, case.names)]
    if case.names and len(naming) != 1:
        return Outcome(SILENT, f"exit 0 without one line naming {list(case.names)}: {lines[:3]}")
    return accepted(case, "exit 0" + (f"; said: {naming[0][:200]}" if naming else ""))


def _intact(source: Path, target: Path) -> None:
    target.mkdir()
    for item in source.iterdir():
        (target / item.name).write_bytes(item.read_bytes())


def _mcap(bag: Path, name: str = "trot") -> Path:
    """The MCAP file of a copy of the intact bag (its file keeps the name metadata.yaml gives it)."""
    return bag / f"{name}.mcap"


def _cut(fraction: float, metadata: bool = False) -> Callable[[Path, Path], None]:
    """The MCAP file cut after ``fraction`` of its bytes (a power cut), metadata.yaml gone unless kept."""
    def damage(source: Path, target: Path) -> None:
        target.mkdir()
        data = _mcap(source).read_bytes()
        _mcap(target).write_bytes(data[: int(len(data) * fraction)])
        if metadata:
            (target / "metadata.yaml").write_bytes((source / "metadata.yaml").read_bytes())
    return damage


def _footer_removed(source: Path, target: Path) -> None:
    """The MCAP file without its footer and no metadata.yaml: a recorder killed while closing."""
    target.mkdir()
    _mcap(target).write_bytes(_mcap(source).read_bytes()[:-FOOTER_SIZE])


def _flipped(source: Path, target: Path) -> None:
    """One byte flipped in the middle of the file (inside a chunk of messages)."""
    _intact(source, target)
    data = bytearray(_mcap(source).read_bytes())
    data[len(data) // 2] ^= 0x40
    _mcap(target).write_bytes(bytes(data))


def _not_mcap(source: Path, target: Path) -> None:
    target.mkdir()
    _mcap(target).write_bytes(b"not an mcap file at all")


def _empty(source: Path, target: Path) -> None:
    target.mkdir()


def _stamped_ahead(source: Path, target: Path) -> None:
    """The bag again with its 300th IMU message stamped 10 s ahead of its bag time."""
    seen = 0
    with open_bag(source) as reader, BagWriter(target, chunk_size=60_000) as writer:
        for c in reader.connections:
            writer.add_topic(c.topic, c.msgtype, qos=c.ext.offered_qos_profiles, type_hash=c.digest)
        for c, t_ns, raw in reader.messages():
            if c.topic == "/imu/data":
                seen += 1
                if seen == 300:
                    msg = deserialize_message(raw, Imu)
                    msg.header.stamp.sec += 10
                    writer.write(c.topic, t_ns, serialize_message(msg))
                    continue
            writer.write(c.topic, t_ns, raw)


def write_trot_bag(path: Path) -> None:
    """A synthetic trot of the quadruped (2.5 s, 200 Hz: IMU, joints, contacts, ground truth) in chunks of
    60 kB (a dozen chunks: damage in one leaves others)."""
    model = kd.Model.from_urdf(QUADRUPED, floating_base=True)
    run = trotting_walk(model, "imu_link", list(FEET), duration=2.5, rate=200.0,
                        standing_joints=np.array(STANCE))
    write_synthetic_bag(run, path.parent / "synthetic")
    with open_bag(path.parent / "synthetic") as reader, BagWriter(path, chunk_size=60_000) as writer:
        for c in reader.connections:
            writer.add_topic(c.topic, c.msgtype, qos=c.ext.offered_qos_profiles, type_hash=c.digest)
        for c, t_ns, raw in reader.messages():
            writer.write(c.topic, t_ns, raw)


def _bag_case(name: str, given: str, expected: str, tool: Tool, names: Sequence[str] = (),
              doc: Doc | None = None) -> Case:
    return Case("bag file", name, given, expected, tool, tuple(names), doc)


def bag_cases() -> list[Case]:
    """``kinodyn bag info | play | reindex`` and ``kinodyn estimate`` on damaged bags."""
    scanned = Doc(BAGS, "One line on stderr says that the file was scanned.")
    skipped = Doc(BAGS, "A chunk that fails it (or does not decompress, or whose records do not parse) is "
                        "skipped, counted (`reader.skipped`) and reported once on stderr")
    reindexed = Doc(BAGS, "any other (cut, without footer, with a chunk that fails its check) is written "
                          "again from the messages the scan could read")
    metadata_first = Doc(BAGS, "With a metadata.yaml, `info` prints its figures without reading the files")
    info, play, reindex = ("bag", "info", "{bag}"), ("bag", "play", "{bag}", "--rate", "20"), \
        ("bag", "reindex", "{bag}")
    estimate = ("estimate", "{bag}", "--urdf", str(QUADRUPED), "--output", "{bag}_estimate", "--quiet")
    return [
        _bag_case("info_cut_in_half", "bag info on a file cut in half, no metadata.yaml", DOCUMENTED,
                  Tool(info, _cut(0.5)), ("scan",), scanned),
        _bag_case("info_cut_keeping_metadata", "bag info on a file cut at 70 %, metadata.yaml kept",
                  DOCUMENTED,
                  Tool(info, _cut(0.7, metadata=True)), (), metadata_first),
        _bag_case("info_footer_removed", "bag info on a file missing its footer, no metadata.yaml (killed)",
                  DOCUMENTED, Tool(info, _footer_removed), ("scan",), scanned),
        _bag_case("play_flipped_byte", "bag play (20x) of a file with one flipped byte in a chunk",
                  DOCUMENTED,
                  Tool(play, _flipped), ("fails its check",), skipped),
        _bag_case("reindex_cut_in_half", "bag reindex of a file cut in half", DOCUMENTED,
                  Tool(reindex, _cut(0.5)), ("cut short",), reindexed),
        _bag_case("reindex_flipped_byte", "bag reindex of a file with one flipped byte", DOCUMENTED,
                  Tool(reindex, _flipped), ("fails its check",), reindexed),
        _bag_case("info_not_mcap", "bag info on a .mcap file of text", CLEAR, Tool(info, _not_mcap),
                  ("MCAP",)),
        _bag_case("reindex_empty_directory", "bag reindex of an empty directory", CLEAR,
                  Tool(reindex, _empty), (".mcap",)),
        _bag_case("estimate_flipped_byte", "kinodyn estimate on a bag with one flipped byte", DOCUMENTED,
                  Tool(estimate, _flipped), ("fails its check",), skipped),
        _bag_case("estimate_cut_in_half", "kinodyn estimate on a bag cut in half", DOCUMENTED,
                  Tool(estimate, _cut(0.5)), ("scan",), scanned),
        _bag_case("estimate_imu_stamped_ahead", "kinodyn estimate on a bag with one IMU stamped 10 s ahead",
                  CLEAR, Tool(estimate, _stamped_ahead), ("max_stamp_lead",)),
    ]


def run_bag_cases(cases: Sequence[Case], tmp: Path, parallel: int = 3, wait: float = 300.0
                  ) -> Iterator[Result]:
    """Write the trot bag, damage a copy per case, run the cases' commands ``parallel`` at a time."""
    intact = tmp / "trot"  # _mcap's name
    write_trot_bag(intact)
    pending = list(cases)
    running: list[tuple[Case, subprocess.Popen, float]] = []
    while pending or running:
        while pending and len(running) < parallel:
            case = pending.pop(0)
            tool: Tool = case.payload
            bag = tmp / case.name
            tool.damage(intact, bag)
            args = [a.replace("{bag}", str(bag)) for a in tool.args]
            proc = subprocess.Popen([sys.executable, "-m", "kinodyn_tools.launcher.cli", *args],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            running.append((case, proc, time.monotonic()))
        case, proc, started = running.pop(0)
        try:
            stdout, stderr = proc.communicate(timeout=max(1.0, started + wait - time.monotonic()))
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            code = None
        yield Result(case, classify_tool(case, code, stdout, stderr))


# --- time stamps and plausibility: the quadruped's closed loop over DDS -------------------------------------
GRAPH = "config/quadruped_wbc.yaml"
STANDING_HEIGHT = 0.5252  # urdf/README.md
NS = 1_000_000_000
MARK = 4321.5  # pose.covariance[0] of the injected odometry (told apart from the estimator's own)
ESTIMATOR_DOC = "docs/nodes/state_estimator.md"


@dataclass(frozen=True)
class Inject:
    """``build(loop)`` gives the message that ``node``'s refusal line (its ``[<node>]`` lines in the
    launcher's log) must name; it is published once on ``topic``."""
    node: str
    topic: str
    build: Callable[[Loop], Any]


@dataclass
class Loop:
    """The running graph as the test process sees it: the newest truth, estimate, joint state and every
    command with the monotonic time it arrived."""
    truth: list[Any] = field(default_factory=list)
    estimate: list[Any] = field(default_factory=list)
    states: list[Any] = field(default_factory=list)
    commands: list[tuple[float, Any]] = field(default_factory=list)
    injected: set[int] = field(default_factory=set)  # stamps of the commands this test sent itself

    def sim_ns(self) -> int:
        return _stamp_ns(self.truth[-1]) if self.truth else 0

    def sim_time(self) -> float:
        return self.sim_ns() / NS

    def estimated_past(self, t: float) -> bool:
        """The newest estimate is stamped after ``t`` s: the estimator has taken its inputs up to ``t``."""
        return bool(self.estimate) and _stamp_ns(self.estimate[-1]) > t * NS


Stamped = TypeVar("Stamped", JointState, Imu, TwistStamped, Odometry, JointPDCommand)  # inputs with a header


def _stamp_ns(msg: JointState | Imu | TwistStamped | Odometry | JointPDCommand) -> int:
    return msg.header.stamp.sec * NS + msg.header.stamp.nanosec


def _stamped(msg: Stamped, ns: int) -> Stamped:
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(ns), NS)
    return msg


def _joint_state(loop: Loop, shift_ns: int) -> JointState:

    last = loop.states[-1]
    msg = JointState(name=list(last.name), position=list(last.position), velocity=list(last.velocity),
                     effort=list(last.effort))
    return _stamped(msg, _stamp_ns(last) + shift_ns)


def _imu(loop: Loop, shift_ns: int) -> Imu:

    msg = Imu()
    msg.header.frame_id = "imu_link"
    msg.orientation_covariance[0] = -1.0
    msg.linear_acceleration.z = 9.81
    return _stamped(msg, loop.sim_ns() + shift_ns)


def _cmd_vel(loop: Loop, shift_ns: int) -> TwistStamped:

    msg = TwistStamped()
    msg.twist.linear.x = 0.3
    return _stamped(msg, loop.sim_ns() + shift_ns)


def _odometry(loop: Loop, shift_ns: int = 0, dx: float = 0.0, turn: bool = False) -> Odometry:
    """The newest estimate moved ``dx`` m along x (and turned 90 deg about z), stamped with the newest joint
    state's stamp + ``shift_ns``."""
    last = loop.estimate[-1]
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = last.header.frame_id, last.child_frame_id
    msg.pose.pose = last.pose.pose
    msg.pose.pose.position.x += dx
    if turn:
        o, s = last.pose.pose.orientation, math.sqrt(0.5)
        msg.pose.pose.orientation.x, msg.pose.pose.orientation.y = s * o.x - s * o.y, s * o.y + s * o.x
        msg.pose.pose.orientation.z, msg.pose.pose.orientation.w = s * o.z + s * o.w, s * o.w - s * o.z
    msg.pose.covariance[0] = MARK
    return _stamped(msg, _stamp_ns(loop.states[-1]) + shift_ns)


def _pd_command(loop: Loop, shift_ns: int) -> JointPDCommand:

    last = loop.states[-1]
    n = len(last.name)
    msg = JointPDCommand(name=list(last.name), position=list(last.position), velocity=[0.0] * n,
                         effort=[0.0] * n, kp=[0.0] * n, kd=[0.0] * n)
    return _stamped(msg, _stamp_ns(last) + shift_ns)


def graph_cases() -> list[Case]:
    """Stamps and implausible base states sent into the trotting-capable quadruped loop in lockstep."""
    stamp, plaus = "time stamp", "plausibility"
    return [
        Case(stamp, "wbc_joint_states_10s_ahead", "a joint state stamped 10 s ahead of /clock", CLEAR,
             Inject("wbc", "/joint_states", lambda loop: _joint_state(loop, 10 * NS)), ("ahead",),
             cause="wbc_js_ahead"),
        Case(stamp, "estimator_joint_states_epoch", "a joint state stamped in epoch time (1.7e9 s)", CLEAR,
             Inject("state_estimator", "/joint_states",
                    lambda loop: _joint_state(loop, 1_700_000_000 * NS)), ("max_stamp_lag", "clock domain")),
        Case(stamp, "estimator_imu_10s_ahead", "an IMU message stamped 10 s ahead of /clock", CLEAR,
             Inject("state_estimator", "/imu_sensor_broadcaster/imu", lambda loop: _imu(loop, 10 * NS)),
             ("max_stamp_lead",)),
        Case(stamp, "wbc_cmd_vel_10s_ahead", "a cmd_vel stamped 10 s ahead of /clock", CLEAR,
             Inject("wbc", "/wbc/cmd_vel", lambda loop: _cmd_vel(loop, 10 * NS)), ("ahead",)),
        Case(stamp, "wbc_cmd_vel_1s_behind", "a cmd_vel stamped 1 s behind /clock", CLEAR,
             Inject("wbc", "/wbc/cmd_vel", lambda loop: _cmd_vel(loop, -NS)), ("behind", "stale")),
        Case(stamp, "control_node_command_10s_ahead", "a JointPDCommand stamped 10 s after its state",
             CLEAR, Inject("controller_manager", "/leg_pd_controller/commands",
                           lambda loop: _pd_command(loop, 10 * NS)), ("stamp",)),
        Case(plaus, "wbc_base_state_10m_jump", "a second odometry 10 m from the estimate", CLEAR,
             Inject("wbc", "/odometry/filtered", lambda loop: _odometry(loop, dx=10.0)), ("base state",),
             cause="wbc_gate"),
        Case(plaus, "wbc_base_state_90deg_turn", "a second odometry turned 90 deg from the estimate", CLEAR,
             Inject("wbc", "/odometry/filtered", lambda loop: _odometry(loop, turn=True)), ("base state",),
             cause="wbc_gate"),
        Case(stamp, "wbc_base_state_10s_ahead", "an odometry stamped 10 s ahead of /clock", CLEAR,
             Inject("wbc", "/odometry/filtered", lambda loop: _odometry(loop, shift_ns=10 * NS)), ("ahead",)),
    ]


def _loop_safety(loop: Loop, since: float) -> list[str]:
    """What reached the motors or the robot since ``since``: a non-finite command, a command stamped beyond
    the simulated clock + 1 s, the true base below 60 % of its standing height or tilted over 0.5 rad."""
    wrong: list[str] = []
    for arrived, command in loop.commands:
        if arrived < since or _stamp_ns(command) in loop.injected:
            continue
        values = np.array([command.position, command.velocity, command.effort, command.kp, command.kd], float)
        if not np.all(np.isfinite(values)):
            wrong.append(f"a non-finite command stamped {_stamp_ns(command) / NS:.3f} s")
        if _stamp_ns(command) > loop.sim_ns() + NS:
            wrong.append(f"a command stamped {_stamp_ns(command) / NS:.3f} s at {loop.sim_time():.3f} s")
    if loop.truth:
        pose = loop.truth[-1].pose.pose
        tilt = 2.0 * math.asin(min(1.0, math.hypot(pose.orientation.x, pose.orientation.y)))
        if pose.position.z < 0.6 * STANDING_HEIGHT or tilt > 0.5:
            wrong.append(f"the robot fell: base at {pose.position.z:.3f} m, tilted {tilt:.2f} rad")
    return wrong[:3]


def run_graph_cases(spawn: Callable[..., Any], cases: Sequence[Case], window: float = 0.4
                    ) -> Iterator[Result]:
    """Start the quadruped loop (``kinodyn up``), wait until it stands on the estimate, then send each case
    once and watch ``window`` s of simulated time: the target node's new lines, the commands, the robot."""
    types = {"/joint_states": JointState, "/imu_sensor_broadcaster/imu": Imu, "/wbc/cmd_vel": TwistStamped,
             "/odometry/filtered": Odometry, "/leg_pd_controller/commands": JointPDCommand}
    listener = Listener("bad_inputs_field_graph")
    try:
        node, loop, qos = listener.node, Loop(), QoSProfile(depth=100)
        publishers = {topic: node.create_publisher(t, topic, QoSProfile(depth=10))
                      for topic, t in types.items()}
        node.create_subscription(Odometry, "/quadruped_system/odometry", loop.truth.append, qos)
        node.create_subscription(Odometry, "/odometry/filtered",
                                 lambda m: m.pose.covariance[0] == MARK or loop.estimate.append(m), qos)
        node.create_subscription(JointState, "/joint_states", loop.states.append, qos)
        node.create_subscription(JointPDCommand, "/leg_pd_controller/commands",
                                 lambda m: loop.commands.append((time.monotonic(), m)), qos)
        kinodyn = shutil.which("kinodyn")
        assert kinodyn is not None, "the kinodyn console script is not on PATH: source scripts/env.sh"
        launcher = spawn([kinodyn, "up", GRAPH], "field_graph")
        log = Path(launcher.log_path)
        # every stream the cases build their messages from has reached this process (on a loaded machine the
        # middleware may match one of its readers seconds after the others)
        assert listener.spin_until(lambda: loop.estimate and loop.states and loop.truth, 600.0), (
            f"estimates {len(loop.estimate)}, joint states {len(loop.states)}, truth {len(loop.truth)}\n"
            + log.read_text()[-2000:])
        t_stand = loop.sim_time() + 1.0
        assert listener.spin_until(lambda: loop.sim_time() > t_stand, 600.0), log.read_text()[-2000:]
        # every node a case's message is for has matched this process's writer on its topic: a count above
        # zero is not enough (this process reads /joint_states, /odometry/filtered and the commands itself)
        targets: dict[str, set[str]] = {}
        for case in cases:
            targets.setdefault(case.payload.topic, set()).add(case.payload.node)

        def matched(topic: str) -> bool:
            readers = node.get_subscriptions_info_by_topic(topic)
            return (targets.get(topic, set()) <= {r.node_name for r in readers}
                    and publishers[topic].get_subscription_count() >= len(readers) > 0)

        for topic in publishers:
            assert listener.spin_until(lambda t=topic: matched(t), 30.0), (
                topic, [r.node_name for r in node.get_subscriptions_info_by_topic(topic)])
        causes: set[str] = set()
        for case in cases:
            inject: Inject = case.payload
            offset, since = len(log.read_text(errors="replace")), time.monotonic()
            message = inject.build(loop)
            if inject.topic == "/leg_pd_controller/commands":
                loop.injected.add(_stamp_ns(message))
            publishers[inject.topic].publish(message)
            # the window counts from delivery: the target's reader has the message (a reliable publisher's
            # acknowledgement), however late the middleware delivered it on a loaded machine
            assert publishers[inject.topic].wait_for_all_acked(Duration(seconds=30)), inject.topic
            t_end = loop.sim_time() + window
            listener.spin_until(lambda t=t_end: loop.sim_time() > t or launcher.poll() is not None, 60.0)
            if inject.node == "state_estimator":  # the loop does not wait for it: let it catch up to t_end
                listener.spin_until(lambda t=t_end: loop.estimated_past(t) or launcher.poll() is not None,
                                    60.0)
            new = log.read_text(errors="replace")[offset:]
            mine = "\n".join(line for line in new.splitlines() if line.startswith(f"[{inject.node}]"))
            seen = NodeObservation(launcher.poll() is None and loop.sim_time() > t_end, mine,
                                   wrong=_loop_safety(loop, since))
            yield Result(case, classify_node(case, seen, causes))
            loop.commands = [c for c in loop.commands if c[0] >= since]
    finally:
        listener.close()
