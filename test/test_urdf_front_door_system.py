"""One URDF front door, system level: the real node executables on corpus entries.

state_publisher, kinematics, dynamics and control_node each get the same file as ``robot_description_file``.
On a refused entry of ``test/urdf_corpus.py`` each must exit with code 1 and print one error line with the
same reason (the corpus message, after the node's name); on the accepted entry with a fixed-joint mimic
each must start (its startup line) and print that one warning. Every process is stopped at the end.
"""

from __future__ import annotations

import re
import subprocess
from typing import TYPE_CHECKING

import pytest

from test.conftest import REPO, wait_for  # pytest --import-mode=importlib names it so
from test.urdf_corpus import REFUSED, WARNED

if TYPE_CHECKING:
    from pathlib import Path

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

ROS_LIB = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros"
NODES = {
    "state_publisher": ROS_LIB / "state_publisher",
    "kinematics": ROS_LIB / "kinematics",
    "dynamics": ROS_LIB / "dynamics",
    "control_node": REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node",
}
CASES = ("nan_joint_origin", "missing_parent_link", "nan_limit_effort", "nan_ros2_control_min", "binary_file")
"""Four defects that only a full validation catches (control_node reads the URDF through it) and a binary
file."""
GENERIC = ('<plugin>kinodyn_control/SimulatedSystem</plugin><param name="ros_interface">false</param>',
           "<plugin>kinodyn_control/GenericSystem</plugin>")
LOG_LINE = re.compile(r"^\[(?P<level>[A-Z]+)\] \[[0-9.]+\] \[(?P<node>[^\]]+)\]: (?P<text>.*)$")


def _lines(log: str, level: str) -> list[str]:
    """The text of every ``level`` line of a node's output (ROS 2 console format)."""
    return [m["text"] for line in log.splitlines() if (m := LOG_LINE.match(line)) and m["level"] == level]


def _started(proc: subprocess.Popen, source: str) -> bool:
    """The node logged its startup line (state_publisher, kinematics, dynamics: "URDF from <source>: ...",
    control_node: "<source>: hardware ...")."""
    return any(text.startswith((f"URDF from {source}", f"{source}: hardware"))
               for text in _lines(proc.log_path.read_text(), "INFO"))  # type: ignore[attr-defined]


def _start_all(spawn: ProcessSpawner, path: Path, case: str) -> dict[str, subprocess.Popen]:
    return {name: spawn([str(exe), "--ros-args", "-p", f"robot_description_file:={path}"], f"{name}_{case}")
            for name, exe in NODES.items()}


@pytest.mark.parametrize("case", CASES)
def test_every_node_exits_with_the_same_reason(spawn: ProcessSpawner, tmp_path: Path, case: str) -> None:
    urdf, expected = REFUSED[case]
    path = tmp_path / f"{case}.urdf"
    path.write_bytes(urdf if isinstance(urdf, bytes) else urdf.encode())
    reason = f"robot_description_file {str(path)!r} is not a usable URDF: {expected}; exiting"
    for name, proc in _start_all(spawn, path, case).items():
        try:
            code = proc.wait(timeout=120)  # four Python nodes starting at once on a loaded machine
        except subprocess.TimeoutExpired:
            pytest.fail(f"{name} did not exit on URDF case {case}")
        log = proc.log_path.read_text()
        assert code == 1, f"{name}: {log}"
        assert _lines(log, "ERROR") == [reason], f"{name}: {log}"
        assert "Traceback" not in log, f"{name}: {log}"


def test_every_node_accepts_a_fixed_joint_mimic_with_one_warning(
    spawn: ProcessSpawner, tmp_path: Path,
) -> None:
    urdf, note = WARNED["mimic_in_fixed_joint"]
    path = tmp_path / "fixed_mimic.urdf"
    path.write_text(urdf.replace(*GENERIC))
    source = f"robot_description_file {str(path)!r}"
    for name, proc in _start_all(spawn, path, "fixed_mimic").items():
        assert wait_for(lambda p=proc: _started(p, source) or p.poll() is not None, timeout=120), name
        log = proc.log_path.read_text()
        assert proc.poll() is None, f"{name}: {log}"
        assert _started(proc, source), f"{name}: {log}"
        assert _lines(log, "WARN") == [f"{source}: {note}"], f"{name}: {log}"
        assert not _lines(log, "ERROR"), f"{name}: {log}"
