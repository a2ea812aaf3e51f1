"""The whole-body controller in closed loop with kinodyn's simulator, no ROS.

The scenarios are those of ``examples/quadruped_wbc.py`` (``examples/wbc_scenarios.py``), run here as the
example runs them (WBC 500 Hz, weighted, simulator RK4 at 1 ms, soft contact): the acceptance bounds of the
standing, three-leg and push scenarios, and tighter bounds a few times above what the scenarios achieve (the
tests print their figures). Simulated time only.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from kinodyn.spatial import so3_log

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "examples"))  # the example's scenario modules
import wbc_references as refs
import wbc_scenarios as scenarios

# --- the references and measures the scenarios rely on ---------------------------------------------------


@pytest.mark.parametrize("t", [0.0, 0.37, 1.3])
def test_sway_reference_derivatives_match_finite_differences(t: float) -> None:
    def at(s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return scenarios.sway_reference(s, 0.5)

    h = 1e-5
    (P0, V0, A0), (Pm, Vm, _), (Pp, Vp, _) = at(t), at(t - h), at(t + h)
    velocity = np.r_[(Pp[:3, 3] - Pm[:3, 3]) / (2 * h), so3_log(Pp[:3, :3] @ Pm[:3, :3].T) / (2 * h)]
    np.testing.assert_allclose(V0, velocity, atol=1e-8)
    np.testing.assert_allclose(A0, (Vp - Vm) / (2 * h), atol=1e-7)
    assert abs(P0[2, 3] - 0.5 - 0.03 * np.sin(np.pi * t)) < 1e-15  # height +-3 cm at 0.5 Hz


def test_min_jerk_rests_at_both_ends() -> None:
    start, goal = np.array([0.0, 1.0]), np.array([2.0, -1.0])
    for t, where in ((0.0, start), (1.5, goal)):
        r = refs.min_jerk(t, start, goal, 1.5)
        np.testing.assert_allclose(r.value, where, atol=1e-15)
        np.testing.assert_allclose(r.rate, 0.0, atol=1e-15)
        np.testing.assert_allclose(r.acceleration, 0.0, atol=1e-12)
    mid = refs.min_jerk(0.75, start, goal, 1.5)
    np.testing.assert_allclose(mid.value, (start + goal) / 2, atol=1e-15)
    np.testing.assert_allclose(mid.rate, 1.875 * (goal - start) / 1.5, atol=1e-12)  # peak speed 15/8 of mean


def test_support_margin_and_torque_jump_closed_forms() -> None:
    triangle = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 3.0]])  # inradius (a + b - c) / 2 = 1 at (1, 1)
    assert scenarios._support_margin(np.array([1.0, 1.0]), triangle) == pytest.approx(1.0, abs=1e-12)  # noqa: SLF001  (the example's own margin helper)
    assert scenarios._support_margin(np.array([-0.5, 1.0]), triangle) == pytest.approx(-0.5, abs=1e-12)  # noqa: SLF001  (the example's own margin helper)
    effort = np.array([80.0, 80.0])  # floor 4 N m
    assert scenarios.torque_jump(np.array([10.0, 1.0]), np.array([11.0, 1.0]), effort) == pytest.approx(0.1)
    assert scenarios.torque_jump(np.array([10.0, 1.0]), np.array([10.0, 2.0]), effort) == pytest.approx(0.25)


def test_gains_are_the_critically_damped_oscillator() -> None:
    kp, kd = scenarios.pd_gains(3.0)
    assert np.sqrt(kp) == pytest.approx(6 * np.pi)  # Robot Dynamics lecture notes (ETH), (3.78)
    assert kd / (2 * np.sqrt(kp)) == pytest.approx(1.0)  # (3.79), D = 1; the notes' 3 Hz example: 350, 37


# --- the closed loop ----------------------------------------------------------------------------------------


@pytest.fixture
def robot() -> scenarios.Quadruped:
    return scenarios.Quadruped.build(control_hz=500.0, sim_dt=1e-3, mode="weighted")


def test_stands_10_s_holding_its_base_height(robot: scenarios.Quadruped) -> None:
    f = scenarios.stand(robot, duration=10.0)
    print(f"\n{f}")
    assert f.duration == pytest.approx(10.0)
    assert f.max_height_error < 5e-3  # the acceptance bound
    assert f.max_height_error < 1e-4
    assert f.max_slip < 1e-3  # the soft contact's stiction spring lets the feet creep a little
    assert f.final_speed < 1e-5
    assert robot.sim.in_contact.all()


def test_tracks_the_base_sway(robot: scenarios.Quadruped) -> None:
    f = scenarios.sway(robot, duration=6.0)
    print(f"\n{f}")
    assert np.all(f.rms_angles < [2e-4, 2e-4, 4e-4])
    assert f.rms_height < 1.5e-4
    # the largest errors are at the start, where the reference sets off at full speed from rest
    assert np.all(f.max_angles < 0.02)
    assert f.max_height < 4e-3
    assert f.max_slip < 2e-3


def test_lifts_one_foot_and_stands_on_three(robot: scenarios.Quadruped) -> None:
    f = scenarios.three_legs(robot, lift=0.05)
    print(f"\n{f}")
    assert f.support_margin > 0.05  # the CoM well inside the support triangle when the foot lets go
    assert max(f.torque_jumps) < 0.05  # the acceptance bound is 0.2 at the switch (ramp start and release)
    assert f.max_tick_jump < 0.05  # and between any two ticks of the run
    assert f.lift == pytest.approx(0.05, abs=2e-3)
    assert f.max_height_error < 1e-3
    assert f.max_slip < 2e-3
    assert not robot.sim.in_contact[scenarios.FEET.index(scenarios.LIFTED)]
    assert robot.sim.in_contact.sum() == 3


def test_takes_a_lateral_push_without_slipping(robot: scenarios.Quadruped) -> None:
    f = scenarios.push(robot, force=60.0, duration=0.2)
    print(f"\n{f}")
    assert f.max_slip < 0.02  # the acceptance bound
    assert f.max_base_offset > 1e-3  # the push did move the robot
    assert f.final_com_error < 1e-3


def test_arm7_draws_the_figure_8() -> None:
    f = scenarios.arm7_figure8(control_hz=500.0, sim_dt=1e-3, duration=6.0)
    print(f"\n{f}")
    # measured RMS 0.90 mm and 26 mrad: the URDF's joint friction (0.1 N m) and damping, which the controller
    # does not model, against the wrist's small inertia (in a horizontal figure without them: 8 um, 0.04 mrad)
    assert f.rms_position < 1.5e-3
    assert f.rms_orientation < 0.05
