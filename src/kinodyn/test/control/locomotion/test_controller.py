"""LocomotionParameters validation, the controller's refusals of bad inputs, and one tick's answer."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, cast

import numpy as np
import pytest
from kinodyn.control.locomotion import LocomotionController, LocomotionParameters
from kinodyn.control.wbc import PointContact, Relaxation, WholeBodyController

import kinodyn as kd

if TYPE_CHECKING:
    from collections.abc import Callable

URDFS = Path(__file__).resolve().parents[5] / "urdf"
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
NOMINAL = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])


@pytest.fixture(scope="module")
def model() -> kd.Model:
    return kd.Model.from_urdf(URDFS / "quadruped.urdf", floating_base=True)


def standing(model: kd.Model) -> np.ndarray:
    q = model.neutral()
    q[7:] = NOMINAL
    q[2] = 0.5252 - 0.03  # urdf/README.md: feet centres on z = 0 here
    return q


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"period": -0.1}, "period"), ({"period": math.inf}, "period"), ({"period_ratio": -0.1}, "period_ratio"),
    ({"step_height_ratio": -0.01}, "step_height"), ({"duty": 0.5}, "duty"), ({"duty": 1.0}, "duty"),
    ({"duty": 0.3}, "duty"), ({"duty": math.nan}, "duty"), ({"period_ratio": math.inf}, "period_ratio"),
    ({"walk_duty": 1.0}, "walk_duty"), ({"walk_period_factor": -1.0}, "walk_period_factor"),
    ({"period": 0.5, "contact_ramp": 0.06}, "contact_ramp"), ({"contact_ramp": -0.01}, "contact_ramp"),
    ({"contact_ramp_ratio": 1.5}, "contact_ramp_ratio"), ({"joint_acceleration_ratio": 0.0}, "joint_acc"),
    ({"joint_limit_horizon": math.nan}, "joint_limit_horizon"),
    ({"friction": math.nan}, "friction"), ({"sit_height_ratio": 1.0}, "sit_height_ratio"),
    ({"initial_mode": "trot"}, "initial_mode"), ({"wbc_mode": "strict"}, "wbc_mode"),
    ({"max_yaw_rate": -1.0}, "max_yaw_rate"), ({"base_frequency": "3"}, "base_frequency"),
    ({"swing_frequency": -1.0}, "swing_frequency"), ({"base_frequency_ratio": 0.0}, "base_frequency_ratio"),
    ({"joint_limit_horizon_ratio": -0.1}, "joint_limit_horizon_ratio"),
    ({"qp_regularization": -1e-8}, "qp_regularization"),
    ({"yaw_frequency_ratio": 0.0}, "yaw_frequency_ratio"),
    ({"yaw_frequency_ratio": math.inf}, "yaw_frequency_ratio"),
    ({"yaw_damping_ratio": 0.0}, "yaw_damping_ratio"), ({"yaw_damping_ratio": math.nan}, "yaw_damping_ratio"),
    ({"com_damping_ratio": -0.5}, "com_damping_ratio"),
    ({"com_damping_ratio": math.inf}, "com_damping_ratio"),
])
def test_parameters_refuse_bad_values(kwargs: dict[str, object], match: str) -> None:
    build = cast("Callable[..., LocomotionParameters]", LocomotionParameters)  # (fields of mixed types)
    with pytest.raises(ValueError, match=match):
        build(**kwargs)


def test_nominal_stance_is_read_from_the_posture(model: kd.Model) -> None:
    ctl = LocomotionController(model, FEET, NOMINAL)
    np.testing.assert_allclose(ctl.hips, [[0.25, 0.2], [-0.25, 0.2], [0.25, -0.2], [-0.25, -0.2]], atol=1e-12)
    assert abs(ctl.nominal_height - 0.4952) < 1e-4  # urdf/README.md: feet 0.4952 m below the base
    # leg length: HAA to foot, the 0.1 m HAA-HFE offset across the 0.3 m thigh and shank at +-0.6 rad
    leg = math.hypot(0.6 * math.cos(0.6), 0.1)
    assert ctl.leg_length == pytest.approx(leg, abs=1e-12)
    assert ctl.step_height == pytest.approx(0.16 * leg)
    # the footholds' reach: 0.85 of the leg's full extension (0.1 + 0.3 + 0.3 m), the foot 0.6 cos 0.6 m below
    # its hip and 0.1 m beside it
    reach = math.sqrt((0.85 * 0.7) ** 2 - (0.6 * math.cos(0.6)) ** 2) - 0.1
    assert ctl.max_foothold_offset == pytest.approx(reach)
    gait = ctl.gaits["trot"]
    offsets = [gait.offsets[f] for f in ("LF_FOOT", "RH_FOOT", "LH_FOOT", "RF_FOOT")]
    assert offsets[0] == offsets[1] != offsets[2] == offsets[3]  # diagonal pairs
    # the period law: 0.3 2 pi sqrt(L / g) (~0.43 s for this leg), the walk 7/3 as long
    assert ctl.period == pytest.approx(0.3 * 2.0 * math.pi * math.sqrt(leg / 9.81), rel=1e-12)
    assert ctl.gaits["walk"].period == pytest.approx(7.0 / 3.0 * ctl.period)
    assert ctl.gaits["walk"].duty == 0.8
    # contact ramps: 0.8 of the handover, (0.55 - 1/2) T for the trot, (0.8 - 3/4) 7T/3 for the walk
    assert ctl.contact_ramps["trot"] == pytest.approx(0.8 * 0.05 * ctl.period)
    assert ctl.contact_ramps["walk"] == pytest.approx(0.8 * 0.05 * 7.0 / 3.0 * ctl.period)
    # a pace's pairs stand 0.2 m (half the track), a bound's 0.25 m (half the length) beside the centre
    assert set(ctl.gaits) == {"walk", "trot"}
    assert set(ctl.unavailable) == {"pace", "bound"}
    assert "0.200 m outside" in ctl.unavailable["pace"]
    assert "0.250 m outside" in ctl.unavailable["bound"]
    with pytest.raises(ValueError, match=r"cannot pace: .*centroidal MPC"):
        ctl.request_mode("pace")
    fixed = LocomotionController(model, FEET, NOMINAL, LocomotionParameters(
        period=0.4, duty=0.6, contact_ramp=0.03, max_support_offset_ratio=0.5))  # 0.25 m < 0.5 L
    assert fixed.period == 0.4
    assert fixed.contact_ramps == dict.fromkeys(("trot", "walk", "pace", "bound"), 0.03)
    assert {g.period for n, g in fixed.gaits.items() if n != "walk"} == {0.4}


def test_each_two_beat_gait_has_its_own_timing_unless_set(model: kd.Model) -> None:
    """Left at 0, ``period_ratio`` and ``duty`` are each gait's own (the trot 0.3 and 0.55, the pace 0.28 and
    0.55, the bound 0.245 and 0.55: periods by the pendulum law of the leg, computed here from its length);
    set, they are the trot's, pace's and bound's alike, and ``period`` in seconds too. Each gait's swing is
    fitted at its own period and duty: as a controller built with that gait's timing for every gait fits
    its trot (the second source); the defaults' trot is the one of ``period_ratio`` 0.3 and ``duty`` 0.55."""
    wide = {"max_support_offset_ratio": 0.5}  # (the pace and bound without a planner: timing only)
    ctl = LocomotionController(model, FEET, NOMINAL, LocomotionParameters(**wide))
    pendulum = 2.0 * math.pi * math.sqrt(ctl.leg_length / 9.81)
    own = {"trot": (0.3, 0.55), "pace": (0.28, 0.55), "bound": (0.245, 0.55)}
    for name, (ratio, duty) in own.items():
        gait = ctl.gaits[name]
        assert gait.period == pytest.approx(ratio * pendulum, rel=1e-12)
        assert gait.duty == duty
        assert ctl.contact_ramps[name] == pytest.approx(0.8 * (duty - 0.5) * gait.period, rel=1e-12)
    assert ctl.gaits["walk"].period == pytest.approx(0.7 * pendulum, rel=1e-12)
    fast = LocomotionParameters(max_forward_velocity=1.0, **wide)
    fitted = LocomotionController(model, FEET, NOMINAL, fast)
    for name, (ratio, duty) in own.items():
        alone = LocomotionController(model, FEET, NOMINAL, replace(fast, period_ratio=ratio, duty=duty))
        assert fitted.swing_fits[name] == alone.swing_fit
        assert fitted.gaits[name].duty == alone.gaits["trot"].duty < duty  # (fitted below it at 1 m/s)
        if name == "trot":
            assert (fitted.gaits["trot"], fitted.gaits["walk"]) == (alone.gaits["trot"], alone.gaits["walk"])
            assert fitted.contact_ramps["trot"] == alone.contact_ramps["trot"]
            assert fitted.wbc.limits.horizon == alone.wbc.limits.horizon
    same = LocomotionController(model, FEET, NOMINAL,
                                LocomotionParameters(period_ratio=0.3, duty=0.62, **wide))
    for name in own:
        assert same.gaits[name].period == pytest.approx(0.3 * pendulum, rel=1e-12)
        assert same.gaits[name].duty == 0.62
    seconds = LocomotionController(model, FEET, NOMINAL, LocomotionParameters(period=0.45, **wide))
    assert {(n, seconds.gaits[n].period, seconds.gaits[n].duty) for n in own} == {
        (n, 0.45, duty) for n, (_, duty) in own.items()}


