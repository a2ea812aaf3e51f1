"""The docs describe what the code does: every parameter a node or controller declares is on its docs page
with the default the code gives it, links between the docs resolve, the README stays a short introduction,
and no doc cites an issue number or a file outside the repository.

The nodes are built in this process with rclpy (no DDS traffic) in the configurations the shipped graphs use,
and their declared parameters are read back; the controllers' parameters come from their ``PARAMETERS``.
"""

from __future__ import annotations

import importlib
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import rclpy
from kinodyn_control.control_node import NODE_PARAMETERS
from kinodyn_control.hardware import can_motor_config, generic_system, serial_imu, simulated_system
from kinodyn_control.registry import controller_registry

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = [*sorted(DOCS.rglob("*.md")), REPO / "README.md", REPO / "urdf" / "README.md"]
ROS_PARAMETERS = {"use_sim_time", "start_type_description_service"}
"""rclpy's own parameters, declared by every node."""

ARM7 = f"robot_description_file:={REPO / 'urdf' / 'arm7.urdf'}"
QUADRUPED = f"robot_description_file:={REPO / 'urdf' / 'quadruped.urdf'}"
FEET = "feet:=[LF_FOOT, LH_FOOT, RF_FOOT, RH_FOOT]"
POSTURE = "posture:=[0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]"
NODE_CASES = [
    ("state_publisher", "StatePublisher", [ARM7]),
    ("joint_motion", "JointMotion", [ARM7]),
    ("kinematics", "Kinematics", [ARM7, "ik_frame:=ee_link"]),
    ("kinematics", "Kinematics", [QUADRUPED, "floating_base:=true", "ik_frame:=LF_FOOT"]),
    ("dynamics", "Dynamics", [QUADRUPED, "floating_base:=true", "publish_gravity:=true"]),
    ("ee_pose_printer", "EePosePrinter", [ARM7]),
    ("state_estimator", "StateEstimator", [QUADRUPED, FEET]),
    ("wbc", "Wbc", [ARM7, "mode:=arm"]),
    ("wbc", "Wbc", [QUADRUPED, FEET, POSTURE, "planner:=mpc"]),
    ("viewer", "Viewer", [QUADRUPED, "port:=0"]),
]
NODE_MODULES = {"viewer": "kinodyn_tools.viewer.node"}
"""Where a node lives when not in kinodyn_ros.nodes (the viewer is a tool)."""
NODE_PAGES = {"wbc": ["nodes/wbc.md", "locomotion.md"]}
"""Pages besides docs/nodes/<node>.md that document a node's parameters (the wbc's legged mode takes the
locomotion controller's, documented with it)."""

CONTROLLER_PAGES = {
    "kinodyn_control/LeggedStateEstimator": ["nodes/state_estimator.md"],
    "kinodyn_control/WholeBodyController": ["nodes/wbc.md", "locomotion.md"],
}
"""Controllers that take a node's parameters are documented on that node's page too."""


def _text(*pages: str) -> str:
    return "\n".join((DOCS / page).read_text() for page in pages)


def _expand(token: str) -> Iterator[str]:
    """The names a documented token stands for: ``a_{x,y}`` is ``a_x`` and ``a_y``."""
    match = re.fullmatch(r"([\w.]*)\{([\w,]+)\}([\w.]*)", token)
    if match is None:
        yield token
        return
    for middle in match.group(2).split(","):
        yield match.group(1) + middle + match.group(3)


def documented_names(text: str) -> set[str]:
    """Every backticked name in ``text``, braces expanded, and a table row's first-column names (backticked
    or bare, ``a`` / ``.b`` giving ``a``'s prefix plus ``.b``)."""
    names = {name for token in re.findall(r"`([^`\s]+)`", text) for name in _expand(token)}
    for first in (row.split("|")[1] for row in text.splitlines() if row.startswith("| ")):
        tokens = [t.strip().strip("`") for t in re.split(r",|\s/\s", first)]
        for i, token in enumerate(tokens):
            name = tokens[i - 1].rsplit(".", 1)[0] + token if token.startswith(".") and i > 0 else token
            names.update(_expand(name))
    return names


def documented_defaults(text: str) -> dict[str, str]:
    """name -> default cell text, from the parameter tables (a header row naming `name` and `default`); a
    row naming several parameters gives each its own entry of a comma-separated default, or all the one."""
    defaults: dict[str, str] = {}
    column = None
    for line in text.splitlines():
        if not line.startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "name" and "default" in cells:
            column = cells.index("default")
            continue
        if column is None or set(cells[0]) <= set("-: ") or len(cells) <= column:
            continue
        names = re.findall(r"`([\w.]+)`", cells[0]) or re.findall(r"[a-z_0-9]+", cells[0])
        values = [v.strip() for v in re.split(r",\s+", cells[column])] if len(names) > 1 else [cells[column]]
        for i, name in enumerate(names):
            defaults.setdefault(name, values[i] if len(values) == len(names) else cells[column])
    return defaults


