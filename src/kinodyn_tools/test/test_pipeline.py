"""The state estimator's messages and pipeline without DDS: conversions from rclpy and rosbags messages, the
parameters, and the pipeline on a short exact stream (ordering, faults, resets, finite outputs)."""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pytest
from kinodyn.estimation.synthetic import trotting_walk
from kinodyn.sim.collision import collision_spheres
from kinodyn_common.conversions import InputError
from kinodyn_common.finite import non_finite_field
from kinodyn_common.stamps import NS, stamp_to_ns
from kinodyn_control.estimation.imu_gaps import ImuGaps
from kinodyn_control.estimation.messages import (
    JointMap,
    JointSample,
    contact_flags,
    contact_names,
    diagnostics_message,
    imu_sample,
    odometry_message,
    transform_message,
)
from kinodyn_control.estimation.pipeline import EstimatorParameters, EstimatorPipeline, Output
from kinodyn_control.estimation.stamps import ClockReading, StampBounds
from kinodyn_tools.bags.reader import read_messages
from kinodyn_tools.estimation.synthetic_bag import DEFAULT_EPOCH, write_synthetic_bag
from nav_msgs.msg import Odometry
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import Imu, JointState

from kinodyn import Model
from kinodyn_interfaces.msg import ContactStates

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from kinodyn.estimation.synthetic import SyntheticRun
    from numpy.typing import ArrayLike

BAG_TYPES = get_typestore(Stores.ROS2_JAZZY)
MakeJointState = Callable[..., Any]  # builds an rclpy or a rosbags JointState
Stamped = TypeVar("Stamped", Imu, JointState, ContactStates)  # an input message with a header


def rosbags_joint_state(names: Sequence[str], position: ArrayLike, velocity: ArrayLike = (),
                        effort: ArrayLike = ()) -> Any:  # noqa: ANN401  (a rosbags class built at run time)
    t = BAG_TYPES.types
    header = t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=3, nanosec=5), frame_id="")
    return t["sensor_msgs/msg/JointState"](
        header=header, name=list(names), position=np.array(position, dtype=np.float64),
        velocity=np.array(velocity, dtype=np.float64), effort=np.array(effort, dtype=np.float64),
    )


def rclpy_joint_state(names: Sequence[str], position: Sequence[float], velocity: Sequence[float] = (),
                      effort: Sequence[float] = ()) -> JointState:
    return JointState(name=list(names), position=list(position), velocity=list(velocity), effort=list(effort))


@pytest.mark.parametrize("make", [rclpy_joint_state, rosbags_joint_state])
def test_joint_states_are_mapped_by_name_unknown_ignored_missing_nan(make: MakeJointState) -> None:
    joints = JointMap(("a", "b", "c"))
    sample = joints.sample(make(["c", "head", "a"], [3.0, 9.0, 1.0], [30.0, 90.0, 10.0]))
    np.testing.assert_array_equal(sample.positions, [1.0, np.nan, 3.0])
    np.testing.assert_array_equal(sample.velocities, [10.0, np.nan, 30.0])
    assert np.all(np.isnan(sample.efforts))  # none given


