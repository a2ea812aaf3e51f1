"""The wbc node's tick at 500 Hz: from the joint states in to the command out.

The node runs as its own process (legged mode, urdf/quadruped_sim.urdf, base state on a topic of this bench).
This process closes the loop in real time: every 2 ms of the wall clock it publishes the base odometry and the
joint states of a quadruped simulated here (kinodyn.sim, RK4, soft contact, one 2 ms step per tick), both
stamped with the present ROS time, waits for the command answering that stamp, applies it (JointPDController's
law) and steps the simulation. After ``--warmup`` seconds (compilation, handover, stand-up) it records:

- round trip: the command's arrival here minus its stamp (DDS both ways included);
- the node's own tick, from the joint state's arrival to the command's publication (its diagnostics'
  ``tick_latencies_us``), and its QP solve times (``solve_times_us``).

Printed: median, p99 and max of each, the tick rate reached, the load average. The goal: median <= 1 ms,
p99 <= 2 ms at 500 Hz. The figures go to bench/RESULTS.md (bench/results.py), one section per mode and
scheduling (``bench_wbc_node --mode stand``, ...). Run: `source scripts/env.sh && python
bench/bench_wbc_node.py [--mode stand|trot] [--seconds 10] [--realtime P] [--no-record]`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile
from results import add_record_flag, markdown_header, markdown_row, record
from sensor_msgs.msg import JointState

import kinodyn as kd
from kinodyn import sim
from kinodyn_interfaces.msg import JointPDCommand

if TYPE_CHECKING:
    from builtin_interfaces.msg import Time

REPO = Path(__file__).resolve().parents[1]
URDF = REPO / "urdf" / "quadruped_sim.urdf"
WBC = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros" / "wbc"
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]
POSTURE = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]
STANDING_HEIGHT = 0.5252
PERIOD = 0.002
NS = 1_000_000_000


def start_node(mode: str, priority: int) -> subprocess.Popen:
    args = [str(WBC), "--ros-args", "-r", "__node:=wbc_bench", "-p", f"robot_description_file:={URDF}",
            "-p", "mode:=legged", "-p", f"feet:={FEET}", "-p", f"posture:={POSTURE}",
            "-p", f"locomotion_mode:={mode}", "-p", "base_state_topic:=/bench/odometry",
            "-p", f"realtime_priority:={priority}",
            "-r", "joint_states:=/bench/joint_states", "-r", "joint_pd_command:=/bench/commands",
            "-r", "contact_schedule:=/bench/contact_schedule"]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True)


def stats(label: str, values_ms: np.ndarray) -> str:
    """A table row: median, p99 and max of ``values_ms``, and how many there are."""
    if not len(values_ms):
        return markdown_row(label, "-", "-", "-", 0)
    median, p99, peak = np.percentile(values_ms, [50, 99, 100])
    return markdown_row(label, f"{median:.3f}", f"{p99:.3f}", f"{peak:.3f}", len(values_ms))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("stand", "trot"), default="stand")
    parser.add_argument("--seconds", type=float, default=10.0, help="wall seconds measured")
    parser.add_argument("--warmup", type=float, default=3.0, help="simulated seconds before measuring")
    parser.add_argument("--realtime", type=int, default=0, metavar="P",
                        help="the node's realtime_priority (SCHED_FIFO 1-99; 0: time-shared)")
    add_record_flag(parser)
    args = parser.parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(101 + os.getpid() % 100))  # apart from the tests' 1..100
    node_process = start_node(args.mode, args.realtime)
    rclpy.init()
    node = Node("wbc_bench_driver")
    try:
        return run(node, args)
    finally:
        node.destroy_node()
        rclpy.shutdown()
        node_process.terminate()
        node_process.wait(10)


def _odometry(simulator: sim.Simulator, stamp: Time) -> Odometry:
    """The simulator's base pose and twist as the wbc node's odometry input."""
    odom = Odometry()
    odom.header.stamp = stamp
    odom.header.frame_id, odom.child_frame_id = "odom", "base_link"
    p, o, t = odom.pose.pose.position, odom.pose.pose.orientation, odom.twist.twist
    p.x, p.y, p.z = (float(x) for x in simulator.q[:3])
    o.x, o.y, o.z, o.w = (float(x) for x in simulator.q[3:7])
    t.linear.x, t.linear.y, t.linear.z = (float(x) for x in simulator.v[:3])
    t.angular.x, t.angular.y, t.angular.z = (float(x) for x in simulator.v[3:6])
    return odom


def _report(args: argparse.Namespace, window: list[dict[str, str]], round_trips: list[float], elapsed: float,
            lost: int, base_height: float) -> str:
    """The section: the node's tick and solve times from its diagnostics ``window``, the round trips."""
    ticks = np.array([float(x) / 1e3 for v in window for x in v.get("tick_latencies_us", "").split()])
    solves = np.array([float(x) / 1e3 for v in window for x in v.get("solve_times_us", "").split()])
    policy = f"SCHED_FIFO {args.realtime}" if args.realtime else "time-shared"
    return "\n".join([
        f"wbc node ({policy}), legged {args.mode}, quadruped, 500 Hz of the wall clock, {args.seconds:g} s "
        f"measured after {args.warmup:g} s of warm-up; goal: node tick median <= 1 ms, p99 <= 2 ms.", "",
        f"Ticks answered: {len(round_trips)} in {elapsed:.1f} s ({len(round_trips) / elapsed:.0f} Hz), "
        f"unanswered within 0.5 s: {lost}; base height at the end {base_height:.4f} m.", "",
        markdown_header("per tick", "median [ms]", "p99 [ms]", "max [ms]", "ticks"),
        stats("node tick (joint state in -> command out, its monotonic clock)", ticks),
        stats("of which QP solve", solves),
        stats("round trip seen by the bench (publish -> command received, DDS both ways)",
              np.array(round_trips))])