def matches(documented: str, value: object) -> bool:
    """Whether the default as written equals ``value`` (a number to the digits written, a string exactly)."""
    text = documented.strip().strip("`").strip('"')
    if isinstance(value, bool):
        return text == str(value).lower()
    if value is None or isinstance(value, (list, tuple)):
        expected = str(list(value or [])).replace(" ", "").replace("'", "")
        return text.replace(" ", "").replace('"', "") == expected
    if isinstance(value, (int, float)):
        number = re.match(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", text)
        if number is None:
            return False
        decimals = len(number.group(2) or ".") - 1
        tolerance = 1e-12 * abs(value) if number.group(3) else 0.5 * 10.0 ** -decimals + 1e-12 * abs(value)
        return math.isclose(float(number.group(0)), value, rel_tol=0.0, abs_tol=tolerance)
    return text in (value, f'"{value}"')


def declared_parameters(module: str, cls: str, params: list[str]) -> dict[str, Any]:
    """The parameters (name -> value) the node ``cls`` declares when given ``params``."""
    rclpy.init(args=["--ros-args", *[arg for p in params for arg in ("-p", p)]])
    try:
        node_module = importlib.import_module(NODE_MODULES.get(module, f"kinodyn_ros.nodes.{module}"))
        node = getattr(node_module, cls)()
        try:
            parameters = node.get_parameters_by_prefix("")  # every parameter the node declared
            return {name: p.value for name, p in parameters.items() if name not in ROS_PARAMETERS}
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown()


@pytest.mark.parametrize(("module", "cls", "params"), NODE_CASES,
                         ids=[" ".join([c[0], *c[2][1:]]) for c in NODE_CASES])
def test_node_parameters_are_documented_with_their_defaults(module: str, cls: str, params: list[str]) -> None:
    declared = declared_parameters(module, cls, params)
    text = _text(*NODE_PAGES.get(module, [f"nodes/{module}.md"]))
    names, defaults = documented_names(text), documented_defaults(text)
    given = {p.split(":=")[0] for p in params}
    assert sorted(set(declared) - names) == [], f"undocumented parameters of {module}"
    wrong = {name: (value, defaults[name]) for name, value in declared.items()
             if name not in given and name in defaults and not matches(defaults[name], value)}
    assert wrong == {}, f"{module}: parameter -> (code's default, documented default)"
    undefaulted = sorted(set(declared) - given - set(defaults))
    assert undefaulted == [], f"{module}: parameters without a default in a parameter table"


def test_every_controller_parameter_is_documented() -> None:
    node_page = documented_names(_text("nodes/control_node.md"))
    assert sorted(set(NODE_PARAMETERS) - ROS_PARAMETERS - node_page) == []
    registry = controller_registry()
    for plugin in registry.names():
        pages = ["nodes/control_node.md", "controllers.md", *CONTROLLER_PAGES.get(plugin, [])]
        undocumented = sorted(set(registry.load(plugin).PARAMETERS) - documented_names(_text(*pages)))
        assert undocumented == [], f"undocumented parameters of {plugin}"


def test_every_hardware_parameter_is_documented() -> None:
    drivers = {*can_motor_config.HARDWARE_PARAMS, *can_motor_config.JOINT_PARAMS, *serial_imu.PARAMS}
    assert sorted(drivers - documented_names(_text("hardware-drivers.md"))) == []
    assert sorted(set(simulated_system.KNOWN_PARAMS) - documented_names(_text("simulator.md"))) == []
    generic = set(generic_system.KNOWN_PARAMS) - set(generic_system.DEPRECATED)  # old names, still taken
    assert sorted(generic - documented_names(_text("nodes/control_node.md"))) == []


def test_the_readme_is_a_short_introduction() -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 200


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_a_doc_cites_no_issue_and_no_file_outside_the_repository(page: Path) -> None:
    text = page.read_text()
    assert re.findall(r"\bissues?\s*#?\d+|(?<![\w&])#\d+\b", text, re.IGNORECASE) == []
    assert re.findall(r"/work/\S*|\bseeds?/\S*|inventory\.md", text) == []


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_links_between_the_docs_resolve(page: Path) -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text())
    missing = [t for t in targets if "://" not in t and not (page.parent / t).exists()]
    assert missing == []


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_the_files_a_doc_names_exist(page: Path) -> None:
    """A backticked path into this repository (its packages under src/, test/, bench/, config/, ...) names a
    file or directory that is there; a `::name` or `:name` suffix (a test, a function) is not part of it."""
    roots = r"src/kinodyn\w*|src/tf2_msgs|test|bench|config|launch|urdf|examples|scripts|docs"
    paths = re.findall(rf"`((?:{roots})/[\w./-]+?)(?::{{1,2}}\w+)?`", page.read_text())
    missing = [p for p in paths if "<" not in p and not (REPO / p.rstrip(".")).exists()]
    assert missing == []
