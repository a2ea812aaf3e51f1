"""Accuracy of a base-state estimate against ground truth: drift, roll/pitch and velocity
RMSE, and the NEES mean against its chi-square bounds (kinodyn.estimation.consistency).

Both trajectories are of the base (root link): position in their world (odom) frame, quaternion (x, y, z, w)
of ``C_WB``, linear velocity in the base frame (as nav_msgs/Odometry's twist). Samples are paired by stamp.
Position and yaw are unobservable (Robot Dynamics Essential, §5.3, observability table), so the truth is first
expressed in the estimate's odom frame: the 4-dof (x, y, z, yaw) transform that makes the first paired poses
coincide. docs/estimation.md, "Synthetic data and accuracy".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.estimation.consistency import chi2_bounds

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass(frozen=True, eq=False)
class Trajectory:
    """Stamped base states: ``t`` (N,), ``position`` (N, 3), ``quaternion`` (N, 4) x y z w,
    ``linear_velocity`` (N, 3) in the base frame. ValueError on mismatched shapes, non-finite values or
    unsorted stamps."""

    t: np.ndarray
    position: np.ndarray
    quaternion: np.ndarray
    linear_velocity: np.ndarray

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=np.float64)
        shapes = {"position": 3, "quaternion": 4, "linear_velocity": 3}
        for name, width in shapes.items():
            value = np.asarray(getattr(self, name), dtype=np.float64)
            if value.shape != (len(t), width):
                raise ValueError(f"Trajectory.{name} must have shape ({len(t)}, {width}), got {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ValueError(f"Trajectory.{name} has {np.sum(~np.isfinite(value))} non-finite entries")
            object.__setattr__(self, name, value)
        if t.ndim != 1 or len(t) == 0 or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0.0):
            raise ValueError("Trajectory.t must be a non-empty, finite, non-decreasing 1-D array of stamps")
        object.__setattr__(self, "t", t)

    @property
    def rotation(self) -> np.ndarray:
        """(N, 3, 3) ``C_WB`` of the (normalised) quaternions."""
        q = self.quaternion / np.linalg.norm(self.quaternion, axis=1, keepdims=True)
        x, y, z, w = q.T
        return np.stack([
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1),
        ], axis=1)


@dataclass(frozen=True)
class AccuracyReport:
    """Figures of one estimate; angles in degrees, lengths in m, velocities in m/s."""

    samples: int  # paired stamps
    path_length: float  # horizontal distance the true base travelled over the paired span
    final_horizontal_error: float
    drift: float  # final_horizontal_error / path_length (fraction; x 100 for %)
    position_rmse: float  # 3-D, after the start alignment
    roll_rmse_deg: float
    pitch_rmse_deg: float
    final_yaw_error_deg: float
    velocity_rmse: float  # of the base-frame linear velocity error's norm


@dataclass(frozen=True)
class NeesSummary:
    """Mean NEES of ``samples`` values of ``dof`` degrees of freedom and its two-sided chi-square bounds."""

    mean: float
    lower: float
    upper: float
    dof: int
    samples: int

    @property
    def inside(self) -> bool:
        return self.lower <= self.mean <= self.upper


def pair_by_stamp(truth_t: ArrayLike, estimate_t: ArrayLike,
                  tolerance: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(truth, estimate)`` of the estimate stamps that have a truth stamp within ``tolerance`` s
    (the nearest one); ValueError if none pair."""
    truth_t, estimate_t = np.asarray(truth_t, dtype=np.float64), np.asarray(estimate_t, dtype=np.float64)
    right = np.clip(np.searchsorted(truth_t, estimate_t), 1, len(truth_t) - 1) if len(truth_t) > 1 else None
    if right is None:
        nearest = np.zeros(len(estimate_t), dtype=np.int64)
    else:
        left = right - 1
        closer_left = np.abs(truth_t[left] - estimate_t) <= np.abs(truth_t[right] - estimate_t)
        nearest = np.where(closer_left, left, right)
    paired = np.abs(truth_t[nearest] - estimate_t) <= tolerance
    if not np.any(paired):
        raise ValueError(f"no estimate stamp is within {tolerance} s of a truth stamp; "
                         "are both stamped by one clock?")
    return nearest[paired], np.flatnonzero(paired)


