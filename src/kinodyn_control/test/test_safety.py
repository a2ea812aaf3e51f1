"""Nothing non-finite or out of range reaches a command interface, and faults end in safe mode.

Without ROS, through the resource and controller managers: a controller whose output is not finite (the PD
law with kp = kd = 1.7e308 computes -inf + inf) or outside the interface's min/max, or that raises, is
deactivated with one error line and its command interfaces go to safe mode; hardware does not read a NaN
after a command as "keep the previous one"; a failure of the physics is a write ERROR that reaches
``on_hardware_failure``; gains are bounded; absurd pushes are refused; no command message stops a controller.
Expected values are set by hand from the rules in the modules' docstrings.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import numpy as np
import pytest
import rclpy
from kinodyn_common.conversions import InputError
from kinodyn_control.hardware import types as hw
from kinodyn_control.manager import ControllerError, HardwareError, safe_command
from std_msgs.msg import Float64MultiArray

from kinodyn_control import control_node, testing
from kinodyn_interfaces.srv import ConfigureController, SwitchController

if TYPE_CHECKING:
    from kinodyn_control.hardware.description import HardwareInfo


DT = 0.002
HUGE = 1.7e308
REPO = Path(__file__).resolve().parents[3]


def overflowing_pd() -> object:
    """Finite and within the URDF limits (±1 rad, ±2 rad/s, ±10 N m); at q = (0.2, 0.4), qdot = 0 the law
    gives kp (-1 - q) = -inf and kd (2 - 0) = +inf: NaN."""
    return testing.pd_command(testing.ARM_JOINTS, [-1.0, -1.0], [2.0, 2.0], [0.0, 0.0], [HUGE, HUGE],
                              [HUGE, HUGE])


# --- the manager checks every controller output -------------------------------------------------------------
def test_pd_overflow_deactivates_the_controller_with_one_error_and_zero_effort() -> None:
    h = testing.two_joint_arm()
    h.start("pd", testing.JOINT_PD,
            {"joints": list(testing.ARM_JOINTS), "max_kp": 1.79e308, "max_kd": 1.79e308})
    h.send("pd", testing.pd_command(testing.ARM_JOINTS, [0.2, 0.4], [0.0, 0.0], [3.0, -3.0], [0.0, 0.0],
                                    [0.0, 0.0]))
    h.manager.cycle(0.0, DT)
    assert (h.command("j1/effort"), h.command("j2/effort")) == (3.0, -3.0)
    h.send("pd", overflowing_pd())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warnings are not the report: the manager's line is
        h.manager.cycle(0.002, DT)
    assert h.manager.controllers["pd"].state is hw.LifecycleState.INACTIVE
    assert not h.manager.claimed
    assert (h.command("j1/effort"), h.command("j2/effort")) == (0.0, 0.0)  # not the previous 3, -3
    assert h.messages("error") == [
        "controller 'pd' wrote an unsafe command: j1/effort = nan (non-finite), j2/effort = nan "
        "(non-finite); deactivated it, its 2 command interface(s) in safe mode: effort, velocity and "
        "acceleration 0, position held"
    ]
    h.manager.cycle(0.004, DT)  # GenericSystem mirrors the safe command, and nothing fails
    assert (h.state("j1/effort"), h.state("j2/effort")) == (0.0, 0.0)
    assert h.resources.components["sys"].lifecycle_state is hw.LifecycleState.ACTIVE


def test_gains_above_the_configured_maximum_are_rejected() -> None:
    h = testing.two_joint_arm()
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    h.send("pd", overflowing_pd())
    h.manager.cycle(0.0, DT)
    assert h.manager.controllers["pd"].state is hw.LifecycleState.ACTIVE
    assert math.isnan(h.command("j1/effort"))  # never commanded
    assert h.messages("warning") == [
        "rejected command on /pd/commands: kp 1.7e+308 for j1 is above max_kp = 100000.0 (a controller "
        "parameter)"
    ]
    for bad, needle in (
        ({"max_kp": math.inf}, "max_kp and max_kd must be finite and > 0"),
        ({"max_kd": 0.0}, "max_kp and max_kd must be finite and > 0"),
        ({"safe_kd": 20.0, "max_kd": 10.0}, r"safe_kp and safe_kd must be in \[0, max_kp = 100000.0\]"),
    ):
        with pytest.raises(ControllerError, match=needle):
            h.start(f"bad{len(h.manager.controllers)}", testing.JOINT_PD, {"joints": ["j1"], **bad})


def test_command_loan_refuses_non_finite_and_out_of_range_values_and_writes_nothing() -> None:
    table = hw.InterfaceTable([
        hw.InterfaceDescription("j1", hw.InterfaceInfo("effort", min=-5.0, max=5.0)),
        hw.InterfaceDescription("j2", hw.InterfaceInfo("position")),
        hw.InterfaceDescription("j3", hw.InterfaceInfo("effort", min=math.nan, max=1.0)),
    ], "command")
    loan = hw.LoanedInterfaces(table.names[:2], table, bounded=True)
    loan.set(np.array([5.0, 1e300]))  # the bounds are inclusive; no bounds: any finite value
    assert table.values[:2].tolist() == [5.0, 1e300]
    for values, why in (([5.5, 0.0], "j1/effort = 5.5 (outside [-5.0, 5.0])"),
                        ([0.0, -math.inf], "j2/position = -inf (non-finite)"),
                        ([math.nan, 0.0], "j1/effort = nan (non-finite)")):
        with pytest.raises(hw.UnsafeCommandError) as caught:
            loan.set(np.array(values))
        assert str(caught.value) == why
        assert table.values[:2].tolist() == [5.0, 1e300]  # nothing written
    nan_bound = hw.LoanedInterfaces(table.names[2:], table, bounded=True)
    with pytest.raises(hw.UnsafeCommandError, match=r"j3/effort = 0.0 \(outside \[nan, 1.0\]\)"):
        nan_bound.set(np.array([0.0]))
    hw.LoanedInterfaces(table.names, table).set(np.array([math.nan] * 3))  # state loans are not checked


def test_safe_command_per_interface() -> None:
    states = hw.InterfaceTable([
        hw.InterfaceDescription("j1", hw.InterfaceInfo("position", initial_value=0.7)),
        hw.InterfaceDescription("j2", hw.InterfaceInfo("position")),
    ], "state")
    assert safe_command("j1/position", 0.1, states) == 0.7  # hold the measured position
    assert safe_command("j2/position", 0.1, states) == 0.1  # none measured (NaN): the last command
    assert safe_command("j3/position", 0.2, states) == 0.2  # no state interface: the last command
    for interface in ("effort", "velocity", "acceleration"):
        assert safe_command(f"j1/{interface}", 4.0, states) == 0.0
    assert safe_command("gpio/valve", 1.0, states) == 1.0


def test_a_raising_position_controller_is_deactivated_holding_the_measured_position() -> None:
    # the measured positions stay at 0.2, 0.4
    h = testing.two_joint_arm(testing.param("disable_commands", "true"))
    h.start("fwd", testing.FORWARD_COMMAND,
            {"joints": list(testing.ARM_JOINTS), "interface_name": "position", "safe_mode": "hold_position"})
    h.send("fwd", Float64MultiArray(data=[0.203, 0.403]))  # one step within velocity * period = 0.004
    h.manager.cycle(0.0, DT)
    assert (h.command("j1/position"), h.command("j2/position")) == (0.203, 0.403)

    def broken(target: np.ndarray, q: np.ndarray, qdot: np.ndarray) -> NoReturn:
        raise RuntimeError("bug")

    h.manager.controllers["fwd"].controller.compute = broken
    h.manager.cycle(0.002, DT)
    assert h.manager.controllers["fwd"].state is hw.LifecycleState.INACTIVE
    assert (h.command("j1/position"), h.command("j2/position")) == (0.2, 0.4)
    (error,) = h.messages("error")
    assert error.startswith("controller 'fwd' raised in update(); deactivated it, its 2 command interface(s) "
                            "in safe mode")
    assert "RuntimeError: bug" in error


# --- hardware does not keep an old command on NaN -----------------------------------------------------------
def test_generic_system_nan_is_no_command_only_until_the_first_command() -> None:
    h = testing.two_joint_arm()
    sys = h.resources.components["sys"]
    assert sys.read(0.0, DT) is hw.ReturnType.OK  # NaN since activation: not commanded yet
    h.set_command("j1/effort", 2.0)
    assert sys.read(0.0, DT) is hw.ReturnType.OK
    assert h.state("j1/effort") == 2.0
    h.set_command("j1/effort", math.nan)
    assert sys.read(0.0, DT) is hw.ReturnType.ERROR
    assert sys.last_error == "unusable command(s): j1/effort = nan after a command was given"
    assert h.state("j1/effort") == 2.0  # and it was not mirrored
    sys.deactivate()
    sys.activate()
    assert sys.read(0.0, DT) is hw.ReturnType.OK  # activated again: NaN means "no command yet" again


def test_real_device_skeleton_refuses_nan_after_a_command() -> None:
    joints = testing.joint("j1", ("effort",), ("position", "effort"), {"position": 0.3})
    block = testing.system_block(joints=joints, name="dev", plugin="kinodyn_control/RealDeviceSkeleton")
    h = testing.Harness(testing.robot_xml(block, ("j1",)))
    h.activate_hardware()
    dev = h.resources.components["dev"]
    h.set_command("j1/effort", 2.5)
    assert dev.write(0.0, DT) is hw.ReturnType.OK
    h.set_command("j1/effort", math.nan)
    assert dev.write(0.0, DT) is hw.ReturnType.ERROR
    assert dev.link.sent == [{"j1/effort": 2.5}]
    assert dev.last_error == "unusable command(s): j1/effort = nan after a command was given"


def test_an_exception_in_read_is_a_read_error_and_reported_as_hardware_failure() -> None:
    h = testing.two_joint_arm()
    failures: list[str] = []
    h.manager.on_hardware_failure = failures.append
    sys = h.resources.components["sys"]

    def broken(time: float, period: float) -> hw.ReturnType:
        raise OSError("bus gone")

    sys.read = broken
    h.manager.cycle(0.0, DT)
    assert sys.lifecycle_state is hw.LifecycleState.UNCONFIGURED
    assert failures == ["component 'sys' returned an error from read(): read() raised OSError: bus gone; it "
                        "is now unconfigured and its interfaces are unavailable"]  # no controller was active


def test_without_a_listener_a_hardware_failure_is_one_error_line() -> None:
    h = testing.two_joint_arm()
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    h.set_command("j2/position", math.inf)  # not claimed; GenericSystem.read returns ERROR
    h.manager.cycle(0.0, DT)
    assert h.messages("error") == [
        "component 'sys' returned an error from read(): unusable command(s): j2/position = inf; it is now "
        "unconfigured and its interfaces are unavailable; controller(s) pd deactivated, their command "
        "interfaces in safe mode: effort, velocity and acceleration 0, position held"
    ]


# --- the simulator: physics failure and absurd pushes -------------------------------------------------------
def sim_urdf(**params: str) -> str:
    text = (REPO / "urdf" / "quadruped.urdf").read_text()
    extra = "".join(f'<param name="{k}">{v}</param>' for k, v in {"ros_interface": "false", **params}.items())
    return text.replace(f"<plugin>{testing.GENERIC_SYSTEM}</plugin>",
                        f"<plugin>{testing.SIMULATED_SYSTEM}</plugin>{extra}")


def test_physics_failure_is_a_write_error_the_manager_reports() -> None:
    h = testing.Harness(sim_urdf(max_push_force="1e9"))
    h.activate_hardware()
    failures: list[str] = []
    h.manager.on_hardware_failure = failures.append
    h.start("jsb", "kinodyn_control/JointStateBroadcaster")
    component = h.resources.components["quadruped_system"]
    component.request_push("base_link", [1e8, 0.0, 0.0, 0.0, 0.0, 0.0], 0.1)
    for k in range(20):
        h.manager.cycle(k * 1e-3, 1e-3)
        if failures:
            break
    (failure,) = failures
    assert component.lifecycle_state is hw.LifecycleState.UNCONFIGURED
    assert h.manager.controllers["jsb"].state is hw.LifecycleState.INACTIVE
    assert failure.startswith("component 'quadruped_system' returned an error from write(): the physics "
                              "failed at t = ")
    assert "simulation diverged" in failure
    assert "not positive definite" in failure.lower()
    assert failure.endswith("; controller(s) jsb deactivated, their command interfaces in safe mode: effort, "
                            "velocity and acceleration 0, position held")
    published = [m for m in h.contexts["jsb"].publishers["/joint_states"].messages]
    assert published
    assert all(np.isfinite(m.effort).all() and np.isfinite(m.position).all() for m in published)


def test_absurd_pushes_are_refused_with_the_limit_to_raise() -> None:
    h = testing.Harness(sim_urdf(max_push_duration="2"))
    h.activate_hardware()
    component = h.resources.components["quadruped_system"]
    weight = 36.0 * 9.81  # urdf/README.md: the quadruped's mass
    component.request_push("base_link", [20 * weight, 0.0, 0.0, 0.0, 0.0, 0.0], 2.0)  # at the limits: taken
    for wrench, duration, key in (([1e8, 0, 0, 0, 0, 0], 0.1, "max_push_force"),
                                  ([0, 0, 0, 0, 0, 20 * weight + 1.0], 0.1, "max_push_torque"),
                                  ([1.0, 0, 0, 0, 0, 0], 2.5, "max_push_duration"),
                                  ([math.nan, 0, 0, 0, 0, 0], 0.1, "non-finite")):
        with pytest.raises(InputError) as caught:
            component.request_push("base_link", wrench, duration)
        assert caught.value.key == (key, ())
    assert str(caught.value) == "push needs a finite wrench and a finite duration > 0"
    with pytest.raises(InputError, match=r"push force 1e\+08 N is above max_push_force = 7063.2 N "
                                               ".*set the hardware param max_push_force to allow it"):
        component.request_push("base_link", [1e8, 0, 0, 0, 0, 0], 0.1)
    with pytest.raises(HardwareError, match="param max_push_force must be a finite number > 0, got '0'"):
        testing.Harness(sim_urdf(max_push_force="0"))


# --- a command message cannot stop a controller -------------------------------------------------------------
def test_each_cause_is_throttled_on_its_own_and_a_malformed_message_is_dropped() -> None:
    h = testing.two_joint_arm()
    h.start("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    good = testing.pd_command(testing.ARM_JOINTS, [0.0, 0.0], [0.0, 0.0], [1.0, 2.0], [0.0, 0.0], [0.0, 0.0])
    for field in ("kp", "kd", "kp"):
        bad = testing.pd_command(testing.ARM_JOINTS, [0.0, 0.0], [0.0, 0.0], [1.0, 2.0], [0.0, 0.0],
                                 [0.0, 0.0])
        getattr(bad, field).pop()
        h.send("pd", bad)
    # not a JointPDCommand at all: its bytes (the controller takes its commands serialized) are refused
    h.send("pd", Float64MultiArray(data=[1.0, 2.0]))
    h.send("pd", good)
    h.manager.cycle(0.0, DT)
    assert (h.command("j1/effort"), h.command("j2/effort")) == (1.0, 2.0)
    warnings = h.messages("warning")
    assert warnings[:2] == ["rejected command on /pd/commands: kp has 1 values for 2 names",
                            "rejected command on /pd/commands: kd has 1 values for 2 names"]
    assert len(warnings) == 3
    assert warnings[2].startswith(
        "rejected command on /pd/commands: 36 bytes that are not a kinodyn_interfaces/msg/JointPDCommand")
    assert h.messages("error") == []


def test_command_loan_bounds_are_the_urdf_command_interface_min_max() -> None:
    j1 = testing.joint("j1", ("effort",), ("position",)).replace(
        '<command_interface name="effort"/>',
        '<command_interface name="effort"><param name="min">-3</param><param name="max">4</param>'
        "</command_interface>")
    xml = testing.robot_xml(testing.system_block(joints=j1), ("j1",))
    h = testing.Harness(xml)
    info: HardwareInfo = h.description.hardware[0]
    assert (info.joints[0].command_interfaces[0].min, info.joints[0].command_interfaces[0].max) == (-3.0, 4.0)
    loan = hw.LoanedInterfaces(["j1/effort"], h.resources.commands, bounded=True)
    assert loan.check(np.array([4.0])) == ""
    assert loan.check(np.array([-3.5])) != ""


# --- control_node in-process: a request that fails unexpectedly is answered, the node goes on ---------------
def test_a_service_request_that_raises_is_answered_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    rclpy.init(args=["--ros-args", "-p", f"robot_description_file:={REPO / 'urdf' / 'quadruped.urdf'}",
                     "-p", "jsb.type:=kinodyn_control/JointStateBroadcaster"])
    node = control_node.ControlNode()
    try:
        assert node.manager is not None
        assert node.manager.controllers["jsb"].state is hw.LifecycleState.ACTIVE

        def broken(*args: object) -> None:
            raise TypeError("a controller bug")

        monkeypatch.setattr(node.manager, "configure", broken)
        monkeypatch.setattr(node.manager, "switch", broken)
        request = ConfigureController.Request(name="jsb")
        answer = node._configure(request, ConfigureController.Response())  # noqa: SLF001  (the service callback)
        assert (answer.ok, answer.message) == (False, "the request failed: TypeError: a controller bug")
        answer = node._switch(SwitchController.Request(), SwitchController.Response())  # noqa: SLF001  (as rclpy calls it)
        assert (answer.ok, answer.message) == (False, "the request failed: TypeError: a controller bug")
        assert node.loop is not None
        assert node.loop.error is None
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def test_switch_timeout_must_be_finite_and_bounds_the_wait_for_the_loop() -> None:
    h = testing.two_joint_arm()
    h.manager.load("pd", testing.JOINT_PD, {"joints": list(testing.ARM_JOINTS)})
    h.manager.configure("pd")
    for timeout in (math.nan, -1.0, math.inf):
        ok, message = h.manager.switch(["pd"], [], timeout=timeout)
        assert not ok
        assert message == ("switch refused: timeout must be a finite number of seconds >= 0 (0 means 1 s), "
                           f"got {timeout}")
    with h.manager.cycle_lock:  # a control cycle that does not end
        ok, message = h.manager.switch(["pd"], [], timeout=0.05)
    assert (ok, message) == (False, "switch refused: the control loop was not between two cycles within "
                                    "timeout 0.05 s")
    assert h.manager.controllers["pd"].state is hw.LifecycleState.INACTIVE
    assert h.manager.switch(["pd"], [], timeout=0.05) == (True, "ok")
    h.send("pd", testing.pd_command([], [], [], [], [], []))
    assert h.messages("warning") == ["rejected command on /pd/commands: the message names no joint; command "
                                     "'j1', 'j2'"]
