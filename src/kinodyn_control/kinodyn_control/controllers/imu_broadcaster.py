"""``kinodyn_control/ImuSensorBroadcaster``: sensor_msgs/Imu on ``~/imu`` (``/<controller>/imu``) every cycle.

As ros2_control's imu_sensor_broadcaster: reads the 10 state interfaces of ``sensor_name``
(``orientation.x..w``, ``angular_velocity.x..z``, ``linear_acceleration.x..z``); ``frame_id`` defaults to the
sensor's ``frame_id`` param in the URDF; the three covariances are 9 values each (row-major), zeros by
default. The message is published as its serialized bytes, refilled in place each cycle
(kinodyn_common.raw_messages.RawWriter: frame and covariances written once).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from kinodyn_common.raw_messages import RawWriter
from kinodyn_common.stamps import seconds_to_ns, split_ns
from sensor_msgs.msg import Imu

from kinodyn_control.controllers.base import INDIVIDUAL, Controller, InterfaceConfiguration, Parameter
from kinodyn_control.hardware.types import IMU_INTERFACES, CallbackReturn, ReturnType, full_name

COVARIANCES = ("orientation", "angular_velocity", "linear_acceleration")
READINGS = np.r_[0:4, 13:16, 25:28]
_COVARIANCE_SIZE = 9  # a 3x3 covariance, row-major
"""Where the 10 state interfaces (orientation x y z w, angular velocity, linear acceleration) go among the
Imu's 37 doubles (each reading is followed by its 9 covariances: bags.cdr's Imu layout)."""


class ImuSensorBroadcaster(Controller):
    PARAMETERS: ClassVar[dict[str, Parameter]] = {
        "sensor_name": Parameter("str", "", "the <sensor> of the <ros2_control> block"),
        "frame_id": Parameter("str", "", "header.frame_id; empty: the sensor's frame_id param"),
        **{
            f"static_covariance_{c}": Parameter(
                "float_list", [0.0] * 9, f"{c} covariance, 9 values row-major"
            )
            for c in COVARIANCES
        },
    }

    def on_configure(self) -> CallbackReturn:
        assert self.context is not None
        sensors = {s.name: s for hw in self.context.description.hardware for s in hw.sensors}
        name = self.params["sensor_name"]
        if name not in sensors:
            return self.fail(
                f"parameter sensor_name '{name}' is not a <sensor>; sensors: {', '.join(sensors) or 'none'}"
            )
        self.frame_id = self.params["frame_id"] or sensors[name].params.get("frame_id", "")
        if not self.frame_id:
            return self.fail('no frame_id: set parameter frame_id or the sensor\'s <param name="frame_id">')
        for c in COVARIANCES:
            if len(self.params[f"static_covariance_{c}"]) != _COVARIANCE_SIZE:
                return self.fail(f"parameter static_covariance_{c} must have 9 values")
        self.publisher = self.context.create_publisher(Imu, "~/imu")
        self.endpoints = [self.publisher]
        return CallbackReturn.SUCCESS

    def state_interface_configuration(self) -> InterfaceConfiguration:
        return InterfaceConfiguration(
            INDIVIDUAL, tuple(full_name(self.params["sensor_name"], i) for i in IMU_INTERFACES)
        )

    def on_activate(self) -> CallbackReturn:
        # one message's bytes, refilled every cycle: frame and covariances written once
        template = Imu()
        template.header.frame_id = self.frame_id
        for c in COVARIANCES:
            setattr(template, f"{c}_covariance", [float(x) for x in self.params[f"static_covariance_{c}"]])
        self.writer = RawWriter(template, "sensor_msgs/msg/Imu")
        self.readings = self.writer.field("values")
        return CallbackReturn.SUCCESS

    def update(self, time: float, period: float) -> ReturnType:
        assert self.states is not None
        self.readings[READINGS] = self.states.get()
        self.publisher.publish(self.writer.write(*split_ns(seconds_to_ns(time))))
        return ReturnType.OK
