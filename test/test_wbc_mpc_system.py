"""The wbc node with `planner: mpc` over DDS: config/quadruped_mpc.yaml (config/quadruped_wbc.yaml's
control_node with SimulatedSystem in lockstep, state_estimator, wbc, state_publisher, with the MPC planner set
on the wbc node; the two files differ in that parameter only: checked).

Judged on simulated time and message content: once the estimate arrives the robot stands on the MPC-driven
QP (ground-truth height within 1 cm of the stance's), `/wbc/mpc/path` carries one nav_msgs/Path per solve
(stamps `1 / mpc_rate` apart in simulated time), each in `odom` with the horizon's poses one MPC step apart,
starting at the base pose of the estimate stamped as the joint state that started the solve, and staying
there (standing), each with `/wbc/mpc/forces` (one arrow per foot, stamped as the path; standing, the four
arrows up from the feet carry the weight); set to trot live, it trots in place on the MPC (the diagonal
pairs alternate, the body up and near where it stood); the diagnostics report the planner tracking, with
no failed or late solve.
Driven by the scenario runner (as `kinodyn demo quadruped_mpc` does), it stands, trots and follows 0.3 m/s
forward: the runner's figures (velocity tracking, estimator drift), no fall, no refusal.
"""

from __future__ import annotations

import shutil
import threading
from typing import TYPE_CHECKING

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from kinodyn_tools.launcher.graph import load_graph
from kinodyn_tools.scenario.graph import graph_command
from kinodyn_tools.scenario.runner import run_scenario
from kinodyn_tools.scenario.steps import Step
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.msg import ParameterType, ParameterValue
from rclpy.qos import QoSProfile
from visualization_msgs.msg import MarkerArray

from kinodyn_interfaces.msg import ContactStates
from test.conftest import REPO
from test.ros_listener import Listener
from test.test_wbc_quadruped_system import set_parameter

if TYPE_CHECKING:
    from pathlib import Path as FilePath

    from geometry_msgs.msg import PoseStamped

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

GRAPH = REPO / "config" / "quadruped_mpc.yaml"
STANDING_HEIGHT = 0.5252  # urdf/README.md: base height with the foot spheres on the ground
NS = 1_000_000_000
MPC_RATE = 50.0  # the default
HORIZON, STEP = 16, 0.03  # the MPC's defaults (MpcParameters)


def stamp_ns(msg: Odometry | Path | PoseStamped | ContactStates) -> int:
    return msg.header.stamp.sec * NS + msg.header.stamp.nanosec


def assert_graph_is_quadruped_wbc_with_the_mpc() -> None:
    """config/quadruped_mpc.yaml is config/quadruped_wbc.yaml with the wbc's planner set to the MPC."""
    mpc, plain = load_graph(GRAPH), load_graph(REPO / "config" / "quadruped_wbc.yaml")
    for a, b in zip(mpc.nodes, plain.nodes, strict=True):
        keys = a.parameters.keys() | b.parameters.keys()
        changed = {k for k in keys if a.parameters.get(k) != b.parameters.get(k)}
        assert (a.name, a.executable, a.remappings) == (b.name, b.executable, b.remappings)
        assert changed == ({"planner"} if a.name == "wbc" else set()), (a.name, changed)
    assert mpc.nodes[2].parameters["planner"] == "mpc"


def assert_standing_plans_start_at_the_estimate(judged: list[Path], estimate: list[Odometry]) -> None:
    """Each standing plan: in odom, HORIZON steps of STEP, the base where it stands, starting at the estimate
    the wbc got for the plan's stamp."""
    estimate_at = {stamp_ns(m): m.pose.pose.position for m in estimate}
    compared = 0
    for path in judged:
        assert path.header.frame_id == "odom"
        assert len(path.poses) == HORIZON + 1
        times = np.array([stamp_ns(p) for p in path.poses])
        assert times[0] == stamp_ns(path)
        np.testing.assert_allclose(np.diff(times), STEP * NS, atol=1)
        position = np.array([[p.pose.position.x, p.pose.position.y, p.pose.position.z] for p in path.poses])
        assert np.abs(position - position[0]).max() < 0.01  # standing: the base stays where it is
        if stamp_ns(path) in estimate_at:  # the plan starts from the estimate the wbc got for that stamp
            e = estimate_at[stamp_ns(path)]
            np.testing.assert_allclose(position[0], [e.x, e.y, e.z], atol=1e-9)
            compared += 1
    assert compared >= 0.9 * len(judged), (compared, len(judged))


