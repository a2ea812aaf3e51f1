"""The wbc node's legged mode without DDS: WbcCore driven with messages built from kinodyn.sim (the quadruped,
RK4, soft contact, 2 ms per tick as in lockstep): hold while no base state, the handover to the QP, the
contact schedule ahead of the joint states, damping on a failed QP, the cmd_vel timeout."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import pytest
from geometry_msgs.msg import TwistStamped
from kinodyn.control.locomotion import LocomotionParameters
from kinodyn.control.pd_stability import sampled_pd_gains
from kinodyn.control.wbc import Relaxation
from kinodyn.kinematics.forward import frame_placement
from kinodyn_common.conversions import InputError
from kinodyn_common.input_bounds import JointBounds
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.stamps import NS, split_ns, stamp_to_ns
from kinodyn_control.wbc.core import WbcCore, WbcParameters
from kinodyn_control.wbc.legged import LeggedController, LeggedSettings
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

import kinodyn as kd
from kinodyn import sim

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn.control.locomotion.controller import LocomotionOutput
    from numpy.typing import ArrayLike

    from conftest import RecordingLogger

StampedT = TypeVar("StampedT", JointState, Odometry, TwistStamped)

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / "urdf" / "quadruped_sim.urdf"
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
POSTURE = (0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2)
STANDING_HEIGHT = 0.5252  # urdf/README.md: the base with the foot spheres on the ground
DT_NS = 2_000_000


def stamped(msg: StampedT, stamp_ns: int) -> StampedT:
    msg.header.stamp.sec, msg.header.stamp.nanosec = split_ns(stamp_ns)
    return msg


def odometry(stamp_ns: int, q: np.ndarray, v: np.ndarray) -> Odometry:
    """The base state of the floating-base state ``(q, v)`` as nav_msgs/Odometry (odom = world)."""
    odom = stamped(Odometry(), stamp_ns)
    odom.header.frame_id, odom.child_frame_id = "odom", "base_link"
    p, o = odom.pose.pose.position, odom.pose.pose.orientation
    p.x, p.y, p.z = (float(x) for x in q[:3])
    o.x, o.y, o.z, o.w = (float(x) for x in q[3:7])
    t = odom.twist.twist
    t.linear.x, t.linear.y, t.linear.z = (float(x) for x in v[:3])
    t.angular.x, t.angular.y, t.angular.z = (float(x) for x in v[3:6])
    return odom


def derived_hold_gains(model: kd.Model, posture: tuple[float, ...] = POSTURE,
                       period: float = 0.002) -> tuple[np.ndarray, np.ndarray]:
    """``sampled_pd_gains`` at the posture for a PD sampled every ``period`` s, half the stability limit."""
    q = model.neutral()
    q[7:] = posture
    return sampled_pd_gains(model, q, period, 0.5)


class Loop:
    """The simulator answering each command, as control_node in lockstep does."""

    def __init__(self, logger: RecordingLogger, settings: LeggedSettings | None = None) -> None:
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
            assert self.core.on_base_state(odometry(stamp, s.q, s.v)) == []
        (answer,) = self.core.on_joint_state(self.joint_state(stamp), 0)
        self.answers.append(answer)
        c = answer.command
        assert stamp_to_ns(c.header.stamp) == stamp
        tau = np.array(c.effort) + np.array(c.kp) * (np.array(c.position) - s.q[7:]) + \
            np.array(c.kd) * (np.array(c.velocity) - s.v[6:])
        tau = np.clip(tau, -self.model.effort_limit[6:], self.model.effort_limit[6:])
        s.step(tau)
        self.k += 1
        return tau

    def joint_state(self, stamp_ns: int) -> JointState:
        return stamped(JointState(name=list(self.model.joint_names), position=self.sim.q[7:].tolist(),
                                  velocity=self.sim.v[6:].tolist()), stamp_ns)


def test_holds_without_a_base_state_then_hands_over_to_the_qp_and_stands(logger: RecordingLogger) -> None:
    loop = Loop(logger)
    for _ in range(100):  # 0.2 s: the estimator initialising
        loop.step(with_base=False)
    hold = loop.answers[-1].command
    hold_kp, hold_kd = derived_hold_gains(loop.model)  # the default hold: from the robot and the tick
    np.testing.assert_allclose(hold.kp, hold_kp, rtol=1e-12)
    np.testing.assert_allclose(hold.kd, hold_kd, rtol=1e-12)
    assert list(hold.position) == list(POSTURE)
    assert not any(hold.effort)
    assert "holding the posture" in logger.lines[0][1]
    assert len(logger.lines) == 1
    torques = [loop.step(with_base=True) for _ in range(750)]  # 1.5 s: handover, stand-up
    assert "base state on odometry/filtered back at t = 0.200000 s; controlling" in loop.infos
    # handover: the first controlled command is 1/50 of the QP's torque and 49/50 of the hold's stiffness
    first = loop.answers[100].command
    assert first.kp[0] == pytest.approx(hold_kp[0] * 49 / 50)
    assert first.kd[0] == pytest.approx(hold_kd[0] * 49 / 50)
    assert all(k == 0.0 for k in loop.answers[160].command.kp)  # after 0.1 s: pure torque (joint_kp 0)
    assert np.abs(torques).max() < 40.0  # no spike (80 N m without the handover)
    assert abs(loop.sim.q[2] - STANDING_HEIGHT) < 0.01
    assert np.abs(loop.sim.v[:3]).max() < 0.01
    # nothing else went wrong; DAQP reports 'numerical_error' on one tick 10 ms into the handover (the core
    # QP's, reported to its owner): that tick is damped, and the stand above holds anyway
    assert all("QP failed" in line for _, line in logger.lines[1:]), logger.lines


def test_without_the_handover_the_switch_from_the_hold_saturates_a_knee(logger: RecordingLogger) -> None:
    """What handover_time prevents (the same run with it 0)."""
    loop = Loop(logger, LeggedSettings(feet=FEET, posture=POSTURE, handover_time=0.0))
    for _ in range(100):
        loop.step(with_base=False)
    torques = [loop.step(with_base=True) for _ in range(10)]
    assert np.abs(torques).max() > 60.0


def test_contact_schedule_is_stamped_ahead_and_lists_the_feet_in_stance(logger: RecordingLogger) -> None:
    loop = Loop(logger)
    for _ in range(3):
        loop.step(with_base=True)
    for k, answer in enumerate(loop.answers):
        schedule = answer.contacts
        stamp = stamp_to_ns(schedule.header.stamp)
        assert stamp == k * DT_NS + 2_000_000  # contact_schedule_lead
        assert list(schedule.names) == list(FEET)
        assert all(schedule.in_contact)


def test_a_failed_qp_sends_damping_with_one_error_line(logger: RecordingLogger,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    loop = Loop(logger)
    loop.step(with_base=True)
    real = loop.controller.controller.update

    def failing(q: ArrayLike, v: ArrayLike, t: float, command: ArrayLike) -> LocomotionOutput:
        out = real(q, v, t, command)
        return type(out)(False, "infeasible", "no solution", out.mode, None, None, None, out.stance,
                         out.footholds, out.task_errors, out.command, out.solve_time)

    monkeypatch.setattr(loop.controller.controller, "update", failing)
    for _ in range(3):
        tau = loop.step(with_base=True)
        c = loop.answers[-1].command
        assert not any(c.kp)
        assert all(k == 2.0 for k in c.kd)
        assert not any(c.effort)
        assert np.all(np.isfinite(tau))
    errors = [line for level, line in logger.lines if level == "error"]
    assert len(errors) == 1
    assert "QP failed at t = 0.002000 s (infeasible: no solution); sending damping" in \
        errors[0]


def test_cmd_vel_reaches_the_controller_until_it_times_out(logger: RecordingLogger,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
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
                           ({"hold_stability": 1.0}, "hold_stability must be in"),
                           ({"hold_stability": 0.0}, "hold_stability must be in"),
                           ({"cmd_vel_timeout": 0.0}, "cmd_vel_timeout must be a positive finite number"),
                           ({"base_jump_angle": math.nan}, "base_jump_angle must be a positive finite")):
        with pytest.raises(ValueError, match=reason):
            LeggedSettings(**{"feet": FEET, "posture": POSTURE, **kwargs})


def test_reconfigure_applies_locomotion_parameters_live_and_refuses_what_cannot_change(
    logger: RecordingLogger,
) -> None:
    loop = Loop(logger)
    loop.step(with_base=True)
    controller = loop.controller
    core = controller.controller
    controller.reconfigure(LeggedSettings(feet=FEET, posture=POSTURE, locomotion_mode="trot"),
                           LocomotionParameters(period=0.6, swing_frequency=4.0))
    assert controller.controller is core
    assert core.params.period == 0.6
    assert core.params.swing_frequency == 4.0
    assert controller.params.period == 0.6
    assert controller.settings.locomotion_mode == "trot"
    loop.step(with_base=True)
    moved = tuple(x + 0.1 for x in POSTURE)
    for settings, params, reason in (
            (LeggedSettings(feet=FEET[:3], posture=POSTURE), controller.params, "feet and posture apply"),
            (LeggedSettings(feet=FEET, posture=moved), controller.params, "feet and posture apply"),
            (controller.settings, LocomotionParameters(period=0.6, swing_frequency=4.0, solver="osqp"),
             "solver cannot change live")):
        with pytest.raises(ValueError, match=reason):
            controller.reconfigure(settings, params)
    assert core.params.solver == "daqp"
    assert controller.params.solver == "daqp"
    with pytest.raises(ValueError, match="cannot pace"):  # its pairs stand beside the CoM: nothing changed
        controller.reconfigure(LeggedSettings(feet=FEET, posture=POSTURE, locomotion_mode="pace"),
                               LocomotionParameters(period=0.7))
    assert core.params.period == 0.6
    assert controller.params.period == 0.6
    assert core.period == 0.6
    assert controller.settings.locomotion_mode == "trot"


def test_reconfigure_applies_the_qp_relaxation_live(logger: RecordingLogger) -> None:
    """The parameters relaxation, relaxation_weight and relaxation_bound reach the whole-body QP."""
    loop = Loop(logger)
    loop.step(with_base=True)
    controller = loop.controller
    assert controller.controller.wbc.relaxation == Relaxation()
    controller.reconfigure(controller.settings, LocomotionParameters(relaxation=False))
    assert controller.controller.wbc.relaxation == Relaxation(enabled=False)
    controller.reconfigure(controller.settings,
                           LocomotionParameters(relaxation_weight=1e4, relaxation_bound=2.0))
    assert controller.controller.wbc.relaxation == Relaxation(True, 1e4, 2.0)
    loop.step(with_base=True)
    assert any(loop.answers[-1].command.effort)  # the QP's torque (a failed tick sends damping, no effort)


def test_footholds_are_published_at_their_rate_and_the_feet_land_on_them(logger: RecordingLogger) -> None:
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
    assert len(landed) >= 4, landed
    assert max(landed) < 0.02, landed


# ----- stamps are claims, base states are gated ---------------------------------------------------------


def recorded_commands(loop: Loop, monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """The velocity command the locomotion controller gets at each tick."""
    seen: list[np.ndarray] = []
    real = loop.controller.controller.update
    monkeypatch.setattr(loop.controller.controller, "update",
                        lambda q, v, t, command: (seen.append(np.array(command)), real(q, v, t, command))[1])
    return seen


def twist(stamp_ns: int, vx: float = 0.3) -> TwistStamped:
    cmd = stamped(TwistStamped(), stamp_ns)
    cmd.twist.linear.x = vx
    return cmd


def test_a_joint_state_stamped_ahead_is_refused_with_one_line_and_not_answered(
    logger: RecordingLogger,
) -> None:
    """A joint state stamped 10 s ahead of the node's clock is refused (one line naming topic, stamp and
    clock, however often it comes) and not answered: no command stamped +10 s, and the controller's time
    does not jump there (it did: every later joint state was then 'time went backwards', damped)."""
    loop = Loop(logger)
    for _ in range(50):
        loop.step(with_base=True)
    handler = dropping_bad_messages(loop.core.problems, "joint_states message", loop.core.on_joint_state)
    for _ in range(3):
        handler(loop.joint_state(loop.k * DT_NS + 10 * NS), 0)  # refused: no answer
    assert len(loop.answers) == 50
    warnings = [line for level, line in logger.lines if level == "warning" and "ahead" in line]
    assert warnings == ["ignoring joint_states message: joint_states stamped t = 10.100000 s is 10.000000 s "
                        "ahead of this node's clock (t = 0.100000 s; max_stamp_lead = 0.1 s): refused, not "
                        "answered; check the publisher's clock (in simulation every node runs with "
                        "use_sim_time)"]
    for _ in range(100):
        loop.step(with_base=True)
    assert not [line for level, line in logger.lines if level == "error"]  # no damping, no controller error
    assert all(any(a.command.effort) and not any(a.command.kp) for a in loop.answers[-50:])  # the QP's
    assert abs(loop.sim.q[2] - STANDING_HEIGHT) < 0.01


def test_a_cmd_vel_stamped_ahead_counts_from_its_receipt_or_is_refused(
    logger: RecordingLogger, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cmd_vel stamped 0.08 s ahead (within max_stamp_lead) counts for cmd_vel_timeout from when it
    arrived, not from its stamp (with the stamp it kept the robot walking after the teleop went silent); one
    stamped 10 s ahead is refused with one line and the command in force stays."""
    loop = Loop(logger, LeggedSettings(feet=FEET, posture=POSTURE, cmd_vel_timeout=0.01))
    seen = recorded_commands(loop, monkeypatch)
    for _ in range(5):
        loop.step(with_base=True)
    loop.core.on_cmd_vel(twist(loop.k * DT_NS + 80_000_000), now_ns=loop.k * DT_NS)  # received at 0.010 s
    with pytest.raises(InputError, match=r"cmd_vel stamped t = 10\.010000 s is 10\.000000 s ahead of this "
                                         r"node's clock \(t = 0\.010000 s; max_stamp_lead = 0\.1 s\): "
                                         "refused, the previous command stays in force"):
        loop.core.on_cmd_vel(twist(loop.k * DT_NS + 10 * NS, vx=0.5), now_ns=loop.k * DT_NS)
    for _ in range(8):
        loop.step(with_base=True)
    np.testing.assert_array_equal(seen[10], [0.3, 0.0, 0.0])  # t = 0.020 s: within 0.01 s of its receipt
    np.testing.assert_array_equal(seen[11], [0.0, 0.0, 0.0])  # t = 0.022 s: timed out (its stamp: 0.1 s)


