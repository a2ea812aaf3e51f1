"""The URDF a node works on, from its `robot_description` (XML) or `robot_description_file` parameter.

`robot_description_file` takes a path, `file://<path>` or `package://<package>/<path>` (resolved through the
ament index, as ROS 2 resolves resource URIs).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from kinodyn.urdf import ParsedURDF, decode, read_urdf

from kinodyn import Model, URDFError, URDFWarning

if TYPE_CHECKING:
    from rclpy.node import Node

    from kinodyn_common.problem_log import ProblemLogger


class RobotDescriptionError(RuntimeError):
    """No usable URDF text; the message says which parameter to fix and how."""


def resolve_uri(uri: str) -> Path:
    """The file a `package://`, `file://` or plain path names (not checked for existence)."""
    if uri.startswith("package://"):
        package, _, relative = uri[len("package://") :].partition("/")
        if not package or not relative:
            raise RobotDescriptionError(
                f"robot_description_file {uri!r} must look like package://<package>/<path>"
            )
        try:
            return Path(get_package_share_directory(package)) / relative
        except PackageNotFoundError:
            raise RobotDescriptionError(
                f"robot_description_file {uri!r}: package {package!r} is not in the ament index "
                "(AMENT_PREFIX_PATH); source the workspace or give a file path"
            ) from None
    if uri.startswith("file://"):
        return Path(uri[len("file://") :])
    return Path(uri)


def read_robot_description(xml: str, file: str) -> tuple[str, str]:
    """``(URDF text, where it came from)`` from exactly one of the two parameter values."""
    if xml and file:
        raise RobotDescriptionError("both robot_description and robot_description_file are set; set only one")
    if xml:
        return xml, "parameter robot_description"
    if not file:
        raise RobotDescriptionError(
            "no URDF given: set parameter robot_description (URDF XML text) or robot_description_file "
            "(a path or package://<package>/<path>)"
        )
    path = resolve_uri(file)
    source = f"robot_description_file {str(path)!r}"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RobotDescriptionError(f"cannot read robot_description_file {file!r}: {exc.strerror}") from None
    try:
        return decode(data, "the URDF"), source
    except URDFError as exc:
        raise URDFError(f"{source} is not a usable URDF: {exc}") from None


def declare_and_read(node: Node) -> tuple[str, str]:
    """Declare `robot_description` and `robot_description_file` on ``node`` and read the URDF they name."""
    xml: str = node.declare_parameter("robot_description", "").value
    file: str = node.declare_parameter("robot_description_file", "").value
    return read_robot_description(xml, file)


def declare_and_load_model(node: Node, floating_base: bool = False) -> tuple[Model, str, str]:
    """``(model, URDF text, where it came from)``; a bad URDF raises ``URDFError`` naming its source.
    ``floating_base`` puts a free flyer at the root link (``Model.from_urdf``)."""
    xml, source = declare_and_read(node)
    urdf = load_urdf(xml, source, node.get_logger())
    return Model.from_urdf(urdf, floating_base=floating_base), xml, source


def load_urdf(xml: str | ParsedURDF, source: str, logger: ProblemLogger | None = None) -> ParsedURDF:
    """``kinodyn.urdf.read_urdf(xml)``, the one URDF check of every node: a bad URDF raises ``URDFError``
    ("<source> is not a usable URDF: <why>"); what it accepts with a ``URDFWarning`` is one warning line on
    ``logger`` (a node's logger) when given."""
    try:
        with warnings.catch_warnings(record=logger is not None) as caught:
            if caught is not None:
                warnings.simplefilter("always", URDFWarning)
            urdf = read_urdf(xml)
    except URDFError as exc:
        raise URDFError(f"{source} is not a usable URDF: {exc}") from None
    if logger is not None:  # else nothing was recorded
        for warning in caught or ():
            logger.warning(f"{source}: {warning.message}")
    return urdf
