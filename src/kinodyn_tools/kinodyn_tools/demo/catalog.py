"""The demos `kinodyn demo` runs (docs/demo.md): per demo, its graphs, the topics it records, its robot and
its scenarios (data for `kinodyn_tools.scenario`). Any other name is a graph of config/ run as `kinodyn up`
does.
"""

from __future__ import annotations

from dataclasses import dataclass

from kinodyn_tools.scenario.steps import Step

PUSH_FORCE = 120.0  # N, lateral, for 0.2 s while trotting (the closed loop's acceptance push)


@dataclass(frozen=True)
class Demo:
    """A closed-loop demo: a control graph, its browser view, what is recorded and the scenarios."""

    name: str
    description: str
    graph: str  # config/<graph>.yaml: the closed loop
    viewer_graph: str  # config/<viewer_graph>.yaml: the browser view, started unless headless
    urdf: str  # the robot in urdf/ (the report's effort limits)
    topics: tuple[str, ...]  # recorded into the run's bag
    scenario: tuple[Step, ...]  # the full scenario (about 30 s of simulated time)
    short_scenario: tuple[Step, ...]  # the same parts, a few simulated seconds (tests, CI)


SWAY_ANGLE = 0.15  # rad of roll, then pitch, then yaw, standing (the wbc's ~/base_pose; limit max_pose_angle)
SWAY_DROP = 0.05  # m the base goes down (limit max_pose_shift)

QUADRUPED_SCENARIO = (
    Step("stand up", 3.0, mode="stand"),
    Step("sway: roll", 1.0, base_pose=(0.0, 0.0, 0.0, SWAY_ANGLE, 0.0, 0.0)),
    Step("sway: pitch", 1.0, base_pose=(0.0, 0.0, 0.0, 0.0, SWAY_ANGLE, 0.0)),
    Step("sway: yaw and down", 1.0, base_pose=(0.0, 0.0, -SWAY_DROP, 0.0, 0.0, SWAY_ANGLE)),
    Step("sway: back", 1.0, base_pose=(0.0,) * 6),
    Step("trot in place", 2.0, mode="trot"),
    Step("trot forward", 8.0, cmd_vel=(0.4, 0.0, 0.0), settle=1.5, track=True),
    Step("turn", 6.0, cmd_vel=(0.2, 0.0, 0.5), settle=1.5, track=True),
    Step("push", 4.0, cmd_vel=(0.2, 0.0, 0.0), push=(0.0, PUSH_FORCE, 0.0)),
    Step("stop", 2.0),
    Step("stand", 2.0, mode="stand"),
)
"""Stand up, sway, trot forward, turn, a push while trotting, stop: 31 s of simulated time."""

QUADRUPED_SHORT = (
    Step("stand up", 1.5, mode="stand"),
    Step("sway", 1.0, base_pose=(0.0, 0.0, -SWAY_DROP, SWAY_ANGLE, 0.0, 0.0)),
    Step("trot forward", 2.5, mode="trot", cmd_vel=(0.3, 0.0, 0.0), base_pose=(0.0,) * 6, settle=1.5,
         track=True),
    Step("stop", 1.5, mode="stand", settle=0.5),
)

QUADRUPED_TOPICS = (
    "/robot_description", "/tf", "/tf_static", "/joint_states", "/imu_sensor_broadcaster/imu",
    "/odometry/filtered", "/quadruped_system/odometry", "/quadruped_system/contacts", "/contact_schedule",
    "/wbc/cmd_vel", "/wbc/base_pose", "/wbc/footholds", "/leg_pd_controller/commands", "/diagnostics",
)

QUADRUPED_RT_TOPICS = tuple(t for t in QUADRUPED_TOPICS if t != "/leg_pd_controller/commands")
"""The in-process graph's: the same, but its commands never leave control_node."""

QUADRUPED_MPC_TOPICS = (*QUADRUPED_TOPICS, "/wbc/mpc/path")
"""The node graph's with the MPC planner: the same, and each plan's predicted base trajectory."""


def _quadruped_demo(name: str, graph: str, topics: tuple[str, ...], description: str) -> Demo:
    """A demo of the simulated quadruped: its browser view, its robot and the quadruped's scenarios."""
    return Demo(name=name, description=description, graph=graph, viewer_graph="quadruped_viewer",
                urdf="quadruped_sim.urdf", topics=topics, scenario=QUADRUPED_SCENARIO,
                short_scenario=QUADRUPED_SHORT)


DEMOS = {demo.name: demo for demo in (
    _quadruped_demo("quadruped", "quadruped_wbc", QUADRUPED_TOPICS,
                    "the simulated quadruped in closed loop: kinodyn.sim in lockstep, state estimator, "
                    "whole-body control, state publisher"),
    _quadruped_demo("quadruped_rt", "quadruped_rt", QUADRUPED_RT_TOPICS,
                    "the same closed loop in one process: kinodyn.sim in lockstep with the state estimator "
                    "and the whole-body controller chained inside control_node (config/quadruped_rt.yaml)"),
    _quadruped_demo("quadruped_mpc", "quadruped_mpc", QUADRUPED_MPC_TOPICS,
                    "the node graph's closed loop with the centroidal MPC planning the whole-body QP's "
                    "forces and base trajectory (config/quadruped_mpc.yaml; the plan on /wbc/mpc/path)"),
)}
