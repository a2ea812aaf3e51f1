"""kinodyn_common.stamps: the one conversion between stamps, nanoseconds and seconds, and the check that no
other module spells out its own nanoseconds-per-second."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from builtin_interfaces.msg import Time
from kinodyn_common.conversions import InputError
from kinodyn_common.stamps import NS, ns_to_stamp, seconds_to_ns, seconds_to_stamp, split_ns, stamp_to_ns
from rclpy.time import Time as RclpyTime

SRC = Path(__file__).resolve().parents[2]
STAMPS = SRC / "kinodyn_common" / "kinodyn_common" / "stamps.py"


@pytest.mark.parametrize("ns", [0, 1, NS - 1, NS, 1_700_000_000 * NS + 123_456_789, 2**31 * NS - 1])
def test_nanoseconds_round_trip_through_a_stamp_as_rclpy_converts_them(ns: int) -> None:
    stamp = ns_to_stamp(ns)
    reference = RclpyTime(nanoseconds=ns).to_msg()  # a second source: rclpy's own conversion
    assert (stamp.sec, stamp.nanosec) == (reference.sec, reference.nanosec)
    assert split_ns(ns) == (reference.sec, reference.nanosec)
    assert stamp_to_ns(stamp) == ns


@pytest.mark.parametrize("stamp", [Time(sec=-1), Time(sec=0, nanosec=NS), Time(sec=5, nanosec=4_000_000_000)])
def test_stamp_to_ns_refuses_what_is_not_a_time(stamp: Time) -> None:
    with pytest.raises(InputError, match="is not a time") as caught:
        stamp_to_ns(stamp)
    assert caught.value.key == ("bad_stamp", ())


def test_seconds_round_to_the_nearest_nanosecond_carrying_into_the_next_second() -> None:
    assert seconds_to_ns(0.002 * 7) == 14_000_000
    assert seconds_to_ns(1.0 - 2e-10) == NS  # rounds up, carrying: never nanosec == 1e9
    stamp = seconds_to_stamp(1.0 - 2e-10)
    assert (stamp.sec, stamp.nanosec) == (1, 0)
    stamp = seconds_to_stamp(12.345678901)
    assert (stamp.sec, stamp.nanosec) == (12, 345_678_901)


def _spelled_out_seconds(tree: ast.AST) -> list[int]:
    """Lines holding nanoseconds per second as a literal: 1_000_000_000 or 10**9."""
    lines = []
    for node in ast.walk(tree):
        literal = isinstance(node, ast.Constant) and type(node.value) is int and node.value == NS
        power = (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
                 and ast.unparse(node).replace(" ", "") == "10**9")
        if literal or power:
            lines.append(node.lineno)  # type: ignore[attr-defined]  # every matched node is an expression
    return lines


def test_the_check_finds_a_spelled_out_second() -> None:
    assert _spelled_out_seconds(ast.parse("NS = 1_000_000_000\nt = ns // 10 ** 9\nx = 1e9\n")) == [1, 2]


def test_no_module_but_stamps_spells_out_nanoseconds_per_second() -> None:
    files = sorted(p for p in SRC.glob("kinodyn_*/**/*.py") if p != STAMPS)
    assert len(files) > 100  # the packages were found
    found = [f"{p.relative_to(SRC)}:{line}"
             for p in files for line in _spelled_out_seconds(ast.parse(p.read_text()))]
    assert not found, f"use kinodyn_common.stamps (NS, stamp_to_ns, ns_to_stamp, ...) instead: {found}"
