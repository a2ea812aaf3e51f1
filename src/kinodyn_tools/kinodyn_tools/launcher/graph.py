"""Graph files: which nodes to start, from which package, with which parameters (docs/launcher.md).

A graph file is plain YAML, shared by `kinodyn up` and the `ros2 launch` files:

    # what this graph does, one line
    nodes:
      - name: state_publisher                 # ROS node name
        package: kinodyn_ros
        executable: state_publisher
        parameters:                           # optional: this node's ROS parameters
          robot_description_file: $(find-pkg-share kinodyn_bringup)/urdf/planar_2link.urdf
        remappings: {joint_states: demo/joint_states}   # optional: from -> to

`$(find-pkg-share <package>)` in a parameter string is the only substitution, resolved as ROS 2 launch does.
`load_graph` checks everything it can before any process starts: keys, names, parameter types, packages and
executables, and says what was wrong in one line.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kinodyn_tools.launcher.packages import PackageLookupError, executable_path, package_share

GRAPH_KEYS = ("nodes",)
NODE_KEYS = ("name", "package", "executable", "parameters", "remappings")
REQUIRED_NODE_KEYS = ("name", "package", "executable")
NODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PARAMETER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SUBSTITUTION = re.compile(r"\$\(([^)]*)\)")
SCALAR_TYPES = (bool, int, float, str)
BRINGUP_PACKAGE = "kinodyn_bringup"  # installs config/ into its share directory


SUBSTITUTION_WORDS = 2  # $(find-pkg-share <package>)


class GraphError(ValueError):
    """A graph file that cannot be started; the message names the file, the node and what to fix."""


@dataclass(frozen=True)
class NodeSpec:
    """One node of a graph, with its substitutions resolved and its executable found."""

    name: str
    package: str
    executable: str
    executable_path: Path
    parameters: dict[str, Any]
    remappings: dict[str, str]


@dataclass(frozen=True)
class Graph:
    """A graph file: its leading comment as description, and its nodes in file order."""

    path: Path
    description: str
    nodes: tuple[NodeSpec, ...]


class _UniqueKeyLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML has no type hints: SafeLoader is Any
    """A YAML loader that rejects a key given twice in one mapping instead of keeping the last value."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, Hashable):
                continue  # the base class reports unhashable keys
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' is given twice", key_node.start_mark
                )
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def _read_text(path: Path) -> str:
    """The graph file as UTF-8 text; ``GraphError`` for a file that cannot be read or is not text."""
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as error:
        raise GraphError(f"{path}: cannot read the graph file ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise GraphError(f"{path}: not a text file (byte {error.start} is not UTF-8); a graph file is YAML "
                         "text (docs/launcher.md)") from None


def _read_yaml(path: Path) -> Any:  # noqa: ANN401  (a YAML value)
    text = _read_text(path)
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise GraphError(f"{path}: not valid YAML: {error.problem}{where}") from None
    except yaml.YAMLError as error:
        raise GraphError(f"{path}: not valid YAML: {' '.join(str(error).split())}") from None


def _leading_comment(path: Path) -> str:
    """The comment lines at the top of the file, joined: the graph's one-line description."""
    lines = []
    for line in _read_text(path).splitlines():
        stripped = line.strip()
        if not stripped.startswith("#"):
            if stripped:
                break
            continue
        lines.append(stripped.lstrip("#").strip())
    return " ".join(line for line in lines if line)


def _check_keys(
    mapping: dict[Any, Any], allowed: tuple[str, ...], required: tuple[str, ...], where: str
) -> None:
    unknown = [str(key) for key in mapping if key not in allowed]
    if unknown:
        raise GraphError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(allowed)})")
    missing = [key for key in required if key not in mapping]
    if missing:
        raise GraphError(f"{where}: missing key(s) {', '.join(missing)}")


def _substitute(text: str, where: str) -> str:
    """Resolve `$(find-pkg-share <package>)`; any other `$(...)` is an error."""

    def resolve(match: re.Match[str]) -> str:
        words = match.group(1).split()
        if len(words) != SUBSTITUTION_WORDS or words[0] != "find-pkg-share":
            raise GraphError(
                f"{where}: unknown substitution '{match.group(0)}' "
                "(the only substitution is $(find-pkg-share <package>))"
            )
        try:
            return str(package_share(words[1]))
        except PackageLookupError as error:
            raise GraphError(f"{where}: {error}") from None

    return SUBSTITUTION.sub(resolve, text)


