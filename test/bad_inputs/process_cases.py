"""Cases that are a process each: node parameters and URDF files given to a node, `kinodyn up` graph files and
command lines, physics faults in control_node's SimulatedSystem, and a launcher killed with SIGKILL.

A startup case runs the executable with the bad input and waits for it to exit (``matrix.classify_exit``: a
non-zero exit with one error line naming the input is a clear error; still running after the wait means it
was accepted). Several run at once (``BATCH``), the next starting as one ends, to keep the wall time short.
"""

from __future__ import annotations

import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from kinodyn_control.testing import QUADRUPED_JOINTS

from kinodyn_interfaces.srv import Push
from test.bad_inputs.matrix import (
    CLEAR,
    CONTROL_NODE,
    CRASH,
    DOCUMENTED,
    REPO,
    ROS_LIB,
    Case,
    Doc,
    NodeObservation,
    Outcome,
    Result,
    classify_exit,
    classify_node,
)
from test.conftest import stop_process
from test.urdf_corpus import BASE, REFUSED, WARNED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from test.ros_listener import Listener

KINODYN = REPO / "install" / "kinodyn_tools" / "lib" / "kinodyn_tools" / "kinodyn"
PLANAR, ARM7 = REPO / "urdf" / "planar_2link.urdf", REPO / "urdf" / "arm7.urdf"
QUAD_MOCK, QUAD_SIM = REPO / "urdf" / "quadruped.urdf", REPO / "urdf" / "quadruped_sim.urdf"
BATCH = 6
PARAMETER, LAUNCHER, PHYSICS = "node parameter", "launcher", "simulator/physics"
MIMIC = Doc("docs/urdf.md", "a `<mimic>` inside a fixed joint, found in real humanoid URDFs, is ignored")
GUARD = Doc("docs/launcher.md", "A launcher that gets SIGKILL (or crashes) cannot run the stop sequence")
NAN = float("nan")


@dataclass(frozen=True)
class Run:
    """A process to start: ``argv`` (``{tmp}`` is replaced by the scratch directory), files to write there
    first, and how long to wait for it to exit."""

    argv: tuple[str, ...]
    files: tuple[tuple[str, str | bytes], ...] = ()
    wait: float = 30.0


def node(
    executable: str, *args: str, files: tuple[tuple[str, str | bytes], ...] = (), wait: float = 30.0
) -> Run:
    return Run((str(ROS_LIB / executable), "--ros-args", *args), files, wait)


def p(name: str, value: object) -> tuple[str, str]:
    return "-p", f"{name}:={value}"


def urdf(path: Path | str) -> tuple[str, str]:
    return p("robot_description_file", path)


def control(params: dict[str, Any], urdf_text: str | None = None, wait: float = 30.0) -> Run:
    """control_node with a parameter file (``robot_description_file`` defaults to the mock quadruped, or the
    given URDF text written to ``{tmp}/robot.urdf``)."""
    files: list[tuple[str, str | bytes]] = []
    if urdf_text is not None:
        files.append(("robot.urdf", urdf_text))
    full = {
        "update_rate": 100,
        "robot_description_file": "{tmp}/robot.urdf" if urdf_text else str(QUAD_MOCK),
        "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"},
        **params,
    }
    files.append(("params.yaml", yaml.safe_dump({"/**": {"ros__parameters": full}})))
    return Run((str(CONTROL_NODE), "--ros-args", "--params-file", "{tmp}/params.yaml"), tuple(files), wait)


def graph(nodes: object, *extra: str, raw: str | bytes | None = None, wait: float = 30.0) -> Run:
    """``kinodyn up {tmp}/graph.yaml`` with ``nodes`` as its node list (or the ``raw`` file)."""
    text = raw if raw is not None else yaml.safe_dump({"nodes": nodes}, sort_keys=False)
    return Run((str(KINODYN), "up", "{tmp}/graph.yaml", *extra), (("graph.yaml", text),), wait)


def entry(
    name: str = "state_publisher", executable: str = "state_publisher", **params: object
) -> dict[str, Any]:
    return {
        "name": name,
        "package": "kinodyn_ros",
        "executable": executable,
        "parameters": {"robot_description_file": str(PLANAR), **params},
    }


def case(
    surface: str,
    name: str,
    given: str,
    run: Run,
    names: tuple[str, ...] = (),
    expected: str = CLEAR,
    doc: Doc | None = None,
) -> Case:
    return Case(surface, name, given, expected, run, names, doc)


