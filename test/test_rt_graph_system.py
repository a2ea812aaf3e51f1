"""The in-process graph (config/quadruped_rt.yaml: the estimator and the whole-body controller chained inside
control_node) against the node graph (config/quadruped_wbc.yaml), both in lockstep on kinodyn.sim, over DDS.

- The same short scenario (stand, trot in place, then trot forward at 0.3 m/s) on both graphs, driven by the
  scenario runner over the same topics and services (/wbc/cmd_vel, /wbc/set_parameters, /odometry/filtered,
  /diagnostics):
  the same velocity tracking and estimator accuracy within tolerance, no fall, no refusal.
- In lockstep the in-process graph is deterministic: two runs without external input (trotting in place from
  the start, set in the graph file) publish the same odometry, bit for bit, at every stamp both received.
- Bad input to the controllers (NaN cmd_vel, NaN base_pose): one line per cause, the previous command kept
  (the robot keeps walking at it), nothing non-finite reaches a motor (no controller stopped, every effort
  finite).
Judged from message content in simulated time.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import PoseStamped, TwistStamped
from kinodyn_tools.scenario.graph import graph_command
from kinodyn_tools.scenario.runner import run_scenario
from kinodyn_tools.scenario.steps import Step
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

from test.conftest import REPO
from test.ros_listener import Listener

if TYPE_CHECKING:
    from pathlib import Path

    from kinodyn_tools.scenario.metrics import ScenarioResult

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system
NS = 1_000_000_000
STEPS = (
    Step("stand", 1.0, mode="stand"),
    Step("trot in place", 1.0, mode="trot"),
    Step("trot forward", 4.0, cmd_vel=(0.3, 0.0, 0.0), settle=2.5, track=True),
)
"""The runner is outside the lockstep: the in-process graph runs as fast as it can and the runner's view of
simulated time (the newest ground truth it took) trails it, by up to a second or two on a loaded machine, so a
command lands that much after its step starts; the long settle keeps that out of the judged span."""


def rt_graph(directory: Path, **wbc: object) -> Path:
    """config/quadruped_rt.yaml with the wbc controller's parameters ``wbc`` changed."""
    raw = yaml.safe_load((REPO / "config" / "quadruped_rt.yaml").read_text())
    raw["nodes"][0]["parameters"]["wbc"].update(wbc)
    path = directory / "quadruped_rt_test.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def scenario(spawn: ProcessSpawner, graph: Path, name: str) -> ScenarioResult:
    holder = []
    try:
        result = run_scenario(STEPS, name, start=lambda: holder.append(spawn(graph_command(graph), name)))
    finally:
        spawn.stop_all()  # one graph at a time on the test's DDS domain
    print(result.summary_table())
    return result, holder[0].log_path.read_text()


def test_both_graphs_give_the_same_figures(spawn: ProcessSpawner) -> None:
    node, node_log = scenario(spawn, REPO / "config" / "quadruped_wbc.yaml", "node_graph")
    rt, rt_log = scenario(spawn, REPO / "config" / "quadruped_rt.yaml", "rt_graph")
    for result in (node, rt):
        assert result.failures() == [], (result.failures(), result.summary_table())
    trot = {r.backend: next(s for s in r.steps if s.tracked) for r in (node, rt)}
    a, b = trot["node_graph"], trot["rt_graph"]
    for step in (a, b):  # 0.3 m/s commanded, judged from 2.5 s after the step's start
        assert abs(step.mean_velocity[0] - 0.3) < 0.05, step
    # the two graphs agree within what separates two runs of one graph here (when the runner's command lands)
    assert abs(a.mean_velocity[0] - b.mean_velocity[0]) < 0.06, (a, b)
    assert abs(a.linear_rmse - b.linear_rmse) < 0.05, (a, b)
    for result in (node, rt):
        assert result.drift is not None
        assert result.drift.path_length > 0.5
        assert result.drift.final_horizontal_error < 0.05, result.drift
    assert abs(node.drift.final_horizontal_error - rt.drift.final_horizontal_error) < 0.03
    # the in-process wbc ticks once per cycle (500 Hz), as the node answers every joint state
    assert abs(rt.tick_rate - 500) < 5, rt.tick_rate
    for log in (node_log, rt_log):
        assert "unsafe command" not in log
        assert "deactivated" not in log


