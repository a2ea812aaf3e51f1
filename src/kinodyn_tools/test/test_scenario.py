"""kinodyn_tools.scenario without DDS: steps as data, the figures of a recorded run against closed forms, and
the graph on another physics backend."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
import yaml
from kinodyn_control.wbc.legged import LeggedSettings
from kinodyn_tools.demo.catalog import DEMOS
from kinodyn_tools.launcher.graph import load_graph
from kinodyn_tools.scenario.acceptance import full, short
from kinodyn_tools.scenario.cli import main as scenario_main
from kinodyn_tools.scenario.graph import backend_graph, backend_urdf
from kinodyn_tools.scenario.metrics import Recording, scenario_result
from kinodyn_tools.scenario.steps import Step, load_steps, random_steps, steps_from_data

import kinodyn as kd

if TYPE_CHECKING:
    from kinodyn.urdf import ParsedURDF

REPO = Path(__file__).resolve().parents[3]


def test_steps_from_yaml_and_their_errors(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("- {name: trot, duration: 2.0, mode: trot}\n"
                    "- {name: go, duration: 3.0, cmd_vel: [0.5, 0, 0], track: true, settle: 1.5}\n"
                    "- {name: push, duration: 1.0, push: [0, 120, 0], push_duration: 0.2}\n"
                    "- {name: sway, duration: 1.0, base_pose: [0, 0, -0.05, 0.15, 0, 0]}\n")
    trot, go, push, sway = load_steps(path)
    assert sway.base_pose == (0.0, 0.0, -0.05, 0.15, 0.0, 0.0)
    assert trot.base_pose is None
    assert trot.mode == "trot"
    assert go.cmd_vel == (0.5, 0.0, 0.0)
    assert go.track
    assert go.settle == 1.5
    assert push.push == (0.0, 120.0, 0.0)
    assert push.push_link == "base_link"
    for raw, reason in (({"name": "a", "duration": 1.0, "speed": 1}, "unknown keys \\['speed'\\]"),
                        ({"name": "a", "duration": 1.0, "settle": 1.0, "track": True}, "settle must be"),
                        ({"name": "a", "duration": 0.0}, "duration must be"),
                        ({"name": "a", "duration": 1.0, "mode": "run"}, "mode must be one of"),
                        ({"name": "a", "duration": 1.0, "cmd_vel": [1, math.nan, 0]}, "cmd_vel must be 3"),
                        ({"name": "a", "duration": 1.0, "base_pose": [0, 0, 0]}, "base_pose must be 6"),
                        ({"duration": 1.0}, "missing 1 required")):
        with pytest.raises(ValueError, match=reason):
            steps_from_data([raw])


def test_random_steps_cover_the_duration_within_the_limits_and_repeat_with_the_seed() -> None:
    steps = random_steps(60.0, seed=3)
    assert sum(s.duration for s in steps) == pytest.approx(60.0)
    assert all(s.duration <= 4.0 for s in steps)
    assert all(s.duration >= 2.0 for s in steps[:-1])
    cmds = np.array([s.cmd_vel for s in steps])
    assert np.all(np.abs(cmds) <= [0.5, 0.2, 0.6])
    assert np.abs(cmds).max(axis=0).min() > 0.1
    assert steps == random_steps(60.0, seed=3)
    assert steps != random_steps(60.0, seed=4)


def test_acceptance_scenarios() -> None:
    for steps in (full(), short()):
        tracked = {s.name: s.cmd_vel for s in steps if s.track}
        assert tracked == {"forward 0.5": (0.5, 0.0, 0.0), "sideways 0.2": (0.0, 0.2, 0.0),
                           "yaw 0.6": (0.0, 0.0, 0.6)}
        pushes = sorted(s.push[1] for s in steps if s.push is not None)
        assert pushes == [60.0, 120.0]
        assert all(s.push_duration == 0.2 for s in steps if s.push)
    assert sum(s.duration for s in full() if s.name.startswith("random")) == pytest.approx(60.0)


def _quaternion(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    cr, sr, cp, sp, cy, sy = (f(a / 2) for a in (roll, pitch, yaw) for f in (math.cos, math.sin))
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy)


def _recording(heading_error: float, pitch: float = 0.2, yaw: float = 0.7) -> tuple[Recording, Step]:
    """The base pitched and yawed, moving at (0.5, 0.2) m/s in the heading frame plus an error of amplitude
    ``heading_error`` along x (a sine over whole periods: RMSE amplitude / sqrt 2), at 0.3 rad/s yaw rate."""
    rec = Recording()
    step = Step("go", 4.0, cmd_vel=(0.5, 0.2, 0.3), track=True, settle=1.0)
    cp, sp = math.cos(pitch), math.sin(pitch)
    for k in range(2001):  # 0..4 s at 500 Hz
        t = k * 0.002
        vh = np.array([0.5 + heading_error * math.sin(2 * math.pi * t), 0.2, 0.0])
        # heading frame -> base: C_WB = Rz(yaw) Ry(pitch), so v_B = Ry(pitch)^T vh (yaw cancels)
        vb = np.array([cp * vh[0] - sp * vh[2], vh[1], sp * vh[0] + cp * vh[2]])
        wb = np.array([-sp * 0.3, 0.0, cp * 0.3])  # world (0, 0, 0.3) in the base frame
        for series in (rec.truth, rec.estimate):
            series.t.append(t)
            series.quaternion.append(_quaternion(0.0, pitch, yaw))
            series.linear.append(tuple(vb))
            series.angular.append(tuple(wb))
        rec.truth.position.append((0.5 * t, 0.0, 0.5))
        rec.estimate.position.append((0.5 * t + 0.01 * t, 0.0, 0.5))  # 1 cm/s too fast along x
    rec.windows.append((step, 0.0, 4.0))
    rec.diagnostics += [(2.0, {"qp_failures": "1", "damped_ticks": "1", "held_ticks": "0",
                               "tick_latencies_us": "1000 2000 3000", "solve_times_us": "500"}),
                        (4.0, {"qp_failures": "0", "damped_ticks": "0", "held_ticks": "2",
                               "tick_latencies_us": "4000", "solve_times_us": "700 900"})]
    return rec, step


def test_tracking_rmse_in_the_heading_frame_drift_and_wbc_figures_against_closed_forms() -> None:
    rec, _ = _recording(heading_error=0.08)
    result = scenario_result(rec, "test", 1.0)
    (s,) = result.steps
    assert s.linear_rmse == pytest.approx(0.08 / math.sqrt(2), rel=2e-3)  # sine over 3 whole periods
    assert s.yaw_rmse == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(s.mean_velocity, (0.5, 0.2, 0.3), atol=1e-3)
    assert result.drift is not None
    assert result.drift.drift == pytest.approx(0.01 / 0.5, rel=1e-6)
    assert (result.qp_failures, result.damped_ticks, result.held_ticks) == (1, 1, 2)
    assert result.tick_latency.median_ms == 2.5
    assert result.tick_latency.max_ms == 4.0
    assert result.solve_time.count == 3
    assert result.solve_time.median_ms == 0.7
    assert result.falls == []
    assert result.failures() == []
    assert result.failures(max_linear_rmse=0.05) == [
        f"go: velocity RMSE {s.linear_rmse:.3f} m/s > 0.05"]
    assert "go" in result.summary_table()
    assert "0.057" in result.summary_table()


def test_falls_are_a_low_base_or_a_body_sphere_on_the_ground() -> None:
    rec, _ = _recording(heading_error=0.0)
    assert scenario_result(rec, "test", 1.0).falls == []
    rec.truth.position[1500] = (0.0, 0.0, 0.29)  # 58 % of the first height
    rec.body_contacts.append((3.5, "LF_SHANK"))
    falls = scenario_result(rec, "test", 1.0).falls
    assert falls == ["base at 0.290 m (< 60% of 0.500 m) from t = 3.000 s",
                     "LF_SHANK touched the ground at t = 3.500 s (1 contact samples of non-foot spheres)"]
    rec.truth.position[1500] = (0.0, 0.0, 0.31)  # 62 %: no fall
    assert len(scenario_result(rec, "test", 1.0).falls) == 1


def test_the_graph_on_the_mujoco_backend(tmp_path: Path) -> None:
    text = (REPO / "urdf" / "quadruped_sim.urdf").read_text()
    mujoco = backend_urdf(text, "mujoco")
    assert mujoco.count('<param name="backend">mujoco</param>') == 1
    assert backend_urdf(mujoco, "kinodyn").count('name="backend"') == 1  # replaced, not added
    with pytest.raises(ValueError, match="backend must be one of kinodyn, mujoco, got 'bullet'"):
        backend_urdf(text, "bullet")
    graph = REPO / "config" / "quadruped_wbc.yaml"
    assert backend_graph("kinodyn", tmp_path, str(graph)) == graph
    derived = load_graph(backend_graph("mujoco", tmp_path, str(graph)))
    original = load_graph(graph)
    for a, b in zip(original.nodes, derived.nodes, strict=True):
        changed = {k for k in a.parameters if a.parameters.get(k) != b.parameters.get(k)}
        # the estimator's foot_radius is kinodyn.sim's 0 in the graph file, the URDF's radius on MuJoCo
        expected = {"control_node": {"robot_description_file"}, "state_estimator": {"foot_radius"}}
        assert changed == expected.get(a.executable, set())
        if a.executable == "state_estimator":
            assert a.parameters["foot_radius"] == 0.0
            assert "foot_radius" not in b.parameters
        assert (a.name, a.remappings) == (b.name, b.remappings)
        if a.executable == "control_node":
            assert Path(b.parameters["robot_description_file"]).read_text() == mujoco


def test_the_in_process_graph_on_the_mujoco_backend(tmp_path: Path) -> None:
    """config/quadruped_rt.yaml: the control_node's URDF on MuJoCo, and its estimator controller's
    foot_radius dropped (the URDF's radius) as the state_estimator node's is; nothing else changes."""
    graph = REPO / "config" / "quadruped_rt.yaml"
    original = yaml.safe_load(graph.read_text())["nodes"]
    derived = yaml.safe_load(backend_graph("mujoco", tmp_path, str(graph)).read_text())["nodes"]
    before, after = original[0]["parameters"], derived[0]["parameters"]
    assert before["state_estimator"]["foot_radius"] == 0.0
    assert "foot_radius" not in after["state_estimator"]
    after_estimator = {**after["state_estimator"], "foot_radius": 0.0}
    assert after_estimator == before["state_estimator"]
    assert after["wbc"] == before["wbc"]
    assert '<param name="backend">mujoco</param>' in Path(after["robot_description_file"]).read_text()
    assert derived[1:] == original[1:]


class ToySimulator(kd.sim.Simulator):
    """A backend registered by a test: kinodyn's simulator under another name."""

    def __init__(self, model: kd.Model, urdf: str | Path | ParsedURDF, *, dt: float, integrator: str,
                 contact: kd.sim.ContactModel | None, joint_limits: bool) -> None:
        super().__init__(model, dt=dt, integrator=integrator, contact=contact, joint_limits=joint_limits)


@pytest.mark.parametrize("rolling", [False, True])
def test_a_registered_backend_gets_its_graph_and_the_estimator_follows_its_rolling_contact(
        tmp_path: Path, rolling: bool, capsys: pytest.CaptureFixture[str]) -> None:
    """A backend registered here (not named anywhere in kinodyn_ros) is accepted by ``backend_graph`` and the
    scenario command; the estimator's foot_radius 0 is kept unless the backend declares rolling contact."""
    kd.sim.register_backend("toy", ToySimulator, kd.sim.BackendCapabilities("a test's backend",
                                                                          rolling_contact=rolling))
    try:
        graph = REPO / "config" / "quadruped_wbc.yaml"
        nodes = {node["executable"]: node for node in
                 yaml.safe_load(backend_graph("toy", tmp_path, str(graph)).read_text())["nodes"]}
        urdf = Path(nodes["control_node"]["parameters"]["robot_description_file"]).read_text()
        assert urdf.count('<param name="backend">toy</param>') == 1
        assert ("foot_radius" in nodes["state_estimator"]["parameters"]) is not rolling
        with pytest.raises(SystemExit) as exit_code:
            scenario_main(["--backend", "bullet"])
        assert exit_code.value.code == 2
        assert "(choose from 'kinodyn', 'mujoco', 'toy', 'all')" in capsys.readouterr().err
    finally:
        kd.sim.unregister_backend("toy")
    with pytest.raises(ValueError, match="backend must be one of kinodyn, mujoco, got 'toy'"):
        backend_graph("toy", tmp_path, str(graph))


def test_steps_accept_exactly_the_modes_the_wbc_node_accepts() -> None:
    """Cross-checked against the wbc node's own validation (``LeggedSettings.locomotion_mode``)."""
    posture = (0.0,) * 12
    feet = ("lf", "rf", "lh", "rh")
    accepted = set()
    for mode in ("sit", "stand", "trot", "walk", "pace", "bound", "gallop", "Trot", ""):
        try:
            LeggedSettings(feet=feet, posture=posture, locomotion_mode=mode)
        except ValueError:
            with pytest.raises(ValueError, match="mode must be one of"):
                Step("s", 1.0, mode=mode)
        else:
            assert Step("s", 1.0, mode=mode).mode == mode
            accepted.add(mode)
    assert accepted == {"sit", "stand", "trot", "walk", "pace", "bound"}


def test_each_demo_runs_a_shipped_graph_and_records_the_mpc_path_where_its_wbc_plans() -> None:
    for demo in DEMOS.values():
        graph = load_graph(REPO / "config" / f"{demo.graph}.yaml")
        assert (REPO / "config" / f"{demo.viewer_graph}.yaml").is_file()
        assert (REPO / "urdf" / demo.urdf).is_file()
        planners = {n.parameters.get("planner", "none") for n in graph.nodes if n.executable == "wbc"}
        planners |= {c.get("planner", "none") for node in graph.nodes for c in node.parameters.values()
                     if isinstance(c, dict) and c.get("type") == "kinodyn_control/WholeBodyController"}
        assert len(planners) == 1, (demo.name, planners)
        assert ("/wbc/mpc/path" in demo.topics) == (planners == {"mpc"}), demo.name
    assert DEMOS["quadruped_mpc"].graph == "quadruped_mpc"