def _urdf_case(executable: str, corpus: str, *args: str) -> Case:
    text, message = REFUSED[corpus]
    return case(
        PARAMETER,
        f"{executable}_urdf_{corpus}",
        f"{executable}: robot_description_file with test/urdf_corpus.py {corpus}",
        node(executable, *urdf("{tmp}/robot.urdf"), *args, files=(("robot.urdf", text),)),
        (message[:60],),
    )


def parameter_cases() -> list[Case]:
    mimic_text, _ = WARNED["mimic_in_fixed_joint"]
    bad_urdf = {
        name: REFUSED[name][0]
        for name in ("nan_joint_origin", "nan_mass", "nan_limit_effort", "missing_parent_link")
    }
    pd = {"type": "kinodyn_control/JointPDController", "joints": list(QUADRUPED_JOINTS[:3])}
    return [
        case(
            PARAMETER,
            "state_publisher_rate_hzz",
            "state_publisher -p rate_hzz:=50.0 (misspelled)",
            node("state_publisher", *urdf(PLANAR), *p("rate_hzz", 50.0)),
            ("rate_hzz",),
        ),
        case(
            PARAMETER,
            "joint_motion_rate_hzz",
            "joint_motion -p rate_hzz:=50.0 (misspelled)",
            node("joint_motion", *urdf(PLANAR), *p("rate_hzz", 50.0)),
            ("rate_hzz",),
        ),
        case(
            PARAMETER,
            "dynamics_publish_gravityy",
            "dynamics -p publish_gravityy:=true",
            node("dynamics", *urdf(ARM7), *p("publish_gravityy", "true")),
            ("publish_gravityy",),
        ),
        case(
            PARAMETER,
            "kinematics_rate_hz_without_ik_frame",
            "kinematics -p rate_hz:=10.0 without ik_frame",
            node("kinematics", *urdf(ARM7), *p("rate_hz", 10.0)),
            ("rate_hz",),
        ),
        case(
            PARAMETER,
            "kinematics_ik_frame_unknown",
            "kinematics -p ik_frame:=ee_lnk",
            node("kinematics", *urdf(ARM7), *p("ik_frame", "ee_lnk")),
            ("ee_lnk",),
        ),
        case(
            PARAMETER,
            "kinematics_clik_gain_negative",
            "kinematics -p ik_frame:=ee_link -p clik_gain:=-1.0",
            node("kinematics", *urdf(ARM7), *p("ik_frame", "ee_link"), *p("clik_gain", -1.0)),
            ("clik_gain",),
        ),
        case(
            PARAMETER,
            "kinematics_ik_timeout_zero",
            "kinematics -p ik_timeout:=0.0",
            node("kinematics", *urdf(ARM7), *p("ik_timeout", 0.0)),
            ("ik_timeout",),
        ),
        case(
            PARAMETER,
            "joint_motion_rate_zero",
            "joint_motion -p rate_hz:=0.0",
            node("joint_motion", *urdf(PLANAR), *p("rate_hz", 0.0)),
            ("rate_hz",),
        ),
        case(
            PARAMETER,
            "joint_motion_amplitude_nan",
            "joint_motion -p amplitude:=.nan",
            node("joint_motion", *urdf(PLANAR), *p("amplitude", ".nan")),
            ("amplitude",),
        ),
        case(
            PARAMETER,
            "joint_motion_rate_string",
            "joint_motion -p rate_hz:=fast (wrong type)",
            node("joint_motion", *urdf(PLANAR), *p("rate_hz", "fast")),
            ("rate_hz",),
        ),
        case(
            PARAMETER,
            "state_publisher_frequency_negative",
            "state_publisher -p publish_frequency:=-5.0",
            node("state_publisher", *urdf(PLANAR), *p("publish_frequency", -5.0)),
            ("publish_frequency",),
        ),
        case(
            PARAMETER,
            "ee_pose_printer_period_negative",
            "ee_pose_printer -p print_period:=-1.0",
            node("ee_pose_printer", *urdf(PLANAR), *p("print_period", -1.0)),
            ("print_period",),
        ),
        case(
            PARAMETER,
            "dynamics_velocity_bound_negative",
            "dynamics -p joint_velocity_bound:=-1.0",
            node("dynamics", *urdf(ARM7), *p("joint_velocity_bound", -1.0)),
            ("joint_velocity_bound",),
        ),
        case(
            PARAMETER,
            "state_publisher_missing_file",
            "state_publisher -p robot_description_file:=/nonexistent.urdf",
            node("state_publisher", *urdf("/nonexistent.urdf")),
            ("/nonexistent.urdf",),
        ),
        case(
            PARAMETER,
            "state_publisher_both_descriptions",
            "state_publisher with robot_description and robot_description_file",
            node("state_publisher", *urdf(PLANAR), *p("robot_description", "<robot/>")),
            ("robot_description",),
        ),
        case(
            PARAMETER,
            "state_publisher_binary_urdf",
            "state_publisher: robot_description_file is a binary file",
            node("state_publisher", *urdf("{tmp}/robot.urdf"), files=(("robot.urdf", bytes(range(256))),)),
            ("UTF-8",),
        ),
        case(
            PARAMETER,
            "state_publisher_empty_urdf",
            "state_publisher: robot_description_file is an empty file",
            node("state_publisher", *urdf("{tmp}/robot.urdf"), files=(("robot.urdf", ""),)),
            ("empty",),
        ),
        _urdf_case("state_publisher", "nan_mass"),
        _urdf_case("state_publisher", "lower_above_upper"),
        _urdf_case("state_publisher", "negative_mass"),
        _urdf_case("dynamics", "nan_joint_origin"),
        _urdf_case("kinematics", "missing_parent_link"),
        _urdf_case("joint_motion", "nan_limit_effort"),
        case(
            PARAMETER,
            "dynamics_mimic_in_fixed_joint",
            "dynamics: URDF with a <mimic> in a fixed joint",
            node("dynamics", *urdf("{tmp}/robot.urdf"), files=(("robot.urdf", mimic_text),), wait=15.0),
            ("mimic",),
            DOCUMENTED,
            MIMIC,
        ),
        case(
            PARAMETER,
            "control_node_rate_hzz",
            "control_node: rate_hzz: 100 (misspelled)",
            control({"rate_hzz": 100}),
            ("rate_hzz",),
        ),
        case(
            PARAMETER,
            "control_node_update_rate_zero",
            "control_node: update_rate: 0",
            control({"update_rate": 0}),
            ("update_rate",),
        ),
        case(
            PARAMETER,
            "control_node_update_rate_negative",
            "control_node: update_rate: -100",
            control({"update_rate": -100}),
            ("update_rate",),
        ),
        case(
            PARAMETER,
            "control_node_controller_param_unknown",
            "control_node: leg_pd.kpp: 3.0",
            control({"leg_pd": {**pd, "kpp": 3.0}}),
            ("kpp",),
        ),
        case(
            PARAMETER,
            "control_node_controller_type_unknown",
            "control_node: leg_pd.type: kinodyn_control/PID",
            control({"leg_pd": {**pd, "type": "kinodyn_control/PID"}}),
            ("kinodyn_control/PID",),
        ),
        case(
            PARAMETER,
            "control_node_controller_joint_unknown",
            "control_node: leg_pd.joints: [LF_KNEE]",
            control({"leg_pd": {**pd, "joints": ["LF_KNEE"]}}),
            ("LF_KNEE",),
        ),
        case(
            PARAMETER,
            "control_node_watchdog_negative",
            "control_node: leg_pd.watchdog_timeout: -1.0",
            control({"leg_pd": {**pd, "watchdog_timeout": -1.0}}),
            ("watchdog_timeout",),
        ),
        case(
            PARAMETER,
            "control_node_safe_mode_unknown",
            "control_node: leg_pd.safe_mode: freeze",
            control({"leg_pd": {**pd, "safe_mode": "freeze"}}),
            ("safe_mode", "freeze"),
        ),
        case(
            PARAMETER,
            "control_node_lockstep_on_forward",
            "control_node: lockstep with a ForwardCommandController",
            control(
                {
                    "lockstep": True,
                    "fwd": {
                        "type": "kinodyn_control/ForwardCommandController",
                        "joints": list(QUADRUPED_JOINTS[:3]),
                        "interface_name": "effort",
                    },
                }
            ),
            ("lockstep", "fwd"),
        ),
        *[
            case(
                PARAMETER,
                f"control_node_urdf_{name}",
                f"control_node (GenericSystem): URDF {name}",
                control({}, mock_variant(text)),
                (REFUSED[name][1][:40],),
            )
            for name, text in bad_urdf.items()
        ],
        case(
            PARAMETER,
            "control_node_sim_nan_effort_limit",
            'control_node (SimulatedSystem): effort="nan" in a <limit>',
            control({}, QUAD_SIM.read_text().replace('effort="80.0"', 'effort="nan"', 1)),
            ("nan",),
        ),
        case(
            PARAMETER,
            "control_node_urdf_without_ros2_control",
            "control_node: a URDF without <ros2_control>",
            control({}, re.sub(r"<ros2_control.*</ros2_control>", "", BASE, flags=re.S)),
            ("ros2_control",),
        ),
        case(
            PARAMETER,
            "control_node_mimic_in_fixed_joint",
            "control_node: URDF with a <mimic> in a fixed joint",
            control({}, mock_variant(mimic_text), wait=15.0),
            ("mimic",),
            DOCUMENTED,
            MIMIC,
        ),
    ]


