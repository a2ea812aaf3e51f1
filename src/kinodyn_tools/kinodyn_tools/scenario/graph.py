"""The closed-loop graph on a chosen physics backend (docs/closed-loop.md, "Backends").

``SimulatedSystem`` takes its backend from a hardware ``<param name="backend">`` of the URDF the controller
manager loads (docs/simulator.md). ``backend_graph`` writes, into a directory of the caller's, a copy of the
graph file whose ``control_node`` loads a copy of its URDF with that param added; the other nodes keep theirs
(they ignore the ``<ros2_control>`` block), except the estimator's ``foot_radius`` (the ``state_estimator``
node's, or in the in-process graph config/quadruped_rt.yaml the estimator controller's), a property of the
engine's contact (``kinodyn.sim.backend_capabilities(name).rolling_contact``): kinodyn.sim's foot spheres
pivot in stance (the graph file's value, 0), MuJoCo's roll, so on a backend with rolling contact the
estimator takes the URDF's radius (docs/estimation.md "Rolling feet"). Any registered backend
(``kinodyn.sim.backend_names()``) is accepted; the default one (``kinodyn.sim.DEFAULT_BACKEND``) is the graph
file as it is.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import yaml

from kinodyn import sim
from kinodyn_tools.launcher.graph import graph_path, load_graph

PLUGIN = "<plugin>kinodyn_control/SimulatedSystem</plugin>"
CONTROL_NODE = "control_node"
ESTIMATOR_CONTROLLER = "kinodyn_control/LeggedStateEstimator"


def check_backend(backend: str) -> None:
    """Raise ``ValueError`` (listing the registered backends) unless ``backend`` is one."""
    if backend not in sim.backend_names():
        raise ValueError(f"backend must be one of {', '.join(sim.backend_names())}, got {backend!r}")


def backend_urdf(text: str, backend: str) -> str:
    """``text`` (a URDF on SimulatedSystem) with ``<param name="backend">`` set to ``backend``."""
    check_backend(backend)
    if text.count(PLUGIN) != 1:
        raise ValueError(f"the URDF must have exactly one {PLUGIN} (found {text.count(PLUGIN)})")
    text = re.sub(r'\s*<param name="backend">[^<]*</param>', "", text)
    return text.replace(PLUGIN, f'{PLUGIN}\n      <param name="backend">{backend}</param>')


def estimator_controllers(parameters: dict[str, Any]) -> list[dict[str, Any]]:  # Any: YAML values
    """The parameters of the estimator controllers (``kinodyn_control/LeggedStateEstimator``) among a
    control_node's parameters (config/quadruped_rt.yaml)."""
    return [value for value in parameters.values()
            if isinstance(value, dict) and value.get("type") == ESTIMATOR_CONTROLLER]


def backend_graph(backend: str, directory: Path, graph: str = "quadruped_wbc") -> Path:
    """The graph file ``graph`` (a path or an installed graph's name) with its control_node on ``backend``;
    the derived files are written to ``directory``."""
    path = graph_path(graph)
    check_backend(backend)
    if backend == sim.DEFAULT_BACKEND:
        return path
    resolved = {node.name: node for node in load_graph(path).nodes}
    raw = yaml.safe_load(path.read_text())
    controllers = [node for node in raw["nodes"] if node["executable"] == CONTROL_NODE]
    if len(controllers) != 1:
        raise ValueError(f"{path}: expected one {CONTROL_NODE} node, found {len(controllers)}")
    node = controllers[0]
    urdf = Path(resolved[node["name"]].parameters["robot_description_file"])
    derived = directory / f"{urdf.stem}_{backend}.urdf"
    derived.write_text(backend_urdf(urdf.read_text(), backend))
    node["parameters"]["robot_description_file"] = str(derived)
    if sim.backend_capabilities(backend).rolling_contact:
        for other in raw["nodes"]:
            if other["executable"] == "state_estimator":
                other.get("parameters", {}).pop("foot_radius", None)
        for estimator in estimator_controllers(node["parameters"]):  # the in-process graph's estimator
            estimator.pop("foot_radius", None)
    out = directory / f"{path.stem}_{backend}.yaml"
    comment = f"# {path.name} with control_node's SimulatedSystem on the {backend} physics backend.\n"
    out.write_text(comment + yaml.safe_dump(raw, sort_keys=False))
    return out


def graph_command(graph: Path) -> list[str]:
    """The command that starts ``graph`` (``kinodyn up``)."""
    kinodyn = shutil.which("kinodyn")
    if kinodyn is None:
        raise RuntimeError("the kinodyn command is not on PATH: source scripts/env.sh")
    return [kinodyn, "up", str(graph)]


def start_graph(graph: Path, log: Path) -> subprocess.Popen[bytes]:
    """``kinodyn up graph`` in its own session, its output to ``log`` (stop it with ``stop_graph``)."""
    with log.open("w") as out:
        return subprocess.Popen(graph_command(graph), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def stop_graph(process: subprocess.Popen[bytes], timeout: float = 15.0) -> int | None:
    """SIGINT to the launcher (it stops every node, docs/launcher.md), then SIGTERM and SIGKILL to its
    session if it has not ended within ``timeout`` s each; its exit code."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=timeout)
        except ProcessLookupError:
            break
        except subprocess.TimeoutExpired:
            continue
    return process.poll()
