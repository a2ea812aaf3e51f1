"""Finite outputs only (issue 9, point 2): find a non-finite number anywhere in a ROS message."""

from __future__ import annotations

from typing import Any

import numpy as np

from kinodyn_ros.problem_log import DistinctProblemLog

_FLOAT_TYPES = ("double", "float")


def non_finite_field(msg: Any, prefix: str = "") -> str | None:
    """The path of the first field of ``msg`` (a ROS message, nested messages and arrays included) holding a
    NaN or an infinity, e.g. ``"transforms[2].transform.translation.x"``; None when every number is finite."""
    for name, type_name in msg.get_fields_and_field_types().items():
        value = getattr(msg, name)
        path = f"{prefix}{name}"
        base = type_name.split("<", 1)[-1].split("[", 1)[0].rstrip(">")  # sequence<T, N>, T[N] -> T
        many = base != type_name
        if base in _FLOAT_TYPES:
            finite = np.isfinite(np.asarray(value, dtype=np.float64))
            if not np.all(finite):
                return f"{path}[{int(np.argmin(finite))}]" if many else path
        elif "/" in base:  # a nested message or a sequence/array of them
            for i, item in enumerate(value if many else [value]):
                found = non_finite_field(item, f"{path}[{i}]." if many else f"{path}.")
                if found is not None:
                    return found
    return None


def publish_finite(publisher: Any, msg: Any, problems: DistinctProblemLog) -> bool:
    """Publish ``msg`` when every number in it is finite; otherwise drop it with one error per topic
    (throttled) naming the field. Returns whether it was published."""
    field = non_finite_field(msg)
    if field is None:
        publisher.publish(msg)
        return True
    problems.error(
        ("non_finite_output", publisher.topic_name),
        f"not publishing on {publisher.topic_name}: {field} is not finite (the input that produced it "
        "passed validation; please report it)",
    )
    return False