def mock_variant(text: str) -> str:
    """A corpus URDF (SimulatedSystem without a ROS interface) on GenericSystem, as mock hardware has it."""
    return text.replace("kinodyn_control/SimulatedSystem", "kinodyn_control/GenericSystem").replace(
        '<param name="ros_interface">false</param>', ""
    )


def launcher_cases() -> list[Case]:
    good = entry()
    return [
        case(LAUNCHER, *c)
        for c in [
            ("graph_unknown_key", "a graph file with 'nodez:'", graph(None, raw="nodez: []\n"), ("nodez",)),
            (
                "node_unknown_key",
                "a node with 'param:' instead of 'parameters:'",
                graph([{**{k: v for k, v in good.items() if k != "parameters"}, "param": {"a": 1.0}}]),
                ("param",),
            ),
            (
                "node_missing_executable",
                "a node without 'executable'",
                graph([{k: v for k, v in good.items() if k != "executable"}]),
                ("executable",),
            ),
            (
                "unknown_package",
                "package: kinodyn_rso",
                graph([{**good, "package": "kinodyn_rso"}]),
                ("kinodyn_rso",),
            ),
            (
                "unknown_executable",
                "executable: state_publsher",
                graph([{**good, "executable": "state_publsher"}]),
                ("state_publsher",),
            ),
            (
                "duplicate_node_name",
                "two nodes named state_publisher",
                graph([good, good]),
                ("state_publisher",),
            ),
            ("invalid_node_name", "name: 1st-node", graph([{**good, "name": "1st-node"}]), ("1st-node",)),
            ("mixed_list_parameter", "parameter gains: [1, 0.5]", graph([entry(gains=[1, 0.5])]), ("gains",)),
            ("empty_list_parameter", "parameter joints: []", graph([entry(joints=[])]), ("joints",)),
            (
                "null_parameter",
                "parameter frame_prefix: null",
                graph([entry(frame_prefix=None)]),
                ("frame_prefix",),
            ),
            (
                "unknown_substitution_package",
                "$(find-pkg-share no_such_pkg) in a parameter",
                graph([entry(robot_description_file="$(find-pkg-share no_such_pkg)/x.urdf")]),
                ("no_such_pkg",),
            ),
            (
                "not_yaml",
                "a graph file that is not YAML ('nodes: [')",
                graph(None, raw="nodes: [\n"),
                ("graph.yaml", "yaml"),
            ),
            ("binary_file", "a binary graph file", graph(None, raw=bytes(range(256))), ("graph.yaml",)),
            ("empty_file", "an empty graph file", graph(None, raw=""), ("graph.yaml", "nodes", "empty")),
            (
                "missing_file",
                "kinodyn up /nonexistent/graph.yaml",
                Run((str(KINODYN), "up", "/nonexistent/graph.yaml")),
                ("/nonexistent/graph.yaml",),
            ),
            (
                "unknown_graph_name",
                "kinodyn up no_such_graph",
                Run((str(KINODYN), "up", "no_such_graph")),
                ("no_such_graph",),
            ),
            (
                "timeout_negative",
                "kinodyn up planar_demo --timeout -1",
                Run((str(KINODYN), "up", str(REPO / "config" / "planar_demo.yaml"), "--timeout", "-1")),
                ("timeout",),
            ),
            (
                "timeout_not_a_number",
                "kinodyn up planar_demo --timeout soon",
                Run((str(KINODYN), "up", str(REPO / "config" / "planar_demo.yaml"), "--timeout", "soon")),
                ("timeout", "soon"),
            ),
            (
                "unknown_command",
                "kinodyn upp planar_demo",
                Run((str(KINODYN), "upp", "planar_demo")),
                ("upp",),
            ),
            (
                "node_misspelled_parameter",
                "a graph whose state_publisher has rate_hzz: 50.0 (the node exits 1, "
                "the launcher stops the graph)",
                graph([entry(rate_hzz=50.0)], "--timeout", "30"),
                ("rate_hzz",),
            ),
            (
                "node_bad_urdf",
                "a graph whose state_publisher reads a URDF with a NaN joint origin",
                Run(
                    (str(KINODYN), "up", "{tmp}/graph.yaml", "--timeout", "30"),
                    (
                        ("robot.urdf", REFUSED["nan_joint_origin"][0]),
                        (
                            "graph.yaml",
                            yaml.safe_dump({"nodes": [entry(robot_description_file="{tmp}/robot.urdf")]}),
                        ),
                    ),
                ),
                ("nan",),
            ),
        ]
    ]


