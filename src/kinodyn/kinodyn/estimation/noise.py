"""Noise and initial-uncertainty parameters of the legged state estimators (Robot Dynamics Essential,
§5.2-§5.3, (114)).

Densities are continuous-time and given per square-root hertz (Solà 2017, "Quaternion kinematics for the
error-state Kalman filter" §5.4.3): over one step ``dt`` a white density ``s`` integrates to the variance
``s^2 dt``. docs/estimation.md, "Conventions".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class NoiseParameters:
    """IMU, foot and encoder noise densities and the initial standard deviations, SI units.

    - ``accelerometer_noise_density`` (m/s^2)/sqrt(Hz), ``gyroscope_noise_density`` (rad/s)/sqrt(Hz):
      white measurement noise n_a, n_g of (114);
    - ``accelerometer_random_walk`` (m/s^3)/sqrt(Hz), ``gyroscope_random_walk`` (rad/s^2)/sqrt(Hz): the
      bias random walks of (114);
    - ``foot_random_walk`` m/sqrt(s): a foot in contact may slip by this random walk;
    - ``encoder_noise`` rad: standard deviation of one joint position reading;
    - ``initial_*``: standard deviations of the state right after initialisation.

    Every field must be finite and >= 0; a bad value raises ValueError naming it.
    """

    accelerometer_noise_density: float = 2.0e-3
    gyroscope_noise_density: float = 2.0e-4
    accelerometer_random_walk: float = 1.0e-4
    gyroscope_random_walk: float = 1.0e-5
    foot_random_walk: float = 1.0e-3
    encoder_noise: float = 1.0e-3
    initial_position: float = 1e-3
    initial_velocity: float = 1e-2
    initial_orientation: float = 1e-2
    initial_accelerometer_bias: float = 5e-2
    initial_gyroscope_bias: float = 1e-3

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"NoiseParameters.{field.name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0.0:
                raise ValueError(
                    f"NoiseParameters.{field.name} = {value!r}: must be finite and >= 0 "
                    "(a standard deviation or a noise density)"
                )
            object.__setattr__(self, field.name, float(value))
