"""``kinodyn_control/ForwardCommandController``: std_msgs/Float64MultiArray on ``~/commands`` to one
interface.

As ros2_control's forward_command_controller: ``data[i]`` goes to ``<joints[i]>/<interface_name>``; until the
first command nothing is written (all-NaN reference = no command yet); a message whose size differs from the
number of joints is rejected. Here also rejected: NaN/inf values and values outside the URDF limits (position
range, or ±effort). ``interface_name`` is ``effort`` or ``position`` (the two variants are this one class).
Watchdog and limit enforcement: joint_command.py.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from kinodyn_common.conversions import InputError
from std_msgs.msg import Float64MultiArray

from kinodyn_control.controllers.base import Parameter
from kinodyn_control.controllers.joint_command import JointCommandController
from kinodyn_control.hardware.types import EFFORT, POSITION, CallbackReturn

INTERFACES = (EFFORT, POSITION)


class ForwardCommandController(JointCommandController):
    PARAMETERS: ClassVar[dict[str, Parameter]] = {
        **JointCommandController.PARAMETERS,
        "interface_name": Parameter("str", EFFORT, "command interface: effort or position"),
    }
    MESSAGE = Float64MultiArray

    def command_interface_name(self) -> str:
        name: str = self.params["interface_name"]
        return name

    def on_configure(self) -> CallbackReturn:
        if self.params["interface_name"] not in INTERFACES:
            return self.fail(
                f"parameter interface_name must be one of {', '.join(INTERFACES)}, got "
                f"'{self.params['interface_name']}'"
            )
        return super().on_configure()

    def parse(self, msg: Float64MultiArray) -> np.ndarray:
        data = np.asarray(msg.data, dtype=np.float64)
        if data.size != len(self.joints):
            raise InputError(
                "size", f"command size ({data.size}) does not match number of interfaces ({len(self.joints)})"
            )
        if not np.isfinite(data).all():
            bad = [self.joints[k] for k in np.flatnonzero(~np.isfinite(data))]
            raise InputError("nan", f"non-finite values for {', '.join(bad)}")
        problem = self.limits.check(data, self.command_interface_name())
        if problem:
            raise InputError("limits", f"out of limits: {problem}")
        return data

    def compute(self, target: np.ndarray, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        return target
