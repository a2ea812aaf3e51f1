"""`kinodyn report` (docs/report.md) on bags written with BagWriter from series of known values.

The synthetic run (closed forms, no simulator): the base drives a circle at a constant pitch in the heading
frame; the command differs from the motion by a known constant (so the RMSE is that constant, in the heading
frame, which a world- or base-frame comparison would not give); the estimate is the truth seen from another
odom frame (offset and rotated) plus a linear drift of known length; a trot schedule with one foot touching
down late by a known time; one joint's effort peaks at 90 % of its URDF limit; the wbc's diagnostics carry
known tick counts and solve times.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from kinodyn.estimation.metrics import AccuracyReport
from kinodyn.spatial import rot_y, rot_z
from kinodyn_common.stamps import NS, seconds_to_ns, split_ns
from kinodyn_tools.bags.writer import BagWriter
from kinodyn_tools.launcher.cli import main
from kinodyn_tools.report import series
from kinodyn_tools.report.build import load_model, make_report
from kinodyn_tools.report.figures import intervals
from kinodyn_tools.report.html import SECTIONS
from kinodyn_tools.report.metrics import Missing, drift_text, run_metrics
from kinodyn_tools.report.series import ReportTopics, read_series, resolve_topics
from std_msgs.msg import String

import kinodyn as kd

if TYPE_CHECKING:
    from kinodyn_tools.report.build import Report
    from numpy.typing import ArrayLike

URDF = Path(__file__).resolve().parents[3] / "urdf" / "quadruped_sim.urdf"
RATE, DURATION, T0 = 100, 4.0, 1000.0
STEPS = int(DURATION * RATE)
SPEED = np.array([0.5, 0.1])  # m/s, heading frame
YAW_RATE, PITCH = 0.2, 0.1  # rad/s, rad
COMMAND = np.array([0.6, 0.0, 0.25])  # vx, vy, wz sent from COMMAND_START on
COMMAND_START = 1.0
DRIFT = np.array([0.03, 0.04])  # m at the end, in the estimate's frame (0.05 m long)
ESTIMATE_YAW, ESTIMATE_OFFSET = 0.3, np.array([-10.0, -5.0, 0.0])
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]
GAIT_PERIOD, LATE = 0.5, 0.05  # s; RF_FOOT touches down LATE after its planned stance starts
STANCE_FORCE, SPIKE = 100.0, 150.0  # N; one LF_FOOT sample carries the spike
PEAK_JOINT, PEAK_RATIO = "LF_KFE", 0.9
SLOW_TICKS, SLOW_US, FAST_US = 4, 2000, 400  # of the 400 ticks, 4 solve in 2 ms, the others in 0.4 ms
# tick latency: the solve time plus 0.1 ms (plus 1 ms for the slow ticks)


def _stamp(types: dict[str, Any], t: float, frame: str = "") -> Any:  # noqa: ANN401  (rosbags builds the message classes at run time)
    sec, nanosec = split_ns(seconds_to_ns(T0 + t))
    return types["std_msgs/msg/Header"](stamp=types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec),
                                        frame_id=frame)


def _vector(types: dict[str, Any], v: ArrayLike, kind: str = "Vector3") -> Any:  # noqa: ANN401  (rosbags builds the message classes at run time)
    return types[f"geometry_msgs/msg/{kind}"](x=float(v[0]), y=float(v[1]), z=float(v[2]))


def _quaternion(C: np.ndarray) -> np.ndarray:
    return kd.spatial.matrix_to_quat(C)


def truth_state(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Position, C_WB, base-frame linear and angular velocity of the circle at time t."""
    yaw = YAW_RATE * t
    # integral of Rz(yaw(s)) @ SPEED ds from 0 to t
    sx, sy = SPEED
    position = np.array([(sx * math.sin(yaw) + sy * (math.cos(yaw) - 1.0)) / YAW_RATE,
                         (sx * (1.0 - math.cos(yaw)) + sy * math.sin(yaw)) / YAW_RATE, 0.4])
    C = rot_z(yaw) @ rot_y(PITCH)
    heading_velocity = np.array([sx, sy, 0.0])
    linear = rot_y(PITCH).T @ heading_velocity
    angular = C.T @ np.array([0.0, 0.0, YAW_RATE])
    return position, C, linear, angular


