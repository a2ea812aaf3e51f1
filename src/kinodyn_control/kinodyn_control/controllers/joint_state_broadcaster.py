"""``kinodyn_control/JointStateBroadcaster``: sensor_msgs/JointState on ``joint_states`` every cycle.

As ros2_control's joint_state_broadcaster: claims no command interfaces and shares the
``position``, ``velocity`` and ``effort`` state interfaces of ``joints`` (default: every joint of the
``<ros2_control>`` blocks, in their order, which is the URDF's); a joint without one of them gets NaN there.
The stamp is the update time. The message is published as its serialized bytes, refilled in place each cycle
(kinodyn_common.raw_messages.RawWriter: the names are written once). No ``/dynamic_joint_states``
(ros2_control's Humble and Jazzy broadcaster also publish it, its master branch dropped it): every kinodyn
state interface is a position, velocity or effort, which ``joint_states`` carries
(docs/nodes/control_node.md).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from kinodyn_common.raw_messages import RawWriter
from kinodyn_common.stamps import seconds_to_ns, split_ns
from sensor_msgs.msg import JointState

from kinodyn_control.controllers.base import INDIVIDUAL, Controller, InterfaceConfiguration, Parameter
from kinodyn_control.hardware.types import EFFORT, POSITION, VELOCITY, CallbackReturn, ReturnType, full_name

FIELDS = (POSITION, VELOCITY, EFFORT)


class JointStateBroadcaster(Controller):
    PARAMETERS: ClassVar[dict[str, Parameter]] = {
        "joints": Parameter(
            "str_list", [], "joints to publish; empty: every joint of the <ros2_control> blocks"
        ),
        "frame_id": Parameter("str", "", "header.frame_id of the messages"),
    }

    def on_configure(self) -> CallbackReturn:
        assert self.context is not None
        description = self.context.description
        states = {
            full_name(j.name, s.name)
            for hw in description.hardware
            for j in hw.joints
            for s in j.state_interfaces
        }
        known = [j.name for hw in description.hardware for j in hw.joints]
        self.joints = list(self.params["joints"]) or known
        unknown = [j for j in self.joints if j not in known]
        if unknown:
            return self.fail(f"joints {', '.join(unknown)} are not in any <ros2_control> block")
        self.slots = [
            (k, f, full_name(j, name))
            for f, name in enumerate(FIELDS)
            for k, j in enumerate(self.joints)
            if full_name(j, name) in states
        ]
        self.publisher = self.context.create_publisher(JointState, "joint_states")
        self.endpoints = [self.publisher]
        return CallbackReturn.SUCCESS

    def state_interface_configuration(self) -> InterfaceConfiguration:
        return InterfaceConfiguration(INDIVIDUAL, tuple(name for _, _, name in self.slots))

    def on_activate(self) -> CallbackReturn:
        self.table = np.full((len(FIELDS), len(self.joints)), np.nan)
        self.rows = np.array([f for _, f, _ in self.slots], dtype=np.intp)
        self.cols = np.array([k for k, _, _ in self.slots], dtype=np.intp)
        # one message's bytes, refilled every cycle: its names are written once
        n = len(self.joints)
        template = JointState(name=self.joints, position=[0.0] * n, velocity=[0.0] * n, effort=[0.0] * n)
        template.header.frame_id = self.params["frame_id"]
        self.writer = RawWriter(template, "sensor_msgs/msg/JointState")
        return CallbackReturn.SUCCESS

    def update(self, time: float, period: float) -> ReturnType:
        assert self.states is not None
        self.table[self.rows, self.cols] = self.states.get()
        position, velocity, effort = self.table
        self.publisher.publish(self.writer.write(*split_ns(seconds_to_ns(time)), position=position,
                                                 velocity=velocity, effort=effort))
        return ReturnType.OK
