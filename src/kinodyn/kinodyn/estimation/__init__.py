"""Legged state estimation from IMU and leg kinematics (seed 003 §5; docs/estimation.md).

- ``NoiseParameters``: noise densities and initial standard deviations.
- ``LeggedFilter`` (protocol), ``FootMeasurement``, ``UpdateReport``, ``NavigationState``.
- ``ErrorStateEKF``: the error-state EKF with feet in the state (seed 003 §5.2-§5.3).
- ``InvariantEKF``: the right-invariant EKF on SE_{2+K}(3) with biases (Hartley et al. 2020).
- ``consistency``: chi-square bounds, gates and NEES.
"""

from kinodyn.estimation.eskf import ErrorStateEKF
from kinodyn.estimation.filter import FootMeasurement, LeggedFilter, NavigationState, UpdateReport
from kinodyn.estimation.invariant import InvariantEKF
from kinodyn.estimation.noise import NoiseParameters

__all__ = [
    "ErrorStateEKF",
    "FootMeasurement",
    "InvariantEKF",
    "LeggedFilter",
    "NavigationState",
    "NoiseParameters",
    "UpdateReport",
]