def run(node: Node, args: argparse.Namespace) -> int:
    model = kd.Model.from_urdf(URDF, floating_base=True)
    contact = sim.ContactModel(sim.collision_spheres(URDF))
    simulator = sim.Simulator(model, dt=PERIOD, integrator="rk4", contact=contact)
    q0 = model.neutral()
    q0[7:], q0[2] = POSTURE, STANDING_HEIGHT
    simulator.reset(q0)
    limit = model.effort_limit[6:]
    qos = QoSProfile(depth=100)
    odometry_pub = node.create_publisher(Odometry, "/bench/odometry", qos)
    joints_pub = node.create_publisher(JointState, "/bench/joint_states", qos)
    commands: dict[int, tuple[JointPDCommand, int]] = {}
    node.create_subscription(JointPDCommand, "/bench/commands",
                             lambda m: commands.setdefault(m.header.stamp.sec * NS + m.header.stamp.nanosec,
                                                           (m, time.monotonic_ns())), qos)
    diagnostics: list[tuple[int, dict[str, str]]] = []
    node.create_subscription(DiagnosticArray, "/diagnostics", lambda m: diagnostics.append(
        (m.header.stamp.sec * NS + m.header.stamp.nanosec, {kv.key: kv.value for kv in m.status[0].values}))
        if m.status and m.status[0].name.partition(":")[0] == "wbc" else None, qos)  # "<node>: <task>"
    names = list(model.joint_names)
    while node.count_subscribers("/bench/joint_states") == 0:
        rclpy.spin_once(node, timeout_sec=0.1)
    round_trips: list[float] = []
    lost = 0
    measure_from: int | None = None
    start = time.monotonic()
    k = 0
    while True:
        now = node.get_clock().now()
        stamp = now.nanoseconds
        sent = time.monotonic_ns()
        odometry_pub.publish(_odometry(simulator, now.to_msg()))
        js = JointState(name=names, position=simulator.q[7:].tolist(), velocity=simulator.v[6:].tolist())
        js.header.stamp = now.to_msg()
        joints_pub.publish(js)
        deadline = time.monotonic() + 0.5
        while stamp not in commands and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.0005)
        answer = commands.pop(stamp, None)
        if answer is None:
            lost += 1
            tau = np.zeros(12)
        else:
            c, arrived = answer
            if measure_from is not None:
                round_trips.append((arrived - sent) / 1e6)
            tau = np.array(c.effort) + np.array(c.kp) * (np.array(c.position) - simulator.q[7:]) + \
                np.array(c.kd) * (np.array(c.velocity) - simulator.v[6:])
        simulator.step(np.clip(tau, -limit, limit))
        k += 1
        if measure_from is None and simulator.t >= args.warmup:
            measure_from, measure_start = stamp, time.monotonic()
        if measure_from is not None and time.monotonic() - measure_start >= args.seconds:
            break
        wait = start + k * PERIOD - time.monotonic()  # 500 Hz of the wall clock, no catching up in bursts
        if wait > 0:
            time.sleep(wait)
        elif wait < -0.05:
            start = time.monotonic() - k * PERIOD
    elapsed = time.monotonic() - measure_start
    for _ in range(200):  # the last diagnostics
        rclpy.spin_once(node, timeout_sec=0.01)
    window = [v for s, v in diagnostics if s > measure_from]
    body = _report(args, window, round_trips, elapsed, lost, float(simulator.q[2]))
    print(body)
    name = f"bench_wbc_node --mode {args.mode}" + (f" --realtime {args.realtime}" if args.realtime else "")
    record(name, body, no_record=args.no_record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