def _odometry(types: dict[str, Any], t: float, position: np.ndarray, C: np.ndarray, linear: np.ndarray,
              angular: np.ndarray) -> Any:  # noqa: ANN401  (rosbags builds the message classes at run time)
    pose = types["geometry_msgs/msg/Pose"](position=_vector(types, position, "Point"),
                                           orientation=types["geometry_msgs/msg/Quaternion"](
                                               *(float(x) for x in _quaternion(C))))
    twist = types["geometry_msgs/msg/Twist"](linear=_vector(types, linear), angular=_vector(types, angular))
    return types["nav_msgs/msg/Odometry"](
        header=_stamp(types, t, "odom"), child_frame_id="base_link",
        pose=types["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=np.zeros(36)),
        twist=types["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=np.zeros(36)))


def planned_stance(k: int) -> list[bool]:
    """Trot of sample ``k`` (integer phases: no rounding at the switches)."""
    first_half = k % round(GAIT_PERIOD * RATE) < round(GAIT_PERIOD * RATE / 2)
    return [first_half, not first_half, not first_half, first_half]  # LF+RH, then LH+RF


def measured_contact(k: int) -> list[bool]:
    touching = planned_stance(k)
    touching[2] = k % round(GAIT_PERIOD * RATE) >= round((GAIT_PERIOD / 2 + LATE) * RATE)  # RF: LATE
    return touching


def joint_efforts(t: float, names: list[str]) -> np.ndarray:
    """Sinusoids of period 1 s; PEAK_JOINT peaks at PEAK_RATIO of 80 N m at t = 0.25 s (a sample)."""
    amplitude = np.where(np.array(names) == PEAK_JOINT, PEAK_RATIO * 80.0, 40.0)
    return amplitude * math.sin(2.0 * math.pi * t)


def _diagnostics(types: dict[str, Any], t: float, name: str, values: dict[str, str]) -> Any:  # noqa: ANN401  (rosbags builds the message classes at run time)
    status = types["diagnostic_msgs/msg/DiagnosticStatus"](
        level=0, name=name, message="", hardware_id="base_link",
        values=[types["diagnostic_msgs/msg/KeyValue"](key=k, value=v) for k, v in values.items()])
    return types["diagnostic_msgs/msg/DiagnosticArray"](header=_stamp(types, t), status=[status])


def write_run(path: Path, topics: tuple[str, ...] | None = None, per_tick: bool = True) -> None:
    """The synthetic run (module doc) as a bag; only ``topics`` when given."""
    joints = list(load_model(URDF).joint_names)
    with BagWriter(path) as bag:
        declared = {"/quadruped_system/odometry": "nav_msgs/msg/Odometry",
                    "/odometry/filtered": "nav_msgs/msg/Odometry",
                    "/wbc/cmd_vel": "geometry_msgs/msg/TwistStamped",
                    "/quadruped_system/contacts": "kinodyn_interfaces/msg/ContactStates",
                    "/contact_schedule": "kinodyn_interfaces/msg/ContactStates",
                    "/joint_states": "sensor_msgs/msg/JointState",
                    "/leg_pd_controller/commands": "kinodyn_interfaces/msg/JointPDCommand",
                    "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray"}
        for topic, msgtype in declared.items():
            if topics is None or topic in topics:
                bag.add_topic(topic, msgtype)
        types = bag.typestore.types
        R = rot_z(ESTIMATE_YAW)
        p0 = truth_state(0.0)[0]
        tick_times = [SLOW_US] * SLOW_TICKS + [FAST_US] * (STEPS - SLOW_TICKS)
        for k in range(STEPS):
            t = k / RATE
            messages: dict[str, Any] = {}
            position, C, linear, angular = truth_state(t)
            messages["/quadruped_system/odometry"] = _odometry(types, t, position, C, linear, angular)
            drift = np.append(DRIFT * t / ((STEPS - 1) / RATE), 0.0)
            estimate = R @ (position - p0) + ESTIMATE_OFFSET + drift
            messages["/odometry/filtered"] = _odometry(types, t, estimate, R @ C, linear, angular)
            if t >= COMMAND_START and k % 5 == 0:  # 20 Hz
                messages["/wbc/cmd_vel"] = types["geometry_msgs/msg/TwistStamped"](
                    header=_stamp(types, t), twist=types["geometry_msgs/msg/Twist"](
                        linear=_vector(types, [COMMAND[0], COMMAND[1], 0.0]),
                        angular=_vector(types, [0.0, 0.0, COMMAND[2]])))
            touching = measured_contact(k)
            forces = [STANCE_FORCE * on for on in touching]
            if k == 10:
                forces[0] = SPIKE
            messages["/quadruped_system/contacts"] = types["kinodyn_interfaces/msg/ContactStates"](
                header=_stamp(types, t, "world"), names=FEET, in_contact=np.array(touching),
                points=[_vector(types, [0, 0, 0], "Point") for _ in FEET],
                forces=[_vector(types, [0.0, 0.0, f]) for f in forces])
            messages["/contact_schedule"] = types["kinodyn_interfaces/msg/ContactStates"](
                header=_stamp(types, t), names=FEET, in_contact=np.array(planned_stance(k)),
                points=[_vector(types, [0, 0, 0], "Point") for _ in FEET],
                forces=[_vector(types, [0, 0, 0]) for _ in FEET])
            effort = joint_efforts(t, joints)
            zeros = np.zeros(len(joints))
            messages["/joint_states"] = types["sensor_msgs/msg/JointState"](
                header=_stamp(types, t), name=joints, position=zeros, velocity=zeros, effort=effort)
            messages["/leg_pd_controller/commands"] = types["kinodyn_interfaces/msg/JointPDCommand"](
                header=_stamp(types, t), name=joints, position=zeros, velocity=zeros, effort=0.5 * effort,
                kp=zeros, kd=zeros)
            if k % 50 == 49:  # a wbc window of 50 ticks every 0.5 s, and the estimator's status
                window = tick_times[k - 49:k + 1]
                values = {"ticks": "50", "held_ticks": "5" if k == 49 else "0", "damped_ticks": "1" if k == 99
                          else "0", "qp_failures": "1" if k == 99 else "0", "saturated_ticks": "2",
                          "status": "solved" if k != 99 else "infeasible",
                          "solve_time_median_ms": repr(float(np.median(window)) / 1e3),
                          "solve_time_max_ms": repr(max(window) / 1e3),
                          "tick_latency_median_ms": repr(float(np.median(window)) / 1e3 + 0.1),
                          "tick_latency_max_ms": repr(max(window) / 1e3 + 1.0)}
                if per_tick:
                    values["solve_times_us"] = " ".join(str(x) for x in window)
                    values["tick_latencies_us"] = " ".join(str(x + (1000 if x == SLOW_US else 100))
                                                           for x in window)
                messages["/diagnostics"] = _diagnostics(types, t, "wbc", values)
                if "/diagnostics" in bag.topics:
                    bag.write("/diagnostics", round((T0 + t) * 1e9),
                              _diagnostics(types, t, "state_estimator", {"ticks": "1000"}))
            for topic, message in messages.items():
                if topic in bag.topics:
                    bag.write(topic, round((T0 + t) * 1e9), message)


@pytest.fixture(scope="module")
def full_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    directory = tmp_path_factory.mktemp("report")
    write_run(directory / "run")
    return make_report(directory / "run", directory / "report.html", load_model(URDF))


def test_estimate_drift_and_alignment(full_report: Report) -> None:
    """The estimate is the truth in another odom frame plus a 0.05 m linear drift: the alignment removes the
    frame exactly, so the final error is the drift, over the circle's arc length."""
    e = full_report.metrics.estimate
    arc = math.hypot(*SPEED) * (STEPS - 1) / RATE
    assert e.accuracy.samples == STEPS
    assert e.accuracy.path_length == pytest.approx(arc, rel=1e-6)
    assert e.accuracy.final_horizontal_error == pytest.approx(0.05, abs=1e-9)
    assert e.accuracy.drift == pytest.approx(0.05 / arc, rel=1e-6)
    assert e.horizontal_error == pytest.approx(0.05 * e.t / e.t[-1], abs=1e-9)
    assert e.distance[-1] == pytest.approx(arc, rel=1e-6)
    assert e.accuracy.roll_rmse_deg == pytest.approx(0.0, abs=1e-9)


def test_velocity_tracking_in_the_heading_frame(full_report: Report) -> None:
    """Command (0.6, 0, 0.25) against motion (0.5, 0.1, 0.2) in the heading frame: RMSE (0.1, 0.1, 0.05).
    In the base frame (pitched 0.1 rad) vx would read 0.5 cos 0.1."""
    v = full_report.metrics.tracking
    assert v.source == "/quadruped_system/odometry"
    assert v.t[0] == pytest.approx(COMMAND_START)
    assert v.rmse == pytest.approx([0.1, 0.1, 0.05], abs=1e-9)
    assert v.measured[:, 0] == pytest.approx(SPEED[0], abs=1e-9)
    assert v.commanded == pytest.approx(np.tile(COMMAND, (len(v.t), 1)))


def test_contacts_against_the_schedule(full_report: Report) -> None:
    """RF touches down 0.05 s late in each 0.25 s stance: it agrees with the plan 90 % of the time, the others
    always; the spike is the peak; stance force is 100 N (RF's late samples carry 0)."""
    feet = {f.name: f for f in full_report.metrics.contacts.feet}
    assert list(feet) == FEET
    assert feet["LF_FOOT"].peak_force == SPIKE
    assert feet["LH_FOOT"].peak_force == STANCE_FORCE
    assert feet["LH_FOOT"].agreement == 1.0
    assert feet["LH_FOOT"].planned_stance == pytest.approx(0.5)
    assert feet["RF_FOOT"].agreement == pytest.approx(1.0 - LATE / GAIT_PERIOD)
    assert feet["RF_FOOT"].measured_contact == pytest.approx(0.5 - LATE / GAIT_PERIOD)
    assert feet["RF_FOOT"].mean_stance_force == pytest.approx(STANCE_FORCE * (1.0 - LATE / (GAIT_PERIOD / 2)))


def test_torques_against_the_urdf_limits(full_report: Report) -> None:
    joints = {j.name: j for j in full_report.metrics.torques.joints}
    assert len(joints) == 12
    peak = joints[PEAK_JOINT]
    assert peak.limit == 80.0
    assert peak.ratio == pytest.approx(PEAK_RATIO, abs=1e-12)
    assert peak.at == pytest.approx(0.25)
    assert peak.max_commanded == pytest.approx(0.5 * PEAK_RATIO * 80.0)
    assert joints["LF_HAA"].ratio == pytest.approx(0.5)
    assert "90.0 % of its limit" in full_report.summary[2]
    assert PEAK_JOINT in full_report.summary[2]


def test_wbc_solve_times_and_counts(full_report: Report) -> None:
    """400 ticks, 4 of 2 ms: median 0.4 ms, p99 (linear interpolation at rank 0.99 * 399 = 395.01)
    0.4 + 0.01 * 1.6 = 0.416 ms; the estimator's status on the same topic is not counted."""
    w = full_report.metrics.wbc
    solve = w.timings["QP solve time"]
    assert solve.median == pytest.approx(0.4)
    assert solve.max == pytest.approx(2.0)
    assert solve.p99 == pytest.approx(0.416)
    latency = w.timings["tick latency"]
    assert latency.median == pytest.approx(0.5)
    assert latency.p99 == pytest.approx(0.5 + 0.01 * 2.5)
    assert w.counts == {"all": 400, "solved": 394, "held (no base state)": 5, "damped (fallback)": 1,
                        "QP failures": 1, "saturated": 16}
    assert w.statuses == {"solved": 7, "infeasible": 1}


def test_page_is_self_contained_and_holds_every_section(full_report: Report) -> None:
    text = full_report.output.read_text(encoding="utf-8")
    root = ET.fromstring(text.split("\n", 1)[1])  # well-formed XML after the doctype line
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert len(ids) == len(set(ids)), "element ids repeat across the inline SVGs"
    assert {h.get("id") for h in root.iter("h2")} >= set(SECTIONS)
    urls = re.findall(r'([\w:-]+)=["\']?(https?:[^"\' ]*)', text)
    assert urls, urls
    assert all(name.startswith("xmlns") for name, _ in urls), urls  # only the SVG namespaces
    assert len(re.findall(r"https?:", text)) == len(urls)  # no URL elsewhere (CSS url(), @import, text)
    tags = {e.tag.split("}")[-1] for e in root.iter()}
    assert not tags & {"script", "link", "img", "iframe"}
    assert sum(1 for e in root.iter() if e.tag.endswith("svg")) >= 8
    for line in full_report.summary:
        assert line.split()[0] in text
    assert "0.416" in text
    assert "0.525" in text
    assert "90.0" in text
    assert "/quadruped_system/odometry" in text


def test_missing_topics_give_one_line_each(tmp_path: Path) -> None:
    """A bag with the joint states only (no efforts needed for the others): every other section says what is
    missing, the torques are judged without limits (no URDF), and the page still parses."""
    write_run(tmp_path / "run", topics=("/joint_states",))
    report = make_report(tmp_path / "run", tmp_path / "r.html")
    m = report.metrics
    for section in (m.estimate, m.tracking, m.contacts, m.wbc):
        assert isinstance(section, Missing)
    assert "/odometry/filtered" in m.estimate.reason
    assert "--estimate-topic" in m.estimate.reason
    assert "/wbc/cmd_vel" in m.tracking.reason
    assert not isinstance(m.torques, Missing)
    assert math.isnan(m.torques.joints[0].limit)
    assert any("--urdf" in note for note in m.torques.notes)
    text = report.output.read_text(encoding="utf-8")
    ET.fromstring(text.split("\n", 1)[1])
    assert text.count('class="missing"') == 4


def test_solve_times_from_window_summaries_only(tmp_path: Path) -> None:
    """Diagnostics without per-tick times: the tick-weighted median of the window medians and the max; no
    p99."""
    write_run(tmp_path / "run", topics=("/diagnostics",), per_tick=False)
    report = make_report(tmp_path / "run", tmp_path / "r.html")
    solve = report.metrics.wbc.timings["QP solve time"]
    assert solve.per_tick is None
    assert math.isnan(solve.p99)
    assert solve.median == pytest.approx(0.4)
    assert solve.max == pytest.approx(2.0)
    assert "the p99 is not in the bag" in report.output.read_text(encoding="utf-8")
    assert "p99 not in the bag" in report.summary[-3]


def test_topics_found_by_type() -> None:
    available = {"/odometry/filtered": "nav_msgs/msg/Odometry", "/a/odometry": "nav_msgs/msg/Odometry",
                 "/b/contacts": "kinodyn_interfaces/msg/ContactStates",
                 "/c/contacts": "kinodyn_interfaces/msg/ContactStates",
                 "/contact_schedule": "kinodyn_interfaces/msg/ContactStates"}
    found, missing = resolve_topics(available, ReportTopics())
    assert found["truth"] == "/a/odometry"
    assert found["estimate"] == "/odometry/filtered"
    assert "/b/contacts, /c/contacts" in missing["contacts"]
    assert "--contacts-topic" in missing["contacts"]
    chosen = ReportTopics(truth="/odometry/filtered", schedule="/b/contacts")
    found, missing = resolve_topics(available, chosen)
    assert found["truth"] == "/odometry/filtered"
    assert found["contacts"] == "/c/contacts"


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(tmp_path / "run", topics=("/joint_states", "/quadruped_system/odometry"))
    assert main(["report", str(tmp_path / "run"), "--urdf", str(URDF), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "report.html").is_file()
    assert f"wrote {tmp_path / 'report.html'}" in out
    assert "90.0 % of its limit" in out
    assert main(["report", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "is no rosbag2 bag" in err[0]
    assert main(["report", str(tmp_path / "run"), "--urdf", str(tmp_path / "none.urdf")]) == 2
    assert "cannot read URDF" in capsys.readouterr().err


def test_no_drift_figure_for_a_base_standing_still() -> None:
    """Drift is error / path: over a few centimetres it is noise over noise, so the page says why not."""
    standing = AccuracyReport(100, 0.002, 1e-5, 5e-3, 1e-5, 0.0, 0.0, 0.0, 0.0)
    assert drift_text(standing) == "none: the base travelled 0.00 m (under 0.5 m)"
    walking = AccuracyReport(100, 2.0, 0.01, 0.005, 0.01, 0.0, 0.0, 0.0, 0.0)
    assert drift_text(walking) == "0.50 % of 2.00 m"


def test_stance_bands_are_the_runs_of_the_schedule() -> None:
    """Each planned stance is one band from its first stamp to the stamp after its last sample."""
    t = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    assert intervals(t, np.array([1, 1, 0, 0, 1, 1], bool)) == [(0.0, 0.2), (0.4, pytest.approx(0.1))]
    assert intervals(t, np.array([0, 1, 1, 1, 0, 0], bool)) == [(0.1, pytest.approx(0.3))]
    assert intervals(t, np.zeros(6, bool)) == []


def test_long_bags_show_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A progress line on stderr every PROGRESS_PERIOD of wall time while reading (0 here: every message)."""
    write_run(tmp_path / "run", topics=("/wbc/cmd_vel",))
    monkeypatch.setattr(series, "PROGRESS_PERIOD", 0.0)
    make_report(tmp_path / "run", tmp_path / "r.html", progress=True)
    lines = capsys.readouterr().err.splitlines()
    reading = [line for line in lines if line.startswith("kinodyn report: reading")]
    assert len(reading) == 60
    assert reading[-1].endswith("100.0 % of 3.0 s of bag time")
    make_report(tmp_path / "run", tmp_path / "r.html")
    assert capsys.readouterr().err == ""


def test_commands_on_another_clock_are_named(tmp_path: Path) -> None:
    """cmd_vel stamped after every base state (wall clock against simulated time): one line saying so."""
    write_run(tmp_path / "run", topics=("/wbc/cmd_vel", "/odometry/filtered"))
    run = read_series(tmp_path / "run")
    run.cmd_vel.t[:] = [t + 1e9 for t in run.cmd_vel.t]
    tracking = run_metrics(run, None).tracking
    assert isinstance(tracking, Missing)
    assert "one clock" in tracking.reason


def test_absurd_contact_forces_are_left_out_and_counted(tmp_path: Path) -> None:
    """A finite but absurd force (1e308 N) is refused like a non-finite one: left out, counted, named; the
    physical messages around it are read; --max-force sets the bound."""
    forces = [100.0, 1e308, -1e308, math.inf, 2e6, 120.0]  # N on LF_FOOT, one message each
    with BagWriter(tmp_path / "run") as bag:
        bag.add_topic("/quadruped_system/contacts", "kinodyn_interfaces/msg/ContactStates")
        types = bag.typestore.types
        for k, f in enumerate(forces):
            t = 0.01 * k
            bag.write("/quadruped_system/contacts", round((T0 + t) * 1e9), types[
                "kinodyn_interfaces/msg/ContactStates"](
                header=_stamp(types, t, "world"), names=FEET, in_contact=np.array([True] * 4),
                points=[_vector(types, [0, 0, 0], "Point") for _ in FEET],
                forces=[_vector(types, [0.0, 0.0, f if i == 0 else 50.0]) for i in range(4)]))
    run = read_series(tmp_path / "run")
    assert [row["LF_FOOT"] for row in run.contact_force.rows] == [100.0, 120.0]
    skipped = dict(run.skipped)
    topic = "/quadruped_system/contacts"
    assert skipped[f"{topic}: a contact force of 1e+308 N, over the bound 1e+06 N (--max-force)"] == 2
    assert skipped[f"{topic}: a contact force of 2e+06 N, over the bound 1e+06 N (--max-force)"] == 1
    assert skipped[f"{topic}: a non-finite contact force"] == 1
    wide = read_series(tmp_path / "run", ReportTopics(max_force=1e7))
    assert [row["LF_FOOT"] for row in wide.contact_force.rows] == [100.0, 2e6, 120.0]


def test_a_bag_without_any_report_topic_reads_as_empty_series(tmp_path: Path) -> None:
    """No topic of the bag has a role: nothing is read (an empty choice of connections is not "all")."""
    with BagWriter(tmp_path / "other") as bag:
        bag.add_topic("/chatter", "std_msgs/msg/String")
        bag.write("/chatter", NS, String(data="hello"))
    run = read_series(tmp_path / "other")
    assert not run.skipped
    assert len(run.estimate) == 0
    assert len(run.contact_force) == 0
    assert "estimate" in run.missing
