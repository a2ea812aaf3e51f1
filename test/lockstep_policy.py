"""The external process of the lockstep system test (test_sim_system.py): a closed-loop policy over DDS.

Answers every /joint_states message with a JointPDCommand stamped with that message's stamp (the lockstep
protocol, docs/simulator.md): desired position ``q + clip(stance - q, ±0.05)``, computed from the received
state, with kp 800 and kd 10. Before answering it sleeps a random time in [0, max_delay] s (seeded), so two
runs differ in their timing. It records the first ``steps`` joint states (one per stamp: a state re-published
while the manager waits must be identical to the first copy) and the /clock values, then writes them to an
.npz file and exits.

Usage: python test/lockstep_policy.py OUT.npz STEPS MAX_DELAY SEED
"""

from __future__ import annotations

import random
import sys
import time

import numpy as np
import rclpy
from kinodyn_control.testing import QUADRUPED_JOINTS, QUADRUPED_STANCE, pd_command
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from kinodyn_interfaces.msg import JointPDCommand

KP, KD, STEP = 800.0, 10.0, 0.05


def main(out: str, steps: int, max_delay: float, seed: int) -> int:
    rclpy.init()
    node = Node("lockstep_policy")
    rng = random.Random(seed)
    states: dict[int, np.ndarray] = {}
    clock: set[int] = set()
    slept = 0.0
    duplicates_differ = 0
    stance = np.array(QUADRUPED_STANCE)
    pub = node.create_publisher(JointPDCommand, "/leg_pd_controller/commands", QoSProfile(depth=10))

    def on_state(msg: JointState) -> None:
        nonlocal slept, duplicates_differ
        assert list(msg.name) == QUADRUPED_JOINTS
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        row = np.array([msg.position, msg.velocity, msg.effort])
        if stamp_ns in states:
            duplicates_differ += not np.array_equal(states[stamp_ns], row)
        else:
            states[stamp_ns] = row
        delay = rng.uniform(0.0, max_delay)
        time.sleep(delay)
        slept += delay
        q = row[0]
        desired = q + np.clip(stance - q, -STEP, STEP)
        zeros = np.zeros(12)
        pub.publish(pd_command(QUADRUPED_JOINTS, desired, zeros, zeros, np.full(12, KP), np.full(12, KD),
                               stamp_ns))

    def on_clock(msg: Clock) -> None:
        clock.add(msg.clock.sec * 1_000_000_000 + msg.clock.nanosec)

    node.create_subscription(JointState, "/joint_states", on_state, QoSProfile(depth=50))
    node.create_subscription(Clock, "/clock", on_clock, QoSProfile(depth=50))
    while rclpy.ok() and (len(states) < steps or len(clock) < steps):
        rclpy.spin_once(node, timeout_sec=0.1)
    stamps = sorted(states)[:steps]
    np.savez(out, stamps=np.array(stamps), states=np.array([states[s] for s in stamps]),
             clock=np.array(sorted(clock)[:steps]), slept=slept, duplicates_differ=duplicates_differ)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])))
