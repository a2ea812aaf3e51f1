"""Controller manager and controllers without ROS: claims, forward command rules, PD law, limits, watchdog.

Time is simulated: the tests call ``manager.cycle(t, dt)`` and set the fake context's clock, so watchdog
timing is exact. Expected values are computed by hand from the formulas in the modules' docstrings.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn_common.stamps import NS
from kinodyn_control.controllers.watchdog import WATCHDOG_PARAMETERS, CommandWatchdog
from kinodyn_control.hardware.types import EFFORT, LifecycleState
from kinodyn_control.manager import STRICT, ControllerError
from std_msgs.msg import Float64MultiArray

from kinodyn_control import testing

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from kinodyn_interfaces.msg import JointPDCommand

DT = 0.002


def pd(position: Sequence[float], velocity: Sequence[float], effort: Sequence[float], kp: Sequence[float],
       kd: Sequence[float], names: Sequence[str] = testing.ARM_JOINTS) -> JointPDCommand:
    return testing.pd_command(names, position, velocity, effort, kp, kd)


# --- claiming -----------------------------------------------------------------------------------------------
def test_second_claim_refused_with_message_state_interfaces_shared(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    h.start("a", testing.FORWARD_COMMAND, {"joints": ["j1", "j2"]})
    h.manager.load("b", testing.FORWARD_COMMAND, {"joints": ["j2"]})
    h.manager.configure("b")
    ok, message = h.manager.switch(["b"], [])
    assert not ok
    assert message == (
        "Unable to activate controller 'b' since the command interface 'j2/effort' is currently "
        "claimed by controller 'a'"
    )
    assert h.manager.controllers["b"].state is LifecycleState.INACTIVE
    h.start("jsb", "kinodyn_control/JointStateBroadcaster")  # shares j1/j2 position and velocity with 'a'
    h.start("p", testing.FORWARD_COMMAND,
            {"joints": ["j2"], "interface_name": "position", "safe_mode": "hold_position"})  # another
    # interface of j2: allowed
    ok, message = h.manager.switch(["b"], ["a"], STRICT)  # released in the same switch: allowed
    assert ok, message
    assert h.manager.claimed == {"j2/position": "p", "j2/effort": "b"}


def test_two_controllers_claiming_same_interface_in_one_switch(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    for name in ("a", "b"):
        h.manager.load(name, testing.FORWARD_COMMAND, {"joints": ["j1"]})
        h.manager.configure(name)
    ok, message = h.manager.switch(["a", "b"], [], STRICT)
    assert not ok
    assert "STRICT" in message
    assert "Command interface 'j1/effort' is already claimed" in message
    assert not h.manager.claimed
    ok, message = h.manager.switch(["a", "b"], [])  # best effort: a is activated, b reported
    assert not ok
    assert h.manager.claimed == {"j1/effort": "a"}


def test_unavailable_command_interface_and_admin_errors(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    h.resources.set_component_state("sys", LifecycleState.INACTIVE)  # states readable, commands not
    h.manager.load("a", testing.FORWARD_COMMAND, {"joints": ["j1"]})
    h.manager.configure("a")
    ok, message = h.manager.switch(["a"], [])
    assert not ok
    assert "command interface 'j1/effort' is not available" in message
    h.start("jsb", "kinodyn_control/JointStateBroadcaster")  # state interfaces are available while inactive
    with pytest.raises(ControllerError, match="already loaded"):
        h.manager.load("a", testing.FORWARD_COMMAND, {})
    with pytest.raises(ControllerError, match=r"no plugin 'x/Y'.*known plugins: .*JointPDController"):
        h.manager.load("c", "x/Y", {})
    with pytest.raises(ControllerError, match=r"unknown parameter.*jionts"):
        h.manager.load("d", testing.FORWARD_COMMAND, {"jionts": ["j1"]})
    with pytest.raises(ControllerError, match="is active; deactivate it before unloading"):
        h.manager.unload("jsb")
    h.manager.unload("a")
    assert "a" not in h.manager.controllers


def test_hardware_error_deactivates_its_users(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    h.start("a", testing.FORWARD_COMMAND, {"joints": ["j1"]})
    failures = []
    h.manager.on_hardware_failure = failures.append
    h.send("a", Float64MultiArray(data=[3.0]), 0.0)
    h.manager.cycle(0.0, DT)
    assert h.command("j1/effort") == 3.0
    assert not failures
    h.set_command("j2/effort", math.inf)  # GenericSystem.read returns ERROR
    h.manager.cycle(0.0, DT)
    assert h.manager.controllers["a"].state is LifecycleState.INACTIVE
    assert not h.manager.claimed
    assert h.command("j1/effort") == 0.0  # its interfaces in safe mode
    assert failures == [  # one message: what failed, what was stopped
        "component 'sys' returned an error from read(): unusable command(s): j2/effort = inf; it is now "
        "unconfigured and its interfaces are unavailable; controller(s) a deactivated, their command "
        "interfaces in safe mode: effort, velocity and acceleration 0, position held"
    ]
    assert h.messages("error") == []  # on_hardware_failure reports it (its default: logger.error)


# --- forward command ----------------------------------------------------------------------------------------
def test_forward_effort_no_command_yet_then_forwards(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    h.start("fwd", testing.FORWARD_COMMAND, {"joints": ["j2", "j1"]})
    h.manager.cycle(0.0, DT)
    assert math.isnan(h.command("j1/effort"))
    assert math.isnan(h.command("j2/effort"))  # nothing written yet
    h.send("fwd", Float64MultiArray(data=[1.5, -2.5]), 0.0)
    h.manager.cycle(0.001, DT)
    assert (h.command("j2/effort"), h.command("j1/effort")) == (1.5, -2.5)
    h.manager.cycle(0.002, DT)  # GenericSystem mirrors in the next read
    assert (h.state("j2/effort"), h.state("j1/effort")) == (1.5, -2.5)


@pytest.mark.parametrize(
    ("data", "warning"),
    [
        ([1.0], "command size (1) does not match number of interfaces (2)"),
        ([1.0, 2.0, 3.0], "command size (3) does not match number of interfaces (2)"),
        ([math.nan, 1.0], "non-finite values for j1"),
        ([1.0, math.inf], "non-finite values for j2"),
        ([10.5, 0.0], "out of limits: j1 effort 10.5 outside ±10.0"),
    ],
)
def test_forward_rejects_bad_commands(harness: type[testing.Harness], data: list[float], warning: str
                                      ) -> None:
    h = testing.two_joint_arm()
    h.start("fwd", testing.FORWARD_COMMAND, {"joints": ["j1", "j2"]})
    h.send("fwd", Float64MultiArray(data=[0.5, 0.5]), 0.0)
    h.send("fwd", Float64MultiArray(data=data), 0.0)
    h.manager.cycle(0.0, DT)
    assert (h.command("j1/effort"), h.command("j2/effort")) == (0.5, 0.5)
    assert h.messages("warning") == [f"rejected command on /fwd/commands: {warning}"]


def test_forward_position_is_rate_limited_and_clamped(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    h.start("pos", testing.FORWARD_COMMAND,
            {"joints": ["j1"], "interface_name": "position", "safe_mode": "hold_position"})
    h.send("pos", Float64MultiArray(data=[1.0]), 0.0)
    h.manager.cycle(0.0, DT)
    assert h.command("j1/position") == pytest.approx(0.2 + 2.0 * DT, abs=1e-16)  # from q = 0.2 at 2 rad/s
    h.manager.cycle(DT, DT)
    assert h.command("j1/position") == pytest.approx(0.2 + 4.0 * DT, abs=1e-15)
    with pytest.raises(ControllerError, match="safe_mode zero_effort needs effort command interfaces"):
        h.start("bad", testing.FORWARD_COMMAND, {"joints": ["j2"], "interface_name": "position"})
    with pytest.raises(ControllerError, match="interface_name must be one of effort, position"):
        h.start("bad2", testing.FORWARD_COMMAND, {"joints": ["j2"], "interface_name": "velocity"})


# --- joint PD -----------------------------------------------------------------------------------------------
def test_pd_law_by_name(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    h.set_command("j1/position", 0.2)  # keep GenericSystem positions at 0.2 and 0.4
    h.set_command("j2/position", 0.4)
    h.send("pd", pd([0.5, 0.3], [0.1, -0.2], [1.0, -1.0], [10.0, 20.0], [0.5, 1.0], names=("j1", "j2")), 0.0)
    h.manager.cycle(0.0, DT)
    tau1 = 1.0 + 10.0 * (0.5 - 0.2) + 0.5 * (0.1 - 0.0)
    tau2 = -1.0 + 20.0 * (0.3 - 0.4) + 1.0 * (-0.2 - 0.0)
    assert h.command("j1/effort") == pytest.approx(tau1, abs=1e-15)
    assert h.command("j2/effort") == pytest.approx(tau2, abs=1e-15)
    h.send("pd", pd([0.3, 0.5], [-0.2, 0.1], [-1.0, 1.0], [20.0, 10.0], [1.0, 0.5], names=("j2", "j1")), 0.0)
    h.manager.cycle(0.0, DT)
    assert (h.command("j1/effort"), h.command("j2/effort")) == pytest.approx((tau1, tau2), abs=1e-15)
    h.send("pd", pd([0.5, 0.3], [0.1, -0.2], [2.0, -1.0], [10.0, 20.0], [0.5, 1.0], names=("j1", "j2")), 0.0)
    h.manager.cycle(0.0, DT)  # back to the controller's order (the name list checked again)
    assert (h.command("j1/effort"), h.command("j2/effort")) == pytest.approx((tau1 + 1.0, tau2), abs=1e-15)


def test_pd_output_saturated_to_effort_limit_and_zero_past_limits(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    h.send("pd", pd([1.0, -1.0], [0.0, 0.0], [0.0, 0.0], [100.0, 100.0], [0.0, 0.0]), 0.0)
    h.manager.cycle(0.0, DT)  # 100 * (1 - 0.2) = 80 -> 10;  100 * (-1 - 0.4) = -140 -> -10
    assert (h.command("j1/effort"), h.command("j2/effort")) == (10.0, -10.0)
    limits = h.manager.controllers["pd"].controller.limits
    tau = limits.saturate_effort(np.array([5.0, -5.0]), q=np.array([1.0, 0.0]), qdot=np.array([0.0, -2.0]))
    assert tau.tolist() == [0.0, 0.0]  # pushes past the upper position limit / past -velocity limit
    tau = limits.saturate_effort(np.array([-5.0, 5.0]), q=np.array([1.0, 0.0]), qdot=np.array([0.0, -2.0]))
    assert tau.tolist() == [-5.0, 5.0]  # pulling back inside is allowed


@pytest.mark.parametrize(
    ("change", "warning"),
    [
        (lambda m: m.kd.pop(), "kd has 1 values for 2 names"),
        (lambda m: m.name.__setitem__(1, "j1"), "joint(s) 'j1' named twice"),
        (
            lambda m: m.name.__setitem__(1, "j9"),
            "joint(s) 'j9' not commanded by this controller (joints: 'j1', 'j2')",
        ),
        (lambda m: m.velocity.__setitem__(0, math.nan), "non-finite values in velocity"),
        (lambda m: m.kp.__setitem__(0, -1.0), "kp and kd must be >= 0"),
        (lambda m: m.position.__setitem__(0, 1.5), "out of limits: j1 position 1.5 outside [-1.0, 1.0]"),
        (lambda m: m.velocity.__setitem__(1, -3.0), "out of limits: j2 velocity -3.0 outside ±2.0"),
        (lambda m: m.effort.__setitem__(1, 11.0), "out of limits: j2 effort 11.0 outside ±10.0"),
    ],
)
def test_pd_rejects_bad_commands(harness: type[testing.Harness], change: Callable[[JointPDCommand], None],
                                  warning: str) -> None:
    h = testing.two_joint_arm()
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    msg = pd([0.0, 0.0], [0.0, 0.0], [1.0, 2.0], [0.0, 0.0], [0.0, 0.0])
    h.send("pd", msg, 0.0)
    bad = pd([0.0, 0.0], [0.0, 0.0], [3.0, 4.0], [0.0, 0.0], [0.0, 0.0])
    change(bad)
    h.send("pd", bad, 0.0)
    h.manager.cycle(0.0, DT)
    assert (h.command("j1/effort"), h.command("j2/effort")) == (1.0, 2.0)
    assert h.messages("warning") == [f"rejected command on /pd/commands: {warning}"]


# --- watchdog (simulated time) ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["zero_effort", "hold_position"])
def test_watchdog_trips_after_timeout_logs_once_and_rearms(harness: type[testing.Harness], mode: str) -> None:
    h = testing.two_joint_arm(testing.param("calculate_dynamics", "false"))
    params = {
        "joints": list(testing.ARM_JOINTS),
        "watchdog_timeout": 0.01,
        "safe_mode": mode,
        "safe_kp": 30.0,
        "safe_kd": 2.0,
    }
    h.start("pd", testing.JOINT_PD, params)
    h.state_values = h.resources.states.values
    h.send("pd", pd([0.0, 0.0], [0.0, 0.0], [4.0, 4.0], [0.0, 0.0], [0.0, 0.0]), 0.0)
    vel = h.resources.states.index["j1/velocity"]
    h.resources.states.values[vel] = 0.5  # a moving joint, to see the damping
    n_until_trip = 0
    for k in range(12):  # cycles at t = 0, 2, ..., 22 ms; the last command arrived at t = 0
        t = k * DT
        h.manager.cycle(t, DT)
        h.resources.states.values[vel] = 0.5  # GenericSystem would overwrite velocity only if commanded
        if h.command("j1/effort") == 4.0:
            n_until_trip = k
    assert n_until_trip == 5  # t = 10 ms is not yet "more than" 10 ms; the cycle at 12 ms trips
    q1 = 0.2
    expected = -2.0 * 0.5 if mode == "zero_effort" else 30.0 * (q1 - q1) - 2.0 * 0.5
    assert h.command("j1/effort") == pytest.approx(expected, abs=1e-15)
    warnings = [m for m in h.messages("warning") if "no command for" in m]
    assert len(warnings) == 1
    assert "no command for 0.0120 s (watchdog_timeout 0.01 s)" in warnings[0]
    h.send("pd", pd([0.0, 0.0], [0.0, 0.0], [4.0, 4.0], [0.0, 0.0], [0.0, 0.0]), 0.03)
    h.manager.cycle(0.03, DT)
    assert h.command("j1/effort") == 4.0  # a new command re-arms it


def test_watchdog_runs_on_receipt_time_whatever_the_stamp(harness: type[testing.Harness]) -> None:
    """Outside lockstep a command stamped 10 s ahead is taken, and the watchdog trips watchdog_timeout after
    it arrived (its stamp would have kept it in force for 10 s)."""
    h = testing.two_joint_arm(testing.param("calculate_dynamics", "false"))
    h.start("pd", testing.JOINT_PD,
            {"joints": list(testing.ARM_JOINTS), "watchdog_timeout": 0.01, "safe_kd": 2.0})
    ahead = testing.pd_command(testing.ARM_JOINTS, [0.0, 0.0], [0.0, 0.0], [4.0, 4.0], [0.0, 0.0], [0.0, 0.0],
                               10 * NS)
    h.send("pd", ahead, 0.0)
    efforts = []
    for k in range(8):
        h.manager.cycle(k * DT, DT)
        efforts.append(h.command("j1/effort"))
    assert efforts[:6] == [4.0] * 6
    assert efforts[6:] == [0.0, 0.0]  # tripped at 12 ms (zero_effort, at rest)
    assert [m for m in h.messages("warning") if "no command for 0.0120 s" in m]


def test_watchdog_counts_whole_nanoseconds() -> None:
    """50 cycles of 2 ms are exactly a 0.1 s timeout wherever the silence starts: no trip one cycle early."""
    params = {name: spec.default for name, spec in WATCHDOG_PARAMETERS.items()}
    params["watchdog_timeout"] = 0.1
    watchdog = CommandWatchdog(params, EFFORT)
    q = np.zeros(2)
    early = []
    for k0 in range(2000):
        watchdog.feed(k0 * DT)
        if watchdog.check((k0 + 50) * DT, q) is not None:
            early.append(k0)
        assert watchdog.check((k0 + 51) * DT, q) is not None
    assert early == []


def test_watchdog_parameters_validated(harness: type[testing.Harness]) -> None:
    h = testing.two_joint_arm()
    with pytest.raises(ControllerError, match="watchdog_timeout must be a positive number"):
        h.start("a", testing.JOINT_PD, {"joints": ["j1"], "watchdog_timeout": 0.0})
    with pytest.raises(ControllerError, match="safe_mode must be one of hold_position, zero_effort"):
        h.start("b", testing.JOINT_PD, {"joints": ["j1"], "safe_mode": "freeze"})


# --- broadcasters -------------------------------------------------------------------------------------------
def test_joint_state_broadcaster_and_imu_broadcaster(harness: type[testing.Harness], quadruped_urdf: str
                                                     ) -> None:
    h = harness(quadruped_urdf)
    h.activate_hardware()
    h.start("jsb", "kinodyn_control/JointStateBroadcaster")
    h.start("imu", "kinodyn_control/ImuSensorBroadcaster", {"sensor_name": "imu_sensor"})
    h.manager.cycle(12.25, DT)
    (msg,) = h.contexts["jsb"].publishers["/joint_states"].messages
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (12, 250_000_000)
    assert list(msg.name)[:3] == ["LF_HAA", "LF_HFE", "LF_KFE"]
    assert list(msg.position)[:3] == [0.0, 0.6, -1.2]
    (imu,) = h.contexts["imu"].publishers["/imu/imu"].messages
    assert imu.header.frame_id == "imu_link"
    assert imu.orientation.w == 1.0  # the URDF's at-rest initial value
    assert imu.linear_acceleration.z == 9.81
    assert imu.angular_velocity.x == 0.0
    with pytest.raises(ControllerError, match="sensor_name 'gyro' is not a <sensor>; sensors: imu_sensor"):
        h.start("bad", "kinodyn_control/ImuSensorBroadcaster", {"sensor_name": "gyro"})


def test_unloading_a_configured_controller_destroys_its_publishers_and_subscriptions(
        harness: type[testing.Harness], quadruped_urdf: str) -> None:
    h = harness(quadruped_urdf)
    loaded: dict[str, tuple[str, dict[str, str | list[str]], str]] = {
        "jsb": ("kinodyn_control/JointStateBroadcaster", {}, "/joint_states"),
        "imu": ("kinodyn_control/ImuSensorBroadcaster", {"sensor_name": "imu_sensor"}, "/imu/imu"),
        "pd": (testing.JOINT_PD, {"joints": ["LF_HAA"]}, "/pd/commands")}
    for name, (type_name, params, _) in loaded.items():
        h.manager.load(name, type_name, params)
        h.manager.configure(name)
    opened = {name: {*h.contexts[name].publishers, *h.contexts[name].subscriptions} for name in loaded}
    assert opened == {name: {topic} for name, (_, _, topic) in loaded.items()}
    for name in loaded:
        h.manager.unload(name)
        assert not h.contexts[name].publishers
        assert not h.contexts[name].subscriptions


# --- real device skeleton -----------------------------------------------------------------------------------
def test_real_device_skeleton_read_write_contract(harness: type[testing.Harness]) -> None:
    joints = testing.joint("j1", ("effort",), ("position", "effort"), {"position": 0.3})
    xml = testing.robot_xml(
        '<ros2_control name="dev" type="system"><hardware><plugin>kinodyn_control/RealDeviceSkeleton</plugin>'
        f"</hardware>{joints}</ros2_control>",
        ("j1",),
    )
    h = harness(xml)
    h.activate_hardware()
    dev = h.resources.components["dev"]
    assert dev.link.is_open
    assert h.state("j1/position") == 0.3  # configure opened the link and read once
    h.manager.cycle(0.0, DT)
    assert dev.link.sent == []  # NaN commands are not sent
    h.set_command("j1/effort", 2.5)
    h.manager.cycle(0.0, DT)  # write sends, the next read returns the loopback state
    h.manager.cycle(0.0, DT)
    assert dev.link.sent[0] == {"j1/effort": 2.5}
    assert h.state("j1/effort") == 2.5
    dev.link.fail_next = True
    assert h.resources.read(0.0, DT) == ["dev"]
    assert dev.lifecycle_state is LifecycleState.UNCONFIGURED
    assert not dev.link.is_open  # on_error closed it


def test_effort_saturation_matches_the_rule_entry_by_entry(harness: type[testing.Harness]) -> None:
    """saturate_effort against the rule of limits.py written out per joint in Python: clamp to ±effort, then 0
    where the clamped effort pushes further past a position limit or past ±velocity; NaN passes (the command
    check refuses it); bit for bit (a zero's sign too)."""
    h = testing.two_joint_arm()
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    limits = h.manager.controllers["pd"].controller.limits
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 10.0, -10.0, 11.0, math.inf, -math.inf, math.nan]
    for _ in range(400):
        effort, q, qdot = (np.where(rng.random(2) < 0.5, rng.choice(special, 2), rng.normal(0.0, 6.0, 2))
                           for _ in range(3))
        got = limits.saturate_effort(effort, q, qdot)
        for k in range(2):
            lim, upper, lower, vmax = limits.effort[k], limits.upper[k], limits.lower[k], limits.velocity[k]
            tau = effort[k] if math.isnan(effort[k]) else min(max(effort[k], -lim), lim)
            pushes_up = tau > 0 and (q[k] >= upper or qdot[k] >= vmax)
            if pushes_up or (tau < 0 and (q[k] <= lower or qdot[k] <= -vmax)):
                tau = 0.0
            # the same number, the sign of a zero included
            assert (math.isnan(tau) and math.isnan(got[k])) or \
                np.float64(got[k]).tobytes() == np.float64(tau).tobytes(), (effort, q, qdot, got)
