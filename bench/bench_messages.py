"""Per message: what the nodes' streams cost to read and to write, typed (rclpy) against serialized (raw).

For each message the quadruped graph streams at the control rate (a 12-joint sensor_msgs/JointState, an
sensor_msgs/Imu, a 4-foot kinodyn_interfaces/ContactStates, a nav_msgs/Odometry, a 12-joint
kinodyn_interfaces/JointPDCommand), in one process on the same bytes:

- read: rclpy's ``deserialize_message`` (what a typed subscription does before its callback: one Python
  object per field) against ``kinodyn_common.raw_messages`` (what the nodes' ``raw=True`` subscriptions do:
  the numbers as numpy views through the layout of the message before, checked);
- write (the estimator's odometry/filtered): rclpy's conversion and serialization of the Odometry that
  ``estimation.messages.odometry_message`` builds from an estimate row (``serialize_message``, the work of a
  typed ``publish`` before the middleware) against ``bags.cdr.odometry_rows_cdr`` (the bytes the node
  publishes).

Microseconds per message, the best of ``--repeat`` runs of ``--number`` messages (the least disturbed by other
processes on a shared machine), and the ratio raw / typed of the same run. The middleware's own share (taking
a message from DDS, waking the executor) is the same either way: bench_executors.py measures it.
Run: `source scripts/env.sh && python bench/bench_messages.py [--number 2000] [--repeat 7]`.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from kinodyn_common.cdr import odometry_rows_cdr
from kinodyn_common.raw_messages import (
    ContactStatesReader,
    ImuReader,
    JointPDCommandReader,
    JointStateReader,
    OdometryReader,
)
from kinodyn_control.estimation.messages import estimate_fields, odometry_message
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import Imu, JointState

from kinodyn_interfaces.msg import ContactStates, JointPDCommand

sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import add_record_flag, markdown_header, markdown_row, record, shown

Stamped = TypeVar("Stamped", JointState, Imu, ContactStates, JointPDCommand)  # messages with a header

if TYPE_CHECKING:
    from collections.abc import Callable

JOINTS = ["LF_HAA", "LF_HFE", "LF_KFE", "LH_HAA", "LH_HFE", "LH_KFE",
          "RF_HAA", "RF_HFE", "RF_KFE", "RH_HAA", "RH_HFE", "RH_KFE"]
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]
ROW = np.random.default_rng(0).normal(size=85)  # an estimate row (kinodyn.estimation.events.ESTIMATE_SIZE)
ROW[3:7] = [0.0, 0.0, 0.0, 1.0]


def _stamped(msg: Stamped, frame: str = "") -> Stamped:
    msg.header.stamp.sec, msg.header.stamp.nanosec = 12, 346_000_000
    msg.header.frame_id = frame
    return msg


def messages() -> list[tuple[str, Any, Any]]:
    """``(label, message, reader)`` of each stream, filled as the graph fills them."""
    rng = np.random.default_rng(1)
    joints = _stamped(JointState(name=JOINTS))
    joints.position, joints.velocity, joints.effort = (rng.normal(size=12).tolist() for _ in range(3))
    imu = _stamped(Imu(), "imu_link")
    imu.angular_velocity.x, imu.linear_acceleration.z, imu.orientation.w = 0.01, 9.81, 1.0
    contacts = _stamped(ContactStates(names=FEET, in_contact=[True, False, False, True]))
    odometry = odometry_message(estimate_fields(ROW), 12_346_000_000, "odom", "base_link")
    command = _stamped(JointPDCommand(name=JOINTS))
    for field in ("position", "velocity", "effort", "kp", "kd"):
        setattr(command, field, rng.normal(size=12).tolist())
    return [("sensor_msgs/JointState (12 joints)", joints, JointStateReader()),
            ("sensor_msgs/Imu", imu, ImuReader()),
            ("kinodyn_interfaces/ContactStates (4 feet)", contacts, ContactStatesReader()),
            ("nav_msgs/Odometry", odometry, OdometryReader()),
            ("kinodyn_interfaces/JointPDCommand (12 joints)", command, JointPDCommandReader())]


def per_message(call: Callable[[], Any], number: int, repeat: int) -> float:
    """Microseconds per call: the best of ``repeat`` runs of ``number`` calls."""
    call()  # first-call costs (a reader's first layout) out of the measurement
    return 1e6 * min(timeit.repeat(call, number=number, repeat=repeat)) / number


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="messages per timed run")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs; the best counts")
    add_record_flag(parser)
    args = parser.parse_args()
    lines: list[str] = []
    shown(lines, f"Microseconds per message, best of {args.repeat} runs of {args.number}, one process.\n")
    shown(lines, markdown_header("read", "rclpy deserialize_message [us]", "raw_messages reader [us]",
                                 "ratio"))
    for label, msg, reader in messages():
        data = serialize_message(msg)
        msg_type = type(msg)
        typed = per_message(lambda d=data, t=msg_type: deserialize_message(d, t), args.number, args.repeat)
        raw = per_message(lambda d=data, r=reader: r.read(d), args.number, args.repeat)
        shown(lines, markdown_row(label, f"{typed:.2f}", f"{raw:.2f}", f"{raw / typed:.2f}"))
    stamps = np.array([12_346_000_000])
    def typed_odometry() -> bytes:
        return serialize_message(odometry_message(estimate_fields(ROW), int(stamps[0]), "odom", "base_link"))

    typed = per_message(typed_odometry, args.number, args.repeat)
    raw = per_message(lambda: odometry_rows_cdr(stamps, "odom", "base_link", ROW[None]), args.number,
                      args.repeat)
    shown(lines, "\n" + markdown_header("write", "rclpy message + serialize_message [us]",
                                        "bags.cdr.odometry_rows_cdr [us]", "ratio"))
    shown(lines, markdown_row("nav_msgs/Odometry of an estimate row", f"{typed:.2f}", f"{raw:.2f}",
                              f"{raw / typed:.2f}"))
    record("Messages: typed against serialized, per message (bench_messages.py)", "\n".join(lines),
           no_record=args.no_record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
