"""`kinodyn estimate` (issue 11 items 5 and 6): offline re-estimation of a bag through the node's pipeline.

- Two runs over one bag write byte-identical output bags; the output holds one /odometry/filtered per IMU
  message from the first estimate on, stamped (and stored) at the IMU's header stamps, and equals
  kinodyn.estimation.LeggedEstimator fed the same samples directly (the second source) to 1e-12.
- The summary and the refusals (one error line, exit code 2).
- The accuracy acceptance on a 36 s trot of the quadruped with its IMU off the base origin (BMI088 noise,
  encoder noise; kinodyn.estimation.synthetic), for both filters: drift <= 1 % of the distance, roll/pitch
  RMSE <= 0.5 deg, base velocity RMSE <= 0.05 m/s, and with dropouts, spikes, NaN readings, contact flicker,
  duplicated and late messages drift <= 2 %; the 9-dof NEES per stamp, averaged over Monte-Carlo runs, inside
  its 95 % chi-square bounds (bench/estimation_accuracy.py computes the same figures as a table).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from kinodyn.estimation import LeggedEstimator
from kinodyn.estimation.metrics import accuracy
from kinodyn.estimation.synthetic import inject_faults
from kinodyn_ros.bags.reader import read_messages
from kinodyn_ros.estimation.offline import Topics, estimate_bag, load_model, parameters_from_file
from kinodyn_ros.estimation.pipeline import NOISE_PARAMETERS, EstimatorParameters
from kinodyn_ros.estimation.synthetic_bag import DEFAULT_EPOCH, write_synthetic_bag
from kinodyn_ros.estimation.truth import OdometrySeries

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "src" / "kinodyn" / "test" / "estimation" / "quadruped_offset_imu.urdf"
_spec = importlib.util.spec_from_file_location("estimation_accuracy", ROOT / "bench/estimation_accuracy.py")
accuracy_bench = sys.modules.setdefault("estimation_accuracy", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(accuracy_bench)  # registered first: its dataclasses look their module up
NS = 1_000_000_000
TRUTH_TOPIC = "/ground_truth/odometry"


def _synthesize(duration: float, seed: int = 0):
    return accuracy_bench.synthesize(duration, seed)


def _params_file(path: Path, run, filter_name: str) -> Path:
    """A ROS 2 params file for the state_estimator node with the synthesis' noise densities."""
    noise = accuracy_bench.matched_noise(run)
    values = {name: getattr(noise, name) for name in NOISE_PARAMETERS} | {"filter": filter_name}
    path.write_text(yaml.safe_dump({"state_estimator": {"ros__parameters": values}}))
    return path


def _kinodyn(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kinodyn_ros.launcher.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


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


def test_two_runs_write_identical_bytes_stamped_by_the_messages(short_bags, tmp_path: Path) -> None:
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


def test_one_odometry_per_imu_message_equal_to_the_core_estimator(short_bags, tmp_path: Path) -> None:
    out, run = tmp_path / "out", short_bags["run"]
    params = EstimatorParameters(feet=run.feet)  # named up front: the first Imu message is not held back
    result = estimate_bag(short_bags["clean"], load_model(URDF), params, out, Topics())
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


def test_summary_names_rates_pose_nis_and_the_accuracy(short_bags, tmp_path: Path) -> None:
    result = _kinodyn("estimate", short_bags["clean"], "--urdf", URDF, "--output", tmp_path / "out",
                      "--ground-truth-topic", TRUTH_TOPIC, "--quiet")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "bag duration     4.000 s" in text
    for topic in ("/imu/data", "/joint_states", "/contacts"):
        lines = [line for line in text.splitlines() if line.split()[:1] == [topic]]
        assert len(lines) == 1 and lines[0].endswith("500.00 Hz"), text
    for label in ("final pose", "NIS per dof", "drift", "roll/pitch", "velocity"):
        assert label in text, text


def test_refusals_are_one_line_and_exit_code_2(short_bags, tmp_path: Path) -> None:
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
        assert len(lines) == 1 and lines[0].startswith("kinodyn estimate: error: "), (name, lines)


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


# --- accuracy acceptance (issue 11 item 6) ---------------------------------------------------------------

@pytest.fixture(scope="module")
def trot(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The 37 s acceptance run (1 s standing + 36 s trot, seed 0) as a clean and a faulted bag."""
    root = tmp_path_factory.mktemp("trot")
    run = _synthesize(37.0, seed=0)
    assert run.path_length >= 10.0 and run.t[-1] - run.walk_start >= 30.0
    write_synthetic_bag(run, root / "clean")
    write_synthetic_bag(inject_faults(run, seed=1), root / "faults")
    return {"run": run, "root": root}


@pytest.mark.parametrize("faults", [False, True], ids=["clean", "faults"])
@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_accuracy_acceptance(trot, filter_name: str, faults: bool, tmp_path: Path) -> None:
    run = trot["run"]
    params = parameters_from_file(_params_file(tmp_path / "params.yaml", run, filter_name))
    result = estimate_bag(trot["root"] / ("faults" if faults else "clean"), load_model(URDF), params,
                          tmp_path / "out", Topics(ground_truth=TRUTH_TOPIC))
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
def monte_carlo_runs() -> list:
    """Three 37 s trots with independent noise (seeds 10-12)."""
    return [_synthesize(37.0, seed) for seed in (10, 11, 12)]


@pytest.mark.parametrize("filter_name", ["eskf", "invariant"])
def test_nees_inside_its_monte_carlo_bounds(monte_carlo_runs: list, filter_name: str) -> None:
    """Bar-Shalom 2001 §5.4.2: the per-stamp NEES mean over 3 independent-noise runs inside the 95 % bounds
    of chi-square(27)/3 at >= 90 % of the stamps (95 % expected), and its overall mean inside the bounds."""
    check = accuracy_bench.nees_check([accuracy_bench.estimate_run(r, filter_name) for r in monte_carlo_runs])
    figures = f"{filter_name}: {check}"
    assert check.lower <= check.mean <= check.upper, figures
    assert check.inside >= 0.90, figures
