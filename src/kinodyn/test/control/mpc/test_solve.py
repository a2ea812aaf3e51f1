"""The MPC's answers: standing (weight carried, no moment about the CoM), a closed form (one foot under the
CoM: a point mass's LQ problem), friction pyramids and force bounds, both solvers agreeing, and the statuses
of failed solves (never an exception)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.locomotion import GaitScheduler, trot
from kinodyn.control.mpc import (
    SOLVERS,
    CentroidalMpc,
    MpcParameters,
    MpcStatus,
    SingleRigidBody,
    build_problem,
    contact_schedule,
    velocity_reference,
)
from kinodyn.control.mpc.condensed import CondensedSolver, condense, weighted_gram
from kinodyn.control.mpc.sparse import SparseSolver

from .conftest import FEET, PAIRS

if TYPE_CHECKING:
    from .conftest import Robot



def standing_inputs(robot: Robot, params: MpcParameters,
                    x0: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    x0 = robot.x0 if x0 is None else x0
    reference = velocity_reference(x0, np.zeros(3), robot.x0[5], params.dt, params.horizon)
    stance = np.ones((params.horizon, 4), dtype=bool)
    footholds = np.broadcast_to(robot.contacts, (params.horizon, 4, 3)).copy()
    return x0, reference, stance, footholds


def trot_inputs(robot: Robot, params: MpcParameters, t: float, command: np.ndarray) -> tuple[np.ndarray, ...]:
    """Trotting at gait time ``t`` (period 16 steps, duty 0.6): the swing feet land where they stand now
    shifted by half a stride of ``command``."""
    scheduler = GaitScheduler(FEET)
    scheduler.update(0.0)
    scheduler.set_gait(trot(PAIRS, period=params.horizon * params.dt, duty=0.6))
    state = scheduler.update(t)
    stance = contact_schedule(state, FEET, params.dt, params.horizon)
    x0 = robot.x0.copy()
    x0[9:11] = command[:2]
    reference = velocity_reference(x0, command, robot.x0[5], params.dt, params.horizon)
    footholds = np.broadcast_to(robot.contacts, (params.horizon, 4, 3)).copy()
    footholds[:, :, :2] += 0.25 * params.horizon * params.dt * command[:2]
    footholds[:, stance[0], :] = robot.contacts[stance[0]]
    return x0, reference, stance, footholds


def moment_about_com(forces: np.ndarray, feet: np.ndarray, com: np.ndarray) -> np.ndarray:
    return np.cross(feet - com, forces).sum(axis=0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_standing_carries_the_weight_with_no_moment_about_the_com(robot: Robot, solver: str) -> None:
    params = MpcParameters(solver=solver, force_weight=1e-6)
    mpc = CentroidalMpc(robot.body, FEET, params)
    for shift in (np.zeros(3), np.array([0.03, -0.02, 0.0])):  # the CoM off the feet's centre
        x0 = robot.x0.copy()
        x0[3:6] += shift
        solution = mpc.solve(*standing_inputs(robot, params, x0))
        assert solution.ok, solution.message
        for k in range(params.horizon):
            f = solution.forces[k]
            np.testing.assert_allclose(f.sum(axis=0), [0.0, 0.0, robot.body.weight], atol=1e-3)
            np.testing.assert_allclose(moment_about_com(f, robot.contacts, x0[3:6]), 0.0, atol=1e-3)
        np.testing.assert_allclose(solution.states[-1], solution.states[0], atol=1e-6)
        front, hind = solution.forces[0, [0, 2], 2].sum(), solution.forces[0, [1, 3], 2].sum()
        # moments about the CoM in x: front legs at +0.25 m carry (0.25 + shift) / 0.5 of the weight
        assert front / (front + hind) == pytest.approx((0.25 + shift[0]) / 0.5, abs=1e-5)


def point_mass_lq(robot: Robot, params: MpcParameters, x0: np.ndarray, z_ref: float) -> np.ndarray:
    """The vertical forces u_0..u_{N-1} minimising the MPC's cost for a point mass on one foot (only z, vz
    move): p_k = p_0 + k h v_0 + h^2 sum_{j<k} (k - j - 1/2) (u_j W / m + g), v_k = v_0 + h sum_{j<k}
    (u_j W / m + g), a linear least-squares problem in u (its bounds inactive)."""
    N, h, m, W, g = params.horizon, params.dt, robot.body.mass, robot.body.weight, robot.body.gravity[2]
    wz, wv, rho = params.position_weight[2], params.linear_velocity_weight[2], params.force_weight
    rows, rhs = [], []
    for k in range(1, N + 1):
        j = np.arange(N)
        p_row = np.where(j < k, h * h * (k - j - 0.5) * W / m, 0.0)
        v_row = np.where(j < k, h * W / m, 0.0)
        p_free = x0[5] + k * h * x0[11] + 0.5 * (k * h) ** 2 * g
        v_free = x0[11] + k * h * g
        rows += [np.sqrt(wz) * p_row[None], np.sqrt(wv) * v_row[None]]
        rhs += [[np.sqrt(wz) * (z_ref - p_free)], [np.sqrt(wv) * (0.0 - v_free)]]
    rows.append(np.sqrt(rho) * np.eye(N))
    rhs.append(np.zeros(N))
    return np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0] * W


@pytest.mark.parametrize("solver", SOLVERS)
def test_one_foot_under_the_com_matches_the_point_mass_closed_form(robot: Robot, solver: str) -> None:
    params = MpcParameters(solver=solver)
    mpc = CentroidalMpc(robot.body, FEET, params)
    x0 = robot.x0.copy()
    x0[11] = -0.2  # sinking: the foot must push more than the weight
    x0, reference, stance, footholds = standing_inputs(robot, params, x0)
    stance[:, 1:] = False
    footholds[:, 0] = [x0[3], x0[4], 0.0]
    footholds[:, 1:] = np.nan  # swing feet's entries are not read
    solution = mpc.solve(x0, reference, stance, footholds)
    assert solution.ok, solution.message
    expected = point_mass_lq(robot, params, x0, reference[0, 5])
    assert expected[0] > 1.1 * robot.body.weight
    np.testing.assert_allclose(solution.forces[:, 0, 2], expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(solution.forces[:, 0, :2], 0.0, atol=1e-4)
    np.testing.assert_array_equal(solution.forces[:, 1:], 0.0) if solver == "condensed" else \
        np.testing.assert_allclose(solution.forces[:, 1:], 0.0, atol=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_friction_pyramids_and_force_bounds_hold_and_bind(robot: Robot, solver: str) -> None:
    """A hard sideways and turning command on a low-friction floor: the pyramids bind, and no force leaves
    them or its normal bounds; swing feet carry nothing."""
    params = MpcParameters(solver=solver, friction=0.3, min_normal_force=0.05, max_normal_force=0.7)
    mpc = CentroidalMpc(robot.body, FEET, params)
    W, tol = robot.body.weight, 1e-5 * robot.body.weight
    worst_ratio, top = 0.0, 0.0
    for t in np.linspace(0.0, 0.45, 7):
        x0, reference, stance, footholds = trot_inputs(robot, params, t, np.array([0.0, 0.0, 0.0]))
        x0[9:11] = (1.5, -1.0)  # moving fast: the reference asks to stop
        x0[8] = 1.5
        solution = mpc.solve(x0, reference, stance, footholds)
        assert solution.ok, solution.message
        f = solution.forces
        fz = f[..., 2][stance]
        assert (np.abs(f[..., 0][stance]) <= params.friction * fz + tol).all()
        assert (np.abs(f[..., 1][stance]) <= params.friction * fz + tol).all()
        assert (fz >= params.min_normal_force * W - tol).all()
        assert (fz <= params.max_normal_force * W + tol).all()
        np.testing.assert_allclose(f[~stance], 0.0, atol=tol)
        worst_ratio = max(worst_ratio, float((np.abs(f[..., :2][stance]).max(axis=1) / fz).max()))
        top = max(top, float(fz.max()))
    assert worst_ratio == pytest.approx(params.friction, abs=1e-4)  # the pyramids bind
    assert top == pytest.approx(params.max_normal_force * W, rel=1e-4)  # so does the upper bound


def test_sparse_and_condensed_agree(robot: Robot) -> None:
    sparse = CentroidalMpc(robot.body, FEET, MpcParameters(solver="sparse", osqp_eps_abs=1e-8,
                                                           osqp_eps_rel=1e-8))
    condensed = CentroidalMpc(robot.body, FEET, MpcParameters(solver="condensed"))
    params = condensed.params
    rng = np.random.default_rng(4)
    cases = [standing_inputs(robot, params)]
    for t in rng.uniform(0.0, 0.48, 6):
        command = rng.uniform([-1.0, -0.5, -1.0], [1.0, 0.5, 1.0])
        x0, reference, stance, footholds = trot_inputs(robot, params, t, command)
        x0[:3] += rng.normal(scale=0.05, size=3)
        x0[6:9] += rng.normal(scale=0.3, size=3)
        cases.append((x0, reference, stance, footholds))
    for case in cases:
        a, b = sparse.solve(*case), condensed.solve(*case)
        assert a.ok, (a.message, b.message)
        assert b.ok, (a.message, b.message)
        np.testing.assert_allclose(a.forces, b.forces, atol=1e-5 * robot.body.weight)
        np.testing.assert_allclose(a.states, b.states, atol=1e-6)
        np.testing.assert_allclose(a.base_positions, b.base_positions, atol=1e-6)


@pytest.mark.parametrize("ratio", [0.3, 1.6])
def test_a_similar_robot_with_scaled_settings_plans_the_same_in_its_units(robot: Robot, ratio: float) -> None:
    """Froude similarity (``MpcParameters.scaled``): a robot ``ratio`` times as large (the same mass, its CoM
    offset times ``ratio``, its inertia times ``ratio^2``), given the trot's inputs scaled alike (positions
    and footholds times ``ratio``, linear velocities times ``sqrt(ratio)``, angular velocities over it, the
    step times it), plans the same forces as fractions of its weight and the same states in its units."""
    params = MpcParameters(solver="condensed")
    body = robot.body
    large = SingleRigidBody(body.mass, body.inertia * ratio**2, body.com_offset * ratio, body.gravity)
    mpc, similar = CentroidalMpc(body, FEET, params), CentroidalMpc(large, FEET, params.scaled(ratio))
    root = np.sqrt(ratio)
    scale = np.concatenate([np.ones(3), np.full(3, ratio), np.full(3, 1.0 / root), np.full(3, root)])
    rng = np.random.default_rng(7)
    for t in rng.uniform(0.0, 0.48, 3):
        command = rng.uniform([-1.0, -0.5, -1.0], [1.0, 0.5, 1.0])
        x0, reference, stance, footholds = trot_inputs(robot, params, t, command)
        x0[:3] += rng.normal(scale=0.05, size=3)
        x0[6:9] += rng.normal(scale=0.3, size=3)
        a = mpc.solve(x0, reference, stance, footholds)
        b = similar.solve(x0 * scale, reference * scale, stance, footholds * ratio)
        assert a.ok, a.message
        assert b.ok, b.message
        assert a.forces is not None
        assert b.forces is not None
        np.testing.assert_allclose(b.forces / large.weight, a.forces / body.weight, atol=1e-8)
        np.testing.assert_allclose(b.states, a.states * scale, atol=1e-9)


@pytest.mark.parametrize("solver", SOLVERS)
def test_bad_inputs_answer_invalid_input_without_forces(robot: Robot, solver: str) -> None:
    params = MpcParameters(solver=solver)
    mpc = CentroidalMpc(robot.body, FEET, params)
    good = standing_inputs(robot, params)
    nan_state = good[0].copy()
    nan_state[4] = np.nan
    inf_foot = good[3].copy()
    inf_foot[3, 2, 0] = np.inf
    bad_cases = {
        "state has non-finite": (nan_state, *good[1:]),
        "reference must have shape": (good[0], good[1][:-1], *good[2:]),
        "contact_schedule must hold booleans": (*good[:2], good[2] * 0.5, good[3]),
        "footholds of the stance steps has non-finite": (*good[:3], inf_foot),
        "state is not an array of numbers": ("abc", *good[1:]),
    }
    for why, case in bad_cases.items():
        solution = mpc.solve(*case)
        assert solution.status is MpcStatus.INVALID_INPUT
        assert why in solution.message
        assert solution.forces is None
        assert solution.states is None
        assert not solution.ok
    assert mpc.solve(*good).ok  # and the next good input is solved


@pytest.mark.parametrize("solver", SOLVERS)
def test_absurd_finite_inputs_fail_with_a_status(robot: Robot, solver: str) -> None:
    params = MpcParameters(solver=solver)
    mpc = CentroidalMpc(robot.body, FEET, params)
    x0, reference, stance, footholds = standing_inputs(robot, params)
    footholds = footholds * 1e300
    solution = mpc.solve(x0, reference, stance, footholds)
    assert not solution.ok
    assert solution.forces is None
    assert mpc.solve(*standing_inputs(robot, params)).ok


def test_iteration_limits_answer_max_iterations(robot: Robot) -> None:
    for params in (MpcParameters(solver="sparse", osqp_max_iter=1),
                   MpcParameters(solver="condensed", daqp_max_iter=1)):
        mpc = CentroidalMpc(robot.body, FEET, params)
        x0, reference, stance, footholds = trot_inputs(robot, params, 0.1, np.array([0.5, 0.0, 0.0]))
        solution = mpc.solve(x0, reference, stance, footholds)
        assert solution.status is MpcStatus.MAX_ITERATIONS, solution.message
        assert solution.forces is None


def test_inconsistent_force_bounds_answer_infeasible_at_both_solvers(robot: Robot) -> None:
    """The problem is feasible for every valid input (problem module doc), so an infeasible one is built
    by hand: a stance foot whose normal-force bounds cross."""
    params = MpcParameters()
    problem = build_problem(robot.body, params, *standing_inputs(robot, params))
    low = problem.normal_min.copy()
    low[3, 2] = 2.0 * problem.normal_max[3, 2]
    crossed = type(problem)(**{**problem.__dict__, "normal_min": low})
    for solver in (SparseSolver(params, 4), CondensedSolver(params)):
        result = solver.solve(crossed)
        assert result.status is MpcStatus.INFEASIBLE, result.message
        assert result.forces is None, result.message
        assert solver.solve(problem).status is MpcStatus.SOLVED


def test_yaw_given_modulo_two_pi_does_not_turn_the_body(robot: Robot) -> None:
    params = MpcParameters()
    mpc = CentroidalMpc(robot.body, FEET, params)
    x0, reference, stance, footholds = standing_inputs(robot, params)
    x0 = x0.copy()
    x0[2] = np.pi - 0.01
    reference = reference.copy()
    reference[:, 2] = -np.pi + 0.01  # the same heading, 0.02 rad further, written the other way round
    turned = mpc.solve(x0, reference, stance, footholds)
    assert turned.ok
    assert np.abs(np.diff(turned.states[:, 2])).max() < 0.01


def test_condensed_matrices_equal_a_dense_rollout(robot: Robot) -> None:
    """``condense``'s ``S`` and ``X_free`` reproduce the dynamics rolled out step by step for random forces,
    and the compiled Gram product equals numpy's ``S' diag(w) S + rho I``, ``S' diag(w) e``."""
    params = MpcParameters()
    x0, reference, stance, footholds = trot_inputs(robot, params, 0.17, np.array([0.4, 0.1, 0.3]))
    problem = build_problem(robot.body, params, x0, reference, stance, footholds)
    S, free, pairs = condense(problem)
    rng = np.random.default_rng(5)
    U = rng.uniform(-0.2, 0.6, S.shape[1])
    u = np.zeros((params.horizon, 4, 3))
    u[pairs[:, 0], pairs[:, 1]] = U.reshape(-1, 3)
    x, rolled = x0, []
    for k in range(params.horizon):
        x = problem.A[k] @ x + problem.B[k] @ u[k].ravel() + problem.c[k]
        rolled.append(x)
    np.testing.assert_allclose(S @ U + free, np.concatenate(rolled), rtol=1e-12, atol=1e-12)
    w = np.tile(problem.state_weights, params.horizon)
    e = free - reference.ravel()
    H, g = np.empty((S.shape[1], S.shape[1])), np.empty(S.shape[1])
    weighted_gram(np.ascontiguousarray(S.T), w, e, 12 * pairs[:, 0].repeat(3), 0.01, H, g)
    np.testing.assert_allclose(H, S.T @ (w[:, None] * S) + 0.01 * np.eye(S.shape[1]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g, S.T @ (w * e), rtol=1e-12, atol=1e-12)



@pytest.mark.parametrize("solver", SOLVERS)
def test_new_weights_on_a_set_up_mpc_answer_as_a_new_mpc_with_them(robot: Robot, solver: str) -> None:
    """``set_weights`` between solves: the MPC (sparse: its cost's diagonal updated in OSQP) answers as one
    built with the new weights, which change the answer; any other setting is refused, nothing changed."""
    old = MpcParameters(solver=solver, osqp_eps_abs=1e-8, osqp_eps_rel=1e-8)
    new = replace(old, orientation_weight=(5.0, 80.0, 3.0), position_weight=(1.0, 2.0, 50.0),
                  force_weight=0.3)
    case = trot_inputs(robot, old, 0.1, np.array([0.6, 0.2, 0.4]))
    case[0][6:9] += (0.3, -0.2, 0.1)
    mpc = CentroidalMpc(robot.body, FEET, old)
    first = mpc.solve(*case)
    mpc.set_weights(new)
    assert mpc.params is new
    reweighted, fresh = mpc.solve(*case), CentroidalMpc(robot.body, FEET, new).solve(*case)
    assert first.ok
    assert reweighted.ok
    assert fresh.ok
    assert np.abs(first.forces - fresh.forces).max() > 1e-2 * robot.body.weight  # the weights matter
    np.testing.assert_allclose(reweighted.forces, fresh.forces, atol=1e-5 * robot.body.weight)
    np.testing.assert_allclose(reweighted.states, fresh.states, atol=1e-6)
    other = "condensed" if solver == "sparse" else "sparse"
    for change in ({"horizon": 12}, {"friction": 0.4}, {"solver": other}):
        with pytest.raises(ValueError, match=next(iter(change))):
            mpc.set_weights(replace(new, **change))
        assert mpc.params is new
