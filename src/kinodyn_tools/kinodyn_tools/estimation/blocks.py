"""`kinodyn estimate`'s input side: a bag's estimator inputs read in blocks and decoded into arrays
(docs/offline-estimation.md, "Speed").

A block is ``size`` input messages in bag order (other topics read with them, e.g. a ground truth, are not
counted). Each input topic's messages are decoded at once where the bag stores the installed definition and
the messages share one CDR layout (``kinodyn_common.cdr.FixedLayout``: same frame_id, names and lengths);
any other message is decoded into its message object and converted by what the node uses (``imu_sample``,
``JointMap``, ``contact_names``). A block with a message that does not convert (a bad stamp, inconsistent
names or lengths) has no arrays: its messages go to the pipeline one by one, which logs and drops the bad
ones exactly as the node does.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np
from kinodyn_common.cdr import LAYOUT_TYPES, FixedLayout, fixed_layout
from kinodyn_common.conversions import InputError
from kinodyn_common.stamps import NS, stamp_to_ns
from kinodyn_control.estimation.input_block import InputBlock
from kinodyn_control.estimation.messages import JointMap, contact_names, imu_sample

from kinodyn_tools.bags.reader import message_decoder, stores_installed_definition

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from rosbags.interfaces import Connection

    from kinodyn_tools.bags.reader import BagReader

IMU_COLUMNS = np.r_[13:16, 25:28]
"""Angular velocity and linear acceleration among sensor_msgs/Imu's 37 doubles (``FixedLayout`` values)."""
CONVERSION_ERRORS = (InputError, AttributeError, TypeError, ValueError)
"""What converting a message can raise (EstimatorPipeline drops such a message as bad)."""


class _Decoded:
    """One topic's messages of a block: stamps and its stream's arrays (InputBlock's names)."""

    def __init__(self, stream: str, count: int, joints: int) -> None:
        self.stamps = np.zeros(count, np.int64)
        self.imu = np.full((count if stream == "imu" else 0, 6), np.nan)
        self.imu_frames = np.empty(len(self.imu), object)
        self.joints = np.full((count if stream == "joint_states" else 0, 3, joints), np.nan)
        self.contact_layouts = np.full(count if stream == "contacts" else 0, -1, np.intp)
        self.contact_names: list[tuple[str, ...]] = []
        self.contact_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (message indices, flags)

    def contacts(self, index: np.ndarray, names: tuple[str, ...], flags: np.ndarray) -> None:
        if names not in self.contact_names:
            self.contact_names.append(names)
        self.contact_layouts[index] = self.contact_names.index(names)
        self.contact_parts.append((index, flags))

    def contact_flags(self) -> np.ndarray:
        width = max((len(names) for names in self.contact_names), default=0)
        flags = np.zeros((len(self.contact_layouts), width), np.int8)
        for index, part in self.contact_parts:
            flags[index, :part.shape[1]] = part
        return flags


class TopicDecoder:
    """Decodes one input topic's messages of a block (module docstring); keeps the layout of the last block
    and the JointState name mapping."""

    def __init__(self, stream: str, msgtype: str, decode: Callable[[Any], Any], fixed: bool,
                 joint_names: Sequence[str]) -> None:
        self.stream, self._msgtype, self._decode = stream, msgtype, decode
        self._fixed = fixed and msgtype in LAYOUT_TYPES
        self._layout: FixedLayout | None = None
        self._joints = JointMap(joint_names)
        self._joint_count = len(joint_names)

    def __call__(self, raws: Sequence[bytes | memoryview]) -> _Decoded | None:
        """The messages' stamps and arrays, None when one does not convert."""
        out = _Decoded(self.stream, len(raws), self._joint_count)
        rest = range(len(raws))
        try:
            if self._fixed and raws:
                matches, records = self._decode_fixed(raws)
                if records is not None:
                    self._put_fixed(out, np.flatnonzero(matches), records)
                    rest = np.flatnonzero(~matches).tolist()
            for i in rest:
                msg = self._decode(raws[i])
                out.stamps[i] = stamp_to_ns(msg.header.stamp)
                self._put_message(out, i, msg)
        except CONVERSION_ERRORS:
            return None
        return out

    def _decode_fixed(self, raws: Sequence[bytes | memoryview]) -> tuple[np.ndarray, np.ndarray | None]:
        """The messages of the kept layout, or of the first message's when that one differs."""
        if self._layout is not None:
            matches, records = self._layout.decode(raws)
            if matches[0]:
                return matches, records
        try:
            self._layout = fixed_layout(self._msgtype, raws[0])
        except ValueError:
            self._layout = None
            return np.zeros(len(raws), bool), None
        return self._layout.decode(raws)

    def _put_fixed(self, out: _Decoded, index: np.ndarray, records: np.ndarray) -> None:
        layout = self._layout
        assert layout is not None
        sec, nanosec = records["sec"].astype(np.int64), records["nanosec"].astype(np.int64)
        if np.any(sec < 0) or np.any(nanosec >= NS):
            raise InputError("bad_stamp", "a header.stamp is not a time")  # one by one, each message says it
        out.stamps[index] = sec * NS + nanosec
        if self.stream == "imu":
            out.imu[index] = records["values"][:, IMU_COLUMNS]
            out.imu_frames[index] = layout.texts[0]
        elif self.stream == "joint_states":
            out.joints[index] = self._joints.rows(layout.texts[1:], records["position"], records["velocity"],
                                                  records["effort"])
        else:
            names = contact_names(layout.texts[1:], layout.counts[1])
            out.contacts(index, names, (records["in_contact"] != 0).astype(np.int8))

    def _put_message(self, out: _Decoded, i: int, msg: Any) -> None:  # noqa: ANN401  (rosbags builds the message classes at run time)
        if self.stream == "imu":
            sample = imu_sample(msg)
            out.imu[i, :3], out.imu[i, 3:] = sample.angular_velocity, sample.linear_acceleration
            out.imu_frames[i] = sample.frame_id
        elif self.stream == "joint_states":
            joints = self._joints.sample(msg)
            out.joints[i] = joints.positions, joints.velocities, joints.efforts
        else:
            names = contact_names(msg.names, len(msg.in_contact))
            out.contacts(np.array([i]), names, np.array([[bool(flag) for flag in msg.in_contact]], np.int8))


