"""control_node with the quadruped over DDS, on GenericSystem and on SimulatedSystem.

Each test runs twice: with urdf/quadruped.urdf as shipped (kinodyn_control/GenericSystem) and with the same
text where only the plugin name is kinodyn_control/SimulatedSystem. An external process (this test) sends
JointPDCommand and reads /joint_states and the IMU.

What holds for both plugins: in cycle k the controller computes ``tau_k = clip(effort_ff + kp (position_des -
q_k) + kd (velocity_des - qdot_k), ±80)`` from the state it published in that cycle, and the effort state read
in cycle k+1 is ``tau_k`` (GenericSystem mirrors the command into the effort state in its next ``read``; the
simulator reports the torque it applied). So for two consecutive joint_states messages the second one's
efforts are the PD law evaluated at the first one's positions and velocities: ``pd_law_pairs`` counts the
pairs for which that holds to 1e-9 (with GenericSystem positions and velocities stay at their initial values,
urdf/README.md (c), so every pair holds; with the simulator the robot moves and a pair holds only if no
message was lost in between). Where the physics differ the test body says so: GenericSystem's IMU is the
URDF's initial values, the simulator's measures gravity; the simulated robot falls while no command has
arrived yet, so it is reset to its standing start once commands flow.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import TYPE_CHECKING

import numpy as np
import pytest
import yaml
from kinodyn_control.testing import (
    GENERIC_SYSTEM,
    QUADRUPED_JOINTS,
    QUADRUPED_STANCE,
    SIMULATED_SYSTEM,
    pd_command,
)
from rclpy.qos import QoSProfile
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from kinodyn_interfaces.msg import JointPDCommand
from kinodyn_interfaces.srv import ListControllers, SwitchController
from test.conftest import REPO, wait_for
from test.ros_listener import Listener

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from numpy.typing import ArrayLike

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"
PLUGINS = [GENERIC_SYSTEM, SIMULATED_SYSTEM]
UPDATE_RATE = 500
TIMEOUT = 0.1  # watchdog_timeout [s]
PERIOD_NS = 1_000_000_000 // UPDATE_RATE  # lockstep: simulated time per cycle
LOCKSTEP_WATCHDOG = 0.105  # [s] between two cycle times, so the cycle it trips at is unambiguous
SAFE_KD = 2.0
EFFORT_LIMIT = 80.0  # urdf/README.md: every joint of the quadruped
JOINTS = QUADRUPED_JOINTS
Q0 = QUADRUPED_STANCE
KP, KD = 800.0, 10.0
ZEROS = [0.0] * 12
IMU_INITIAL = {"orientation.w": 1.0, "linear_acceleration.z": 9.81, "angular_velocity.x": 0.25}


def quadruped_urdf_texts() -> tuple[str, str]:
    """(GenericSystem, SimulatedSystem) URDF texts: urdf/quadruped.urdf with the IMU's initial values set to
    IMU_INITIAL (GenericSystem keeps them, so the test sees values that can only have come through the
    hardware interfaces), and the same text with only the plugin name replaced."""
    text = (REPO / "urdf" / "quadruped.urdf").read_text()
    for key, value in IMU_INITIAL.items():
        interface = rf'<state_interface name="{re.escape(key)}">'
        pattern = rf'({interface}\s*<param name="initial_value">)[^<]*(</param>)'
        text, count = re.subn(pattern, rf"\g<1>{value}\g<2>", text)
        assert count == 1, f"urdf/quadruped.urdf has no initial_value on IMU state interface {key}"
    return text, text.replace(GENERIC_SYSTEM, SIMULATED_SYSTEM)


def test_the_two_urdfs_differ_only_in_the_plugin_name() -> None:
    generic, simulated = quadruped_urdf_texts()
    assert generic.count(GENERIC_SYSTEM) == 1
    assert SIMULATED_SYSTEM not in generic
    assert f"<plugin>{GENERIC_SYSTEM}</plugin>" in generic
    assert simulated.replace(SIMULATED_SYSTEM, GENERIC_SYSTEM) == generic


@pytest.fixture(params=PLUGINS, ids=["generic", "simulated"])
def plugin(request: pytest.FixtureRequest) -> str:
    return request.param


def start_control_node(
    spawn: ProcessSpawner, tmp_path: Path, plugin: str, watchdog_timeout: float = TIMEOUT, **extra: object
) -> subprocess.Popen[bytes]:
    """control_node on the quadruped with ``plugin``; ``extra`` node parameters (e.g. lockstep) added."""
    urdf = tmp_path / "quadruped.urdf"
    urdf.write_text(quadruped_urdf_texts()[PLUGINS.index(plugin)])
    params = {
        **extra,
        "update_rate": UPDATE_RATE,
        "robot_description_file": str(urdf),
        "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"},
        "imu_sensor_broadcaster": {
            "type": "kinodyn_control/ImuSensorBroadcaster",
            "sensor_name": "imu_sensor",
        },
        "leg_pd_controller": {
            "type": "kinodyn_control/JointPDController",
            "joints": list(JOINTS),
            "watchdog_timeout": watchdog_timeout,
            "safe_mode": "zero_effort",
            "safe_kd": SAFE_KD,
        },
        "leg_effort_controller": {
            "type": "kinodyn_control/ForwardCommandController",
            "joints": list(JOINTS),
            "interface_name": "effort",
        },
        "inactive_controllers": ["leg_effort_controller"],
    }
    param_file = tmp_path / "params.yaml"
    param_file.write_text(yaml.safe_dump({"controller_manager": {"ros__parameters": params}}))
    return spawn([str(CONTROL_NODE), "--ros-args", "--params-file", str(param_file)], "control_node")


@pytest.fixture
def control_node(spawn: ProcessSpawner, tmp_path: Path, plugin: str) -> subprocess.Popen[bytes]:
    """control_node on the wall-clock loop."""
    return start_control_node(spawn, tmp_path, plugin)


@pytest.fixture
def lockstep_control_node(spawn: ProcessSpawner, tmp_path: Path, plugin: str) -> subprocess.Popen[bytes]:
    """control_node in lockstep (docs/nodes/control_node.md): each cycle waits for the command answering its
    state, so what a test sees is a function of simulated time only, whatever the machine's load."""
    return start_control_node(spawn, tmp_path, plugin, watchdog_timeout=LOCKSTEP_WATCHDOG, lockstep=True,
                              lockstep_timeout=0.5)


