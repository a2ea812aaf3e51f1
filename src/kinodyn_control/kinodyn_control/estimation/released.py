"""Released estimator events as arrays: what ``EstimatorPipeline`` hands to ``LeggedEstimator.process`` in
batches, built from the merger's events (the node: a few per callback) or from a block of a bag and what
``StampMerger.push_block`` released of it (``kinodyn estimate``: thousands, without per-message objects).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from kinodyn_control.estimation.input_block import InputBlock
    from kinodyn_control.estimation.merger import BlockRelease, Event


@dataclass(frozen=True)
class Released:
    """Events of one epoch in release (stamp) order: ``stamps`` (ns), ``ranks`` (the stream, an index into
    the pipeline's streams), and the row each kind reads: ``imu`` [w, a], ``joints`` positions, velocities,
    efforts (model order, NaN where not given), ``contact_flags`` of the feet
    ``contact_names[contact_layouts[k]]`` (layout -1 for the other kinds); ``dropped`` holds ``Event.dropped``
    of the events that have any, by position."""

    stamps: np.ndarray
    ranks: np.ndarray
    imu: np.ndarray
    joints: np.ndarray
    contact_layouts: np.ndarray
    contact_flags: np.ndarray
    contact_names: list[tuple[str, ...]]
    dropped: dict[int, Mapping[str, int]]

    def __len__(self) -> int:
        return len(self.stamps)

    @classmethod
    def _empty(cls, size: int, joints: int, width: int, names: list[tuple[str, ...]]) -> Released:
        return cls(np.zeros(size, np.int64), np.zeros(size, np.intp), np.full((size, 6), np.nan),
                   np.full((size, 3, joints), np.nan), np.full(size, -1, np.intp),
                   np.zeros((size, width), np.int8), names, {})

    def put(self, k: int, event: Event, streams: Sequence[str]) -> None:
        """Event ``k`` from a merger Event (payloads of EstimatorPipeline.on_*)."""
        self.stamps[k], self.ranks[k] = event.stamp_ns, streams.index(event.stream)
        payload = event.payload
        if event.stream == "imu":
            self.imu[k, :3], self.imu[k, 3:] = payload.angular_velocity, payload.linear_acceleration
        elif event.stream == "joint_states":
            self.joints[k] = payload.positions, payload.velocities, payload.efforts
        else:
            names = tuple(payload)
            if names not in self.contact_names:
                self.contact_names.append(names)
            self.contact_layouts[k] = self.contact_names.index(names)
            self.contact_flags[k, :len(names)] = [bool(flag) for flag in payload.values()]
        if event.dropped:
            self.dropped[k] = event.dropped

    @classmethod
    def of_events(cls, events: Sequence[Event], streams: Sequence[str], joints: int) -> Released:
        """Events released by ``StampMerger.push`` (one epoch)."""
        width = max((len(e.payload) for e in events if e.stream == "contacts"), default=0)
        released = cls._empty(len(events), joints, width, [])
        for k, event in enumerate(events):
            released.put(k, event, streams)
        return released

    @classmethod
    def of_block(cls, block: InputBlock, release: BlockRelease, joints: int) -> Released:
        """What ``StampMerger.push_block`` released of ``block``: its messages by their arrays, events
        accepted before the block as ``of_events``."""
        order = release.order
        carried = np.flatnonzero(order < 0)
        events = [release.carried[-1 - int(order[k])] for k in carried]
        widths = [len(e.payload) for e in events if e.stream == "contacts"]
        width = max([block.contact_flags.shape[1], *widths])
        released = cls._empty(len(order), joints, width, list(block.contact_names))
        mine = np.flatnonzero(order >= 0)
        index = order[mine]
        rows, ranks = block.rows[index], block.ranks[index]
        released.stamps[mine], released.ranks[mine] = block.stamps[index], ranks
        for rank, stream in enumerate(block.streams):
            kind = ranks == rank
            at, row = mine[kind], rows[kind]
            if stream == "imu":
                released.imu[at] = block.imu[row]
            elif stream == "joint_states":
                released.joints[at] = block.joints[row]
            else:
                released.contact_layouts[at] = block.contact_layouts[row]
                released.contact_flags[at, :block.contact_flags.shape[1]] = block.contact_flags[row]
        if release.dropped:
            for k in np.flatnonzero(np.isin(order, list(release.dropped))).tolist():
                released.dropped[k] = release.dropped[int(order[k])]
        for k, event in zip(carried.tolist(), events, strict=True):
            released.put(k, event, block.streams)
        return released
