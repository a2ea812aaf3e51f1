"""An rclpy node in the test process, on its own context, for system tests that talk to node processes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import rclpy
from kinodyn_common.conversions import transform_to_matrix
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

    from tf2_msgs.msg import TFMessage


class Listener:
    """A node with its own executor; ``spin_until`` processes callbacks until a predicate holds."""

    def __init__(self, name: str) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=min(0.05, left))  # no longer than asked
        return bool(predicate())

    def spin_for(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def transforms_by_child(msg: TFMessage) -> dict[str, tuple[str, np.ndarray, tuple[int, int]]]:
    """``child -> (parent, T_parent_child, (sec, nanosec))`` for every transform of ``msg``."""
    return {
        t.child_frame_id: (
            t.header.frame_id,
            transform_to_matrix(t.transform),
            (t.header.stamp.sec, t.header.stamp.nanosec),
        )
        for t in msg.transforms
    }
