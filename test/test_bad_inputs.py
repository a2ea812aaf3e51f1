"""The bad-input matrix: every named case lands in its expected category, none crashes, hangs or is unsafe.

One test per case (``test_core_case[<name>]``, ``test_node_case[<name>]``, ...), so one failure names one
case. The cases of a part run together once per module (a part shares its running graph, or its batches of
processes), in a module-scoped fixture that also prints the part's matrix (``-s``). With
``KINODYN_BAD_INPUT_TABLE=<file>`` every case's row (surface, case, input, expected, outcome, what was seen)
is appended to that file as Markdown. docs/bad-input-matrix.md describes the cases and the matrix.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from test.bad_inputs.core_cases import core_cases  # pytest --import-mode=importlib names it so
from test.bad_inputs.field_cases import (
    bag_cases,
    classify_field_call,
    field_in_process_cases,
    graph_cases,
    run_bag_cases,
    run_graph_cases,
)
from test.bad_inputs.matrix import CLEAR, FORBIDDEN, Case, Result, render, run_in_process, table_rows
from test.bad_inputs.node_cases import node_cases, run_node_cases
from test.bad_inputs.process_cases import (
    PHYSICS_CASE_NAMES,
    launcher_cases,
    launcher_sigkill_case,
    parameter_cases,
    run_physics_cases,
    run_startup_cases,
)
from test.conftest import ProcessSpawner
from test.ros_listener import Listener

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

_SCRATCH = Path(tempfile.mkdtemp(prefix="kinodyn-bad-inputs-"))
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)
CORE_CASES = core_cases(_SCRATCH)
"""Built once at collection: their names parametrise the tests and the fixture runs these same objects."""
FIELD_CASES = field_in_process_cases(_SCRATCH)
BAG_CASES = bag_cases()
GRAPH_CASES = graph_cases()
STARTUP_CASES = [*parameter_cases(), *launcher_cases()]
STARTUP_NAMES = [*(c.name for c in STARTUP_CASES), "launcher_sigkill"]
STARTUP_ORDER = sorted(STARTUP_CASES, key=lambda c: c.expected == CLEAR)
"""The order the batches start them: first the cases whose process is expected to go on running (judged at
the end of their wait), so that wait passes while the quick refusals run, not after them."""


def _names(cases: Sequence[Case]) -> list[str]:
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "case names are unique"
    return names


def _report(results: list[Result]) -> dict[str, Result]:
    """Print the part's matrix (and append its rows to KINODYN_BAD_INPUT_TABLE); results by case name."""
    print("\n" + render(results))
    if table := os.environ.get("KINODYN_BAD_INPUT_TABLE"):
        with Path(table).open("a") as out:
            out.write(table_rows(results))
    return {r.case.name: r for r in results}


def check(results: dict[str, Result], name: str) -> None:
    """Case ``name`` ran, is neither a crash/hang nor unsafe, and landed in its expected category."""
    assert name in results, f"case {name} did not run (the part stopped before it)"
    r = results[name]
    assert r.outcome.category not in FORBIDDEN, f"{name}: {r.outcome.category}: {r.outcome.detail}"
    assert r.ok, f"{name}: expected {r.case.expected}, got {r.outcome.category}: {r.outcome.detail}"


def _collect(run: Callable[[], Iterator[Result]]) -> dict[str, Result]:
    """The results of a part; a part that stops early keeps those it has (the rest report "did not run")."""
    results: list[Result] = []
    try:
        results.extend(run())
    finally:
        _report(results)
    return {r.case.name: r for r in results}


def _collect_with_processes(
    run: Callable[[ProcessSpawner, Path], Iterator[Result]], tmp: Path
) -> dict[str, Result]:
    """``_collect`` of a part that starts processes: they are all stopped as soon as the part has run, pass
    or fail, so no part meets another's nodes (two parts serve ``/quadruped_system/push``)."""
    spawner = ProcessSpawner(tmp)
    try:
        return _collect(lambda: run(spawner, tmp))
    finally:
        spawner.stop_all()


@pytest.fixture(scope="module")
def core_results() -> dict[str, Result]:
    return _report(run_in_process(CORE_CASES))


@pytest.fixture(scope="module")
def field_results() -> dict[str, Result]:
    return _report(run_in_process(FIELD_CASES, classify_field_call))


@pytest.fixture(scope="module")
def bag_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    return _collect(lambda: run_bag_cases(BAG_CASES, tmp_path_factory.mktemp("bag_cases")))


@pytest.fixture(scope="module")
def graph_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    return _collect_with_processes(lambda spawn, _: run_graph_cases(spawn, GRAPH_CASES),
                                   tmp_path_factory.mktemp("graph_cases"))


@pytest.fixture(scope="module")
def node_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    return _collect_with_processes(run_node_cases, tmp_path_factory.mktemp("node_cases"))


@pytest.fixture(scope="module")
def startup_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    def run(spawn: ProcessSpawner, tmp: Path) -> Iterator[Result]:
        yield from run_startup_cases(spawn, STARTUP_ORDER, tmp)
        yield launcher_sigkill_case(spawn, tmp)

    return _collect_with_processes(run, tmp_path_factory.mktemp("startup_cases"))


@pytest.fixture(scope="module")
def physics_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    listener = Listener("bad_inputs_physics")
    try:
        return _collect_with_processes(lambda spawn, tmp: run_physics_cases(spawn, tmp, listener),
                                       tmp_path_factory.mktemp("physics"))
    finally:
        listener.close()


@pytest.mark.parametrize("name", _names(CORE_CASES))
def test_core_case(core_results: dict[str, Result], name: str) -> None:
    check(core_results, name)


@pytest.mark.parametrize("name", _names(FIELD_CASES))
def test_field_case(field_results: dict[str, Result], name: str) -> None:
    check(field_results, name)


@pytest.mark.system
@pytest.mark.parametrize("name", _names(BAG_CASES))
def test_bag_case(bag_results: dict[str, Result], name: str) -> None:
    check(bag_results, name)


@pytest.mark.system
@pytest.mark.parametrize("name", _names(GRAPH_CASES))
def test_graph_case(graph_results: dict[str, Result], name: str) -> None:
    check(graph_results, name)


@pytest.mark.system
@pytest.mark.parametrize("name", _names(node_cases()))
def test_node_case(node_results: dict[str, Result], name: str) -> None:
    check(node_results, name)


@pytest.mark.system
@pytest.mark.parametrize("name", STARTUP_NAMES)
def test_startup_case(startup_results: dict[str, Result], name: str) -> None:
    check(startup_results, name)


@pytest.mark.system
@pytest.mark.parametrize("name", PHYSICS_CASE_NAMES)
def test_physics_case(physics_results: dict[str, Result], name: str) -> None:
    check(physics_results, name)
