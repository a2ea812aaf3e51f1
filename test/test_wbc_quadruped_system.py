"""The quadruped's closed loop over DDS with the estimator closing it (a short version of the acceptance
scenario, docs/closed-loop.md): config/quadruped_wbc.yaml (`kinodyn up`): control_node with SimulatedSystem in
lockstep, state_estimator (contacts from the wbc's schedule), the wbc node (legged), state_publisher.

Judged on simulated time and message content: the wbc holds the posture until the estimator's first odometry
(the estimator starts once this test has received hold commands: in lockstep the hold would otherwise end
after a few simulated milliseconds, on a loaded machine before this test's subscription to the commands had
matched), then stands (ground-truth height within 1 cm of the stance's); a bad live parameter is refused
with its reason and `locomotion_mode: trot` is accepted live; it then trots in place (the schedule alternates
between the two diagonal pairs, the base stays above 60 % of its height and near where it stood); every joint
state is answered by a finite command stamped with it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import yaml
from kinodyn.control.locomotion import LocomotionParameters
from kinodyn.control.pd_stability import sampled_pd_gains
from kinodyn_common.raw_messages import (
    ContactStatesReader,
    ContactStatesView,
    JointPDCommandReader,
    JointPDCommandView,
    JointStateReader,
    OdometryReader,
    OdometryView,
)
from kinodyn_tools.launcher.graph import load_graph
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

from kinodyn import Model
from kinodyn_interfaces.msg import ContactStates, JointPDCommand
from test.conftest import REPO
from test.ros_listener import Listener

if TYPE_CHECKING:
    from collections.abc import Callable
    from subprocess import Popen

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

GRAPH = REPO / "config" / "quadruped_wbc.yaml"


def assert_the_derived_hold(held: list[JointPDCommandView]) -> None:
    """Every hold command carries the wbc's default hold gains in GRAPH: per joint from its URDF at its
    posture, a PD sampled every pd_horizon at half the stability limit (kinodyn.control.pd_stability)."""
    wbc = next(node for node in load_graph(GRAPH).nodes if node.name == "wbc")
    model = Model.from_urdf(Path(wbc.parameters["robot_description_file"]).read_text(), floating_base=True)
    q = model.neutral()
    q[7:] = wbc.parameters["posture"]
    kp, kd = sampled_pd_gains(model, q, LocomotionParameters().pd_horizon, 0.5)  # hold_stability's default
    assert held
    for command in held:  # kp / kd^2 = 1 / (4 I): the joint inertia, whatever tick the PD assumed
        ratio = np.asarray(command.kp) / np.asarray(command.kd) ** 2
        np.testing.assert_allclose(ratio, kp / kd**2, rtol=1e-9)
        np.testing.assert_allclose(command.kd, kd, rtol=0.1)  # a tick within 10 % of pd_horizon's default
STANDING_HEIGHT = 0.5252  # urdf/README.md: base height with the foot spheres on the ground
NS = 1_000_000_000
TROT = 1.0  # s of simulated time judged while trotting
MARK = 1234.5  # pose.covariance[0] of the second odometry publisher's messages
WBC_DEPTH = 2000  # messages the wbc's publishers keep (graph_nodes): 4 s of simulated time at 500 Hz
PACE = 0.25  # the lockstep's lockstep_max_speed in this test's graph (graph_nodes)
LISTENER_DEPTH = 20_000  # messages this test's subscriptions keep: 40 s at 500 Hz, longer than a run (the
# listener, five 500 Hz topics in Python, falls seconds behind the graph on a loaded machine: it loses none)


def graph_nodes() -> list[dict[str, Any]]:  # Any: YAML values
    """GRAPH's nodes, the wbc's publishers keeping their last WBC_DEPTH messages (``qos_depth``) and the
    lockstep at most PACE times real time (``lockstep_max_speed``; in lockstep the cycles and their results
    are the same at any pace): this test's listener, one Python process taking five 500 Hz topics, falls
    behind a graph at real time on a loaded machine (under two busy loops and the other processes of a
    shared machine, by tens of seconds of simulated time, more than its history keeps)."""
    nodes: list[dict[str, Any]] = yaml.safe_load(GRAPH.read_text())["nodes"]
    by_name = {node["name"]: node for node in nodes}
    by_name["wbc"]["parameters"]["qos_depth"] = WBC_DEPTH
    by_name["controller_manager"]["parameters"]["lockstep_max_speed"] = PACE
    return nodes


def start_graph(spawn: ProcessSpawner, directory: Path) -> Popen[bytes]:
    """GRAPH (``graph_nodes``) in one launcher; the graph file is written to ``directory``."""
    kinodyn = shutil.which("kinodyn")
    assert kinodyn is not None, "the kinodyn console script is not on PATH: source scripts/env.sh"
    graph = directory / "quadruped_wbc.yaml"
    graph.write_text(yaml.safe_dump({"nodes": graph_nodes()}, sort_keys=False))
    return spawn([kinodyn, "up", str(graph)], "launcher")


def start_holding(spawn: ProcessSpawner, directory: Path, client: Listener,
                  commands: dict[int, JointPDCommandView]
                  ) -> tuple[Popen[bytes], Popen[bytes], list[JointPDCommandView]]:
    """GRAPH (``graph_nodes``) in two launchers: all but its state_estimator first (the wbc holds the
    posture, and the lockstep runs on its commands, for as long as no odometry comes), then, once ``client``
    has received commands into ``commands``, the estimator alone. Both graph files are written to
    ``directory``. Returns the two launchers and the commands received before the estimator started: holds
    whatever the timing (stamps before the first estimate received here are not: this process's
    subscription may match the estimator's new publisher after its first messages, when the wbc is already
    blending into control)."""
    kinodyn = shutil.which("kinodyn")
    assert kinodyn is not None, "the kinodyn console script is not on PATH: source scripts/env.sh"
    raw = {"nodes": graph_nodes()}
    estimator = [node for node in raw["nodes"] if node["executable"] == "state_estimator"]
    assert len(estimator) == 1, raw["nodes"]
    rest, alone = directory / "quadruped_wbc_holding.yaml", directory / "quadruped_wbc_estimator.yaml"
    rest.write_text(yaml.safe_dump({"nodes": [n for n in raw["nodes"] if n is not estimator[0]]},
                                   sort_keys=False))
    alone.write_text(yaml.safe_dump({"nodes": estimator}, sort_keys=False))
    launcher = spawn([kinodyn, "up", str(rest)], "launcher")
    assert client.spin_until(lambda: commands, 120.0), launcher.log_path.read_text()
    held = list(commands.values())
    return launcher, spawn([kinodyn, "up", str(alone)], "estimator"), held


def stamp_ns(msg: JointState | JointPDCommand | Odometry | OdometryView | JointPDCommandView
             | ContactStatesView) -> int:
    return msg.header.stamp.sec * NS + msg.header.stamp.nanosec


def reading(reader: OdometryReader | JointStateReader | ContactStatesReader | JointPDCommandReader,
            take: Callable[[Any], object]) -> Callable[[bytes], None]:  # Any: the reader's view
    """A raw subscription's callback: ``take`` each message as ``reader`` reads it."""
    return lambda raw: take(reader.read(raw))


