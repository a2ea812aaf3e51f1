"""Seeded random and adversarial ROS messages and requests for the fuzz system test.

Every field is drawn, with high probability, from values that broke or could break a node: NaN, ±inf, ±1e300,
1.7e308 (whose square overflows), -0.0, subnormals; wrong, empty and huge array lengths; unknown, duplicate
and empty names; zero, non-unit and non-finite quaternions; empty, unknown and very long frame ids; stamps
with negative seconds, the largest seconds and nanoseconds of a second or more. The other draws are valid,
so the same stream also exercises the success path. One ``numpy.random.Generator`` drives everything: a
seed reproduces a run.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, PoseStamped, TransformStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from kinodyn_interfaces.msg import JointPDCommand
from tf2_msgs.msg import TFMessage

T = TypeVar("T")  # an option's type

if TYPE_CHECKING:
    from collections.abc import Sequence

SPECIAL = (math.nan, math.inf, -math.inf, 1e300, -1e300, 1.7e308, -0.0, 0.0, 5e-324, 1e-300, 1e6, -1e9, 3e4)
HUGE_LENGTH = 20_000
BAD_QUATERNIONS = (
    (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 2.0), (math.nan, 0.0, 0.0, 1.0), (1e-300, 0.0, 0.0, 1e-300),
    (0.0, 0.0, 0.0, -1.0), (1e300, 0.0, 0.0, 1.0), (0.5, 0.5, 0.5, 0.5000001), (0.0, 0.0, math.inf, 1.0),
)


class Fuzzer:
    def __init__(self, seed: int, p_bad: float = 0.7) -> None:
        self.rng = np.random.default_rng(seed)
        self.p_bad = p_bad

    def bad(self, p: float | None = None) -> bool:
        return bool(self.rng.random() < (self.p_bad if p is None else p))

    def choice(self, options: Sequence[T]) -> T:
        return options[int(self.rng.integers(len(options)))]

    # --- numbers and arrays -------------------------------------------------------------------------
    def number(self, good: float = 0.0, scale: float = 0.5) -> float:
        """A special value with probability ``p_bad / 3`` per number, else ``good + scale * N(0, 1)``."""
        if self.bad(self.p_bad / 3):
            return float(self.choice(SPECIAL))
        return float(good + scale * self.rng.normal())

    def array(self, n: int, good: Sequence[float] | None = None, scale: float = 0.5) -> list[float]:
        """``n`` numbers (around ``good``), or (a bad draw) a wrong length: empty, off by one, huge."""
        if self.bad(0.25):
            n = int(self.choice([0, max(n - 1, 0), n + 1, 3 * n + 2, HUGE_LENGTH]))
        base = np.zeros(n) if good is None or len(good) != n else np.asarray(good, dtype=float)
        values = base + scale * self.rng.normal(size=n)
        special = self.rng.random(n) < self.p_bad / 3  # as ``number``, drawn for all n at once
        values[special] = self.rng.choice(SPECIAL, size=int(special.sum()))
        return values.tolist()

    def stamp(self) -> Time:
        if self.bad(0.3):
            sec, nanosec = self.choice([(-1, 0), (-(2**31), 0), (2**31 - 1, 999_999_999), (0, 2**32 - 1),
                                        (5, 1_000_000_000), (0, 0)])
            return Time(sec=sec, nanosec=nanosec)
        return Time(sec=int(self.rng.integers(0, 2**31 - 1)), nanosec=int(self.rng.integers(0, 10**9)))

    def frame_id(self, good: Sequence[str]) -> str:
        if self.bad(0.4):
            return str(self.choice(["", "no_such_frame", "x" * 5000, "/" + good[0], "base link", "ñ\t"]))
        return str(self.choice(list(good)))

    def names(self, joints: Sequence[str]) -> list[str]:
        """The model's joints in a random order, or (bad) with unknown, duplicate, empty or missing names."""
        names = [joints[i] for i in self.rng.permutation(len(joints))]
        if not self.bad(0.5):
            return names
        kind = self.choice(["unknown", "duplicate", "empty", "missing", "none", "huge"])
        if kind == "unknown":
            names[int(self.rng.integers(len(names)))] = f"joint_{int(self.rng.integers(1000))}"
        elif kind == "duplicate":
            names.append(names[0])
        elif kind == "empty":
            names.append("")
        elif kind == "missing":
            names = names[1:]
        elif kind == "none":
            names = []
        else:
            names = [f"j{i}" for i in range(HUGE_LENGTH)]
        return names

    def quaternion(self) -> list[float]:
        if self.bad(0.4):
            return list(self.choice(BAD_QUATERNIONS))
        q = self.rng.normal(size=4)
        return (q / np.linalg.norm(q)).tolist()

    def pose(self, scale: float = 0.5) -> Pose:
        pose = Pose()
        pose.position.x, pose.position.y, pose.position.z = (self.number(0.0, scale) for _ in range(3))
        o = pose.orientation
        o.x, o.y, o.z, o.w = self.quaternion()
        return pose

    # --- messages -----------------------------------------------------------------------------------
    def joint_state(self, joints: Sequence[str], lower: np.ndarray, upper: np.ndarray) -> JointState:
        names = self.names(joints)
        centre = {j: 0.5 * (lo + hi) for j, lo, hi in zip(joints, lower, upper, strict=True)}
        good = [centre.get(n, 0.0) for n in names]
        msg = JointState(name=names, position=self.array(len(names), good, 0.3))
        msg.header.stamp = self.stamp()
        msg.header.frame_id = self.frame_id(["", "base_link"])
        if self.bad(0.5):
            msg.velocity = self.array(len(names), scale=2.0)
        if self.bad(0.3):
            msg.effort = self.array(len(names), scale=10.0)
        return msg

    def odometry(self, frames: Sequence[str]) -> Odometry:
        msg = Odometry()
        msg.header.stamp = self.stamp()
        msg.header.frame_id = self.frame_id(["odom"])
        msg.child_frame_id = self.frame_id(frames)
        msg.pose.pose = self.pose(scale=5.0)
        msg.pose.covariance = [self.number() for _ in range(36)]
        twist = msg.twist.twist
        twist.linear.x, twist.angular.z = self.number(), self.number()
        return msg

    def pose_stamped(self, frames: Sequence[str], scale: float = 0.5) -> PoseStamped:
        msg = PoseStamped(pose=self.pose(scale))
        msg.header.stamp = self.stamp()
        msg.header.frame_id = self.frame_id(frames)
        return msg

    def tf_message(self, frames: Sequence[str]) -> TFMessage:
        count = int(self.choice([0, 1, 2, 5, 300])) if self.bad(0.3) else int(self.rng.integers(1, 4))
        transforms = []
        for _ in range(count):
            t = TransformStamped()
            t.header.stamp = self.stamp()
            t.header.frame_id = self.frame_id(frames)
            t.child_frame_id = self.frame_id(["fuzz_a", "fuzz_b", "fuzz_c"])  # the robot's frames stay intact
            pose = self.pose(scale=2.0)
            t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = (
                pose.position.x, pose.position.y, pose.position.z)
            t.transform.rotation = pose.orientation
            transforms.append(t)
        return TFMessage(transforms=transforms)

    def multiarray(self, n: int) -> Float64MultiArray:
        msg = Float64MultiArray(data=self.array(n, scale=5.0))
        if self.bad(0.3):
            size = int(self.choice([0, n, len(msg.data), HUGE_LENGTH]))
            stride = int(self.choice([0, size, 7]))
            msg.layout.dim = [MultiArrayDimension(label="joints", size=size, stride=stride)]
            msg.layout.data_offset = int(self.choice([0, 0, 3]))
        return msg

    def pd_command(self, joints: Sequence[str]) -> JointPDCommand:
        names = self.names(joints)
        n = len(names)
        msg = JointPDCommand(name=names, position=self.array(n, scale=0.5), velocity=self.array(n),
                             effort=self.array(n, scale=5.0), kp=self.array(n, [50.0] * n, 10.0),
                             kd=self.array(n, [2.0] * n, 0.5))
        msg.header.stamp = self.stamp()
        return msg

    def wrenches(self, links: Sequence[str]) -> list[WrenchStamped]:
        result = []
        for _ in range(int(self.choice([0, 1, 2]))):
            w = WrenchStamped()
            w.header.frame_id = self.frame_id(links)
            f, t = w.wrench.force, w.wrench.torque
            f.x, f.y, f.z, t.x, t.y, t.z = (self.number(0.0, 5.0) for _ in range(6))
            result.append(w)
        return result

    def tolerance(self) -> float:
        """A tolerance or timeout of an IK request (0: the node's default)."""
        return float(self.choice([1e-4, -1.0, math.nan, math.inf, 1e300, 5e-324])) if self.bad(0.5) else 0.0
