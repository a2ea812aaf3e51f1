"""The graph launcher `kinodyn` (docs/launcher.md) and the launch files that start the same graphs.

1. Every graph file in config/ has a launch file in launch/, and that launch file, run against stand-ins for
   `launch` and `launch_ros` (not installable here), creates exactly the nodes, packages, executables,
   parameters and remappings that `load_graph` and `kinodyn list` give.
2. `kinodyn up` with stand-in nodes (test/fixtures/fake_node.py, installed into a throw-away ament prefix as
   package `kinodyn_test_nodes`, so package lookup is exercised for real): prefixed output, names, parameters
   and remappings reach the nodes; Ctrl-C, SIGTERM, --timeout and a dying node stop every process of every
   node group, with the documented exit codes; a launcher killed with SIGKILL leaves no node process and no
   parameter file behind; malformed graph files give one error line and exit code 2.
3. Every graph file's real nodes appear in the ROS graph with the parameters of the graph file, and stop
   cleanly (exit code 0, no escalation) when the launcher gets Ctrl-C.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import rclpy
import yaml
from kinodyn_tools.launcher.cli import main
from kinodyn_tools.launcher.graph import installed_graph, load_graph
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters

from test.conftest import PYTHON, REPO, wait_for  # pytest --import-mode=importlib names it so

if TYPE_CHECKING:
    from rclpy.node import Node as RclpyNode

    from test.conftest import ProcessSpawner

GRAPH_FILES = sorted((REPO / "config").glob("*.yaml"))
LAUNCH_FILES = sorted((REPO / "launch").glob("*.launch.py"))
TEST_PACKAGE = "kinodyn_test_nodes"
FAKE_NODE = REPO / "test" / "fixtures" / "fake_node.py"


# --- 1. launch files and graph files ------------------------------------------------------------------------


def test_every_graph_file_has_one_launch_file() -> None:
    assert GRAPH_FILES, "no graph files in config/"
    launch_graphs = [path.name.removesuffix(".launch.py") for path in LAUNCH_FILES]
    assert [path.stem for path in GRAPH_FILES] == launch_graphs


def _fake_launch_modules(recorded: list[dict[str, Any]]) -> dict[str, types.ModuleType]:
    """`launch` (with `actions`, `conditions`, `substitutions`) and `launch_ros.actions`, with the classes a
    launch file uses; a condition is evaluated on a dict of launch arguments: ``condition(arguments)``."""
    class LaunchDescription:
        def __init__(self, entities: list[Any]) -> None:
            self.entities = entities

    class Shutdown:
        def __init__(self, reason: str) -> None:
            self.reason = reason

    class Node:
        def __init__(self, **kwargs: object) -> None:
            recorded.append(kwargs)

    class DeclareLaunchArgument:
        def __init__(self, name: str, default_value: str, description: str) -> None:
            self.name, self.default_value, self.description = name, default_value, description

    class LaunchConfiguration:
        def __init__(self, name: str) -> None:
            self.name = name

    class IfCondition:
        def __init__(self, predicate: LaunchConfiguration) -> None:
            self.predicate = predicate

        def __call__(self, arguments: dict[str, str]) -> bool:
            return arguments[self.predicate.name].lower() in ("true", "1")

    names = ("launch", "launch.actions", "launch.conditions", "launch.substitutions", "launch_ros",
             "launch_ros.actions")
    modules = {name: types.ModuleType(name) for name in names}
    modules["launch"].LaunchDescription = LaunchDescription
    modules["launch.actions"].Shutdown = Shutdown
    modules["launch.actions"].DeclareLaunchArgument = DeclareLaunchArgument
    modules["launch.conditions"].IfCondition = IfCondition
    modules["launch.substitutions"].LaunchConfiguration = LaunchConfiguration
    modules["launch"].actions = modules["launch.actions"]
    modules["launch_ros.actions"].Node = Node
    modules["launch_ros"].actions = modules["launch_ros.actions"]
    return modules


def _run_launch_file(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[dict[str, Any]]]:
    recorded: list[dict[str, Any]] = []
    for name, module in _fake_launch_modules(recorded).items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location(f"launch_file_{path.stem.replace('.', '_')}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_launch_description(), recorded


def _listed_nodes(graph_file: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    capsys.readouterr()
    assert main(["list", str(graph_file)]) == 0
    return yaml.safe_load(capsys.readouterr().out)


@pytest.mark.parametrize("graph_file", GRAPH_FILES, ids=lambda path: path.stem)
def test_launch_file_starts_the_nodes_of_its_graph_file(
    graph_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    installed = installed_graph(graph_file.stem)
    assert installed.read_text() == graph_file.read_text(), f"{installed} is stale: run scripts/setup.sh"
    description, launched = _run_launch_file(REPO / "launch" / f"{graph_file.stem}.launch.py", monkeypatch)
    graph = load_graph(graph_file)
    listed = _listed_nodes(graph_file, capsys)

    # then the rviz arguments and the conditional rviz2 node (test/test_viewer_launch.py)
    assert [node["package"] for node in launched[len(graph.nodes):]] == ["rviz2"]
    launched = launched[: len(graph.nodes)]
    assert len(description.entities) == len(graph.nodes) + 3
    assert len(graph.nodes) == len(launched) == len(listed)
    assert [node["name"] for node in launched] == [node.name for node in graph.nodes] == list(listed)
    for node, spec in zip(launched, graph.nodes, strict=True):
        shown = listed[spec.name]
        assert (node["package"], node["executable"]) == (spec.package, spec.executable)
        assert (shown["package"], shown["executable"]) == (spec.package, spec.executable)
        assert node["parameters"] == [spec.parameters] == [listed[spec.name]["parameters"]]
        assert dict(node["remappings"]) == spec.remappings == listed[spec.name]["remappings"]
        assert node["output"] == "screen"
        assert [action.reason for action in node["on_exit"]] == [f"node '{spec.name}' exited"]
        assert listed[spec.name]["path"] == str(spec.executable_path)


def test_a_graph_named_without_path_is_the_installed_one(capsys: pytest.CaptureFixture[str]) -> None:
    by_name = _listed_nodes(Path("planar_demo"), capsys)
    by_path = _listed_nodes(REPO / "config" / "planar_demo.yaml", capsys)
    assert by_name == by_path
    assert main(["list", "planar_demo"]) == 0
    assert capsys.readouterr().out.startswith(f"# {installed_graph('planar_demo')}: ")


def test_demo_graphs_use_the_shipped_urdfs() -> None:
    for graph_file in GRAPH_FILES:
        for node in load_graph(graph_file).nodes:
            urdf = Path(node.parameters["robot_description_file"])
            assert urdf.is_file(), f"{graph_file.name}: node {node.name}: {urdf} does not exist"
            shipped = REPO / urdf.relative_to(installed_graph("any").parents[1])  # urdf/..., urdf/public/...
            assert urdf.read_text() == shipped.read_text()


def test_every_graph_has_one_publisher_of_the_floating_base_transform() -> None:
    """state_estimator (publish_tf, default true), its in-process controller (kinodyn_control/
    LeggedStateEstimator in control_node, publish_tf default true) and state_publisher (odometry_topic) each
    turn odometry into /tf: a graph with two would put every odom -> base_link stamp twice on /tf (tf2's
    TF_REPEATED_DATA)."""
    checked = 0
    for graph_file in GRAPH_FILES:
        publishers = []
        for node in load_graph(graph_file).nodes:
            params = node.parameters
            if (node.executable == "state_estimator" and params.get("publish_tf", True)) or (
                node.executable == "state_publisher" and params.get("odometry_topic")
            ):
                publishers.append(node.name)
            if node.executable == "control_node":
                publishers += [f"{node.name}/{name}" for name, value in params.items()
                               if isinstance(value, dict)
                               and value.get("type") == "kinodyn_control/LeggedStateEstimator"
                               and value.get("publish_tf", True)]
        assert len(publishers) <= 1, f"{graph_file.name}: {publishers} all publish the floating base on /tf"
        checked += bool(publishers)
    assert checked >= 2  # quadruped_wbc's estimator node, quadruped_rt's estimator controller


# --- 2. the launcher with stand-in nodes --------------------------------------------------------------------


@pytest.fixture
def test_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ament prefix with package `kinodyn_test_nodes` and its executable `fake_node`, on the path."""
    prefix = tmp_path / "prefix"
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages" / TEST_PACKAGE
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    (prefix / "share" / TEST_PACKAGE).mkdir()
    lib = prefix / "lib" / TEST_PACKAGE
    lib.mkdir(parents=True)
    executable = lib / "fake_node"
    executable.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{FAKE_NODE}" "$@"\n')
    executable.chmod(0o755)
    (lib / "README").write_text("not executable, so not a node\n")
    monkeypatch.setenv("AMENT_PREFIX_PATH", f"{prefix}{os.pathsep}{os.environ.get('AMENT_PREFIX_PATH', '')}")
    return prefix


