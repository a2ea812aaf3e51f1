"""The MPC in closed loop on the single rigid body itself (the full nonlinear SRB, integrated by solve_ivp):
standing up from a sag, then trotting to a forward and a turning velocity command, pacing and bounding, and
a push while trotting; re-planned every step with the forces of the first step held over it (zero-order
hold), footholds from the Raibert heuristic."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.locomotion import GaitScheduler, bound, pace, raibert_foothold, trot
from kinodyn.control.mpc import (
    SOLVERS,
    CentroidalMpc,
    MpcParameters,
    SingleRigidBody,
    contact_schedule,
    foothold_plan,
    velocity_reference,
)
from scipy.integrate import solve_ivp

from .conftest import FEET, PAIRS

if TYPE_CHECKING:
    from .conftest import Robot



GAITS = {  # duty 10/16 of the period
    "trot": lambda period: trot(PAIRS, period, 10 / 16),
    "pace": lambda period: pace((("LF_FOOT", "LH_FOOT"), ("RF_FOOT", "RH_FOOT")), period, 10 / 16),
    "bound": lambda period: bound((("LF_FOOT", "RF_FOOT"), ("LH_FOOT", "RH_FOOT")), period, 10 / 16),
}


def rollout(robot: Robot, solver: str, command: np.ndarray, seconds: float, gait: str = "trot",
            push: tuple[float, float, np.ndarray] | None = None,
            dt: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    """Stand 0.3 s (starting 4 % of the CoM height low), then ``gait`` (period: the horizon, 16 steps of
    ``dt``) with ``command``; ``push``: ``(start, duration, force)``, an external force on the CoM the MPC
    does not know of. The SRB states after each step and the times."""
    params = MpcParameters(solver=solver, dt=dt)
    dt, N, body = params.dt, params.horizon, robot.body
    mpc = CentroidalMpc(body, FEET, params)
    height = robot.x0[5]
    hips = robot.contacts[:, :2] - robot.x0[3:5]  # each foot's place under its hip, about the CoM
    scheduler = GaitScheduler(FEET)
    x = robot.x0.copy()
    x[5] -= 0.04 * height
    feet = robot.contacts.copy()
    was_stance = np.ones(4, dtype=bool)
    states, times = [], []
    for step in range(round(seconds / dt)):
        t = step * dt
        if step == round(0.3 / dt):
            scheduler.set_gait(GAITS[gait](N * dt))
        state = scheduler.update(t)
        stance = contact_schedule(state, FEET, dt, N)
        moving = command if scheduler.gait.moves else np.zeros(3)
        landing = stance[0] & ~was_stance
        was_stance = stance[0]
        planned = feet.copy()  # each foot's next stance (the one starting now for a landing foot)
        for i, foot in enumerate(FEET):
            p = state.feet[foot]
            if not p.lifts_next:
                continue
            if landing[i]:  # to the middle of the stance starting now
                tau = p.time_left - 0.5 * p.stance_duration if p.in_stance else p.time_left
            else:
                tau = p.time_left + (p.swing_duration if p.in_stance else 0.0) + 0.5 * p.stance_duration
            planned[i, :2] = raibert_foothold(x[3:5], x[2], hips[i], x[9:11], moving, tau, height,
                                              float(np.linalg.norm(body.gravity)), 0.6, 0.3 * height)
            planned[i, 2] = 0.0
        feet[landing] = planned[landing]
        reference = velocity_reference(x, moving, height, dt, N)
        solution = mpc.solve(x, reference, stance, foothold_plan(stance, feet, planned, reference))
        assert solution.ok, (t, solution.message)
        forces, feet_now = solution.forces[0], feet
        if push is not None and push[0] <= t < push[0] + push[1]:
            forces, feet_now = np.vstack((forces, push[2])), np.vstack((feet, x[3:6]))
        x = solve_ivp(lambda _, s, f=forces, r=feet_now: body.derivative(s, f, r), (0.0, dt), x, rtol=1e-8,
                      atol=1e-10).y[:, -1]
        states.append(x)
        times.append(t + dt)
    return np.array(states), np.array(times)


@pytest.mark.parametrize("solver", SOLVERS)
def test_trots_at_the_commanded_forward_velocity(robot: Robot, solver: str) -> None:
    command = np.array([0.5, 0.0, 0.0])
    states, times = rollout(robot, solver, command, 3.0)
    standing = times <= 0.3
    assert abs(states[standing][-1, 5] - robot.x0[5]) < 0.005  # stood up from the sag
    settled = times > 1.5
    assert np.sqrt(np.mean((states[settled, 9] - command[0]) ** 2)) <= 0.05
    assert np.sqrt(np.mean(states[settled, 10] ** 2)) <= 0.05
    assert np.abs(states[:, :3]).max() < 0.05  # level and on heading
    assert np.abs(states[:, 5] - robot.x0[5]).max() < 0.025
    assert states[-1, 3] > robot.x0[3] + 0.5 * 1.5  # it did travel


@pytest.mark.parametrize("solver", SOLVERS)
def test_trots_on_a_turn(robot: Robot, solver: str) -> None:
    command = np.array([0.3, 0.0, 0.6])
    states, times = rollout(robot, solver, command, 3.0)
    settled = times > 1.5
    yaw_rate = states[settled, 8]
    assert np.sqrt(np.mean((yaw_rate - command[2]) ** 2)) <= 0.05
    heading = np.stack((np.cos(states[settled, 2]), np.sin(states[settled, 2])), axis=1)
    forward = np.einsum("ij,ij->i", heading, states[settled, 9:11])
    assert np.sqrt(np.mean((forward - command[0]) ** 2)) <= 0.05
    assert np.abs(states[:, :2]).max() < 0.08  # roll and pitch stay small


@pytest.mark.parametrize("gait", ["pace", "bound"])
def test_paces_and_bounds_at_one_metre_per_second(robot: Robot, gait: str) -> None:
    """The body sways within each cycle (the support is one side or one end at a time), so the speed is
    judged over whole cycles: the mean over the last three matches the command."""
    command = np.array([1.0, 0.0, 0.0])
    states, times = rollout(robot, "condensed", command, 3.0, gait)
    cycles = times > times[-1] - 3 * 16 * 0.03 + 1e-9
    np.testing.assert_allclose(states[cycles, 9:11].mean(axis=0), command[:2], atol=0.05)
    assert abs(states[cycles, 8].mean()) < 0.05
    assert np.abs(states[:, :3]).max() < 0.1  # roll, pitch and heading
    assert np.abs(states[:, 5] - robot.x0[5]).max() < 0.1


@pytest.mark.parametrize("phase", [0.0, 0.12, 0.24, 0.36])
def test_recovers_from_a_sideways_push_at_any_trot_phase(robot: Robot, phase: float) -> None:
    """120 N sideways on the CoM for 0.2 s (a third of the weight), at four phases of the trot cycle: the
    body is pushed, and trots on at the command one second later."""
    command = np.array([0.5, 0.0, 0.0])
    push = (1.5 + phase, 0.2, np.array([0.0, 120.0, 0.0]))
    states, times = rollout(robot, "condensed", command, 4.0, push=push)
    assert np.abs(states[:, 10]).max() > 0.2  # the push did move it
    after = times > 2.7 + phase
    assert np.sqrt(np.mean((states[after, 9] - command[0]) ** 2)) <= 0.05
    assert np.sqrt(np.mean(states[after, 10] ** 2)) <= 0.05
    assert np.abs(states[:, :3]).max() < 0.05


def test_default_weights_suit_a_small_robot(robot: Robot) -> None:
    """The quadruped's SRB shrunk to 2.5 kg with every length 0.4 times as long (inertia as mass x length^2),
    gait period and step scaled with the pendulum time (sqrt of the length): with the default weights it
    stands up and trots at the same Froude number as 0.5 m/s on the full size robot."""
    scale, mass = 0.4, 2.5
    body = robot.body
    small_body = SingleRigidBody(mass, body.inertia * (mass / body.mass) * scale**2, body.com_offset * scale,
                                 body.gravity)
    contacts = robot.contacts.copy()
    contacts[:, :2] = robot.x0[3:5] + scale * (contacts[:, :2] - robot.x0[3:5])
    x0 = robot.x0.copy()
    x0[5] *= scale
    small = type(robot)(robot.model, robot.q, small_body, contacts, x0)
    command = np.array([0.5 * np.sqrt(scale), 0.0, 0.0])
    states, times = rollout(small, "condensed", command, 2.0, dt=0.03 * np.sqrt(scale))
    assert abs(states[times <= 0.3][-1, 5] - x0[5]) < 0.005 * scale
    settled = times > 1.0
    assert np.sqrt(np.mean((states[settled, 9] - command[0]) ** 2)) <= 0.05 * np.sqrt(scale)
    assert np.sqrt(np.mean(states[settled, 10] ** 2)) <= 0.05 * np.sqrt(scale)
    assert np.abs(states[:, :3]).max() < 0.05
