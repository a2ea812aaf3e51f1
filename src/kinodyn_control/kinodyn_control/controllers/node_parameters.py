"""Controller parameters generated from the parameter definitions of a node, and the controller's ROS 2 node.

A controller that is a node's algorithm in the manager's process (the estimator, the whole-body controller)
takes the node's parameters: ``specs_of`` turns a parameter dataclass (kinodyn_common.parameters; or a
mapping of defaults) into the controller's ``PARAMETERS``, so there is one definition of each parameter
set. ``ControllerNode`` is the controller's own ROS 2 node (its name, in the manager's namespace, as a
ros2_control controller is a node in the controller manager's process): its parameters are declared
(``declare_value``) with the configured values, so ``ros2 param get/set /<controller> ...`` work; a live
change goes through ``on_change`` (validation; a refusal changes nothing), under the controller's lock,
which its ``update`` holds too. ``NodeChainableController`` is the chained controller that owns such a node.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from kinodyn_common.parameters import declare_value, list_item_type
from kinodyn_common.problem_log import DistinctProblemLog
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.parameter import Parameter as RosParameter

from kinodyn_control.controllers.base import Parameter
from kinodyn_control.controllers.chainable import ChainableController
from kinodyn_control.hardware.types import CallbackReturn

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from _typeshed import DataclassInstance
    from rclpy.node import Node

MsgT = TypeVar("MsgT")
_LIST_TYPES = {"str": "str_list", "float": "float_list"}
_SCALAR_TYPES = {bool: "bool", int: "int", float: "float", str: "str"}
_ROS_LIST_TYPES = {"str_list": RosParameter.Type.STRING_ARRAY, "float_list": RosParameter.Type.DOUBLE_ARRAY}


def _spec(name: str, default: object, annotation: str, where: str) -> Parameter:
    if isinstance(default, (tuple, list)):
        item = list_item_type(annotation, default)
        if item not in _LIST_TYPES:
            raise TypeError(f"{where}.{name}: cannot map {annotation or type(default)} to a parameter type")
        return Parameter(_LIST_TYPES[item], list(default), f"see {where}")
    if type(default) not in _SCALAR_TYPES:
        raise TypeError(f"{where}.{name}: cannot map {type(default).__name__} to a parameter type")
    return Parameter(_SCALAR_TYPES[type(default)], default, f"see {where}")


def specs_of(definition: type[DataclassInstance], defaults: Mapping[str, Any] | None = None
             ) -> dict[str, Parameter]:
    """``PARAMETERS`` entries for the fields of the dataclass ``definition`` (their defaults and types), or,
    with ``defaults`` (name -> default, e.g. a flattened dataclass), for those names; a list's item type comes
    from the dataclass field of the same name when the default is empty."""
    annotations = {f.name: str(f.type) for f in dataclasses.fields(definition)}
    where = definition.__name__
    if defaults is None:
        defaults = {f.name: f.default for f in dataclasses.fields(definition)}
    return {name: _spec(name, value, annotations.get(name, ""), where) for name, value in defaults.items()}


class NodeHost(Protocol):
    """What a controller with its own node needs of its host (control_node's context)."""

    urdf: str  # the robot description's text

    def create_node(self, name: str) -> Node: ...

    def destroy_node(self, node: Node) -> None: ...


def node_host(context: object) -> NodeHost:
    """``context`` as a NodeHost; ValueError when it is not one (a host without ROS nodes or the URDF)."""
    if not all(hasattr(context, a) for a in ("urdf", "create_node", "destroy_node")):
        raise ValueError("this controller needs its own ROS 2 node and the URDF text from its host "
                         "(control_node's controller context)")
    return cast("NodeHost", context)


def _ros_value(spec: Parameter, value: Any) -> Any:  # noqa: ANN401  (a parameter value: rclpy's are untyped)
    if spec.type == "float":
        return float(value)
    if spec.type == "float_list":
        return [float(x) for x in value]
    return list(value) if isinstance(value, (list, tuple)) else value


class ControllerNode:
    """A controller's ROS 2 node (module doc). ``make_node`` is the context's ``create_node``; ``on_change``
    takes ``{name: value}`` of a live change and returns '' (applied) or why it is refused."""

    def __init__(self, make_node: Callable[[], Node], specs: Mapping[str, Parameter],
                 params: Mapping[str, Any], on_change: Callable[[dict[str, Any]], str]) -> None:
        self.lock = threading.Lock()
        self.node = make_node()
        self._specs = specs
        self._on_change = on_change
        for name, spec in specs.items():
            declare_value(self.node, name, _ros_value(spec, params[name]),
                          ParameterDescriptor(description=spec.doc), _ROS_LIST_TYPES.get(spec.type))
        self.node.add_on_set_parameters_callback(self._set)

    def _set(self, parameters: list[RosParameter[Any]]) -> SetParametersResult:
        changes = {p.name: p.value for p in parameters if p.name in self._specs}
        if not changes:
            return SetParametersResult(successful=True)
        changes = {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in changes.items()}
        with self.lock:
            reason = self._on_change(changes)
        return SetParametersResult(successful=not reason, reason=reason)

    def guarded(self, callback: Callable[[MsgT], None]) -> Callable[[MsgT], None]:
        """``callback`` run under the controller's lock (topic callbacks run in the executor's thread)."""

        def run(msg: MsgT) -> None:
            with self.lock:
                callback(msg)

        return run


class NodeChainableController(ChainableController):
    """A chained controller with its own ROS 2 node. ``on_configure`` takes the ``host`` (``node_host``), then
    runs the subclass's ``configure_with_host``, which calls ``open_node``; ``on_cleanup`` destroys the node;
    ``_on_change`` judges live parameter changes."""

    host: NodeHost
    ros: ControllerNode
    problems: DistinctProblemLog

    def on_configure(self) -> CallbackReturn:
        assert self.context is not None
        try:
            self.host = node_host(self.context)
        except ValueError as exc:
            return self.fail(str(exc))
        return self.configure_with_host()

    def configure_with_host(self) -> CallbackReturn:
        """The controller's configuration once ``host`` is known (its URDF text: ``host.urdf``)."""
        raise NotImplementedError

    def open_node(self) -> Node:
        """The controller's node (a ControllerNode over ``PARAMETERS``, live changes to ``_on_change``); its
        logger becomes the controller's (lines under the controller's name, as a ros2_control controller's),
        with ``problems`` over it."""
        self.ros = ControllerNode(lambda: self.host.create_node(self.name), self.PARAMETERS, self.params,
                                  self._on_change)
        self.logger = self.ros.node.get_logger()
        self.problems = DistinctProblemLog(self.logger)
        return self.ros.node

    def on_cleanup(self) -> CallbackReturn:
        self.host.destroy_node(self.ros.node)
        return CallbackReturn.SUCCESS

    def _on_change(self, changes: dict[str, Any]) -> str:
        """'' when the live change ``changes`` ({name: value}) is applied, else why it is refused."""
        raise NotImplementedError
