"""Hardware layer: description parsing, component lifecycle, plugin registry, GenericSystem behaviours.

Each GenericSystem test mirrors one sentence of mock_components/GenericSystem's documented behaviour, with
values computed by hand from that sentence.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest
from kinodyn_control.hardware.component import Actuator, Sensor, System
from kinodyn_control.hardware.description import HardwareInfo, parse_robot_description
from kinodyn_control.hardware.types import IMU_INTERFACES, CallbackReturn, LifecycleState, ReturnType
from kinodyn_control.lifecycle import LifecycleError
from kinodyn_control.manager import HardwareError
from kinodyn_control.registry import HARDWARE_GROUP, PluginError, hardware_registry
from kinodyn_control.testing import (
    GENERIC_SYSTEM,
    QUADRUPED_JOINTS,
    QUADRUPED_STANCE,
    Harness,
    joint,
    param,
    robot_xml,
    system_block,
)

from kinodyn import URDFError

DT = 0.002
URDF_DIR = Path(__file__).resolve().parents[3] / "urdf"


# --- description --------------------------------------------------------------------------------------------
def test_quadruped_description_matches_urdf_readme() -> None:
    text = (URDF_DIR / "quadruped.urdf").read_text()
    d = parse_robot_description(text)
    (hw,) = d.hardware
    assert (hw.name, hw.type, hw.plugin, hw.params) == ("quadruped_system", "system", GENERIC_SYSTEM, {})
    assert hw.original_xml == text  # the whole URDF, for components that simulate the robot
    assert [j.name for j in hw.joints] == QUADRUPED_JOINTS
    nominal = dict(zip(QUADRUPED_JOINTS, QUADRUPED_STANCE, strict=True))
    for j in hw.joints:
        (cmd,) = j.command_interfaces
        assert (cmd.name, cmd.min, cmd.max) == ("effort", -80.0, 80.0)
        assert [s.name for s in j.state_interfaces] == ["position", "velocity", "effort"]
        assert [s.initial_value for s in j.state_interfaces] == [nominal[j.name], 0.0, 0.0]
        limits = d.joint_limits[j.name]
        assert (limits.velocity, limits.effort) == (8.0, 80.0)
    (imu,) = hw.sensors
    assert imu.name == "imu_sensor"
    assert imu.params == {"frame_id": "imu_link"}
    assert tuple(s.name for s in imu.state_interfaces) == IMU_INTERFACES
    assert d.joint_limits["LF_KFE"].lower == -2.6
    assert d.joint_limits["LF_KFE"].upper == 0.0


def test_arm7_description_has_position_and_effort_with_urdf_limits() -> None:
    d = parse_robot_description((URDF_DIR / "arm7.urdf").read_text())
    j4 = d.hardware[0].joints[3]
    assert j4.name == "joint4"
    assert [(c.name, c.min, c.max) for c in j4.command_interfaces] == [
        ("position", -3.0718, -0.0698),
        ("effort", -87.0, 87.0),
    ]
    assert j4.state_interfaces[0].initial_value == pytest.approx(-3 * math.pi / 4, abs=1e-12)


def test_planar_description() -> None:
    d = parse_robot_description((URDF_DIR / "planar_2link.urdf").read_text())
    assert [(j.name, [c.name for c in j.command_interfaces]) for j in d.hardware[0].joints] == [
        ("joint1", ["effort"]),
        ("joint2", ["effort"]),
    ]
    assert d.joint_limits["joint2"].effort == 20.0


@pytest.mark.parametrize(
    ("xml", "needle"),
    [
        (robot_xml(""), "no <ros2_control> block"),
        ("<robot", "not well-formed"),
        (robot_xml(system_block(joints=joint("nope", ("position",), ()))), "not joints of the URDF"),
        (
            robot_xml(
                '<ros2_control name="s" type="robot"><hardware><plugin>x</plugin></hardware></ros2_control>'
            ),
            "must be one of system, actuator, sensor",
        ),
        (robot_xml('<ros2_control name="s" type="system"></ros2_control>'), "needs <hardware><plugin>"),
        (
            robot_xml(
                system_block(
                    joints='<joint name="j1"><command_interface name="position">'
                    + param("min", "a")
                    + "</command_interface></joint>"
                )
            ),
            "'a' is not a number",
        ),
        (
            robot_xml(
                system_block(
                    joints='<joint name="j1"><command_interface name="position">'
                    + param("min", 2)
                    + param("max", 1)
                    + "</command_interface></joint>"
                )
            ),
            "min 2.0 is greater",
        ),
        (
            robot_xml(
                system_block(joints='<joint name="j1"><state_interface name="x" data_type="bool"/></joint>')
            ),
            "data_type 'bool' is not supported",
        ),
        (robot_xml(system_block() + system_block()), "used by more than one block"),
    ],
)
def test_description_errors_name_the_problem(xml: str, needle: str) -> None:
    """A bad URDF is kinodyn's URDFError (read_urdf, as for every consumer); a bad block DescriptionError, a
    URDFError too."""
    with pytest.raises(URDFError, match=needle):
        parse_robot_description(xml)


# --- lifecycle ----------------------------------------------------------------------------------------------
class Recorder(System):
    """A system whose hooks return what the test sets, recording the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.results: dict[str, CallbackReturn] = {}
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> object:  # route every on_* hook through the table
        if name.startswith("on_") and name != "on_init":

            def hook() -> CallbackReturn:
                self.calls.append(name)
                return self.results.get(name, CallbackReturn.SUCCESS)

            return hook
        return super().__getattribute__(name)


