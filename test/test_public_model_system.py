"""Unitree's A1 (urdf/public, a public model nobody here wrote) in the closed loop over DDS:
config/a1_wbc.yaml (control_node with SimulatedSystem in lockstep, state_estimator, wbc legged with default
locomotion parameters, state_publisher), on kinodyn.sim and on MuJoCo (kinodyn_tools.scenario.graph.
backend_graph), driven by the scenario runner: stand up, a lateral push of 0.25 x weight standing, trot in
place, 0.5 m/s forward, 0.2 m/s sideways, 0.6 rad/s yaw, a lateral push of 0.5 x weight trotting, stand again.

Judged from message content in simulated time, as the project quadruped's test_closed_loop_system.py: the
runner's acceptance (velocity RMSE <= 0.1 m/s and 0.1 rad/s after 1 s of each tracked step, no fall, both
pushes accepted) and the mean velocity of each tracked step within 0.05 of its command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from kinodyn_tools.scenario import Step
from kinodyn_tools.scenario.graph import backend_graph, graph_command
from kinodyn_tools.scenario.runner import Topics, run_scenario

from test.conftest import REPO

if TYPE_CHECKING:
    from pathlib import Path

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system
FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
TOPICS = Topics(truth="/a1_system/odometry", contacts="/a1_system/contacts", push="/a1_system/push")
WEIGHT = 13.741 * 9.81  # N, the A1's (urdf/README.md (d))


def steps() -> list[Step]:
    push = {"push_duration": 0.2, "push_link": "trunk"}
    return [
        Step("stand up", 2.0, mode="stand"),
        Step("push standing", 2.0, push=(0.0, 0.25 * WEIGHT, 0.0), **push),
        Step("trot in place", 2.0, mode="trot"),
        Step("forward 0.5", 3.0, cmd_vel=(0.5, 0.0, 0.0), track=True),
        Step("sideways 0.2", 3.0, cmd_vel=(0.0, 0.2, 0.0), track=True),
        Step("yaw 0.6", 3.0, cmd_vel=(0.0, 0.0, 0.6), track=True),
        Step("push trotting", 2.0, push=(0.0, 0.5 * WEIGHT, 0.0), **push),
        Step("stand again", 2.0, mode="stand"),
    ]


@pytest.mark.parametrize("backend", ["kinodyn", "mujoco"])
def test_a1_trots_and_takes_pushes_over_dds(spawn: ProcessSpawner, tmp_path: Path, backend: str) -> None:
    graph = backend_graph(backend, tmp_path, str(REPO / "config" / "a1_wbc.yaml"))
    holder = []
    scenario = steps()
    start = lambda: holder.append(spawn(graph_command(graph), "graph"))  # noqa: E731
    result = run_scenario(scenario, backend, start=start, feet=FEET, topics=TOPICS)
    print(result.summary_table())
    assert result.failures() == [], (result.failures(), result.summary_table())
    assert [s.name for s in result.steps] == [s.name for s in scenario]
    for step in result.steps:
        assert step.end - step.start >= next(s.duration for s in scenario if s.name == step.name) - 1e-9
        if step.tracked:
            assert max(abs(m - c) for m, c in zip(step.mean_velocity, step.cmd_vel, strict=True)) < 0.05
