"""Declaring node and controller parameters with validation: a bad value raises naming the parameter and what
it needs, and a parameter the node does not declare (a misspelling) is an error too, not a silent default.

A group of parameters is a frozen, validating dataclass with the same names (one per field), declared with
the field defaults (``declare_dataclass``); a tuple field is a list parameter, its item type from the
annotation (``tuple[float, ...]`` a double array, ``tuple[str, ...]`` a string array; ``list_item_type``).
Live changes are validated by building a new instance (``apply_changes``: the dataclass's ``__post_init__``
raises ``ValueError`` with the reason), so a bad value changes nothing. The controllers that run a node's
algorithm (kinodyn_control.controllers.node_parameters) take the same dataclasses, item types and
``declare_value``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, TypeVar

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from rclpy.node import Node

T = TypeVar("T")

ARRAY_TYPES = {"float": Parameter.Type.DOUBLE_ARRAY, "str": Parameter.Type.STRING_ARRAY,
               "int": Parameter.Type.INTEGER_ARRAY, "bool": Parameter.Type.BOOL_ARRAY}
"""The ROS type of a list parameter by its item type's name."""


def list_item_type(annotation: str, default: Sequence[object]) -> str:
    """The item type's name of a list parameter: from a ``tuple[<item>, ...]`` annotation (postponed, a
    string), else from the default's first item; '' when neither tells."""
    if annotation.startswith("tuple["):
        return annotation.removeprefix("tuple[").split(",")[0].split("]")[0].strip()
    return type(default[0]).__name__ if default else ""


def declare_value(node: Node, name: str, value: Any, descriptor: ParameterDescriptor,  # noqa: ANN401
                  array_type: Parameter.Type | None = None) -> Any:  # noqa: ANN401  (rclpy values are untyped)
    """Declare ``name`` with the default ``value`` and return its value; an empty list has no type of its own,
    so it is declared by ``array_type``."""
    if isinstance(value, (list, tuple)) and not value:
        if array_type is None:
            raise TypeError(f"parameter {name}: an empty list default needs its array type")
        return node.declare_parameter(name, array_type, descriptor).value
    return node.declare_parameter(name, value, descriptor).value


def check_positive(name: str, value: float) -> float:
    """``value`` of parameter ``name``; ValueError unless it is positive and finite."""
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"parameter {name} must be a positive finite number, got {value}")
    return value


def check_non_negative(name: str, value: float) -> float:
    """``value`` of parameter ``name``; ValueError unless it is finite and >= 0."""
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"parameter {name} must be a finite number >= 0, got {value}")
    return value


def check_count(name: str, value: int, what: str) -> int:
    """``value`` of integer parameter ``name``; ValueError unless it is >= 1 (``what``: what it counts)."""
    if value < 1:
        raise ValueError(f"parameter {name} must be >= 1 ({what}), got {value}")
    return value


def check_fields(instance: object, positive: Sequence[str] = (), non_negative: Sequence[str] = ()) -> None:
    """For a parameter dataclass's ``__post_init__``: ``check_positive`` on the fields of ``instance`` named
    in ``positive``, ``check_non_negative`` on those in ``non_negative``."""
    for name in positive:
        check_positive(name, getattr(instance, name))
    for name in non_negative:
        check_non_negative(name, getattr(instance, name))


def declare_positive(node: Node, name: str, default: float) -> float:
    """Declare a float parameter that must be positive and finite, and return its value."""
    return check_positive(name, node.declare_parameter(name, default).value)


def declare_non_negative(node: Node, name: str, default: float) -> float:
    """Declare a float parameter that must be finite and >= 0, and return its value."""
    return check_non_negative(name, node.declare_parameter(name, default).value)


def declare_count(node: Node, name: str, default: int, what: str) -> int:
    """Declare an integer parameter that must be >= 1 (``what`` says what it counts), and return its value."""
    return check_count(name, node.declare_parameter(name, default).value, what)


def declare_dataclass(node: Node, cls: type[T]) -> T:
    """Declare one parameter per field of the dataclass ``cls`` with the field's default, and return ``cls``
    built from their values (its validation's ValueError names the parameter). A parameter the node has
    already (declared from its overrides: ``automatically_declare_parameters_from_overrides``) is read as it
    is."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]  # cls is a dataclass (TypeVar unbound)
        default = field.default
        if node.has_parameter(field.name):
            value = node.get_parameter(field.name).value
            values[field.name] = tuple(value) if isinstance(value, (list, tuple)) else value
        elif isinstance(default, tuple):
            item = list_item_type(str(field.type), default)
            if item not in ARRAY_TYPES:
                raise TypeError(f"field {field.name}: cannot map {field.type} to a ROS parameter type")
            array_type = ARRAY_TYPES[item]
            descriptor = ParameterDescriptor(type=int(array_type))
            values[field.name] = tuple(declare_value(node, field.name, list(default), descriptor, array_type)
                                       or ())
        else:
            values[field.name] = node.declare_parameter(field.name, default).value
    return cls(**values)


def apply_changes(instance: T, changes: Mapping[str, Any]) -> T:
    """``instance`` with the parameters in ``changes`` (by name) that are its fields replaced; ValueError
    (from the dataclass's validation) when a new value is not acceptable."""
    fields = {f.name for f in dataclasses.fields(instance)}  # type: ignore[arg-type]  # a dataclass instance
    updates = {name: tuple(v) if isinstance(getattr(instance, name), tuple) else v
               for name, v in changes.items() if name in fields}
    return dataclasses.replace(instance, **updates) if updates else instance  # type: ignore[type-var]


def dataclass_from(cls: type[T], values: Mapping[str, Any]) -> T:
    """The dataclass ``cls`` from parameter ``values`` (its fields by name; lists as tuples); its validation
    raises ValueError naming the parameter."""
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]  # cls is a dataclass
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if k in fields})


def reject_undeclared_parameters(node: Node, known: Collection[str] | None = None) -> None:
    """Raise ValueError naming every parameter given to ``node`` (``--ros-args -p``, a params file) that is
    not in ``known`` (default: the parameters the node declared), with the accepted names.

    rclpy ignores such overrides silently, so ``rate_hzz: 10.0`` would leave ``rate_hz`` at its default.
    Call it once the node has declared all its parameters. The overrides are read from rclpy's
    ``Node._parameter_overrides`` (what ``declare_parameter`` consults; rclpy has no public accessor).
    """
    accepted = set(node._parameters if known is None else known)  # noqa: SLF001  (rclpy: no public accessor)
    unknown = sorted(set(node._parameter_overrides) - accepted)  # noqa: SLF001  (rclpy: no public accessor)
    if unknown:
        raise ValueError(
            f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for node "
            f"{node.get_name()} (misspelled, or not used with this configuration); its parameters are: "
            f"{', '.join(sorted(accepted))}"
        )