# --- running -----------------------------------------------------------------------------------------------
def _start(spawn: Callable[..., Any], c: Case, tmp: Path) -> tuple[Any, float]:
    run: Run = c.payload
    folder = tmp / c.name
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in run.files:
        path = folder / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content.replace("{tmp}", str(folder)))
    argv = [a.replace("{tmp}", str(folder)) for a in run.argv]
    return spawn(argv, f"case_{c.name}"), time.monotonic() + run.wait


SILENT_START_GRACE = 90.0
"""Wall seconds a startup case's process that has printed nothing yet may take beyond its wait."""


def run_startup_cases(spawn: Callable[..., Any], cases: list[Case], tmp: Path) -> Iterator[Result]:
    """Run ``cases`` with ``BATCH`` processes at a time (the next starts as soon as one has ended); a process
    still running at its deadline is stopped and counted as having accepted its input. A process that has
    printed nothing by then has not yet read its input (a stalled start on a loaded machine): it gets up to
    ``SILENT_START_GRACE`` s more to print or exit."""
    queue = list(cases)
    running: list[tuple[Case, Any, float]] = []
    while queue or running:
        while queue and len(running) < BATCH:
            c = queue.pop(0)
            running.append((c, *_start(spawn, c, tmp)))
        time.sleep(0.1)
        for started in list(running):
            c, proc, deadline = started
            now, log = time.monotonic(), Path(proc.log_path)
            silent = not log.read_text(errors="replace")
            if proc.poll() is None and (now < deadline or (now < deadline + SILENT_START_GRACE and silent)):
                continue
            running.remove(started)
            code = proc.poll()
            if code is None:
                stop_process(proc)
            yield Result(
                c, classify_exit(c, code, log.read_text(errors="replace"), c.payload.wait)
            )


