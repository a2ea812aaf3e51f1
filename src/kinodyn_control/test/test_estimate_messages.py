"""The estimator controller's published messages built from an estimate row equal the node's messages."""

from __future__ import annotations

import numpy as np
from kinodyn_common.cdr import odometry_rows_cdr
from kinodyn_control.estimation.messages import (
    estimate_fields,
    odometry_message,
    row_transform_message,
    transform_message,
)
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message

ROWS = 50
ESTIMATE_SIZE = 85


def _rows() -> np.ndarray:
    rows = np.random.default_rng(7).normal(scale=1e3, size=(ROWS, ESTIMATE_SIZE))
    rows[0, :7] = -0.0  # signed zeros survive both routes
    return rows


def test_row_transform_is_the_odometry_transform() -> None:
    for k, row in enumerate(_rows()):
        stamp_ns = 1_795_000_000_123_456_789 + k
        expected = transform_message(odometry_message(estimate_fields(row), stamp_ns, "odom", "base_link"))
        got = row_transform_message(row, stamp_ns, "odom", "base_link")
        assert got == expected
        sign = np.copysign(1.0, [got.transforms[0].transform.translation.x,
                                 got.transforms[0].transform.rotation.w])
        assert sign.tolist() == np.copysign(1.0, row[[0, 6]]).tolist()


def test_odometry_bytes_are_the_odometry_message() -> None:
    rows = _rows()
    for k in range(ROWS):
        stamp_ns = 5_000_000_000 + 2_000_000 * k
        raw = odometry_rows_cdr(np.array([stamp_ns]), "odom", "base_link", rows[k:k + 1])[0]
        got = deserialize_message(raw, Odometry)
        expected = odometry_message(estimate_fields(rows[k]), stamp_ns, "odom", "base_link")
        assert got == expected
