"""Where ROS 2 packages and their executables live, looked up in the ament index as `ros2 run` does."""

from __future__ import annotations

import os
from pathlib import Path

from ament_index_python.packages import (
    PackageNotFoundError,
    get_package_prefix,
    get_package_share_directory,
    get_packages_with_prefixes,
)

# The launcher's own console script is installed next to the viewer node of kinodyn_tools; it is not a node.
LAUNCHER = ("kinodyn_tools", "kinodyn")


class PackageLookupError(LookupError):
    """A package is not in the ament index, or it has no such executable."""


def _not_found(package: str) -> PackageLookupError:
    search_path = os.environ.get("AMENT_PREFIX_PATH", "")
    return PackageLookupError(
        f"unknown package '{package}': it is not in the ament index (AMENT_PREFIX_PATH={search_path!r}); "
        "build the workspace (scripts/setup.sh) and source scripts/env.sh"
    )


def package_share(package: str) -> Path:
    """`<prefix>/share/<package>`, as `$(find-pkg-share <package>)` resolves it in ROS 2 launch."""
    try:
        return Path(get_package_share_directory(package))
    except PackageNotFoundError:
        raise _not_found(package) from None


def package_executables(package: str) -> dict[str, Path]:
    """Executables of `package` by name: the executable files in `<prefix>/lib/<package>`."""
    try:
        lib = Path(get_package_prefix(package)) / "lib" / package
    except PackageNotFoundError:
        raise _not_found(package) from None
    if not lib.is_dir():
        return {}
    return {
        path.name: path
        for path in sorted(lib.iterdir())
        if path.is_file() and os.access(path, os.X_OK) and (package, path.name) != LAUNCHER
    }


def executable_path(package: str, executable: str) -> Path:
    """The file `ros2 run <package> <executable>` would start; the error lists the package's executables."""
    executables = package_executables(package)
    if executable not in executables:
        known = ", ".join(executables) or "none"
        raise PackageLookupError(
            f"package '{package}' has no executable '{executable}' (its executables: {known})"
        )
    return executables[executable]


def kinodyn_packages() -> list[str]:
    """Names of the kinodyn packages in the ament index, sorted."""
    return sorted(name for name in get_packages_with_prefixes() if name.startswith("kinodyn"))