def test_gains_and_limit_look_ahead_follow_the_legs_time_scale(model: kd.Model) -> None:
    """By default each task's frequency is its ratio times the leg's pendulum frequency sqrt(g / L) / (2 pi)
    and the joint limits look a tenth of the trot's swing ahead: the quadruped with every length / 4 (legs
    4x shorter) gets frequencies 2x higher and a period half as long (dynamic similarity: times ~
    sqrt(L)); frequencies set in Hz are used as set."""
    short_text = re.sub(r'(xyz|size|radius|length)="([^"]+)"', _divide_by_four,
                        (URDFS / "quadruped.urdf").read_text())
    short = kd.Model.from_urdf(short_text, floating_base=True)
    big, small = LocomotionController(model, FEET, NOMINAL), LocomotionController(short, FEET, NOMINAL)
    assert small.leg_length == pytest.approx(big.leg_length / 4, rel=1e-12)
    p = big.params
    for ctl in (big, small):
        f0 = math.sqrt(9.81 / ctl.leg_length) / (2 * math.pi)
        for task, ratio in ((ctl.com_task, p.base_frequency_ratio), (ctl.base_task, p.base_frequency_ratio),
                            (ctl.swing_tasks["LF_FOOT"], p.swing_frequency_ratio),
                            (ctl.posture_task, p.posture_frequency_ratio)):
            omega = 2 * math.pi * ratio * f0
            # (the base's yaw, its last axis, at yaw_frequency_ratio times the base frequency and damped at
            # yaw_damping_ratio; the CoM damped at com_damping_ratio, every other task at damping_ratio)
            yaw = task is ctl.base_task
            scale = np.array([1.0] * 5 + [p.yaw_frequency_ratio]) if yaw else 1.0
            damping = (np.array([p.damping_ratio] * 5 + [p.yaw_damping_ratio]) if yaw else
                       p.com_damping_ratio if task is ctl.com_task else p.damping_ratio)
            np.testing.assert_allclose(task.kp, (scale * omega) ** 2, rtol=1e-12)
            np.testing.assert_allclose(task.kd, 2 * damping * scale * omega, rtol=1e-12)
    assert small.com_task.kp[0] == pytest.approx(4 * big.com_task.kp[0], rel=1e-12)
    # (the small one's joints are as fast as the big one's: its trot's duty is fitted lower, timing.py)
    assert small.swing_fit.fast
    for ctl in (big, small):
        swing = ctl.gaits["trot"].swing_duration
        assert ctl.wbc.limits.horizon == pytest.approx(p.joint_limit_horizon_ratio * swing, rel=1e-12)
    assert small.period == pytest.approx(big.period / 2, rel=1e-12)
    # the quadruped's defaults: 3, 5 and 1 Hz within 0.5 %
    assert big.task_frequencies == pytest.approx((3.0, 5.0, 1.0), rel=5e-3)
    fixed = LocomotionController(model, FEET, NOMINAL, replace(p, base_frequency=2.0, swing_frequency=4.0))
    assert fixed.task_frequencies[:2] == (2.0, 4.0)
    assert fixed.com_task.kp[0] == pytest.approx((2 * math.pi * 2.0) ** 2, rel=1e-12)
    # the base's yaw (its last axis) at yaw_frequency_ratio times the base frequency, its other axes at it
    stiff = LocomotionController(model, FEET, NOMINAL, replace(p, base_frequency=2.0, yaw_frequency_ratio=3.0,
                                                                yaw_damping_ratio=0.5, com_damping_ratio=0.7))
    omega = 2 * math.pi * 2.0 * np.array([1.0] * 5 + [3.0])
    np.testing.assert_allclose(stiff.base_task.kp, omega**2, rtol=1e-12)
    np.testing.assert_allclose(stiff.base_task.kd, 2 * np.array([1.0] * 5 + [0.5]) * omega, rtol=1e-12)
    np.testing.assert_allclose(stiff.com_task.kd, 2 * 0.7 * omega[0], rtol=1e-12)
    # on the plan of a planner that moves the CoM, the CoM task is damped at damping_ratio
    planner = SimpleNamespace(moves_com=True)
    stiff.set_planner(cast("Callable[..., None]", planner))
    np.testing.assert_allclose(stiff.com_task.kd, 2 * p.damping_ratio * omega[0], rtol=1e-12)
    stiff.set_planner(None)
    np.testing.assert_allclose(stiff.com_task.kd, 2 * 0.7 * omega[0], rtol=1e-12)