def record_odometry(
    spawn: ProcessSpawner, graph: Path, name: str, until: float,
) -> dict[int, tuple[float, ...]]:
    """Start ``graph`` and record /odometry/filtered until its stamps reach ``until`` s: stamp [ns] -> the
    message's numbers."""
    listener = Listener(f"odometry_{name}")
    got: dict[int, tuple[float, ...]] = {}

    def take(msg: Odometry) -> None:
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        got[msg.header.stamp.sec * NS + msg.header.stamp.nanosec] = (
            p.x, p.y, p.z, o.x, o.y, o.z, o.w, v.x, v.y, v.z, w.x, w.y, w.z, *msg.pose.covariance)

    listener.node.create_subscription(Odometry, "/odometry/filtered", take, QoSProfile(depth=10000))
    try:
        process = spawn(graph_command(graph), name)
        assert listener.spin_until(lambda: bool(got) and max(got) >= until * NS, 600.0), \
            process.log_path.read_text()[-3000:]
    finally:
        listener.close()
    return got


def test_rt_graph_in_lockstep_is_bit_identical_from_run_to_run(spawn: ProcessSpawner, tmp_path: Path) -> None:
    graph = rt_graph(tmp_path, locomotion_mode="trot")  # no external input: stand up, then trot in place
    since, until = 4.0, 7.0  # the loop starts before DDS matched the listener: its first seconds may be lost
    runs = []
    for k in range(2):
        runs.append(record_odometry(spawn, graph, f"run{k}", until))
        spawn.stop_all()
    first, second = runs
    common = [s for s in sorted(set(first) & set(second)) if since * NS <= s <= until * NS]
    # odometry/filtered at the graph's publish_rate, 100 Hz: 300 in the window (a listener may miss some)
    assert len(common) > 250, (len(first), len(second), len(common))
    differing = [s for s in common if first[s] != second[s]]
    assert differing == [], f"{len(differing)} of {len(common)} odometry messages differ, first at " \
                            f"{differing[0] / NS:.3f} s"
    vertical = np.array([first[s][9] for s in common])  # the base's vertical velocity: it trots, it is live
    assert np.ptp(vertical) > 0.005, np.ptp(vertical)


def test_bad_input_keeps_the_previous_command_and_reaches_no_motor(
    spawn: ProcessSpawner, tmp_path: Path,
) -> None:
    graph = rt_graph(tmp_path, locomotion_mode="trot", cmd_vel_timeout=100.0)
    listener = Listener("bad_input")
    truth: list[tuple[float, float]] = []  # (t, forward velocity in the base frame)
    efforts: list[bool] = []
    node = listener.node
    node.create_subscription(Odometry, "/quadruped_system/odometry", lambda m: truth.append(
        (m.header.stamp.sec + m.header.stamp.nanosec / NS, m.twist.twist.linear.x)), QoSProfile(depth=10000))
    node.create_subscription(JointState, "/joint_states", lambda m: efforts.append(
        bool(np.isfinite(np.asarray(m.effort)).all())), QoSProfile(depth=10000))
    cmd_vel = node.create_publisher(TwistStamped, "/wbc/cmd_vel", 10)
    base_pose = node.create_publisher(PoseStamped, "/wbc/base_pose", 10)

    def now() -> float:
        return truth[-1][0] if truth else 0.0

    try:
        process = spawn(graph_command(graph), "rt_graph")
        # both writers matched (the bad base pose below goes out five times within a second of wall time)
        assert listener.spin_until(lambda: now() > 1.5 and cmd_vel.get_subscription_count() > 0
                                   and base_pose.get_subscription_count() > 0, 600.0)
        command = TwistStamped()  # stamp 0: taken as received
        command.twist.linear.x = 0.3
        cmd_vel.publish(command)
        assert listener.spin_until(lambda: now() > 2.5, 600.0)
        bad = TwistStamped()
        bad.twist.linear.x, bad.twist.angular.z = math.nan, 0.1
        pose = PoseStamped()
        pose.pose.position.z = math.nan
        pose.pose.orientation.w = 1.0
        for _ in range(5):
            cmd_vel.publish(bad)
            base_pose.publish(pose)
            listener.spin_for(0.2)
        t_bad = now()
        assert listener.spin_until(lambda: now() > t_bad + 2.0 and bool(efforts), 600.0)
    finally:
        listener.close()
    log = process.log_path.read_text()
    nan_cmd = [line for line in log.splitlines()
               if "ignoring cmd_vel message" in line and "not finite" in line]
    nan_pose = [line for line in log.splitlines() if "ignoring base_pose message" in line]
    assert len(nan_cmd) == 1, nan_cmd  # one line for five messages (throttled), naming what was wrong
    assert len(nan_pose) == 1, nan_pose
    assert "unsafe command" not in log
    assert "deactivated" not in log
    assert efforts
    assert all(efforts)
    late = [v for t, v in truth if t > t_bad + 1.0]
    assert late
    assert abs(float(np.mean(late)) - 0.3) < 0.1  # still walking at the last good command
