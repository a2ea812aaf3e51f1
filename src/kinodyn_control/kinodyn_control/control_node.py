"""control_node: the controller manager as a ROS 2 node (docs/nodes/control_node.md).

Parameters, laid out like ros2_control's controller_manager YAML::

    controller_manager:
      ros__parameters:
        update_rate: 500                      # Hz, int
        lockstep: false                       # true: each cycle waits for the commands answering its state
        lockstep_timeout: 1.0                 # wall seconds of waiting before it is logged (lockstep only)
        lockstep_max_speed: 0.0               # lockstep: at most this many times real time (0: unbounded)
        realtime_priority: 0                  # 1-99: the wall-clock loop's thread under SCHED_FIFO
        robot_description_file: package://kinodyn_bringup/urdf/quadruped.urdf   # or robot_description, or
        the topic
        joint_state_broadcaster: {type: kinodyn_control/JointStateBroadcaster}
        leg_pd:
          type: kinodyn_control/JointPDController
          joints: [LF_HAA, ...]
          watchdog_timeout: 0.1
        inactive_controllers: [leg_pd]         # loaded and configured, not activated

Every ``<name>.type`` is loaded, configured and (unless listed in ``inactive_controllers``) activated at
startup; ``<name>.<key>`` are that controller's parameters. Without ``robot_description`` and
``robot_description_file`` the node waits for the ``robot_description`` topic (std_msgs/String, transient
local). The control loop (read -> update -> write) runs on its own thread (loop.py, or lockstep.py with
``lockstep: true``: paced by the commands, with simulated time ``k / update_rate`` as the controllers' clock);
services and topic callbacks run in the executor's thread.

With ``realtime_priority`` (wall-clock loop) the loop's thread runs ``SCHED_FIFO`` at it and the executor's
thread and every thread started since the node was built (the publishing thread, the middleware's) one below,
1 at least (threads from before, a BLAS worker pool, stay time-shared): the loop waits for locks those threads
hold (the GIL; a DDS reader's or writer's mutex), and a time-shared holder can be preempted by other
processes for milliseconds. What the loop publishes (the broadcasters, the controllers' nodes, the
simulator's topics: RealtimePublishers) it hands to a publishing thread, which publishes it with the GIL
released (kinodyn_common/realtime_publisher.py): a DDS publish waits on locks of the subscribing processes
too. Without ``realtime_priority`` the loop publishes itself, as every thread stays time-shared anyway.

A parameter the node does not know (``update_ratee``; ``<name>.<key>`` without ``<name>.type``) is an error
at startup (``reject_undeclared_parameters``): one line, exit code 1. A failed hardware component (its
``read``/``write`` returned ERROR or raised, e.g. the simulator's physics failed) goes through ``on_error``,
the controllers using it are deactivated in safe mode (manager.py), and the node exits with code 1 within
``node_runner.STOP_POLL_PERIOD`` (the fault is a flag that ``spin_check`` reads after every ``spin_once``, in
the executor's thread: no guard condition, so the process keeps rclpy's EventsExecutor; ``ControlFaultError``
ends the spin, so the components are shut down before the context is); so does a control loop that died.

A controller that is a node's algorithm (the estimator, the whole-body controller) gets its own ROS 2 node
from its context (``create_node``): named after the controller, in this node's namespace and process, with the
process's remapping rules but not its ``__node``/``__ns`` (which name this node), as ros2_control's
controller manager does; those nodes are spun by this process's executor (``extra_nodes``, node_runner.py).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import declare_dataclass, reject_undeclared_parameters
from kinodyn_common.realtime import (
    HeapFreeze,
    process_threads,
    set_fifo_priority,
    set_fifo_priority_of_other_threads,
)
from kinodyn_common.realtime_publisher import PublishingThread, RealtimePublisher
from kinodyn_common.robot_description import load_urdf, read_robot_description
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String

from kinodyn_control.hardware.description import RobotDescription, parse_robot_description
from kinodyn_control.hardware.types import LifecycleState
from kinodyn_control.lifecycle import LifecycleError
from kinodyn_control.lockstep import LockstepGate, LockstepLoop, lockstep_period_ns
from kinodyn_control.loop import ControlLoop
from kinodyn_control.manager import ControllerError, ControllerManager, HardwareError, ResourceManager
from kinodyn_control.registry import PluginError, controller_registry, hardware_registry
from kinodyn_interfaces.msg import ControllerState
from kinodyn_interfaces.srv import (
    ConfigureController,
    ListControllers,
    LoadController,
    SwitchController,
    UnloadController,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


class _Answer(Protocol):
    """A controller_manager service response: ``ok`` and ``message``."""

    ok: bool
    message: str


AnswerT = TypeVar("AnswerT", bound=_Answer)

NODE_NAME = "controller_manager"
_FIFO_MAX_PRIORITY = 99  # Linux SCHED_FIFO priorities are 1-99
LATCHED_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
STARTUP_ERRORS = (HardwareError, ControllerError, PluginError, LifecycleError)
NODE_PARAMETERS = (
    "update_rate",
    "lockstep",
    "lockstep_timeout",
    "lockstep_max_speed",
    "realtime_priority",
    "robot_description",
    "robot_description_file",
    "inactive_controllers",
    "hardware_components_initial_state.unconfigured",
    "hardware_components_initial_state.inactive",
    "use_sim_time",
)


@dataclass(frozen=True)
class LoopParameters:
    """The control loop's parameters (module doc). The node declares its overrides itself, so a value may
    come with any type: each is checked for its type too."""

    update_rate: int = 100
    lockstep: bool = False
    lockstep_timeout: float = 1.0
    lockstep_max_speed: float = 0.0
    realtime_priority: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.update_rate, int) or self.update_rate <= 0:
            raise ValueError(
                f"parameter update_rate must be a positive integer [Hz], got {self.update_rate!r}"
            )
        if not isinstance(self.lockstep, bool):
            raise ValueError(f"parameter lockstep must be true or false, got {self.lockstep!r}")
        if self.lockstep:
            lockstep_period_ns(self.update_rate)
        speed = self.lockstep_max_speed
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not (
            math.isfinite(speed) and speed >= 0.0
        ):
            raise ValueError(f"parameter lockstep_max_speed must be a finite number >= 0 (times real "
                             f"time, 0: as fast as the loop closes), got {speed!r}")
        priority = self.realtime_priority
        if (isinstance(priority, bool) or not isinstance(priority, int)
                or not 0 <= priority <= _FIFO_MAX_PRIORITY):
            raise ValueError(f"parameter realtime_priority must be 0 (off) or a SCHED_FIFO priority 1-99, "
                             f"got {priority!r}")


class ControlFaultError(RuntimeError):
    """Raised in the executor to end the node (exit code 1) after it logged why: hardware failed, the loop
    died, or the robot description from the topic was unusable."""


def controller_node_arguments(argv: Sequence[str]) -> list[str]:
    """The ``--ros-args`` of a controller's node: the remapping rules of the process's ``argv`` except those
    of ``__node`` and ``__ns`` (they name the controller manager's node)."""
    rules: list[str] = []
    inside = False
    tokens = iter(argv)
    for token in tokens:
        if token == "--ros-args":
            inside = True
        elif token == "--":
            inside = False
        elif inside and token in ("-r", "--remap"):
            rule = next(tokens, "")
            if rule.split(":=", 1)[0].rsplit(":", 1)[-1] not in ("__node", "__ns"):
                rules += ["-r", rule]
    return ["--ros-args", *rules] if rules else []


class RosControllerContext:
    """A controller's view of the node: ``~/x`` is ``<controller>/x`` in the node's namespace; ``urdf`` is
    the robot description's text; ``create_node`` gives the controller a ROS 2 node of its own."""

    def __init__(self, node: ControlNode, name: str, description: RobotDescription, urdf: str) -> None:
        self.node, self.name, self.description, self.urdf = node, name, description, urdf
        self.logger = node.get_logger()

    def create_node(self, name: str) -> Node:
        return self.node.create_controller_node(name)

    def destroy_node(self, node: Node) -> None:
        self.node.destroy_controller_node(node)

    def now(self) -> float:
        return self.node.now()

    def _topic(self, topic: str) -> str:
        return f"{self.name}/{topic[2:]}" if topic.startswith("~/") else topic

    def create_publisher(self, msg_type: type, topic: str) -> Any:  # noqa: ANN401  (rclpy's Publisher / Subscription of any rosidl type)
        return self.node.create_publisher(msg_type, self._topic(topic), QoSProfile(depth=10),
                                          publisher_class=RealtimePublisher)

    def create_subscription(self, msg_type: type, topic: str, callback: Callable[[Any], None],
                            raw: bool = False) -> Any:  # noqa: ANN401  (rclpy's Subscription of any rosidl type)
        return self.node.create_subscription(msg_type, self._topic(topic), callback, QoSProfile(depth=10),
                                             raw=raw)

    def destroy(self, entity: Any) -> None:  # noqa: ANN401  (rclpy's Publisher / Subscription of any rosidl type)
        if hasattr(entity, "publish"):
            self.node.destroy_publisher(entity)
        else:
            self.node.destroy_subscription(entity)


class ControllerNode(Node):
    """A controller's own node (``RosControllerContext.create_node``): its publishers are RealtimePublishers,
    as the controller publishes from the loop's thread."""

    def create_publisher(self, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN401  (rclpy's Publisher of any rosidl type)
        kwargs.setdefault("publisher_class", RealtimePublisher)
        return super().create_publisher(*args, **kwargs)


class ControlNode(Node):
    def __init__(self) -> None:
        # the threads before the node's (a BLAS worker pool started at import): they stay time-shared
        self._library_threads = process_threads() - {threading.get_native_id()}
        super().__init__(
            NODE_NAME, allow_undeclared_parameters=True, automatically_declare_parameters_from_overrides=True
        )
        self.manager: ControllerManager | None = None  # set first: destroy_node works on a node that failed
        self.loop: ControlLoop | LockstepLoop | None = None
        self._controller_nodes: list[Node] = []
        self.publishing: PublishingThread | None = None  # started with a SCHED_FIFO loop
        self._check_parameter_names()
        self._exit_line = ""  # set once: the error line logged as the node ends with exit code 1
        self._heap = HeapFreeze()  # once the loop has run its first cycles (the controllers warm)
        loop = declare_dataclass(self, LoopParameters)
        self.update_rate, self.lockstep = loop.update_rate, loop.lockstep
        self.gate: LockstepGate | None = None
        if self.lockstep:
            self.gate = LockstepGate(float(loop.lockstep_timeout), self.get_logger())
        self.max_speed = float(loop.lockstep_max_speed)
        self.realtime_priority = loop.realtime_priority
        if self.lockstep and self.realtime_priority:
            self.get_logger().warning("realtime_priority applies to the wall-clock loop; a lockstep loop is "
                                      "paced by the commands and runs time-shared")
        xml, file = self._param("robot_description", ""), self._param("robot_description_file", "")
        if xml or file:
            text, source = read_robot_description(xml, file)
            self._start(text, source)
        else:
            self.get_logger().info("waiting for the URDF on topic robot_description (transient local)")
            self._description_sub = self.create_subscription(
                String, "robot_description", self._on_description, LATCHED_QOS
            )
        # steady: the loop's health is checked whatever /clock does (it stops when the simulation fails)
        self.create_timer(0.5, self._check_loop, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _check_parameter_names(self) -> None:
        """Every parameter given must be one of NODE_PARAMETERS, ``<name>.*`` of a controller with a
        ``<name>.type`` (its keys are checked when it is loaded), or a ``qos_overrides.*``."""
        given = set(self._parameter_overrides)
        controllers = [name[: -len(".type")] for name in given if name.endswith(".type")]
        known = set(NODE_PARAMETERS) | {
            name for name in given
            if name.startswith("qos_overrides.") or any(name.startswith(f"{c}.") for c in controllers)
        }
        reject_undeclared_parameters(self, known)

    def _param(self, name: str, default: Any) -> Any:  # noqa: ANN401  (an rclpy parameter value: untyped)
        if self.has_parameter(name):
            return self.get_parameter(name).value
        return self.declare_parameter(name, default).value

    def _on_description(self, msg: String) -> None:
        if self.manager is not None:
            return  # as ros2_control: reloading the description is not supported
        try:
            self._start(msg.data, "topic robot_description")
        except (ValueError, *STARTUP_ERRORS) as exc:
            self._end(f"{exc}; exiting")

    # --- startup --------------------------------------------------------------------------------------------
    def _start(self, urdf: str, source: str) -> None:
        try:
            self._build(urdf, source)
        except STARTUP_ERRORS as exc:
            raise ValueError(str(exc)) from None

    def _build(self, urdf: str, source: str) -> None:
        description = parse_robot_description(load_urdf(urdf, source, self.get_logger()))
        resources = ResourceManager(description, hardware_registry(), self.get_logger())
        manager = ControllerManager(
            resources,
            controller_registry(),
            lambda n: RosControllerContext(self, n, description, urdf),
            self.get_logger(),
        )
        try:
            names = self._bring_up(manager)
        except BaseException:
            manager.shutdown()  # components configured so far (a simulator's node) are shut down again
            raise
        manager.on_hardware_failure = self._report_fault
        self.manager = manager
        for srv, name, handler in (
            (ListControllers, "list_controllers", self._list),
            (LoadController, "load_controller", self._load),
            (ConfigureController, "configure_controller", self._configure),
            (UnloadController, "unload_controller", self._unload),
            (SwitchController, "switch_controller", self._switch),
        ):
            self.create_service(srv, f"~/{name}", handler)
        if self.gate is not None:
            self.loop = LockstepLoop(manager.lockstep_cycle, self.update_rate, self.gate, self.max_speed)
            pacing = f"lockstep, {1.0 / self.update_rate} s of simulated time per cycle"
        else:
            self.loop = ControlLoop(manager.cycle, self.update_rate, self._clock_now,
                                    on_start=self._enter_realtime)
            pacing = f"loop at {self.update_rate} Hz"
        if self.realtime_priority and self.gate is None:  # the loop's publishes leave its thread
            self.publishing = PublishingThread(self.get_logger())
            self.publishing.start()
        self.loop.start()
        self.get_logger().info(
            f"{source}: hardware {', '.join(resources.components)}; controllers "
            f"{', '.join(f'{n} ({manager.controllers[n].state.value})' for n in names) or 'none'}; "
            f"{pacing}"
        )

    def _bring_up(self, manager: ControllerManager) -> list[str]:
        """Components to their initial states, then every controller with a ``<name>.type`` loaded, configured
        and (unless in ``inactive_controllers``) activated; returns the controllers' names."""
        resources = manager.resources
        held = {
            state: self._param(f"hardware_components_initial_state.{state.value}", [""])
            for state in (LifecycleState.UNCONFIGURED, LifecycleState.INACTIVE)
        }
        unknown = sorted({n for names in held.values() for n in names if n} - set(resources.components))
        if unknown:
            raise HardwareError(f"hardware_components_initial_state names {', '.join(unknown)}, which are "
                                f"not hardware components; components: {', '.join(resources.components)}")
        for name in resources.components:
            target = next((s for s, names in held.items() if name in names), LifecycleState.ACTIVE)
            resources.set_component_state(name, target)
        if self.gate is not None:
            manager.enter_lockstep(self.gate, 1.0 / self.update_rate)
        else:
            manager.enter_wall_clock_loop(1.0 / self.update_rate)
        inactive = [n for n in self._param("inactive_controllers", [""]) if n]
        names = [p[: -len(".type")] for p in self.get_parameters_by_prefix("") if p.endswith(".type")]
        unknown = sorted(set(inactive) - set(names))
        if unknown:
            raise ControllerError(f"inactive_controllers names {', '.join(unknown)}, which have no "
                                  f"<name>.type parameter; controllers: {', '.join(names) or 'none'}")
        for name in names:  # every one loaded before any is configured: a chain names its exporters
            manager.load(name, self.get_parameter(f"{name}.type").value, self._controller_params(name))
        for name in names:
            manager.configure(name)
        ok, message = manager.switch([n for n in names if n not in inactive], [], strictness=2)
        if not ok:
            raise ControllerError(message)
        return names

    def _controller_params(self, name: str) -> dict[str, Any]:
        return {key: p.value for key, p in self.get_parameters_by_prefix(name).items() if key != "type"}

    def create_controller_node(self, name: str) -> Node:
        """A controller's own node (module doc), spun by this process's executor."""
        node = ControllerNode(name, namespace=self.get_namespace(), context=self.context,
                              use_global_arguments=False, cli_args=controller_node_arguments(sys.argv))
        self._controller_nodes.append(node)
        if self.executor is not None:
            self.executor.add_node(node)
        return node

    def destroy_controller_node(self, node: Node) -> None:
        if node in self._controller_nodes:
            self._controller_nodes.remove(node)
            if self.executor is not None:
                self.executor.remove_node(node)
            node.destroy_node()

    def extra_nodes(self) -> list[Node]:
        """The controllers' nodes (node_runner.py adds them to the executor after this node)."""
        return list(self._controller_nodes)

    def _enter_realtime(self) -> None:
        """In the loop's thread: ``SCHED_FIFO`` at ``realtime_priority``, and every other thread of the
        process (the executor's, the publishing thread, the middleware's) one below (1 at least): the loop
        waits for the locks they hold (the GIL, the middleware's), and a time-shared holder can be preempted
        for milliseconds by other processes. Threads that ran before the node was built (a BLAS library's
        spinning worker pool) stay time-shared. One line if it cannot."""
        priority = self.realtime_priority
        problem = set_fifo_priority(priority)
        if problem is None and priority:
            problem = set_fifo_priority_of_other_threads(max(priority - 1, 1), skip=self._library_threads)
        if problem is not None:
            self.get_logger().warning(problem)

    def _clock_now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def now(self) -> float:
        """The controllers' clock: the node's ROS clock, or in lockstep the simulated time of the cycle."""
        if self.gate is not None:  # before the loop starts: simulated time 0
            return self.loop.time if isinstance(self.loop, LockstepLoop) else 0.0
        return self._clock_now()

    def _check_loop(self) -> None:
        if self.loop is None:
            return
        if self.loop.error is not None:
            self._report_fault(f"the control loop stopped: {self.loop.error!r}")
        self._heap.after(self.loop.cycles)

    def _report_fault(self, message: str) -> None:
        """From any thread: end the node with exit code 1; the first fault's message is logged, as one line
        with the exit."""
        self._end(f"{message}; exiting with code 1")

    def _end(self, line: str) -> None:
        """From any thread: the node ends (``spin_check``) with the first ``line`` given as its error line."""
        self._exit_line = self._exit_line or line

    def spin_check(self) -> None:
        """In the executor's thread, after every ``spin_once`` (node_runner.py): raise ControlFaultError, once
        its line is logged, when the node must end."""
        if self._exit_line:
            self.get_logger().error(self._exit_line)
            raise ControlFaultError(self._exit_line)

    # --- services -------------------------------------------------------------------------------------------
    def _answer(self, response: AnswerT, action: Callable[[], object]) -> AnswerT:
        try:
            action()
            response.ok, response.message = True, "ok"
        except (ControllerError, LifecycleError) as exc:
            response.ok, response.message = False, str(exc)
            self.get_logger().error(str(exc))
        except Exception:  # noqa: BLE001  (a controller's hook failing on this request must not stop the node)
            response.ok, response.message = False, self._unexpected()
        return response

    def _unexpected(self) -> str:
        """The answer to a request that raised unexpectedly; logged with its traceback."""
        message = f"the request failed: {traceback.format_exc(limit=0).strip()}"
        self.get_logger().error(f"{message}\n{traceback.format_exc()}")
        return message

    def _list(self, request: ListControllers.Request, response: ListControllers.Response
              ) -> ListControllers.Response:
        assert self.manager is not None
        for entry in list(self.manager.controllers.values()):
            state = ControllerState(name=entry.name, state=entry.state.value, type=entry.type)
            state.required_command_interfaces = list(entry.command_names)
            state.required_state_interfaces = list(entry.state_names)
            state.claimed_interfaces = [n for n, c in self.manager.claimed.items() if c == entry.name]
            response.controller.append(state)
        return response

    def _load(self, request: LoadController.Request, response: LoadController.Response
              ) -> LoadController.Response:
        manager = self.manager
        assert manager is not None

        def load() -> None:
            key = f"{request.name}.type"
            if not self.has_parameter(key):
                raise ControllerError(f"cannot load controller '{request.name}': parameter {key} is not set")
            manager.load(
                request.name, self.get_parameter(key).value, self._controller_params(request.name)
            )

        return self._answer(response, load)

    def _configure(self, request: ConfigureController.Request, response: ConfigureController.Response
                   ) -> ConfigureController.Response:
        manager = self.manager
        assert manager is not None
        return self._answer(response, lambda: manager.configure(request.name))

    def _unload(self, request: UnloadController.Request, response: UnloadController.Response
                ) -> UnloadController.Response:
        manager = self.manager
        assert manager is not None
        return self._answer(response, lambda: manager.unload(request.name))

    def _switch(self, request: SwitchController.Request, response: SwitchController.Response
                ) -> SwitchController.Response:
        assert self.manager is not None
        try:
            response.ok, response.message = self.manager.switch(
                list(request.activate_controllers), list(request.deactivate_controllers), request.strictness,
                request.timeout,
            )
        except Exception:  # noqa: BLE001  (as _answer)
            response.ok, response.message = False, self._unexpected()
        return response

    def _stop_loop(self) -> None:
        if self.loop is not None:
            self.loop.stop()

    def destroy_node(self) -> None:
        self._stop_loop()
        if self.manager is not None:
            self.manager.shutdown()
        if self.publishing is not None:
            self.publishing.stop()  # what the loop queued is published first
        for node in list(self._controller_nodes):
            self.destroy_controller_node(node)
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    try:
        return run_node(NODE_NAME, ControlNode, args)
    except ControlFaultError:  # logged where raised; run_node destroyed the node and shut the context down
        # Exit now: the interpreter's teardown (garbage-collecting the compiled kernels, the DDS entities)
        # takes 1-3 s more, and whoever supervises the process should learn of the fault at once.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


if __name__ == "__main__":
    raise SystemExit(main())
