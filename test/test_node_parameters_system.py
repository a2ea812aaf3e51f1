"""A misspelled parameter is an error at startup: one error line naming it, exit code 1.

Every kinodyn_ros node, given `rate_hzz` (a misspelling of joint_motion's and kinematics' `rate_hz`) on the
command line or in a params file, exits with code 1 and exactly one error line that names the parameter and
lists the ones the node accepts, with no traceback. The same parameter spelled right starts the node.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import pytest
import yaml

from test.conftest import REPO, wait_for  # pytest --import-mode=importlib names it so

if TYPE_CHECKING:
    from pathlib import Path

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

ROS_LIB = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros"
ARM7 = REPO / "urdf" / "arm7.urdf"
NODES = ["state_publisher", "joint_motion", "kinematics", "dynamics", "ee_pose_printer"]


@pytest.mark.parametrize("node", NODES)
@pytest.mark.parametrize("how", ["command_line", "params_file"])
def test_a_misspelled_parameter_ends_the_node_with_one_error_line(
    spawn: ProcessSpawner, tmp_path: Path, node: str, how: str,
) -> None:
    if how == "command_line":
        args = ["-p", f"robot_description_file:={ARM7}", "-p", "rate_hzz:=10.0"]
    else:
        params = tmp_path / "params.yaml"
        params.write_text(yaml.safe_dump(
            {"/**": {"ros__parameters": {"robot_description_file": str(ARM7), "rate_hzz": 10.0}}}
        ))
        args = ["--params-file", str(params)]
    proc = spawn([str(ROS_LIB / node), "--ros-args", *args], f"{node}_{how}")
    try:
        code = proc.wait(timeout=120)  # a Python node's start-up on a loaded machine included
    except subprocess.TimeoutExpired:
        pytest.fail(f"{node} kept running with a misspelled parameter")
    log = proc.log_path.read_text()
    errors = [line for line in log.splitlines() if "[ERROR]" in line]
    assert code == 1, log
    assert len(errors) == 1, log
    assert f"unknown parameter rate_hzz for node {node}" in errors[0]
    assert "robot_description_file" in errors[0].split("its parameters are: ")[1]
    assert "Traceback" not in log


def test_the_parameter_spelled_right_starts_the_node(spawn: ProcessSpawner) -> None:
    proc = spawn([str(ROS_LIB / "joint_motion"), "--ros-args", "-p", f"robot_description_file:={ARM7}", "-p",
                  "rate_hz:=10.0"], "joint_motion")
    assert wait_for(lambda: "moving 7 joints" in proc.log_path.read_text(), 120), proc.log_path.read_text()
    assert proc.poll() is None, proc.log_path.read_text()
    assert "at 10.0 Hz" in proc.log_path.read_text()
