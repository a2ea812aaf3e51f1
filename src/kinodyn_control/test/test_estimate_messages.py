"""The estimator controller's messages as CDR bytes of an estimate row (kinodyn_common.cdr) read back as the
node's messages of that row (estimation.messages)."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn_common.cdr import odometry_rows_cdr, transform_row_cdr
from kinodyn_control.estimation.messages import estimate_fields, odometry_message, transform_message
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message

from tf2_msgs.msg import TFMessage

ROWS = 50
ESTIMATE_SIZE = 85


def _rows() -> np.ndarray:
    rows = np.random.default_rng(7).normal(scale=1e3, size=(ROWS, ESTIMATE_SIZE))
    rows[0, :7] = -0.0  # signed zeros survive both routes
    return rows


@pytest.mark.parametrize(("frame", "child"), [("odom", "base_link"), ("o", "trunk_with_a_longer_name"),
                                              ("", "")])
def test_row_bytes_are_the_node_messages(frame: str, child: str) -> None:
    for k, row in enumerate(_rows()):
        stamp_ns = 1_795_000_000_123_456_789 + 2_000_017 * k
        odometry = odometry_message(estimate_fields(row), stamp_ns, frame, child)
        raw = odometry_rows_cdr(np.array([stamp_ns]), frame, child, row[None])[0]
        assert deserialize_message(raw, Odometry) == odometry
        tf = deserialize_message(transform_row_cdr(stamp_ns, frame, child, row), TFMessage)
        assert tf == transform_message(odometry)
        rotation = tf.transforms[0].transform.rotation
        assert np.copysign(1.0, [rotation.x, rotation.w]).tolist() == np.copysign(1.0, row[[3, 6]]).tolist()