def lift_off(schedule: list[ContactStatesView]) -> float:
    """The stamp [s] of the first schedule with a foot up (a gait's start); infinite before one."""
    return next((stamp_ns(m) / NS for m in schedule if not all(m.in_contact)), np.inf)


def set_parameter(client: Listener, name: str, value: ParameterValue) -> tuple[bool, str]:
    service = client.node.create_client(SetParameters, "/wbc/set_parameters")
    assert service.wait_for_service(timeout_sec=30)
    future = service.call_async(SetParameters.Request(parameters=[Parameter(name=name, value=value)]))
    assert client.spin_until(future.done, 30)
    result = future.result().results[0]
    return result.successful, result.reason


def test_quadruped_stands_on_the_estimate_then_trots_in_place(spawn: ProcessSpawner, tmp_path: Path) -> None:
    client = Listener("wbc_quadruped_test")  # subscribed before the graph starts: discovery has time to match
    try:
        truth: list[OdometryView] = []
        estimate: list[OdometryView] = []
        states: list[int] = []
        schedule: list[ContactStatesView] = []
        commands: dict[int, JointPDCommandView] = {}
        node = client.node
        qos = QoSProfile(depth=LISTENER_DEPTH)
        # taken serialized and read into numpy (kinodyn_common.raw_messages), as the scenario runner does: the
        # listener keeps up with five 500 Hz topics on a loaded machine
        for msgtype, topic, reader, take in (
            (Odometry, "/quadruped_system/odometry", OdometryReader(), truth.append),
            (Odometry, "/odometry/filtered", OdometryReader(), estimate.append),
            (JointState, "/joint_states", JointStateReader(), lambda m: states.append(stamp_ns(m))),
            (ContactStates, "/contact_schedule", ContactStatesReader(), schedule.append),
            (JointPDCommand, "/leg_pd_controller/commands", JointPDCommandReader(),
             lambda m: commands.setdefault(stamp_ns(m), m)),
        ):
            node.create_subscription(msgtype, topic, reading(reader, take), qos, raw=True)
        launcher, estimator, held = start_holding(spawn, tmp_path, client, commands)

        def sim_time() -> float:
            return stamp_ns(truth[-1]) / NS if truth else 0.0

        assert client.spin_until(lambda: estimate, 120.0), (launcher.log_path.read_text(),
                                                            estimator.log_path.read_text())
        t_base = stamp_ns(estimate[0]) / NS
        # hold until the first odometry: the wbc says so, and every command of it received here before the
        # estimator started is the posture hold
        log = launcher.log_path.read_text()
        tail = log[-3000:]
        assert re.search(r"\[wbc\].*no base state on odometry/filtered .*holding the posture", log), tail
        assert_the_derived_hold(held)
        assert client.spin_until(lambda: sim_time() > t_base + 1.6, 120.0), launcher.log_path.read_text()
        log = launcher.log_path.read_text()
        controlling = r"\[wbc\].*base state on odometry/filtered back at t = .*; controlling"
        assert re.search(controlling, log), log[-3000:]
        stood = [float(m.pose[2]) for m in truth if t_base + 1.5 <= stamp_ns(m) / NS]
        assert stood
        assert max(abs(z - STANDING_HEIGHT) for z in stood) < 0.01, (min(stood), max(stood))
        standing_xy = truth[-1].pose[:2].copy()

        bad = set_parameter(client, "period", ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                             double_value=-1.0))
        assert bad == (False, "locomotion parameter period must be a finite number >= 0 (0: derived from the "
                              "robot), got -1.0")
        assert lift_off(schedule) == np.inf  # standing until asked to trot
        trot = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="trot")
        assert set_parameter(client, "locomotion_mode", trot) == (True, "")
        asked = sim_time()
        # judged from the first lift-off (message content: this listener may lag the graph by seconds of
        # simulated time, so its clock when the request was answered says nothing of when the trot began)
        assert client.spin_until(lambda: sim_time() > lift_off(schedule) + 0.5 + TROT, 240.0), \
            launcher.log_path.read_text()
        client.spin_for(0.5)
    finally:
        client.close()
    t_trot = lift_off(schedule)
    window = [m for m in truth if t_trot + 0.5 <= stamp_ns(m) / NS]
    heights = [float(m.pose[2]) for m in window]
    assert min(heights) > 0.6 * STANDING_HEIGHT, min(heights)
    drift = max(float(np.hypot(*(m.pose[:2] - standing_xy))) for m in window)
    assert drift < 0.1, drift
    # the schedule trots: diagonal pairs alternate (LF+RH, LH+RF), two feet down at a time for part of it
    stances = [tuple(m.in_contact) for m in schedule if t_trot + 0.5 <= stamp_ns(m) / NS]
    names = list(schedule[-1].names)
    assert names == ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]
    assert (True, False, False, True) in stances
    assert (False, True, True, False) in stances
    # lockstep: every joint state answered by a finite command stamped with it (from the first command this
    # process received: its subscription may match the wbc's publisher after the joint states')
    judged = [k for k in states if k >= min(commands)]
    answered = [k for k in judged if k in commands]
    assert len(judged) > 1000, (len(answered), len(judged))
    assert len(answered) >= 0.99 * len(judged), (len(answered), len(judged))
    for command in commands.values():
        values = np.array([command.position, command.velocity, command.effort, command.kp, command.kd])
        assert np.isfinite(values).all()
    print(f"quadruped over DDS: estimate from t = {t_base:.3f} s; standing height {np.mean(stood):.4f} m; "
          f"trot asked at t = {asked:.3f} s here, first lift-off at t = {t_trot:.3f} s; trotting: lowest "
          f"base {min(heights):.4f} m, largest drift {drift:.4f} m")