def assert_standing_force_arrows(judged: list[Path], forces: list[MarkerArray]) -> None:
    """Each standing plan's force arrows: one per foot, from the feet, adding up to the weight."""
    arrows = {stamp_ns(m.markers[0]): m.markers for m in forces if m.markers}
    for path in judged:  # standing: every foot down, the arrows (nominal base height per weight) up
        markers = arrows[stamp_ns(path)]
        assert [(m.ns, m.id, m.action, m.header.frame_id) for m in markers] == [
            ("mpc_forces", i, 0, "odom") for i in range(4)]
        start = np.array([[m.points[0].x, m.points[0].y, m.points[0].z] for m in markers])
        vector = np.array([[m.points[1].x - m.points[0].x, m.points[1].y - m.points[0].y,
                            m.points[1].z - m.points[0].z] for m in markers])
        base_z = path.poses[0].pose.position.z  # (odom's origin is where the estimate started)
        assert np.abs(start[:, 2] - (base_z - (STANDING_HEIGHT - 0.03))).max() < 0.02  # the feet, standing
        assert abs(vector[:, 2].sum() / (STANDING_HEIGHT - 0.03) - 1.0) < 0.1  # the weight (base over feet)


def test_the_mpc_stands_and_trots_the_quadruped_and_publishes_its_path(
    spawn: ProcessSpawner, tmp_path: FilePath
) -> None:
    kinodyn = shutil.which("kinodyn")
    assert kinodyn is not None, "the kinodyn console script is not on PATH: source scripts/env.sh"
    assert_graph_is_quadruped_wbc_with_the_mpc()
    graph = GRAPH
    client = Listener("wbc_mpc_test")
    try:
        truth: list[Odometry] = []
        estimate: list[Odometry] = []
        paths: list[Path] = []
        forces: list[MarkerArray] = []
        diagnostics: list[dict[str, str]] = []
        node = client.node
        qos = QoSProfile(depth=2000)
        node.create_subscription(Odometry, "/quadruped_system/odometry", truth.append, qos)
        node.create_subscription(Odometry, "/odometry/filtered", estimate.append, qos)
        node.create_subscription(Path, "/wbc/mpc/path", paths.append, qos)
        node.create_subscription(MarkerArray, "/wbc/mpc/forces", forces.append, qos)
        schedule: list[ContactStates] = []
        node.create_subscription(ContactStates, "/contact_schedule", schedule.append, qos)
        node.create_subscription(
            DiagnosticArray, "/diagnostics",
            lambda m: diagnostics.extend({kv.key: kv.value for kv in s.values} for s in m.status
                                         if s.name.startswith("wbc")), qos)
        launcher = spawn([kinodyn, "up", str(graph)], "launcher")

        def sim_time() -> float:
            return stamp_ns(truth[-1]) / NS if truth else 0.0

        assert client.spin_until(lambda: estimate, 120.0), launcher.log_path.read_text()
        t_base = stamp_ns(estimate[0]) / NS
        # standing until 60 plans (1.2 s at 50 Hz) stamped 0.5 s or more after the first estimate arrived:
        # in lockstep the graph can run ahead of this listener's discovery of the plan's publisher
        def planned() -> int:
            return sum(stamp_ns(p) / NS >= t_base + 0.5 for p in paths)

        standing = client.spin_until(lambda: sim_time() > t_base + 2.1 and planned() >= 60, 180.0)
        assert standing, (planned(), launcher.log_path.read_text())
        trot = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="trot")
        assert set_parameter(client, "locomotion_mode", trot) == (True, "")
        t_trot = sim_time()
        assert client.spin_until(lambda: sim_time() > t_trot + 1.5, 240.0), launcher.log_path.read_text()
        client.spin_for(0.5)
    finally:
        client.close()
    # trotting in place on the MPC: diagonal pairs alternate, the body up and near where it stood
    stances = [tuple(m.in_contact) for m in schedule if t_trot + 0.5 <= stamp_ns(m) / NS]
    assert (True, False, False, True) in stances
    assert (False, True, True, False) in stances
    trotting = [m.pose.pose.position for m in truth if t_trot + 0.5 <= stamp_ns(m) / NS]
    assert min(p.z for p in trotting) > 0.9 * STANDING_HEIGHT
    assert max(np.hypot(p.x - trotting[0].x, p.y - trotting[0].y) for p in trotting) < 0.1
    truth = [m for m in truth if stamp_ns(m) / NS < t_trot]  # standing from here on
    paths = [p for p in paths if stamp_ns(p) / NS < t_trot]
    stood = [m.pose.pose.position.z for m in truth if t_base + 1.5 <= stamp_ns(m) / NS]  # (standing)
    assert stood
    assert max(abs(z - STANDING_HEIGHT) for z in stood) < 0.01, (min(stood), max(stood))
    judged = [p for p in paths if stamp_ns(p) / NS >= t_base + 0.5]
    assert len(judged) >= 60, len(judged)
    starts = np.array([stamp_ns(p) for p in judged])
    np.testing.assert_array_equal(np.diff(starts), round(NS / MPC_RATE))  # one per solve, none missed
    assert_standing_plans_start_at_the_estimate(judged, estimate)
    # the weight on the feet once the base has settled (as `stood`): before, the plan lifts or slows the base
    settled = [p for p in judged if stamp_ns(p) / NS >= t_base + 1.5]
    assert len(settled) >= 25, len(settled)
    assert_standing_force_arrows(settled, forces)
    late = [d for d in diagnostics if "mpc_state" in d]
    assert late, late[-1:]
    assert late[-1]["mpc_state"] == "tracking", late[-1:]
    assert late[-1]["mpc_failures"] == "0"
    assert late[-1]["mpc_late"] == "0"