def _divide_by_four(match: re.Match[str]) -> str:
    return f'{match.group(1)}="{" ".join(str(float(x) / 4) for x in match.group(2).split())}"'


def test_joint_acceleration_cap_is_what_the_torque_limits_give(model: kd.Model) -> None:
    """The cap over ``joint_acceleration_ratio``: the largest joint acceleration over every vertex of the box
    of torque limits (4096 for 12 joints), each by forward dynamics (ABA, body free, at rest, gravity's
    share taken away) at the nominal stance, a second way to the controller's |M^-1| row sums. The QP gets
    it; a lighter robot (every inertia / 10) gets a cap ten times higher."""
    ctl = LocomotionController(model, FEET, NOMINAL)
    q = model.neutral()
    q[7:] = NOMINAL
    zero = np.zeros(model.nv)
    drift = model.aba(q, zero, zero)
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * 12)).reshape(12, -1).T
    best = 0.0
    for s in signs:
        tau = np.r_[np.zeros(6), s * model.effort_limit[6:]]
        best = max(best, float(np.abs(model.aba(q, zero, tau) - drift)[6:].max()))
    assert ctl.max_joint_acceleration == pytest.approx(2.0 * best, rel=1e-9)
    assert ctl.wbc.limits.max_acceleration == ctl.max_joint_acceleration
    # the look-ahead: 0.1 of the trot's swing time (1 - 0.55) x period by default, or as set
    assert ctl.wbc.limits.horizon == pytest.approx(0.1 * 0.45 * ctl.period, rel=1e-12)
    set_horizon = LocomotionController(model, FEET, NOMINAL, LocomotionParameters(joint_limit_horizon=0.03))
    assert set_horizon.wbc.limits.horizon == 0.03
    text = (URDFS / "quadruped.urdf").read_text()
    light = kd.Model.from_urdf(re.sub(r'(<(?:mass value|inertia)[^/]*/>)', _divide_by_ten, text),
                               floating_base=True)
    assert float(light.mass.sum()) == pytest.approx(3.6)
    assert LocomotionController(light, FEET, NOMINAL).max_joint_acceleration == \
        pytest.approx(10.0 * ctl.max_joint_acceleration, rel=1e-9)


