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
no failed solve.
Driven by the scenario runner (as `kinodyn demo quadruped_mpc` does), it stands, trots and follows 0.3 m/s
forward: the runner's figures (velocity tracking, estimator drift), no fall, no refusal.

What a loaded machine may change, and what holds on any: the lockstep waits for the wbc, and the wbc for the
estimate of each joint state's stamp (`base_state_lockstep`), so the estimator does not fall behind
however loaded the machine; only when an estimate has not come within the wbc's `base_state_wait` (wall
time: an estimator that stopped) the wbc answers with the last one and, once that is older than
`base_state_max_age`, holds the posture without running the controller (diagnostics `held_ticks`), as it
does before the first estimate. The MPC's solves advance with the controller's ticks (simulated time),
so it plans at its rate exactly while the controller runs; a hold stops it (the next solve starts when the
controller runs again), and a plan that grows too old meanwhile is a late solve, reported (`mpc_late`, and
the wbc's "MPC plan not applied" line) and not applied. So:
the planner's count (diagnostics) is `mpc_rate` solves per simulated second in every window without a held
tick; the plans received are `1 / mpc_rate` apart (or a whole number of periods where the listener, lagging
under load, lost a few: the wbc's publisher keeps the last 10), off that grid only about diagnostics
windows that report held ticks, and every late solve is in such a window; a plan starts from the
estimate of its stamp, or (only once a wait for an estimate expired) from an older one within
`base_state_max_age`. The standing plans are those received before the trot was requested (the listener
can lag the graph by seconds of simulated time: no clock of its own says when the trot began); the trot
is judged from its first lift-off in the contact schedule.
"""

from __future__ import annotations

import itertools
import shutil
import threading
from pathlib import Path as FilePath
from typing import TYPE_CHECKING

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from kinodyn.control.locomotion import LocomotionController
from kinodyn.control.locomotion.mpc_locomotion import REFERENCE_LEG_LENGTH
from kinodyn.control.mpc import MpcParameters
from kinodyn_tools.launcher.graph import load_graph
from kinodyn_tools.scenario.graph import graph_command
from kinodyn_tools.scenario.runner import run_scenario
from kinodyn_tools.scenario.steps import Step
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.msg import ParameterType, ParameterValue
from rclpy.qos import QoSProfile
from visualization_msgs.msg import MarkerArray

import kinodyn as kd
from kinodyn_interfaces.msg import ContactStates
from test.conftest import REPO
from test.ros_listener import Listener
from test.test_wbc_quadruped_system import set_parameter

if TYPE_CHECKING:
    from geometry_msgs.msg import PoseStamped

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

GRAPH = REPO / "config" / "quadruped_mpc.yaml"
STANDING_HEIGHT = 0.5252  # urdf/README.md: base height with the foot spheres on the ground
NS = 1_000_000_000
MPC_RATE = 50.0  # the default
def mpc_step() -> float:
    """The wbc's MPC step [s] for the graph's robot: ``MpcParameters``' default ``dt`` scaled to its leg
    (``MpcLocomotion``, ``scale_to_leg``), from the wbc's URDF, feet and posture in GRAPH."""
    wbc = next(node for node in load_graph(GRAPH).nodes if node.name == "wbc")
    model = kd.Model.from_urdf(FilePath(str(wbc.parameters["robot_description_file"])), floating_base=True)
    feet, posture = wbc.parameters["feet"], wbc.parameters["posture"]
    controller = LocomotionController(model, tuple(feet), np.array(posture))
    return MpcParameters().scaled(controller.leg_length / REFERENCE_LEG_LENGTH).dt


HORIZON, STEP = 16, mpc_step()  # the MPC's defaults (MpcParameters, scaled to the leg)
MAX_AGE = 0.06  # s, the planner's mpc_max_age (the default)
BASE_MAX_AGE = 0.05  # s, the wbc's base_state_max_age (the default)
TICK_NS = 2_000_000  # the control_node's 500 Hz in simulated time


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


Window = tuple[int, dict[str, str]]  # a wbc diagnostics status: its stamp [ns] and values


def wbc_windows(msg: DiagnosticArray) -> list[Window]:
    """The wbc's status in ``msg`` with its stamp: it counts the ticks since the previous one."""
    return [(stamp_ns(msg), {kv.key: kv.value for kv in s.values}) for s in msg.status
            if s.name.startswith("wbc") and any(kv.key == "mpc_state" for kv in s.values)]


def overlapping(windows: list[Window], start: int, end: int) -> list[int]:
    """Indices of the windows (each from the previous stamp, exclusive, to its own) that meet
    ``[start, end]`` (ns)."""
    stamps = [w[0] for w in windows]
    return [i for i, stamp in enumerate(stamps) if stamp >= start and (i == 0 or stamps[i - 1] < end)]


def count(windows: list[Window], indices: list[int], key: str) -> int:
    return sum(int(windows[i][1][key]) for i in indices)


def held_about(windows: list[Window], stamp: int) -> bool:
    """Whether the wbc held ticks in the diagnostics window of ``stamp`` [ns] or the one before."""
    after = [i for i, w in enumerate(windows) if w[0] >= stamp]
    return not after or count(windows, [i for i in (after[0] - 1, after[0]) if i >= 0], "held_ticks") > 0


def assert_late_solves_explained(windows: list[Window], log: str) -> None:
    """No failed solve; every late solve counted in a window whose ticks (or the previous window's) the wbc
    held (module doc), and reported in the log; the planner tracking at the end."""
    assert windows, "no wbc diagnostics with the MPC planner's state"
    for i, (stamp, values) in enumerate(windows):
        assert values["mpc_failures"] == "0", (stamp, values["mpc_reason"])
        before = int(windows[i - 1][1]["mpc_late"]) if i else 0
        if int(values["mpc_late"]) > before:  # a late solve: the controller did not run for a while
            assert count(windows, [j for j in (i - 1, i) if j >= 0], "held_ticks") > 0, (stamp, values)
            assert "MPC plan not applied" in log, values["mpc_reason"]
    assert windows[-1][1]["mpc_state"] == "tracking", windows[-1][1]["mpc_reason"]


def assert_plans_at_the_rate(stamps: list[int], windows: list[Window]) -> None:
    """The planner's own count: in every diagnostics window in which it was tracking from the start and the
    wbc held no tick (in it nor in the window before), ``MPC_RATE`` solves per second of simulated time,
    none failed or late. The plans received: ``1 / MPC_RATE`` apart, or a whole number of periods where this
    listener lost some (the wbc's publisher keeps the last 10: a listener lagging the graph under load loses
    a few; at most a tenth), or the grid restarted (the next solve starts when the controller runs again)
    where the wbc reported held ticks (in a window the gap meets or the one before: a hold can straddle a
    window's end), the gap no longer than the time held, the rate and a plan's largest age (the solve under
    way when the hold came, the next solve's start). (A hold shorter than the largest age leaves the plan in
    force: no late solve.)"""
    period = round(NS / MPC_RATE)
    steady = 0
    for (s0, v0), (s1, v1) in itertools.pairwise(windows):
        if v0["mpc_state"] != "tracking" or int(v0["held_ticks"]) + int(v1["held_ticks"]) > 0:
            continue
        solved = [int(v1[k]) - int(v0[k]) for k in ("mpc_solves", "mpc_failures", "mpc_late")]
        assert solved == [round((s1 - s0) / period), 0, 0], (s0 / NS, s1 / NS, solved)
        steady += 1
    assert steady >= 2, steady
    lost = 0
    for a, b in itertools.pairwise(stamps):
        if (b - a) % period == 0 and b > a:
            lost += (b - a) // period - 1
            continue
        around = overlapping(windows, a, b)
        assert around, ("a gap between plans outside the diagnostics", a / NS, b / NS)
        held = count(windows, [i for i in (around[0] - 1, *around) if i >= 0], "held_ticks")
        assert held > 0, ("plans off the grid with no hold", a / NS, b / NS, [windows[i] for i in around])
        assert b - a <= period + held * TICK_NS + round(MAX_AGE * NS), (a / NS, b / NS, held)
    assert lost <= 0.1 * len(stamps), (lost, len(stamps))


def assert_standing_plans_start_at_the_estimate(judged: list[Path], estimate: list[Odometry],
                                                windows: list[Window]) -> None:
    """Each standing plan: in odom, HORIZON steps of STEP, the base where it stands (about a hold, module
    doc: its height back towards the stance's, as the robot sagged while held), starting at the estimate
    the wbc got for the plan's stamp, or (only once a wait for the estimate expired) an older one within
    base_state_max_age: each plan whose estimate was received, at least 20."""
    estimate_at = {stamp_ns(m): m.pose.pose.position for m in estimate}
    exact = older = 0
    for path in judged:
        assert path.header.frame_id == "odom"
        assert len(path.poses) == HORIZON + 1
        times = np.array([stamp_ns(p) for p in path.poses])
        assert times[0] == stamp_ns(path)
        np.testing.assert_allclose(np.diff(times), STEP * NS, atol=1)
        position = np.array([[p.pose.position.x, p.pose.position.y, p.pose.position.z] for p in path.poses])
        stamp = stamp_ns(path)
        drift = np.abs(position - position[0]).max(axis=0)
        standing = ("standing: the base stays where it is", stamp / NS, drift, position[0])
        assert drift[:2].max() < 0.01, standing
        if held_about(windows, stamp):  # the robot sagged while held: the plan lifts it back, no further
            start, end = (abs(z - STANDING_HEIGHT) for z in (position[0, 2], position[-1, 2]))
            assert end <= start + 0.002, ("after a hold: back towards the stance", stamp / NS, position[:, 2])
        else:
            assert drift[2] < 0.01, standing
        if stamp not in estimate_at:  # (the listener did not get that estimate)
            continue
        e = estimate_at[stamp]
        if np.allclose(position[0], [e.x, e.y, e.z], rtol=0.0, atol=1e-9):
            exact += 1
            continue
        candidates = [p for s, p in estimate_at.items() if stamp - round(BASE_MAX_AGE * NS) <= s < stamp]
        assert any(np.allclose(position[0], [p.x, p.y, p.z], rtol=0.0, atol=1e-9) for p in candidates), \
            ("a plan starting at no estimate the wbc could have used", stamp / NS)
        expired = [int(v["base_state_waits_expired"]) for s, v in windows if s >= stamp]
        assert expired, stamp / NS
        assert expired[0] > 0, ("a plan on an older estimate with no expired wait", stamp / NS)
        older += 1
    # every plan whose estimate this listener got is checked (a listener lagging under load loses some)
    assert exact >= 1, (exact, older, len(judged))
    assert exact + older >= 20, (exact, older, len(judged))


def assert_standing_force_arrows(judged: list[Path], forces: list[MarkerArray]) -> None:
    """Each standing plan's force arrows (those that reached this process, 10 at least): one per foot, from
    the feet, adding up to the weight."""
    arrows = {stamp_ns(m.markers[0]): m.markers for m in forces if m.markers}
    # the wbc keeps its last 10 messages per topic: a reader stalled on a loaded machine can lose a plan's
    # arrows and still have its path (or the other way round)
    with_arrows = [path for path in judged if stamp_ns(path) in arrows]
    assert len(with_arrows) >= 10, (len(with_arrows), len(judged))
    for path in with_arrows:  # standing: every foot down, the arrows (nominal base height per weight) up
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
        windows: list[Window] = []
        schedule: list[ContactStates] = []
        lift_off: list[int] = []  # the stamp of the first schedule with a foot up (the trot's start)

        def on_schedule(msg: ContactStates) -> None:
            schedule.append(msg)
            if not lift_off and not all(msg.in_contact):
                lift_off.append(stamp_ns(msg))

        node = client.node
        qos = QoSProfile(depth=2000)
        node.create_subscription(Odometry, "/quadruped_system/odometry", truth.append, qos)
        node.create_subscription(Odometry, "/odometry/filtered", estimate.append, qos)
        node.create_subscription(Path, "/wbc/mpc/path", paths.append, qos)
        node.create_subscription(MarkerArray, "/wbc/mpc/forces", forces.append, qos)
        node.create_subscription(ContactStates, "/contact_schedule", on_schedule, qos)
        node.create_subscription(DiagnosticArray, "/diagnostics", lambda m: windows.extend(wbc_windows(m)),
                                 qos)
        launcher = spawn([kinodyn, "up", str(graph)], "launcher")

        def truth_until(t: float) -> bool:
            return bool(truth) and stamp_ns(truth[-1]) / NS > t

        assert client.spin_until(lambda: estimate, 120.0), launcher.log_path.read_text()
        t_base = stamp_ns(estimate[0]) / NS

        # standing until 60 plans (1.2 s at 50 Hz) stamped 0.5 s or more after the first estimate arrived, 30
        # of them from 1.5 s (settled), and the ground truth to 2.1 s: in lockstep the graph can run ahead of
        # this listener's discovery of the plan's publisher
        def planned(after: float) -> int:
            return sum(stamp_ns(p) / NS >= t_base + after for p in paths)

        standing = client.spin_until(lambda: truth_until(t_base + 2.1) and planned(0.5) >= 60
                                     and planned(1.5) >= 30, 180.0)
        assert standing, (planned(0.5), planned(1.5), launcher.log_path.read_text())
        # what came before the request: standing (module doc)
        stood_truth, stood_paths = list(truth), list(paths)
        assert not lift_off, lift_off
        trot = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value="trot")
        assert set_parameter(client, "locomotion_mode", trot) == (True, "")
        assert client.spin_until(lambda: bool(lift_off) and truth_until(lift_off[0] / NS + 1.5), 240.0), \
            (lift_off, launcher.log_path.read_text())
        client.spin_for(0.5)
    finally:
        client.close()
    log = launcher.log_path.read_text()
    # trotting in place on the MPC, from its first lift-off: diagonal pairs alternate, the body up and near
    # where it stood
    t_trot = lift_off[0]
    stances = [tuple(m.in_contact) for m in schedule if t_trot <= stamp_ns(m)]
    assert (True, False, False, True) in stances
    assert (False, True, True, False) in stances
    trotting = [m.pose.pose.position for m in truth if t_trot <= stamp_ns(m) <= t_trot + 1.5 * NS]
    assert min(p.z for p in trotting) > 0.9 * STANDING_HEIGHT
    assert max(np.hypot(p.x - trotting[0].x, p.y - trotting[0].y) for p in trotting) < 0.1
    # one plan per solve, standing and trotting, but where the wbc held the robot and said so
    assert_plans_at_the_rate([stamp_ns(p) for p in paths], windows)
    assert_late_solves_explained(windows, log)
    stood = [m.pose.pose.position.z for m in stood_truth if t_base + 1.5 <= stamp_ns(m) / NS]  # (standing)
    assert stood
    assert max(abs(z - STANDING_HEIGHT) for z in stood) < 0.01, (min(stood), max(stood))
    judged = [p for p in stood_paths if stamp_ns(p) / NS >= t_base + 0.5]
    assert len(judged) >= 60, len(judged)
    assert_standing_plans_start_at_the_estimate(judged, estimate, windows)
    # the weight on the feet once the base has settled (as `stood`): before, the plan lifts or slows the base,
    # as it does after the wbc held the robot (in the plan's diagnostics window or the one before)
    settled = [p for p in judged if stamp_ns(p) / NS >= t_base + 1.5 and not held_about(windows, stamp_ns(p))]
    assert len(settled) >= 10, len(settled)
    assert_standing_force_arrows(settled, forces)


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
    windows: list[Window] = []
    qos = QoSProfile(depth=2000)
    listener.node.create_subscription(Path, "/wbc/mpc/path", paths.append, qos)
    listener.node.create_subscription(DiagnosticArray, "/diagnostics",
                                      lambda m: windows.extend(wbc_windows(m)), qos)
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
    # the MPC planned the motion: tracking, no failed solve, one plan per solve but where the wbc held the
    # robot and said so (module doc), and its last second of plans (trotting forward) predicts the base
    # moving forward at the commanded speed over the horizon
    assert_plans_at_the_rate([stamp_ns(p) for p in paths], windows)
    assert_late_solves_explained(windows, log)
    # (the tracked step's end on the runner's clock: the command was in force in the wbc until then at least;
    # after it the graph runs on without one until stopped, longer under load, and its plans slow down)
    end = round(step.end * NS)
    forward = [p for p in paths if end - NS <= stamp_ns(p) <= end]
    held = count(windows, overlapping(windows, end - NS, end), "held_ticks") * TICK_NS / NS
    assert len(forward) >= 0.8 * MPC_RATE * (1.0 - held), (len(forward), held)  # 50 Hz while controlled
    for path in forward:
        first, last = path.poses[0].pose.position, path.poses[-1].pose.position
        speed = np.hypot(last.x - first.x, last.y - first.y) / (HORIZON * STEP)
        assert abs(speed - 0.3) < 0.06, speed
