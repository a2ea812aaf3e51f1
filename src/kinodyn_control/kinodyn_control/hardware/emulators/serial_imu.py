"""An emulated Xsens MTi streaming MTData2 (serial_imu_protocol.py) over a pseudo-terminal, with faults.

``XsensImuEmulator`` opens a pty (``os.openpty``, raw mode); a driver opens ``emulator.port`` as it would open
``/dev/ttyUSB0``. Message ``n`` carries PacketCounter ``n`` (mod 2^16) and the state of ``motion`` at device
time ``n / rate``: Quaternion (q_L,S in the chosen earth frame L), Acceleration and RateOfTurn in the chosen
precision. ``emit(n)`` writes messages now (deterministic tests); ``start()`` streams them at ``rate`` on a
thread, as the device's clock would, until ``stop()``.

Faults, applied to the next messages written: ``corrupt(n)`` flips the checksum byte, ``truncate()`` sends a
message cut in half, ``garbage(data)`` writes bytes before the next message, ``replay(n)`` sends the last
message again (same bytes, same PacketCounter) instead of a new one, ``misreport(sample, n)`` sends the
quantities ``sample`` gives instead of the motion's (e.g. a rate beyond any gyroscope's range); a stopped
stream is ``stop()`` (or no ``emit``). A device cannot wait for its reader: when the pty's buffer is full, the
rest of a message waits for the next write and whole messages that find the buffer full are dropped
(``dropped``).

Motions (functions of device time [s] to an ``ImuSample``): ``constant(sample)``, and
``constant_rate(omega)``: the sensor turning in place at the body rate ``omega`` from ``initial``, so
q_ENU,S(t) = initial (x) exp(omega t), rate of turn ``omega`` and specific force C_ENU,S^T (0, 0, g).
"""

from __future__ import annotations

import os
import pty
import threading
import tty
from collections.abc import Callable, Sequence
from time import monotonic, sleep

import numpy as np
from kinodyn.spatial import quat_multiply, quat_to_matrix, rotvec_to_quat

from kinodyn_control.hardware.serial_imu_protocol import (
    MID_MTDATA2,
    ImuSample,
    encode_message,
    encode_mtdata2,
)

GRAVITY = 9.81
Motion = Callable[[float], ImuSample]


def constant(sample: ImuSample) -> Motion:
    """The same state at every time."""
    return lambda t: sample