def _divide_by_ten(match: re.Match[str]) -> str:
    return re.sub(r'"([-0-9.eE+]+)"', lambda m: f'"{float(m.group(1)) / 10.0!r}"', match.group(1))


def test_gaits_a_robot_cannot_make_are_refused_with_the_reason() -> None:
    hexapod = kd.Model.from_urdf(URDFS.parent / "src/kinodyn/test/estimation/hexapod.urdf",
                                 floating_base=True)
    legs = ["LF_foot", "LM_foot", "LH_foot", "RF_foot", "RM_foot", "RH_foot"]
    nominal = np.concatenate([np.tile([0.0, 0.4, -0.4], 3), np.tile([0.0, -0.4, 0.4], 3)])
    ctl = LocomotionController(hexapod, legs, nominal)
    assert set(ctl.gaits) == {"walk", "trot"}
    assert set(ctl.unavailable) == {"pace", "bound"}
    with pytest.raises(ValueError, match=r"cannot bound: .*LM_foot"):
        ctl.request_mode("bound")
    track = ctl.hips[0, 1] - ctl.hips[:, 1].mean()  # the front and hind feet's line, inside the middle's
    assert track > 0.3
    assert f"{track:.3f} m outside" in ctl.unavailable["pace"]
    ctl.request_mode("walk")  # the wave gait
    assert ctl.gaits["walk"].offsets["LH_foot"] == 0.0
    assert ctl.gaits["walk"].offsets["LM_foot"] == 5 / 6