def test_a_cmd_vel_from_a_clock_behind_is_refused_with_one_line_or_taken_by_receipt(
    logger: RecordingLogger, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cmd_vel stamped 1 s behind the node's clock (older than cmd_vel_timeout = 0.5 s) is stale: refused
    with one line naming topic, stamp and clock (it was ignored without a word); one 0.2 s behind is taken
    and counts from its receipt."""
    loop = Loop(logger)
    loop.k = 750  # the run starts at t = 1.5 s
    seen = recorded_commands(loop, monkeypatch)
    now = loop.k * DT_NS
    with pytest.raises(InputError, match=r"cmd_vel stamped t = 0\.500000 s is 1\.000000 s behind this node's "
                                         r"clock \(t = 1\.500000 s\), older than cmd_vel_timeout = 0\.5 s: "
                                         "stale, refused"):
        loop.core.on_cmd_vel(twist(now - NS), now_ns=now)
    loop.step(with_base=True)
    np.testing.assert_array_equal(seen[-1], [0.0, 0.0, 0.0])
    loop.core.on_cmd_vel(twist(now - 200_000_000, vx=0.2), now_ns=now)
    for _ in range(250):  # up to 0.5 s after its receipt
        loop.step(with_base=True)
    np.testing.assert_array_equal(seen[-1], [0.2, 0.0, 0.0])
    loop.step(with_base=True)
    np.testing.assert_array_equal(seen[-1], [0.0, 0.0, 0.0])


def disagreeing(q: np.ndarray, offset: np.ndarray, yaw: float) -> np.ndarray:
    """``q`` moved by ``offset`` and turned by ``yaw`` about z (a second odometry publisher's view)."""
    out = q.copy()
    out[:3] += offset
    s, c = math.sin(yaw / 2), math.cos(yaw / 2)  # the turn (0, 0, s, c) times q, quaternions (x, y, z, w)
    x, y, z, w = q[3:7]
    out[3:7] = [c * x - s * y, c * y + s * x, c * z + s * w, c * w - s * z]
    return out


@pytest.mark.parametrize(("offset", "yaw", "cause"), [
    (np.array([10.0, 0.0, 0.0]), 0.0, r"position 10 m from the last accepted base state \(allowed 0\.06 m"),
    (np.zeros(3), math.pi / 2, r"orientation 90 deg from the last accepted base state \(allowed 6\.88 deg"),
], ids=["10m", "90deg"])
def test_a_base_state_jump_is_refused_and_changes_nothing(logger: RecordingLogger, offset: np.ndarray,
                                                          yaw: float, cause: str) -> None:
    """A second odometry publisher disagreeing by 10 m (or 90 deg) for 0.5 s, each of its messages just
    before the estimator's of the same stamp: every one refused (one line), and the commands are those of
    the same run without it, bit for bit."""
    reference, loop = Loop(logger), Loop(logger)
    handler = dropping_bad_messages(loop.core.problems, "odometry/filtered message", loop.core.on_base_state)
    for k in range(400):
        if 100 <= k < 350:
            q = disagreeing(loop.sim.q, offset, yaw)
            with pytest.raises(InputError, match=cause):
                loop.core.on_base_state(odometry(k * DT_NS, q, loop.sim.v))
            handler(odometry(k * DT_NS, q, loop.sim.v))
        reference.step(with_base=True)
        loop.step(with_base=True)
    for a, b in zip(reference.answers, loop.answers, strict=True):
        assert list(a.command.effort) == list(b.command.effort)
        assert list(a.command.kp) == list(b.command.kp)
    lines = [line for level, line in logger.lines if "refused" in line]  # one, then one per 10 s of wall time
    assert lines[0].startswith("ignoring odometry/filtered message: base state at t = 0.200000 s refused: ")
    assert all(line.endswith("more since the last report)") for line in lines[1:])


def test_a_base_state_jump_alone_holds_the_posture_then_control_resumes(logger: RecordingLogger) -> None:
    """The estimator silent for 0.5 s while only the disagreeing publisher (90 deg off) speaks: its states
    are refused, the node controls on the last accepted one for base_state_max_age and then holds the
    standing posture (joint PD, every foot down); the estimator back, control resumes (handover) and the
    robot stands, upright."""
    loop = Loop(logger)
    for _ in range(200):
        loop.step(with_base=True)
    for k in range(200, 450):
        with pytest.raises(InputError, match="orientation 90 deg"):
            loop.core.on_base_state(odometry(k * DT_NS, disagreeing(loop.sim.q, np.zeros(3), math.pi / 2),
                                             loop.sim.v))
        loop.step(with_base=False)
    held = [a.command for a in loop.answers[200:450]]
    assert all(not any(c.kp) for c in held[:25])  # within base_state_max_age (0.05 s): controlling
    hold_kp, _ = derived_hold_gains(loop.model)
    assert all(list(c.kp) == hold_kp.tolist() for c in held[26:])
    assert all(list(c.position) == list(POSTURE) for c in held[26:])
    assert all(all(a.contacts.in_contact) for a in loop.answers[226:450])  # the schedule: every foot down
    for _ in range(500):
        loop.step(with_base=True)
    assert all(not any(a.command.kp) for a in loop.answers[-100:])  # the QP's again
    assert abs(loop.sim.q[2] - STANDING_HEIGHT) < 0.01
    roll_pitch = 2.0 * math.asin(min(1.0, math.hypot(loop.sim.q[3], loop.sim.q[4])))
    assert roll_pitch < 0.05


def test_the_array_entry_point_answers_as_the_message_one(logger: RecordingLogger) -> None:
    """The base and joint states as arrays (the in-process controller's way) give the commands, schedules and
    footholds the Odometry and JointState give, bit for bit, through the hold, the handover and the QP."""
    by_message, by_arrays = Loop(logger), Loop(logger)
    for k in range(300):
        by_message.step(with_base=True)
        s = by_arrays.sim
        assert by_arrays.core.on_base_state_arrays(k * DT_NS, "odom", "base_link", s.q[:7], s.v[:6]) == []
        (answer,) = by_arrays.core.on_joint_state_arrays(k * DT_NS, s.q[7:], s.v[6:], 0)
        by_arrays.answers.append(answer)
        c = answer.command
        tau = np.array(c.effort) + np.array(c.kp) * (np.array(c.position) - s.q[7:]) + \
            np.array(c.kd) * (np.array(c.velocity) - s.v[6:])
        s.step(np.clip(tau, -by_arrays.model.effort_limit[6:], by_arrays.model.effort_limit[6:]))
        by_arrays.k += 1
    assert by_arrays.core.controlled_ticks > 200
    for a, b in zip(by_message.answers, by_arrays.answers, strict=True):
        assert (a.command, a.contacts, a.footholds) == (b.command, b.contacts, b.footholds)


@pytest.mark.parametrize(("q", "v", "cause"), [
    ([math.nan, *POSTURE[1:]], [0.0] * 12, "non-finite position for LF_HAA"),
    (POSTURE, [0.0] * 11 + [math.inf], "non-finite velocity for RH_KFE"),
    ((4.0, *POSTURE[1:]), [0.0] * 12, "LF_HAA = 4 not in"),
    (POSTURE[:11], [0.0] * 11, "11 positions and 11 velocities for 12 joints"),
])
def test_an_unusable_joint_state_as_arrays_is_answered_with_damping(logger: RecordingLogger,
                                                                    q: Sequence[float],
                                                                    v: Sequence[float], cause: str) -> None:
    loop = Loop(logger)
    (answer,) = loop.core.on_joint_state_arrays(0, np.array(q), np.array(v), 0)
    assert not any(answer.command.kp)
    assert list(answer.command.kd) == [2.0] * 12
    assert [line for level, line in logger.lines if cause in line]


@pytest.mark.parametrize(("frame", "child", "pose", "twist", "cause"), [
    ("", "base_link", [0, 0, 0.5, 0, 0, 0, 1], [0] * 6, "empty header.frame_id"),
    ("odom", "imu_link", [0, 0, 0.5, 0, 0, 0, 1], [0] * 6, "child_frame_id 'imu_link' is not the URDF root"),
    ("odom", "", [0, 0, math.nan, 0, 0, 0, 1], [0] * 6, "pose .* is not finite"),
    ("odom", "", [2e9, 0, 0.5, 0, 0, 0, 1], [0] * 6, "exceeds 1e\\+09 m"),
    ("odom", "", [0, 0, 0.5, 0, 0, 0, 0.5], [0] * 6, "not a unit quaternion"),
    ("odom", "", [0, 0, 0.5, 0, 0, 0, 1], [0, 0, 0, math.inf, 0, 0], "twist is not finite"),
    ("odom", "", [0, 0, 0.5, 0, 0, 1], [0] * 6, "7 and 6 needed"),
])
def test_an_unusable_base_state_is_refused_by_both_entry_points(
    logger: RecordingLogger, frame: str, child: str, pose: list[float], twist: list[float], cause: str,
) -> None:
    loop = Loop(logger)
    with pytest.raises(InputError, match=cause):
        loop.core.on_base_state_arrays(0, frame, child, np.array(pose, float), np.array(twist, float))
    if len(pose) == 7:
        msg = odometry(0, np.array(pose, float), np.array(twist, float))
        msg.header.frame_id, msg.child_frame_id = frame, child
        with pytest.raises(InputError, match=cause):
            loop.core.on_base_state(msg)
    loop.step(with_base=False)
    assert loop.core.controlled_ticks == 0  # nothing was taken: held


# ----- the MPC planner ----------------------------------------------------------------------------------


def test_with_the_mpc_each_plan_is_published_once_as_a_path_and_reported(logger: RecordingLogger) -> None:
    """planner mpc, trotting on kinodyn.sim: one nav_msgs/Path per solve (mpc_rate 50 Hz: every 10 ticks once
    the robot stands), in the odometry's frame, stamped from the plan's state; its first pose is the base
    pose of the joint state that started the solve (two ticks before it is published: the solve's three
    parts), later ones one MPC step apart. With each path, the plan's forces at its start as arrows (one
    marker per foot: from the contact point along the force, the nominal base height per weight; deleted
    in swing). The diagnostics carry the planner's state; a live mpc_rate of 100 Hz publishes every 5
    ticks."""
    settings = LeggedSettings(feet=FEET, posture=POSTURE, locomotion_mode="trot", planner="mpc")
    loop = Loop(logger, settings)
    bases, plans = [], {}
    for k in range(400):  # 0.8 s
        bases.append(loop.sim.q[:3].copy())
        loop.step(with_base=True)
        assert (loop.answers[k].mpc_forces is None) == (loop.answers[k].mpc_path is None)
        if loop.answers[k].mpc_forces is not None:
            plans[k] = loop.controller.mpc.planner.plan  # the plan just published
    mpc, height = loop.controller.mpc, loop.controller.controller.nominal_height
    lifts = []
    for k, plan in plans.items():
        markers = loop.answers[k].mpc_forces.markers
        assert [m.id for m in markers] == list(range(len(FEET)))
        assert {m.ns for m in markers} == {"mpc_forces"}
        stance, contacts, forces = plan.inputs[2][0], plan.inputs[3][0], plan.solution.forces[0]
        assert stance.any()
        assert [m.action for m in markers] == [0 if s else 2 for s in stance]  # ADD, DELETE
        lift = 0.0
        for marker, down, contact, force in zip(markers, stance, contacts, forces, strict=True):
            assert marker.header.frame_id == "odom"
            assert marker.header.stamp == loop.answers[k].mpc_path.header.stamp
            if down:
                start, end = ([p.x, p.y, p.z] for p in marker.points)
                np.testing.assert_allclose(start, contact, atol=1e-12)
                np.testing.assert_allclose(np.subtract(end, start), height * force / mpc.mpc.body.weight,
                                           atol=1e-12)
                assert abs(start[2] - 0.03) < 0.02  # a foot sphere's centre on the ground
                lift += (end[2] - start[2]) / height
        lifts.append(lift)
    # trotting in place after the stand-up (the first 0.2 s), the plans' normal forces carry the weight
    assert abs(np.mean(lifts[10:]) - 1.0) < 0.1
    assert min(lifts[10:]) > 0.5  # measured 1.04, 0.87
    paths = [(k, a.mpc_path) for k, a in enumerate(loop.answers) if a.mpc_path is not None]
    assert len(paths) >= 35
    assert np.all(np.diff([k for k, _ in paths[1:]]) == 10)
    dt = loop.controller.mpc.mpc.params.dt
    for k, path in paths:
        t0 = path.header.stamp.sec + 1e-9 * path.header.stamp.nanosec
        assert t0 == pytest.approx((k - 2) * DT_NS / NS, abs=1e-9)
        assert path.header.frame_id == "odom"
        assert len(path.poses) == loop.controller.mpc.mpc.params.horizon + 1
        stamps = [p.header.stamp.sec + 1e-9 * p.header.stamp.nanosec for p in path.poses]
        np.testing.assert_allclose(np.diff(stamps), dt, atol=1e-8)
        first = path.poses[0].pose.position
        np.testing.assert_allclose([first.x, first.y, first.z], bases[k - 2], atol=1e-9)
        last = path.poses[-1].pose.position
        assert abs(last.z - STANDING_HEIGHT) < 0.05  # at the standing height over the horizon
    values = {kv.key: kv.value for a in loop.answers if a.diagnostics is not None
              for kv in a.diagnostics.status[0].values}
    assert values["mpc_state"] == "tracking"
    assert values["mpc_failures"] == "0"
    assert values["mpc_late"] == "0"
    loop.controller.reconfigure(replace(settings, mpc_rate=100.0), loop.controller.params)
    start = len(loop.answers)
    for _ in range(50):
        loop.step(with_base=True)
    ticks = [k for k, a in enumerate(loop.answers[start:]) if a.mpc_path is not None]
    assert len(ticks) >= 9
    assert np.all(np.diff(ticks) == 5)


def test_mpc_settings_are_checked_and_the_planner_is_start_up_only(logger: RecordingLogger) -> None:
    for kwargs, reason in (({"planner": "ilqr"}, "planner must be one of none, mpc"),
                           ({"mpc_rate": 0.0}, "mpc_rate and mpc_max_age: .*rate"),
                           ({"mpc_max_age": 0.01}, "mpc_rate and mpc_max_age: .*max_age")):
        with pytest.raises(ValueError, match=reason):
            LeggedSettings(**{"feet": FEET, "posture": POSTURE, **kwargs})
    settings = LeggedSettings(feet=FEET, posture=POSTURE, planner="mpc")
    loop = Loop(logger, settings)
    loop.step(with_base=True)
    controller = loop.controller
    for changes, reason in (({"planner": "none"}, "planner applies at start-up only"),
                            ({"mpc_max_age": 0.5}, "shorter than the MPC's horizon")):
        with pytest.raises(ValueError, match=reason):
            controller.reconfigure(replace(settings, **changes), controller.params)
    assert controller.mpc.planner.params.max_age == 0.06
    assert controller.settings == settings
    with pytest.raises(ValueError, match="solver cannot change live"):  # nothing changed, the rate included
        controller.reconfigure(replace(settings, mpc_rate=80.0), replace(controller.params, solver="osqp"))
    assert controller.mpc.planner.params.rate == 50.0
    controller.reconfigure(replace(settings, locomotion_mode="pace"), controller.params)  # the MPC: allowed
    assert controller.settings.locomotion_mode == "pace"
    assert Loop(logger).controller.mpc is None  # planner none: the controller alone


def test_hold_gains_as_set_or_derived_per_joint_and_reconfigured() -> None:
    """hold_kp / hold_kd > 0: those, every joint; 0: derived, each independently, following hold_stability
    and pd_horizon live."""
    model = kd.Model.from_urdf(URDF, floating_base=True)
    given = LeggedController(model, LeggedSettings(feet=FEET, posture=POSTURE, hold_kp=800.0, hold_kd=10.0),
                             LocomotionParameters())
    command = given.hold()
    assert set(command.kp) == {800.0}
    assert set(command.kd) == {10.0}
    mixed = LeggedController(model, LeggedSettings(feet=FEET, posture=POSTURE, hold_kp=300.0),
                             LocomotionParameters())
    _, derived_kd = derived_hold_gains(model)
    assert set(mixed.hold().kp) == {300.0}
    np.testing.assert_allclose(mixed.hold().kd, derived_kd, rtol=1e-12)
    derived_kp, _ = derived_hold_gains(model)
    mixed.reconfigure(LeggedSettings(feet=FEET, posture=POSTURE, hold_stability=0.25),
                      LocomotionParameters(pd_horizon=0.004))
    np.testing.assert_allclose(mixed.hold().kp, derived_kp / 16, rtol=1e-12)  # omega / 4: kp / 16
    np.testing.assert_allclose(mixed.hold().kd, derived_kd / 4, rtol=1e-12)


A1 = REPO / "urdf" / "public" / "a1.urdf"
A1_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
A1_STANCE = (0.0, 0.67, -1.3) * 4


def a1_hold_speeds(model: kd.Model, kp: np.ndarray, kd_: np.ndarray) -> tuple[list[float], float, float]:
    """The A1 on its feet in kinodyn.sim (RK4, 1 ms), its joints 0.05 rad off the posture, 2 s under a hold
    PD evaluated every 2 ms and held (as JointPDController applies it, within the effort limits): the largest
    joint speed of each tick, the final posture error [rad] and base height over the nominal one."""
    spheres = sim.collision_spheres(A1)
    simulator = sim.Simulator(model, dt=1e-3, integrator="rk4", contact=sim.ContactModel(spheres))
    q0 = model.neutral()
    q0[7:] = A1_STANCE
    placements = {s: model.frame_placement(q0, s.link) for s in spheres if s.link in A1_FEET}
    q0[2] = -min(float(X[2, :3] @ np.asarray(s.center) + X[2, 3]) - s.radius for s, X in placements.items())
    start = q0.copy()
    start[7:] += 0.05
    simulator.reset(start)
    speeds = []
    for _ in range(1000):
        tau = np.zeros(model.nv)
        tau[6:] = kp * (q0[7:] - simulator.q[7:]) - kd_ * simulator.v[6:]
        tau[6:] = np.clip(tau[6:], -model.effort_limit[6:], model.effort_limit[6:])
        for _ in range(2):
            simulator.step(tau)
        speeds.append(float(np.abs(simulator.v[6:]).max()))
    return speeds, float(np.abs(q0[7:] - simulator.q[7:]).max()), float(simulator.q[2] / q0[2])


def test_a1_stands_on_the_default_hold_gains_and_chatters_on_absolute_ones() -> None:
    """The A1 (13.7 kg) held by the default (derived) gains comes to rest standing, its posture within
    0.25 rad (no gravity feed-forward: the light calf sags); with the absolute 800 / 10 N m/rad, N m s/rad
    (stable on the 36 kg quadruped) its joints chatter at several rad/s."""
    model = kd.Model.from_urdf(A1, floating_base=True)
    command = LeggedController(model, LeggedSettings(feet=A1_FEET, posture=A1_STANCE),
                               LocomotionParameters()).hold()
    speeds, error, height = a1_hold_speeds(model, command.kp, command.kd)
    assert max(speeds[-100:]) < 0.1  # at rest over the last 0.2 s
    assert error < 0.25
    assert height > 0.9
    n = model.nv - 6
    speeds, _, _ = a1_hold_speeds(model, np.full(n, 800.0), np.full(n, 10.0))
    assert float(np.mean(speeds[-100:])) > 5.0  # a sustained oscillation, not a transient
