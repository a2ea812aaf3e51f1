"""The LocomotionController in closed loop with MuJoCo: the same controller and settings
as on kinodyn's simulator, on a physics engine no one here wrote (its own contact solver, elliptic cones),
through the ``PhysicsBackend`` protocol, true state. The scenarios of ``examples/locomotion_scenarios.py``,
short: control 500 Hz, MuJoCo RK4 at 1 ms. Bounds: the acceptance's (velocity RMSE <= 0.1 m/s and 0.1 rad/s,
base above 60 % of its nominal height, no body point on the ground) and tighter ones about twice the
figures measured (in the comments). Simulated time only."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import locomotion_scenarios as scenarios


def quadruped() -> scenarios.Legged:
    return scenarios.Legged.quadruped(backend="mujoco")


def test_quadruped_sits_down_and_stands_up_on_mujoco() -> None:
    robot = quadruped()
    f = scenarios.stand_up(robot)
    ratio = robot.controller.params.sit_height_ratio
    assert abs(f.sit_height - 0.03 - ratio * robot.controller.nominal_height) < 0.01
    assert f.final_height_error < 0.006  # measured 2.9 mm (the contact's penetration under load)
    assert f.max_overshoot < 1e-3  # 0
    assert f.max_tilt < 0.01  # 0.0 deg
    assert f.max_slip < 3e-3  # 1.0 mm


@pytest.mark.parametrize(("command", "linear", "yaw_rate"), [
    ((0.0, 0.0, 0.0), 0.01, 0.03),  # measured 0.0001 m/s, 0.006 rad/s
    ((0.5, 0.0, 0.0), 0.1, 0.1),  # 0.093 m/s (the lateral sway of the diagonal support), 0.009 rad/s
    ((0.0, 0.2, 0.0), 0.05, 0.03),  # 0.020 m/s, 0.006 rad/s
    ((0.0, 0.0, 0.6), 0.01, 0.03),  # 0.0002 m/s, 0.006 rad/s
])
def test_quadruped_follows_velocity_commands_on_mujoco(command: tuple, linear: float,
                                                       yaw_rate: float) -> None:
    f = scenarios.trot(quadruped(), np.array(command), duration=3.0, settle=1.5)
    assert f.rmse_linear <= linear
    assert f.rmse_yaw_rate <= yaw_rate
    np.testing.assert_allclose(f.mean_velocity, command, atol=0.03)
    assert f.min_height_ratio > 0.95  # 98 %
    assert f.lowest_body > 0.2  # 0.24 m


@pytest.mark.parametrize(("mode", "force", "offset", "speed"), [
    ("trot", 120.0, 0.2, 0.1),  # measured: moved 0.07 m, 0.01 m/s after 1.5 s
    ("stand", 60.0, 0.02, 0.01),  # 4 mm, at rest
])
def test_quadruped_survives_lateral_pushes_on_mujoco(mode: str, force: float, offset: float,
                                                     speed: float) -> None:
    f = scenarios.push(quadruped(), force=force, duration=0.2, before=0.6, after=1.5, mode=mode)
    # the acceptance bounds
    assert f.min_height_ratio > 0.6
    assert f.lowest_body > 0.0
    assert f.min_height_ratio > 0.9  # 98 %
    assert f.lowest_body > 0.15  # 0.24 m
    assert f.max_offset < offset
    assert f.final_speed < speed