def test_controller_refuses_bad_construction(model: kd.Model) -> None:
    with pytest.raises(ValueError, match="floating-base"):
        LocomotionController(kd.Model.from_urdf(URDFS / "arm7.urdf"), ("ee_link",) * 3, np.zeros(7))
    with pytest.raises(KeyError):
        LocomotionController(model, ("LF_FOOT", "LH_FOOT", "RF_FOOT", "XX_FOOT"), NOMINAL)
    with pytest.raises(ValueError, match="nominal joint positions"):
        LocomotionController(model, FEET, NOMINAL[:6])
    with pytest.raises(ValueError, match="three distinct feet"):
        LocomotionController(model, FEET[:2], NOMINAL)


def test_one_tick_answers_finite_torques_and_refuses_bad_inputs(model: kd.Model) -> None:
    ctl = LocomotionController(model, FEET, NOMINAL)
    q, v = standing(model), np.zeros(model.nv)
    out = ctl.update(q, v, 0.0, (0.3, 0.0, 0.0))
    assert out.ok
    assert out.mode in ("standing_up", "stand")
    assert out.tau is not None
    assert out.q_des is not None
    assert out.v_des is not None
    assert np.isfinite(out.tau).all()
    assert (np.abs(out.tau) <= model.effort_limit[6:]).all()
    # at rest in the nominal stance the predicted joint targets stay where the joints are
    np.testing.assert_allclose(out.q_des, q[7:], atol=1e-4)
    assert out.stance == dict.fromkeys(FEET, True)
    assert out.footholds == {}
    np.testing.assert_allclose(out.command, 0.0)  # not trotting: the command is not followed
    for bad_q, bad_v, match in ((q[:-1], v, "entries"), (np.r_[q[:-1], math.nan], v, "finite"),
                                (np.r_[q[:3], 0.0, 0.0, 0.0, 2.0, q[7:]], v, "unit quaternion")):
        with pytest.raises(ValueError, match=match):
            ctl.update(bad_q, bad_v, 0.01)
    with pytest.raises(ValueError, match="command"):
        ctl.update(q, v, 0.01, (math.nan, 0.0, 0.0))
    with pytest.raises(ValueError, match="backwards"):
        ctl.update(q, v, -1.0)
    with pytest.raises(ValueError, match="mode"):
        ctl.request_mode("gallop")
    with pytest.raises(ValueError, match="pose offset"):
        ctl.set_pose_offset(pitch=1.0)


