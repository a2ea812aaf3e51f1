"""Control-loop period jitter of control_node on mock hardware, with PD commands flowing at the loop rate.

Runs the quadruped (urdf/quadruped.urdf, GenericSystem) in-process with the joint state broadcaster, the IMU
broadcaster and the joint PD controller (publishing /joint_states and the IMU every cycle over DDS). A policy
in a separate process (this file with ``--policy``) answers every /joint_states message with a JointPDCommand
for the standing pose, stamped with the stamp of the joint states it answers (as wbc_node and the lockstep
protocol do, docs/nodes/control_node.md), so the PD law runs on a fresh command every cycle rather than
returning early for want of one. Once commands flow, the loop is timed for ``--seconds`` at each rate.
Printed: median, 99th percentile and maximum of the period error |measured - nominal|, overruns, commands
accepted per cycle, and the round trip from a joint-state stamp to the acceptance of the command answering it;
the table goes to the ``bench_control_loop`` section of bench/RESULTS.md (bench/results.py).
Run: `source scripts/env.sh && python bench/bench_control_loop.py [--seconds 5] [--no-record]`.
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING
from unittest.mock import patch

import numpy as np
import rclpy
from kinodyn_control.loop import ControlLoop
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, pd_command
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile
from results import add_record_flag, markdown_header, markdown_row, record, shown
from sensor_msgs.msg import JointState

from kinodyn_control import control_node
from kinodyn_interfaces.msg import JointPDCommand

if TYPE_CHECKING:
    from collections.abc import Callable

URDF = Path(__file__).resolve().parents[1] / "urdf" / "quadruped.urdf"
CONTROLLER = "pd"
KP, KD = 800.0, 10.0  # as the lockstep policy of test/lockstep_policy.py
FLOW_TIMEOUT = 60.0  # wall seconds to wait for the first command (policy start-up and DDS discovery)
RECORD_MARGIN = 90.0  # seconds of cycles recorded beyond --seconds: start-up until commands flow


def _set_at_end_of_input(event: threading.Event) -> None:
    """Set ``event`` once stdin closes: the bench closes the policy's stdin when its run is over."""
    sys.stdin.read()
    event.set()


def policy() -> int:
    """The external process: answer each /joint_states with a stamped stance command until stdin closes."""
    rclpy.init()
    node = Node("bench_policy")
    publisher = node.create_publisher(JointPDCommand, f"/{CONTROLLER}/commands", QoSProfile(depth=10))
    zeros, n = [0.0] * len(QUADRUPED_JOINTS), len(QUADRUPED_JOINTS)

    def answer(msg: JointState) -> None:
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        publisher.publish(pd_command(QUADRUPED_JOINTS, QUADRUPED_STANCE, zeros, zeros, [KP] * n, [KD] * n,
                                     stamp_ns))

    node.create_subscription(JointState, "/joint_states", answer, QoSProfile(depth=10))
    finished = threading.Event()
    threading.Thread(target=_set_at_end_of_input, args=(finished,), daemon=True).start()
    while not finished.is_set():
        rclpy.spin_once(node, timeout_sec=0.1)
    node.destroy_node()
    rclpy.shutdown()
    return 0


class CommandLog:
    """Accepted commands of the PD controller with their round trip (acceptance time - answered stamp)."""

    def __init__(self, node: control_node.ControlNode) -> None:
        assert node.manager is not None
        self._node = node
        self._controller = node.manager.controllers[CONTROLLER].controller
        self._forward = self._controller.command_arrived
        self._controller.command_arrived = self._arrived
        self.round_trips: list[float] = []

    def _arrived(self) -> None:
        stamp_ns = self._controller.command_stamp()
        assert stamp_ns is not None
        self.round_trips.append((self._node.get_clock().now().nanoseconds - stamp_ns) * 1e-9)
        self._forward()


def _wait(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def run(rate: int, seconds: float) -> tuple[np.ndarray, int, np.ndarray]:
    """Measured periods [s], overrun count and command round trips [s] while commands flow at ``rate``."""
    params = {
        "update_rate": rate,
        "robot_description_file": URDF,
        "jsb.type": "kinodyn_control/JointStateBroadcaster",
        "imu.type": "kinodyn_control/ImuSensorBroadcaster",
        "imu.sensor_name": "imu_sensor",
        f"{CONTROLLER}.type": "kinodyn_control/JointPDController",
        f"{CONTROLLER}.joints": "[" + ",".join(QUADRUPED_JOINTS) + "]",
    }
    args = ["bench", "--ros-args", *(x for k, v in params.items() for x in ("-p", f"{k}:={v}"))]
    answering = subprocess.Popen(
        [sys.executable, __file__, "--policy"], stdin=subprocess.PIPE, start_new_session=True
    )
    rclpy.init(args=args)
    recording = functools.partial(ControlLoop, record=int(rate * (seconds + RECORD_MARGIN)))
    try:
        with patch.object(control_node, "ControlLoop", recording):
            node = control_node.ControlNode()  # starts its loop
        commands = CommandLog(node)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        spinner = threading.Thread(target=executor.spin, daemon=True)
        spinner.start()
        loop = node.loop
        assert isinstance(loop, ControlLoop)
        if not _wait(lambda: len(commands.round_trips) > 0, FLOW_TIMEOUT):
            raise SystemExit(f"no command from the policy process within {FLOW_TIMEOUT:g} s")
        first_cycle, first_command = loop.cycles, len(commands.round_trips)
        overruns_before = loop.overruns
        time.sleep(seconds)
        last_cycle, last_command, overruns = loop.cycles, len(commands.round_trips), loop.overruns
        loop.stop()
        if last_cycle - 1 > loop.periods.size:
            raise SystemExit(f"only {loop.periods.size} periods recorded; raise RECORD_MARGIN")
        periods = loop.periods[first_cycle - 1 : last_cycle - 1].copy()  # [k]: from cycle k to k + 1
        round_trips = np.array(commands.round_trips[first_command:last_command])
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.try_shutdown()
        answering.communicate(timeout=30)  # closes its stdin: it stops
    return periods, overruns - overruns_before, round_trips


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--policy", action="store_true", help="run as the policy process (used by the bench)")
    add_record_flag(parser)
    args = parser.parse_args()
    if args.policy:
        sys.exit(policy())
    os.environ.setdefault("ROS_DOMAIN_ID", str(101 + os.getpid() % 100))  # apart from the tests' 1..100
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    lines = [f"control_node, quadruped on GenericSystem, JSB + IMU + joint PD with a stamped command "
             f"answering every joint state from a separate process, {args.seconds:g} s per rate once "
             "commands flow.", "",
             markdown_header("rate [Hz]", "cycles", "median period error [us]", "p99 [us]", "max [us]",
                             "overruns", "commands per cycle", "round trip median / p99 [ms]")]
    print("\n".join(lines), flush=True)
    for rate in (500, 1000):
        periods, overruns, round_trips = run(rate, args.seconds)
        error = np.abs(periods - 1.0 / rate) * 1e6
        trip = f"{np.median(round_trips) * 1e3:.2f} / {np.percentile(round_trips, 99) * 1e3:.2f}"
        per_cycle = round_trips.size / max(periods.size, 1)
        shown(lines, markdown_row(rate, periods.size, f"{np.median(error):.1f}",
                                  f"{np.percentile(error, 99):.1f}", f"{error.max():.1f}", overruns,
                                  f"{per_cycle:.3f}", trip))
    record("bench_control_loop", "\n".join(lines), no_record=args.no_record)


if __name__ == "__main__":
    main()
