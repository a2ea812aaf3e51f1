"""bench/results.py writes one section per bench into the results file, and ``--no-record`` leaves it alone;
bench/run_all.py runs every bench in bench/, each of which takes that flag."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import results  # noqa: E402
import run_all  # noqa: E402

if TYPE_CHECKING:
    import pytest

HELPERS = {"results.py", "run_all.py", "tsid_quadruped.py"}  # the writer, the runner, TSID's worker


def test_a_section_is_added_then_replaced_and_the_others_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "RESULTS.md"
    results.record("bench_a", "| x |\n| --- |\n| 1 |", path)
    results.record("bench_b", "b's figures", path)
    results.record("bench_a", "a's second run", path)
    text = path.read_text()
    assert text.startswith(results.HEADER)
    assert text.count("## bench_a\n") == 1
    assert text.count("## bench_b\n") == 1
    assert "a's second run" in text
    assert "| 1 |" not in text
    assert text.index("## bench_a") < text.index("## bench_b")  # replaced in place
    assert "b's figures" in text
    assert text.count("load average") == 2  # each section states the conditions of its run


def test_no_record_leaves_the_file_as_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "RESULTS.md"
    results.record("bench_a", "first", path)
    before = path.read_bytes()
    results.record("bench_a", "second", path, no_record=True)
    results.record("bench_c", "third", path, no_record=True)
    assert path.read_bytes() == before
    assert "--no-record" in capsys.readouterr().out
    missing = tmp_path / "none.md"
    results.record("bench_a", "first", missing, no_record=True)
    assert not missing.exists()


def test_the_flag() -> None:
    parser = argparse.ArgumentParser()
    results.add_record_flag(parser)
    assert parser.parse_args([]).no_record is False
    assert parser.parse_args(["--no-record"]).no_record is True


def test_markdown_rows() -> None:
    assert results.markdown_header("a", "b") == "| a | b |\n| --- | --- |"
    assert results.markdown_row("x", 1.5, 2) == "| x | 1.5 | 2 |"


def test_run_all_runs_every_bench_and_each_takes_the_flag() -> None:
    benches = {p.name for p in BENCH.glob("*.py")} - HELPERS
    listed = {script for script, _, _ in run_all.RUNS}
    assert listed == benches, f"bench/run_all.py RUNS misses {benches - listed} or lists {listed - benches}"
    for name in benches:
        assert "add_record_flag(parser)" in (BENCH / name).read_text(), f"{name} does not take --no-record"


# the benches that start no ROS graph (those run nodes for tens of seconds each: `run_all.py --short` checks
# them all); a bench whose call into the code it times has drifted fails here instead of when next recorded
WITHOUT_ROS_GRAPH = ("bench_core", "bench_evaluation", "bench_ik", "bench_qp", "bench_sim", "bench_wbc",
                     "bench_mpc", "bench_locomotion", "bench_estimation", "estimation_accuracy",
                     "bench_drivers", "bench_messages")


def test_the_benches_without_a_ros_graph_run_in_their_short_settings() -> None:
    runs = [run for run in run_all.RUNS if Path(run[0]).stem in WITHOUT_ROS_GRAPH]
    assert {Path(run[0]).stem for run in runs} == set(WITHOUT_ROS_GRAPH)
    command = [sys.executable, str(BENCH / "run_all.py"), "--short", "--only", *WITHOUT_ROS_GRAPH]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{len(runs)} of {len(runs)} runs succeeded" in done.stdout