def test_a_ramp_left_at_rounding_level_releases_the_contact(model: kd.Model) -> None:
    """The WBC drops a contact whose swing ramp has ended up at ~1e-12 instead of 0 (a bound of ~1e-9 N
    left DAQP a single feasible force and it answered 'infeasible' while trotting)."""
    wbc = WholeBodyController(model, [PointContact(f) for f in FEET])
    wbc.update(standing(model), np.zeros(model.nv), 0.0)
    ramp = 0.1 * (1.0 + 1e-11)  # as a ramp computed from a phase's time left can come out: scale 1e-11
    wbc.set_contact_active("LF_FOOT", False, ramp=ramp)
    for k in range(1, 6):
        wbc.update(standing(model), np.zeros(model.nv), 0.02 * k)
    assert "LF_FOOT" not in wbc.active_contacts()


def test_set_parameters_acts_as_a_controller_built_with_them(model: kd.Model) -> None:
    """Gains, weights, friction and limits changed live: the next ticks answer the torques of a controller
    built with the new parameters that saw the same states (standing still: no reference depends on them)."""
    old = LocomotionParameters()
    new = replace(old, base_frequency=4.0, swing_frequency=6.0, posture_frequency=2.0, damping_ratio=0.8,
                  posture_weight=1e-3, swing_weight=2.0, friction=0.4, max_forward_velocity=0.3,
                  qp_regularization=1e-6, yaw_frequency_ratio=1.5, yaw_damping_ratio=2.0)
    live = LocomotionController(model, FEET, NOMINAL, old)
    built = LocomotionController(model, FEET, NOMINAL, new)
    q, v = standing(model), np.zeros(model.nv)
    q[0] += 0.01  # off the reference: the gains matter
    v[6:] = 0.1
    v[5] = 0.05  # turning: the yaw's own gains matter
    for k in range(3):
        live.update(q, v, 0.002 * k), built.update(q, v, 0.002 * k)
    live.set_parameters(new)
    assert live.params is new
    assert live.mode == built.mode
    a, b = live.update(q, v, 0.006), built.update(q, v, 0.006)
    assert a.tau is not None
    assert b.tau is not None
    np.testing.assert_allclose(a.tau, b.tau, rtol=0.0, atol=1e-9)
    different = LocomotionController(model, FEET, NOMINAL, old)
    for k in range(4):
        c = different.update(q, v, 0.002 * k)
    assert c.tau is not None
    assert np.abs(c.tau - b.tau).max() > 1e-3


def test_set_parameters_refuses_what_cannot_change_live(model: kd.Model) -> None:
    ctl = LocomotionController(model, FEET, NOMINAL)
    p = ctl.params
    with pytest.raises(ValueError, match="wbc_mode cannot change live"):
        ctl.set_parameters(replace(p, wbc_mode="hierarchical", period=0.4))
    with pytest.raises(TypeError, match="LocomotionParameters"):
        ctl.set_parameters({"period": 0.4})  # type: ignore[arg-type]
    ctl.set_pose_offset(pitch=0.3)
    with pytest.raises(ValueError, match="pose offset"):
        ctl.set_parameters(replace(p, max_pose_angle=0.2, period=0.4))
    with pytest.raises(ValueError, match="joint_acceleration_ratio cannot change live"):
        ctl.set_parameters(replace(p, joint_acceleration_ratio=3.0))
    with pytest.raises(ValueError, match="the trot is not possible"):
        ctl.set_parameters(replace(p, contact_ramp=0.2))
    ctl.update(standing(model), np.zeros(model.nv), 0.0)
    ctl.request_mode("walk")
    ctl.update(standing(model), np.zeros(model.nv), 2.0)
    assert ctl.mode == "walk"
    # a ramp within the trot's handover (0.05 T) beyond the walk's at duty 0.76 ((0.76 - 0.75) 7T/3)
    with pytest.raises(ValueError, match="the gait in force"):
        ctl.set_parameters(replace(p, contact_ramp=0.015, walk_duty=0.76))
    assert ctl.params is p
    assert ctl.gaits["trot"].period == ctl.period
    assert ctl.contact_ramps["trot"] == pytest.approx(0.04 * ctl.period)
    ctl.set_parameters(replace(p, contact_ramp=0.015))  # fits both
    assert ctl.contact_ramps == dict.fromkeys(("walk", "trot"), 0.015)


