"""``kinodyn_control/WholeBodyController``: the ``wbc`` node's legged mode as a chained controller.

The same core and parameters as the node (docs/nodes/wbc.md): ``WbcCore`` over ``LeggedController``
(``kinodyn.control.locomotion``), configured by ``WbcParameters``, ``LeggedSettings`` and
``LocomotionParameters``, whose fields are this controller's parameters with the node's names, defaults and
validation. Each update gives the core what the node would get in that cycle: the joint states (the joints'
position, velocity and effort state interfaces, stamped with the cycle's time) and, first, the base state
``base_state_controller`` exported in this cycle (``<base_state_controller>/position.x`` ...; the numbers of
an Odometry in ``odom`` of the URDF root link, checked as the node checks one; a cycle without one, NaN, gives
none, and the core holds the posture once the last is older than ``base_state_max_age``). The core's answer, a
joint PD command (checked and clipped to the URDF limits by the core), is applied as ``JointPDController``
applies one: ``effort = effort_ff + kp (position - q) + kd (velocity - qdot)`` written to ``<joint>/effort``,
limited by the URDF (no push past a position or velocity limit). The planned stance is exported as
``<name>/contact.<foot>`` (1 stance, 0 swing), which the estimator reads in the next cycle, as the node's
schedule stamped one period ahead.

Its own ROS 2 node (named after the controller; the node graph's name is ``wbc``) takes ``~/cmd_vel`` and
``~/base_pose`` with the node's meaning and checks, and publishes ``contact_schedule`` at ``publish_rate`` (of
stamp time; 0: every update, as the node), ``~/footholds`` at ``footholds_rate`` (while it has a subscriber,
as the node), with ``planner: mpc`` the MPC's predicted base trajectory on ``~/mpc/path`` and its forces on
``~/mpc/forces`` at ``mpc_rate``, and ``/diagnostics`` at ``diagnostics_rate``. Parameters change live with
the node's rules (``feet`` and ``posture`` start-up only).
"""

from __future__ import annotations

import math
import time as _time
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseArray, PoseStamped, TwistStamped
from kinodyn.control.locomotion import LocomotionParameters
from kinodyn_common.finite import publish_finite
from kinodyn_common.input_bounds import JointBounds
from kinodyn_common.parameters import apply_changes, dataclass_from
from kinodyn_common.problem_log import dropping_bad_messages
from kinodyn_common.raw_messages import contact_schedule_writer
from kinodyn_common.stamps import seconds_to_ns
from nav_msgs.msg import Path
from visualization_msgs.msg import MarkerArray

from kinodyn import Model
from kinodyn_control.controllers.base import INDIVIDUAL, InterfaceConfiguration, Parameter
from kinodyn_control.controllers.legged_state_estimator import BASE_STATE
from kinodyn_control.controllers.limits import JointLimitArrays
from kinodyn_control.controllers.node_parameters import NodeChainableController, specs_of
from kinodyn_control.controllers.stamp_rate import StampRate, rate_parameter
from kinodyn_control.hardware.types import EFFORT, CallbackReturn, ReturnType, full_name
from kinodyn_control.wbc.core import WbcCore, WbcParameters
from kinodyn_control.wbc.legged import LeggedController, LeggedSettings
from kinodyn_interfaces.msg import ContactStates

if TYPE_CHECKING:
    from collections.abc import Callable

JOINT_STATES = ("position", "velocity", "effort")
GROUPS = (WbcParameters, LeggedSettings, LocomotionParameters)
OWN_PARAMETERS: dict[str, Parameter] = {
    "base_state_controller": Parameter("str", "state_estimator", "the controller exporting the base state"),
    "odom_frame": Parameter("str", "odom", "the frame of the base state (footholds' header.frame_id)"),
    "publish_rate": Parameter("float", 0.0, "Hz of stamp time of contact_schedule; 0: every update"),
    "joint_position_margin": Parameter("float", 0.1, "rad or m beyond the URDF limits a joint state may lie"),
    "continuous_position_bound": Parameter("float", 1e6, "bound of a continuous joint's position"),
}
STARTUP_ONLY = ("base_state_controller", "odom_frame", "joint_position_margin", "continuous_position_bound")