def _info(kind: str = "system", joints: str = "") -> HardwareInfo:
    xml = robot_xml(
        f'<ros2_control name="c" type="{kind}"><hardware><plugin>p/P</plugin></hardware>'
        f"{joints}</ros2_control>"
    )
    return parse_robot_description(xml).hardware[0]


def test_lifecycle_transitions_in_order() -> None:
    c = Recorder()
    assert c.lifecycle_state is LifecycleState.UNKNOWN
    assert c.initialize(_info()) is LifecycleState.UNCONFIGURED
    assert c.configure() is LifecycleState.INACTIVE
    assert c.activate() is LifecycleState.ACTIVE
    assert c.deactivate() is LifecycleState.INACTIVE
    assert c.cleanup() is LifecycleState.UNCONFIGURED
    assert c.shutdown() is LifecycleState.FINALIZED
    assert c.calls == ["on_configure", "on_activate", "on_deactivate", "on_cleanup", "on_shutdown"]


def test_lifecycle_failure_keeps_state_error_goes_through_on_error() -> None:
    c = Recorder()
    c.initialize(_info())
    c.results["on_configure"] = CallbackReturn.FAILURE
    assert c.configure() is LifecycleState.UNCONFIGURED
    assert "on_configure returned FAILURE" in c.last_error
    c.results["on_configure"] = CallbackReturn.SUCCESS
    c.configure()
    c.results["on_activate"] = CallbackReturn.ERROR
    assert c.activate() is LifecycleState.UNCONFIGURED  # on_error SUCCESS -> unconfigured
    assert c.calls[-1] == "on_error"
    c.configure()
    c.results["on_error"] = CallbackReturn.FAILURE
    assert c.activate() is LifecycleState.FINALIZED  # on_error failed -> finalized
    with pytest.raises(LifecycleError, match="cannot configure component 'c' in state 'finalized'"):
        c.configure()


def test_lifecycle_rejects_wrong_order_and_wrong_kind() -> None:
    c = Recorder()
    c.initialize(_info())
    with pytest.raises(LifecycleError, match="activate needs state inactive"):
        c.activate()
    with pytest.raises(LifecycleError, match="plugin 'p/P' is a system component"):
        Recorder().initialize(_info("sensor"))


