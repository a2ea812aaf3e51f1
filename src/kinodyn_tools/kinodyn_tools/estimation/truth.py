"""Ground truth from a nav_msgs/Odometry topic and the figures of `kinodyn estimate --ground-truth-topic`
(drift over distance, roll/pitch and velocity RMSE; kinodyn.estimation.metrics).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from kinodyn.estimation.metrics import Trajectory, accuracy
from kinodyn_common.stamps import NS, stamp_to_ns


@dataclass
class OdometrySeries:
    """Stamped base states of nav_msgs/Odometry messages (pose in the parent frame, twist in the child's)."""

    t: list[float] = field(default_factory=list)
    position: list[list[float]] = field(default_factory=list)
    quaternion: list[list[float]] = field(default_factory=list)
    linear_velocity: list[list[float]] = field(default_factory=list)

    def add(self, msg: Any) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        pose, twist = msg.pose.pose, msg.twist.twist
        self.t.append(stamp_to_ns(msg.header.stamp) / NS)
        self.position.append([pose.position.x, pose.position.y, pose.position.z])
        q = pose.orientation
        self.quaternion.append([q.x, q.y, q.z, q.w])
        self.linear_velocity.append([twist.linear.x, twist.linear.y, twist.linear.z])

    def add_rows(self, stamps_ns: np.ndarray, rows: np.ndarray) -> None:
        """Estimate rows (kinodyn.estimation.events: position, quaternion, linear velocity first) stamped
        ``stamps_ns``."""
        self.t.extend(stamp / NS for stamp in stamps_ns.tolist())
        self.position.extend(rows[:, 0:3].tolist())
        self.quaternion.extend(rows[:, 3:7].tolist())
        self.linear_velocity.extend(rows[:, 7:10].tolist())

    def __len__(self) -> int:
        return len(self.t)

    def trajectory(self) -> Trajectory:
        """The messages in stamp order, one per stamp (the first stored): a bag may hold a message twice or
        late in bag order."""
        t, first = np.unique(np.array(self.t), return_index=True)
        return Trajectory(t, np.reshape(self.position, (-1, 3))[first],
                          np.reshape(self.quaternion, (-1, 4))[first],
                          np.reshape(self.linear_velocity, (-1, 3))[first])


def accuracy_lines(truth: OdometrySeries, estimate: OdometrySeries) -> list[str]:
    """The accuracy figures as summary lines (kinodyn.estimation.metrics)."""
    if not len(truth) or not len(estimate):
        return ["ground truth     nothing to compare (no truth message or no estimate)"]
    true_trajectory = truth.trajectory()
    report = accuracy(true_trajectory, estimate.trajectory())
    return [
        f"ground truth     {report.samples} stamps paired, path {report.path_length:.3f} m",
        f"  drift          {100.0 * report.drift:.3f} % of the path (final horizontal error "
        f"{report.final_horizontal_error:.4f} m), position RMSE {report.position_rmse:.4f} m",
        f"  roll/pitch     RMSE {report.roll_rmse_deg:.4f} / {report.pitch_rmse_deg:.4f} deg, final yaw "
        f"error {report.final_yaw_error_deg:.3f} deg",
        f"  velocity       RMSE {report.velocity_rmse:.4f} m/s (base frame)",
    ]
