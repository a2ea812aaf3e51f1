"""The core (src/kinodyn) never imports ROS, directly or through a dependency."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "src" / "kinodyn" / "kinodyn"
ROS_MODULES = ("rclpy", "rosidl", "std_msgs", "sensor_msgs", "geometry_msgs", "nav_msgs", "tf2_msgs",
               "kinodyn_interfaces", "kinodyn_common", "kinodyn_control", "kinodyn_ros", "kinodyn_tools")


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_core_module_imports_ros() -> None:
    offenders = {
        str(path.relative_to(CORE)): sorted(_imported_roots(path) & set(ROS_MODULES))
        for path in CORE.rglob("*.py")
    }
    offenders = {name: mods for name, mods in offenders.items() if mods}
    assert not offenders, f"core modules import ROS packages: {offenders}"


def test_core_imports_with_ros_unavailable() -> None:
    """Importing every core module must work where rclpy and the messages cannot be imported."""
    modules = sorted(
        ".".join(("kinodyn", *path.relative_to(CORE).with_suffix("").parts)).removesuffix(".__init__")
        for path in CORE.rglob("*.py")
    )
    blocker = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in ROS_MODULES)
    code = blocker + "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    result = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
