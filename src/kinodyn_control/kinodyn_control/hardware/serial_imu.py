"""``kinodyn_control/SerialImuSensor``: an Xsens MTi (MTData2 over a serial port, pyserial) as the 10 IMU
state interfaces.

Protocol: serial_imu_protocol.py (Xsens MT Low Level Communication Protocol, MT0101P). The device must already
stream MTData2 in measurement mode (its power-up state) with Acceleration (0x4020), RateOfTurn (0x8020) and,
unless ``orientation`` is ``none``, Quaternion (0x2010), in Float32, Fp1220 or Float64 (set once with MT
Manager or SetOutputConfiguration); the driver only listens.

The ``<ros2_control type="sensor">`` block holds one ``<sensor>`` whose state interfaces are the 10 of
``semantic_components::IMUSensor`` and whose ``<param>`` children are (defaults in brackets):

- ``port``: the serial device, e.g. ``/dev/ttyUSB0`` (required);
- ``baudrate`` [115200, the MTi's default]: an integer > 0;
- ``timeout`` [0.1 s]: no valid frame carrying a required quantity for this long is a stopped stream;
- ``orientation`` [``device``]: ``device`` reports the device's quaternion converted to q_ENU,S (REP-103 world
  frame; the device's NED/NWU choice is read from each packet's coordinate bits); ``none`` for an output
  without orientation: the four orientation interfaces are 0 and, by REP-145 / sensor_msgs/Imu, the
  broadcaster's ``static_covariance_orientation`` must start with -1;
- ``gyro_range`` [34.907 rad/s = 2000 °/s] and ``accel_range`` [156.91 m/s² = 16 g]: the device's full-scale
  ranges (defaults: the MTi 1-series'); a rate of turn or acceleration component beyond them is no
  measurement;
- ``stale_fault_cycles`` [3]: reads in a row that receive only packets whose PacketCounter does not advance
  before that is a fault;
- ``max_counter_jump`` [1000]: an integer 1 .. 32767, the most PacketCounter steps between two packets taken
  in a row (lost packets in between); a packet further ahead is taken only once the next packet continues
  from it;
- ``frame_id``: read by the IMU broadcaster (the URDF link aligned with the device's printed axes S).

Units are the device's SI units (m/s², rad/s), vectors in S. Every MTData2 message must carry a PacketCounter
(uint16, +1 per sample, wrapping): a packet is new when its counter is ahead of the last one taken by 1 to
2^15 - 1 (serial number arithmetic, RFC 1982; a gap is lost packets); any other (the same counter: a replayed
or repeated packet; one behind: an old packet, or a device that restarted) is not taken: its values are not
stored and do not count as the stream being alive, with a throttled warning, and a fault once reads received
nothing else ``stale_fault_cycles`` times in a row. A packet ahead by more than ``max_counter_jump`` is not
taken either (one throttled warning): it becomes the new reference only when the next packet continues from
it (a device that really skipped that far), while packets continuing the old sequence are taken as before, so
one forged or corrupt counter far ahead cannot make every later real packet look old.

Faults go to ros2_control's ERROR (``read`` returns ERROR, ``last_error`` is the one line the controller
manager logs): a corrupt message (checksum, an impossible length, a malformed MTData2 packet, a non-finite
value, a non-unit quaternion) once the stream has been synchronised, a reading beyond the full-scale ranges, a
message without PacketCounter, a counter that does not advance as above, a device Error message (MID 0x42), a
required quantity missing for ``timeout`` (stream stopped), a port that fails. A faulty message's values are
not stored. Bytes between messages that start no message (line noise before a preamble) are skipped and
counted (``reader.skipped``); they are no fault. While ``on_configure`` synchronises (up to ``timeout``),
corrupt candidates are skipped: the port may open in the middle of a message.
"""

from __future__ import annotations

import math
from time import monotonic, sleep
from typing import TYPE_CHECKING

import serial
from kinodyn_common.problem_log import DistinctProblemLog

from kinodyn_control.hardware.component import Sensor
from kinodyn_control.hardware.serial_imu_protocol import (
    MID_ERROR,
    MID_MTDATA2,
    XDI_PACKET_COUNTER,
    ImuSample,
    ProtocolError,
    XbusReader,
    decode_mtdata2,
)
from kinodyn_control.hardware.types import IMU_INTERFACES, CallbackReturn, ReturnType

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn_control.hardware.description import HardwareInfo

PARAMS = ("port", "baudrate", "timeout", "orientation", "gyro_range", "accel_range", "stale_fault_cycles",
          "max_counter_jump", "frame_id")
