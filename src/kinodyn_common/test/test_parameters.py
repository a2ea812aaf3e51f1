"""kinodyn_common.parameters: a validating dataclass declared as ROS parameters, changed live, and built from
a controller's values, the one way nodes and controllers declare a parameter group."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
import rclpy
from kinodyn_common.parameters import (
    apply_changes,
    dataclass_from,
    declare_count,
    declare_dataclass,
    declare_value,
    list_item_type,
)
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.context import Context
from rclpy.node import Node
from rclpy.parameter import Parameter

if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass(frozen=True)
class Group:
    """A parameter group of every kind a node declares: scalars, a filled list, an empty typed list."""

    rate: float = 50.0
    count: int = 3
    mode: str = "fast"
    gains: tuple[float, ...] = (1.0, 2.0)
    feet: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rate) and self.rate > 0.0):
            raise ValueError(f"parameter rate must be a positive finite number (Hz), got {self.rate}")


@pytest.fixture
def node() -> Iterator[Node]:
    context = Context()
    rclpy.init(context=context)
    overrides: list[Parameter[Any]] = [Parameter("rate", value=20.0), Parameter("feet", value=["LF", "RF"])]
    node = Node("parameters_test", context=context, parameter_overrides=overrides)
    try:
        yield node
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_a_dataclass_is_declared_one_parameter_per_field_with_overrides_and_types(node: Node) -> None:
    group = declare_dataclass(node, Group)
    assert group == Group(rate=20.0, feet=("LF", "RF"))
    assert node.get_parameter("gains").type_ == Parameter.Type.DOUBLE_ARRAY
    assert node.describe_parameter("feet").type == int(Parameter.Type.STRING_ARRAY)
    assert node.get_parameter("count").value == 3


def test_an_empty_list_default_is_declared_by_its_array_type(node: Node) -> None:
    value = declare_value(node, "names", [], ParameterDescriptor(), Parameter.Type.STRING_ARRAY)
    assert value is None  # declared, no value yet
    assert node.describe_parameter("names").type == int(Parameter.Type.STRING_ARRAY)
    with pytest.raises(TypeError, match="needs its array type"):
        declare_value(node, "other", [], ParameterDescriptor())


def test_a_live_change_is_validated_by_the_dataclass_and_a_refusal_changes_nothing() -> None:
    group = Group()
    changed = apply_changes(group, {"rate": 10.0, "gains": [3.0], "unrelated": 1})
    assert changed == Group(rate=10.0, gains=(3.0,))
    assert apply_changes(group, {"unrelated": 1}) is group
    with pytest.raises(ValueError, match="parameter rate must be a positive finite number"):
        apply_changes(group, {"rate": -1.0})
    assert group.rate == 50.0  # the default, untouched


def test_a_dataclass_is_built_from_a_controllers_values_lists_as_tuples() -> None:
    built = dataclass_from(Group, {"mode": "slow", "feet": ["LF"], "other": 0})
    assert built == Group(mode="slow", feet=("LF",))
    with pytest.raises(ValueError, match="parameter rate"):
        dataclass_from(Group, {"rate": math.nan})


def test_the_item_type_of_a_list_comes_from_the_annotation_else_the_default() -> None:
    assert list_item_type("tuple[float, ...]", ()) == "float"
    assert list_item_type("tuple[str]", (1,)) == "str"
    assert list_item_type("", (1,)) == "int"
    assert list_item_type("", ()) == ""


def test_a_count_below_one_is_refused_naming_what_it_counts(node: Node) -> None:
    assert declare_count(node, "depth", 10, "messages queued per topic") == 10
    with pytest.raises(ValueError, match=r"^parameter count must be >= 1 \(things\), got 0$"):
        declare_count(node, "count", 0, "things")
