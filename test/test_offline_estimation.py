"""`kinodyn estimate`: offline re-estimation of a bag through the node's pipeline.

- Two runs over one bag write byte-identical output bags; the output holds one /odometry/filtered per IMU
  message from the first estimate on, stamped (and stored) at the IMU's header stamps, and equals
  kinodyn.estimation.LeggedEstimator fed the same samples directly (the second source) to 1e-12.
- The input side in arrays (blocks of the bag decoded at once, merged by one sort) writes the bytes of the
  message-by-message path on clean and faulted bags, for both filters and contact detection, and hands over
  to it where a topic falls silent, time jumps back or a message is bad.
- The summary and the refusals (one error line, exit code 2).
- The accuracy acceptance on a 36 s trot of the quadruped with its IMU off the base origin (BMI088 noise,
  encoder noise; kinodyn.estimation.synthetic), for both filters: drift <= 1 % of the distance, roll/pitch
  RMSE <= 0.5 deg, base velocity RMSE <= 0.05 m/s, and with dropouts, spikes, NaN readings, contact flicker,
  duplicated and late messages drift <= 2 %; the 9-dof NEES per stamp, averaged over Monte-Carlo runs, inside
  its 95 % chi-square bounds (bench/estimation_accuracy.py computes the same figures as a table). The 37 s
  motion is synthesised once: the Monte-Carlo runs are its noise drawn again (``with_noise``, the runs of
  those seeds).
"""

from __future__ import annotations