def _write_graph(
    tmp_path: Path,
    nodes: dict[str, dict[str, Any]],
    remappings: dict[str, dict[str, str]] | None = None,
    text: str | None = None,
) -> Path:
    """A graph file of `fake_node` nodes as name -> parameters (and remappings), or the literal `text`."""
    path = tmp_path / "graph.yaml"
    if text is None:
        entries = [
            {"name": name, "package": TEST_PACKAGE, "executable": "fake_node", "parameters": parameters}
            | ({"remappings": remappings[name]} if remappings and name in remappings else {})
            for name, parameters in nodes.items()
        ]
        text = "# stand-in nodes for the launcher tests\n" + yaml.safe_dump({"nodes": entries})
    path.write_text(text)
    return path


def _kinodyn() -> str:
    path = shutil.which("kinodyn")
    assert path is not None, "the kinodyn console script is not on PATH: source scripts/env.sh"
    return path


def _alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def _pids(pid_file: Path) -> list[int]:
    return [int(line) for line in pid_file.read_text().split()]


def _log_has(proc: subprocess.Popen, *texts: str) -> bool:
    log = proc.log_path.read_text()  # type: ignore[attr-defined]
    return all(text in log for text in texts)


def _log_lines(proc: subprocess.Popen) -> list[str]:
    return proc.log_path.read_text().splitlines()  # type: ignore[attr-defined]


