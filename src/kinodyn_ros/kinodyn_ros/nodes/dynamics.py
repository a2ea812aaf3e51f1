"""dynamics: inverse dynamics, gravity compensation and mass matrix services (docs/nodes/dynamics.md).

Services `~/inverse_dynamics` (kinodyn.Model.rnea with external wrenches on named links),
`~/gravity_compensation` (Model.gravity_torques) and `~/mass_matrix` (Model.mass_matrix). With
`publish_gravity`, the gravity-compensation efforts of every `joint_states` message go out on
`~/gravity_efforts`. With `floating_base`, the base pose (and twist, acceleration) comes with each request
and, for the gravity topic, from nav_msgs/Odometry on `odometry`; answers then cover the 6 base coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from kinodyn_common.conversions import (
    InputError,
    array_to_multiarray,
    joint_state_to_q,
    joint_state_vector,
    wrenches_by_link,
)
from kinodyn_common.finite import publish_finite
from kinodyn_common.floating_base import (
    configuration,
    coordinate_names,
    joint_part,
    odometry_base_state,
    velocity,
)
from kinodyn_common.input_bounds import check_magnitude, declare_joint_bounds
from kinodyn_common.node_runner import run_node
from kinodyn_common.parameters import check_fields, declare_dataclass
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.robot_description import declare_and_load_model
from kinodyn_common.service_call import answering_bad_requests, error_text
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from kinodyn_interfaces.srv import GravityCompensation, InverseDynamics, MassMatrix

if TYPE_CHECKING:
    from geometry_msgs.msg import Pose

NODE_NAME = "dynamics"


@dataclass(frozen=True)
class DynamicsParameters:
    """The node's own parameters (docs/nodes/dynamics.md; the robot description's and the joint bounds' are
    declared by their helpers)."""

    floating_base: bool = False
    publish_gravity: bool = False
    joint_velocity_bound: float = 1e3  # rad/s or m/s
    joint_acceleration_bound: float = 1e5  # rad/s^2 or m/s^2
    wrench_bound: float = 1e6  # N and N m, per component of an external wrench

    def __post_init__(self) -> None:
        check_fields(self, positive=("joint_velocity_bound", "joint_acceleration_bound", "wrench_bound"))


class Dynamics(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self._params = declare_dataclass(self, DynamicsParameters)
        self._model, _, source = declare_and_load_model(self, self._params.floating_base)
        floating_base = self._model.floating_base
        self._names = coordinate_names(self._model)  # the order of v: the base's 6 first if floating
        self._base_pose: np.ndarray | None = None  # q[:7] of the latest odometry (floating base)
        self._bounds = declare_joint_bounds(self, self._model)
        self._problems = DistinctProblemLog(self.get_logger())
        self._compile_kernels()
        for srv_type, name, handle in (
            (InverseDynamics, "inverse_dynamics", self._inverse_dynamics),
            (GravityCompensation, "gravity_compensation", self._gravity_compensation),
            (MassMatrix, "mass_matrix", self._mass_matrix),
        ):
            self.create_service(srv_type, f"~/{name}", answering_bad_requests(name, self._problems, handle))
        publish_gravity = self._params.publish_gravity
        if publish_gravity:
            self._gravity = self.create_publisher(
                Float64MultiArray, "~/gravity_efforts", QoSProfile(depth=10)
            )
            self.create_subscription(
                JointState,
                "joint_states",
                dropping_bad_messages(self._problems, "joint_states message", self._on_joint_state),
                qos_profile_sensor_data,
            )
            if floating_base:
                self.create_subscription(
                    Odometry,
                    "odometry",
                    dropping_bad_messages(self._problems, "odometry message", self._on_odometry),
                    qos_profile_sensor_data,
                )
        self.get_logger().info(
            f"URDF from {source}: {len(self._model.joint_names)} joints"
            f"{' on a floating base' if floating_base else ''}; services {self.get_fully_qualified_name()}/"
            "inverse_dynamics, gravity_compensation and mass_matrix"
            + ("; gravity efforts for every joint_states message" if publish_gravity else "")
        )

    def _compile_kernels(self) -> None:
        """Each dynamics function once, so numba compiles (or loads from its disk cache) before the services
        exist."""
        model = self._model
        q = np.clip(model.neutral(), model.lower_limit, model.upper_limit)
        v = np.zeros(model.nv)
        model.rnea(q, v, v, {model.frame_names[-1]: np.zeros(6)})
        model.gravity_torques(q)
        model.mass_matrix(q)

    def _inverse_dynamics(
        self, request: InverseDynamics.Request, response: InverseDynamics.Response
    ) -> InverseDynamics.Response:
        model, names = self._model, self._model.joint_names
        state = request.joint_state
        q = self._configuration(state, request.base_pose)
        v = check_magnitude(
            velocity(model, joint_state_vector(state, state.velocity, names, "velocity"), request.base_twist,
                     "base_twist"),
            self._params.joint_velocity_bound,
            "velocity",
            "joint_velocity_bound",
        )
        a = check_magnitude(
            velocity(model, joint_state_vector(state, request.acceleration, names, "acceleration"),
                     request.base_acceleration, "base_acceleration"),
            self._params.joint_acceleration_bound,
            "acceleration",
            "joint_acceleration_bound",
        )
        wrenches = wrenches_by_link(request.external_wrenches)
        for link, w in wrenches.items():
            try:
                self._model.frame_id(link)
            except KeyError as exc:
                raise KeyError(f"external wrench on an unknown link: {error_text(exc)}") from None
            check_magnitude(w, self._params.wrench_bound, f"external wrench on {link!r}", "wrench_bound")
        response.effort = self._model.rnea(q, v, a, wrenches or None).tolist()
        response.name = self._names
        response.success = True
        return response

    def _gravity_compensation(
        self, request: GravityCompensation.Request, response: GravityCompensation.Response
    ) -> GravityCompensation.Response:
        q = self._configuration(request.joint_state, request.base_pose)
        response.effort = self._model.gravity_torques(q).tolist()
        response.name = self._names
        response.success = True
        return response

    def _mass_matrix(self, request: MassMatrix.Request, response: MassMatrix.Response) -> MassMatrix.Response:
        q = self._configuration(request.joint_state, request.base_pose)
        response.mass_matrix = array_to_multiarray(self._model.mass_matrix(q), ["rows", "columns"])
        response.name = self._names
        response.success = True
        return response

    def _positions(self, state: JointState) -> np.ndarray:
        """Every joint's position from ``state``, within the input bounds (else JointStateError)."""
        return self._bounds.check_q(joint_state_to_q(state, self._model.joint_names))

    def _configuration(self, state: JointState, base_pose: Pose) -> np.ndarray:
        """The model's q from a request's joint state and base pose (floating_base.configuration)."""
        return configuration(self._model, self._positions(state), base_pose, "base_pose")

    def _on_joint_state(self, msg: JointState) -> None:
        """The joints' g(q) on ~/gravity_efforts (with a floating base, at the latest odometry's base pose); a
        message that is not usable, or one before any odometry, raises InputError (dropped, logged)."""
        q = self._positions(msg)
        if self._model.floating_base:
            if self._base_pose is None:
                raise InputError(
                    "no_odometry",
                    "no usable odometry yet: with floating_base, g(q) needs the base orientation from the "
                    "odometry topic",
                )
            q = np.concatenate([self._base_pose, q])
        gravity = joint_part(self._model, self._model.gravity_torques(q))
        publish_finite(self._gravity, array_to_multiarray(gravity, ["joints"]), self._problems)

    def _on_odometry(self, msg: Odometry) -> None:
        """Keep the base pose for ~/gravity_efforts; a message that is not usable raises (dropped, logged)."""
        self._base_pose = odometry_base_state(msg, self._model.frame_names[0])[1]


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, Dynamics, args)


if __name__ == "__main__":
    raise SystemExit(main())
