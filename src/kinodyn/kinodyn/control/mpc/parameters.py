"""``MpcParameters``: every setting of the ``CentroidalMpc``, validated at construction.

Forces enter the problem in units of the robot's weight ``m |g|`` (the decision variables are
``f / (m |g|)``), so the force bounds and the force weight mean the same on a 2 kg and an 80 kg robot,
and both solvers see variables of order one. State weights are per unit of the state's SI quantity
(rad, m, rad/s, m/s); ``MpcParameters.scaled`` gives the settings of a dynamically similar robot of another
size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

SOLVERS = ("sparse", "condensed")
"""``sparse``: the states kept as variables, OSQP (set up once, updated in place, warm-started);
``condensed``: the states eliminated, DAQP on the dense QP in the stance forces."""

_POSITIVE = ("dt", "friction", "force_weight", "osqp_eps_abs", "osqp_eps_rel")
_NON_NEGATIVE = ("min_normal_force", "osqp_time_limit")
_WEIGHTS = ("orientation_weight", "position_weight", "angular_velocity_weight", "linear_velocity_weight")
_AXES = 3  # a weight per axis (x, y, z)
_COUNTS = ("horizon", "osqp_max_iter", "daqp_max_iter")


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class MpcParameters:
    """Settings of the ``CentroidalMpc`` (SI units; forces as fractions of the weight, module doc)."""

    horizon: int = 16  # steps N of the prediction
    dt: float = 0.03  # s, one step (the horizon spans N dt: about one gait cycle)
    friction: float = 0.6  # Coulomb coefficient of the friction pyramids (a margin below the ground's)
    min_normal_force: float = 0.02  # of the weight, per stance foot (keeps a stance foot loaded)
    max_normal_force: float = 2.0  # of the weight, per stance foot
    orientation_weight: tuple[float, float, float] = (20.0, 20.0, 10.0)  # per rad^2: roll, pitch, yaw
    position_weight: tuple[float, float, float] = (10.0, 10.0, 100.0)  # per m^2: CoM x, y, z (world)
    angular_velocity_weight: tuple[float, float, float] = (0.1, 0.1, 1.0)  # per (rad/s)^2, world axes
    linear_velocity_weight: tuple[float, float, float] = (2.0, 2.0, 2.0)  # per (m/s)^2, CoM, world axes
    force_weight: float = 1e-2  # per (force / weight)^2, every foot and step
    solver: str = "condensed"  # one of SOLVERS (bench/bench_mpc.py: the condensed form is exact and faster
    # with two feet down; with four its variables double and it is slower than OSQP, whose iteration count
    # varies widely from one problem to the next)
    osqp_eps_abs: float = 1e-6  # OSQP termination tolerances (on forces in units of the weight)
    osqp_eps_rel: float = 1e-6
    osqp_polish: bool = True  # refine OSQP's answer on its active set
    osqp_max_iter: int = 4000  # ADMM iterations
    osqp_time_limit: float = 0.0  # s, per solve (0: none); reached -> status max_iterations
    daqp_max_iter: int = 1000  # active-set iterations

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _POSITIVE and not (_finite(value) and value > 0.0):
                raise ValueError(f"MPC parameter {f.name} must be a finite number > 0, got {value!r}")
            if f.name in _NON_NEGATIVE and not (_finite(value) and value >= 0.0):
                raise ValueError(f"MPC parameter {f.name} must be a finite number >= 0, got {value!r}")
            if f.name in _COUNTS and not (type(value) is int and value >= 1):
                raise ValueError(f"MPC parameter {f.name} must be an integer >= 1, got {value!r}")
            if f.name in _WEIGHTS:
                if not (isinstance(value, (tuple, list)) and len(value) == _AXES
                        and all(_finite(w) and w >= 0.0 for w in value)):
                    raise ValueError(f"MPC parameter {f.name} must be three finite numbers >= 0, "
                                     f"got {value!r}")
                object.__setattr__(self, f.name, tuple(float(w) for w in value))
        if not (_finite(self.max_normal_force) and self.max_normal_force > self.min_normal_force):
            raise ValueError(f"MPC parameter max_normal_force ({self.max_normal_force!r}) must be finite and "
                             f"above min_normal_force ({self.min_normal_force!r}), both fractions of the "
                             "weight")
        if self.solver not in SOLVERS:
            raise ValueError(f"MPC parameter solver must be one of {', '.join(SOLVERS)}, got {self.solver!r}")
        if not isinstance(self.osqp_polish, bool):
            raise ValueError(f"MPC parameter osqp_polish must be True or False, got {self.osqp_polish!r}")

    def scaled(self, ratio: float) -> MpcParameters:
        """These settings for a dynamically similar robot ``ratio`` times as large (lengths times ``ratio``,
        the same gravity, mass distribution and shape; Froude similarity): time scales as ``sqrt(ratio)``,
        velocities as ``sqrt(ratio)`` and angular velocities as ``1 / sqrt(ratio)``. The step ``dt`` is
        multiplied by ``sqrt(ratio)`` (the horizon spans the same fraction of a gait cycle whose period
        follows the pendulum law) and each state weight divided by the square of its quantity's scale:
        position weights by ``ratio^2``, linear velocity weights by ``ratio``, angular velocity weights
        multiplied by ``ratio``. The orientation (radians), the forces (fractions of the weight) and
        friction are dimensionless, and the solvers' settings stay as they are. The two robots' problems
        are then the same in dimensionless units: the same forces as fractions of the weight, the states
        scaled as above."""
        if not (_finite(ratio) and ratio > 0.0):
            raise ValueError(f"MPC parameters scaled: the size ratio must be a finite number > 0, got "
                             f"{ratio!r}")
        def times(weights: tuple[float, float, float], factor: float) -> tuple[float, float, float]:
            return weights[0] * factor, weights[1] * factor, weights[2] * factor

        return replace(self, dt=self.dt * math.sqrt(ratio),
                       position_weight=times(self.position_weight, ratio**-2),
                       linear_velocity_weight=times(self.linear_velocity_weight, 1.0 / ratio),
                       angular_velocity_weight=times(self.angular_velocity_weight, ratio))

    @property
    def state_weights(self) -> tuple[float, ...]:
        """The 12 diagonal state weights in the state's order ``[rpy, p, omega, v]``."""
        return (self.orientation_weight + self.position_weight + self.angular_velocity_weight
                + self.linear_velocity_weight)