def marked_processes(marker: str) -> list[int]:
    """Pids of the processes whose environment holds ``marker`` (every process a launcher started)."""
    pids = []
    for entry_ in Path("/proc").iterdir():
        if entry_.name.isdigit():
            try:
                if marker.encode() in (entry_ / "environ").read_bytes():
                    pids.append(int(entry_.name))
            except OSError:
                continue
    return pids


def launcher_sigkill_case(spawn: Callable[..., Any], tmp: Path) -> Result:
    """``kinodyn up config/planar_demo.yaml``, SIGKILL to the launcher once its nodes run: within 15 s no node
    process may be left, nor a new ``kinodyn-params-*`` folder in the temporary directory."""
    c = case(
        LAUNCHER,
        "launcher_sigkill",
        "kill -9 of `kinodyn up config/planar_demo.yaml` while its nodes run",
        None,
        expected=DOCUMENTED,
        doc=GUARD,
    )
    marker = f"KINODYN_BAD_INPUT_CASE={os.getpid()}_{time.monotonic_ns()}"
    temp = Path(os.environ.get("TMPDIR", "/tmp"))
    before = set(temp.glob("kinodyn-params-*"))
    env = {**os.environ, marker.split("=", maxsplit=1)[0]: marker.split("=")[1]}
    proc = spawn(
        [str(KINODYN), "up", str(REPO / "config" / "planar_demo.yaml")], "case_launcher_sigkill", env=env
    )
    log = Path(proc.log_path)
    deadline = time.monotonic() + 60
    while "[ee_pose_printer]" not in log.read_text(errors="replace") and time.monotonic() < deadline:
        time.sleep(0.2)
    if proc.poll() is not None:
        return Result(c, Outcome(CRASH, f"the launcher ended by itself: {log.read_text()[-300:]}"))
    os.kill(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    left, folders = marked_processes(marker), set(temp.glob("kinodyn-params-*")) - before
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    if left or folders:
        return Result(c, Outcome(CRASH, f"after 15 s: processes left {left}, folders left {sorted(folders)}"))
    return Result(
        c, Outcome(DOCUMENTED, "every node stopped, no parameter folder left (as docs/launcher.md says)")
    )


# --- physics faults ----------------------------------------------------------------------------------------
def push(
    link: str = "base_link", force: float = 100.0, duration: float = 0.01, torque: float = 0.0
) -> Push.Request:
    request = Push.Request(link=link, duration=duration)
    request.wrench.force.x, request.wrench.torque.z = force, torque
    return request


PUSH_CASES = [
    ("push_nan_force", "~/push force NaN", push(force=NAN), ("finite", "force")),
    ("push_1e300_force", "~/push force 1e300 N", push(force=1e300), ("max_push_force",)),
    ("push_unknown_link", "~/push on 'base_lnk'", push(link="base_lnk"), ("base_lnk",)),
    ("push_duration_zero", "~/push duration 0", push(duration=0.0), ("duration",)),
    ("push_duration_nan", "~/push duration NaN", push(duration=NAN), ("duration",)),
    ("push_torque_inf", "~/push torque inf", push(torque=float("inf")), ("finite", "torque")),
]


def sim_params() -> dict[str, Any]:
    return {
        "update_rate": 500,
        "robot_description_file": "{tmp}/robot.urdf",
        "joint_state_broadcaster": {"type": "kinodyn_control/JointStateBroadcaster"},
        "leg_pd_controller": {"type": "kinodyn_control/JointPDController", "joints": list(QUADRUPED_JOINTS)},
    }

PHYSICS_FAULT = "push_1e8_breaks_physics"
PHYSICS_CASE_NAMES = [*(c[0] for c in PUSH_CASES), PHYSICS_FAULT]
"""Every case run_physics_cases yields, in its order."""


HANG = 60  # s of wall time: a node still running this long after a fatal fault hangs (a loaded machine
# runs the 500 Hz loop slower than the wall clock)


def run_physics_cases(spawn: Callable[..., Any], tmp: Path, listener: Listener) -> Iterator[Result]:
    """control_node on the simulated quadruped with ``max_push_force`` raised to 1e9 N in its URDF: the push
    refusals, then a 1e8 N push that breaks the physics (the node must exit non-zero with one error line)."""
    folder = tmp / "physics"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "robot.urdf").write_text(
        QUAD_SIM.read_text().replace(
            '<param name="dt">0.002</param>',
            '<param name="dt">0.002</param><param name="max_push_force">1e9</param>'
            '<param name="max_push_duration">10.0</param>',
            1,
        )
    )
    params = yaml.safe_dump({"/**": {"ros__parameters": sim_params()}}).replace("{tmp}", str(folder))
    (folder / "params.yaml").write_text(params)
    proc = spawn(
        [str(CONTROL_NODE), "--ros-args", "--params-file", str(folder / "params.yaml")], "case_physics"
    )
    client = listener.node.create_client(Push, "/quadruped_system/push")
    assert client.wait_for_service(timeout_sec=60), Path(proc.log_path).read_text()
    log = Path(proc.log_path)
    cases = [Case(PHYSICS, n, g, CLEAR, r, names) for n, g, r, names in PUSH_CASES]
    for c in cases:
        offset = len(log.read_text(errors="replace"))
        future = client.call_async(c.payload)
        listener.spin_until(future.done, 20)
        answer = future.result() if future.done() else None
        seen = NodeObservation(
            proc.poll() is None,
            log.read_text(errors="replace")[offset:],
            reply=(answer.success, answer.message, ()) if answer else None,
            answered=answer is not None,
        )
        yield Result(c, classify_node(c, seen, set()))
    fault = Case(
        PHYSICS,
        PHYSICS_FAULT,
        "~/push 1e8 N on a foot for 0.1 s (max_push_force raised to 1e9): the physics fails",
        CLEAR,
        None,
        ("physics", "simulation", "diverged", "positive definite"),
    )
    offset, pushed = len(log.read_text(errors="replace")), time.monotonic()
    client.call_async(push("LF_FOOT", 1e8, 0.1))
    listener.spin_until(lambda: proc.poll() is not None, HANG)  # the matrix's hang: no end within 60 s
    code, took = proc.poll(), time.monotonic() - pushed
    if code is None:
        tail = log.read_text()[-300:]
        yield Result(fault, Outcome(CRASH, f"still running {HANG} s after the fault: {tail}"))
        return
    outcome = classify_exit(fault, code, log.read_text(errors="replace")[offset:], took)
    yield Result(fault, Outcome(outcome.category, f"{outcome.detail} (exited {took:.1f} s after the push)"))