def test_list_shows_resolved_parameters_and_the_description(
    tmp_path: Path, test_prefix: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = f"""# two stand-in nodes
# for the launcher tests
nodes:
  - name: alpha
    package: {TEST_PACKAGE}
    executable: fake_node
    parameters:
      model: $(find-pkg-share {TEST_PACKAGE})/robot.urdf
      gains: {{kp: 2.0, kd: [0.5, 0.25]}}
      enabled: true
    remappings: {{chatter: talk}}
  - name: beta
    package: {TEST_PACKAGE}
    executable: fake_node
"""
    graph_file = _write_graph(tmp_path, {}, text=text)
    capsys.readouterr()
    assert main(["list", str(graph_file)]) == 0
    listing = capsys.readouterr().out
    assert listing.splitlines()[0] == f"# {graph_file}: two stand-in nodes for the launcher tests"
    assert yaml.safe_load(listing) == {
        "alpha": {
            "package": TEST_PACKAGE,
            "executable": "fake_node",
            "path": str(test_prefix / "lib" / TEST_PACKAGE / "fake_node"),
            "parameters": {
                "model": f"{test_prefix / 'share' / TEST_PACKAGE}/robot.urdf",
                "gains": {"kp": 2.0, "kd": [0.5, 0.25]},
                "enabled": True,
            },
            "remappings": {"chatter": "talk"},
        },
        "beta": {
            "package": TEST_PACKAGE,
            "executable": "fake_node",
            "path": str(test_prefix / "lib" / TEST_PACKAGE / "fake_node"),
            "parameters": {},
            "remappings": {},
        },
    }


def test_nodes_lists_the_executables_of_the_kinodyn_packages(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nodes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    lib = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros"
    expected = sorted(f"kinodyn_ros {path.name}" for path in lib.iterdir())
    assert sorted(line for line in lines if line.startswith("kinodyn_ros ")) == expected
    assert "kinodyn_ros state_publisher" in lines


@pytest.mark.parametrize(("signum", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stop_signal_stops_every_process_of_every_node(
    signum: signal.Signals, exit_code: int, tmp_path: Path, test_prefix: Path, spawn: ProcessSpawner
) -> None:
    graph_file = _write_graph(
        tmp_path,
        {
            "alpha": {
                "pid_file": str(tmp_path / "alpha.pids"),
                "spawn_child": True,
                "rate": 2.5,
                "label": "two words",
                "gains": {"kp": 1.0},
            },
            "beta": {"pid_file": str(tmp_path / "beta.pids")},
        },
        remappings={"alpha": {"chatter": "talk"}},
    )
    launcher = spawn([_kinodyn(), "up", str(graph_file), "--stop-timeout", "2"], "launcher")
    ready = wait_for(lambda: _log_has(launcher, "[alpha] ready", "[beta] ready"), timeout=30)
    assert ready, _log_lines(launcher)
    node_pids = _pids(tmp_path / "alpha.pids") + _pids(tmp_path / "beta.pids")
    assert len(node_pids) == 3
    assert all(_alive(pid) for pid in node_pids)

    os.killpg(launcher.pid, signum)  # as the terminal does on Ctrl-C: the launcher's own process group
    assert launcher.wait(timeout=30) == exit_code

    lines = _log_lines(launcher)
    assert not [pid for pid in node_pids if _alive(pid)], lines
    assert {line.split("] ", 1)[0] + "]" for line in lines} == {"[alpha]", "[beta]", "[kinodyn]"}, lines
    for expected in (
        "[alpha] name alpha",
        "[alpha] parameter rate=2.5",
        "[alpha] parameter label='two words'",
        "[alpha] parameter gains={'kp': 1.0}",
        "[alpha] remap chatter:=talk",
        "[alpha] stderr line of alpha",
        "[beta] name beta",
        f"[kinodyn] received {signum.name}; stopping the graph",
        "[beta] stopping on SIGINT",
        "[kinodyn] node 'beta' stopped with code 0",
    ):
        assert expected in lines, (expected, lines)
    # alpha's own process stops on SIGINT, its SIGINT-ignoring child only on the escalation to SIGTERM
    assert "[alpha] stopping on SIGINT" in lines
    assert "[kinodyn] node(s) 'alpha' still running 2 s after SIGINT; sending SIGTERM" in lines
    assert "[kinodyn] node 'alpha' stopped with code 0" in lines


def test_node_that_ignores_sigint_is_terminated(
    tmp_path: Path, test_prefix: Path, spawn: ProcessSpawner,
) -> None:
    pid_file = tmp_path / "stubborn.pids"
    graph_file = _write_graph(tmp_path, {"stubborn": {"ignore_sigint": True, "pid_file": str(pid_file)}})
    launcher = spawn([_kinodyn(), "up", str(graph_file), "--stop-timeout", "1"], "launcher")
    assert wait_for(lambda: _log_has(launcher, "[stubborn] ready"), timeout=30), _log_lines(launcher)
    os.killpg(launcher.pid, signal.SIGINT)
    assert launcher.wait(timeout=30) == 130
    lines = _log_lines(launcher)
    assert not _alive(_pids(pid_file)[0])
    assert "[kinodyn] node(s) 'stubborn' still running 1 s after SIGINT; sending SIGTERM" in lines
    assert "[kinodyn] node 'stubborn' stopped with code -15 (killed by SIGTERM)" in lines


def test_node_ignoring_sigint_and_sigterm_with_its_main_thread_ended_is_killed(
    tmp_path: Path, test_prefix: Path, spawn: ProcessSpawner
) -> None:
    """A group leader that is a zombie while its worker thread runs is a live node (not a stopped one,
    which would end the launcher in an AssertionError); SIGTERM and SIGKILL follow, one line each."""
    pid_file = tmp_path / "stubborn.pids"
    parameters = {"ignore_sigint": True, "ignore_sigterm": True, "main_thread_exits": True,
                  "pid_file": str(pid_file)}
    graph_file = _write_graph(tmp_path, {"stubborn": parameters})
    launcher = spawn([_kinodyn(), "up", str(graph_file), "--stop-timeout", "1"], "launcher")
    assert wait_for(lambda: _log_has(launcher, "[stubborn] ready"), timeout=30), _log_lines(launcher)
    pid = _pids(pid_file)[0]
    assert wait_for(lambda: "State:\tZ" in Path(f"/proc/{pid}/status").read_text(), timeout=10)
    assert Path(f"/proc/{pid}/task").exists()
    assert len(list(Path(f"/proc/{pid}/task").iterdir())) >= 1
    os.killpg(launcher.pid, signal.SIGINT)
    assert launcher.wait(timeout=30) == 130
    lines = _log_lines(launcher)
    assert not Path(f"/proc/{pid}").exists()
    escalation = [line for line in lines if "still running" in line]
    assert escalation == [
        "[kinodyn] node(s) 'stubborn' still running 1 s after SIGINT; sending SIGTERM",
        "[kinodyn] node(s) 'stubborn' still running 1 s after SIGTERM; sending SIGKILL",
    ], lines
    assert "[kinodyn] node 'stubborn' stopped with code -9 (killed by SIGKILL)" in lines
    assert not [line for line in lines if "Traceback" in line or "Error" in line], lines


def test_timeout_stops_the_graph_with_exit_code_0(
    tmp_path: Path, test_prefix: Path, spawn: ProcessSpawner,
) -> None:
    graph_file = _write_graph(tmp_path, {"alpha": {}, "beta": {}})
    launcher = spawn([_kinodyn(), "up", str(graph_file), "--timeout", "2"], "launcher")
    assert launcher.wait(timeout=30) == 0
    lines = _log_lines(launcher)
    assert "[kinodyn] timeout of 2 s reached; stopping the graph" in lines
    for name in ("alpha", "beta"):
        assert any(line.startswith(f"[kinodyn] node '{name}' stopped with code") for line in lines), lines


@pytest.mark.parametrize("code", [1, 3])
def test_node_exit_stops_the_graph_with_a_message_and_exit_code_1(
    code: int, tmp_path: Path, test_prefix: Path, spawn: ProcessSpawner
) -> None:
    graph_file = _write_graph(
        tmp_path,
        {
            "steady": {"pid_file": str(tmp_path / "steady.pids")},
            "fragile": {"exit_when": str(tmp_path / "steady.pids"), "exit_code": code},  # once steady runs
        },
    )
    launcher = spawn([_kinodyn(), "up", str(graph_file)], "launcher")
    assert launcher.wait(timeout=30) == 1
    lines = _log_lines(launcher)
    assert not _alive(_pids(tmp_path / "steady.pids")[0])
    message = f"[kinodyn] node 'fragile' exited with code {code}; stopping the graph"
    assert message in lines
    assert lines.index(f"[fragile] exiting with code {code}") < lines.index(message) < lines.index(
        "[steady] stopping on SIGINT"
    )
    assert "[kinodyn] node 'steady' stopped with code 0" in lines


def _guard_of(launcher_pid: int) -> int:
    """The pid of the launcher's guard process (its child running kinodyn_tools.launcher.guard)."""
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):  # not a process, or it ended while we looked
            continue
        if ppid == launcher_pid and b"kinodyn_tools.launcher.guard" in command:
            return int(entry.name)
    raise AssertionError(f"the launcher (pid {launcher_pid}) has no guard process")


@pytest.mark.parametrize("guard_killed_too", [False, True], ids=["guard_stops_the_groups", "without_guard"])
def test_killed_launcher_leaves_no_node_and_no_parameter_file(
    guard_killed_too: bool, tmp_path: Path, test_prefix: Path, spawn: ProcessSpawner
) -> None:
    """SIGKILL to the launcher: its guard stops every node group, escalating past a node and a child that
    ignore SIGINT; with the guard killed too, each node still gets SIGINT from the kernel (PDEATHSIG)."""
    temp_dir = tmp_path / "tmp"  # where tempfile would put a parameter folder for this launcher
    temp_dir.mkdir()
    nodes: dict[str, dict[str, Any]] = {
        "polite": {"pid_file": str(tmp_path / "polite.pids"), "gains": {"kp": 1.0}},
        "stubborn": {"pid_file": str(tmp_path / "stubborn.pids"), "ignore_sigint": True, "tick": True},
        "careless": {"pid_file": str(tmp_path / "careless.pids"), "spawn_child": True},
    }
    if guard_killed_too:  # without the guard only the node processes themselves are signalled, with SIGINT
        nodes = {"polite": nodes["polite"]}
    graph_file = _write_graph(tmp_path, nodes)
    launcher = spawn(
        [_kinodyn(), "up", str(graph_file), "--stop-timeout", "1"],
        "launcher",
        env=dict(os.environ, TMPDIR=str(temp_dir)),
    )
    ready = [f"[{name}] ready" for name in nodes]
    assert wait_for(lambda: _log_has(launcher, *ready), timeout=30), _log_lines(launcher)
    assert "[polite] parameter gains={'kp': 1.0}" in _log_lines(launcher)
    node_pids = [pid for name in nodes for pid in _pids(tmp_path / f"{name}.pids")]
    assert len(node_pids) == len(nodes) + (not guard_killed_too)
    assert all(_alive(pid) for pid in node_pids)
    guard = _guard_of(launcher.pid)

    if guard_killed_too:
        os.kill(launcher.pid, signal.SIGSTOP)  # so that the launcher cannot see its guard end and react
        os.kill(guard, signal.SIGKILL)
    os.kill(launcher.pid, signal.SIGKILL)
    assert launcher.wait(timeout=10) == -signal.SIGKILL

    assert wait_for(lambda: not [pid for pid in node_pids if _alive(pid)], timeout=20), _log_lines(launcher)
    assert wait_for(lambda: not _alive(guard), timeout=10)
    assert not list(temp_dir.iterdir())
    if guard_killed_too:
        return  # the nodes' output had no reader left: nothing more to see than that they are gone
    lines = _log_lines(launcher)
    ended = (
        f"[kinodyn-guard] the launcher (pid {launcher.pid}) ended without stopping its nodes; "
        "stopping 'polite', 'stubborn', 'careless'"
    )
    assert ended in lines, lines
    # stubborn, ignoring SIGINT, ticks on for a second: the guard copies what the nodes print after the end
    assert [line for line in lines[lines.index(ended) :] if line.startswith("[stubborn] tick ")], lines
    assert (
        "[kinodyn-guard] node(s) 'stubborn', 'careless' still running 1 s after SIGINT; sending SIGTERM"
    ) in lines, lines
    for name in nodes:
        assert f"[kinodyn-guard] node '{name}' stopped" in lines, lines


def test_guard_that_ends_stops_the_graph(tmp_path: Path, test_prefix: Path, spawn: ProcessSpawner) -> None:
    """Without its guard a killed launcher would leave its nodes running: the launcher stops the graph."""
    graph_file = _write_graph(tmp_path, {"alpha": {"pid_file": str(tmp_path / "alpha.pids")}})
    launcher = spawn([_kinodyn(), "up", str(graph_file)], "launcher")
    assert wait_for(lambda: _log_has(launcher, "[alpha] ready"), timeout=30), _log_lines(launcher)
    guard = _guard_of(launcher.pid)
    os.kill(guard, signal.SIGKILL)
    assert launcher.wait(timeout=30) == 1
    lines = _log_lines(launcher)
    assert not _alive(_pids(tmp_path / "alpha.pids")[0])
    assert (
        f"[kinodyn] the guard (pid {guard}) exited with code -9 (killed by SIGKILL); without it a killed "
        "launcher would leave its nodes running; stopping the graph"
    ) in lines, lines
    assert "[kinodyn] node 'alpha' stopped with code 0" in lines, lines


def _one_node(extra: str = "", name: str = "a", executable: str = "fake_node") -> str:
    """A graph file text with one node of package P (the test package) and `extra` keys."""
    return f"nodes:\n  - {{name: {name}, package: P, executable: {executable}{extra}}}\n"


MALFORMED = {
    "invalid_yaml": ("nodes: [\n", "not valid YAML"),
    "not_a_mapping": ("- a\n- b\n", "a graph file is a mapping with the key 'nodes'"),
    "unknown_top_level_key": ("node: []\n", "unknown key(s) node (allowed: nodes)"),
    "empty_nodes": ("nodes: []\n", "'nodes' must be a non-empty list"),
    "unknown_node_key": (
        _one_node(", param: {}"),
        "node 'a': unknown key(s) param (allowed: name, package, executable, parameters, remappings)",
    ),
    "missing_executable": ("nodes:\n  - {name: a, package: P}\n", "node 'a': missing key(s) executable"),
    "unknown_executable": (
        _one_node(executable="nope"),
        "node 'a': package 'P' has no executable 'nope' (its executables: fake_node)",
    ),
    "unknown_package": (
        "nodes:\n  - {name: a, package: no_such_package, executable: x}\n",
        "node 'a': unknown package 'no_such_package': it is not in the ament index",
    ),
    "invalid_node_name": (_one_node(name="a-b"), "invalid node name"),
    "duplicate_node_name": (
        _one_node() + _one_node().removeprefix("nodes:\n"),
        "node name(s) a given to more than one node",
    ),
    "duplicate_key": (_one_node(", parameters: {x: 1, x: 2}"), "key 'x' is given twice"),
    "unknown_substitution": (
        _one_node(", parameters: {f: $(env HOME)/x}"),
        "parameter 'f': unknown substitution '$(env HOME)'",
    ),
    "substitution_of_unknown_package": (
        _one_node(", parameters: {f: $(find-pkg-share nope)/x}"),
        "parameter 'f': unknown package 'nope'",
    ),
    "mixed_list": (
        _one_node(", parameters: {gains: [1, 0.5]}"),
        "parameter 'gains': a list must hold items of one type",
    ),
    "empty_list": (
        _one_node(", parameters: {gains: []}"),
        "parameter 'gains': an empty list has no ROS parameter type",
    ),
    "missing_value": (_one_node(", parameters: {gain: }"), "parameter 'gain': the parameter has no value"),
    "bad_remappings": (_one_node(", remappings: [a, b]"), "remappings must be a mapping of from: to names"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_graph_gives_one_error_line_and_exit_code_2(
    case: str, tmp_path: Path, test_prefix: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = MALFORMED[case]
    graph_file = _write_graph(tmp_path, {}, text=text.replace("package: P", f"package: {TEST_PACKAGE}"))
    capsys.readouterr()
    assert main(["list", str(graph_file)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"kinodyn: error: {graph_file}: ")
    assert expected.replace("'P'", f"'{TEST_PACKAGE}'") in captured.err, captured.err


def test_up_with_a_malformed_graph_starts_nothing(tmp_path: Path, test_prefix: Path) -> None:
    graph_file = _write_graph(
        tmp_path,
        {},
        text=(
            _one_node(f", parameters: {{pid_file: {tmp_path / 'a.pids'}}}")
            + _one_node(name="b", executable="typo").removeprefix("nodes:\n")
        ).replace("package: P", f"package: {TEST_PACKAGE}"),
    )
    result = subprocess.run([_kinodyn(), "up", str(graph_file)], check=False, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"kinodyn: error: {graph_file}: node 'b': package '{TEST_PACKAGE}' has no executable 'typo' "
        "(its executables: fake_node)"
    ]
    assert not (tmp_path / "a.pids").exists()


def test_missing_graph_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["up", str(tmp_path / "absent.yaml")]) == 2
    absent = tmp_path / "absent.yaml"
    assert capsys.readouterr().err == (
        f"kinodyn: error: {absent}: cannot read the graph file (No such file or directory)\n"
    )


def test_the_demo_runs_a_plain_graph_through_the_launchers_function(
    tmp_path: Path, test_prefix: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """`kinodyn demo <graph> --seconds S` runs the graph as `kinodyn up --timeout S` does (the launcher's
    `up`); a non-positive number of seconds is a usage error."""
    graph_file = _write_graph(tmp_path, {"alpha": {"pid_file": str(tmp_path / "alpha.pids")}})
    assert main(["demo", str(graph_file), "--seconds", "1.5"]) == 0
    lines = capfd.readouterr().out.splitlines()
    pid = _pids(tmp_path / "alpha.pids")[0]
    assert f"[kinodyn] started node 'alpha' ({TEST_PACKAGE}/fake_node, pid {pid})" in lines, lines
    assert "[kinodyn] timeout of 1.5 s reached; stopping the graph" in lines
    assert "[kinodyn] node 'alpha' stopped with code 0" in lines
    assert not _alive(pid)
    for seconds in ("0", "-1", "nan"):
        with pytest.raises(SystemExit) as exit_code:
            main(["demo", str(graph_file), "--seconds", seconds])
        assert exit_code.value.code == 2
        assert "--seconds: must be positive" in capfd.readouterr().err


def test_no_module_enters_the_launchers_command_line() -> None:
    """Only the console script runs `kinodyn_tools.launcher.cli`: every tool calls the launcher's
    functions."""
    sources = REPO / "src"
    cli = sources / "kinodyn_tools" / "kinodyn_tools" / "launcher" / "cli.py"
    entering = [
        str(path.relative_to(sources)) for path in sources.glob("*/kinodyn*/**/*.py")
        if path != cli and "launcher.cli" in path.read_text()
    ]
    assert entering == []


# --- 3. the graphs with the real nodes ----------------------------------------------------------------------


def _parameter_values(node: RclpyNode, node_name: str, names: list[str]) -> list[object]:
    """The values of `names` on node `node_name`, through its standard get_parameters service."""
    client = node.create_client(GetParameters, f"/{node_name}/get_parameters")
    assert client.wait_for_service(timeout_sec=30), f"/{node_name}/get_parameters is not offered"
    # A node is visible before it has declared every parameter (control_node declares a controller's
    # parameters when it loads it), and get_parameters answers no values while one of them is undeclared.
    deadline = time.monotonic() + 60
    while True:
        future = client.call_async(GetParameters.Request(names=names))
        rclpy.spin_until_future_complete(node, future, timeout_sec=30)
        assert future.done(), f"no answer from /{node_name}/get_parameters"
        if future.result().values or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    fields = {
        ParameterType.PARAMETER_NOT_SET: "type",  # shows up as 0 where a value was expected
        ParameterType.PARAMETER_BOOL: "bool_value",
        ParameterType.PARAMETER_INTEGER: "integer_value",
        ParameterType.PARAMETER_DOUBLE: "double_value",
        ParameterType.PARAMETER_STRING: "string_value",
        ParameterType.PARAMETER_BOOL_ARRAY: "bool_array_value",
        ParameterType.PARAMETER_INTEGER_ARRAY: "integer_array_value",
        ParameterType.PARAMETER_DOUBLE_ARRAY: "double_array_value",
        ParameterType.PARAMETER_STRING_ARRAY: "string_array_value",
    }
    values = [getattr(value, fields[value.type]) for value in future.result().values]
    return [list(value) if not isinstance(value, (bool, int, float, str)) else value for value in values]


def _flatten(parameters: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings are parameter namespaces: {"a": {"b": 1}} is the parameter "a.b" (as in ROS)."""
    flat: dict[str, Any] = {}
    for name, value in parameters.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


@pytest.mark.system
@pytest.mark.parametrize("graph_file", GRAPH_FILES, ids=lambda path: path.stem)
def test_graph_runs_its_nodes_with_their_parameters(graph_file: Path, spawn: ProcessSpawner) -> None:

    graph = load_graph(graph_file)
    # a lifetime well beyond the waits below (a graph that timed out would end with code 0, not 130)
    launcher = spawn([_kinodyn(), "up", str(graph_file.relative_to(REPO)), "--timeout", "600"], "launcher")
    rclpy.init()
    try:
        probe = rclpy.create_node("launcher_test_probe")

        def nodes_up() -> bool:
            rclpy.spin_once(probe, timeout_sec=0.1)
            return {node.name for node in graph.nodes} <= set(probe.get_node_names())

        # the nodes' start-up included (a loaded machine)
        assert wait_for(nodes_up, timeout=120), (probe.get_node_names(), _log_lines(launcher))
        for node in graph.nodes:
            expected = _flatten(node.parameters)
            assert _parameter_values(probe, node.name, list(expected)) == list(expected.values())
        probe.destroy_node()
    finally:
        rclpy.shutdown()
    os.killpg(launcher.pid, signal.SIGINT)
    code = launcher.wait(timeout=60)
    lines = _log_lines(launcher)
    log = "\n".join(lines)  # the whole log on a failure (a list's repr is cut short)
    assert code == 130, log  # the launcher says why it ended
    for node in graph.nodes:
        assert f"[kinodyn] node '{node.name}' stopped with code 0" in lines, log
    assert not [line for line in lines if "sending SIGTERM" in line], log
