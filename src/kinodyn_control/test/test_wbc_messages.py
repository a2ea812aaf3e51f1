"""The wbc's published bytes (raw_messages.joint_pd_command_writer, contact_schedule_writer) against rclpy's
``serialize_message`` of the typed messages its Answer builds (``Answer.command``, ``Answer.contacts``).

rclpy leaves CDR's alignment padding uninitialised (its bytes vary from run to run), so the oracle is: every
byte that is not padding equal, every padding byte of the written message zero. Where the padding is comes
from a walk of the message definitions written here (CDR: each primitive aligned to its size, counted from
the byte after the 4-byte encapsulation), not from the layout code the writers use; rclpy's
``deserialize_message`` of the bytes equals the typed message as a second check.
"""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn_common.raw_messages import contact_schedule_writer, joint_pd_command_writer
from kinodyn_common.stamps import NS
from kinodyn_control.wbc.command import JointCommand
from kinodyn_control.wbc.core import Answer
from rclpy.serialization import deserialize_message, serialize_message

from kinodyn_interfaces.msg import ContactStates, JointPDCommand

JOINTS = ["LF_HAA", "LF_HFE", "LF_KFE", "LH_HAA", "LH_HFE", "LH_KFE",
          "RF_HAA", "RF_HFE", "RF_KFE", "RH_HAA", "RH_HFE", "RH_KFE"]
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]


class _Walk:
    """Payload offsets of the alignment padding of one message, walked field by field."""

    def __init__(self) -> None:
        self.pos, self.padding = 0, []

    def take(self, size: int, count: int = 1) -> None:
        while count and self.pos % size:
            self.padding.append(self.pos)
            self.pos += 1
        self.pos += size * count

    def string(self, text: str) -> None:
        self.take(4)
        self.pos += len(text.encode()) + 1

    def header_and_names(self, frame: str, names: list[str]) -> None:
        self.take(4, 2)
        self.string(frame)
        self.take(4)
        for name in names:
            self.string(name)


def _check(data: bytes, typed: object, padding: list[int], size: int) -> None:
    reference = serialize_message(typed)
    assert len(data) == len(reference)
    assert 4 + size <= len(data) <= 4 + size + 3
    pad = np.zeros(len(data), bool)
    pad[4 + np.array(padding, int)] = True
    pad[4 + size:] = True  # CDR's padding of the whole message to 4
    ours, theirs = np.frombuffer(data, np.uint8), np.frombuffer(reference, np.uint8)
    assert (ours[~pad] == theirs[~pad]).all()
    assert not ours[pad].any()
    assert deserialize_message(data, type(typed)) == typed


def _random_answer(rng: np.random.Generator, names: list[str], feet: list[str]) -> Answer:
    n = len(names)
    scale = 10.0 ** rng.integers(-300, 300, size=(5, n))
    command = JointCommand(*(rng.normal(size=(5, n)) * scale))
    stamp = int(rng.integers(0, 2**31 * NS))
    stance = {foot: bool(rng.integers(2)) for foot in feet}
    return Answer(stamp, names, command, stance=stance, schedule_ns=stamp + int(rng.integers(0, 10**7)))


@pytest.mark.parametrize("seed", range(3))
def test_the_written_command_and_schedule_are_rclpys_bytes(seed: int) -> None:
    """Random commands and schedules, the joint and foot names changing now and then (the writers rebuild
    their templates): the written bytes are rclpy's serialization of the typed messages."""
    rng = np.random.default_rng(seed)
    command_writer, schedule_writer = joint_pd_command_writer(), contact_schedule_writer()
    for tick in range(60):
        names = JOINTS if tick % 20 < 15 else [f"j{k}" * (k + 1) for k in range(int(rng.integers(1, 8)))]
        feet = FEET if tick % 20 < 10 else [f"foot_{k}" * k for k in range(int(rng.integers(1, 6)))]
        answer = _random_answer(rng, names, feet)
        position, velocity, effort, kp, kd = answer.joint_command.arrays()
        data = command_writer.write(answer.stamp_ns, answer.names, position=position, velocity=velocity,
                                    effort=effort, kp=kp, kd=kd)
        walk = _Walk()
        walk.header_and_names("", names)
        for _ in range(5):
            walk.take(4)
            walk.take(8, len(names))
        assert isinstance(answer.command, JointPDCommand)
        _check(data, answer.command, walk.padding, walk.pos)

        assert answer.schedule_ns is not None
        assert answer.stance is not None
        data = schedule_writer.write(answer.schedule_ns, list(answer.stance),
                                     in_contact=list(answer.stance.values()))
        walk = _Walk()
        walk.header_and_names("", feet)
        walk.take(4)
        walk.take(1, len(feet))
        for _ in range(2):
            walk.take(4)
            walk.take(8, 3 * len(feet))
        assert isinstance(answer.contacts, ContactStates)
        _check(data, answer.contacts, walk.padding, walk.pos)
