"""kinodyn_tools.estimation.synthetic_bag: the bag read back (kinodyn_tools.bags.reader and the mcap
package's own
reader) holds the run's samples exactly, with the faults' dropouts, duplicates and late messages."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from kinodyn.estimation.synthetic import inject_faults, trotting_walk
from kinodyn_common.stamps import stamp_to_ns
from kinodyn_tools.bags.reader import read_messages
from kinodyn_tools.estimation.synthetic_bag import DEFAULT_EPOCH, main, write_synthetic_bag
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

import kinodyn as kd

if TYPE_CHECKING:
    from kinodyn.estimation.synthetic import SyntheticRun

URDF = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"
FEET = ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT"]
STANDING = [0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2]


@pytest.fixture(scope="module")
def run() -> SyntheticRun:
    model = kd.Model.from_urdf(URDF, floating_base=True)
    return trotting_walk(model, "imu_link", FEET, duration=3.0, rate=200.0,
                         standing_joints=np.array(STANDING))


def xyz(vector: Any) -> list[float]:  # noqa: ANN401  (a Vector3 or Point: rosbags builds the classes at run time)
    return [vector.x, vector.y, vector.z]


def stamp_ns(message: Any) -> int:  # noqa: ANN401  (rosbags builds the message classes at run time)
    return stamp_to_ns(message.header.stamp)


def by_topic(path: Path) -> dict[str, list[tuple[int, object]]]:
    out: dict[str, list[tuple[int, object]]] = {}
    for topic, _, t_ns, message in read_messages(path):
        out.setdefault(topic, []).append((t_ns, message))
    return out


def test_clean_bag_holds_the_run(run: SyntheticRun, tmp_path: Path) -> None:
    counts = write_synthetic_bag(run, tmp_path / "bag")
    n = len(run.t)
    assert counts == {"/imu/data": n, "/joint_states": n, "/contacts": n, "/ground_truth/odometry": n}
    topics = by_topic(tmp_path / "bag")
    expected = round(DEFAULT_EPOCH * 1e9) + np.round(run.t * 1e9).astype(np.int64)
    for messages in topics.values():
        assert [t for t, _ in messages] == expected.tolist()  # bag time = header stamp, in order
        assert [stamp_ns(m) for _, m in messages] == expected.tolist()
    imu = [m for _, m in topics["/imu/data"]]
    assert {m.header.frame_id for m in imu} == {"imu_link"}
    assert imu[0].orientation_covariance[0] == -1.0
    gyro = np.array([xyz(m.angular_velocity) for m in imu])
    accel = np.array([xyz(m.linear_acceleration) for m in imu])
    assert np.array_equal(gyro, run.imu_angular_velocity)
    assert np.array_equal(accel, run.imu_linear_acceleration)
    joints = [m for _, m in topics["/joint_states"]]
    assert list(joints[0].name) == list(run.joint_names)
    assert np.array_equal(np.array([m.position for m in joints]), run.joint_positions)
    assert np.array_equal(np.array([m.effort for m in joints]), run.joint_efforts)
    contacts = [m for _, m in topics["/contacts"]]
    assert list(contacts[0].names) == FEET
    assert np.array_equal(np.array([m.in_contact for m in contacts]), run.contacts)
    odom = [m for _, m in topics["/ground_truth/odometry"]]
    assert odom[0].header.frame_id == "odom"
    assert odom[0].child_frame_id == "base_link"
    position = np.array([xyz(m.pose.pose.position) for m in odom])
    assert np.array_equal(position, run.position)
    assert odom[-1].twist.twist.linear.x == run.linear_velocity[-1, 0]


def test_bag_reads_with_rosbags_reader(run: SyntheticRun, tmp_path: Path) -> None:
    """An MCAP file (magic bytes) that rosbags' rosbag2 Reader opens: types, counts, CDR deserialisation."""
    write_synthetic_bag(run, tmp_path / "bag")
    (storage,) = (tmp_path / "bag").glob("*.mcap")
    assert storage.read_bytes()[:8] == b"\x89MCAP0\r\n"
    store = get_typestore(Stores.ROS2_JAZZY)
    with Reader(tmp_path / "bag") as reader:
        types = {c.topic: c.msgtype for c in reader.connections}
        assert types == {"/imu/data": "sensor_msgs/msg/Imu", "/joint_states": "sensor_msgs/msg/JointState",
                         "/contacts": "kinodyn_interfaces/msg/ContactStates",
                         "/ground_truth/odometry": "nav_msgs/msg/Odometry"}
        assert reader.message_count == 4 * len(run.t)
        imu = [c for c in reader.connections if c.topic == "/imu/data"]
        first = next(reader.messages(connections=imu))
        message = store.deserialize_cdr(first[2], "sensor_msgs/msg/Imu")
        assert message.linear_acceleration.z == run.imu_linear_acceleration[0, 2]


def test_faulty_bag(run: SyntheticRun, tmp_path: Path) -> None:
    faulty = inject_faults(run, seed=2, dropouts=2, duplicate_fraction=0.05, out_of_order_fraction=0.05)
    faults = faulty.faults
    counts = write_synthetic_bag(faulty, tmp_path / "bag", storage="sqlite3")
    n, dup = len(run.t), int(faults.duplicated.sum())
    dropped_dup = int((faults.duplicated & faults.imu_dropped).sum())
    assert counts["/joint_states"] == n + dup
    assert counts["/imu/data"] == n - int(faults.imu_dropped.sum()) + dup - dropped_dup
    topics = by_topic(tmp_path / "bag")
    stamps = [stamp_ns(m) for _, m in topics["/joint_states"]]
    assert sum(b < a for a, b in itertools.pairwise(stamps)) >= 1  # late messages: stamps go back
    assert len(stamps) - len(set(stamps)) == dup
    bag_times = [t for t, _ in topics["/joint_states"]]
    assert bag_times == sorted(bag_times)
    imu = [m for _, m in topics["/imu/data"]]
    assert any(np.isnan(xyz(m.angular_velocity) + xyz(m.linear_acceleration)).any() for m in imu)
    clean = write_synthetic_bag(faulty, tmp_path / "clean", duplicate=False, out_of_order=False)
    assert clean["/joint_states"] == n


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    args = ["--urdf", str(URDF), "--imu-frame", "imu_link", "--feet", *FEET, "--output", str(out),
            "--duration", "3", "--rate", "100", "--faults", "--standing-joints", *map(str, STANDING)]
    assert main(args) == 0
    assert (out / "metadata.yaml").exists()
    assert "wrote" in capsys.readouterr().out
    assert main(args) == 2  # refuses to overwrite
    assert "exists" in capsys.readouterr().err
    assert main([*args[:-13], "--output", str(tmp_path / "x"), "--standing-joints", "0.1"]) == 2
    assert "--standing-joints has 1 values" in capsys.readouterr().err
    assert main([*args[:-13], "--output", str(tmp_path / "y"), "--duration", "1.5"]) == 2
    assert "too short for the faults" in capsys.readouterr().err
