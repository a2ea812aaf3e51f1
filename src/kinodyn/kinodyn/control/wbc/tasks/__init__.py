"""Whole-body tasks, one file each (Robot Dynamics lecture notes (ETH) §3.9-§3.10; Robot Dynamics Essential
§3.7): ``rows(ev, layout) -> A x ≈ b``."""

from kinodyn.control.wbc.tasks.base import MotionTask, Task, TaskRows
from kinodyn.control.wbc.tasks.base_orientation import BaseOrientationTask
from kinodyn.control.wbc.tasks.centroidal_momentum import CentroidalMomentumTask
from kinodyn.control.wbc.tasks.com import ComTask
from kinodyn.control.wbc.tasks.contact_force import ContactForceTask
from kinodyn.control.wbc.tasks.frame import FrameTask
from kinodyn.control.wbc.tasks.posture import PostureTask

__all__ = [
    "BaseOrientationTask",
    "CentroidalMomentumTask",
    "ComTask",
    "ContactForceTask",
    "FrameTask",
    "MotionTask",
    "PostureTask",
    "Task",
    "TaskRows",
]
