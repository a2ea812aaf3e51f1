"""`rviz:=true` in every launch file, and the RViz config it opens.

rviz2 and ROS 2 launch are not installable here: the launch files run against the stand-in `launch` modules of
test_launcher (whose conditions evaluate on a dict of launch arguments). The live topics of the config are
checked in test_viewer_system.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
import yaml
from kinodyn_tools.launcher.packages import package_share

from test.conftest import REPO
from test.test_launcher import LAUNCH_FILES, _run_launch_file

if TYPE_CHECKING:
    from pathlib import Path

CONFIG = REPO / "config" / "kinodyn.rviz"


def rviz_entities(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """``(argument defaults, rviz2 node kwargs, its condition)`` of a launch file."""
    description, launched = _run_launch_file(path, monkeypatch)
    arguments = {e.name: e.default_value for e in description.entities if hasattr(e, "default_value")}
    (rviz,) = [node for node in launched if node["package"] == "rviz2"]
    return arguments, rviz, rviz["condition"]


@pytest.mark.parametrize("launch_file", LAUNCH_FILES, ids=lambda path: path.name)
def test_rviz_argument_adds_rviz2_with_the_config(launch_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arguments, rviz, condition = rviz_entities(launch_file, monkeypatch)
    assert arguments == {"rviz": "false", "rviz_fixed_frame": "odom"}
    assert condition(arguments) is False  # not started by default
    assert condition({**arguments, "rviz": "true"}) is True
    assert rviz["executable"] == "rviz2"
    assert "on_exit" not in rviz  # closing RViz leaves the graph running
    d, config, f, fixed_frame = rviz["arguments"]
    assert (d, f, fixed_frame.name) == ("-d", "-f", "rviz_fixed_frame")
    installed = package_share("kinodyn_bringup") / "config" / "kinodyn.rviz"
    assert config == str(installed)
    assert installed.read_text() == CONFIG.read_text(), f"{installed} is stale: run scripts/setup.sh"


def test_rviz_config_parses_and_shows_the_robot_odometry_and_markers() -> None:
    rviz = yaml.safe_load(CONFIG.read_text())
    manager = rviz["Visualization Manager"]
    displays = {d["Name"]: d for d in manager["Displays"]}
    assert {d["Class"] for d in displays.values()} >= {
        "rviz_default_plugins/RobotModel",
        "rviz_default_plugins/TF",
        "rviz_default_plugins/Odometry",
        "rviz_default_plugins/MarkerArray",
        "rviz_default_plugins/Grid",
    }
    robot = displays["RobotModel"]["Description Topic"]
    # robot_description is latched (state_publisher's transient-local publisher): RViz must ask for it
    assert (robot["Value"], robot["Durability Policy"]) == ("/robot_description", "Transient Local")
    assert displays["Estimated odometry"]["Topic"]["Value"] == "/odometry/filtered"
    assert displays["True odometry"]["Topic"]["Value"] == "/quadruped_system/odometry"
    assert displays["Viewer overlays"]["Topic"]["Value"] == "/viewer/markers"
    assert displays["Viewer overlays"]["Namespaces"] == {"kinodyn_viewer": True}
    assert manager["Global Options"]["Fixed Frame"] == "odom"
