"""joint_motion: a demo joint-state source (docs/nodes/joint_motion.md).

Publishes `joint_states` for every movable joint of the URDF, each on the sinusoid
``q_i(t) = c_i + a_i sin(2 pi t / period + pi i / n)`` with velocity ``a_i (2 pi / period) cos(...)``,
where ``c_i`` and ``a_i`` keep the motion within the joint limits (``motion_range``).
"""

from __future__ import annotations

import math

import numpy as np
from kinodyn_common.conversions import q_to_joint_state
from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import declare_non_negative, declare_positive
from kinodyn_common.robot_description import declare_and_load_model
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

NODE_NAME = "joint_motion"


def motion_range(lower: np.ndarray, upper: np.ndarray, amplitude: float) -> tuple[np.ndarray, np.ndarray]:
    """Centre and amplitude per joint so that ``c - a >= lower`` and ``c + a <= upper``.

    Joints with two finite limits swing about the middle of their range with ``min(amplitude, half range)``;
    the others (continuous, one-sided) swing by ``amplitude`` about the point nearest 0 that keeps
    them inside.
    """
    bounded = np.isfinite(lower) & np.isfinite(upper)
    centre = np.where(bounded, 0.5 * (lower + upper), np.clip(0.0, lower + amplitude, upper - amplitude))
    swing = np.where(bounded, np.minimum(amplitude, 0.5 * (upper - lower)), amplitude)
    return centre, swing


class JointMotion(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        model, _, source = declare_and_load_model(self)
        rate_hz = declare_positive(self, "rate_hz", 50.0)
        amplitude = declare_non_negative(self, "amplitude", 0.5)
        self._omega = 2.0 * math.pi / declare_positive(self, "period", 4.0)
        self._names = model.joint_names
        self._lower, self._upper = model.lower_limit, model.upper_limit
        self._centre, self._swing = motion_range(self._lower, self._upper, amplitude)
        n = len(self._names)
        self._phase = math.pi * np.arange(n) / max(n, 1)
        self._start_ns = self.get_clock().now().nanoseconds
        self._publisher = self.create_publisher(JointState, "joint_states", QoSProfile(depth=10))
        self.create_timer(1.0 / rate_hz, self._publish)
        self.get_logger().info(
            f"moving {n} joints of {source} at {rate_hz} Hz: "
            + ", ".join(
                f"{name} {c:+.3f} ± {a:.3f}"
                for name, c, a in zip(self._names, self._centre, self._swing, strict=True)
            )
        )

    def _publish(self) -> None:
        now = self.get_clock().now()
        angle = self._omega * (now.nanoseconds - self._start_ns) * 1e-9 + self._phase
        q = np.clip(self._centre + self._swing * np.sin(angle), self._lower, self._upper)  # against rounding
        qdot = self._swing * self._omega * np.cos(angle)
        self._publisher.publish(q_to_joint_state(self._names, q, now.to_msg(), qdot))


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, JointMotion, args)


if __name__ == "__main__":
    raise SystemExit(main())
