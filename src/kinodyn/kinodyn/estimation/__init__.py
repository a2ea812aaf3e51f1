"""Legged state estimation from IMU and leg kinematics (Robot Dynamics Essential, §5; docs/estimation.md).

- ``NoiseParameters``: noise densities and initial standard deviations.
- ``LeggedFilter`` (every filter's base class), ``FootMeasurement``, ``UpdateReport``, ``NavigationState``.
- ``register_filter``, ``FILTERS`` (registry): filters by name, each one module and one registration line.
- ``ErrorStateEKF``: the error-state EKF with feet in the state (Robot Dynamics Essential, §5.2-§5.3).
- ``InvariantEKF``: the right-invariant EKF on SE_{2+K}(3) with biases (Hartley et al. 2020).
- ``consistency``: chi-square bounds, gates and NEES.
- ``LegKinematics``, ``ImuExtrinsics``: feet in the IMU frame from the URDF, the IMU's placement on the base.
- ``StandingInitializer``, ``ContactDetector``: initial attitude and biases; contacts from joint efforts.
- ``LeggedEstimator``, ``Estimate``: IMU, joint states and contacts in, the base state with covariances out;
  ``EstimatorSettings``: its parameters (defaults and validation).
"""

from kinodyn.estimation.contacts import ContactDetector
from kinodyn.estimation.eskf import ErrorStateEKF
from kinodyn.estimation.estimator import Estimate, LeggedEstimator
from kinodyn.estimation.filter import FootMeasurement, LeggedFilter, NavigationState, UpdateReport
from kinodyn.estimation.initialization import StandingInitializer
from kinodyn.estimation.invariant import InvariantEKF
from kinodyn.estimation.legs import ImuExtrinsics, LegKinematics
from kinodyn.estimation.noise import NoiseParameters
from kinodyn.estimation.registry import FILTERS, register_filter
from kinodyn.estimation.settings import EstimatorSettings

__all__ = [
    "FILTERS",
    "ContactDetector",
    "ErrorStateEKF",
    "Estimate",
    "EstimatorSettings",
    "FootMeasurement",
    "ImuExtrinsics",
    "InvariantEKF",
    "LegKinematics",
    "LeggedEstimator",
    "LeggedFilter",
    "NavigationState",
    "NoiseParameters",
    "StandingInitializer",
    "UpdateReport",
    "register_filter",
]
