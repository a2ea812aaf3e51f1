"""The wbc node's logic without DDS (kinodyn_control.wbc): the command's checks, the base-state pairing, the
arm's
operational space control (against the model's dynamics, and in closed loop with kinodyn.sim checked with
Pinocchio), WbcCore answering each joint state, and the node's live parameters (in-process rclpy node)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
import pytest
import rclpy
from geometry_msgs.msg import PoseStamped
from kinodyn.control import Evaluator, pose_error
from kinodyn_common.conversions import InputError, matrix_to_pose
from kinodyn_common.input_bounds import JointBounds
from kinodyn_common.problem_log import DistinctProblemLog
from kinodyn_common.stamps import NS
from kinodyn_control.testing import in_process_node
from kinodyn_control.wbc.arm import ArmController, ArmParameters
from kinodyn_control.wbc.base_sync import BaseStateSync
from kinodyn_control.wbc.command import CommandLimits, JointCommand, TickResult
from kinodyn_control.wbc.core import WbcCore, WbcParameters
from kinodyn_ros.nodes.wbc import Wbc
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

import kinodyn as kd

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from conftest import RecordingLogger

# The private reads marked SLF001 are the node's state under test (its callbacks driven directly).
REPO = Path(__file__).resolve().parents[3]
ARM7 = REPO / "urdf" / "arm7.urdf"
READY = np.array([0.0, -0.25, 0.0, -0.75, 0.0, 0.5, 0.25]) * math.pi  # urdf/README.md nominal


@pytest.fixture(scope="module")
def arm() -> kd.Model:
    return kd.Model.from_urdf(ARM7)


def joint_state(model: kd.Model, q: Iterable[float], v: Iterable[float], stamp_ns: int) -> JointState:
    msg = JointState(name=list(model.joint_names), position=[float(x) for x in q],
                     velocity=[float(x) for x in v])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, NS)
    return msg


def make_core(model: kd.Model, logger: RecordingLogger, params: ArmParameters | None = None) -> WbcCore:
    controller = ArmController(model, params or ArmParameters())
    info: list[str] = []
    return WbcCore(model, controller, WbcParameters(), JointBounds.from_model(model, 0.1, 1e6),
                   DistinctProblemLog(logger), info.append, clock=lambda: 0)


# ----- the command ------------------------------------------------------------------------------------------


def test_finalize_clips_to_the_urdf_limits_and_counts_saturated_joints(arm: kd.Model) -> None:
    limits = CommandLimits(arm)
    n = 7
    command = JointCommand(np.full(n, 10.0), np.full(n, -100.0), np.r_[200.0, np.zeros(6)], np.ones(n),
                           np.ones(n))
    final = limits.finalize(command, READY, 2.0)
    assert final.problem == ""
    assert final.saturated == 1
    np.testing.assert_array_equal(final.command.position, arm.upper_limit)
    np.testing.assert_array_equal(final.command.velocity, -arm.velocity_limit)
    assert final.command.effort[0] == arm.effort_limit[0]
    assert np.all(final.command.effort[1:] == 0.0)


@pytest.mark.parametrize("field", ["position", "velocity", "effort", "kp", "kd"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_non_finite_command_becomes_damping(arm: kd.Model, field: str, bad: float) -> None:
    limits = CommandLimits(arm)
    arrays = {f: np.zeros(7) for f in ("position", "velocity", "effort", "kp", "kd")}
    arrays[field][3] = bad
    final = limits.finalize(JointCommand(**arrays), READY, 2.5)
    assert f"non-finite {field} for joint4" == final.problem
    c = final.command
    assert np.all(c.kp == 0.0)
    assert np.all(c.kd == 2.5)
    assert np.all(c.effort == 0.0)
    assert np.all(c.velocity == 0.0)
    np.testing.assert_array_equal(c.position, READY)


def test_damping_position_is_within_the_limits_even_without_a_usable_state(arm: kd.Model) -> None:
    limits = CommandLimits(arm)
    q = np.r_[math.nan, 100.0, np.zeros(5)]
    position = limits.damping(q, 1.0).position
    assert position[0] == 0.0
    assert position[1] == arm.upper_limit[1]
    assert np.all(np.isfinite(limits.damping(None, 1.0).position))


@pytest.mark.parametrize(("kp", "problem"), [
    (np.ones(3), "kp has shape (3,), not (7,)"),  # one field shorter: no (5, 7) array
    (np.ones((7, 1)), "kp has shape (7, 1), not (7,)"),
    (np.array(["a"] * 7), "the fields are not numbers"),
])
def test_a_command_of_the_wrong_shape_becomes_damping(arm: kd.Model, kp: np.ndarray, problem: str) -> None:
    z = np.zeros(7)
    final = CommandLimits(arm).finalize(JointCommand(z, z, z, kp, z), READY, 1.0)
    assert final.problem == problem
    assert np.all(final.command.kp == 0.0)
    assert np.all(final.command.kd == 1.0)


def test_negative_gains_are_refused(arm: kd.Model) -> None:
    z = np.zeros(7)
    final = CommandLimits(arm).finalize(JointCommand(z, z, z, -np.ones(7), z), READY, 1.0)
    assert final.problem == "a negative kp or kd"
    assert np.all(final.command.kp == 0.0)


# ----- base-state pairing -----------------------------------------------------------------------------------


def test_sync_answers_at_once_until_the_base_stream_keeps_up_then_waits_for_the_matching_stamp() -> None:
    sync: BaseStateSync[str, str] = BaseStateSync(wait_ns=50_000_000)
    first = sync.joint_state(0, "j0", now_ns=0)  # no base state ever: no wait
    assert [(p.stamp_ns, p.base) for p in first] == [(0, None)]
    assert sync.base_state(0, "b0") == []  # nothing pending
    assert sync.joint_state(2, "j2", now_ns=10) == []  # the stream reached the last answer: wait for stamp 2
    assert sync.base_state(1, "b1") == []  # older than the pending joint state
    paired = sync.base_state(2, "b2")
    assert [(p.joints, p.base, p.base_stamp_ns, p.waited_out) for p in paired] == [("j2", "b2", 2, False)]


def test_sync_releases_after_the_wait_with_the_newest_base_state_and_then_stops_waiting() -> None:
    sync: BaseStateSync[str, str] = BaseStateSync(wait_ns=50)
    sync.joint_state(0, "j0", 0)
    sync.base_state(0, "b0")
    assert sync.joint_state(2, "j2", now_ns=100) == []
    assert sync.poll(now_ns=149) == []
    late = sync.poll(now_ns=150)
    assert [(p.joints, p.base_stamp_ns, p.waited_out) for p in late] == [("j2", 0, True)]
    assert sync.timeouts == 1
    # the stream fell behind (0 < 2): the next joint state is answered at once, with what there is
    assert [(p.joints, p.base) for p in sync.joint_state(4, "j4", 200)] == [("j4", "b0")]


def test_sync_uses_a_base_state_already_newer_and_flushes_a_pending_one_on_the_next_joint_state() -> None:
    sync: BaseStateSync[str, str] = BaseStateSync(wait_ns=NS)
    sync.base_state(5, "b5")
    assert [p.base for p in sync.joint_state(4, "j4", 0)] == ["b5"]
    assert sync.joint_state(6, "j6", 0) == []  # stream kept up with 4: waits for 6
    out = sync.joint_state(8, "j8", 1)  # 6 never got its base state: answered now; the stream is behind,
    # so 8 is answered at once too
    assert [(p.joints, p.base, p.waited_out) for p in out] == [("j6", "b5", True), ("j8", "b5", False)]


def test_sync_in_lockstep_waits_for_every_stamp_also_while_the_base_stream_is_behind() -> None:
    sync: BaseStateSync[str, str] = BaseStateSync(wait_ns=50, lockstep=True)
    assert [p.base for p in sync.joint_state(0, "j0", 0)] == [None]  # no base state ever: no wait
    assert [p.base for p in sync.joint_state(2, "j2", 0)] == [None]
    sync.base_state(0, "b0")  # the estimator's first estimate, behind the joint states answered
    assert sync.joint_state(4, "j4", now_ns=10) == []  # behind, yet it waits for stamp 4
    assert sync.joint_state(4, "j4 again", now_ns=30) == []  # a re-published copy of the one waiting
    assert sync.base_state(2, "b2") == []
    assert sync.poll(now_ns=59) == []  # the wait runs from the first copy's arrival
    paired = sync.base_state(4, "b4")
    assert [(p.joints, p.base, p.waited_out) for p in paired] == [("j4", "b4", False)]
    assert [(p.joints, p.base) for p in sync.joint_state(4, "j4 late copy", 70)] == [("j4 late copy", "b4")]
    # a stamp the estimator skips (an IMU spike held for the next sample): one expired wait, then the next
    # stamp waits again
    assert sync.joint_state(6, "j6", now_ns=100) == []
    late = sync.poll(now_ns=150)
    assert [(p.joints, p.base, p.waited_out) for p in late] == [("j6", "b4", True)]
    assert sync.joint_state(8, "j8", 200) == []
    assert [(p.joints, p.base, p.waited_out) for p in sync.base_state(8, "b8")] == [("j8", "b8", False)]
    assert sync.timeouts == 1
    # a silent estimator (stopped, or initialising again): two expired waits in a row, then no wait until a
    # base state arrives
    assert sync.joint_state(10, "j10", 300) == []
    assert [p.waited_out for p in sync.poll(350)] == [True]
    assert sync.joint_state(12, "j12", 400) == []
    assert [p.waited_out for p in sync.poll(450)] == [True]
    at_once = sync.joint_state(14, "j14", 500)
    assert [(p.joints, p.base, p.waited_out) for p in at_once] == [("j14", "b8", False)]
    sync.base_state(14, "b14")
    assert sync.joint_state(16, "j16", 600) == []
    assert sync.timeouts == 3


def test_sync_outside_lockstep_answers_a_copy_of_the_waiting_joint_state_once() -> None:
    sync: BaseStateSync[str, str] = BaseStateSync(wait_ns=50)
    sync.joint_state(0, "j0", 0)
    sync.base_state(0, "b0")
    assert sync.joint_state(2, "j2", now_ns=100) == []
    assert sync.joint_state(2, "j2 again", now_ns=120) == []
    assert [(p.joints, p.waited_out) for p in sync.poll(now_ns=150)] == [("j2", True)]


# ----- the arm's operational space control ------------------------------------------------------------------


def test_arm_task_acceleration_is_exact_on_the_model_and_the_posture_stays_in_the_null_space(
    arm: kd.Model,
) -> None:
    """J qdd + Jdot v equals the commanded wdot* with qdd from ABA (a second algorithm), and changing the
    posture changes tau but not the task acceleration."""
    rng = np.random.default_rng(3)
    q = READY + 0.2 * rng.standard_normal(7)
    v = 0.5 * rng.standard_normal(7)
    target = arm.frame_placement(READY, "ee_link").copy()
    target[:3, 3] += [0.05, -0.03, 0.04]
    ev = Evaluator(arm, ["ee_link"]).evaluate(q, v)
    results = []
    for posture in (tuple(READY), tuple(READY + 0.3)):
        controller = ArmController(arm, ArmParameters(posture=posture))
        controller.target = target
        command = controller.tick(q, v).command
        assert command is not None
        tau = command.effort
        qdd = arm.aba(q, v, tau)
        results.append((tau, ev.jacobian("ee_link") @ qdd + ev.bias_acceleration("ee_link")))
    p = ArmParameters()
    e = pose_error(target, ev.placement("ee_link"))
    wdot = np.repeat([p.position_kp, p.orientation_kp], 3) * e - np.repeat([p.position_kd, p.orientation_kd],
                                                                             3) * (ev.jacobian("ee_link") @ v)
    for _, acceleration in results:
        np.testing.assert_allclose(acceleration, wdot, rtol=1e-8, atol=1e-8)
    assert np.abs(results[0][0] - results[1][0]).max() > 1.0  # the posture did act, in the null space


def test_arm_settles_within_a_millimetre_in_kinodyn_sim_checked_with_pinocchio(arm: kd.Model) -> None:
    """arm7 in kinodyn.sim (RK4, 2 ms, the URDF's joint damping and friction) under the controller at 500 Hz;
    the end effector's position after 1.5 s from Pinocchio's forward kinematics."""
    sim = kd.sim.Simulator(arm, dt=2e-3, integrator="rk4")
    sim.reset(READY, np.zeros(7))
    controller = ArmController(arm, ArmParameters())
    target = arm.frame_placement(READY, "ee_link").copy()
    target[:3, 3] += [0.10, -0.05, 0.08]
    controller.target = target
    limits = CommandLimits(arm)
    for _ in range(750):
        solved = controller.tick(sim.q, sim.v).command
        assert solved is not None
        command = limits.finalize(solved, sim.q, 2.0).command
        sim.step(command.effort)
    model = pin.buildModelFromUrdf(str(ARM7))
    data = model.createData()
    pin.framesForwardKinematics(model, data, sim.q)
    position = data.oMf[model.getFrameId("ee_link")].translation
    assert np.linalg.norm(position - target[:3, 3]) < 1e-3
    assert np.linalg.norm(pin.log3(target[:3, :3] @ data.oMf[model.getFrameId("ee_link")].rotation.T)) < 0.02


# ----- WbcCore: one command per joint state -----------------------------------------------------------------


def test_core_answers_each_joint_state_with_a_finite_command_stamped_with_it(arm: kd.Model,
                                                                             logger: RecordingLogger) -> None:
    core = make_core(arm, logger)
    answers = core.on_joint_state(joint_state(arm, READY, np.zeros(7), 4_002_000_000), 0)
    assert len(answers) == 1
    cmd = answers[0].command
    assert (cmd.header.stamp.sec, cmd.header.stamp.nanosec) == (4, 2_000_000)
    assert list(cmd.name) == list(arm.joint_names)
    assert all(k == 0.0 for k in cmd.kp)
    assert all(k == 0.0 for k in cmd.kd)
    gravity = arm.gravity_torques(READY)
    np.testing.assert_allclose(cmd.effort, gravity, atol=1e-9)  # at rest on target: gravity compensation
    assert answers[0].diagnostics is not None
    assert answers[0].contacts is None
    values = {kv.key: kv.value for kv in answers[0].diagnostics.status[0].values}
    assert values["mode"] == "arm"
    assert float(values["task_error_position"]) == 0.0
    assert logger.lines == []


def test_core_answers_an_unusable_joint_state_with_damping_and_one_warning(arm: kd.Model,
                                                                           logger: RecordingLogger) -> None:
    core = make_core(arm, logger)
    for k in range(3):
        bad = joint_state(arm, np.r_[math.nan, READY[1:]], np.zeros(7), k * 2_000_000)
        answers = core.on_joint_state(bad, 0)
        cmd = answers[0].command
        assert all(x == 0.0 for x in cmd.kp)
        assert all(x == 2.0 for x in cmd.kd)
        assert all(x == 0.0 for x in cmd.effort)
        assert all(math.isfinite(x) for x in cmd.position)
    assert len(logger.lines) == 1
    assert "joint_states at t = 0.000000 s unusable" in logger.lines[0][1]
    assert "sending damping" in logger.lines[0][1]


def test_joint_states_in_model_order_give_what_the_name_by_name_reading_gives(
    arm: kd.Model, logger: RecordingLogger,
) -> None:
    """The usual message (control_node's: every joint in the model's order) skips the reordering (the
    fast path); it must read the same positions and velocities, and refuse the same states with the same
    reasons, as the name-by-name reading (``joint_state_positions`` / ``joint_state_vector``), which a
    shuffled message still takes."""
    core = make_core(arm, logger)
    rng = np.random.default_rng(4)
    names = list(arm.joint_names)
    order = rng.permutation(len(names))
    for _ in range(5):
        q, v = arm.random_configuration(rng), rng.normal(size=7)
        in_order = joint_state(arm, q, v, 0)
        shuffled = JointState(name=[names[k] for k in order], position=[float(q[k]) for k in order],
                              velocity=[float(v[k]) for k in order])
        for msg in (in_order, shuffled):
            q_read, v_read = core._joints(msg)  # noqa: SLF001  (the node's state under test)
            np.testing.assert_array_equal(q_read, q)
            np.testing.assert_array_equal(v_read, v)
    beyond = READY.copy()
    beyond[3] = arm.upper_limit[3] + 0.2  # past the limit plus the 0.1 margin
    for bad_q, bad_v, reason in ((beyond, np.zeros(7), "joint4 = "), (READY, np.r_[np.inf, np.zeros(6)],
                                                                       "non-finite velocity for 'joint1'")):
        errors = []
        for msg in (joint_state(arm, bad_q, bad_v, 0), JointState(
                name=[names[k] for k in order], position=[float(bad_q[k]) for k in order],
                velocity=[float(bad_v[k]) for k in order])):
            with pytest.raises(InputError) as caught:
                core._joints(msg)  # noqa: SLF001  (the node's state under test)
            errors.append(str(caught.value))
        assert all(reason in e for e in errors), errors


def test_core_sends_damping_when_the_controller_fails_or_returns_nan(arm: kd.Model, logger: RecordingLogger,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    core = make_core(arm, logger)
    state = joint_state(arm, READY, np.zeros(7), 0)
    monkeypatch.setattr(core.controller, "tick", lambda q, v: (_ for _ in ()).throw(RuntimeError("broken")))
    cmd = core.on_joint_state(state, 0)[0].command
    assert all(x == 2.0 for x in cmd.kd)
    assert all(x == 0.0 for x in cmd.effort)
    assert "controller failed at t = 0.000000 s (RuntimeError: broken); sending damping" in \
        logger.lines[-1][1]
    nan = JointCommand(READY, np.zeros(7), np.full(7, math.nan), np.zeros(7), np.zeros(7))
    monkeypatch.setattr(core.controller, "tick", lambda q, v: TickResult(nan, "ok"))
    cmd = core.on_joint_state(state, 0)[0].command
    assert all(x == 0.0 for x in cmd.effort)
    assert all(x == 2.0 for x in cmd.kd)
    assert "non-finite effort" in logger.lines[-1][1]
    monkeypatch.setattr(core.controller, "tick", lambda q, v: TickResult(None, "infeasible", "no solution"))
    answer = core.on_joint_state(joint_state(arm, READY, np.zeros(7), NS), 0)[0]
    assert "QP failed at t = 1.000000 s (infeasible: no solution); sending damping" in logger.lines[-1][1]
    assert answer.diagnostics is not None
    values = {kv.key: kv.value for kv in answer.diagnostics.status[0].values}
    assert answer.diagnostics.status[0].level == b"\x02"
    assert values["qp_failures"] == "1"


def test_core_sends_a_relaxed_answer_counts_it_and_warns_once(arm: kd.Model, logger: RecordingLogger,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A relaxed tick (the QP's hard level infeasible, solved with soft limits: docs/wbc.md) is commanded,
    not damped; the diagnostics count it (level WARN) and one throttled warning line says what gave way."""
    core = make_core(arm, logger)
    assert isinstance(core.controller, ArmController)
    good = core.controller.tick(READY, np.zeros(7))
    assert good.command is not None
    reason = "relaxed (joint limits soft): joint limits by up to 5 rad/s^2"
    relaxed = TickResult(good.command, "relaxed", reason)
    monkeypatch.setattr(core.controller, "tick", lambda q, v: relaxed)
    lines = len(logger.lines)
    first = core.on_joint_state(joint_state(arm, READY, np.zeros(7), 0), 0)[0]
    second = core.on_joint_state(joint_state(arm, READY, np.zeros(7), NS), 0)[0]
    np.testing.assert_array_equal(first.command.effort, good.command.effort)
    assert second.diagnostics is not None
    values = {kv.key: kv.value for kv in second.diagnostics.status[0].values}
    assert second.diagnostics.status[0].level == b"\x01"
    assert values["relaxed_ticks"] == "1"
    assert values["qp_failures"] == values["damped_ticks"] == "0"
    warned = [text for _, text in logger.lines[lines:] if "QP relaxed" in text]
    assert warned == [f"QP relaxed at t = 0.000000 s: its hard constraints could not all hold; {reason}"]


def target_msg(T: np.ndarray, frame: str = "base_link") -> PoseStamped:
    msg = PoseStamped()
    msg.header.frame_id = frame
    msg.pose = matrix_to_pose(T)
    return msg


def test_core_takes_a_target_in_the_root_link_and_refuses_bad_ones(arm: kd.Model,
                                                                   logger: RecordingLogger) -> None:
    core = make_core(arm, logger)
    T = arm.frame_placement(READY, "ee_link").copy()
    T[:3, 3] += [0.05, 0.0, 0.0]
    core.on_target_pose(target_msg(T))
    assert isinstance(core.controller, ArmController)
    assert core.controller.target is not None
    np.testing.assert_allclose(core.controller.target, T, atol=1e-12)
    with pytest.raises(InputError, match="not the URDF root link 'base_link'"):
        core.on_target_pose(target_msg(T, "odom"))
    far = T.copy()
    far[:3, 3] = [5.0, 0.0, 0.0]
    with pytest.raises(InputError, match="beyond the reach of 'ee_link'"):
        core.on_target_pose(target_msg(far))
    nan = target_msg(T)
    nan.pose.position.x = math.nan
    with pytest.raises(InputError):
        core.on_target_pose(nan)
    assert core.controller.target is not None
    np.testing.assert_allclose(core.controller.target, T, atol=1e-12)  # unchanged by the refused ones


# ----- the node's parameters (in-process, no other process) -------------------------------------------------


@pytest.fixture
def arm_node() -> Iterator[Wbc]:
    with in_process_node(Wbc, {"robot_description_file": ARM7, "mode": "arm"}) as node:
        yield node


def test_node_changes_gains_live_and_refuses_bad_values_with_a_reason(arm_node: Wbc) -> None:
    ok = arm_node.set_parameters([Parameter("position_kp", value=400.0), Parameter("damping_kd", value=3.0)])
    assert all(r.successful for r in ok)
    arm = arm_node._core.controller  # noqa: SLF001  (the node's state under test)
    assert isinstance(arm, ArmController)
    assert arm.params.position_kp == 400.0
    assert arm_node._core.params.damping_kd == 3.0  # noqa: SLF001  (the node's state under test)
    for name, value, reason in (("posture_kd", -1.0, "posture_kd must be a finite number >= 0"),
                                ("damping_kd", 0.0, "damping_kd must be a positive finite number"),
                                ("posture", [0.0, 1.0], "posture has 2 values; the URDF has 7 joints"),
                                ("frame", "link3", "frame applies at start-up only")):
        result = arm_node.set_parameters([Parameter(name, value=value)])[0]
        assert not result.successful, result.reason
        assert reason in result.reason, result.reason
    assert arm.params.posture_kd == ArmParameters().posture_kd
    assert arm_node._core.params.damping_kd == 3.0  # noqa: SLF001  (the node's state under test)


def test_problem_log_warns_and_errs_through_one_rclpy_logger() -> None:
    """rclpy raises 'Logger severity cannot be changed between calls' when one line of code logs at two
    severities; the wbc node warns (bad input) and errs (QP failure) through one DistinctProblemLog."""
    problems = DistinctProblemLog(rclpy.logging.get_logger("wbc_problem_log_test"))
    for k in range(2):
        problems.warn(("a", k), "a warning")
        problems.error(("b", k), "an error")
