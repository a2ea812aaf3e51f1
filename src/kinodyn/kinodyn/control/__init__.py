"""Control laws and the whole-body QP controller (Robot Dynamics lecture notes (ETH), §3.8-§3.10; Robot
Dynamics Essential, §2.6, §3.6-§3.7).

- ``Evaluator`` / ``Evaluation`` (``kinodyn.evaluation``): everything a control tick reads at ``(q, v)``.
- Joint space (§3.8): ``pd``, ``pd_gravity``, ``computed_torque``, ``gains_from_frequency``.
- Task space (§3.9): ``jacobian_transpose_control``, ``operational_space_control``,
  ``dynamically_consistent_pinv``, ``pose_error``, ``task_acceleration``.
- ``kinodyn.control.wbc``: the whole-body QP (contacts, tasks, limits, weighted and strict hierarchy);
  ``kinodyn.control.qp``: the QP solvers behind one interface. docs/wbc.md.
- ``kinodyn.control.locomotion``: gaits, swing feet, footholds and the ``LocomotionController`` (sit, stand,
  trot on a velocity command) over the whole-body QP. docs/locomotion.md.
- ``kinodyn.control.trajopt``: torque-limited trajectories by control-limited iLQR over the forward dynamics
  (Robot Dynamics Essential, §4.3). docs/trajectory-optimisation.md.
"""

from kinodyn.control.joint_space import computed_torque, gains_from_frequency, pd, pd_gravity
from kinodyn.control.task_space import (
    RCOND,
    dynamically_consistent_pinv,
    jacobian_transpose_control,
    operational_space_control,
    pose_error,
    task_acceleration,
)
from kinodyn.control.trajectories import Figure8, PointReference, rms
from kinodyn.evaluation import Evaluation, Evaluator

__all__ = [
    "RCOND",
    "Evaluation",
    "Evaluator",
    "Figure8",
    "PointReference",
    "computed_torque",
    "dynamically_consistent_pinv",
    "gains_from_frequency",
    "jacobian_transpose_control",
    "operational_space_control",
    "pd",
    "pd_gravity",
    "pose_error",
    "rms",
    "task_acceleration",
]
