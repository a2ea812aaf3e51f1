"""Speed of the real-device drivers: the read + write cycle of the quadruped switched to
the real plugins (emulators/quadruped.py): 12 MIT-mode CAN motors (``kinodyn_control/CanMotorSystem``)
and an Xsens IMU (``kinodyn_control/SerialImuSensor``), at 500 Hz against their emulators, each in a child
process of its own, as separate devices would be.

The IMU emulator streams MTData2 at ``--imu-rate`` on a pty. The 12 emulated motors are reached through
python-can, by default on ``--bus unixcan``: the project's interface ``kinodyn_unixcan``
(emulators/unix_can.py), SocketCAN's frames over a Unix socket, built and parsed by python-can's SocketCAN
code, so the driver's work per frame is what it is on SocketCAN. ``--bus virtual`` puts them on python-can's
virtual bus served by a thread of this process (the cycle then shares the interpreter lock with the emulator);
``--bus slcan`` behind an slcan serial CAN adapter on a pty (emulators/slcan_pty.py), as a USB-CAN adapter.

The cycle timed is the drivers' (``ResourceManager.read`` then ``write``, every motor given an effort command
each cycle) or, with ``--controllers``, the controller manager's whole ``cycle`` (read, then the joint state
and IMU broadcasters and a JointPDController holding the standing pose, then write). The loop sleeps until
each period starts. Printed: median, p99 and maximum of the cycle against the period, overruns, the CPU time
of the loop's thread (the drivers' own work, without the waits for replies), and the load average at the
start and the end (1 min): the figures hold for the machine state they ran in. ``--realtime P`` runs the loop
and the emulators' processes under ``SCHED_FIFO`` priority P (needs CAP_SYS_NICE; ros2_control runs its loop
so on a robot, and real devices answer from their own hardware), so the wall-clock figures show the cycle
rather than how long other processes on a loaded machine keep it from a core.

The figures go to bench/RESULTS.md (bench/results.py), one section per bus, cycle (drivers or controller
manager) and scheduling, named after the options that chose them (``bench_drivers``, ``bench_drivers
--controllers``, ...).

Run: ``source scripts/env.sh && python bench/bench_drivers.py`` (options: ``--seconds 10 --rate 500
--bus unixcan|virtual|slcan --controllers --realtime 50 --reply-timeout 0.05 --imu-rate 400 --no-record``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
import uuid
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

import can
import numpy as np
from kinodyn_control.hardware.emulators.mit_motor import BusServer, MitMotorBank
from kinodyn_control.hardware.emulators.quadruped import quadruped_motors, real_drivers_urdf
from kinodyn_control.hardware.emulators.serial_imu import XsensImuEmulator, constant_rate
from kinodyn_control.hardware.emulators.slcan_pty import SlcanPtyDevice
from kinodyn_control.hardware.emulators.unix_can import INTERFACE, UnixCanHub
from kinodyn_control.hardware.types import LifecycleState
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, Harness, pd_command
from results import add_record_flag, record

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from multiprocessing.synchronize import Event

FORK = multiprocessing.get_context("fork")  # the children inherit the emulators' ptys and sockets
READY_TIMEOUT = 30.0  # s: an emulator's child process streaming


def schedule(priority: int) -> None:
    """The calling thread under SCHED_FIFO ``priority`` (0: the default time-sharing policy)."""
    policy = os.SCHED_FIFO if priority else os.SCHED_OTHER
    os.sched_setscheduler(0, policy, os.sched_param(priority))


@contextmanager
def child(serve: Callable[[Event, Event], None], priority: int = 0) -> Iterator[None]:
    """``serve(stop, ready)`` in a child process (SCHED_FIFO ``priority`` if not 0) until the block ends; the
    block starts once the child has set ``ready`` (its device streaming: a driver configured before that
    times out waiting for its first message)."""

    def run(stop: Event, ready: Event) -> None:
        if priority:
            schedule(priority)
        serve(stop, ready)

    stop, ready = FORK.Event(), FORK.Event()
    process = FORK.Process(target=run, args=(stop, ready), daemon=True)
    process.start()
    try:
        if not ready.wait(READY_TIMEOUT):
            raise RuntimeError(f"an emulator's child process did not start within {READY_TIMEOUT} s")
        yield
    finally:
        stop.set()
        process.join(5.0)
        if process.is_alive():
            process.terminate()


def _stream(imu: XsensImuEmulator, stop: Event, ready: Event) -> None:
    imu.start()
    ready.set()
    stop.wait()
    imu.stop()


def _adapter(adapter: SlcanPtyDevice, stop: Event, ready: Event) -> None:
    adapter.start()
    ready.set()
    stop.wait()
    adapter.stop()


def _hub(hub: UnixCanHub, stop: Event, ready: Event) -> None:
    ready.set()  # (its socket is bound before the fork: a client's frames wait in it)
    hub.serve(stop.is_set)


def motors(bus: str, stack: ExitStack, priority: int) -> dict[str, object]:
    """Start the 12 emulated motors (standing pose) on ``bus``; the CanMotorSystem params reaching them."""
    stance = dict(zip(QUADRUPED_JOINTS, QUADRUPED_STANCE, strict=True))
    bank = MitMotorBank(list(quadruped_motors(stance).values()))
    if bus == "unixcan":
        hub = UnixCanHub(bank.handle)
        stack.callback(hub.close)
        stack.enter_context(child(lambda stop, ready: _hub(hub, stop, ready), priority))
        return {"interface": INTERFACE, "channel": hub.channel}
    if bus == "slcan":
        adapter = SlcanPtyDevice(bank.handle)
        stack.enter_context(child(lambda stop, ready: _adapter(adapter, stop, ready), priority))
        return {"interface": "slcan", "channel": adapter.port}
    channel = f"bench-{uuid.uuid4().hex[:8]}"
    server = BusServer(bank, can.Bus(interface="virtual", channel=channel)).start()
    stack.callback(server.stop)
    return {"interface": "virtual", "channel": channel}


def start_controllers(h: Harness) -> None:
    """The broadcasters and a JointPDController holding the standing pose (kp 20, kd 1.2)."""
    h.start("joint_state_broadcaster", "kinodyn_control/JointStateBroadcaster")
    h.start("imu_sensor_broadcaster", "kinodyn_control/ImuSensorBroadcaster", {"sensor_name": "imu_sensor"})
    h.start("leg_pd_controller", "kinodyn_control/JointPDController",
            {"joints": QUADRUPED_JOINTS, "watchdog_timeout": 1e6})
    n = len(QUADRUPED_JOINTS)
    h.contexts["leg_pd_controller"].subscriptions["/leg_pd_controller/commands"](
        pd_command(QUADRUPED_JOINTS, QUADRUPED_STANCE, [0.0] * n, [0.0] * n, [20.0] * n, [1.2] * n))


def run(seconds: float, rate: float, imu_rate: float, imu_timeout: float, bus: str, reply_timeout: float,
        controllers: bool, priority: int) -> str:
    """The figures of one timed run (module doc)."""
    period = 1.0 / rate
    load = os.getloadavg()[0]
    with ExitStack() as stack:
        imu = stack.enter_context(XsensImuEmulator(constant_rate((0.2, -0.1, 0.3)), rate=imu_rate))
        # (the children fork before any thread starts here)
        stack.enter_context(child(lambda stop, ready: _stream(imu, stop, ready), priority))
        params = motors(bus, stack, priority)
        h = Harness(real_drivers_urdf({**params, "reply_timeout": reply_timeout},
                                      {"port": imu.port, "baudrate": 921600, "timeout": imu_timeout}))
        stack.callback(h.manager.shutdown)
        h.activate_hardware()
        resources = h.resources
        if controllers:
            start_controllers(h)
        else:  # zero torque: the emulated joints stay at the stance (a constant torque drives them past
            # their limits within seconds, which the motors' plausibility check refuses)
            for name in resources.commands.names:
                h.set_command(name, 0.0)

        def cycle(t: float) -> bool:
            if controllers:
                h.manager.cycle(t, period)
                return not h.messages("error")
            return not (resources.read(t, period) + resources.write(t, period))

        if priority:
            schedule(priority)
            stack.callback(schedule, 0)
        durations = np.empty(int(seconds * rate))
        cpu = np.empty_like(durations)
        start = time.perf_counter()
        for k in range(len(durations)):
            next_start = start + k * period
            while (now := time.perf_counter()) < next_start:
                time.sleep(max(0.0, next_start - now - 2e-4))
            t0, c0 = time.perf_counter(), time.thread_time()
            ok = cycle(k * period)
            durations[k], cpu[k] = time.perf_counter() - t0, time.thread_time() - c0
            if not ok:
                raise RuntimeError("; ".join(resources.errors.values()) or "; ".join(h.messages("error")))
        assert all(c.lifecycle_state is LifecycleState.ACTIVE for c in resources.components.values())
    where = {"unixcan": "kinodyn_unixcan, emulator in a child process", "slcan": "slcan adapter on a pty, "
             "emulator in a child process", "virtual": "python-can virtual bus, emulator on a thread"}[bus]
    what = "controller manager cycle (read, 3 controllers, write)" if controllers else "read + write cycle"
    if priority:
        what += f", SCHED_FIFO {priority}"
    return _report(durations, cpu, period, f"{what}, 12 CAN motors ({where}) + IMU", load)


def _report(durations: np.ndarray, cpu: np.ndarray, period: float, what: str, load: float) -> str:
    ms, period_ms = durations * 1e3, period * 1e3
    return "\n".join([
        f"{what}: {len(ms)} cycles at {1 / period:.0f} Hz (period {period_ms:.2f} ms).", "",
        f"- cycle: median {np.median(ms):.3f} ms ({np.median(ms) / period_ms:.1%} of the period), "
        f"p99 {np.percentile(ms, 99):.3f} ms ({np.percentile(ms, 99) / period_ms:.1%}), "
        f"max {ms.max():.3f} ms; overruns (cycle > period): {int((ms > period_ms).sum())}",
        f"- CPU time of the loop's thread (the drivers' own work, without waiting): median "
        f"{np.median(cpu) * 1e3:.3f} ms, p99 {np.percentile(cpu, 99) * 1e3:.3f} ms",
        f"- load average (1 min) {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on "
        f"{os.cpu_count()} CPUs"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=500.0, help="control loop rate [Hz]")
    parser.add_argument("--imu-rate", type=float, default=400.0, help="MTData2 rate [Hz] (MTi maximum 400)")
    parser.add_argument("--imu-timeout", type=float, default=0.1,
                        help="SerialImuSensor timeout [s]: no message for this long is a stopped stream")
    parser.add_argument("--bus", choices=("unixcan", "virtual", "slcan"), default="unixcan",
                        help="how the motors are reached")
    parser.add_argument("--controllers", action="store_true",
                        help="time the controller manager's cycle with broadcasters and a PD controller")
    parser.add_argument("--reply-timeout", type=float, default=0.05, help="CanMotorSystem reply_timeout [s]")
    parser.add_argument("--realtime", type=int, default=0, metavar="PRIORITY",
                        help="SCHED_FIFO priority (1-99) of the loop and the emulators; 0: time-sharing")
    add_record_flag(parser)
    args = parser.parse_args()
    body = run(args.seconds, args.rate, args.imu_rate, args.imu_timeout, args.bus, args.reply_timeout,
               args.controllers, args.realtime)
    print(body)
    name = " ".join(["bench_drivers", *([f"--bus {args.bus}"] if args.bus != "unixcan" else []),
                     *(["--controllers"] if args.controllers else []),
                     *([f"--realtime {args.realtime}"] if args.realtime else [])])
    record(name, body, no_record=args.no_record)


if __name__ == "__main__":
    main()
