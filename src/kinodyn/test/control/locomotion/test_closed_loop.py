"""The LocomotionController in closed loop with kinodyn's simulator (true state, no ROS).

The scenarios of ``examples/quadruped_trot.py`` (``examples/locomotion_scenarios.py``), shortened: control
500 Hz, simulator RK4 at 1 ms, soft contact. Bounds: the acceptance's (velocity RMSE <= 0.1 m/s and 0.1 rad/s
after the transient, base above 60 % of its height and no body point on the ground after a 120 N push), and
tighter ones about twice the figures measured when they were written (in the comments). Simulated time only.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import locomotion_scenarios as scenarios

from kinodyn import sim


def test_quadruped_sits_down_and_stands_up() -> None:
    robot = scenarios.Legged.quadruped()
    f = scenarios.stand_up(robot)
    ratio = robot.controller.params.sit_height_ratio
    assert abs(f.sit_height - 0.03 - ratio * robot.controller.nominal_height) < 0.01  # measured 2.7 mm off
    assert f.final_height_error < 0.006  # 2.9 mm: the feet's soft-contact penetration under load
    assert f.max_overshoot < 1e-3  # 0
    assert f.max_tilt < 0.01  # 0.0 deg
    assert f.max_slip < 1e-3  # 0.05 mm


def test_quadruped_trots_in_place_without_drifting() -> None:
    f = scenarios.trot(scenarios.Legged.quadruped(), np.zeros(3), duration=2.0, settle=0.5)
    assert f.drift < 0.01  # measured 0.0 mm
    assert f.yaw_drift < 0.01  # 0.0 mrad
    assert f.rmse_linear < 0.01  # 0.0001 m/s
    assert f.rmse_yaw_rate < 0.03  # 0.0105 rad/s
    assert f.min_height_ratio > 0.95  # 98.8 %
    assert f.lowest_body > 0.2  # 0.27 m (the knees)


@pytest.mark.parametrize(("command", "linear", "yaw_rate"), [
    ((0.5, 0.0, 0.0), 0.1, 0.1),  # measured 0.070 m/s, 0.015 rad/s
    ((0.0, 0.2, 0.0), 0.1, 0.1),  # 0.013 m/s, 0.012 rad/s
    ((0.0, 0.0, 0.6), 0.1, 0.1),  # 0.0001 m/s, 0.012 rad/s
])
def test_quadruped_follows_velocity_commands(command: tuple, linear: float, yaw_rate: float) -> None:
    # the command is reached at the controller's acceleration limits (1 m/s^2, 2 rad/s^2) within 0.5 s
    f = scenarios.trot(scenarios.Legged.quadruped(), np.array(command), duration=3.0, settle=1.5)
    assert f.rmse_linear <= linear
    assert f.rmse_yaw_rate <= yaw_rate
    np.testing.assert_allclose(f.mean_velocity, command, atol=0.03)
    assert f.min_height_ratio > 0.95


def test_quadruped_survives_a_lateral_push_while_trotting() -> None:
    f = scenarios.push(scenarios.Legged.quadruped(), force=120.0, duration=0.2, before=0.6, after=1.5)
    # the acceptance bounds
    assert f.min_height_ratio > 0.6
    assert f.lowest_body > 0.0
    assert f.min_height_ratio > 0.9  # measured 96.4 %
    assert f.lowest_body > 0.15  # 0.24 m
    assert f.max_offset < 0.25  # 0.105 m
    assert f.final_speed < 0.1  # 0.001 m/s (after 2 s)


def test_quadruped_takes_a_new_trot_period_live_keeping_every_foot_phase() -> None:
    """``set_parameters`` while trotting at 0.3 m/s: period -> 0.45 s, duty 0.55 -> 0.62, stiffer base. The
    new trot is in force at once; no foot changes between stance and swing before its planned time (the
    phase-continuous switch: no swing cut short, stances only lengthened), the command is followed
    throughout, two feet or more are always down, the body stays up, and after the transition every foot
    lifts off once per 0.45 s."""
    robot = scenarios.Legged.quadruped()
    ctl, s = robot.controller, robot.sim
    command = np.array([0.3, 0.0, 0.0])
    scenarios.run(robot, 1.1, lambda _t: command, mode="trot")  # mid-swing of a pair
    before = {f: (p.in_stance, s.t + p.time_left) for f, p in ctl.scheduler.update(s.t).feet.items()}
    ctl.set_parameters(replace(ctl.params, period=0.45, duty=0.62, base_frequency=3.5))
    gait = ctl.scheduler.gait
    assert (gait.name, gait.period, gait.duty) == ("trot", 0.45, 0.62)
    assert ctl.period == 0.45
    planned = {f: (p.in_stance, s.t + p.time_left) for f, p in ctl.scheduler.update(s.t).feet.items()}
    assert sorted(p[0] for p in before.values()) == [False, False, True, True]
    for foot, (in_stance, end) in before.items():  # swings end as planned, stances no earlier
        assert planned[foot][0] == in_stance
        assert (planned[foot][1] >= end - 1e-9) if in_stance else abs(planned[foot][1] - end) < 1e-9
    lift_offs: dict[str, list[float]] = {f: [] for f in ctl.feet}
    velocity = []
    while s.t < 3.0 - 1e-9:
        out = ctl.update(s.q, s.v, s.t, command)
        assert out.ok
        assert out.mode == "trot"
        assert sum(out.stance.values()) >= 2
        np.testing.assert_allclose(out.command, command, atol=1e-12)
        for foot, in_stance in out.stance.items():
            was, until = planned[foot]
            if in_stance != was:  # a change of stance or swing: at its planned end (within one tick)
                assert until - 1e-9 <= s.t < until + 0.002 + 1e-9, (foot, s.t, until)
                if not in_stance:
                    lift_offs[foot].append(s.t)
            phase = ctl.scheduler.update(s.t).feet[foot]
            planned[foot] = (phase.in_stance, s.t + phase.time_left)
        for _ in range(robot.steps_per_tick):
            s.step(out.tau)
        velocity.append(s.v[0])
        assert s.q[2] > 0.9 * robot.nominal_height
    for times in lift_offs.values():  # the last two lift-offs of each foot, well after the switch
        assert times[-1] > 2.0
        assert abs(times[-1] - times[-2] - 0.45) < 0.0021
    assert abs(np.mean(velocity[-250:]) - 0.3) < 0.03  # the last 0.5 s (base frame ~ heading frame)


@pytest.mark.parametrize("backend", ["kinodyn", "mujoco"])
def test_quadruped_switches_gaits_at_speed(backend: str) -> None:
    """Trot -> walk -> trot at 0.15 m/s, then stand, on kinodyn.sim and on MuJoCo: every switch at once and at
    whatever phase the feet are in (phase-continuous), no QP failure, two feet or more always down, the body
    up, the speed held in each gait, and standing still with every foot down at the end."""
    robot = scenarios.Legged.quadruped(backend=backend)
    ctl, s = robot.controller, robot.sim
    command = np.array([0.15, 0.0, 0.0])
    scenarios.run(robot, 0.3, mode="stand")
    for mode, until in (("trot", 2.8), ("walk", 5.8), ("trot", 8.3), ("stand", 9.3)):
        ctl.request_mode(mode)
        velocity = []
        while s.t < until - 1e-9:
            out = ctl.update(s.q, s.v, s.t, command)
            assert out.ok, out.message
            assert sum(out.stance.values()) >= 2
            assert s.q[2] > 0.95 * robot.nominal_height
            for _ in range(robot.steps_per_tick):
                s.step(out.tau)
            velocity.append(s.v[0])
        if mode != "stand":
            assert out.mode == mode
            assert ctl.scheduler.gait.name == mode
            assert abs(np.mean(velocity[-500:]) - 0.15) < 0.02, mode  # the last second
    assert out.mode == "stand"
    assert all(out.stance.values())
    assert ctl.scheduler.all_in_stance
    assert np.abs(s.v[:2]).max() < 0.02


def test_footholds_about_the_com_centre_the_feet_under_an_offset_com(tmp_path: Path) -> None:
    """The quadruped with its trunk's inertial origin moved 5 cm forward and 3 cm left (the CoM 2.8 cm
    and 1.7 cm off the base origin, over the legs' nominal stance) trotting in place: the footholds about
    the CoM keep the feet's centroid under it (the feet about the base origin would leave it 3.5 cm off,
    and every diagonal support beside the CoM: sway) and the CoM still."""
    text = scenarios.QUADRUPED_URDF.read_text()
    trunk = '<origin xyz="0.0 0.0 0.0" rpy="0.0 0.0 0.0" />\n      <mass value="20.0" />'
    assert text.count(trunk) == 1
    urdf = tmp_path / "offset_com.urdf"
    urdf.write_text(text.replace(trunk, trunk.replace('xyz="0.0 0.0 0.0"', 'xyz="0.05 0.03 0.0"')))
    spheres = sim.collision_spheres(urdf)
    robot = scenarios.Legged.build(urdf, scenarios.FEET, scenarios.NOMINAL_JOINTS, spheres)
    m, s = robot.model, robot.sim
    scenarios.run(robot, 1.5, mode="trot")
    rows = []
    for _ in range(750):  # 1.5 s, every tick
        scenarios.run(robot, s.t + 0.002 - 1e-9)
        com = m.com(s.q)
        feet = np.array([m.frame_placement(s.q, f)[:3, 3] for f in robot.feet])
        rows.append(np.r_[com[:2] - feet[:, :2].mean(axis=0), com[:2] - s.q[:2], com[:2]])
    r = np.array(rows)
    np.testing.assert_allclose(r[:, 2:4].mean(axis=0), [0.030, 0.018], atol=0.003)  # the CoM's offset
    assert np.linalg.norm(r[:, :2].mean(axis=0)) < 0.003  # measured 0.1 mm
    assert r[:, 4:].std(axis=0).max() < 0.001  # CoM sway (standard deviation): measured 0.09 mm


def test_hexapod_sits_down_and_stands_up_with_the_same_controller() -> None:
    robot = scenarios.Legged.hexapod()
    f = scenarios.stand_up(robot)
    assert f.final_height_error < 0.003  # 0.6 mm
    assert f.max_tilt < 0.01  # 0.0 deg
    assert f.max_slip < 2e-3  # 0.5 mm
    assert f.sit_height < 0.7 * robot.nominal_height  # 0.083 m of 0.145 m


@pytest.mark.parametrize(("command", "drift"), [((0.0, 0.0, 0.0), 0.01), ((0.2, 0.0, 0.0), None)])
def test_hexapod_walks_a_tripod_gait_with_the_same_controller(command: tuple, drift: float | None) -> None:
    f = scenarios.trot(scenarios.Legged.hexapod(), np.array(command), duration=2.5, settle=1.5)
    assert f.rmse_linear <= 0.1  # measured 0.004 / 0.035 m/s
    assert f.rmse_yaw_rate <= 0.1  # 0.003 rad/s
    np.testing.assert_allclose(f.mean_velocity, command, atol=0.02)
    assert f.min_height_ratio > 0.9  # 98.5 %
    assert f.lowest_body > 0.1  # 0.14 m
    if drift is not None:
        assert f.drift < drift  # 0.03 mm
