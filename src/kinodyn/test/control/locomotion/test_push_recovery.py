"""Push recovery of the trot on a robot nobody tuned for: the swing foot's target replanned every tick from
the measured velocity (``footholds.touchdown_drift`` plus the capture point of Pratt et al. 2006, "Capture
point: a step toward humanoid push recovery"), within the leg's reach (``footholds.leg_reach``), checked in
closed form on the controller; and trotting pushes of 0.5 x weight for 0.2 s on generated robots of 2-40 kg
on both engines, which fall with the swing feet weighed as the body or with footholds near the legs' full
extension and the body held at its height (simulated time)."""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.locomotion import LocomotionController
from kinodyn.control.locomotion import gait as gait_patterns
from kinodyn.control.locomotion.footholds import capture_gain, leg_reach, touchdown_drift

import kinodyn as kd

sys.path.insert(0, str(Path(__file__).resolve().parents[5] / "examples"))  # the example's scenario modules
import acceptance_matrix as matrix
import generate  # urdf/generate.py (acceptance_matrix puts urdf/ on the path)

LIGHT = matrix.VARIANT["light_short"]  # 2 kg, legs of 0.15 m
DT = 0.002  # s, the control tick


@pytest.fixture(scope="module")
def light() -> tuple[kd.Model, np.ndarray]:
    """The light variant's model and its nominal stance's joint positions."""
    assert isinstance(LIGHT, generate.QuadrupedVariant)
    robot = generate.quadruped_variant(LIGHT)
    with tempfile.TemporaryDirectory() as directory:
        urdf = Path(directory) / "light.urdf"
        urdf.write_text(generate.render(robot))
        model = kd.Model.from_urdf(urdf, floating_base=True)
    return model, np.array([c.nominal for c in robot.controlled])


def test_touchdown_drift_is_the_push_part_of_the_velocity_error_over_the_swing_time_left() -> None:
    # 0.3 m/s too fast forward and 0.4 m/s to the left of a 0.5 m/s forward command (|e| = 0.5 m/s), of which
    # the part beyond 0.1 m/s (4/5 of it) counts, 0.12 s to touchdown
    np.testing.assert_allclose(touchdown_drift(0.0, (0.8, 0.4), (0.5, 0.0, 0.3), 0.12, 0.1),
                               [0.8 * 0.3 * 0.12, 0.8 * 0.4 * 0.12], atol=1e-15)
    # heading pi/2: the command's x is the world's y
    np.testing.assert_allclose(touchdown_drift(math.pi / 2, (-0.4, 0.8), (0.5, 0.0, 0.0), 0.12, 0.1),
                               [-0.8 * 0.4 * 0.12, 0.8 * 0.3 * 0.12], atol=1e-12)
    assert touchdown_drift(0.0, (0.55, 0.05), (0.5, 0.0, 0.0), 0.12, 0.1) == (0.0, 0.0)  # the trot's sway
    assert touchdown_drift(0.3, (0.7, -0.1), (0.5, 0.0, 0.0), 0.0, 0.1) == (0.0, 0.0)  # at touchdown


def test_capture_gain_is_the_given_one_up_to_the_sway_and_one_for_the_excess() -> None:
    assert capture_gain(0.6, 0.05, 0.1) == 0.6
    assert capture_gain(0.6, 0.1, 0.1) == pytest.approx(0.6, abs=1e-15)  # continuous
    # 0.6 * 0.1 + 1.0 * (0.5 - 0.1) = 0.46 m/s of feedback on 0.5 m/s
    assert capture_gain(0.6, 0.5, 0.1) * 0.5 == pytest.approx(0.46, abs=1e-15)


def test_leg_reach_of_the_quadruped_leg_in_closed_form() -> None:
    urdf = Path(__file__).resolve().parents[5] / "urdf" / "quadruped.urdf"
    model = kd.Model.from_urdf(urdf, floating_base=True)
    q = model.neutral()
    q[7:] = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2] * 2
    feet = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
    # urdf/README.md: HAA to HFE 0.1 m across, thigh and shank 0.3 m at +-0.6 rad: the foot 0.6 cos 0.6 m
    # below the hip and 0.1 m beside it; the leg's full extension 0.7 m
    for ratio in (0.8, 0.95, 1.0):
        expected = math.sqrt((ratio * 0.7) ** 2 - (0.6 * math.cos(0.6)) ** 2) - 0.1
        assert leg_reach(model, q, feet, ratio) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="no room"):
        leg_reach(model, q, feet, 0.7)  # 0.49 m of a 0.5 m distance: no room left


