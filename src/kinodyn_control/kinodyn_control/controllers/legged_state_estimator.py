"""``kinodyn_control/LeggedStateEstimator``: the ``state_estimator`` node's estimator as a chained controller.

The same core and parameters as the node (docs/nodes/state_estimator.md): ``EstimatorPipeline`` (stamp
order, ``kinodyn.estimation.LeggedEstimator``) with ``EstimatorParameters``, whose fields (flattened) are this
controller's parameters with the node's names, defaults and validation. Each update gives the pipeline what
the broadcasters would publish in that cycle, built from the state interfaces and stamped with the cycle's
time: the IMU's angular velocity and linear acceleration (``sensor_name``, in the sensor's ``frame_id``), the
joints' positions, velocities and efforts, and with ``contact_source: schedule`` the contact schedule that
``contact_controller`` exported in the previous cycle (``<contact_controller>/contact.<foot>``, 1 stance, 0
swing; read from the previous cycle, NaN = none yet: no contacts message that cycle). The estimate of the
cycle is exported as state interfaces (``<name>/position.{x,y,z}``, ``orientation.{x,y,z,w}`` of the root link
in ``odom_frame``, ``linear_velocity.{x,y,z}`` and ``angular_velocity.{x,y,z}`` in the root link's frame, as
the odometry's twist), NaN in a cycle without an estimate (initialising, reset).

Its own ROS 2 node (named after the controller) publishes ``odometry/filtered`` at ``publish_rate`` (of stamp
time; 0: every estimate, as the node), ``/tf`` at ``tf_rate`` (0: with each odometry message) and
``/diagnostics`` at ``diagnostics_rate``;
its parameters can be changed live with the node's rules (a change of the filter's parameters restarts it;
``contact_source``, ``feet``, ``sensor_name`` and ``contact_controller`` decide the claimed interfaces:
start-up only).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from kinodyn.sim.collision import collision_spheres
from kinodyn_common.cdr import odometry_rows_cdr, transform_row_cdr
from kinodyn_common.finite import publish_finite
from kinodyn_common.stamps import seconds_to_ns
from nav_msgs.msg import Odometry

from kinodyn import Model
from kinodyn_control.controllers.base import INDIVIDUAL, InterfaceConfiguration, Parameter
from kinodyn_control.controllers.node_parameters import NodeChainableController, specs_of
from kinodyn_control.controllers.stamp_rate import StampRate, rate_parameter
from kinodyn_control.estimation.messages import (
    ImuSample,
    JointSample,
)
from kinodyn_control.estimation.pipeline import EstimateRows, EstimatorParameters, EstimatorPipeline
from kinodyn_control.hardware.types import CallbackReturn, ReturnType, full_name
from tf2_msgs.msg import TFMessage

BASE_STATE = ("position.x", "position.y", "position.z", "orientation.x", "orientation.y", "orientation.z",
              "orientation.w", "linear_velocity.x", "linear_velocity.y", "linear_velocity.z",
              "angular_velocity.x", "angular_velocity.y", "angular_velocity.z")
"""The exported base state, in this order (an Odometry's pose and twist)."""
IMU_READINGS = ("angular_velocity.x", "angular_velocity.y", "angular_velocity.z", "linear_acceleration.x",
                "linear_acceleration.y", "linear_acceleration.z")
JOINT_STATES = ("position", "velocity", "effort")
STANCE_ABOVE = 0.5
"""A contact.<foot> value above this is stance (the exporter writes 1 stance, 0 swing)."""
OWN_PARAMETERS: dict[str, Parameter] = {
    "sensor_name": Parameter("str", "", "the IMU <sensor> of the <ros2_control> block"),
    "contact_controller": Parameter("str", "wbc", "contact_source schedule: the controller exporting "
                                    "contact.<foot>"),
    "publish_tf": Parameter("bool", True, "publish odom_frame -> base_frame on /tf"),
    "publish_rate": Parameter("float", 0.0, "Hz of stamp time of odometry/filtered (and /tf while tf_rate "
                              "is 0); 0: every estimate"),
    "tf_rate": Parameter("float", 0.0, "Hz of stamp time of /tf; 0: with every odometry/filtered message"),
}
STARTUP_ONLY = ("sensor_name", "contact_controller", "contact_source", "feet")
"""Parameters that decide the claimed interfaces: refused live (reconfigure the controller)."""


def base_state_values(msg: Odometry) -> list[float]:
    """The exported base state (BASE_STATE) of an Odometry."""
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    v, w = msg.twist.twist.linear, msg.twist.twist.angular
    return [p.x, p.y, p.z, o.x, o.y, o.z, o.w, v.x, v.y, v.z, w.x, w.y, w.z]


class LeggedStateEstimator(NodeChainableController):
    PARAMETERS: ClassVar[dict[str, Parameter]] = {
        **specs_of(EstimatorParameters, EstimatorParameters.flat_defaults()), **OWN_PARAMETERS}

    def configure_with_host(self) -> CallbackReturn:
        assert self.context is not None
        urdf = self.host.urdf
        sensors = {s.name: s for hw in self.context.description.hardware for s in hw.sensors}
        sensor = self.params["sensor_name"]
        if sensor not in sensors:
            return self.fail(f"parameter sensor_name '{sensor}' is not a <sensor> of the <ros2_control> "
                             f"block; sensors: {', '.join(sensors) or 'none'}")
        try:
            estimator = EstimatorParameters.from_flat(
                {k: v for k, v in self.params.items() if k not in OWN_PARAMETERS})
            if estimator.contact_source == "message":
                raise ValueError("contact_source message needs a contacts topic; in the controller manager "
                                 "use schedule (contact_controller's contact.<foot> state interfaces) or "
                                 "detection")
            if estimator.contact_source == "schedule" and not estimator.feet:
                raise ValueError("contact_source schedule needs parameter feet (the contact.<foot> state "
                                 f"interfaces of '{self.params['contact_controller']}' it reads)")
            self.publish_rate = rate_parameter("publish_rate", self.params["publish_rate"])
            self.tf_rate = rate_parameter("tf_rate", self.params["tf_rate"])
            model = Model.from_urdf(urdf, floating_base=True)
        except ValueError as exc:
            return self.fail(str(exc))
        node = self.open_node()
        try:
            self.pipeline = EstimatorPipeline(model, estimator, self.logger, self.name,
                                              spheres=collision_spheres(urdf), estimate_rows=True)
        except ValueError as exc:
            self.host.destroy_node(node)
            return self.fail(str(exc))
        self.imu_frame = sensors[sensor].params.get("frame_id", "")
        self.joints = list(model.joint_names)
        self.feet = list(estimator.feet)
        self._odometry = node.create_publisher(Odometry, "odometry/filtered", 100)
        self._tf = node.create_publisher(TFMessage, "/tf", 100)
        self._diagnostics = node.create_publisher(DiagnosticArray, "/diagnostics", 100)
        return CallbackReturn.SUCCESS

    def exported_state_interfaces(self) -> tuple[str, ...]:
        return BASE_STATE

    def _schedule_interfaces(self) -> tuple[str, ...]:
        if self.pipeline.params.contact_source != "schedule":
            return ()
        return tuple(full_name(self.params["contact_controller"], f"contact.{foot}") for foot in self.feet)

    def state_interface_configuration(self) -> InterfaceConfiguration:
        sensor = self.params["sensor_name"]
        names = [full_name(sensor, r) for r in IMU_READINGS]
        names += [full_name(j, i) for i in JOINT_STATES for j in self.joints]
        schedule = self._schedule_interfaces()
        return InterfaceConfiguration(INDIVIDUAL, (*names, *schedule), previous_cycle=schedule)

    def on_activate(self) -> CallbackReturn:
        self.publishing, self.tf_publishing = StampRate(self.publish_rate), StampRate(self.tf_rate)
        return CallbackReturn.SUCCESS

    # --- live parameters ------------------------------------------------------------------------------------
    def _on_change(self, changes: dict[str, Any]) -> str:
        startup = [name for name in changes if name in STARTUP_ONLY]
        if startup:
            return (f"{', '.join(startup)} apply at configuration only (they decide the claimed state "
                    "interfaces): reconfigure the controller")
        try:
            rate = rate_parameter("publish_rate", changes.get("publish_rate", self.params["publish_rate"]))
            tf_rate = rate_parameter("tf_rate", changes.get("tf_rate", self.params["tf_rate"]))
            own = {k: v for k, v in changes.items() if k not in OWN_PARAMETERS}
            if own:
                flat = {**self.pipeline.params.flat(), **own}
                self.pipeline.reconfigure(EstimatorParameters.from_flat(flat))
        except ValueError as exc:
            return str(exc)
        self.params.update(changes)
        self.publish_rate = self.publishing.rate = rate
        self.tf_rate = self.tf_publishing.rate = tf_rate
        return ""

    # --- the cycle ------------------------------------------------------------------------------------------
    def update(self, time: float, period: float) -> ReturnType:
        """What the broadcasters (and the schedule of the previous cycle) would give the node at ``time``, as
        the pipeline's arrays; the cycle's estimate exported, published when due."""
        assert self.states is not None
        values = self.states.get()  # a new array each cycle: the pipeline may keep views of it
        n = len(self.joints)
        at = seconds_to_ns(time)
        flags = values[6 + 3 * n:].tolist()
        contacts = None
        if flags and all(map(math.isfinite, flags)):
            contacts = dict(zip(self.feet, [f > STANCE_ABOVE for f in flags], strict=True))
        with self.ros.lock:
            self.pipeline.on_cycle(at, ImuSample(self.imu_frame, values[0:3], values[3:6]),
                                   JointSample(*values[6:6 + 3 * n].reshape(3, n)), contacts)
            outputs = self.pipeline.drain()
        estimate: EstimateRows | None = None
        for output in outputs:
            if output.kind == "odometry":
                estimate = output.message
            elif output.kind == "diagnostics":
                publish_finite(self._diagnostics, output.message, self.problems)
        if estimate is None:
            self.exported[:] = np.nan
            return ReturnType.OK
        row, stamp_ns = estimate.rows[-1], int(estimate.stamps_ns[-1])
        self.exported[:] = row[:len(BASE_STATE)]
        odometry_due = self.publishing.due(stamp_ns)
        tf_due = self.params["publish_tf"] and (self.tf_publishing.due(stamp_ns) if self.tf_rate else
                                                odometry_due)
        # the messages' numbers are the row's, which the pipeline gives only when every one is finite; both
        # go out as their CDR bytes (those of the node's odometry_message and transform_message, packed
        # directly)
        if odometry_due:
            self._odometry.publish(odometry_rows_cdr(estimate.stamps_ns[-1:], estimate.frame_id,
                                                     estimate.child_frame_id, estimate.rows[-1:])[0])
        if tf_due:
            self._tf.publish(transform_row_cdr(stamp_ns, estimate.frame_id, estimate.child_frame_id, row))
        return ReturnType.OK
