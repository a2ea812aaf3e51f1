"""A frozen, validating dataclass as a group of ROS parameters with the same names (one per field).

Declared with the field defaults; a tuple field is a list parameter (its type from the default's items, or
from the annotation for an empty default: ``tuple[float, ...]`` is a double array, ``tuple[str, ...]`` a
string array). ``apply`` validates live changes by building a new instance (the dataclass's
``__post_init__`` raises ``ValueError`` with the reason), so a bad value changes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.node import Node
from rclpy.parameter import Parameter

T = TypeVar("T")

_ARRAY_TYPES = {"float": ParameterType.PARAMETER_DOUBLE_ARRAY, "str": ParameterType.PARAMETER_STRING_ARRAY,
                "int": ParameterType.PARAMETER_INTEGER_ARRAY, "bool": ParameterType.PARAMETER_BOOL_ARRAY}


def _array_type(field: dataclasses.Field) -> int:
    annotation = str(field.type)  # "tuple[float, ...]" (the modules use postponed annotations)
    for item, kind in _ARRAY_TYPES.items():
        if annotation.startswith(f"tuple[{item}"):
            return kind
    raise TypeError(f"field {field.name}: cannot map {annotation} to a ROS parameter type")


def declare_dataclass(node: Node, cls: type[T], prefix: str = "") -> T:
    """Declare one parameter per field of the dataclass ``cls`` named ``prefix + field`` with the field's
    default, and return ``cls`` built from their values (its validation's ValueError names the parameter)."""
    values = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        default = field.default
        name = prefix + field.name
        if isinstance(default, tuple):
            descriptor = ParameterDescriptor(type=_array_type(field))
            if default:
                value = node.declare_parameter(name, list(default), descriptor).value
            else:  # an empty list has no type of its own
                value = node.declare_parameter(name, Parameter.Type(descriptor.type), descriptor).value
            values[field.name] = tuple(value or ())
        else:
            values[field.name] = node.declare_parameter(name, default).value
    return cls(**values)


def names(cls: Any, prefix: str = "") -> frozenset[str]:
    """The parameter names of the fields of the dataclass (or instance) ``cls``."""
    return frozenset(prefix + f.name for f in dataclasses.fields(cls))


def apply(instance: T, changes: Mapping[str, Any], prefix: str = "") -> T:
    """``instance`` with the parameters in ``changes`` (by parameter name) that are its fields replaced;
    ValueError (from the dataclass's validation) when a new value is not acceptable."""
    fields = {prefix + f.name: f.name for f in dataclasses.fields(instance)}  # type: ignore[arg-type]
    updates = {fields[name]: tuple(v) if isinstance(getattr(instance, fields[name]), tuple) else v
               for name, v in changes.items() if name in fields}
    return dataclasses.replace(instance, **updates) if updates else instance  # type: ignore[type-var]
