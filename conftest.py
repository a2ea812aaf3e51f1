"""Test doubles shared by the unit tests of the ROS packages (kinodyn_common, kinodyn_control, kinodyn_ros,
kinodyn_tools)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from rclpy.context import Context


class RecordingLogger:
    """Stands in for an rclpy logger: keeps ``(level, line)`` of every log line."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def warning(self, line: str) -> None:
        self.lines.append(("warning", line))

    def error(self, line: str) -> None:
        self.lines.append(("error", line))


@pytest.fixture
def logger() -> RecordingLogger:
    """A fresh ``RecordingLogger``."""
    return RecordingLogger()


@pytest.fixture
def ros_context() -> Iterator[Context]:
    """An rclpy context of its own, initialised for the test and shut down after it."""
    import rclpy  # noqa: PLC0415  (as above)
    from rclpy.context import Context  # noqa: PLC0415  (the core's tests share this file and never load rclpy)

    context = Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        rclpy.shutdown(context=context)