def test_walk_command_limits_scale_with_the_swing_speed(model: kd.Model) -> None:
    """Walking (duty 0.8 against the trot's 0.55), the command is clipped to the trot's limits times
    (0.55 / 0.45) / (0.8 / 0.2) = 11/36; trotting, to the limits themselves (the command's rate limiter
    reaches either within 0.6 s)."""
    for mode, scale in (("walk", 11.0 / 36.0), ("trot", 1.0)):
        ctl = LocomotionController(model, FEET, NOMINAL)
        q, v = standing(model), np.zeros(model.nv)
        ctl.request_mode(mode)
        for k in range(300):
            out = ctl.update(q, v, 0.002 * k, (2.0, -2.0, 2.0))
        assert out.mode == mode
        np.testing.assert_allclose(out.command, scale * np.array([0.5, -0.2, 0.6]), rtol=0, atol=1e-12)


def test_set_parameters_before_the_first_tick_sets_the_initial_mode(model: kd.Model) -> None:
    ctl = LocomotionController(model, FEET, NOMINAL)
    ctl.set_parameters(replace(ctl.params, initial_mode="sit"))
    assert ctl.update(standing(model), np.zeros(model.nv), 0.0).mode == "sitting_down"


def test_joints_pinned_by_their_limits_relax_or_fail_the_tick_without_raising(tmp_path: Path) -> None:
    """Every joint's URDF limits lower = upper (at the posture) and the legs moving: the pinned acceleration
    bounds of the stance legs contradict each other, DAQP exits -6 (overdetermined initial working set),
    the fallback (OSQP) finds no solution either. The tick is answered relaxed, the joint limits giving way
    (the torques within the URDF's); with the relaxation disabled it reports the failure (no exception)."""
    text = (URDFS / "quadruped.urdf").read_text()
    for name, value in zip(re.findall(r'<joint name="(\w+)" type="revolute"', text), NOMINAL, strict=True):
        text = re.sub(rf'(<joint name="{name}".*?<limit )lower="[^"]*" upper="[^"]*"',
                      rf'\g<1>lower="{value}" upper="{value}"', text, count=1, flags=re.S)
    path = tmp_path / "pinned.urdf"
    path.write_text(text)
    pinned = kd.Model.from_urdf(path, floating_base=True)
    assert np.array_equal(pinned.lower_limit[7:], pinned.upper_limit[7:])
    controller = LocomotionController(pinned, FEET, NOMINAL, LocomotionParameters(initial_mode="stand"))
    v = np.random.default_rng(1).normal(scale=0.3, size=pinned.nv)
    relaxed = controller.update(standing(pinned), v, 0.0)
    assert relaxed.ok, relaxed.message
    assert relaxed.status == "relaxed", relaxed.message
    assert relaxed.message.startswith("relaxed (joint limits soft): joint limits by up to "), relaxed.message
    assert relaxed.tau is not None
    assert np.all(np.abs(relaxed.tau) <= pinned.effort_limit[6:])
    strict = LocomotionController(pinned, FEET, NOMINAL, LocomotionParameters(initial_mode="stand"))
    strict.wbc.relaxation = Relaxation(enabled=False)
    out = strict.update(standing(pinned), v, 0.0)
    assert not out.ok, out.message
    assert out.tau is None, out.message
    assert out.status == "infeasible", out.message
