"""The latest transform into each frame, as received on /tf and /tf_static, and their composition.

A small stand-in for tf2's buffer (tf2_ros is not installable here): no interpolation in time, only the
newest transform per child frame, which is what a printer of the current pose needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn_common.conversions import InputError, quoted, transform_to_matrix
from kinodyn_common.stamps import stamp_to_ns

if TYPE_CHECKING:
    from tf2_msgs.msg import TFMessage


@dataclass(frozen=True)
class _Edge:
    parent: str
    T: np.ndarray  # T_parent_child
    stamp_ns: int
    static: bool


@dataclass(frozen=True)
class ComposedTransform:
    """``T`` (root <- frame) and the stamps of the non-static transforms it was composed from."""

    T: np.ndarray
    stamps_ns: frozenset[int]


class TransformBuffer:
    def __init__(self) -> None:
        self._edges: dict[str, _Edge] = {}

    def add(self, msg: TFMessage, static: bool) -> None:
        """Store every transform of ``msg``; raises InputError naming the first unusable one (the others of
        the message are stored)."""
        problem = None
        for t in msg.transforms:
            try:
                T = transform_to_matrix(t.transform)
                stamp_ns = stamp_to_ns(t.header.stamp)
            except InputError as exc:
                problem = problem or InputError(
                    exc.kind, f"transform {quoted(t.header.frame_id)} -> {quoted(t.child_frame_id)}: {exc}"
                )
                continue
            self._edges[t.child_frame_id] = _Edge(t.header.frame_id, T, stamp_ns, static)
        if problem:
            raise problem

    def lookup(self, root: str, frame: str) -> ComposedTransform:
        """``T_root_frame`` composed along the parents of ``frame``; LookupError names the missing link."""
        T = np.eye(4)
        stamps: set[int] = set()
        current = frame
        for _ in range(len(self._edges) + 1):
            if current == root:
                return ComposedTransform(T, frozenset(stamps))
            edge = self._edges.get(current)
            if edge is None:
                raise LookupError(
                    f"no transform into frame {current!r} received yet (chain {root!r} -> {frame!r})"
                )
            T = edge.T @ T
            if not edge.static:
                stamps.add(edge.stamp_ns)
            current = edge.parent
        raise LookupError(f"the transforms above {frame!r} form a cycle and never reach {root!r}")
