"""The bad-input matrix (issue 9, point 7): every named case lands in its expected category, none crashes or
hangs, none is unsafe. ``python -m pytest test/test_bad_inputs.py -s`` prints the matrix of each part;
with ``KINODYN_BAD_INPUT_TABLE=<file>`` every case's row (surface, case, input, expected, outcome, what was
seen) is appended to that file as Markdown. docs/bad-input-matrix.md describes the cases and shows the
latest matrix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from test.bad_inputs.core_cases import core_cases  # pytest --import-mode=importlib names it so
from test.bad_inputs.matrix import FORBIDDEN, Result, render, run_in_process, table_rows
from test.bad_inputs.node_cases import node_cases, run_node_cases
from test.bad_inputs.process_cases import (
    launcher_cases,
    launcher_sigkill_case,
    parameter_cases,
    run_physics_cases,
    run_startup_cases,
)
from test.ros_listener import Listener


def check(results: list[Result]) -> None:
    """Print the matrix, then assert: nothing forbidden, every case in its expected category."""
    print("\n" + render(results))
    if table := os.environ.get("KINODYN_BAD_INPUT_TABLE"):
        with Path(table).open("a") as out:
            out.write(table_rows(results))
    forbidden = [f"{r.case.name}: {r.outcome.detail}" for r in results if r.outcome.category in FORBIDDEN]
    assert not forbidden, "crash/hang or unsafe:\n" + "\n".join(forbidden)
    off = [
        f"{r.case.name}: expected {r.case.expected}, got {r.outcome.category}: {r.outcome.detail}"
        for r in results
        if not r.ok
    ]
    assert not off, "\n".join(off)


def test_core_urdf_and_simulator_cases(tmp_path: Path) -> None:
    cases = core_cases(tmp_path)
    assert len({c.name for c in cases}) == len(cases), "case names are unique"
    check(run_in_process(cases))


@pytest.mark.system
def test_topic_service_and_control_node_cases(spawn, tmp_path: Path) -> None:
    results = list(run_node_cases(spawn, tmp_path))
    assert len(results) == len(node_cases())
    check(results)


@pytest.mark.system
def test_parameter_launcher_and_physics_fault_cases(spawn, tmp_path: Path) -> None:
    cases = [*parameter_cases(), *launcher_cases()]
    results = list(run_startup_cases(spawn, cases, tmp_path))
    results.append(launcher_sigkill_case(spawn, tmp_path))
    listener = Listener("bad_inputs_physics")
    try:
        results += run_physics_cases(spawn, tmp_path, listener)
    finally:
        listener.close()
    check(results)