def _parameter_value(value: Any, where: str) -> Any:  # noqa: ANN401  (a YAML value)
    """A value ROS 2 accepts in a parameter file: a scalar, or a non-empty list of one scalar type."""
    if isinstance(value, str):
        return _substitute(value, where)
    if isinstance(value, SCALAR_TYPES):
        return value
    if isinstance(value, list):
        if not value:
            raise GraphError(
                f"{where}: an empty list has no ROS parameter type; leave the parameter out for its default"
            )
        types = {type(item) for item in value}
        if len(types) != 1 or not types <= set(SCALAR_TYPES):
            names = ", ".join(sorted(t.__name__ for t in types))
            raise GraphError(
                f"{where}: a list must hold items of one type: bool, int, float or str (got {names}); "
                "write 1.0 rather than 1 in a list of floats"
            )
        return [_parameter_value(item, where) for item in value]
    if value is None:
        raise GraphError(f"{where}: the parameter has no value")
    raise GraphError(f"{where}: unsupported parameter value of type {type(value).__name__}")


def _parameters(raw: Any, where: str) -> dict[str, Any]:  # noqa: ANN401  (a YAML value)
    """Parameters by name; a nested mapping is a parameter namespace (`a: {b: 1}` sets `a.b`)."""
    if not isinstance(raw, dict):
        raise GraphError(f"{where}: parameters must be a mapping of name: value")
    parameters: dict[str, Any] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not PARAMETER_NAME.fullmatch(name):
            raise GraphError(
                f"{where}: invalid parameter name {name!r} (letters, digits and _, not first a digit)"
            )
        inner = f"{where}: parameter '{name}'"
        nested = isinstance(value, dict)
        parameters[name] = _parameters(value, inner) if nested else _parameter_value(value, inner)
    return parameters


def _remappings(raw: Any, where: str) -> dict[str, str]:  # noqa: ANN401  (a YAML value)
    if not isinstance(raw, dict) or not all(isinstance(x, str) for item in raw.items() for x in item):
        raise GraphError(f"{where}: remappings must be a mapping of from: to names (strings)")
    return dict(raw)


def _node(raw: Any, index: int, path: Path) -> NodeSpec:  # noqa: ANN401  (a YAML value)
    where = f"{path}: nodes[{index}]"
    if not isinstance(raw, dict):
        raise GraphError(f"{where}: a node must be a mapping with keys {', '.join(REQUIRED_NODE_KEYS)}")
    if isinstance(raw.get("name"), str):
        where = f"{path}: node '{raw['name']}'"
    _check_keys(raw, NODE_KEYS, REQUIRED_NODE_KEYS, where)
    for key in REQUIRED_NODE_KEYS:
        if not isinstance(raw[key], str) or not raw[key]:
            raise GraphError(f"{where}: '{key}' must be a non-empty string")
    if not NODE_NAME.fullmatch(raw["name"]):
        raise GraphError(f"{where}: invalid node name (letters, digits and _, not first a digit)")
    try:
        path_to_executable = executable_path(raw["package"], raw["executable"])
    except PackageLookupError as error:
        raise GraphError(f"{where}: {error}") from None
    return NodeSpec(
        name=raw["name"],
        package=raw["package"],
        executable=raw["executable"],
        executable_path=path_to_executable,
        parameters=_parameters(raw.get("parameters", {}), where),
        remappings=_remappings(raw.get("remappings", {}), where),
    )


def installed_graph(name: str) -> Path:
    """The path of graph `name` as installed: `share/kinodyn_bringup/config/<name>.yaml`."""
    return package_share(BRINGUP_PACKAGE) / "config" / f"{name}.yaml"


def graph_path(argument: str | Path) -> Path:
    """The graph file an argument names: a path, or a graph name in the bringup package."""
    path = Path(argument)
    if path.exists() or path.suffix or len(path.parts) > 1:
        return path
    try:
        return installed_graph(str(argument))
    except PackageLookupError as error:
        raise GraphError(f"graph '{argument}' is no file here, and {error}") from None


def load_graph(path: str | Path) -> Graph:
    """Read and check a graph file; raises GraphError naming the file, the node and the problem."""
    path = Path(path)
    raw = _read_yaml(path)
    if not isinstance(raw, dict):
        raise GraphError(f"{path}: a graph file is a mapping with the key 'nodes' (a list of nodes)")
    _check_keys(raw, GRAPH_KEYS, GRAPH_KEYS, str(path))
    if not isinstance(raw["nodes"], list) or not raw["nodes"]:
        raise GraphError(f"{path}: 'nodes' must be a non-empty list of nodes")
    nodes = tuple(_node(entry, index, path) for index, entry in enumerate(raw["nodes"]))
    names = [node.name for node in nodes]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise GraphError(f"{path}: node name(s) {', '.join(duplicates)} given to more than one node")
    return Graph(path=path, description=_leading_comment(path), nodes=nodes)
