"""The rclpy message class of a ROS type name, for raw subscriptions and publishers (bags record and play)."""

from __future__ import annotations

import importlib

NAME_PARTS = 3  # package, kind (msg, srv, action), name


def message_class(msgtype: str) -> type | None:
    """The generated Python class of ``pkg/msg/Name``; None when its package is not importable here."""
    parts = msgtype.split("/")
    if len(parts) != NAME_PARTS:
        return None
    package, kind, name = parts
    try:
        found: type = getattr(importlib.import_module(f"{package}.{kind}"), name)
        return found
    except (ImportError, AttributeError):
        return None