def test_push_speed_is_the_deadbeat_speed_or_the_gaits_own_sway_if_larger(
        light: tuple[kd.Model, np.ndarray]) -> None:
    """A trot's support line passes the centre of the feet's pattern: ``deadbeat_speed``; a pace's and a
    bound's leave it by half the hips' lateral and fore-aft spacing, and their sway ``g d T / (4 h)`` is the
    threshold where it is larger."""
    model, joints = light
    ctl = LocomotionController(model, generate.QUADRUPED_FEET, joints)
    g, h = ctl.gravity, ctl.nominal_height
    half_width = 0.5 * float(np.ptp(ctl.hips[:, 1]))
    half_length = 0.5 * float(np.ptp(ctl.hips[:, 0]))
    feet, trot = generate.QUADRUPED_FEET, ctl.gaits["trot"]
    gaits = {  # a pace and a bound at the trot's timing (this controller makes neither without a planner)
        "pace": (gait_patterns.pace(gait_patterns.lateral_groups(feet, ctl.hips), trot.period, trot.duty),
                 half_width),
        "bound": (gait_patterns.bound(gait_patterns.fore_aft_groups(feet, ctl.hips), trot.period, trot.duty),
                  half_length),
        "trot": (trot, 0.0),
    }
    for name, (gait, distance) in gaits.items():
        ctl._moving_gait = gait  # noqa: SLF001  (the gait whose threshold is read, without walking it)
        sway = g * distance * gait.period / (4.0 * h)
        assert (sway > ctl.deadbeat_speed) == (name != "trot"), name  # the two cases of the max both met
        assert ctl.push_speed == pytest.approx(max(ctl.deadbeat_speed, sway), rel=1e-12, abs=1e-12), name
    assert ctl.deadbeat_speed == pytest.approx(
        ctl.params.deadbeat_speed_ratio * math.sqrt(g * ctl.leg_length), rel=1e-12)


def _trotting(model: kd.Model, joints: np.ndarray) -> tuple[LocomotionController, np.ndarray, float]:
    """The controller trotting in place on the light robot held still in its nominal stance, at the tick
    where a foot is past a third of its swing: the controller, ``q`` and the time."""
    ctl = LocomotionController(model, generate.QUADRUPED_FEET, joints)
    q = model.neutral()
    q[7:] = joints
    v = np.zeros(model.nv)
    t = 0.0
    ctl.update(q, v, t)
    ctl.request_mode("trot")
    for _ in range(2000):
        t += DT
        out = ctl.update(q, v, t)
        assert out.ok, out.message
        phases = ctl.scheduler.update(t).feet
        if any(not p.in_stance and p.phase > 1.0 / 3.0 for p in phases.values()):
            return ctl, q, t
    raise AssertionError("no foot swung")


def test_the_swing_target_moves_with_the_velocity_error_by_the_capture_point_within_reach(
        light: tuple[kd.Model, np.ndarray]) -> None:
    model, joints = light
    ctl, q, t = _trotting(model, joints)
    phases = ctl.scheduler.update(t).feet
    foot = next(f for f, p in phases.items() if not p.in_stance)
    remaining = phases[foot].time_left
    assert 0.0 < remaining < phases[foot].swing_duration
    v = np.zeros(model.nv)
    on_command = ctl.update(q, v, t).footholds[foot][:2]  # the same tick (dt = 0), moving on command
    ground = min(float(model.frame_placement(q, f)[2, 3]) for f in ctl.feet)
    height = float(model.com(q)[2]) - ground  # the pendulum's
    gain, sway = ctl.params.capture_gain, ctl.deadbeat_speed
    assert sway == pytest.approx(ctl.params.deadbeat_speed_ratio * math.sqrt(ctl.gravity * ctl.leg_length))
    pendulum = math.sqrt(height / ctl.gravity)
    # within the trot's own sway: the capture point times the gain of the error fed back (cycle_average:
    # the cycle's mean, 0 after standing still on command, plus the error about it times (|d| / e_s)^2 =
    # 1/4), the hip moving on command
    error = np.array([0.3, 0.4]) * sway  # m/s: the base (level, yaw 0: its frame is the world's) too fast
    v[:2] = error
    swaying = ctl.update(q, v, t).footholds[foot][:2]
    np.testing.assert_allclose(swaying - on_command, gain * pendulum * 0.25 * error, rtol=1e-9, atol=1e-12)
    # a push: the part beyond the sway gets the full capture point and drifts the hip for the swing time left
    error = np.array([0.6, 1.6]) * sway
    push = (1.0 - sway / np.linalg.norm(error)) * error
    v[:2] = error
    pushed = ctl.update(q, v, t).footholds[foot][:2]
    capture = pendulum * (gain * error + (1.0 - gain) * push)
    assert np.linalg.norm(capture) < ctl.max_foothold_offset  # unclipped
    np.testing.assert_allclose(pushed - on_command, remaining * push + capture, rtol=1e-9, atol=1e-12)
    # a push far beyond what a step takes: the capture offset is clipped to the leg's reach, in the
    # direction of the error, about the hip as it drifts
    error = np.array([-1.0, 4.0])
    push = (1.0 - sway / np.linalg.norm(error)) * error
    v[:2] = error
    thrown = ctl.update(q, v, t).footholds[foot][:2]
    offset = thrown - on_command - remaining * push
    assert np.linalg.norm(offset) == pytest.approx(ctl.max_foothold_offset, rel=1e-9)
    np.testing.assert_allclose(offset / np.linalg.norm(offset), error / np.linalg.norm(error), atol=1e-9)
    assert ctl.max_foothold_offset == pytest.approx(
        leg_reach(model, q, ctl.feet, ctl.params.foothold_reach_ratio), rel=1e-12)


