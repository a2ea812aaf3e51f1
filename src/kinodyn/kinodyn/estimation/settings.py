"""``EstimatorSettings``: everything ``LeggedEstimator`` is configured by, with its defaults and validation
(docs/estimation.md, "Estimator"; the state_estimator node declares its parameters from these fields).

The filter's own settings are its registered ``Parameters`` dataclass (kinodyn.estimation.registry), held in
``filter_parameters``; the noise densities are ``NoiseParameters``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kinodyn.estimation.noise import NoiseParameters
from kinodyn.estimation.registry import FILTERS, filter_class

if TYPE_CHECKING:
    from kinodyn.estimation.filter import GateParameters

CONTACT_SOURCES = ("message", "schedule", "detection")
# Gap noise defaults (m/s^2 and rad/s per axis): on the synthetic trot the true specific force changes by
# 5.4 / 8.7 m/s^2 (norm, RMS) over 50 / 100 ms and the rate by 0.33 / 0.55 rad/s (docs/estimation.md).
GAP_ACCELERATION_NOISE = 5.0
GAP_RATE_NOISE = 0.3
IMU_ONLY_ACCELERATION_NOISE = 0.2
"""m/s^2 per axis: the acceleration error the filter's densities leave out (a residual accelerometer bias or
scale error, a tilt error of about 1 deg times g, vibration) while no foot bounds the velocity; 0 disables."""
POSITIVE = ("init_duration", "accel_limit", "gyro_limit", "accel_jump_limit", "max_imu_gap", "init_max_gyro",
            "init_max_accel_deviation")
NON_NEGATIVE = ("gap_acceleration_noise", "gap_rate_noise", "imu_only_acceleration_noise")


@dataclass(frozen=True)
class EstimatorSettings:
    """``filter``: a registered filter's name, ``filter_parameters`` an instance of its ``Parameters`` (None:
    their defaults, filled in); ``contact_source``: ``message``, ``schedule`` or ``detection``; the IMU gates
    ``accel_limit`` (m/s^2), ``gyro_limit`` (rad/s), ``accel_jump_limit`` (m/s^2, a one-sample jump of the
    specific force) and ``max_imu_gap`` (s, a longer gap restarts the initialisation); the standing
    initialisation ``init_duration`` (s), ``init_max_gyro`` (rad/s) and ``init_max_accel_deviation`` (m/s^2);
    the detection thresholds ``contact_on_threshold`` > ``contact_off_threshold`` (N; both 0: 0.6 and 0.3 of
    the weight one foot carries when all stand); the gap noise ``gap_acceleration_noise`` (m/s^2) and
    ``gap_rate_noise`` (rad/s), ``imu_only_acceleration_noise`` (m/s^2; 0 disables each); ``foot_radius`` (m,
    one or one per foot) of rolling spherical feet. A bad value raises ValueError naming it."""

    filter: str = "eskf"
    filter_parameters: GateParameters | None = None
    contact_source: str = "message"
    noise: NoiseParameters = field(default_factory=NoiseParameters)
    init_duration: float = 0.5
    accel_limit: float = 8.0 * 9.81
    gyro_limit: float = 35.0
    accel_jump_limit: float = 30.0
    max_imu_gap: float = 0.5
    init_max_gyro: float = 0.05
    init_max_accel_deviation: float = 0.5
    contact_on_threshold: float = 0.0
    contact_off_threshold: float = 0.0
    gap_acceleration_noise: float = GAP_ACCELERATION_NOISE
    gap_rate_noise: float = GAP_RATE_NOISE
    imu_only_acceleration_noise: float = IMU_ONLY_ACCELERATION_NOISE
    foot_radius: float | tuple[float, ...] = 0.0

    def __post_init__(self) -> None:
        if self.filter not in FILTERS:
            raise ValueError(f"parameter filter must be one of {', '.join(sorted(FILTERS))}, got "
                             f"{self.filter!r}")
        parameters = filter_class(self.filter).Parameters
        if self.filter_parameters is None:
            object.__setattr__(self, "filter_parameters", parameters())
        elif type(self.filter_parameters) is not parameters:
            raise ValueError(f"filter_parameters of filter {self.filter!r} must be a "
                             f"{parameters.__qualname__}, got {self.filter_parameters!r}")
        if self.contact_source not in CONTACT_SOURCES:
            raise ValueError(f"parameter contact_source must be one of {', '.join(CONTACT_SOURCES)}, got "
                             f"{self.contact_source!r}")
        if not isinstance(self.noise, NoiseParameters):
            raise ValueError(f"noise must be a NoiseParameters, got {self.noise!r}")
        for name in POSITIVE:
            object.__setattr__(self, name, _number(name, getattr(self, name), positive=True))
        for name in NON_NEGATIVE:
            object.__setattr__(self, name, _number(name, getattr(self, name), positive=False))
        on = _number("contact_on_threshold", self.contact_on_threshold, positive=False, signed=True)
        off = _number("contact_off_threshold", self.contact_off_threshold, positive=False, signed=True)
        if (on, off) != (0.0, 0.0) and not off < on:
            raise ValueError("parameters contact_off_threshold < contact_on_threshold must be finite (N), or "
                             f"both 0 (from the robot's weight), got {off} and {on}")
        object.__setattr__(self, "contact_on_threshold", on)
        object.__setattr__(self, "contact_off_threshold", off)
        if not isinstance(self.foot_radius, (int, float)):
            object.__setattr__(self, "foot_radius", tuple(float(r) for r in self.foot_radius))


def _number(name: str, value: object, positive: bool, signed: bool = False) -> float:
    """``value`` as a finite float, > 0 with ``positive``, else >= 0 unless ``signed``; ValueError naming
    ``name``."""
    number = (float(value) if not isinstance(value, bool) and isinstance(value, (int, float))
              and math.isfinite(value) else None)
    if positive and not (number is not None and number > 0.0):
        raise ValueError(f"parameter {name} must be a positive finite number, got {value!r}")
    if not positive and not signed and not (number is not None and number >= 0.0):
        raise ValueError(f"parameter {name} must be finite and >= 0 (0 disables it), got {value!r}")
    if number is None:
        raise ValueError(f"parameter {name} must be a finite number, got {value!r}")
    return number