@pytest.fixture
def client() -> Iterator[Listener]:
    node = Listener("control_node_test")
    try:
        yield node
    finally:
        node.close()


def log_text(proc: subprocess.Popen[bytes]) -> str:
    return proc.log_path.read_text()


def pd(
    position: ArrayLike,
    effort: ArrayLike,
    kp: ArrayLike = KP,
    kd: ArrayLike = KD,
    velocity: ArrayLike = 0.0,
    names: Sequence[str] = JOINTS,
) -> JointPDCommand:
    """A JointPDCommand; scalar gains and velocity apply to every joint."""
    n = len(names)
    return pd_command(names, position, np.broadcast_to(velocity, n), effort, np.broadcast_to(kp, n),
                      np.broadcast_to(kd, n))


def pd_law(cmd: JointPDCommand, state: JointState) -> np.ndarray:
    """The JointPDController's effort for ``state`` (joint_states order), saturated at the effort limit."""
    order = [list(cmd.name).index(j) for j in state.name]
    position, velocity, effort, kp, kd = (np.array(getattr(cmd, f))[order] for f in
                                          ("position", "velocity", "effort", "kp", "kd"))
    tau = effort + kp * (position - np.array(state.position)) + kd * (velocity - np.array(state.velocity))
    return np.clip(tau, -EFFORT_LIMIT, EFFORT_LIMIT)