# rows the defaults carry through the trotting push without a relaxed tick
PUSH_ROWS = (("dense_short", "kinodyn", 0.5), ("light_short", "kinodyn", 0.75),
             ("small_fwd_knees", "mujoco", 0.75))
# rows that fall with the swing feet weighed as the body (swing_weight 1)
SWING_ROWS = (("light_short", "kinodyn", 0.0), ("dense_short", "mujoco", 0.5))
# the 2 kg variant's rows whose stance foot landed at full extension with footholds within 0.95 of it
REACH_ROWS = (("light_short", "kinodyn", 0.5), ("light_short", "mujoco", 0.25))


def _push_row(robot: str, engine: str, phase: float, **overrides: float) -> matrix.Row:
    """The acceptance row of ``robot``'s trotting push at ``phase``, the controller's parameters the defaults
    but ``overrides``."""
    return matrix.evaluate(matrix.VARIANT[robot], engine, f"trot push 0.5 mg @{phase:g}T",
                           overrides=overrides or None)


@pytest.mark.parametrize(("robot", "engine", "phase"), PUSH_ROWS + REACH_ROWS)
def test_a_trotting_robot_stays_up_under_a_push_of_half_its_weight(robot: str, engine: str,
                                                                    phase: float) -> None:
    """The acceptance's trotting push (0.5 x weight for 0.2 s, ``phase`` of the gait cycle after 1 s of
    trotting, then 2 s) on generated robots of 2, 6 and 40 kg: every tick solved with its hard constraints,
    the base above 90 % of its height, no body point on the ground (with the footholds clipped to 0.3 L and
    fixed to the hip moving on command, the 6 kg robot's QP was infeasible 0.2 s after the push; with them
    within 0.95 of the legs' full extension and the body held at its height, the 2 kg robot fell in
    REACH_ROWS: below)."""
    row = _push_row(robot, engine, phase)
    assert not row.infeasible, row.figure()
    assert row.fallbacks == 0, row.figure()
    assert row.relaxed == 0, row.figure()
    assert not row.fell, row.figure()
    assert row.min_height_ratio > 0.9, row.figure()


@pytest.mark.parametrize(("robot", "engine", "phase"), SWING_ROWS)
def test_with_swing_feet_weighed_as_the_body_the_pushed_robot_falls(robot: str, engine: str,
                                                                     phase: float) -> None:
    """Rows the defaults pass (the acceptance's bounds: relaxed ticks allowed) fall at ``swing_weight`` 1 (the
    CoM's and the base's): the swing feet chasing their capture footholds take the joints to their torque
    limits and the QP's shortfall falls on the body."""
    row = _push_row(robot, engine, phase)
    assert row.passed, row.figure()
    assert _push_row(robot, engine, phase, swing_weight=1.0).fell


@pytest.mark.parametrize(("robot", "engine", "phase"), REACH_ROWS)
def test_with_footholds_near_full_extension_the_pushed_light_robot_falls_unless_it_crouches(
        robot: str, engine: str, phase: float) -> None:
    """At ``foothold_reach_ratio`` 0.95 (0.85 by default) with the base held at its height
    (``stance_reach_ratio`` 0) the body, rising as the QP presses the feet down for the friction that brakes
    it, leaves a foot landing at its leg's full extension: the same rows fall. Lowered while pushed (the
    default ``stance_reach_ratio``) to keep the legs within reach, they stand."""
    assert _push_row(robot, engine, phase, foothold_reach_ratio=0.95, stance_reach_ratio=0.0).fell
    crouched = _push_row(robot, engine, phase, foothold_reach_ratio=0.95)
    assert crouched.passed, crouched.figure()