STEPS = (
    Step("stand", 1.0, mode="stand"),
    Step("trot in place", 1.0, mode="trot"),
    Step("trot forward", 4.0, cmd_vel=(0.3, 0.0, 0.0), settle=2.5, track=True),
)
"""As test/test_rt_graph_system.py's: the runner's commands land up to a second or two after a step's start
on a loaded machine (it reads simulated time from the ground truth it took); the long settle excludes that."""


def test_the_scenario_runner_trots_the_mpc_graph_forward(spawn: ProcessSpawner) -> None:
    holder = []
    listener = Listener("wbc_mpc_scenario_test")  # the plans and diagnostics, beside the runner
    paths: list[Path] = []
    diagnostics: list[dict[str, str]] = []
    qos = QoSProfile(depth=2000)
    listener.node.create_subscription(Path, "/wbc/mpc/path", paths.append, qos)
    listener.node.create_subscription(
        DiagnosticArray, "/diagnostics",
        lambda m: diagnostics.extend({kv.key: kv.value for kv in s.values} for s in m.status
                                     if s.name.startswith("wbc")), qos)
    done = threading.Event()
    spinner = threading.Thread(target=listener.spin_until, args=(done.is_set, 3600.0))
    spinner.start()
    try:
        result = run_scenario(STEPS, "mpc_graph",
                              start=lambda: holder.append(spawn(graph_command(GRAPH), "mpc_graph")))
    finally:
        done.set()
        spinner.join()
        listener.close()
        spawn.stop_all()
    print(result.summary_table())
    log = holder[0].log_path.read_text()
    assert result.failures() == [], (result.failures(), result.summary_table())
    step = next(s for s in result.steps if s.tracked)
    assert abs(step.mean_velocity[0] - 0.3) < 0.05, step  # 0.3 m/s commanded, judged after the settle
    assert abs(step.mean_velocity[1]) < 0.05, step
    assert abs(step.mean_velocity[2]) < 0.05, step
    assert result.drift is not None
    assert result.drift.path_length > 0.5
    assert result.drift.final_horizontal_error < 0.05, result.drift
    assert "unsafe command" not in log
    # the MPC planned the motion: tracking, no failed or late solve, and its last second of plans (trotting
    # forward) predicts the base moving forward at the commanded speed over the horizon
    late = [d for d in diagnostics if "mpc_state" in d]
    assert late, late[-1:]
    assert late[-1]["mpc_state"] == "tracking", late[-1:]
    assert late[-1]["mpc_failures"] == "0"
    assert late[-1]["mpc_late"] == "0"
    end = max(stamp_ns(p) for p in paths)
    forward = [p for p in paths if stamp_ns(p) >= end - NS]
    assert len(forward) >= 40, len(forward)  # 50 Hz
    for path in forward:
        first, last = path.poses[0].pose.position, path.poses[-1].pose.position
        speed = np.hypot(last.x - first.x, last.y - first.y) / (HORIZON * STEP)
        assert abs(speed - 0.3) < 0.06, speed