class WholeBodyController(NodeChainableController):
    PARAMETERS: ClassVar[dict[str, Parameter]] = {
        **{k: v for group in GROUPS for k, v in specs_of(group).items()}, **OWN_PARAMETERS}

    def configure_with_host(self) -> CallbackReturn:
        assert self.context is not None
        try:
            model = Model.from_urdf(self.host.urdf, floating_base=True)
            params = dataclass_from(WbcParameters, self.params)
            legged = dataclass_from(LeggedSettings, self.params)
            locomotion = dataclass_from(LocomotionParameters, self.params)
            self.groups = (params, legged, locomotion)  # GROUPS' instances
            self.controller = LeggedController(model, legged, locomotion)
            self.publish_rate = rate_parameter("publish_rate", self.params["publish_rate"])
            bounds = JointBounds.from_model(model, self.params["joint_position_margin"],
                                            self.params["continuous_position_bound"])
        except ValueError as exc:
            return self.fail(str(exc))
        node = self.open_node()
        self.joints = list(model.joint_names)
        self.feet = list(legged.feet)
        source = f"{self.params['base_state_controller']}'s base state interfaces"
        self.core = WbcCore(model, self.controller, params, bounds, self.problems, self.logger.info, 0.0,
                            source, clock=self._now_ns)
        self.limits = JointLimitArrays(self.context.description, self.joints)
        self._contacts = node.create_publisher(ContactStates, "contact_schedule", 10)
        self._schedule = contact_schedule_writer()
        self._footholds = node.create_publisher(PoseArray, "~/footholds", 10)
        self._mpc_path = node.create_publisher(Path, "~/mpc/path", 10) if legged.planner == "mpc" else None
        self._mpc_forces = (node.create_publisher(MarkerArray, "~/mpc/forces", 10) if legged.planner == "mpc"
                            else None)
        self._diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        node.create_subscription(TwistStamped, "~/cmd_vel", self._guard("cmd_vel", self._on_cmd_vel), 10)
        node.create_subscription(PoseStamped, "~/base_pose", self._guard("base_pose", self.core.on_base_pose),
                                 10)
        return CallbackReturn.SUCCESS

    def _guard(self, what: str, take: Callable[..., None]) -> Callable[..., None]:
        return self.ros.guarded(dropping_bad_messages(self.problems, f"{what} message", take))

    def _now_ns(self) -> int:
        """The controllers' clock (the manager's: simulated time in lockstep), as the core's clock [ns]."""
        assert self.context is not None
        return seconds_to_ns(self.context.now())

    def _on_cmd_vel(self, msg: TwistStamped) -> None:
        self.core.on_cmd_vel(msg, self._now_ns())

    def exported_state_interfaces(self) -> tuple[str, ...]:
        return tuple(f"contact.{foot}" for foot in self.feet)

    def command_interface_configuration(self) -> InterfaceConfiguration:
        return InterfaceConfiguration(INDIVIDUAL, tuple(full_name(j, EFFORT) for j in self.joints))

    def state_interface_configuration(self) -> InterfaceConfiguration:
        names = [full_name(j, i) for i in JOINT_STATES for j in self.joints]
        names += [full_name(self.params["base_state_controller"], b) for b in BASE_STATE]
        return InterfaceConfiguration(INDIVIDUAL, tuple(names))

    def on_activate(self) -> CallbackReturn:
        self.publishing = StampRate(self.publish_rate)
        return CallbackReturn.SUCCESS

    # --- live parameters ------------------------------------------------------------------------------------
    def _on_change(self, changes: dict[str, Any]) -> str:
        startup = [name for name in changes if name in STARTUP_ONLY]
        if startup:
            return f"{', '.join(startup)} apply at configuration only: reconfigure the controller"
        try:
            rate = rate_parameter("publish_rate", changes.get("publish_rate", self.params["publish_rate"]))
            params = apply_changes(self.groups[0], changes)
            legged = apply_changes(self.groups[1], changes)
            locomotion = apply_changes(self.groups[2], changes)
            self.controller.reconfigure(legged, locomotion)
        except ValueError as exc:
            return str(exc)
        self.groups = (params, legged, locomotion)
        self.core.params = params
        self.params.update(changes)
        self.publish_rate = self.publishing.rate = rate
        return ""

    # --- the cycle ------------------------------------------------------------------------------------------
    def update(self, time: float, period: float) -> ReturnType:
        assert self.states is not None
        assert self.commands is not None
        values = self.states.get()
        n = len(self.joints)
        q, qdot = values[:n], values[n:2 * n]
        at = seconds_to_ns(time)
        base = values[3 * n:]
        with self.ros.lock:
            if math.isfinite(base.dot(base)) or np.isfinite(base).all():  # (a finite sum of squares: finite)
                self._base_state(base, at)
            answers = self.core.on_joint_state_arrays(at, q, qdot, _time.monotonic_ns())
        for answer in answers:  # one: the base-state wait is 0
            command = answer.joint_command  # the core's message is not built: its arrays are applied
            effort = (command.effort + command.kp * (command.position - q)
                      + command.kd * (command.velocity - qdot))
            self.commands.set(self.limits.saturate_effort(effort, q, qdot))
            self.core.record_latency(answer.received_ns or 0, _time.monotonic_ns())
            if answer.schedule_ns is not None and answer.stance is not None:
                flags = list(answer.stance.values())
                self.exported[:] = flags
                if self.publishing.due(at):
                    self._publish_schedule(answer.schedule_ns, flags)
            if answer.footholds is not None and self._footholds.get_subscription_count():  # a viewer's, as
                # the node's: often none
                publish_finite(self._footholds, answer.footholds, self.problems)
            if answer.mpc_path is not None and self._mpc_path is not None:
                publish_finite(self._mpc_path, answer.mpc_path, self.problems)
            if answer.mpc_forces is not None and self._mpc_forces is not None:
                publish_finite(self._mpc_forces, answer.mpc_forces, self.problems)
            if answer.diagnostics is not None:
                publish_finite(self._diagnostics, answer.diagnostics, self.problems)
        return ReturnType.OK

    def _publish_schedule(self, stamp_ns: int, flags: list[bool]) -> None:
        """``contact_schedule`` (the node's message: the feet, their planned stance, zero points and forces)
        as its bytes, written as the node writes them: flags only, nothing non-finite to look for."""
        self._contacts.publish(self._schedule.write(stamp_ns, self.feet, in_contact=flags))

    def _base_state(self, base: np.ndarray, stamp_ns: int) -> None:
        """The estimator's base state of this cycle to the core, as the node gets it (an Odometry's numbers in
        ``odom_frame`` of the root link)."""
        try:
            self.core.on_base_state_arrays(stamp_ns, self.params["odom_frame"], self.core.root, base[:7],
                                           base[7:])
        except ValueError as exc:  # the core's checks of a base state (as the node's callback drops it)
            self.problems.warn(("base_state", type(exc).__name__), f"ignoring the base state of "
                               f"{self.params['base_state_controller']}: {exc}")
