"""Batches of estimator events and what ``LeggedEstimator.process`` returns for them (docs/estimation.md,
"Batches"): one path for the node (batches of 1-3 events) and ``kinodyn estimate`` (thousands).

The compiled loop (kinodyn.estimation.loop) reports a data fault by a code and the figure it quotes;
``problem_text`` words it the way the estimator's ``last_problem`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.estimation import loop
from kinodyn.estimation.filter import NOT_POSITIVE_DEFINITE, UpdateReport

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

IMU, CONTACTS, JOINTS = loop.IMU, loop.CONTACTS, loop.JOINTS
ESTIMATE_SIZE = 85
"""An estimate row: base position (3), orientation x, y, z, w (4), linear and angular velocity in the base
frame (3 + 3), pose and twist covariances (6x6 each, row-major): ``ImuExtrinsics.base_output``'s layout."""


@dataclass(frozen=True)
class EventBatch:
    """Events in processing order: ``kinds`` (IMU, CONTACTS, JOINTS), ``stamps`` (s), and the rows each kind
    reads: ``imu`` [w, a] (raw, IMU frame), ``contacts`` per foot of the estimator (1 in contact, 0 not,
    -1 not named: ``LeggedEstimator.contact_row``), ``joints`` positions, velocities and efforts (model
    joint order, NaN where not measured). Rows of the other kinds are ignored."""

    kinds: np.ndarray  # int8 (N,)
    stamps: np.ndarray  # float64 (N,)
    imu: np.ndarray  # float64 (N, 6)
    contacts: np.ndarray  # int8 (N, feet)
    joints: np.ndarray  # float64 (N, 3, joints)

    @classmethod
    def empty(cls, size: int, feet: int, joints: int) -> EventBatch:
        """``size`` events to fill in: rows NaN (IMU, joints) or -1 (contacts)."""
        return cls(np.zeros(size, np.int8), np.zeros(size), np.full((size, 6), np.nan),
                   np.full((size, feet), -1, np.int8), np.full((size, 3, joints), np.nan))

    def __len__(self) -> int:
        return len(self.kinds)


@dataclass
class BatchResult:
    """Per event of a batch: ``status`` 1 with its estimate in ``estimates`` (IMU; ESTIMATE_SIZE values), 2
    with the NIS and degrees of freedom of its kinematic update (joint state); ``problems``: ``(event,
    counters that increased, last_problem)`` for each event that counted a data fault; ``reports``: the
    UpdateReport of each update, by event (every update when ``LeggedEstimator.process`` was asked for them,
    else only those finished outside the compiled loop)."""

    status: np.ndarray
    estimates: np.ndarray
    nis: np.ndarray
    dof: np.ndarray
    problems: list[tuple[int, tuple[str, ...], str]] = field(default_factory=list)
    reports: dict[int, UpdateReport] = field(default_factory=dict)

    @classmethod
    def empty(cls, size: int) -> BatchResult:
        nis = np.empty(size)
        nis.fill(np.nan)  # (np.full's Python wrapper is a per-batch cost)
        return cls(np.zeros(size, np.int8), np.empty((size, ESTIMATE_SIZE)), nis, np.zeros(size, np.int64))


def problem_text(code: int, stamp: float, value: float, rejected: Sequence[str],
                 limits: Mapping[str, float]) -> tuple[str, str]:
    """``(counter, last_problem)`` of a problem code of the compiled loop; ``value`` is the figure it quotes,
    ``rejected`` the feet a gate refused, ``limits`` the estimator's accel_limit, gyro_limit and
    accel_jump_limit."""
    text = _imu_problem(code, stamp, value, limits) or _joint_problem(code, stamp, value, rejected)
    if text is None:
        raise ValueError(f"unknown problem code {code}")
    return text


def _imu_problem(code: int, stamp: float, value: float,
                 limits: Mapping[str, float]) -> tuple[str, str] | None:
    if code == loop.NON_FINITE:
        return "imu_rejected", (f"IMU sample at {stamp} s has a non-finite value: dropped, the previous "
                                "one is held")
    if code == loop.ACCEL:
        limit = limits["accel_limit"]
        return "imu_rejected", (f"IMU |a| = {value:.1f} m/s^2 > accel_limit {limit:g}: dropped as a spike, "
                                "the previous sample is held")
    if code == loop.GYRO:
        limit = limits["gyro_limit"]
        return "imu_rejected", (f"IMU |w| = {value:.1f} rad/s > gyro_limit {limit:g}: dropped as a spike, "
                                "the previous sample is held")
    if code == loop.IMU_ORDER:
        return "imu_out_of_order", (f"IMU stamp {stamp:.9f} s is not after the last event ({value:.9f} s): "
                                    "dropped")
    if code == loop.JUMPED:
        return "imu_rejected", (f"IMU specific force jumped by {value:.1f} m/s^2 > accel_jump_limit "
                                f"{limits['accel_jump_limit']:g}: dropped as a spike (a jump the next sample "
                                "confirms is kept)")
    return None


def _joint_problem(code: int, stamp: float, value: float, rejected: Sequence[str]) -> tuple[str, str] | None:
    if code == loop.JOINT_ORDER:
        return "joint_states_out_of_order", (f"joint state at {stamp:.9f} s is older than the filter "
                                             f"({value:.9f} s)")
    if code == loop.NO_IMU:
        return "joint_states_without_imu", (f"joint state at {stamp:.9f} s not used: the last accepted IMU "
                                            f"sample is {value:.3f} s older (more than max_imu_gap)")
    if code == loop.GATED:
        return "feet_rejected", f"feet {list(rejected)} failed the chi-square gate"
    if code == loop.FAILED:
        return "updates_failed", f"kinematic update at {stamp:.9f} s not applied: {NOT_POSITIVE_DEFINITE}"
    return None
