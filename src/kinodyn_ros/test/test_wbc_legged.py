"""The wbc node's legged mode without DDS: WbcCore driven with messages built from kinodyn.sim (the quadruped,
RK4, soft contact, 2 ms per tick as in lockstep): hold while no base state, the handover to the QP, the
contact schedule ahead of the joint states, damping on a failed QP, the cmd_vel timeout."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import TwistStamped
from kinodyn.control.locomotion import LocomotionParameters
from kinodyn.kinematics.forward import frame_placement
from kinodyn_ros.input_bounds import JointBounds
from kinodyn_ros.problem_log import DistinctProblemLog
from kinodyn_ros.wbc.core import WbcCore, WbcParameters
from kinodyn_ros.wbc.legged import LeggedController, LeggedSettings
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

import kinodyn as kd
from kinodyn import sim

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / "urdf" / "quadruped_sim.urdf"
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
POSTURE = (0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2)
STANDING_HEIGHT = 0.5252  # urdf/README.md: the base with the foot spheres on the ground
DT_NS = 2_000_000


def stamped(msg, stamp_ns: int):
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    return msg


class Loop:
    """The simulator answering each command, as control_node in lockstep does."""

    def __init__(self, logger, settings: LeggedSettings | None = None) -> None:
        self.model = kd.Model.from_urdf(URDF, floating_base=True)
        self.sim = sim.Simulator(self.model, dt=2e-3, integrator="rk4",
                                 contact=sim.ContactModel(sim.collision_spheres(URDF)))
        q0 = self.model.neutral()
        q0[7:], q0[2] = POSTURE, STANDING_HEIGHT
        self.sim.reset(q0)
        settings = settings or LeggedSettings(feet=FEET, posture=POSTURE)
        self.controller = LeggedController(self.model, settings, LocomotionParameters())
        self.infos: list[str] = []
        self.core = WbcCore(self.model, self.controller, WbcParameters(),
                            JointBounds.from_model(self.model, 0.1, 1e6), DistinctProblemLog(logger),
                            self.infos.append, base_state_wait=0.0, clock=lambda: self.k * DT_NS)
        self.k = 0
        self.answers: list = []

    def step(self, with_base: bool) -> np.ndarray:
        """One tick: odometry (ground truth, odom = world) then joint states of step k; applies the command
        (the JointPDController's law) over one step. Returns the applied torque."""
        s, stamp = self.sim, self.k * DT_NS
        if with_base:
            odom = stamped(Odometry(), stamp)
            odom.header.frame_id, odom.child_frame_id = "odom", "base_link"
            p, o = odom.pose.pose.position, odom.pose.pose.orientation
            p.x, p.y, p.z = (float(x) for x in s.q[:3])
            o.x, o.y, o.z, o.w = (float(x) for x in s.q[3:7])
            t = odom.twist.twist
            t.linear.x, t.linear.y, t.linear.z = (float(x) for x in s.v[:3])
            t.angular.x, t.angular.y, t.angular.z = (float(x) for x in s.v[3:6])
            assert self.core.on_base_state(odom) == []
        js = stamped(JointState(name=list(self.model.joint_names), position=s.q[7:].tolist(),
                                velocity=s.v[6:].tolist()), stamp)
        (answer,) = self.core.on_joint_state(js, 0)
        self.answers.append(answer)
        c = answer.command
        assert (c.header.stamp.sec * 10**9 + c.header.stamp.nanosec) == stamp
        tau = np.array(c.effort) + np.array(c.kp) * (np.array(c.position) - s.q[7:]) + \
            np.array(c.kd) * (np.array(c.velocity) - s.v[6:])
        tau = np.clip(tau, -self.model.effort_limit[6:], self.model.effort_limit[6:])
        s.step(tau)
        self.k += 1
        return tau


def test_holds_without_a_base_state_then_hands_over_to_the_qp_and_stands(logger) -> None:
    loop = Loop(logger)
    for _ in range(100):  # 0.2 s: the estimator initialising
        loop.step(with_base=False)
    hold = loop.answers[-1].command
    assert all(k == 800.0 for k in hold.kp) and list(hold.position) == list(POSTURE) and not any(hold.effort)
    assert "holding the posture" in logger.lines[0][1] and len(logger.lines) == 1
    torques = [loop.step(with_base=True) for _ in range(750)]  # 1.5 s: handover, stand-up
    assert "base state on odometry/filtered back at t = 0.200000 s; controlling" in loop.infos
    # handover: the first controlled command is 1/50 of the QP's torque and 49/50 of the hold's stiffness
    first = loop.answers[100].command
    assert first.kp[0] == pytest.approx(800.0 * 49 / 50) and first.kd[0] == pytest.approx(10.0 * 49 / 50)
    assert all(k == 0.0 for k in loop.answers[160].command.kp)  # after 0.1 s: pure torque (joint_kp 0)
    assert np.abs(torques).max() < 40.0  # no spike (80 N m without the handover)
    assert abs(loop.sim.q[2] - STANDING_HEIGHT) < 0.01 and np.abs(loop.sim.v[:3]).max() < 0.01
    # nothing else went wrong; DAQP reports 'numerical_error' on one tick 10 ms into the handover (the core
    # QP's, reported to its owner): that tick is damped, and the stand above holds anyway
    assert all("QP failed" in line for _, line in logger.lines[1:]), logger.lines


def test_without_the_handover_the_switch_from_the_hold_saturates_a_knee(logger) -> None:
    """What handover_time prevents (the same run with it 0)."""
    loop = Loop(logger, LeggedSettings(feet=FEET, posture=POSTURE, handover_time=0.0))
    for _ in range(100):
        loop.step(with_base=False)
    torques = [loop.step(with_base=True) for _ in range(10)]
    assert np.abs(torques).max() > 60.0


def test_contact_schedule_is_stamped_ahead_and_lists_the_feet_in_stance(logger) -> None:
    loop = Loop(logger)
    for _ in range(3):
        loop.step(with_base=True)
    for k, answer in enumerate(loop.answers):
        schedule = answer.contacts
        stamp = schedule.header.stamp.sec * 10**9 + schedule.header.stamp.nanosec
        assert stamp == k * DT_NS + 2_000_000  # contact_schedule_lead
        assert list(schedule.names) == list(FEET) and all(schedule.in_contact)


def test_a_failed_qp_sends_damping_with_one_error_line(logger, monkeypatch) -> None:
    loop = Loop(logger)
    loop.step(with_base=True)
    real = loop.controller.controller.update

    def failing(q, v, t, command):
        out = real(q, v, t, command)
        return type(out)(False, "infeasible", "no solution", out.mode, None, None, None, out.stance,
                         out.footholds, out.task_errors, out.command, out.solve_time)

    monkeypatch.setattr(loop.controller.controller, "update", failing)
    for _ in range(3):
        tau = loop.step(with_base=True)
        c = loop.answers[-1].command
        assert not any(c.kp) and all(k == 2.0 for k in c.kd) and not any(c.effort)
        assert np.all(np.isfinite(tau))
    errors = [line for level, line in logger.lines if level == "error"]
    assert len(errors) == 1 and "QP failed at t = 0.002000 s (infeasible: no solution); sending damping" in \
        errors[0]


def test_cmd_vel_reaches_the_controller_until_it_times_out(logger, monkeypatch) -> None:
    loop = Loop(logger, LeggedSettings(feet=FEET, posture=POSTURE, cmd_vel_timeout=0.01))
    seen: list[np.ndarray] = []
    real = loop.controller.controller.update
    monkeypatch.setattr(loop.controller.controller, "update",
                        lambda q, v, t, command: (seen.append(np.array(command)), real(q, v, t, command))[1])
    cmd = stamped(TwistStamped(), 0)
    cmd.twist.linear.x, cmd.twist.linear.y, cmd.twist.angular.z = 0.3, -0.1, 0.2
    loop.core.on_cmd_vel(cmd, now_ns=0)  # unstamped: stamped with the receipt time, 0
    for _ in range(8):
        loop.step(with_base=True)
    np.testing.assert_array_equal(seen[5], [0.3, -0.1, 0.2])  # t = 0.010 s: within the timeout
    np.testing.assert_array_equal(seen[6], [0.0, 0.0, 0.0])  # t = 0.012 s: timed out
    bad = stamped(TwistStamped(), 0)
    bad.twist.linear.x = math.nan
    with pytest.raises(ValueError, match="not finite"):
        loop.core.on_cmd_vel(bad, now_ns=0)


def test_legged_settings_refuse_bad_values() -> None:
    for kwargs, reason in (({"feet": ("LF_FOOT",)}, "at least three distinct foot frames"),
                           ({"posture": ()}, "nominal standing joint positions"),
                           ({"locomotion_mode": "gallop"}, "must be one of sit, stand, trot"),
                           ({"hold_kp": -1.0}, "hold_kp must be a finite number >= 0"),
                           ({"cmd_vel_timeout": 0.0}, "cmd_vel_timeout must be a positive finite number"),
                           ({"base_jump_angle": math.nan}, "base_jump_angle must be a positive finite")):
        with pytest.raises(ValueError, match=reason):
            LeggedSettings(**{"feet": FEET, "posture": POSTURE, **kwargs})


def test_reconfigure_applies_locomotion_parameters_live_and_refuses_what_cannot_change(logger) -> None:
    loop = Loop(logger)
    loop.step(with_base=True)
    controller = loop.controller
    core = controller.controller
    controller.reconfigure(LeggedSettings(feet=FEET, posture=POSTURE, locomotion_mode="trot"),
                           LocomotionParameters(period=0.6, swing_frequency=4.0))
    assert controller.controller is core and core.params.period == 0.6 and core.params.swing_frequency == 4.0
    assert controller.params.period == 0.6 and controller.settings.locomotion_mode == "trot"
    loop.step(with_base=True)
    moved = tuple(x + 0.1 for x in POSTURE)
    for settings, params, reason in (
            (LeggedSettings(feet=FEET[:3], posture=POSTURE), controller.params, "feet and posture apply"),
            (LeggedSettings(feet=FEET, posture=moved), controller.params, "feet and posture apply"),
            (controller.settings, LocomotionParameters(period=0.6, swing_frequency=4.0, solver="osqp"),
             "solver cannot change live")):
        with pytest.raises(ValueError, match=reason):
            controller.reconfigure(settings, params)
    assert core.params.solver == "daqp" and controller.params.solver == "daqp"


def test_footholds_are_published_at_their_rate_and_the_feet_land_on_them(logger) -> None:
    """Trotting in place on kinodyn.sim: every 1 / footholds_rate s a PoseArray in the odometry's frame with
    the swinging feet's planned footholds (none while standing); each foot lands (its sphere's centre when the
    schedule puts it down again, from kinodyn's forward kinematics of the simulated state) within 2 cm
    horizontally of the last foothold published for it."""
    loop = Loop(logger, LeggedSettings(feet=FEET, posture=POSTURE, locomotion_mode="trot"))
    landed: list[float] = []
    last: dict[str, np.ndarray] = {}
    for _ in range(900):  # 1.8 s: stand-up, then trotting
        loop.step(with_base=True)
        answer = loop.answers[-1]
        stance = dict(zip(answer.contacts.names, answer.contacts.in_contact, strict=True)) \
            if answer.contacts is not None else {}
        if answer.footholds is not None:
            assert answer.footholds.header.frame_id == "odom"
            assert answer.footholds.header.stamp == answer.command.header.stamp
            swinging = [f for f in FEET if not stance.get(f, True)]
            assert len(answer.footholds.poses) == len(swinging)
            for foot, pose in zip(swinging, answer.footholds.poses, strict=True):
                last[foot] = np.array([pose.position.x, pose.position.y])
        for foot in [f for f in last if stance.get(f, False)]:  # back in stance: where did it land?
            p = frame_placement(loop.model, loop.sim.q, foot)[:2, 3]
            landed.append(float(np.linalg.norm(p - last.pop(foot))))
    published = [a for a in loop.answers if a.footholds is not None]
    assert len(published) == 900 // 10  # 50 Hz of 500 Hz ticks
    assert not published[0].footholds.poses  # standing up: nothing planned
    assert len(landed) >= 4 and max(landed) < 0.02, landed