def pd_law_pairs_of(
    pairs: Sequence[tuple[JointState, float]], cmd: JointPDCommand, joints: slice = slice(None),
) -> int:
    """Message pairs ``(a, b)`` whose second efforts are the PD law of ``cmd`` at the first's state."""
    return sum(bool(np.all(np.abs(np.array(b.effort)[joints] - pd_law(cmd, a)[joints]) < 1e-9))
               for a, b in pairs)


def pd_law_pairs(states: list[JointState], cmd: JointPDCommand, joints: slice = slice(None)) -> int:
    """Consecutive message pairs whose second efforts are the PD law of ``cmd`` at the first's state."""
    return pd_law_pairs_of(itertools.pairwise(states), cmd, joints)


class Session:
    def __init__(self, client: Listener, plugin: str) -> None:
        self.client, self.plugin = client, plugin
        self.states: list[JointState] = []
        self.imu: list[Imu] = []
        client.node.create_subscription(JointState, "/joint_states", self._on_state, QoSProfile(depth=50))
        client.node.create_subscription(
            Imu, "/imu_sensor_broadcaster/imu", self.imu.append, QoSProfile(depth=50)
        )
        self.pub = client.node.create_publisher(
            JointPDCommand, "/leg_pd_controller/commands", QoSProfile(depth=10)
        )

    def _on_state(self, msg: JointState) -> None:
        self.states.append(msg)

    def send_until(self, msg: JointPDCommand, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        def step() -> bool:
            self.pub.publish(msg)
            return predicate()

        return self.client.spin_until(step, timeout)

    def establish(self, cmd: JointPDCommand) -> None:
        """Send ``cmd`` until the PD law holds on 10 message pairs; the simulated robot, which fell while it
        had no command, is first reset to its standing start (a fall can leave joints on their limits, where
        the controller rightly withholds torque)."""
        if self.plugin == SIMULATED_SYSTEM:
            assert self.send_until(cmd, lambda: self.states and any(self.states[-1].effort))
            cli = self.client.node.create_client(Trigger, "/quadruped_system/reset")
            assert cli.wait_for_service(timeout_sec=10.0)
            future = cli.call_async(Trigger.Request())
            assert self.send_until(cmd, future.done)
            assert future.result().success
        start = len(self.states)
        assert self.send_until(cmd, lambda: pd_law_pairs(self.states[start:], cmd) >= 10), (
            self.states[-1] if self.states else "no joint states")


def stamp_ns(msg: JointState | Imu) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


class LockstepSession(Session):
    """A Session against control_node in lockstep: every joint state is answered with ``command`` stamped
    with that state's stamp (docs/nodes/control_node.md, "Lockstep"), and ``preceded_by`` (if any) is sent
    just before it. The states are kept one per stamp (a state re-published while the manager waits is a
    copy, answered again as the protocol asks), so a test judges simulated time and message content, not
    wall-clock time."""

    def __init__(self, client: Listener, plugin: str) -> None:
        self.command: JointPDCommand | None = None
        self.preceded_by: JointPDCommand | None = None
        self.runs = 0  # run_for calls so far
        # state stamp [ns] -> (the run_for call, command, preceded_by) that answered it
        self.answered: dict[int, tuple[int, JointPDCommand, JointPDCommand | None]] = {}
        super().__init__(client, plugin)

    def _on_state(self, msg: JointState) -> None:
        if not self.states or stamp_ns(msg) > stamp_ns(self.states[-1]):
            self.states.append(msg)
            self._answer()
        elif stamp_ns(msg) == stamp_ns(self.states[-1]) and stamp_ns(msg) in self.answered:
            # re-published: the manager still waits, so the answer was lost (sent before discovery matched
            # the publisher, say); the same answer again (DDS keeps one writer's order, so this copy arrives
            # before the next state and the answers stay in order)
            self._send(msg, *self.answered[stamp_ns(msg)][1:])

    def _answer(self) -> None:
        """Answer the latest state if it has no answer yet."""
        if self.command is None or not self.states or stamp_ns(self.states[-1]) in self.answered:
            return
        state = self.states[-1]
        self.answered[stamp_ns(state)] = (self.runs, self.command, self.preceded_by)
        self._send(state, self.command, self.preceded_by)

    def _send(self, state: JointState, command: JointPDCommand, preceded_by: JointPDCommand | None) -> None:
        for msg in (preceded_by, command):
            if msg is not None:
                msg.header.stamp = state.header.stamp
                self.pub.publish(msg)

    def run_for(self, cmd: JointPDCommand, seconds: float, timeout: float = 60.0) -> list[JointState]:
        """Answer with ``cmd`` for ``seconds`` of simulated time; the states it answered, in order, each one
        control period after the previous one (no cycle lost or repeated)."""
        self.command, self.runs = cmd, self.runs + 1
        run = self.runs
        self._answer()

        def answered() -> list[JointState]:
            return [m for m in self.states if self.answered.get(stamp_ns(m), (None,))[0] == run]

        def done() -> bool:
            states = answered()
            return bool(states) and stamp_ns(states[-1]) - stamp_ns(states[0]) >= round(seconds * 1e9)

        assert self.client.spin_until(done, timeout), f"lockstep stalled at {self.states[-1].header.stamp}"
        states = answered()
        assert np.all(np.diff([stamp_ns(m) for m in states]) == PERIOD_NS)
        return states

    def imu_at(self, stamps: list[int], timeout: float = 10.0) -> list[Imu]:
        """The IMU messages of the cycles stamped ``stamps``, one each."""
        def by_stamp() -> dict[int, Imu]:
            return {stamp_ns(m): m for m in self.imu}

        assert self.client.spin_until(lambda: set(stamps) <= set(by_stamp()), timeout), sorted(by_stamp())
        return [by_stamp()[t] for t in stamps]


def test_pd_commands_joint_states_and_imu(
    lockstep_control_node: subprocess.Popen[bytes], client: Listener, plugin: str,
) -> None:
    s = LockstepSession(client, plugin)
    # the node's start-up included (a loaded machine)
    assert client.spin_until(lambda: s.states and s.imu, 120.0), log_text(lockstep_control_node)
    first, imu = s.states[0], s.imu[0]
    assert stamp_ns(first) == stamp_ns(imu) == 0  # lockstep: the first cycle waits for its command
    assert list(first.name) == JOINTS
    assert imu.header.frame_id == "imu_link"
    if plugin == GENERIC_SYSTEM:  # mock hardware: the URDF's initial values, and the command mirrored
        assert (list(first.position), list(first.velocity), list(first.effort)) == (Q0, ZEROS, ZEROS)
        assert (imu.orientation.w, imu.linear_acceleration.z, imu.angular_velocity.x) == (1.0, 9.81, 0.25)
        assert (imu.orientation.x, imu.angular_velocity.y, imu.linear_acceleration.x) == (0.0, 0.0, 0.0)

    desired = [q + (0.05 if j.endswith("HFE") else 0.0) for q, j in zip(Q0, JOINTS, strict=True)]
    ff = [0.5 * k for k in range(12)]
    cmd = pd(desired, ff, velocity=0.2)
    states = s.run_for(cmd, 0.1)  # 50 cycles: each state's efforts are the law at the state before
    assert pd_law_pairs(states, cmd) == len(states) - 1 >= 50
    if plugin == GENERIC_SYSTEM:  # states stay at their initial values: the published effort is the law at Q0
        expected = [f + KP * (d - q) + KD * 0.2 for f, d, q in zip(ff, desired, Q0, strict=True)]
        np.testing.assert_allclose(states[-1].effort, expected, rtol=0, atol=1e-12)

    # joints are matched by name, not by position: the reversed message gives the same law
    r = slice(None, None, -1)
    states = s.run_for(pd(desired[r], ff[r], velocity=0.2, names=JOINTS[r]), 0.1)
    assert pd_law_pairs(states, cmd) == len(states) - 1 >= 50

    if plugin == SIMULATED_SYSTEM:  # the simulated robot stands on the PD law, and its IMU measures gravity
        states = s.run_for(cmd, 1.0)
        position = np.array(states[-1].position)
        assert np.abs(position - desired).max() < 0.1, position
        # At rest (no feed-forward, no desired velocity: cmd's kd * 0.2 and ff keep the legs working) the
        # accelerometer measures gravity's reaction in its own axes, C_world_imu^T [0, 0, g], averaged over
        # 0.1 s of simulated time (50 cycles at 500 Hz: the soft contacts vibrate by a few 0.1 m/s^2). The
        # body sways fore and aft at ~2 Hz after the change of command, its 0.1 s means decaying from 0.6 to
        # 0.2 m/s^2 after 1 s and to 0.02 m/s^2 after 3 s: it is at rest after 3 s.
        states = s.run_for(pd(desired, [0.0] * 12), 3.0)
        window = s.imu_at([stamp_ns(m) for m in states[-50:]])
        orientation = window[-1].orientation
        assert orientation.w == pytest.approx(1.0, abs=1e-3)
        quat = [orientation.x, orientation.y, orientation.z, orientation.w]
        gravity_in_imu = Rotation.from_quat(quat).inv().apply([0.0, 0.0, 9.81])
        measured = np.mean([[m.linear_acceleration.x, m.linear_acceleration.y, m.linear_acceleration.z]
                            for m in window], axis=0)
        print(f"\nIMU at rest, mean of the last 50 cycles: {measured} against {gravity_in_imu}")
        np.testing.assert_allclose(measured, gravity_in_imu, rtol=0, atol=0.05)

    # the service lists the controllers with their claims
    cli = client.node.create_client(ListControllers, "/controller_manager/list_controllers")
    assert cli.wait_for_service(timeout_sec=10.0)
    future = cli.call_async(ListControllers.Request())
    assert client.spin_until(future.done, 10.0)
    states = {c.name: c for c in future.result().controller}
    assert {n: c.state for n, c in states.items()} == {
        "joint_state_broadcaster": "active",
        "imu_sensor_broadcaster": "active",
        "leg_pd_controller": "active",
        "leg_effort_controller": "inactive",
    }
    assert list(states["leg_pd_controller"].claimed_interfaces) == [f"{j}/effort" for j in JOINTS]


def test_second_claim_refused_over_service(control_node: subprocess.Popen[bytes], client: Listener) -> None:
    cli = client.node.create_client(SwitchController, "/controller_manager/switch_controller")
    assert cli.wait_for_service(timeout_sec=120.0), log_text(control_node)  # the node's start-up included
    future = cli.call_async(
        SwitchController.Request(
            activate_controllers=["leg_effort_controller"], strictness=SwitchController.Request.STRICT
        )
    )
    assert client.spin_until(future.done, 10.0)
    result = future.result()
    assert not result.ok
    assert (
        "Unable to activate controller 'leg_effort_controller' since the command interface "
        "'LF_HAA/effort' is "
        "currently claimed by controller 'leg_pd_controller'"
    ) in result.message
    # deactivating the holder in the same switch hands the interfaces over
    future = cli.call_async(
        SwitchController.Request(
            activate_controllers=["leg_effort_controller"],
            deactivate_controllers=["leg_pd_controller"],
            strictness=2,
        )
    )
    assert client.spin_until(future.done, 10.0)
    assert future.result().ok, future.result().message


UNTOUCHED = slice(6, 12)  # joints no bad command below breaks


@pytest.mark.parametrize(
    ("bad", "log"),
    [
        (lambda m: m.position.__setitem__(3, math.nan), "non-finite values in position"),
        (lambda m: m.kp.pop(), "kp has 11 values for 12 names"),
        (lambda m: m.name.__setitem__(0, "LF_WHEEL"), "joint(s) 'LF_WHEEL' not commanded by this controller"),
        (lambda m: m.effort.__setitem__(5, 81.0), "out of limits: LH_KFE effort 81.0 outside ±80.0"),
        (lambda m: m.position.__setitem__(1, 2.5), "out of limits: LF_HFE position 2.5 outside [-2.0, 2.0]"),
    ],
    ids=["nan", "wrong_length", "unknown_joint", "effort_limit", "position_limit"],
)
def test_bad_command_rejected_node_keeps_running(
    lockstep_control_node: subprocess.Popen[bytes],
    client: Listener,
    plugin: str,
    bad: Callable[[JointPDCommand], object],
    log: str,
) -> None:
    s = LockstepSession(client, plugin)
    good = pd(Q0, [1.0] * 12)
    s.run_for(good, 0.02)
    intact = pd(Q0, [7.0] * 12)  # what the bad command would do on the joints it leaves intact
    wrong = pd(Q0, [7.0] * 12)
    bad(wrong)
    s.preceded_by = wrong  # each of these cycles gets the bad command, then the good one
    states = s.run_for(good, 0.02)
    s.preceded_by = None
    assert wait_for(lambda: log in log_text(lockstep_control_node), 5.0), log_text(lockstep_control_node)
    assert log_text(lockstep_control_node).count(log) == 1  # one line per distinct problem
    assert lockstep_control_node.poll() is None
    # the bad command was never applied: the good law held in every cycle, the bad one in none
    assert pd_law_pairs(states, good) == len(states) - 1 >= 10
    assert pd_law_pairs(states, intact, UNTOUCHED) == 0
    after = pd(Q0, [2.0] * 12)  # and the next good command is applied
    states = s.run_for(after, 0.02)
    assert pd_law_pairs(states, after) == len(states) - 1 >= 10


def test_lockstep_refuses_a_command_of_another_stamp(
    lockstep_control_node: subprocess.Popen[bytes], client: Listener, plugin: str
) -> None:
    """A command stamped 0.3 s ahead of the state the cycle waits for, and one answering an earlier cycle,
    are refused with one line each naming topic, stamp and the expected stamp; the cycle keeps waiting (its
    state re-published, no later state), nothing trips the watchdog; the answer of the right stamp releases
    it and its law is applied from that cycle on."""
    s = LockstepSession(client, plugin)
    cmd = pd(Q0, [3.0] * 12)
    s.run_for(cmd, 0.02)
    s.command = None  # no more answers: the next cycle waits for its command
    waiting = stamp_ns(s.states[-1]) + PERIOD_NS
    assert client.spin_until(lambda: stamp_ns(s.states[-1]) == waiting, 10.0)
    copies: list[int] = []
    client.node.create_subscription(JointState, "/joint_states", lambda m: copies.append(stamp_ns(m)),
                                    QoSProfile(depth=50))
    for stamp, side in ((waiting + 150 * PERIOD_NS, "ahead of"), (waiting - PERIOD_NS, "behind")):
        wrong = pd(Q0, [-5.0] * 12)
        wrong.header.stamp.sec, wrong.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        s.pub.publish(wrong)
        log = (f"rejected command on /leg_pd_controller/commands: header.stamp {stamp / 1e9:.9f} s is {side} "
               f"the state waiting for its command, t = {waiting / 1e9:.9f} s")
        assert wait_for(lambda text=log: text in log_text(lockstep_control_node), 10.0), \
            log_text(lockstep_control_node)
    # still waiting: the state of that cycle is re-published (every lockstep_timeout), no later one comes
    # (the new subscription's discovery included)
    assert client.spin_until(lambda: copies.count(waiting) >= 2, 60.0)
    assert stamp_ns(s.states[-1]) == waiting
    assert max(copies) == waiting
    assert "no command for" not in log_text(lockstep_control_node)  # the watchdog did not trip
    after = pd(Q0, [2.0] * 12)
    states = s.run_for(after, 0.02)
    assert stamp_ns(states[0]) == waiting  # the waiting cycle was answered, then stepped
    assert pd_law_pairs(states, after) == len(states) - 1 >= 10
    assert lockstep_control_node.poll() is None