@dataclass(frozen=True)
class Block:
    """One block read from the bag: its ``items`` (connection, bag time, raw CDR) in bag order, their
    ``topics`` and bag ``times`` (ns) as arrays and, when every input message converts, ``inputs``."""

    items: list[tuple[Any, int, bytes | memoryview]]
    topics: np.ndarray
    times: np.ndarray
    inputs: InputBlock | None
    decoders: Mapping[int, Callable[[Any], Any]]

    def messages(self, topics: set[str]) -> Iterator[tuple[str, int, Any]]:
        """``(topic, bag time in ns, message object)`` of the block's messages on ``topics``, in bag order."""
        for connection, time_ns, raw in self.items:
            if connection.topic in topics:
                yield connection.topic, time_ns, self.decoders[connection.id](raw)


def read_blocks(reader: BagReader, connections: list[Connection], streams: tuple[str, ...],
                stream_of: Mapping[str, str | None], joint_names: Sequence[str], size: int
                ) -> Iterator[Block]:
    """The bag's messages on ``connections`` in blocks of ``size`` input messages (bag order): the topics
    of ``stream_of`` are inputs, of the stream it names (one of ``streams``, the pipeline's) or of none (read,
    not given to the estimator: a contacts topic under contact detection)."""
    decoders = {c.id: message_decoder(reader, c) for c in connections}
    streamed = [c for c in connections if stream_of.get(c.topic) is not None]
    topics: dict[int, TopicDecoder] | None = {
        c.id: TopicDecoder(stream_of[c.topic], c.msgtype, decoders[c.id],  # type: ignore[arg-type]
                           stores_installed_definition(reader, c), joint_names) for c in streamed}
    if len({c.topic for c in streamed}) < len(streamed):
        topics = None  # a topic recorded on two connections (two types or publishers): one by one
    inputs = {c.id for c in connections if c.topic in stream_of}
    messages = reader.messages(connections=connections)
    while True:
        items: list[tuple[Any, int, bytes | memoryview]] = []
        count = 0
        while count < size:
            more = list(islice(messages, size - count))
            if not more:
                break
            items += more
            count += len(more) if len(inputs) == len(connections) else sum(c.id in inputs for c, _, _ in more)
        if not items:
            return
        arrays = None if topics is None else _input_block(items, topics, streams, len(joint_names))
        yield Block(items, np.array([c.topic for c, _, _ in items], object),
                    np.fromiter((t for _, t, _ in items), np.int64, len(items)), arrays, decoders)


def _input_block(items: list[tuple[Any, int, bytes | memoryview]], topics: Mapping[int, TopicDecoder],
                 streams: tuple[str, ...], joints: int) -> InputBlock | None:
    """The arrays of a block's input messages (the estimator's streams), None when one does not convert."""
    ids = np.fromiter((c.id for c, _, _ in items), np.int64, len(items))
    times = np.fromiter((t for _, t, _ in items), np.int64, len(items))
    raws = [raw for _, _, raw in items]
    picked = [np.flatnonzero(ids == cid) for cid in topics]
    order = np.sort(np.concatenate([np.zeros(0, np.intp), *picked]))
    ranks = np.zeros(len(ids), np.int8)
    rows = np.zeros(len(ids), np.intp)
    stamps = np.zeros(len(ids), np.int64)
    decoded: dict[str, _Decoded] = {}
    for index, decode in zip(picked, topics.values(), strict=True):
        result = decode([raws[i] for i in index.tolist()])
        if result is None:
            return None
        decoded[decode.stream] = result
        ranks[index] = streams.index(decode.stream)
        rows[index] = np.arange(len(index))
        stamps[index] = result.stamps
    empty = _Decoded("", 0, joints)
    imu, joint_states, contacts = (decoded.get(s, empty) for s in ("imu", "joint_states", "contacts"))
    return InputBlock(streams, ranks[order], stamps[order], times[order], rows[order], imu.imu,
                      imu.imu_frames, joint_states.joints, contacts.contact_layouts, contacts.contact_flags(),
                      contacts.contact_names)
