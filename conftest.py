"""Test doubles shared by the unit tests of the ROS packages (kinodyn_common, kinodyn_control, kinodyn_ros,
kinodyn_tools)."""

from __future__ import annotations

import pytest


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
