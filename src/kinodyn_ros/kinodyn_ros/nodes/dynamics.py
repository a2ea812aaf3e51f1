"""dynamics: inverse dynamics, gravity compensation and mass matrix services (docs/nodes/dynamics.md).

Services `~/inverse_dynamics` (kinodyn.Model.rnea with external wrenches on named links),
`~/gravity_compensation` (Model.gravity_torques) and `~/mass_matrix` (Model.mass_matrix). With
`publish_gravity`, the gravity-compensation efforts of every `joint_states` message go out on
`~/gravity_efforts`.
"""

from __future__ import annotations

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from kinodyn_interfaces.srv import GravityCompensation, InverseDynamics, MassMatrix
from kinodyn_ros.conversions import (
    JointStateError,
    array_to_multiarray,
    joint_state_to_q,
    joint_state_vector,
    wrenches_by_link,
)
from kinodyn_ros.node_runner import run_node
from kinodyn_ros.problem_log import DistinctProblemLog
from kinodyn_ros.robot_description import declare_and_load_model
from kinodyn_ros.service_call import answering_bad_requests, error_text

NODE_NAME = "dynamics"


class Dynamics(Node):
    def __init__(self) -> None:
        super().__init__(NODE_NAME)
        self._model, _, source = declare_and_load_model(self)
        self._problems = DistinctProblemLog(self.get_logger())
        self._compile_kernels()
        for srv_type, name, handle in (
            (InverseDynamics, "inverse_dynamics", self._inverse_dynamics),
            (GravityCompensation, "gravity_compensation", self._gravity_compensation),
            (MassMatrix, "mass_matrix", self._mass_matrix),
        ):
            self.create_service(srv_type, f"~/{name}", answering_bad_requests(name, self._problems, handle))
        publish_gravity = self.declare_parameter("publish_gravity", False).value
        if publish_gravity:
            self._gravity = self.create_publisher(
                Float64MultiArray, "~/gravity_efforts", QoSProfile(depth=10)
            )
            self.create_subscription(
                JointState, "joint_states", self._on_joint_state, qos_profile_sensor_data
            )
        self.get_logger().info(
            f"URDF from {source}: {self._model.nv} joints; services {self.get_fully_qualified_name()}/"
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
        names = self._model.joint_names
        state = request.joint_state
        q = joint_state_to_q(state, names)
        v = joint_state_vector(state, state.velocity, names, "velocity")
        a = joint_state_vector(state, request.acceleration, names, "acceleration")
        wrenches = wrenches_by_link(request.external_wrenches)
        for link in wrenches:
            try:
                self._model.frame_id(link)
            except KeyError as exc:
                raise KeyError(f"external wrench on an unknown link: {error_text(exc)}") from None
        response.effort = self._model.rnea(q, v, a, wrenches or None).tolist()
        response.name = list(names)
        response.success = True
        return response

    def _gravity_compensation(
        self, request: GravityCompensation.Request, response: GravityCompensation.Response
    ) -> GravityCompensation.Response:
        q = joint_state_to_q(request.joint_state, self._model.joint_names)
        response.effort = self._model.gravity_torques(q).tolist()
        response.name = list(self._model.joint_names)
        response.success = True
        return response

    def _mass_matrix(self, request: MassMatrix.Request, response: MassMatrix.Response) -> MassMatrix.Response:
        q = joint_state_to_q(request.joint_state, self._model.joint_names)
        response.mass_matrix = array_to_multiarray(self._model.mass_matrix(q), ["rows", "columns"])
        response.name = list(self._model.joint_names)
        response.success = True
        return response

    def _on_joint_state(self, msg: JointState) -> None:
        try:
            q = joint_state_to_q(msg, self._model.joint_names)
        except JointStateError as exc:
            self._problems.warn(exc.key, f"ignoring joint_states message: {exc}")
            return
        self._gravity.publish(array_to_multiarray(self._model.gravity_torques(q), ["joints"]))


def main(args: list[str] | None = None) -> int:
    return run_node(NODE_NAME, Dynamics, args)


if __name__ == "__main__":
    raise SystemExit(main())