def _finite(command: JointPDCommand) -> bool:
    """Every number of the command is finite."""
    values = np.array([command.position, command.velocity, command.effort, command.kp, command.kd])
    return bool(np.isfinite(values).all())


def _jumped(last: Odometry, state: JointState) -> Odometry:
    """``last`` moved 10 m along x and turned 90 deg about z, stamped with ``state``, marked ``MARK``."""
    odom = Odometry()
    odom.header.stamp = state.header.stamp
    odom.header.frame_id, odom.child_frame_id = "odom", "base_link"
    odom.pose.pose.position.x = last.pose.pose.position.x + 10.0
    odom.pose.pose.position.y = last.pose.pose.position.y
    odom.pose.pose.position.z = last.pose.pose.position.z
    o, turned = last.pose.pose.orientation, odom.pose.pose.orientation
    s = c = np.sqrt(0.5)  # (0, 0, s, c) times o: 90 deg about z
    turned.x, turned.y = c * o.x - s * o.y, c * o.y + s * o.x
    turned.z, turned.w = c * o.z + s * o.w, c * o.w - s * o.z
    odom.pose.covariance[0] = MARK
    return odom


def test_a_second_odometry_jumping_10_m_and_90_deg_is_refused_while_trotting(spawn: ProcessSpawner,
                                                                              tmp_path: Path) -> None:
    """While the quadruped trots, a second publisher on odometry/filtered disagrees with the estimator by
    10 m and 90 deg for 0.5 s of simulated time (one message per joint state, stamped with it). The wbc
    refuses them with one line (the base-state gate, docs/nodes/wbc.md) and the robot trots on: base above
    60 % of its height, roll and pitch within 0.3 rad, every joint state answered by a finite command."""
    client = Listener("wbc_base_gate_test")
    try:
        truth: list[Odometry] = []
        estimate: list[Odometry] = []
        states: list[int] = []
        commands: dict[int, JointPDCommand] = {}
        injecting = [False]
        sent: list[int] = []
        node = client.node
        qos = QoSProfile(depth=LISTENER_DEPTH)
        hostile = node.create_publisher(Odometry, "/odometry/filtered", QoSProfile(depth=10))

        def on_state(msg: JointState) -> None:
            states.append(stamp_ns(msg))
            if injecting[0] and estimate:
                hostile.publish(_jumped(estimate[-1], msg))
                sent.append(stamp_ns(msg))

        node.create_subscription(Odometry, "/quadruped_system/odometry", truth.append, qos)
        node.create_subscription(  # the estimator's own (this test hears its second publisher too)
            Odometry, "/odometry/filtered", lambda m: m.pose.covariance[0] == MARK or estimate.append(m), qos)
        node.create_subscription(JointState, "/joint_states", on_state, qos)
        node.create_subscription(JointPDCommand, "/leg_pd_controller/commands",
                                 lambda m: commands.setdefault(stamp_ns(m), m), qos)
        launcher = start_graph(spawn, tmp_path)

        def sim_time() -> float:
            return stamp_ns(truth[-1]) / NS if truth else 0.0

        # the commands too: judged below from the first one received (min(commands))
        assert client.spin_until(lambda: estimate and commands, 120.0), launcher.log_path.read_text()
        t_base = stamp_ns(estimate[0]) / NS
        assert client.spin_until(lambda: sim_time() > t_base + 1.6, 120.0), launcher.log_path.read_text()
        trot = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="trot")
        assert set_parameter(client, "locomotion_mode", trot) == (True, "")
        t_trot = sim_time()
        assert client.spin_until(lambda: sim_time() > t_trot + 0.5, 240.0), launcher.log_path.read_text()
        for never in ("base state at t", "ahead of this node's clock"):  # trotting never trips the gate
            assert never not in launcher.log_path.read_text()
        injecting[0] = True
        t_inject = sim_time()
        assert client.spin_until(lambda: sim_time() > t_inject + 0.5, 240.0), launcher.log_path.read_text()
        injecting[0] = False
        t_end = sim_time()
        assert client.spin_until(lambda: sim_time() > t_end + 1.0, 240.0), launcher.log_path.read_text()
        client.spin_for(0.5)
    finally:
        client.close()
    log = launcher.log_path.read_text()
    assert len(sent) > 100, len(sent)
    refusals = [line for line in log.splitlines()
                if "ignoring odometry/filtered message: base state at t" in line]
    # one line, then at most one per 10 s of wall time with the count of those not reported
    assert refusals, refusals
    assert "refused: position 10 m from the last accepted base state" in refusals[0], refusals
    assert all(line.endswith("more since the last report)") for line in refusals[1:]), refusals
    window = [m for m in truth if t_trot + 0.5 <= stamp_ns(m) / NS]
    assert stamp_ns(window[-1]) / NS > t_end + 0.9
    heights = [m.pose.pose.position.z for m in window]
    assert min(heights) > 0.6 * STANDING_HEIGHT, min(heights)
    tilt = max(2.0 * np.arcsin(min(1.0, np.hypot(m.pose.pose.orientation.x, m.pose.pose.orientation.y)))
               for m in window)  # the rotation's angle away from upright, yaw aside
    assert tilt < 0.3, tilt
    judged = [k for k in states if k >= min(commands)]
    answered = [k for k in judged if k in commands]
    assert len(answered) >= 0.99 * len(judged), (len(answered), len(judged))
    assert [k for k, command in commands.items() if not _finite(command)] == []
    print(f"second odometry 10 m / 90 deg off for 0.5 s while trotting: {len(sent)} messages refused; lowest "
          f"base {min(heights):.4f} m, largest tilt {tilt:.2e} rad")