def level() -> ImuSample:
    """At rest, level, x East: identity orientation, no rotation, +g along z."""
    return ImuSample((0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (0.0, 0.0, GRAVITY))


def constant_rate(omega: Sequence[float], initial: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
                  gravity: float = GRAVITY) -> Motion:
    """Turning in place at body rate ``omega`` [rad/s] from orientation ``initial`` (x, y, z, w)."""
    rate = np.asarray(omega, dtype=float)
    start = np.asarray(initial, dtype=float)

    def motion(t: float) -> ImuSample:
        q = quat_multiply(start, rotvec_to_quat(rate * t))
        force = quat_to_matrix(q).T @ np.array([0.0, 0.0, gravity])
        return ImuSample(tuple(q.tolist()), tuple(rate.tolist()), tuple(force.tolist()))

    return motion


class XsensImuEmulator:
    def __init__(self, motion: Motion | None = None, rate: float = 400.0, coordinates: str = "ENU",
                 precision: str = "float32") -> None:
        self.motion = motion or constant(level())
        self.rate, self.coordinates, self.precision = rate, coordinates, precision
        self._master, self._slave = pty.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.port = os.ttyname(self._slave)
        self.counter = 0  # messages generated
        self.dropped = 0
        self._pending = b""
        self._corrupt = 0
        self._truncate = 0
        self._garbage = b""
        self._replay = 0
        self._misreport: ImuSample | None = None
        self._misreported = 0
        self._last = b""
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._running = threading.Event()

    # --- messages -------------------------------------------------------------------------------------------
    def sample(self, counter: int) -> ImuSample:
        """What message ``counter`` carries."""
        state = self.motion(counter / self.rate)
        return ImuSample(state.orientation, state.angular_velocity, state.linear_acceleration,
                         counter & 0xFFFF)

    def message(self, counter: int, sample: ImuSample | None = None) -> bytes:
        """The whole Xbus message number ``counter`` (carrying ``sample`` if given), without faults."""
        data = encode_mtdata2(sample or self.sample(counter), self.coordinates, self.precision)
        return encode_message(MID_MTDATA2, data)

    def emit(self, n: int = 1) -> None:
        """Write the next ``n`` messages (with any fault injected) now; a replayed one is not a new one."""
        with self._lock:
            for _ in range(n):
                if self._replay and self._last:
                    self._replay -= 1
                    self._write(self._faulty(self._last))
                    continue
                self._last = self.message(self.counter, self._misreported_sample(self.counter))
                self._write(self._faulty(self._last))
                self.counter += 1

    def _misreported_sample(self, counter: int) -> ImuSample | None:
        if not self._misreported or self._misreport is None:
            return None
        self._misreported -= 1
        real, wrong = self.sample(counter), self._misreport
        return ImuSample(wrong.orientation or real.orientation,
                         wrong.angular_velocity or real.angular_velocity,
                         wrong.linear_acceleration or real.linear_acceleration, real.packet_counter)

    def _faulty(self, message: bytes) -> bytes:
        if self._corrupt:
            self._corrupt -= 1
            message = message[:-1] + bytes((message[-1] ^ 0xFF,))
        if self._truncate:
            self._truncate -= 1
            message = message[: len(message) // 2]
        garbage, self._garbage = self._garbage, b""
        return garbage + message

    def _write(self, data: bytes) -> None:
        if self._pending:
            data = self._pending + data
        try:
            written = os.write(self._master, data)
        except BlockingIOError:  # nothing written: keep the earlier message's rest, drop this one
            self.dropped += 1
            written, data = 0, self._pending
        self._pending = data[written:]

    # --- faults ---------------------------------------------------------------------------------------------
    def corrupt(self, n: int = 1) -> None:
        """The next ``n`` messages go out with a wrong checksum."""
        with self._lock:
            self._corrupt += n

    def truncate(self, n: int = 1) -> None:
        """The next ``n`` messages go out cut in half (the rest is never sent)."""
        with self._lock:
            self._truncate += n

    def garbage(self, data: bytes) -> None:
        """``data`` is written just before the next message."""
        with self._lock:
            self._garbage += data

    def replay(self, n: int = 1) -> None:
        """The next ``n`` messages are the last one again, byte for byte (its PacketCounter not advanced)."""
        with self._lock:
            self._replay += n

    def misreport(self, sample: ImuSample, n: int = 1) -> None:
        """The next ``n`` new messages carry the quantities ``sample`` gives (not None), not the motion's."""
        with self._lock:
            self._misreport, self._misreported = sample, n

    # --- streaming ------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Stream at ``rate`` on a thread (messages due while the thread was late go out at once)."""
        if self._thread is not None:
            return
        self.message(self.counter)  # a motion's first call may load compiled code: not while streaming
        self._running.set()
        self._thread = threading.Thread(target=self._stream, name="xsens-emulator", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """The stream stops (the device goes silent)."""
        self._running.clear()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _stream(self) -> None:
        start, first = monotonic(), self.counter
        while self._running.is_set():
            due = first + int((monotonic() - start) * self.rate) + 1
            if due > self.counter:
                self.emit(due - self.counter)
            sleep(max(0.0, start + (self.counter - first) / self.rate - monotonic()))

    def close(self) -> None:
        """Stop and close the pty (a reader sees the device vanish)."""
        self.stop()
        if self._master >= 0:
            os.close(self._master)
            os.close(self._slave)
            self._master = self._slave = -1

    def __enter__(self) -> XsensImuEmulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
