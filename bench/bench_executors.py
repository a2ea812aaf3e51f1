"""CPU per received message of rclpy's executors: a 12-joint sensor_msgs/JointState at 500 Hz.

A publisher process sends the message at ``--rate``; a subscriber process per executor (rclpy's
``SingleThreadedExecutor``, and its ``EventsExecutor`` that kinodyn_common.node_runner uses) takes
``--messages``
of them with ``spin_once`` in a loop, as run_node does, and measures its own CPU (all its threads, the
middleware's included: ``time.process_time``) per message. Each subscriber runs twice: a bare node (one
subscription), and a node with the entities of the wbc node (five subscriptions, five publishers, a 200 Hz
steady timer, and the parameter services every node has). The ratio is against the SingleThreadedExecutor of
the same node in this run. Figures go to bench/RESULTS.md (bench/results.py).
Run: `source scripts/env.sh && python bench/bench_executors.py [--messages 3000]`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.experimental import EventsExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import add_record_flag, record

EXECUTORS = {"SingleThreadedExecutor": SingleThreadedExecutor, "EventsExecutor": EventsExecutor}
JOINTS = [f"joint_{i}" for i in range(12)]
TOPIC = "bench_joint_states"
WARMUP = 200  # messages taken before the CPU is measured (discovery, first-call costs)


def publish(rate: float) -> None:
    """The publisher process: JointState at ``rate`` until SIGTERM (its default action: no handler)."""
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = Node("bench_executors_publisher")
    publisher = node.create_publisher(JointState, TOPIC, QoSProfile(depth=10))
    msg = JointState(name=JOINTS)
    start, k = time.monotonic(), 0
    while True:
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(k * 2_000_000, 1_000_000_000)
        msg.position = [0.01 * k + i for i in range(12)]
        msg.velocity = [0.0] * 12
        msg.effort = [0.0] * 12
        publisher.publish(msg)
        k += 1
        delay = start + k / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def wbc_like(node: Node) -> None:
    """The entities of the wbc node besides its joint-state subscription."""
    for topic in ("base_state", "cmd_vel", "base_pose", "clock_like"):
        node.create_subscription(JointState, f"bench_idle_{topic}", lambda msg: None, QoSProfile(depth=10))
    for topic in ("command", "contacts", "footholds", "diagnostics", "other"):
        node.create_publisher(JointState, f"bench_idle_out_{topic}", QoSProfile(depth=10))
    node.create_timer(0.005, lambda: None, clock=Clock(clock_type=ClockType.STEADY_TIME))


def subscribe(executor_name: str, entities: str, messages: int) -> None:
    """The subscriber process: prints ``<ms CPU per message> <messages per second>``."""
    rclpy.init()
    node = Node("bench_executors_subscriber")
    count = [0]

    def take(msg: JointState) -> None:
        count[0] += 1

    node.create_subscription(JointState, TOPIC, take, QoSProfile(depth=10))
    if entities == "wbc":
        wbc_like(node)
    executor: Executor = EXECUTORS[executor_name]()
    executor.add_node(node)
    while count[0] < WARMUP:
        executor.spin_once(timeout_sec=0.1)
    cpu, wall, first = time.process_time(), time.monotonic(), count[0]
    while count[0] < first + messages:
        executor.spin_once(timeout_sec=0.1)
    taken = count[0] - first
    ms, rate = 1e3 * (time.process_time() - cpu) / taken, taken / (time.monotonic() - wall)
    print(f"{ms:.4f} {rate:.1f}", flush=True)
    os._exit(0)  # the measurement is printed; no teardown to wait for


def measure(executor_name: str, entities: str, messages: int) -> tuple[float, float]:
    out = subprocess.run([sys.executable, __file__, "--subscriber", executor_name, entities,
                          "--messages", str(messages)], capture_output=True, text=True, timeout=600,
                         check=True)
    ms, rate = out.stdout.split()
    return float(ms), float(rate)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3000, help="messages measured per executor")
    parser.add_argument("--rate", type=float, default=500.0, help="Hz of the publisher")
    parser.add_argument("--subscriber", nargs=2, metavar=("EXECUTOR", "ENTITIES"), help=argparse.SUPPRESS)
    parser.add_argument("--publisher", action="store_true", help=argparse.SUPPRESS)
    add_record_flag(parser)
    args = parser.parse_args()
    if args.publisher:
        publish(args.rate)
        return 0
    if args.subscriber:
        subscribe(*args.subscriber, args.messages)
        return 0
    os.environ.setdefault("ROS_DOMAIN_ID", str(101 + os.getpid() % 100))  # apart from the tests' 1..100
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    publisher = subprocess.Popen([sys.executable, __file__, "--publisher", "--rate", str(args.rate)],
                                 start_new_session=True)
    lines = [f"12-joint JointState at {args.rate:g} Hz, {args.messages} messages per executor, CPU of the "
             "subscriber process (all threads) per message", "",
             "| node | executor | CPU ms per message | ratio | messages/s taken |", "|---|---|---|---|---|"]
    try:
        for entities, label in (("bare", "one subscription"), ("wbc", "the wbc node's entities")):
            reference = None
            for name in EXECUTORS:
                ms, rate = measure(name, entities, args.messages)
                reference = reference or ms
                lines.append(f"| {label} | {name} | {ms:.3f} | {ms / reference:.2f} | {rate:.0f} |")
                print(lines[-1], flush=True)
    finally:
        os.killpg(publisher.pid, signal.SIGTERM)
        publisher.wait(timeout=30)
    record("rclpy executors: CPU per message (bench_executors.py)", "\n".join(lines),
           no_record=args.no_record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