import importlib.util
import io
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import yaml
from kinodyn.estimation import LeggedEstimator
from kinodyn.estimation.metrics import accuracy
from kinodyn.estimation.synthetic import inject_faults, with_noise
from kinodyn_control.estimation.pipeline import NOISE_PARAMETERS, EstimatorParameters, EstimatorPipeline
from kinodyn_tools.bags import reader as bag_reader
from kinodyn_tools.bags.reader import read_messages
from kinodyn_tools.bags.writer import BagWriter
from kinodyn_tools.estimation import blocks
from kinodyn_tools.estimation.offline import StderrLog, Topics, estimate_bag, load_model, parameters_from_file
from kinodyn_tools.estimation.synthetic_bag import DEFAULT_EPOCH, TOPICS, write_synthetic_bag
from kinodyn_tools.estimation.truth import OdometrySeries

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn.estimation.synthetic import SyntheticRun
    from kinodyn_tools.estimation.blocks import Block

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "src" / "kinodyn" / "test" / "estimation" / "quadruped_offset_imu.urdf"
PIVOTING_FEET: tuple = ()
"""No collision spheres for the rolling-foot correction: the synthetic trot keeps each stance foot's frame
fixed in the world (the sphere pivots, as on kinodyn.sim): foot_radius 0 is its truth (docs/estimation.md)."""
_spec = importlib.util.spec_from_file_location("estimation_accuracy", ROOT / "bench/estimation_accuracy.py")
accuracy_bench = sys.modules.setdefault("estimation_accuracy", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(accuracy_bench)  # registered first: its dataclasses look their module up
NS = 1_000_000_000
TRUTH_TOPIC = "/ground_truth/odometry"


def _synthesize(duration: float, seed: int = 0) -> SyntheticRun:
    return accuracy_bench.synthesize(duration, seed)


def _params_file(path: Path, run: SyntheticRun, filter_name: str) -> Path:
    """A ROS 2 params file for the state_estimator node with the synthesis' noise densities."""
    noise = accuracy_bench.matched_noise(run)
    values = {name: getattr(noise, name) for name in NOISE_PARAMETERS} | {"filter": filter_name}
    path.write_text(yaml.safe_dump({"state_estimator": {"ros__parameters": values}}))
    return path


def _kinodyn(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kinodyn_tools.launcher.cli", *map(str, args)],
                          check=False, capture_output=True, text=True, timeout=600, cwd=ROOT)


@pytest.fixture(scope="module")
def short_bags(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 4 s trot (1 s standing) as a clean bag and as a bag with every fault of inject_faults."""
    root = tmp_path_factory.mktemp("short")
    run = _synthesize(4.0, seed=3)
    bags = {"clean": root / "clean", "faults": root / "faults"}
    write_synthetic_bag(run, bags["clean"])
    write_synthetic_bag(inject_faults(run, seed=4, dropouts=2, spikes=3, nan_readings=2, flickers=3,
                                      duplicate_fraction=0.02, out_of_order_fraction=0.01), bags["faults"])
    bags["run"] = run
    return bags


def test_two_runs_write_identical_bytes_stamped_by_the_messages(
    short_bags: dict[str, Path], tmp_path: Path,
) -> None:
    outputs = [tmp_path / name / "out" for name in ("a", "b")]
    for out in outputs:
        result = _kinodyn("estimate", short_bags["faults"], "--urdf", URDF, "--output", out, "--quiet")
        assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in outputs[0].iterdir())
    assert files == ["metadata.yaml", "out.mcap"]
    for name in files:
        assert (outputs[0] / name).read_bytes() == (outputs[1] / name).read_bytes(), name
    stamps = [t_ns for _, _, t_ns, _ in read_messages(outputs[0])]
    meta = yaml.safe_load((outputs[0] / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["starting_time"]["nanoseconds_since_epoch"] == min(stamps)
    assert meta["duration"]["nanoseconds"] == max(stamps) - min(stamps)
    assert min(stamps) >= round(DEFAULT_EPOCH * NS)  # message time, not the time of the run


def test_one_odometry_per_imu_message_equal_to_the_core_estimator(
    short_bags: dict[str, Path], tmp_path: Path,
) -> None:
    out, run = tmp_path / "out", short_bags["run"]
    params = EstimatorParameters(feet=run.feet)  # named up front: the first Imu message is not held back
    result = estimate_bag(short_bags["clean"], load_model(URDF), params, out, Topics(), spheres=PIVOTING_FEET)
    imu_ns = round(DEFAULT_EPOCH * NS) + np.round(run.t * 1e9).astype(np.int64)
    written = list(read_messages(out, ["/odometry/filtered"]))
    stamps = np.array([t_ns for _, _, t_ns, _ in written])
    header = np.array([m.header.stamp.sec * NS + m.header.stamp.nanosec for _, _, _, m in written])
    np.testing.assert_array_equal(stamps, header)
    np.testing.assert_array_equal(stamps, imu_ns[len(imu_ns) - len(stamps):])  # every IMU from the first on
    assert {(m.header.frame_id, m.child_frame_id) for _, _, _, m in written} == {("odom", "base_link")}
    assert len(result.estimates) == len(written)
    # second source: the core estimator fed the same samples in the merger's order at equal stamps
    est = LeggedEstimator(run.model, run.imu_frame, run.feet)
    expected = []
    for i in range(len(run.t)):
        stamp = int(imu_ns[i]) / NS
        e = est.add_imu(stamp, run.imu_angular_velocity[i], run.imu_linear_acceleration[i])
        if e is not None:
            expected.append(np.concatenate([e.position, e.orientation, e.linear_velocity, e.angular_velocity,
                                            e.pose_covariance.ravel(), e.twist_covariance.ravel()]))
        est.add_contacts(stamp, dict(zip(run.feet, run.contacts[i], strict=True)))
        est.add_joint_state(stamp, run.joint_positions[i], run.joint_velocities[i], run.joint_efforts[i])
    got = [np.concatenate([[m.pose.pose.position.x, m.pose.pose.position.y, m.pose.pose.position.z],
                           [m.pose.pose.orientation.x, m.pose.pose.orientation.y, m.pose.pose.orientation.z,
                            m.pose.pose.orientation.w],
                           [m.twist.twist.linear.x, m.twist.twist.linear.y, m.twist.twist.linear.z],
                           [m.twist.twist.angular.x, m.twist.twist.angular.y, m.twist.twist.angular.z],
                           m.pose.covariance, m.twist.covariance]) for _, _, _, m in written]
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=0.0, atol=1e-12)


def test_summary_names_rates_pose_nis_and_the_accuracy(short_bags: dict[str, Path], tmp_path: Path) -> None:
    result = _kinodyn("estimate", short_bags["clean"], "--urdf", URDF, "--output", tmp_path / "out",
                      "--ground-truth-topic", TRUTH_TOPIC, "--quiet")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "bag duration     4.000 s" in text
    for topic in ("/imu/data", "/joint_states", "/contacts"):
        lines = [line for line in text.splitlines() if line.split()[:1] == [topic]]
        assert len(lines) == 1, text
        assert lines[0].endswith("500.00 Hz"), text
    for label in ("final pose", "NIS per dof", "drift", "roll/pitch", "velocity"):
        assert label in text, text


def test_refusals_are_one_line_and_exit_code_2(short_bags: dict[str, Path], tmp_path: Path) -> None:
    bad_params = tmp_path / "bad.yaml"
    bad_params.write_text(yaml.safe_dump({"state_estimator": {"ros__parameters": {"fliter": "eskf"}}}))
    cases = {
        "no topic": ["--imu-topic", "/imu/missing"],
        "unknown parameter": ["--params", bad_params],
        "existing output": [],
    }
    (tmp_path / "existing output").mkdir()
    for name, extra in cases.items():
        out = tmp_path / name if name == "existing output" else tmp_path / f"out-{len(name)}"
        result = _kinodyn("estimate", short_bags["clean"], "--urdf", URDF, "--output", out, "--quiet", *extra)
        assert result.returncode == 2, (name, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, (name, lines)
        assert lines[0].startswith("kinodyn estimate: error: "), (name, lines)


def test_params_file_sections_and_node_only_parameters(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({
        "/**": {"ros__parameters": {"use_sim_time": True, "gyro_limit": 20.0}},
        "other_node": {"ros__parameters": {"filter": "nonsense"}},
        "/robot/state_estimator": {"ros__parameters": {"filter": "invariant", "qos_reliable": True,
                                                        "encoder_noise": 2e-3}},
    }))
    params = parameters_from_file(path)
    assert (params.filter, params.gyro_limit, params.noise.encoder_noise) == ("invariant", 20.0, 2e-3)
    path.write_text(yaml.safe_dump({"other_node": {"ros__parameters": {"filter": "eskf"}}}))
    with pytest.raises(ValueError, match="no '/\\*\\*' or 'state_estimator' section"):
        parameters_from_file(path)


# --- the input side in arrays -------------------------------------------------------------------------------

FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
CONFIGS = {"eskf": {"filter": "eskf"}, "invariant": {"filter": "invariant"},
           "detection": {"filter": "eskf", "contact_source": "detection", "feet": FEET}}


def _stamp(message: Any) -> int:  # noqa: ANN401  (rosbags builds the message classes at run time)
    return message.header.stamp.sec * NS + message.header.stamp.nanosec


def _rewrite(source: Path, target: Path, edit: Callable[[list], list]) -> Path:
    """``source``'s messages ``(topic, bag time, rosbags object)``, changed by ``edit``, as a new bag in bag
    time order."""
    messages = edit([(topic, t_ns, msg) for topic, _, t_ns, msg in read_messages(source)])
    with BagWriter(target) as bag:
        for topic, (msgtype, qos) in TOPICS.items():
            bag.add_topic(topic, msgtype, qos=qos)
        for k in sorted(range(len(messages)), key=lambda k: messages[k][1]):
            bag.write(*messages[k])
    return target


def _looped(messages: list) -> list:
    """The bag played twice: time jumps back 4 s."""
    shift = messages[-1][1] - messages[0][1] + 2_000_000
    return messages + [(topic, t_ns + shift, msg) for topic, t_ns, msg in messages]


def _silent(messages: list) -> list:
    """Contacts missing for 0.4 s, joint states for 0.3 s (stream_timeout 0.25 s)."""
    start = min(_stamp(m) for _, _, m in messages)
    gaps = {"/contacts": (2.0e9, 2.4e9), "/joint_states": (3.0e9, 3.3e9)}
    return [(topic, t, m) for topic, t, m in messages
            if not gaps.get(topic, (0, 0))[0] <= _stamp(m) - start < gaps.get(topic, (0, 0))[1]]


def _odd(messages: list) -> list:
    """Joint states with other names, order and lists, one with a position missing (bad); contacts in
    another order and one naming an unknown foot (refused); IMU messages from another link and from an
    unknown frame (bad)."""
    start = min(_stamp(m) for _, _, m in messages)
    for topic, _, m in messages:
        t = (_stamp(m) - start) / NS
        if topic == "/joint_states" and 2.0 <= t < 2.3:
            m.name = ["extra_joint", *m.name[::-1]]
            m.position, m.velocity = np.r_[0.3, m.position[::-1]], np.zeros(0)
            m.effort = np.r_[1.0, m.effort[::-1]]
        elif topic == "/joint_states" and 2.5 <= t < 2.504:
            m.position = m.position[:-1]
        elif topic == "/contacts" and 2.6 <= t < 2.8:
            m.names, m.in_contact = m.names[::-1], m.in_contact[::-1]
        elif topic == "/contacts" and 2.9 <= t < 2.904:
            m.names = [*m.names[:3], "NOSE"]
        elif topic == "/imu/data" and 3.0 <= t < 3.004:
            m.header.frame_id = "base_link"
        elif topic == "/imu/data" and 3.2 <= t < 3.202:
            m.header.frame_id = "camera"
    return messages


@pytest.fixture(scope="module")
def edited_bags(short_bags: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("edited")
    return {"clean": short_bags["clean"], "faults": short_bags["faults"],
            "loop": _rewrite(short_bags["clean"], root / "loop", _looped),
            "silent": _rewrite(short_bags["clean"], root / "silent", _silent),
            "odd": _rewrite(short_bags["faults"], root / "odd", _odd)}


def _log_lines(text: str) -> set[str]:
    """Distinct log lines without the throttle's count (it depends on wall time)."""
    return {re.sub(r" \(\d+ more since the last report\)$", "", line) for line in text.splitlines()}


@pytest.mark.parametrize(("bag", "config", "layouts"), [
    ("clean", "eskf", True), ("clean", "invariant", True), ("clean", "detection", True),
    ("faults", "eskf", True), ("faults", "invariant", True), ("faults", "detection", True),
    ("faults", "invariant", False), ("loop", "eskf", True), ("silent", "detection", True),
    ("silent", "invariant", True), ("odd", "eskf", True),
])
def test_arrays_write_the_bytes_of_the_message_by_message_path(edited_bags: dict, bag: str, config: str,
                                                                layouts: bool, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 700 messages (a 4 s bag: 8-9 blocks) through ``take_block`` write the same bytes, counters,
    status and log lines as every message given to ``on_*`` one after the other (the path the node takes
    and the one before the arrays); every block goes through the arrays on the clean and the faulted bag,
    and the silence, the jump back and the bad messages are handed over to the message path. Without
    ``layouts`` the bag is read as one whose stored definitions are not the installed ones: each message is
    decoded into its object by the stored definition, then the block's arrays are built from those."""
    if not layouts:  # rosbags decodes every message (no fast decoder, no fixed layout)
        for module in (blocks, bag_reader):
            monkeypatch.setattr(module, "stores_installed_definition", lambda reader, connection: False)
    model, params = load_model(URDF), EstimatorParameters(**CONFIGS[config])
    take_block, used = EstimatorPipeline.take_block, []

    def spy(self: EstimatorPipeline, block: Block) -> bool:
        used.append(take_block(self, block))
        return used[-1]

    results = {}
    for path, take in (("arrays", spy), ("messages", lambda self, block: False)):
        monkeypatch.setattr(EstimatorPipeline, "take_block", take)
        log = io.StringIO()
        result = estimate_bag(edited_bags[bag], model, params, tmp_path / path / "out", Topics(),
                              log=StderrLog(log), block_messages=700, spheres=PIVOTING_FEET)
        results[path] = (result.counters, result.status, result.diagnostics, len(result.estimates),
                         [(s.count, s.first_ns, s.last_ns) for s in result.inputs.values()],
                         _log_lines(log.getvalue()))
    for name in ("out.mcap", "metadata.yaml"):
        written = [(tmp_path / path / "out" / name).read_bytes() for path in ("arrays", "messages")]
        assert written[0] == written[1], name
    assert results["arrays"] == results["messages"]
    assert len(used) >= 8
    assert results["arrays"][3] > 1000
    if bag in ("clean", "faults"):
        assert all(used)
    else:
        assert any(used), used
        assert not all(used), used
    counters, lines = results["arrays"][0], results["arrays"][5]
    assert (counters["resets"] == 1) == (bag == "loop"), counters
    assert (counters["dropped_duplicate"] > 0) == (bag in ("faults", "odd")), counters
    assert (counters["dropped_bad"] > 0) == (bag == "odd"), counters
    assert any("silent for more than stream_timeout" in line for line in lines) == (bag == "silent"), lines


# --- accuracy acceptance ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def trot_run() -> SyntheticRun:
    """The 37 s acceptance run: 1 s standing + 36 s trot, noise seed 0."""
    return _synthesize(37.0, seed=0)


@pytest.fixture(scope="module")
def trot(trot_run: SyntheticRun, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The acceptance run as a clean and a faulted bag."""
    root = tmp_path_factory.mktemp("trot")
    run = trot_run
    assert run.path_length >= 10.0
    assert run.t[-1] - run.walk_start >= 30.0
    write_synthetic_bag(run, root / "clean")
    write_synthetic_bag(inject_faults(run, seed=1), root / "faults")
    return {"run": run, "root": root}


@pytest.mark.parametrize("faults", [False, True], ids=["clean", "faults"])
@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_accuracy_acceptance(trot: dict, filter_name: str, faults: bool, tmp_path: Path) -> None:
    run = trot["run"]
    params = parameters_from_file(_params_file(tmp_path / "params.yaml", run, filter_name))
    result = estimate_bag(trot["root"] / ("faults" if faults else "clean"), load_model(URDF), params,
                          tmp_path / "out", Topics(ground_truth=TRUTH_TOPIC), spheres=PIVOTING_FEET)
    assert isinstance(result.truth, OdometrySeries)
    report = accuracy(result.truth.trajectory(), result.estimates.trajectory())
    figures = (f"{filter_name} faults={faults}: drift {100 * report.drift:.3f} % over "
               f"{report.path_length:.1f} m, roll/pitch RMSE {report.roll_rmse_deg:.3f}/"
               f"{report.pitch_rmse_deg:.3f} deg, velocity RMSE {report.velocity_rmse:.4f} m/s, counters "
               f"{result.counters}")
    assert report.path_length >= 10.0, figures
    limits = accuracy_bench.ACCEPTANCE
    assert report.drift <= limits["drift_faults" if faults else "drift"], figures
    if not faults:
        assert max(report.roll_rmse_deg, report.pitch_rmse_deg) <= limits["roll_pitch_deg"], figures
        assert report.velocity_rmse <= limits["velocity"], figures


@pytest.fixture(scope="module")
def monte_carlo_runs(trot_run: SyntheticRun) -> list:
    """Three 37 s trots with independent noise (seeds 10-12): the acceptance run's motion, its noise drawn
    again (``with_noise`` gives the runs synthesised with those seeds: test_synthetic)."""
    return [with_noise(trot_run, seed) for seed in (10, 11, 12)]


@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_nees_inside_its_monte_carlo_bounds(monte_carlo_runs: list, filter_name: str) -> None:
    """Bar-Shalom 2001 §5.4.2: the per-stamp NEES mean over 3 independent-noise runs inside the 95 % bounds
    of chi-square(27)/3 at >= 90 % of the stamps (95 % expected), and its overall mean inside the bounds."""
    check = accuracy_bench.nees_check([accuracy_bench.estimate_run(r, filter_name) for r in monte_carlo_runs])
    figures = f"{filter_name}: {check}"
    assert check.lower <= check.mean <= check.upper, figures
    assert check.inside >= 0.90, figures


def _ahead(messages: list) -> list:
    """One IMU message, 2 s into the bag, stamped 10 s after its bag time."""
    start = min(_stamp(m) for _, _, m in messages)
    index = next(i for i, (topic, _, m) in enumerate(messages)
                 if topic == "/imu/data" and _stamp(m) - start >= 2 * NS)
    messages[index][2].header.stamp.sec += 10
    return messages


def test_a_message_stamped_ahead_of_its_bag_time_is_refused_and_the_command_fails(short_bags: dict[str, Path],
                                                                                  tmp_path: Path) -> None:
    """The bag's time is the clock: the message is refused with one line naming topic, stamp and bag time,
    counted, every other message is estimated (one estimate fewer than the clean bag, not a fifth of them),
    and the command exits 1 saying what was left out."""
    bag = _rewrite(short_bags["clean"], tmp_path / "ahead", _ahead)
    clean = estimate_bag(short_bags["clean"], load_model(URDF), EstimatorParameters(), tmp_path / "clean",
                         Topics(), spheres=PIVOTING_FEET)
    result = _kinodyn("estimate", bag, "--urdf", URDF, "--output", tmp_path / "out", "--quiet")
    assert result.returncode == 1, (result.stdout, result.stderr)
    errors = result.stderr.splitlines()
    refusals = [line for line in errors if "refusing /imu/data message stamped" in line]
    assert len(refusals) == 1, errors
    assert "its bag time reads" in refusals[0], errors
    assert "10.000 s ahead of it (more than max_stamp_lead 0.5 s)" in refusals[0]
    assert errors[-1].startswith("kinodyn estimate: error: 1 input message(s) stamped more than "
                                 "max_stamp_lead ahead of their bag time and 0 of another clock domain were "
                                 "refused")
    assert "dropped_ahead 1" in result.stdout
    written = list(read_messages(tmp_path / "out", ["/odometry/filtered"]))
    assert len(clean.estimates.t) > 1500
    assert len(written) == len(clean.estimates.t) - 1