def _roll_pitch_yaw(rotation: np.ndarray) -> np.ndarray:
    """(N, 3) roll, pitch, yaw of ``C = Rz(yaw) Ry(pitch) Rx(roll)``."""
    roll = np.arctan2(rotation[:, 2, 1], rotation[:, 2, 2])
    pitch = -np.arcsin(np.clip(rotation[:, 2, 0], -1.0, 1.0))
    yaw = np.arctan2(rotation[:, 1, 0], rotation[:, 0, 0])
    return np.stack([roll, pitch, yaw], axis=1)


def _wrap(angle: np.ndarray) -> np.ndarray:
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(values))))


@dataclass(frozen=True, eq=False)
class Alignment:
    """The paired stamps of two trajectories (``truth_index``, ``estimate_index``), their roll/pitch/yaw
    (M, 3) in rad, the true positions (M, 3) expressed in the estimate's odom frame (module doc) and the
    position error (M, 3): estimate minus that aligned truth."""

    truth_index: np.ndarray
    estimate_index: np.ndarray
    true_angles: np.ndarray
    estimate_angles: np.ndarray
    true_position: np.ndarray
    position_error: np.ndarray


def align(truth: Trajectory, estimate: Trajectory, tolerance: float = 1e-6) -> Alignment:
    """Pair the stamps and express the truth in the estimate's odom frame: the 4-dof (x, y, z, yaw) transform
    that makes the first paired poses coincide (module doc)."""
    ti, ei = pair_by_stamp(truth.t, estimate.t, tolerance)
    true_angles, est_angles = _roll_pitch_yaw(truth.rotation[ti]), _roll_pitch_yaw(estimate.rotation[ei])
    dyaw = est_angles[0, 2] - true_angles[0, 2]
    c, s = math.cos(dyaw), math.sin(dyaw)
    yaw_rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    true_position = (truth.position[ti] - truth.position[ti[0]]) @ yaw_rotation.T + estimate.position[ei[0]]
    return Alignment(ti, ei, true_angles, est_angles, true_position, estimate.position[ei] - true_position)


def accuracy(truth: Trajectory, estimate: Trajectory, tolerance: float = 1e-6) -> AccuracyReport:
    """Drift and RMSE figures of ``estimate`` against ``truth`` over their paired stamps (module doc)."""
    aligned = align(truth, estimate, tolerance)
    ti, ei = aligned.truth_index, aligned.estimate_index
    true_angles, est_angles, error = aligned.true_angles, aligned.estimate_angles, aligned.position_error
    path = float(np.linalg.norm(np.diff(truth.position[ti, :2], axis=0), axis=1).sum())
    final = float(np.linalg.norm(error[-1, :2]))
    angle_error = _wrap(est_angles - true_angles)
    velocity_error = estimate.linear_velocity[ei] - truth.linear_velocity[ti]
    return AccuracyReport(
        samples=len(ti), path_length=path, final_horizontal_error=final,
        drift=final / path if path > 0.0 else math.nan,
        position_rmse=_rms(np.linalg.norm(error, axis=1)),
        roll_rmse_deg=math.degrees(_rms(angle_error[:, 0])),
        pitch_rmse_deg=math.degrees(_rms(angle_error[:, 1])),
        final_yaw_error_deg=math.degrees(float(_wrap(angle_error[-1, 2] - angle_error[0, 2]))),
        velocity_rmse=_rms(np.linalg.norm(velocity_error, axis=1)),
    )


def nees_summary(values: ArrayLike, dof: int = 9, independent_samples: int | None = None,
                 probability: float = 0.95) -> NeesSummary:
    """Mean of the NEES ``values`` and its ``probability`` chi-square bounds (Bar-Shalom 2001 §5.4.2).

    The bounds assume independent samples; successive NEES values of one run are correlated, so give
    ``independent_samples`` (e.g. the number of Monte-Carlo runs averaged, or the run length over the error
    correlation time) when that is known; the default takes every value as independent (the tightest bounds).
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    if len(v) == 0 or not np.all(np.isfinite(v)) or np.any(v < 0.0):
        raise ValueError("NEES values must be a non-empty array of finite values >= 0")
    samples = len(v) if independent_samples is None else int(independent_samples)
    lower, upper = chi2_bounds(dof, samples, probability)
    return NeesSummary(mean=float(v.mean()), lower=lower, upper=upper, dof=dof, samples=samples)