def test_actuator_needs_exactly_one_joint_and_sensor_has_no_commands() -> None:
    class A(Actuator):
        pass

    a = A()
    assert (
        a.initialize(_info("actuator", joint("j1", ("effort",), ()) + joint("j2", ("effort",), ())))
        is LifecycleState.FINALIZED
    )
    assert "exactly one <joint>" in a.last_error

    class S(Sensor):
        pass

    s = S()
    s.initialize(_info("sensor", '<sensor name="f"><state_interface name="force.x"/></sensor>'))
    assert s.command_interface_descriptions() == []
    assert s.write(0.0, DT) is ReturnType.OK


# --- registry -----------------------------------------------------------------------------------------------
def test_registry_lists_known_plugins_for_unknown_name() -> None:
    with pytest.raises(PluginError, match=r"known plugins: .*kinodyn_control/GenericSystem"):
        hardware_registry().load("acme/Robot")


def test_third_party_plugin_found_through_entry_points(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A package installed elsewhere adds a component by declaring an entry point (here a dist-info on
    sys.path)."""
    (tmp_path / "acme_hw.py").write_text(
        textwrap.dedent("""
        from kinodyn_control.hardware.generic_system import GenericSystem
        class AcmeSystem(GenericSystem):
            pass
    """)
    )
    dist = tmp_path / "acme_hw-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-hw\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{HARDWARE_GROUP}]\nacme/AcmeSystem = acme_hw:AcmeSystem\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = hardware_registry()
    assert "acme/AcmeSystem" in registry.names()
    assert registry.load("acme/AcmeSystem").__name__ == "AcmeSystem"


# --- GenericSystem ------------------------------------------------------------------------------------------
def _generic(harness: type[Harness], params: str = "", joints: str = "", extra: str = "",
             joint_names: tuple[str, ...] = ("j1", "j2")) -> Harness:
    h = harness(robot_xml(system_block(params, joints, extra), joint_names))
    h.activate_hardware()
    return h


def test_generic_on_configure_nan_to_zero_plus_offset(harness: type[Harness]) -> None:
    j = joint("j1", ("position",), ("position", "velocity"), {"position": 0.5}) + joint(
        "j2", ("position",), ("position",)
    )
    h = _generic(harness, param("position_state_following_offset", 0.25), j)
    assert h.state("j1/position") == 0.5 + 0.25
    assert h.state("j2/position") == 0.0 + 0.25  # NaN initial value -> 0, then the offset
    assert h.state("j1/velocity") == 0.0


def test_generic_mirrors_in_read_not_write_and_ignores_nan(harness: type[Harness]) -> None:
    j = joint("j1", ("position", "velocity", "effort"), ("position", "velocity", "effort"), {"position": 0.1})
    h = _generic(harness, "", j, joint_names=("j1",))
    sys = h.resources.components["sys"]
    h.set_command("j1/position", 0.3)
    h.set_command("j1/effort", -2.0)
    assert sys.write(0.0, DT) is ReturnType.OK
    assert h.state("j1/position") == 0.1  # write does not mirror
    assert sys.read(0.0, DT) is ReturnType.OK
    assert (h.state("j1/position"), h.state("j1/velocity"), h.state("j1/effort")) == (0.3, 0.0, -2.0)
    h.set_command("j1/position", math.nan)  # not set: state kept
    sys.read(0.0, DT)
    assert h.state("j1/position") == 0.3


def test_generic_position_offset_and_custom_interface(harness: type[Harness]) -> None:
    j = joint("j1", ("position",), ("position", "actual_position"))
    h = _generic(harness, param("position_state_following_offset", -0.5), j, joint_names=("j1",))
    h.set_command("j1/position", 0.2)
    h.resources.components["sys"].read(0.0, DT)
    assert h.state("j1/position") == 0.2 - 0.5
    h2 = _generic(
        harness,
        param("position_state_following_offset", -0.5)
        + param("custom_interface_with_following_offset", "actual_position"),
        j,
        joint_names=("j1",),
    )
    assert h2.state("j1/actual_position") == -0.5  # offset on the custom one
    assert h2.state("j1/position") == 0.0
    h2.set_command("j1/position", 0.2)
    h2.resources.components["sys"].read(0.0, DT)
    assert h2.state("j1/actual_position") == 0.2 - 0.5
    assert h2.state("j1/position") == 0.2


def test_generic_infinite_command_is_read_error(harness: type[Harness]) -> None:
    h = _generic(harness, "", joint("j1", ("effort",), ("effort",)), joint_names=("j1",))
    h.set_command("j1/effort", math.inf)
    sys = h.resources.components["sys"]
    assert sys.read(0.0, DT) is ReturnType.ERROR
    assert sys.last_error == "unusable command(s): j1/effort = inf"
    assert h.resources.read(0.0, DT) == ["sys"]  # the resource manager runs on_error -> unconfigured
    assert sys.lifecycle_state is LifecycleState.UNCONFIGURED
    assert not h.resources.command_available("j1/effort")
    assert not h.resources.state_available("j1/effort")


def test_generic_disable_commands_freezes_states(harness: type[Harness]) -> None:
    h = _generic(
        harness,
        param("disable_commands", "true"),
        joint("j1", ("position",), ("position",), {"position": 0.4}),
        joint_names=("j1",),
    )
    h.set_command("j1/position", 0.9)
    h.resources.read(0.0, DT)
    h.resources.read(0.0, DT)
    assert h.state("j1/position") == 0.4
    assert h.messages("warning") == [
        "GenericSystem 'sys': Command propagation is disabled - no values will be returned!"
    ]


def test_generic_mock_sensor_commands_export_same_name(harness: type[Harness]) -> None:
    imu = (
        '<sensor name="imu">'
        + "".join(f'<state_interface name="{k}"/>' for k in IMU_INTERFACES)
        + "</sensor>"
    )
    h = _generic(
        harness, param("mock_sensor_commands", "true"), joint("j1", ("effort",), ("effort",)), imu, ("j1",)
    )
    assert [n for n in h.resources.commands.names if n.startswith("imu/")] == [
        f"imu/{k}" for k in IMU_INTERFACES
    ]
    h.set_command("imu/orientation.w", 1.0)
    h.set_command("imu/linear_acceleration.z", 9.81)
    h.resources.read(0.0, DT)
    assert h.state("imu/orientation.w") == 1.0
    assert h.state("imu/linear_acceleration.z") == 9.81
    assert math.isnan(h.state("imu/orientation.x"))  # sensor states are not zeroed on configure
    plain = _generic(harness, "", joint("j1", ("effort",), ("effort",)), imu, ("j1",))
    assert not any(n.startswith("imu/") for n in plain.resources.commands.names)


def test_generic_gpio_commands_mirror(harness: type[Harness]) -> None:
    gpio = (
        '<gpio name="vac"><command_interface name="on"/><state_interface name="on"/>'
        '<state_interface name="p"/></gpio>'
    )
    h = _generic(harness, param("mock_gpio_commands", "true"), "", gpio, ("j1",))
    assert "vac/p" in h.resources.commands.index
    assert "vac/on" in h.resources.commands.index
    h.set_command("vac/on", 1.0)
    h.set_command("vac/p", 0.7)
    h.resources.read(0.0, DT)
    assert (h.state("vac/on"), h.state("vac/p")) == (1.0, 0.7)


def test_generic_calculate_dynamics_position_mode(harness: type[Harness]) -> None:
    j = joint("j1", ("position", "velocity"), ("position", "velocity", "acceleration"), {"position": 0.0})
    h = _generic(harness, param("calculate_dynamics", "true"), j, joint_names=("j1",))
    sys = h.resources.components["sys"]
    h.set_command("j1/position", 0.01)
    sys.read(0.0, DT)
    assert h.state("j1/velocity") == pytest.approx(0.01 / DT, rel=1e-15)
    assert h.state("j1/acceleration") == pytest.approx(0.01 / DT / DT, rel=1e-15)
    h.set_command("j1/position", 0.03)
    sys.read(0.0, DT)
    v2 = (0.03 - 0.01) / DT
    assert h.state("j1/velocity") == pytest.approx(v2, rel=1e-13)
    assert h.state("j1/acceleration") == pytest.approx((v2 - 0.01 / DT) / DT, rel=1e-12)


def test_generic_calculate_dynamics_velocity_and_acceleration_modes(harness: type[Harness]) -> None:
    j = joint("j1", ("velocity",), ("position", "velocity", "acceleration"), {"position": 1.0})
    j += joint("j2", ("acceleration",), ("position", "velocity", "acceleration"), {"position": 2.0})
    h = _generic(harness, param("calculate_dynamics", "true"), j)
    sys = h.resources.components["sys"]
    assert sys.perform_command_mode_switch(["j1/velocity", "j2/acceleration"], []) is ReturnType.OK
    h.set_command("j1/velocity", 0.5)
    h.set_command("j2/acceleration", 4.0)
    sys.read(0.0, DT)  # Euler step with the previous velocity (0), then the new velocity / acceleration
    assert (h.state("j1/position"), h.state("j1/velocity"), h.state("j1/acceleration")) == (
        1.0,
        0.5,
        0.5 / DT,
    )
    assert (h.state("j2/position"), h.state("j2/velocity"), h.state("j2/acceleration")) == (
        2.0,
        4.0 * DT,
        4.0,
    )
    sys.read(0.0, DT)
    assert h.state("j1/position") == 1.0 + 0.5 * DT
    assert h.state("j1/acceleration") == 0.0
    assert h.state("j2/position") == 2.0 + 4.0 * DT * DT
    assert h.state("j2/velocity") == 2 * 4.0 * DT


def test_generic_calculate_dynamics_refuses_two_modes_on_one_joint(harness: type[Harness]) -> None:
    j = joint("j1", ("position", "velocity"), ("position", "velocity"))
    h = _generic(harness, param("calculate_dynamics", "true"), j, joint_names=("j1",))
    sys = h.resources.components["sys"]
    assert sys.prepare_command_mode_switch(["j1/position", "j1/velocity"], []) is ReturnType.ERROR
    assert "joint 'j1' would be controlled through position, velocity" in sys.last_error
    plain = _generic(harness, "", j, joint_names=("j1",))
    assert (
        plain.resources.components["sys"].prepare_command_mode_switch(["j1/position", "j1/velocity"], [])
        is ReturnType.OK
    )


def test_generic_mimic_joint(harness: type[Harness]) -> None:
    j = joint("j1", ("position", "velocity"), ("position", "velocity"))
    j += joint(
        "j2",
        (),
        ("position", "velocity"),
        params=param("mimic", "j1") + param("multiplier", -2) + param("offset", 0.1),
    )
    h = _generic(harness, "", j)
    h.set_command("j1/position", 0.3)
    h.set_command("j1/velocity", 0.4)
    h.resources.read(0.0, DT)
    assert h.state("j2/position") == pytest.approx(0.1 - 2 * 0.3, abs=1e-16)
    assert h.state("j2/velocity") == -2 * 0.4


def test_generic_bad_parameters(harness: type[Harness]) -> None:
    with pytest.raises(HardwareError, match=r"unknown hardware parameter.*calculate_dynamix"):
        harness(robot_xml(system_block(param("calculate_dynamix", "true"))))
    with pytest.raises(HardwareError, match="calculate_dynamics must be true or false"):
        harness(robot_xml(system_block(param("calculate_dynamics", "yes"))))


def test_generic_deprecated_fake_sensor_commands(harness: type[Harness]) -> None:
    imu = '<sensor name="imu"><state_interface name="orientation.w"/></sensor>'
    h = _generic(harness, param("fake_sensor_commands", "true"), "", imu, ("j1",))
    assert "imu/orientation.w" in h.resources.commands.index
    assert any("'fake_sensor_commands' is deprecated" in m for m in h.messages("warning"))
