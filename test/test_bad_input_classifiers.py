"""The bad-input matrix's classifiers (test/bad_inputs/matrix.py) on outcomes whose category is known: each
category is reachable, and the borderline cases fall on the intended side."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NoReturn

import numpy as np
import pytest

import kinodyn as kd
from test.bad_inputs.field_cases import Said, classify_said, classify_tool
from test.bad_inputs.matrix import (  # pytest --import-mode=importlib names it so
    CLEAR,
    CRASH,
    DOCUMENTED,
    SILENT,
    UNHELPFUL,
    UNSAFE,
    Case,
    Doc,
    NodeObservation,
    Result,
    classify_call,
    classify_exit,
    classify_node,
    render,
)

if TYPE_CHECKING:
    from collections.abc import Callable

PLANAR = "urdf/planar_2link.urdf"
EXISTING = Doc("docs/bad-input-matrix.md", "The core does not range-check joint positions")


def case(
    call: Callable[[], object] | None = None,
    expected: str = CLEAR,
    names: tuple[str, ...] = ("q",),
    doc: Doc | None = None,
    returns_finite: bool | None = None,
    cause: str = "",
) -> Case:
    return Case("core API", "c", "input", expected, call, names, doc, cause, returns_finite)


def raise_(exc: BaseException) -> Callable[[], NoReturn]:
    def go() -> NoReturn:
        raise exc

    return go


@pytest.mark.parametrize(
    ("call", "category"),
    [
        (lambda: kd.Model.from_urdf(PLANAR).frame_placement(np.zeros(3), "tool"), CLEAR),  # names q
        (lambda: kd.sim.Simulator(kd.Model.from_urdf(PLANAR), dt=-1.0), UNHELPFUL),  # names dt, not q
        (lambda: np.linalg.cholesky(-np.eye(2)), CRASH),  # raised in numpy
        (raise_(ValueError("q is bad")), CRASH),  # raised in this test module, not in kinodyn
        (lambda: kd.Model.from_urdf(PLANAR).rnea(np.full(2, math.nan), np.zeros(2), np.zeros(2)), SILENT),
        (lambda: kd.Model.from_urdf(PLANAR).rnea(np.zeros(2), np.zeros(2), np.zeros(2)), SILENT),
    ],
)
def test_classify_call(call: Callable[[], object], category: str) -> None:
    assert classify_call(case(call)).category == category


def test_documented_needs_the_sentence_and_the_stated_result() -> None:
    fk = lambda: kd.Model.from_urdf(PLANAR).frame_placement(np.array([1e300, 0.0]), "tool")  # noqa: E731
    assert classify_call(case(fk, DOCUMENTED, (), EXISTING, True)).category == DOCUMENTED
    assert classify_call(case(fk, DOCUMENTED, (), EXISTING, False)).category == SILENT  # says non-finite
    missing = Doc("docs/bad-input-matrix.md", "a sentence that is nowhere")
    assert classify_call(case(fk, DOCUMENTED, (), missing)).category == SILENT


def test_the_one_line_must_name_the_input() -> None:
    assert (
        classify_call(
            case(lambda: kd.sim.Simulator(kd.Model.from_urdf(PLANAR), dt=-1.0), names=("dt",))
        ).category
        == CLEAR
    )
    assert (
        classify_exit(
            case(names=("x",)), 1, "[ERROR] [1] [n]: x is bad\n[ERROR] [2] [n]: x again", 1.0
        ).category
        == UNHELPFUL
    )


def test_classify_node() -> None:
    c = case(names=("joint1",), cause="n:range")
    causes: set[str] = set()
    assert classify_node(c, NodeObservation(False, ""), causes).category == CRASH
    assert (
        classify_node(c, NodeObservation(True, "Traceback (most recent call last):"), causes).category
        == CRASH
    )
    assert classify_node(c, NodeObservation(True, "", non_finite=["/tf: x"]), causes).category == UNSAFE
    assert (
        classify_node(
            c, NodeObservation(True, "", reply=(True, "", {"e": np.array([math.nan])})), causes
        ).category
        == UNSAFE
    )
    assert (
        classify_node(c, NodeObservation(True, "", reply=(False, "joint1 = 1e300", {})), causes).category
        == CLEAR
    )
    assert (
        classify_node(c, NodeObservation(True, ""), causes).category == SILENT
    )  # no line, cause never logged
    assert (
        classify_node(c, NodeObservation(True, "[WARN] [1] [n]: ignoring: joint1 = 1e300"), causes).category
        == CLEAR
    )
    assert classify_node(c, NodeObservation(True, ""), causes).category == CLEAR  # throttled, logged before
    assert classify_node(c, NodeObservation(True, "", answered=False), causes).category == CRASH


def test_classify_exit() -> None:
    c = case(names=("rate_hzz",))
    assert classify_exit(c, 1, "[ERROR] [1] [n]: unknown parameter rate_hzz", 1.0).category == CLEAR
    assert classify_exit(c, 2, "usage: kinodyn ...\nkinodyn: error: unknown rate_hzz", 1.0).category == CLEAR
    assert classify_exit(c, None, "[INFO] started", 30.0).category == SILENT
    assert classify_exit(c, -9, "", 1.0).category == CRASH
    assert (
        classify_exit(c, 1, "Traceback (most recent call last):\nValueError: rate_hzz", 1.0).category == CRASH
    )


def test_render_counts_and_lists_the_cases_off() -> None:
    results = [
        Result(case(expected=CLEAR), classify_exit(case(), 1, "[ERROR] [1] [n]: q", 1.0)),
        Result(case(expected=CLEAR), classify_exit(case(), -9, "", 1.0)),
    ]
    text = render(results)
    assert "2 cases, 1 in their expected category, 1 not" in text
    assert "expected clear error, got crash/hang" in text


def test_what_a_field_surface_said_is_classified() -> None:
    """classify_said: a number through is unsafe; one error naming the input clear, two unhelpful; an
    acceptance needs exactly one warning naming it when the case has names, and a cited sentence."""
    named = case(names=("PacketCounter",), doc=EXISTING, expected=DOCUMENTED)
    assert classify_said(named, Said(unsafe="1e308 broadcast")).category == UNSAFE
    assert classify_said(named, Said(errors=["no PacketCounter"])).category == CLEAR
    assert classify_said(named, Said(errors=["a", "b"])).category == UNHELPFUL
    assert classify_said(named, Said(errors=["read failed"])).category == UNHELPFUL
    assert classify_said(named, Said(warnings=["PacketCounter 20001 not taken"])).category == DOCUMENTED
    assert classify_said(named, Said()).category == SILENT
    assert classify_said(named, Said(warnings=["PacketCounter", "PacketCounter"])).category == SILENT
    assert classify_said(case(names=(), doc=None, expected=SILENT), Said()).category == SILENT


def test_a_bag_command_is_classified_by_its_exit_and_lines() -> None:
    """classify_tool: a traceback, a signal or no exit is a crash; a non-zero exit is judged by its one
    ``error:`` line; exit 0 on a damaged bag needs exactly one line naming the damage."""
    damaged = case(names=("fails its check",), doc=EXISTING, expected=DOCUMENTED)
    assert classify_tool(damaged, 1, "", "Traceback (most recent call last):\nKeyError: 3").category == CRASH
    assert classify_tool(damaged, None, "", "").category == CRASH
    assert classify_tool(damaged, -9, "", "").category == CRASH
    assert classify_tool(damaged, 2, "", "kinodyn bag: error: chunk fails its check").category == CLEAR
    assert classify_tool(damaged, 2, "", "x: error: one\nx: error: two").category == UNHELPFUL
    said = "kinodyn bag: warning: b.mcap: chunk at byte 9 fails its check (CRC mismatch)"
    assert classify_tool(damaged, 0, "", said).category == DOCUMENTED
    assert classify_tool(damaged, 0, "Messages: 2004", "").category == SILENT
