"""Whole-body control as a QP (Robot Dynamics lecture notes (ETH) §3.10): contacts, tasks, limits, weighted
and hierarchical modes, relaxed answers to an infeasible hard level."""

from kinodyn.control.wbc.contacts import PointContact, SurfaceContact
from kinodyn.control.wbc.controller import MODES, WBCResult, WholeBodyController
from kinodyn.control.wbc.layout import VariableLayout
from kinodyn.control.wbc.limits import JointLimits
from kinodyn.control.wbc.relaxation import Relaxation

__all__ = ["MODES", "JointLimits", "PointContact", "Relaxation", "SurfaceContact", "VariableLayout",
           "WBCResult", "WholeBodyController"]