@pytest.mark.parametrize("make", [rclpy_joint_state, rosbags_joint_state])
def test_joint_map_follows_a_name_list_that_changes(make: MakeJointState) -> None:
    """The kept layout of the last name list is not reused for another list: reordered, shorter, then
    duplicated names (refused, and the next good message maps correctly)."""
    joints = JointMap(("a", "b", "c"))
    joints.sample(make(["a", "b", "c"], [1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(joints.sample(make(["c", "b", "a"], [3.0, 2.0, 1.0])).positions, [1, 2, 3])
    np.testing.assert_array_equal(joints.sample(make(["b"], [2.0])).positions, [np.nan, 2.0, np.nan])
    with pytest.raises(InputError, match="names 'b' twice"):
        joints.sample(make(["b", "b"], [2.0, 2.0]))
    with pytest.raises(InputError, match="names 'b' twice"):
        joints.sample(make(["b", "b"], [2.0, 2.0]))
    np.testing.assert_array_equal(joints.sample(make(["b", "a"], [5.0, 4.0])).positions, [4.0, 5.0, np.nan])


@pytest.mark.parametrize("make", [rclpy_joint_state, rosbags_joint_state])
def test_joint_states_in_model_order_are_copied(make: MakeJointState) -> None:
    """Names exactly the model's joints in its order (the copying fast path): the values, NaN for an empty
    list, and arrays of their own (changing the message afterwards changes nothing)."""
    joints = JointMap(("a", "b", "c"))
    msg = make(["a", "b", "c"], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    sample = joints.sample(msg)
    msg.position[0] = 99.0
    np.testing.assert_array_equal(sample.positions, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(sample.velocities, [4.0, 5.0, 6.0])
    assert np.all(np.isnan(sample.efforts))
    assert sample.efforts.shape == (3,)
    np.testing.assert_array_equal(joints.sample(make(["a", "b"], [7.0, 8.0])).positions, [7.0, 8.0, np.nan])


@pytest.mark.parametrize("make", [rclpy_joint_state, rosbags_joint_state])
@pytest.mark.parametrize(
    ("names", "position", "velocity", "match"),
    [
        (["a", "b"], [1.0], [], "2 names but 1 positions"),
        (["a", "b"], [1.0, 2.0], [1.0], "2 names but 1 velocity values"),
        (["a", "a"], [1.0, 2.0], [], "names 'a' twice"),
    ],
)
def test_inconsistent_joint_states_are_refused(
    make: MakeJointState, names: list[str], position: list[float], velocity: list[float], match: str
) -> None:
    with pytest.raises(InputError, match=match):
        JointMap(("a", "b")).sample(make(names, position, velocity))


def test_imu_readings_from_rclpy_and_rosbags_messages_agree() -> None:
    msg = Imu()
    msg.header.frame_id = "imu_link"
    msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = 0.1, -0.2, 0.3
    msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = 1.0, 2.0, 9.0
    msg.orientation_covariance[0] = -1.0  # REP-145: no orientation
    t = BAG_TYPES.types
    vector = t["geometry_msgs/msg/Vector3"]
    bag_msg = t["sensor_msgs/msg/Imu"](
        header=t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=0, nanosec=0),
                                        frame_id="imu_link"),
        orientation=t["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
        orientation_covariance=np.array([-1.0] + [0.0] * 8),
        angular_velocity=vector(x=0.1, y=-0.2, z=0.3), angular_velocity_covariance=np.zeros(9),
        linear_acceleration=vector(x=1.0, y=2.0, z=9.0), linear_acceleration_covariance=np.zeros(9),
    )
    for sample in (imu_sample(msg), imu_sample(bag_msg)):
        assert sample.frame_id == "imu_link"
        np.testing.assert_array_equal(sample.angular_velocity, [0.1, -0.2, 0.3])
        np.testing.assert_array_equal(sample.linear_acceleration, [1.0, 2.0, 9.0])


def test_contact_flags() -> None:
    assert contact_flags(ContactStates(names=["LF_FOOT", "RH_FOOT"], in_contact=[True, False])) == {
        "LF_FOOT": True, "RH_FOOT": False
    }
    with pytest.raises(InputError, match="2 names but 1 in_contact"):
        contact_flags(ContactStates(names=["LF_FOOT", "RH_FOOT"], in_contact=[True]))
    with pytest.raises(InputError, match="empty name"):
        contact_flags(ContactStates(names=[""], in_contact=[True]))


class FakeEstimate:
    position = np.array([1.0, 2.0, 0.5])
    orientation = np.array([0.0, 0.0, math.sin(0.25), math.cos(0.25)])  # yaw 0.5 rad
    linear_velocity = np.array([0.3, 0.0, 0.0])
    angular_velocity = np.array([0.0, 0.0, 0.1])
    pose_covariance = np.diag(np.arange(1.0, 7.0))
    twist_covariance = np.diag(np.arange(7.0, 13.0))


def test_odometry_tf_and_diagnostics_messages() -> None:
    odometry = odometry_message(FakeEstimate(), 12_000_000_345, "odom", "base_link")
    assert isinstance(odometry, Odometry)
    assert (odometry.header.stamp.sec, odometry.header.stamp.nanosec) == (12, 345)
    assert (odometry.header.frame_id, odometry.child_frame_id) == ("odom", "base_link")
    p, q = odometry.pose.pose.position, odometry.pose.pose.orientation
    assert [p.x, p.y, p.z, q.x, q.y, q.z, q.w] == [1.0, 2.0, 0.5, 0.0, 0.0, math.sin(0.25), math.cos(0.25)]
    assert odometry.twist.twist.linear.x == 0.3
    assert odometry.twist.twist.angular.z == 0.1
    np.testing.assert_array_equal(np.reshape(odometry.pose.covariance, (6, 6)), FakeEstimate.pose_covariance)
    np.testing.assert_array_equal(
        np.reshape(odometry.twist.covariance, (6, 6)), FakeEstimate.twist_covariance
    )
    (tf,) = transform_message(odometry).transforms
    assert (tf.header.frame_id, tf.child_frame_id) == ("odom", "base_link")
    assert tf.header.stamp == odometry.header.stamp
    assert (tf.transform.translation.y, tf.transform.rotation.w) == (2.0, math.cos(0.25))
    diagnostics = diagnostics_message(7, "state_estimator", "base_link", "warn", "initialising",
                                      {"nis_last": math.nan, "initialized": False, "resets": 2})
    (status,) = diagnostics.status
    assert status.level == b"\x01"
    assert status.message == "initialising"
    values = {kv.key: kv.value for kv in status.values}
    assert values == {"nis_last": "nan", "initialized": "False", "resets": "2"}
    assert non_finite_field(diagnostics) is None
    assert non_finite_field(odometry) is None


def test_parameters_round_trip_and_refuse_bad_values() -> None:
    flat = EstimatorParameters.flat_defaults()
    assert flat["accelerometer_noise_density"] == 2.0e-3
    assert flat["feet"] == []
    assert flat["filter"] == "eskf"
    params = EstimatorParameters.from_flat(
        {"filter": "invariant", "feet": ["LF_FOOT"], "encoder_noise": 2e-3}
    )
    assert params.filter == "invariant"
    assert params.feet == ("LF_FOOT",)
    assert params.noise.encoder_noise == 2e-3
    assert EstimatorParameters.from_flat(params.flat()) == params
    gap = EstimatorParameters.from_flat({"gap_acceleration_noise": 2.0, "gap_rate_noise": 0.0})
    assert (flat["gap_acceleration_noise"], flat["gap_rate_noise"]) == (5.0, 0.3)
    assert (gap.gap_acceleration_noise, gap.gap_rate_noise) == (2.0, 0.0)  # 0 disables it
    for bad, match in [
        ({"gap_acceleration_noise": -1.0}, "gap_acceleration_noise must be finite and >= 0"),
        ({"gap_rate_noise": float("nan")}, "gap_rate_noise must be finite and >= 0"),
        ({"filter": "ukf"}, "filter must be one of eskf, invariant"),
        ({"contact_source": "guess"}, "contact_source must be one of"),
        ({"contact_source": "detection"}, "detection needs parameter feet"),
        ({"feet": ["a", "a"]}, "feet must be distinct"),
        ({"stream_timeout": 0.0}, "stream_timeout must be a positive"),
        ({"gate_probability": 1.0}, r"gate_probability must be in \(0, 1\)"),
        ({"contact_on_threshold": 10.0, "contact_off_threshold": 10.0}, "contact_off_threshold < "),
        ({"gyroscope_noise_density": -1.0}, "gyroscope_noise_density"),
        ({"odom_frame": ""}, "odom_frame must name"),
        ({"foot_radius": float("nan")}, "foot_radius must be finite"),
        ({"stream_timout": 1.0}, "unknown estimator parameter.*stream_timout"),
        ({"max_stamp_lead": 0.0}, "max_stamp_lead must be a positive finite number"),
        ({"max_stamp_lag": float("inf")}, "max_stamp_lag must be a positive finite number"),
        ({"max_stamp_lead": 2.0, "max_stamp_lag": 1.0}, r"max_stamp_lag \(1.0 s.*must be larger than"),
        ({"imu_rate": -1.0}, "imu_rate must be finite and >= 0"),
        ({"imu_only_acceleration_noise": -0.1}, "imu_only_acceleration_noise must be finite and >= 0"),
    ]:
        with pytest.raises(ValueError, match=match):
            EstimatorParameters.from_flat(bad)


# the pipeline on the standing stream of test/fixtures/estimator_stream.py ----------------------------------

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("estimator_stream", REPO / "test/fixtures/estimator_stream.py")
stream = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stream)


class Logger:
    """Stands in for an rclpy or logging logger: keeps ``(level, line)`` of every line."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, line: str) -> None:
        self.lines.append(("info", line))

    def warning(self, line: str) -> None:
        self.lines.append(("warning", line))

    def error(self, line: str) -> None:
        self.lines.append(("error", line))


@pytest.fixture(scope="module")
def model() -> Model:
    return Model.from_urdf(REPO / "urdf" / "quadruped.urdf", floating_base=True)


def feed(pipeline: EstimatorPipeline, messages: Iterable[tuple[str, Any]]) -> list[Output]:
    take = {
        "imu/data": pipeline.on_imu, "joint_states": pipeline.on_joint_state, "contacts": pipeline.on_contacts
    }
    outputs: list[Output] = []
    for topic, msg in messages:
        take[topic](msg)
        outputs.extend(pipeline.drain())
    return outputs


def run(
    model: Model,
    messages: Iterable[tuple[str, Any]],
    logger: Logger,
    params: EstimatorParameters | None = None,
) -> list[Output]:
    pipeline = EstimatorPipeline(model, params or EstimatorParameters(), logger)
    return feed(pipeline, messages) + pipeline.flush()


def of_kind(outputs: list[Output], kind: str) -> list:
    return [o.message for o in outputs if o.kind == kind]


def pose_twist(odometry: Odometry) -> np.ndarray:
    p, q = odometry.pose.pose.position, odometry.pose.pose.orientation
    v, w = odometry.twist.twist.linear, odometry.twist.twist.angular
    return np.array([p.x, p.y, p.z, q.x, q.y, q.z, q.w - 1.0, v.x, v.y, v.z, w.x, w.y, w.z])


def stamps(messages: list) -> list[int]:
    return [stamp_to_ns(m.header.stamp) for m in messages]


def test_standing_still_gives_the_origin_one_odometry_per_imu_message_and_periodic_diagnostics(
    model: Model,
) -> None:
    log = Logger()
    count = 800  # 2 s at 400 Hz
    outputs = run(model, stream.standing(model, count), log)
    odometry, tf, diagnostics = (of_kind(outputs, k) for k in ("odometry", "tf", "diagnostics"))
    imu_stamps = [stream.START_NS + k * stream.IMU_PERIOD_NS for k in range(count)]
    # the first IMU message comes before the first contacts message (same stamp, IMU first): no feet yet;
    # the next 0.5 s initialise (the window closes with the sample that completes it: the first output)
    first = imu_stamps.index(stamps(odometry)[0])
    assert stamps(odometry) == imu_stamps[first:]
    assert 0.5e9 <= imu_stamps[first] - stream.START_NS <= 0.51e9
    assert all((o.header.frame_id, o.child_frame_id) == ("odom", "base_link") for o in odometry)
    assert np.abs(np.array([pose_twist(o) for o in odometry])).max() < 1e-12  # exact data: origin, at rest
    for o in odometry:
        for covariance in (o.pose.covariance, o.twist.covariance):
            c = np.reshape(covariance, (6, 6))
            assert np.array_equal(c, c.T)
            assert np.linalg.eigvalsh(c).min() > 0.0
    assert [t.transforms[0].header for t in tf] == [o.header for o in odometry]
    # 2 Hz of stamp time: the first event, then the first event at or after each multiple of 0.5 s
    assert stamps(diagnostics) == [100_000_000_000, 100_500_000_000, 101_000_000_000, 101_500_000_000]
    levels = [d.status[0].level for d in diagnostics]
    assert levels[:2] == [b"\x01", b"\x01"]  # warn initialising, then ok
    assert levels[2:] == [b"\x00", b"\x00"]
    assert not [line for line in log.lines if line[0] != "info"]


def test_foot_radius_defaults_to_the_urdf_sphere_at_each_foot(model: Model) -> None:
    """foot_radius < 0 (the default): each foot's radius from the URDF's spheres the node and kinodyn estimate
    pass (the quadruped's 3 cm), 0 without spheres; a radius >= 0 is taken as given (docs/estimation.md
    "Rolling feet")."""
    spheres = collision_spheres(REPO / "urdf" / "quadruped.urdf")
    for params, given, expected in [(EstimatorParameters(), spheres, 0.03), (EstimatorParameters(), (), 0.0),
                                    (EstimatorParameters(foot_radius=0.0), spheres, 0.0),
                                    (EstimatorParameters(foot_radius=0.01), (), 0.01)]:
        pipeline = EstimatorPipeline(model, params, Logger(), spheres=given)
        feed(pipeline, stream.standing(model, 10))
        assert pipeline._estimator is not None  # noqa: SLF001  (the pipeline internal this test checks)
        assert pipeline._estimator.legs.radii.tolist() == [expected] * 4  # noqa: SLF001  (the pipeline internal this test checks)


def test_faults_are_survived_with_one_line_each_and_finite_outputs(model: Model) -> None:
    log = Logger()
    outputs = run(model, stream.faulty(model), log)
    odometry = of_kind(outputs, "odometry")
    assert all(non_finite_field(o.message) is None for o in outputs)
    assert np.abs(np.array([pose_twist(o) for o in odometry])).max() < 1e-9  # the spike did not throw it
    warnings = [line for level, line in log.lines if level == "warning"]
    assert len(warnings) == 4, warnings
    assert "non-finite value" in warnings[0]  # the NaN sample; the spike is the same cause (throttled)
    assert "unmeasured leg joints" in warnings[1]
    assert warnings[2].startswith("dropping duplicate joint_states message stamped 101.300000000 s")
    assert warnings[3].startswith("dropping duplicate imu message stamped 101.750000000 s")
    # every IMU message after initialisation gives one odometry, except the two rejected and the 24 dropped
    imu = [m for topic, m in stream.faulty(model) if topic == "imu/data"]
    expected = sorted(set(stamps(imu)) - set(stamps(imu)[450:451]) - set(stamps(imu)[480:481]))
    first = expected.index(stamps(odometry)[0])
    assert stamps(odometry) == expected[first:]


def test_a_jump_back_resets_once_and_estimates_again(model: Model) -> None:
    log = Logger()
    outputs = run(model, stream.faulty(model) + stream.looped(model), log)
    resets = [line for level, line in log.lines if "estimator reset" in line]
    assert resets == [
        "estimator reset: time jumped back on imu from 101.997500000 s to 100.000000000 s (a bag played in a "
        "loop, or a restarted clock); initialising again"
    ]
    odometry = stamps(of_kind(outputs, "odometry"))
    jump = next(i for i in range(1, len(odometry)) if odometry[i] < odometry[i - 1])
    assert 0.5e9 <= odometry[jump] - stream.START_NS <= 0.51e9  # initialised again from the looped stream
    assert odometry[jump:] == sorted(odometry[jump:])
    assert odometry[-1] == stream.START_NS + 399 * stream.IMU_PERIOD_NS


def test_output_is_identical_for_any_interleaving_of_the_topics(model: Model) -> None:
    """Each topic arrives in its own order, each message up to 30 ms after its stamp (less than
    stream_timeout, 250 ms): the outputs (odometry, TF, diagnostics) are equal field by field."""
    messages = stream.faulty(model)
    reference = run(model, messages, Logger())
    rng = random.Random(4)
    for _ in range(2):
        arrivals, last = [], {}
        for topic, msg in messages:
            arrival = max(last.get(topic, 0) + 1, stamps([msg])[0] + rng.randrange(30_000_000))
            last[topic] = arrival
            arrivals.append((arrival, len(arrivals), topic, msg))
        shuffled = [(topic, msg) for _, _, topic, msg in sorted(arrivals, key=lambda a: a[:2])]
        assert shuffled != messages
        assert run(model, shuffled, Logger()) == reference  # field by field, exactly (rclpy's __eq__)


def test_offline_batches_equal_the_live_pipeline_message_by_message(model: Model) -> None:
    """The offline pipeline (estimator batches of whatever was released, estimates as rows) gives, on the
    faulty stream, the live pipeline's Odometry numbers exactly and its diagnostics field by field, whether
    drained after every message or only at the end."""
    messages = list(stream.faulty(model))
    live = run(model, messages, Logger())
    expected = [np.concatenate([[stamps([m])[0]], pose_twist(m), m.pose.covariance, m.twist.covariance])
                for m in of_kind(live, "odometry")]
    for every_message in (True, False):
        pipeline = EstimatorPipeline(model, EstimatorParameters(), Logger(), offline=True)
        if every_message:
            outputs = feed(pipeline, messages) + pipeline.flush()
        else:
            take = {"imu/data": pipeline.on_imu, "joint_states": pipeline.on_joint_state,
                    "contacts": pipeline.on_contacts}
            for topic, msg in messages:
                take[topic](msg)
            outputs = pipeline.flush()
        rows = [np.concatenate([[stamp], row[:6], [row[6] - 1.0], row[7:]])
                for e in of_kind(outputs, "odometry") for stamp, row in zip(e.stamps_ns, e.rows, strict=True)]
        assert len(expected) > 300
        assert len(rows) == len(expected)
        np.testing.assert_array_equal(np.array(rows), np.array(expected))
        assert of_kind(outputs, "diagnostics") == of_kind(live, "diagnostics")
        assert not of_kind(outputs, "tf")


def test_array_entry_points_give_the_message_entry_points_outputs(model: Model) -> None:
    """The faulty stream given as arrays (``on_*_sample``, ``on_contact_flags``; a message that does not
    convert given as the message), the estimates as rows: the live pipeline's Odometry numbers exactly, its
    diagnostics field by field, its warning lines."""
    messages = list(stream.faulty(model))
    log, arrays_log = Logger(), Logger()
    live = run(model, messages, log)
    expected = [np.concatenate([[stamps([m])[0]], pose_twist(m), m.pose.covariance, m.twist.covariance])
                for m in of_kind(live, "odometry")]
    pipeline = EstimatorPipeline(model, EstimatorParameters(), arrays_log, estimate_rows=True)
    joints = JointMap(model.joint_names)
    convert = {"imu/data": (imu_sample, pipeline.on_imu_sample, pipeline.on_imu),
               "joint_states": (joints.sample, pipeline.on_joint_sample, pipeline.on_joint_state),
               "contacts": (contact_flags, pipeline.on_contact_flags, pipeline.on_contacts)}
    outputs: list[Output] = []
    given_as_arrays = 0
    for topic, msg in messages:
        to_arrays, take_arrays, take_message = convert[topic]
        try:
            payload = to_arrays(msg)
            stamp = stamps([msg])[0]
        except (InputError, AttributeError, TypeError, ValueError):
            take_message(msg)
        else:
            take_arrays(stamp, payload)
            given_as_arrays += 1
        outputs.extend(pipeline.drain())
    outputs += pipeline.flush()
    rows = [np.concatenate([[stamp], row[:6], [row[6] - 1.0], row[7:]])
            for e in of_kind(outputs, "odometry") for stamp, row in zip(e.stamps_ns, e.rows, strict=True)]
    assert given_as_arrays > 0.9 * len(messages)
    assert len(expected) > 300
    np.testing.assert_array_equal(np.array(rows), np.array(expected))
    assert of_kind(outputs, "diagnostics") == of_kind(live, "diagnostics")
    assert not of_kind(outputs, "tf")
    assert arrays_log.lines == log.lines


def test_imu_gaps_count_the_same_one_stamp_at_a_time_as_in_blocks() -> None:
    """The missing-sample count of stamps given one by one (the live pipeline) equals that of blocks (a bag),
    gaps of 1, 2 and 5 samples and a jitter that rounds either way included."""
    period = 2_500_000
    stamps = np.cumsum([period] * 60 + [2 * period, period + 1_249_999, 3 * period, period - 1_250_001,
                                        6 * period] + [period] * 20).astype(np.int64)
    one, block = ImuGaps(0.0), ImuGaps(0.0)
    for k in range(len(stamps)):
        one.add(stamps[k:k + 1])
    for chunk in np.array_split(stamps, 4):
        block.add(chunk)
    assert (one.received, one.missing, one.take_window()) == (block.received, block.missing,
                                                               block.take_window())
    assert one.missing == 1 + 2 + 5
    assert one.rate == pytest.approx(400.0)


def test_a_joint_sample_of_another_size_is_one_line_and_dropped(model: Model) -> None:
    log = Logger()
    pipeline = EstimatorPipeline(model, EstimatorParameters(), log)
    n = len(model.joint_names)
    pipeline.on_joint_sample(1, JointSample(np.zeros(n), np.zeros(n - 1), np.zeros(n)))
    assert [line for level, line in log.lines if level == "warning"] == [
        f"ignoring joint_states message: joint sample has [{n}, {n - 1}, {n}] positions, velocities and "
        f"efforts; the model has {n} joints"]


def test_an_imu_frame_that_is_not_a_link_is_one_error_and_the_message_is_dropped(model: Model) -> None:
    log = Logger()
    messages = stream.standing(model, 400)
    for _, msg in messages[:30]:
        if isinstance(msg, Imu):
            msg.header.frame_id = "camera"
    outputs = run(model, messages, log)
    bad = [line for level, line in log.lines if level == "warning"]
    assert len(bad) == 1
    assert bad[0].startswith("ignoring imu/data message: Imu header.frame_id 'camera' is not a link")
    assert "set parameter imu_frame" in bad[0]
    assert of_kind(outputs, "odometry")
    overridden = run(model, messages, Logger(), EstimatorParameters(imu_frame="imu_link"))
    assert len(of_kind(overridden, "odometry")) > len(of_kind(outputs, "odometry"))  # frame_id not read


def test_reconfigure_resets_for_filter_parameters_only(model: Model) -> None:
    log = Logger()
    pipeline = EstimatorPipeline(model, EstimatorParameters(), log)
    feed(pipeline, stream.standing(model, 400))
    assert pipeline.health()[0] == "ok"
    assert not pipeline.reconfigure(EstimatorParameters(odom_frame="world", diagnostics_rate=5.0,
                                                        max_stamp_lead=2.0))  # taken at once
    assert pipeline._bounds.judge(11_500_000_000, 10_000_000_000) is None  # noqa: SLF001  (the pipeline internal this test checks); 1.5 s ahead: within the lead
    assert pipeline.health()[0] == "ok"
    assert pipeline.params.odom_frame == "world"
    assert pipeline.reconfigure(EstimatorParameters(odom_frame="world", filter="invariant",
                                                    max_stamp_lead=2.0))
    assert pipeline.health()[1].startswith("waiting")
    assert log.lines[-1] == (
        "info",
        "estimator reset: parameter(s) diagnostics_rate, filter changed; initialising again from the next "
        "messages",
    )


# every contact source on a synthetic trot read back from a bag (rosbags message objects) -------------------

FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")


@pytest.fixture(scope="module")
def trot_bag(tmp_path_factory: pytest.TempPathFactory) -> tuple[SyntheticRun, Path]:
    """4 s of kinodyn.estimation.synthetic.trotting_walk (realistic noise; the IMU off the base origin and
    rotated), written by kinodyn_tools.estimation.synthetic_bag."""
    sys.path.insert(0, str(REPO / "src/kinodyn/test/estimation"))
    try:
        from robots import quadruped_offset_imu_model  # noqa: PLC0415  (on the path just for this import)
    finally:
        sys.path.pop(0)
    model = quadruped_offset_imu_model()
    run = trotting_walk(model, "imu_link", FEET, duration=4.0)
    path = tmp_path_factory.mktemp("trot") / "bag"
    write_synthetic_bag(run, path)
    return run, path


@pytest.mark.parametrize(
    ("source", "filter_name"),
    [("message", "eskf"), ("schedule", "invariant"), ("detection", "eskf"), ("detection", "invariant")],
)
def test_every_contact_source_tracks_a_trot_from_a_bag(
    trot_bag: tuple[SyntheticRun, Path], source: str, filter_name: str,
) -> None:
    """Measured on this run: at most 7.7 mm (ESKF) and 2.2 mm (invariant) from the truth over 1 m."""
    run, path = trot_bag
    feet = FEET if source == "detection" else ()
    params = EstimatorParameters(filter=filter_name, contact_source=source, feet=feet)
    pipeline = EstimatorPipeline(run.model, params, Logger())
    take = {
        "/imu/data": pipeline.on_imu,
        "/joint_states": pipeline.on_joint_state,
        "/contacts": pipeline.on_contacts,
    }
    for topic, _, _, msg in read_messages(path, list(take)):
        take[topic](msg)
    odometry = of_kind(pipeline.flush(), "odometry")
    estimated = np.array([[o.pose.pose.position.x, o.pose.pose.position.y, o.pose.pose.position.z]
                          for o in odometry])
    first = int(np.searchsorted(run.t, stamps(odometry[:1])[0] * 1e-9 - DEFAULT_EPOCH - 1e-6))
    truth = run.position[first:] - run.position[first]  # odom starts at the base (REP-105)
    assert len(odometry) == len(truth)  # one per IMU sample after initialisation
    error = np.linalg.norm(estimated - truth, axis=1).max()
    assert error < 0.02 * run.path_length, (error, run.path_length)  # within 2 % of the 1 m walked
    values = pipeline.health()[2]
    assert values["estimator_updates"] > 1500  # every joint state after initialisation updated the filter
    assert ("contacts_messages" in values) == (source != "detection")  # detection reads no contacts topic


# stamps against the clock, IMU alone, missing IMU samples ---------------------------------------------------

def timed(messages: Iterable[tuple[str, Any]]) -> list[tuple[str, Any, int]]:
    """``(topic, message, clock)``: each message received when the node's clock reads its stamp."""
    return [(topic, msg, stamps([msg])[0]) for topic, msg in messages]


def feed_clocked(pipeline: EstimatorPipeline, messages: list[tuple[str, Any, int]]) -> list[Output]:
    take = {
        "imu/data": pipeline.on_imu, "joint_states": pipeline.on_joint_state, "contacts": pipeline.on_contacts
    }
    outputs: list[Output] = []
    for topic, msg, clock_ns in messages:
        take[topic](msg, clock_ns=clock_ns)
        outputs.extend(pipeline.drain())
    return outputs + pipeline.flush()


def diagnostic_values(outputs: list[Output]) -> list[dict[str, str]]:
    return [{kv.key: kv.value for kv in d.status[0].values} for d in of_kind(outputs, "diagnostics")]


def shifted(msg: Stamped, seconds: float) -> Stamped:
    """A copy of ``msg`` stamped ``seconds`` later."""
    copy = type(msg)()
    for name in msg.get_fields_and_field_types():
        setattr(copy, name, getattr(msg, name))
    copy.header = type(msg.header)(frame_id=msg.header.frame_id)
    copy.header.stamp = stream.stamp(stamps([msg])[0] + round(seconds * 1e9))
    return copy


@pytest.mark.parametrize("topic", ["imu/data", "joint_states"])
def test_a_message_stamped_ahead_is_refused_with_one_line_and_the_others_go_on(
    model: Model, topic: str,
) -> None:
    """One message stamped 10 s ahead of the clock (max_stamp_lead 0.5 s) among 2 s of standing: refused
    with one line naming topic, stamp and clock; every other message gives what it gives without it (no
    topic taken for silent, no IMU message held back until the clock reaches the bad stamp)."""
    messages = timed(stream.standing(model, 800))
    index = [i for i, (t, _, _) in enumerate(messages) if t == topic][520]  # 101.3 s, initialised
    reference = feed_clocked(EstimatorPipeline(model, EstimatorParameters(), Logger()),
                             messages[:index] + messages[index + 1:])
    bad_topic, msg, clock_ns = messages[index]
    messages[index] = (bad_topic, shifted(msg, 10.0), clock_ns)
    log = Logger()
    outputs = feed_clocked(EstimatorPipeline(model, EstimatorParameters(), log), messages)
    warnings = [line for level, line in log.lines if level != "info"]
    assert warnings[0] == (
        f"refusing {topic} message stamped 111.300000000 s: the node's clock reads 101.300000000 s, the "
        "stamp is 10.000 s ahead of it (more than max_stamp_lead 0.5 s): a sensor clock running ahead, or a "
        "bad stamp"
    )
    # the refused IMU sample is missing
    missing = ["imu/data: 1 IMU samples missing between 101.000 s and 101.500 s of stamps, 199 received "
               "(0.5 % lost at the nominal 400 Hz)"] if topic == "imu/data" else []
    assert [line.split(": a sensor dropout")[0] for line in warnings[1:]] == missing
    assert of_kind(outputs, "odometry") == of_kind(reference, "odometry")
    assert len(of_kind(outputs, "odometry")) > 500
    values = diagnostic_values(outputs)
    assert values[-1]["dropped_ahead"] == "1"
    assert all(v["silent_streams"] == "" for v in values[1:])  # the first: before the others were heard
    # without a clock the same message is taken: its stream then drops every later message as out of order
    unbounded = run(model, [(t, m) for t, m, _ in messages], Logger())
    assert len(of_kind(unbounded, "odometry")) < len(of_kind(outputs, "odometry"))


def test_stamps_of_another_clock_domain_are_refused_with_a_clear_line(model: Model) -> None:
    """Simulated-time stamps (100 s) on a node whose clock reads wall-clock epoch time (1.7e9 s), the
    reverse, and a clock that has not started (0: use_sim_time before /clock): every message refused, one line
    per topic and cause naming topic, stamp and clock, no topic called silent, nothing published."""
    epoch = 1_700_000_000 * NS
    for start, offset_ns, cause in [(stream.START_NS, epoch, "behind it"),
                                    (epoch, stream.START_NS - epoch, "ahead of it"),
                                    (stream.START_NS, None, "it has not started")]:
        log = Logger()
        clocked = [(t, m, 0 if offset_ns is None else c + offset_ns)
                   for t, m, c in timed(stream.standing(model, 400, start))]
        outputs = feed_clocked(EstimatorPipeline(model, EstimatorParameters(), log), clocked)
        assert not of_kind(outputs, "odometry")
        assert not of_kind(outputs, "diagnostics")
        lines = [line for level, line in log.lines if level == "warning"]
        assert [line.split(" message stamped ")[0] for line in lines] == [
            "refusing imu/data", "refusing contacts", "refusing joint_states"], lines
        assert all(cause in line and "the node's clock reads" in line for line in lines), lines
        if offset_ns is not None:
            assert all("another clock domain" in line for line in lines), lines
        assert not any("silent" in line for _, line in log.lines)



def test_a_clock_domain_refusal_is_said_even_right_after_the_start_up_refusals(model: Model) -> None:
    """Messages before the clock starts are refused with "it has not started"; a message of another clock
    domain once it runs is a different problem and gets its own line at once, not held back."""
    log = Logger()
    messages = timed(stream.standing(model, 40))
    early = [(topic, msg, 0) for topic, msg, _ in messages[:20]]
    epoch = [(topic, msg, clock + 1_700_000_000 * NS) for topic, msg, clock in messages[20:]]
    feed_clocked(EstimatorPipeline(model, EstimatorParameters(), log), early + epoch)
    lines = [line for level, line in log.lines
             if level == "warning" and line.startswith("refusing joint_states")]
    assert len(lines) == 2, lines
    assert "it has not started" in lines[0], lines
    assert "another clock domain" in lines[1], lines



def test_running_on_the_imu_alone_is_said_once_and_the_covariance_grows(model: Model) -> None:
    """Standing 1.5 s, then 1.5 s with no foot in contact (the robot lifted): one warning line, diagnostics
    imu_only with level warn, and the position covariance growing from the last foot's lift-off like
    imu_only_acceleration_noise^2 s^4 / 4 on top of what the densities give (the same run without it)."""
    messages = stream.standing(model, 1200)
    for _, msg in messages:
        if isinstance(msg, ContactStates) and stamps([msg])[0] >= stream.START_NS + 1.5e9:
            msg.in_contact = [False] * 4
    results = {}
    for sigma in (0.2, 0.0):
        log = Logger()
        params = EstimatorParameters(imu_only_acceleration_noise=sigma)
        outputs = feed_clocked(EstimatorPipeline(model, params, log), timed(messages))
        results[sigma] = (log, outputs)
    log, outputs = results[0.2]
    imu_only = [line for level, line in log.lines if "running on the IMU alone" in line]
    assert len(imu_only) == 1, log.lines
    assert imu_only[0].startswith("running on the IMU alone since 101.500 s")
    statuses = [d.status[0] for d in of_kind(outputs, "diagnostics")]
    last = {kv.key: kv.value for kv in statuses[-1].values}
    assert last["imu_only"] == "True"
    assert statuses[-1].level == b"\x01"
    assert statuses[-1].message.startswith("running on the IMU alone: no foot in contact since 101.500 s")
    grown, plain = ({stamps([o])[0]: o.pose.covariance[0] for o in of_kind(results[s][1], "odometry")}
                    for s in (0.2, 0.0))
    for t_ns in (stream.START_NS + 2.5e9, stream.START_NS + 2.9975e9):
        s = (t_ns - stream.START_NS - 1.5e9) / 1e9
        assert grown[t_ns] - plain[t_ns] == pytest.approx(0.2**2 * s**4 / 4, rel=1e-6)


def test_missing_imu_samples_are_counted_against_the_nominal_rate_and_reported(model: Model) -> None:
    """After 1.2 s at 400 Hz only every fifth IMU message arrives (a queue overflowing): the missing samples
    are counted from the stamps against the rate of the first intervals, one warning line gives the share
    lost, and the diagnostics carry the counts with level warn."""
    messages = stream.standing(model, 1200)
    imu = [i for i, (topic, _) in enumerate(messages) if topic == "imu/data"]
    lost = {i for k, i in enumerate(imu) if k >= 480 and k % 5}
    kept = [m for i, m in enumerate(messages) if i not in lost]
    log = Logger()
    outputs = feed_clocked(EstimatorPipeline(model, EstimatorParameters(), log), timed(kept))
    lines = [line for level, line in log.lines if level == "warning"]
    assert len(lines) == 1, lines
    assert "IMU samples missing" in lines[0], lines
    # the first report: 101.0-101.5 s, the loss starting at 101.2 s (96 of 120 samples missing)
    assert "96 IMU samples missing between 101.000 s and 101.500 s of stamps" in lines[0]
    assert "qos_depth" in lines[0]
    assert "104 received (48.0 % lost at the nominal 400 Hz)" in lines[0]
    values = diagnostic_values(outputs)
    last_stamp = stamps(of_kind(outputs, "diagnostics"))[-1]
    expected = sum(1 for k in range(480, 1200) if k % 5 and stream.START_NS + k * stream.IMU_PERIOD_NS
                   < last_stamp)
    assert values[-1]["imu_samples_missing"] == str(expected)
    assert values[-1]["imu_rate_nominal"] == "400.0"
    assert values[-1]["imu_missing_percent"] == "80.0"
    assert of_kind(outputs, "diagnostics")[-1].status[0].level == b"\x01"


def test_a_simulated_clock_stalled_in_a_busy_node_is_not_taken_for_stamps_ahead() -> None:
    """The node's simulated clock moves only when its /clock callback runs: after a 3 s stall it still reads
    100 s while the queued messages are stamped up to 102.8 s. ClockReading adds the steady time since the
    clock last moved, so they are taken; a message 10 s ahead is still refused; a clock not started stays
    0."""
    bounds = EstimatorParameters().max_stamp_lead, EstimatorParameters().max_stamp_lag
    judge = StampBounds(*bounds).judge
    reading = ClockReading()
    assert reading(0, 1 * NS) == 0
    assert reading(100 * NS, 2 * NS) == 100 * NS
    stalled = reading(100 * NS, 5 * NS)  # no /clock processed for 3 s of steady time
    assert stalled == 103 * NS
    assert judge(102_800_000_000, stalled) is None
    assert judge(102_800_000_000, 100 * NS) == "ahead"  # the raw clock would refuse it
    assert judge(113 * NS, stalled) == "ahead"
    assert reading(103_500_000_000, 5 * NS) == 103_500_000_000  # it moved: read as it is


@pytest.mark.parametrize("source", ["message", "detection"])
def test_a_cycle_at_once_gives_the_samples_one_by_one_outputs(model: Model, source: str) -> None:
    """A control loop's cycles at 500 Hz (IMU, contacts, joints at each stamp) given with ``on_cycle`` and
    with the three entry points one after the other, through initialisation, cycles without contacts, a NaN
    accelerometer reading, a stall longer than stream_timeout, an IMU sample of another frame, a joint sample
    of another size and a jump back: the same estimates, diagnostics, lines and counts; most cycles are
    taken at once."""
    params = EstimatorParameters(contact_source=source, feet=stream.FEET)
    logs = Logger(), Logger()
    cycled, one_by_one = (EstimatorPipeline(model, params, log, estimate_rows=True) for log in logs)
    taken_at_once = []
    push_cycle = cycled._merger.push_cycle  # noqa: SLF001  (the pipeline internal this test checks)

    def counted(*args: object) -> object:
        events = push_cycle(*args)
        taken_at_once.append(events is not None)
        return events

    cycled._merger.push_cycle = counted  # noqa: SLF001  (the pipeline internal this test checks)
    force, q = stream.specific_force(model), stream.stance(model)
    period, n = 2_000_000, len(model.joint_names)
    outputs: tuple[list[Output], list[Output]] = ([], [])
    for k in range(1200):
        # a stall of 0.3 s after 1 s, a jump back to the start after 2 s
        stamp = stream.START_NS + period * (k if k < 500 else k + 150 if k < 1000 else k - 1000)
        accel = force + 1e-3 * np.sin(0.37 * k + np.arange(3))
        if k == 450:
            accel = np.array([math.nan, 0.0, 0.0])
        imu = stream.imu(stamp, accel)
        sample = imu_sample(imu)
        if k == 600:
            sample = type(sample)("base_link_x", sample.angular_velocity, sample.linear_acceleration)
        joints = JointSample(q + 1e-4 * np.sin(0.1 * k + np.arange(n)), np.zeros(n), np.zeros(n))
        if k == 650:
            joints = JointSample(joints.positions[:-1], joints.velocities[:-1], joints.efforts[:-1])
        contacts = None if 300 <= k < 304 else dict.fromkeys(stream.FEET, True)
        cycled.on_cycle(stamp, sample, joints, contacts)
        outputs[0].extend(cycled.drain())
        one_by_one.on_imu_sample(stamp, sample)
        if contacts is not None:
            one_by_one.on_contact_flags(stamp, contacts)
        one_by_one.on_joint_sample(stamp, joints)
        outputs[1].extend(one_by_one.drain())
    got = [np.concatenate([e.rows for e in of_kind(out, "odometry")]) for out in outputs]
    assert len(got[0]) > 600  # estimating except while initialising (0.5 s at the start, after the jump)
    np.testing.assert_array_equal(got[0], got[1])
    assert [e.stamps_ns.tolist() for e in of_kind(outputs[0], "odometry")] == \
        [e.stamps_ns.tolist() for e in of_kind(outputs[1], "odometry")]
    assert of_kind(outputs[0], "diagnostics") == of_kind(outputs[1], "diagnostics")
    assert logs[0].lines == logs[1].lines
    assert cycled.counts == one_by_one.counts
    assert cycled.counts.resets == 1
    assert cycled.counts.dropped["bad"] == 2
    assert any("silent" in line for _, line in logs[0].lines)  # the stall was seen as one
    assert 0.9 * len(taken_at_once) < sum(taken_at_once) < len(taken_at_once)


def test_contact_names_checked_every_time_until_they_pass() -> None:
    """A name list that passed is kept; a refused one is refused again on every message, and the kept list
    with another flag count, a repeated or an empty name is still refused."""
    feet = ["LF_FOOT", "RF_FOOT"]
    for _ in range(2):
        with pytest.raises(InputError, match="twice"):
            contact_names(["LF_FOOT", "LF_FOOT"], 2)
        with pytest.raises(InputError, match="empty name"):
            contact_names(["LF_FOOT", ""], 2)
        assert contact_names(feet, 2) == ("LF_FOOT", "RF_FOOT")
        assert contact_names(tuple(feet), 2) == ("LF_FOOT", "RF_FOOT")
        with pytest.raises(InputError, match="2 names but 3 in_contact flags"):
            contact_names(feet, 3)
