"""Settings and set-up of the MPC: every parameter refuses what it cannot mean, naming itself."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.mpc import CentroidalMpc, MpcParameters

if TYPE_CHECKING:
    from .conftest import Robot

BAD = {
    "horizon": [0, -3, 2.5, True, "16"],
    "dt": [0.0, -0.01, math.nan, math.inf],
    "friction": [0.0, -0.5, math.nan],
    "min_normal_force": [-0.1, math.inf],
    "max_normal_force": [0.01, math.nan],  # not above min_normal_force (0.02)
    "orientation_weight": [(1.0, 1.0), (1.0, -1.0, 1.0), (math.nan, 1.0, 1.0), 3.0],
    "position_weight": [(1.0, 1.0, 1.0, 1.0)],
    "force_weight": [0.0, -1.0, math.inf],
    "solver": ["qpoases", ""],
    "osqp_eps_abs": [0.0],
    "osqp_polish": [1, "yes"],
    "osqp_max_iter": [0, 10.0],
    "osqp_time_limit": [-1.0, math.nan],
    "daqp_max_iter": [0],
}


@pytest.mark.parametrize(("name", "value"), [(name, v) for name, values in BAD.items() for v in values])
def test_bad_parameters_are_refused_by_name(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=name):
        MpcParameters(**{name: value})


def test_state_weights_follow_the_state_layout() -> None:
    params = MpcParameters(orientation_weight=(1, 2, 3), position_weight=[4, 5, 6],
                           angular_velocity_weight=(7, 8, 9), linear_velocity_weight=(10, 11, 12))
    assert params.state_weights == tuple(float(w) for w in range(1, 13))


def test_set_up_refuses_unknown_or_repeated_feet(robot: Robot) -> None:
    with pytest.raises(KeyError, match="NO_FOOT"):
        CentroidalMpc.from_model(robot.model, ("LF_FOOT", "NO_FOOT"), robot.q)
    with pytest.raises(ValueError, match="distinct"):
        CentroidalMpc(robot.body, ("LF_FOOT", "LF_FOOT"))
    mpc = CentroidalMpc.from_model(robot.model, ("LF_FOOT", "RH_FOOT"), robot.q)
    np.testing.assert_allclose(mpc.body.inertia, robot.body.inertia)


def test_scaled_settings_follow_froude_similarity() -> None:
    """A robot ``ratio`` times as large: the step times ``sqrt(ratio)``, the position weights over
    ``ratio^2``, the linear velocity weights over ``ratio``, the angular velocity weights times ``ratio``,
    everything else (dimensionless, or the solvers') as it was; a ratio that is not a finite number > 0 is
    refused."""
    params = MpcParameters(position_weight=(1.0, 2.0, 3.0), linear_velocity_weight=(4.0, 5.0, 6.0),
                           angular_velocity_weight=(7.0, 8.0, 9.0), osqp_time_limit=0.01)
    assert params.scaled(1.0) == params
    four = params.scaled(4.0)
    assert four.dt == pytest.approx(2.0 * params.dt, rel=1e-15)
    assert four.position_weight == pytest.approx((1.0 / 16.0, 2.0 / 16.0, 3.0 / 16.0), rel=1e-15)
    assert four.linear_velocity_weight == pytest.approx((1.0, 1.25, 1.5), rel=1e-15)
    assert four.angular_velocity_weight == pytest.approx((28.0, 32.0, 36.0), rel=1e-15)
    unchanged = ("horizon", "friction", "min_normal_force", "max_normal_force", "orientation_weight",
                 "force_weight", "solver", "osqp_time_limit", "daqp_max_iter")
    assert all(getattr(four, name) == getattr(params, name) for name in unchanged)
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="size ratio"):
            params.scaled(bad)
