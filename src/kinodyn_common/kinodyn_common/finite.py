"""Finite outputs only: find a non-finite number anywhere in a ROS message."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

if TYPE_CHECKING:
    from kinodyn_common.problem_log import DistinctProblemLog

MsgT_contra = TypeVar("MsgT_contra", contravariant=True)


class Publisher(Protocol[MsgT_contra]):
    """What ``publish_finite`` uses of a publisher (rclpy's, or a test's)."""

    @property
    def topic_name(self) -> str: ...

    def publish(self, msg: MsgT_contra, /) -> None: ...


_FLOAT_TYPES = ("double", "float")
_FLOAT, _FLOATS, _MESSAGE, _MESSAGES = range(4)


def _base_type(type_name: str) -> str:
    """The element type of a field type: ``sequence<T, N>`` and ``T[N]`` -> ``T``."""
    return type_name.split("<", 1)[-1].split("[", 1)[0].rstrip(">")


@functools.cache
def _plan(msg_type: Any) -> tuple[tuple[str, int], ...]:  # noqa: ANN401  (a rosidl message class)
    """The fields of a message type that may hold a float, each with its kind (a float, floats, a message,
    messages): the others (strings, integers, booleans) are never looked at."""
    plan = []
    for name, type_name in msg_type.get_fields_and_field_types().items():
        base = _base_type(type_name)
        many = base != type_name
        if base in _FLOAT_TYPES:
            plan.append((name, _FLOATS if many else _FLOAT))
        elif "/" in base:
            plan.append((name, _MESSAGES if many else _MESSAGE))
    return tuple(plan)


def _finite(msg: Any) -> bool:  # noqa: ANN401  (any rosidl message: they share no base type)
    """Whether every number in ``msg`` is finite (``non_finite_field``'s test, without building a path)."""
    for name, kind in _plan(msg.__class__):
        value = getattr(msg, name)
        if kind == _FLOAT:
            if not math.isfinite(value):
                return False
        elif kind == _FLOATS:  # a fixed-size array is a numpy array, a sequence an array.array (or a list)
            finite = np.isfinite(value).all() if type(value) is np.ndarray else all(map(math.isfinite, value))
            if not finite:
                return False
        elif kind == _MESSAGE:
            if not _finite(value):
                return False
        elif len(value) and _plan(value[0].__class__) and not all(_finite(item) for item in value):
            return False
    return True


def non_finite_field(msg: Any, prefix: str = "") -> str | None:  # noqa: ANN401  (any rosidl message)
    """The path of the first field of ``msg`` (a ROS message, nested messages and arrays included) holding a
    NaN or an infinity, e.g. ``"transforms[2].transform.translation.x"``; None when every number is finite."""
    if _finite(msg):
        return None
    for name, type_name in msg.get_fields_and_field_types().items():
        value = getattr(msg, name)
        path = f"{prefix}{name}"
        base = _base_type(type_name)
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


def publish_finite(publisher: Publisher[MsgT_contra], msg: MsgT_contra, problems: DistinctProblemLog) -> bool:
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
