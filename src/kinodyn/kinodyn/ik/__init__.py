"""Inverse kinematics: differential (velocity-level) control, position-level IK under joint limits, CLIK.

- ``differential``: pseudo-inverses, null-space projection, multi-task control (Robot Dynamics lecture notes
  (ETH), §2.9.1-2.9.2)
- ``tasks``: ``FrameTask`` (pose / position / orientation of a frame) and ``TaskStack``
- ``limits``: joint position and velocity limits as QP inequality rows
- ``qp``: the box-constrained step QP (primal active set, compiled)
- ``descent``: one compiled LM / GN attempt under the joint limits
- ``solve``: ``solve_ik`` (Gauss-Newton / Levenberg-Marquardt, restarts, timeout; Robot Dynamics lecture notes
  (ETH), §2.9.3, Rotations and inverse kinematics (Fredriksson), §3.7-3.8)
- ``clik``: closed-loop IK trajectory tracking (Robot Dynamics lecture notes (ETH), §2.9.4)
"""

from kinodyn.ik.solve import IKResult, solve_ik
from kinodyn.ik.tasks import FrameTask, TaskStack

__all__ = ["FrameTask", "IKResult", "TaskStack", "solve_ik"]