ORIENTATION_MODES = ("device", "none")
_QUANTITIES = ("orientation", "angular_velocity", "linear_acceleration")
MAX_READS = 64  # per poll: a backlog of 256 KiB is read in one cycle, a stream cannot keep it busy forever
STANDARD_GRAVITY = 9.80665
# full-scale ranges of the MTi 1-series (datasheet MT0512P, "Sensors specifications")
GYRO_RANGE = math.radians(2000.0)
ACCEL_RANGE = 16.0 * STANDARD_GRAVITY
COUNTER_MODULUS = 1 << 16


MAX_COUNTER_STEP = COUNTER_MODULUS // 2 - 1  # serial number arithmetic: ahead by at most 2^15 - 1


def advances(counter: int, last: int | None, window: int = MAX_COUNTER_STEP) -> bool:
    """``counter`` is ahead of ``last`` by 1 .. ``window`` (mod 2^16), or there is no ``last`` yet."""
    return last is None or 0 < (counter - last) % COUNTER_MODULUS <= window


class SerialImuSensor(Sensor):
    def __init__(self) -> None:
        super().__init__()
        self.port_name = ""
        self.baudrate = 115200
        self.timeout = 0.1
        self.orientation_mode = "device"
        self.port: serial.Serial | None = None
        self.reader = XbusReader()
        self.gyro_range = GYRO_RANGE
        self.accel_range = ACCEL_RANGE
        self.stale_fault_cycles = 3
        self.max_counter_jump = 1000
        self.clock: Callable[[], float] = monotonic  # stamps arrivals [s]; tests may replace it
        self.last_counter: int | None = None  # PacketCounter of the last packet taken
        self.stale = 0  # packets not taken since configure: their counter did not advance
        self._stale_reads = 0  # reads in a row that received only such packets
        self.jumps = 0  # packets not taken since configure: their counter jumped beyond max_counter_jump
        self._jump: int | None = None  # the last such counter; the next packet continuing from it confirms it
        self._seen: dict[str, float] = {}  # quantity -> clock time it last arrived

    # --- on_init --------------------------------------------------------------------------------------------
    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        if not self.parsed(info, self._parse, "SerialImuSensor"):
            return CallbackReturn.ERROR
        self.problems = DistinctProblemLog(self.logger)
        return CallbackReturn.SUCCESS

    def _parse(self, info: HardwareInfo) -> None:
        if info.joints or info.gpios or len(info.sensors) != 1:
            raise ValueError("needs exactly one <sensor> and no <joint> or <gpio>")
        if info.params:
            raise ValueError(f"<hardware> param(s) {', '.join(info.params)} are not used; put port, "
                             "baudrate, timeout and orientation in the <sensor>'s <param>s")
        sensor = info.sensors[0]
        names = sorted(s.name for s in sensor.state_interfaces)
        if names != sorted(IMU_INTERFACES):
            raise ValueError(f"<sensor name='{sensor.name}'> must list exactly the state interfaces "
                             f"{', '.join(IMU_INTERFACES)}; it lists {', '.join(names) or 'none'}")
        params = sensor.params
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise ValueError(f"unknown <sensor> param(s) {', '.join(unknown)}; known: {', '.join(PARAMS)}")
        self.port_name = params.get("port", "")
        if not self.port_name:
            raise ValueError('param port is required, e.g. <param name="port">/dev/ttyUSB0</param>')
        baudrate = params.get("baudrate", str(self.baudrate))
        if not (baudrate.isdigit() and int(baudrate) > 0):
            raise ValueError(f"param baudrate '{baudrate}' must be a positive integer (MTi default: 115200)")
        self.baudrate = int(baudrate)
        self.timeout = _positive(params, "timeout", self.timeout, "a number of seconds > 0")
        self.gyro_range = _positive(params, "gyro_range", self.gyro_range,
                                    "the device's gyroscope full-scale range in rad/s, > 0")
        self.accel_range = _positive(params, "accel_range", self.accel_range,
                                     "the device's accelerometer full-scale range in m/s², > 0")
        cycles = params.get("stale_fault_cycles", str(self.stale_fault_cycles))
        if not (cycles.isdigit() and int(cycles) >= 1):
            raise ValueError(f"param stale_fault_cycles '{cycles}' must be an integer >= 1")
        self.stale_fault_cycles = int(cycles)
        jump = params.get("max_counter_jump", str(self.max_counter_jump))
        if not (jump.isdigit() and 1 <= int(jump) <= MAX_COUNTER_STEP):
            raise ValueError(f"param max_counter_jump '{jump}' must be an integer from 1 to "
                             f"{MAX_COUNTER_STEP}")
        self.max_counter_jump = int(jump)
        self.orientation_mode = params.get("orientation", self.orientation_mode)
        if self.orientation_mode not in ORIENTATION_MODES:
            raise ValueError(f"param orientation '{self.orientation_mode}' must be one of "
                             f"{', '.join(ORIENTATION_MODES)}")
        self._prefix = sensor.name
        self._required = _QUANTITIES if self.orientation_mode == "device" else _QUANTITIES[1:]

    # --- lifecycle ------------------------------------------------------------------------------------------
    def on_configure(self) -> CallbackReturn:
        try:
            self.port = serial.Serial(self.port_name, self.baudrate, timeout=0)
            self.port.reset_input_buffer()
        except (serial.SerialException, OSError, ValueError) as exc:
            return self._fail(f"cannot open IMU port {self.port_name} at {self.baudrate} baud: {exc}")
        self.reader = XbusReader()
        self._seen = {}
        self.last_counter = self._jump = None
        self.stale = self._stale_reads = self.jumps = 0
        self._indices = {name: self.states.index[f"{self._prefix}/{name}"] for name in IMU_INTERFACES}
        if self.orientation_mode == "none":
            for axis in "xyzw":
                self.states.values[self._indices[f"orientation.{axis}"]] = 0.0
        deadline = monotonic() + self.timeout
        while monotonic() < deadline:
            problem = self._poll(synchronised=False)
            if problem:
                return self._fail(problem)
            if all(q in self._seen for q in self._required):
                return CallbackReturn.SUCCESS
            sleep(0.001)
        missing = [q for q in self._required if q not in self._seen]
        return self._fail(
            f"no MTData2 with {', '.join(missing)} from {self.port_name} within timeout {self.timeout} s "
            f"({self.reader.corrupt} corrupt, {self.reader.skipped} unsynchronised bytes): check power, "
            "cable, baudrate and that the device streams MTData2 with those outputs in measurement mode"
        )

    def _fail(self, problem: str) -> CallbackReturn:
        """``problem`` as ``last_error`` and the port closed: FAILURE (the component stays UNCONFIGURED)."""
        self.last_error = problem
        self.release()
        return CallbackReturn.FAILURE

    def on_error(self) -> CallbackReturn:
        """Close the port; the component can be configured again (UNCONFIGURED)."""
        self.release()
        return CallbackReturn.SUCCESS

    def release(self) -> None:
        """Close the port."""
        if self.port is not None:
            self.port.close()
            self.port = None

    # --- cyclic ---------------------------------------------------------------------------------------------
    def read(self, time: float, period: float) -> ReturnType:
        problem = self._poll(synchronised=True)
        if not problem:
            now = self.clock()
            stale = [q for q in self._required if now - self._seen[q] > self.timeout]
            if stale:
                problem = (
                    f"IMU stream on {self.port_name} stopped: no {', '.join(stale)} for "
                    f"{now - min(self._seen[q] for q in stale):.3f} s (timeout {self.timeout} s); check the "
                    "device's power and cable"
                )
        if problem:
            self.last_error = problem
            return ReturnType.ERROR
        return ReturnType.OK

    def _poll(self, synchronised: bool) -> str:
        """Read what the port holds and store the newest value of each quantity; '' or the problem."""
        assert self.port is not None
        data = b""
        try:
            for _ in range(MAX_READS):  # the tty hands out at most its 4 KiB line buffer per read
                waiting = self.port.in_waiting
                if not waiting:
                    break
                data += self.port.read(waiting)
        except (serial.SerialException, OSError) as exc:
            return f"IMU port {self.port_name} failed: {exc}"
        corrupt = self.reader.corrupt
        messages = self.reader.feed(data)
        if synchronised and self.reader.corrupt > corrupt:
            return (f"corrupt Xbus message from the IMU on {self.port_name}: {self.reader.last_problem} "
                    f"({self.reader.corrupt - corrupt} in this read)")
        now = self.clock()
        taken = stale = 0
        for mid, payload in messages:
            if mid == MID_ERROR:
                code = payload[0] if payload else "none"
                return f"the IMU on {self.port_name} sent an Error message (MID 0x42), error code {code}"
            if mid != MID_MTDATA2:
                continue  # acknowledgements and other messages carry no measurement
            try:
                sample = decode_mtdata2(payload)
            except ProtocolError as exc:
                if synchronised:
                    return f"corrupt MTData2 from the IMU on {self.port_name}: {exc}"
                continue
            problem = self._implausible(sample)
            if problem:
                return problem
            assert sample.packet_counter is not None  # _implausible refuses a packet without one
            if not advances(sample.packet_counter, self.last_counter):
                stale += 1
                continue
            if not self._continues(sample.packet_counter):
                continue
            taken += 1
            self.last_counter = sample.packet_counter
            self._store(sample.linear_acceleration, "linear_acceleration", now)
            self._store(sample.angular_velocity, "angular_velocity", now)
            if self.orientation_mode == "device":
                self._store(sample.orientation, "orientation", now)
        return self._judge_stale(taken, stale)

    def _implausible(self, sample: ImuSample) -> str:
        """'' for a packet with a PacketCounter and readings within the full-scale ranges, else the fault."""
        if sample.packet_counter is None:
            return (f"MTData2 from the IMU on {self.port_name} carries no PacketCounter (XDI "
                    f"0x{XDI_PACKET_COUNTER:04X}): add it to the device's output configuration; without it a "
                    "repeated packet cannot be told from a new one")
        for quantity, values, limit, unit, param in (
                ("angular_velocity", sample.angular_velocity, self.gyro_range, "rad/s", "gyro_range"),
                ("linear_acceleration", sample.linear_acceleration, self.accel_range, "m/s²", "accel_range")):
            for axis, value in zip("xyz", values or (), strict=False):
                if abs(value) > limit:
                    return (f"the IMU on {self.port_name} reports {quantity}.{axis} = {value:.6g} {unit}, "
                            f"beyond its full-scale range ±{limit:.6g} {unit} ({param}): no sensor measures "
                            f"that; check the device's output configuration, or set {param} to the device's "
                            "range")
        return ""

    def _continues(self, counter: int) -> bool:
        """An advancing ``counter`` is taken when within ``max_counter_jump`` of the last packet taken, or of
        the last jump beyond it (confirmed by this packet); else it is that jump, not taken (one warning)."""
        window = self.max_counter_jump
        if advances(counter, self.last_counter, window) or (
                self._jump is not None and advances(counter, self._jump, window)):
            self._jump = None
            return True
        self.jumps += 1
        ahead = (counter - (self.last_counter or 0)) % COUNTER_MODULUS
        self.problems.warn("jump", f"the IMU on {self.port_name} sent PacketCounter {counter}, {ahead} ahead "
                                   f"of the last one taken ({self.last_counter}; max_counter_jump {window}); "
                                   "not taken unless the next packet continues from it "
                                   f"({self.jumps} since configure)")
        self._jump = counter
        return False

    def _judge_stale(self, taken: int, stale: int) -> str:
        """Count packets not taken; '' or the fault once reads received only those ``stale_fault_cycles``
        times in a row."""
        if not stale:
            self._stale_reads = 0 if taken else self._stale_reads
            return ""
        self.stale += stale
        self._stale_reads = 0 if taken else self._stale_reads + 1
        what = (f"packet(s) whose PacketCounter does not advance past {self.last_counter} (the same packet "
                "again, an old one, or a device that restarted)")
        if self._stale_reads >= self.stale_fault_cycles:
            return (f"the IMU on {self.port_name} sent only {what} in {self._stale_reads} reads in a row "
                    f"(stale_fault_cycles {self.stale_fault_cycles}); its readings are not new: check the "
                    "device and the serial adapter")
        self.problems.warn("stale", f"the IMU on {self.port_name} sent {stale} {what}; not taken as new "
                                    f"({self.stale} since configure; {self.stale_fault_cycles} reads in a "
                                    "row with nothing else are a fault)")
        return ""

    def _store(self, values: tuple[float, ...] | None, quantity: str, now: float) -> None:
        """Write ``values`` to the quantity's state interfaces; it arrived at ``now``."""
        if values is None:
            return
        axes = "xyzw" if quantity == "orientation" else "xyz"
        for axis, value in zip(axes, values, strict=True):
            self.states.values[self._indices[f"{quantity}.{axis}"]] = value
        self._seen[quantity] = now


def _positive(params: dict[str, str], key: str, default: float, what: str) -> float:
    """Param ``key`` as a finite number > 0 (``default`` when absent); ValueError naming ``what`` it is."""
    text = params.get(key, str(default))
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"param {key} '{text}' must be {what}")
    return value
