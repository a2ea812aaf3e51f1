"""Dependencies between the kinodyn packages point one way: the core <- the shared ROS helpers <- the
controllers (with the estimator's and the whole-body controller's ROS side) <- the nodes <- the tools."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
LAYERS = ("kinodyn", "kinodyn_common", "kinodyn_control", "kinodyn_ros", "kinodyn_tools")
"""Each package may import the ones before it (and kinodyn_interfaces' messages), never one after it."""


def _kinodyn_imports(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return {root for root in roots if root in LAYERS}


@pytest.mark.parametrize("package", LAYERS)
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    allowed = set(LAYERS[: LAYERS.index(package) + 1])
    offenders = {
        str(path.relative_to(SRC)): sorted(_kinodyn_imports(path) - allowed)
        for path in (SRC / package).rglob("*.py")
    }
    assert {name: roots for name, roots in offenders.items() if roots} == {}


def test_every_package_is_a_layer() -> None:
    packages = {path.parent.name for path in SRC.glob("kinodyn*/package.xml")}
    assert packages - {"kinodyn_bringup", "kinodyn_interfaces"} == set(LAYERS)
