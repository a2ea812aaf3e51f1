"""The two demonstrations of examples/ilqr_trajectories.py, solved and then run in ``kinodyn.sim``
(RK4 at 1 ms, the iLQR policy applied at the 5 ms knots): the 2-link swing-up from hanging down to upright
and arm7's fast point-to-point motion, each under the URDF's effort limits."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

if TYPE_CHECKING:
    from types import ModuleType

    from ilqr_trajectories import Problem  # examples/ilqr_trajectories.py, loaded below from its file

ROOT = Path(__file__).resolve().parents[5]


def _example() -> ModuleType:
    path = ROOT / "examples" / "ilqr_trajectories.py"
    spec = importlib.util.spec_from_file_location("ilqr_trajectories", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


EXAMPLE = _example()


@pytest.fixture(scope="module")
def swing_up() -> Problem:
    return EXAMPLE.swing_up()


@pytest.fixture(scope="module")
def arm7() -> Problem:
    return EXAMPLE.arm7_point_to_point()


def _check_solution(p: Problem, position_tol: float, velocity_tol: float) -> None:
    """Converged with a strictly decreasing cost; planned torques within the effort limits and at a limit at
    some knot (the box constraint is active); the simulated final state within the tolerances of the goal;
    the torques commanded to and applied by the simulator within the limits at every knot."""
    r, nv, limit = p.result, p.dynamics.nv, p.dynamics.u_upper
    assert r.status == "converged"
    assert np.all(np.diff(r.cost_history) < 0.0)
    assert np.all(np.abs(r.u) <= limit)
    assert np.any(np.abs(r.u) >= limit - 1e-9)
    goal = p.cost.x_goal
    final = p.run.x[-1]
    assert np.abs(final[:nv] - goal[:nv]).max() <= position_tol
    assert np.abs(final[nv:] - goal[nv:]).max() <= velocity_tol
    assert np.all(np.abs(p.run.u) <= limit)
    assert np.all(p.run.applied_max <= limit)


def test_two_link_swing_up_in_simulation(swing_up: Problem) -> None:
    """Hanging down (pi, 0) to upright (0, 0) in 0.9 s: simulated final error within 0.02 rad and 0.05 rad/s;
    the arm never swings back past the hanging position (joint 1 stays within its +-pi limit, but for 5 mrad
    in the plan, whose limit is a penalty; the simulator clamps it)."""
    _check_solution(swing_up, position_tol=0.02, velocity_tol=0.05)
    q1 = swing_up.result.x[:, 0]
    assert q1.max() <= np.pi + 5e-3
    assert np.abs(swing_up.run.x[:, 0]).max() <= np.pi
    assert np.abs(swing_up.run.x[0, 0] - np.pi) < 1e-12


def test_arm7_point_to_point_in_simulation(arm7: Problem) -> None:
    """Every joint moves 0.5-0.8 rad in 0.4 s: simulated final error within 0.01 rad and 0.1 rad/s; the
    planned joint speeds within 5 % over the URDF velocity limits (a penalty, not a hard bound) and the
    positions within the position limits."""
    _check_solution(arm7, position_tol=0.01, velocity_tol=0.1)
    model, nv = arm7.dynamics.model, arm7.dynamics.nv
    assert np.all(np.abs(arm7.result.x[:, nv:]) <= 1.05 * model.velocity_limit)
    q = arm7.run.x[:, :nv]
    assert np.all(q >= model.lower_limit)
    assert np.all(q <= model.upper_limit)
