"""Write a synthetic trot (kinodyn.estimation.synthetic) as a rosbag2 bag of the state estimator's inputs.

Topics: ``/imu/data`` (sensor_msgs/Imu, frame_id = the IMU link, ``orientation_covariance[0] = -1``: no
orientation, REP-145), ``/joint_states`` (measured positions, velocities, efforts), ``/contacts``
(kinodyn_interfaces/ContactStates: the true schedule, foot positions and contact forces, names = the foot
links), ``/ground_truth/odometry`` (nav_msgs/Odometry of the base: frame ``odom``, child the root link, twist
in the base frame). Header stamps and bag times are ``epoch + run.t``. With a run from ``inject_faults``
the dropped IMU samples are left out and, unless disabled, the flagged samples' messages are written twice
(``duplicate``) or late in bag order with their original stamp (``out_of_order``). docs/estimation.md,
"Synthetic data and accuracy".

    python -m kinodyn_tools.estimation.synthetic_bag --urdf U --imu-frame F --feet A B C D --output DIR \
        [--faults]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from kinodyn.estimation.synthetic import SyntheticRun, inject_faults, trotting_walk
from kinodyn_common.stamps import NS, seconds_to_ns, split_ns

import kinodyn as kd
from kinodyn_tools.bags.writer import BagWriter

if TYPE_CHECKING:
    from collections.abc import Sequence

DEFAULT_EPOCH = 1_700_000_000.0  # s, header stamps start here (2023-11-14 UTC)
TOPICS = {
    "/imu/data": ("sensor_msgs/msg/Imu", "sensor"),
    "/joint_states": ("sensor_msgs/msg/JointState", "default"),
    "/contacts": ("kinodyn_interfaces/msg/ContactStates", "default"),
    "/ground_truth/odometry": ("nav_msgs/msg/Odometry", "default"),
}
ODOM_FRAME = "odom"


class _Messages:
    """Builds the rosbags message objects of one run's sample ``i``."""

    def __init__(self, run: SyntheticRun, types: dict[str, Any]) -> None:
        self.run, self.types = run, types
        noise, rate = run.noise, run.rate
        var_g = (noise.gyroscope_noise_density**2) * rate  # per-sample variance of the white noise
        var_a = (noise.accelerometer_noise_density**2) * rate
        self.orientation_cov = np.zeros(9)
        self.orientation_cov[0] = -1.0
        self.gyro_cov = np.diag([var_g] * 3).ravel()
        self.accel_cov = np.diag([var_a] * 3).ravel()
        self.zero36 = np.zeros(36)

    def _header(self, stamp_ns: int, frame: str) -> Any:  # noqa: ANN401  (a message of the bag's typestore: rosbags builds the message classes at run time)
        t = self.types
        sec, nanosec = split_ns(stamp_ns)
        return t["std_msgs/msg/Header"](stamp=t["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec),
                                        frame_id=frame)

    def _vector(self, value: np.ndarray, name: str = "geometry_msgs/msg/Vector3") -> Any:  # noqa: ANN401  (a message of the bag's typestore: rosbags builds the message classes at run time)
        return self.types[name](x=float(value[0]), y=float(value[1]), z=float(value[2]))

    def _quaternion(self, q: np.ndarray) -> Any:  # noqa: ANN401  (a message of the bag's typestore: rosbags builds the message classes at run time)
        return self.types["geometry_msgs/msg/Quaternion"](x=float(q[0]), y=float(q[1]), z=float(q[2]),
                                                          w=float(q[3]))

    def imu(self, i: int, stamp_ns: int) -> Any:  # noqa: ANN401  (a message of the bag's typestore: rosbags builds the message classes at run time)
        r = self.run
        return self.types["sensor_msgs/msg/Imu"](
            header=self._header(stamp_ns, r.imu_frame),
            orientation=self._quaternion(np.array([0.0, 0.0, 0.0, 1.0])),
            orientation_covariance=self.orientation_cov,
            angular_velocity=self._vector(r.imu_angular_velocity[i]),
            angular_velocity_covariance=self.gyro_cov,
            linear_acceleration=self._vector(r.imu_linear_acceleration[i]),
            linear_acceleration_covariance=self.accel_cov)

    def joint_state(self, i: int, stamp_ns: int) -> Any:  # noqa: ANN401  (a message of the bag's typestore: rosbags builds the message classes at run time)
        r = self.run
        return self.types["sensor_msgs/msg/JointState"](
            header=self._header(stamp_ns, ""), name=list(r.joint_names), position=r.joint_positions[i].copy(),
            velocity=r.joint_velocities[i].copy(), effort=r.joint_efforts[i].copy())

    def contacts(self, i: int, stamp_ns: int) -> Any:  # noqa: ANN401  (a message of the bag's typestore: rosbags builds the message classes at run time)
        r = self.run
        return self.types["kinodyn_interfaces/msg/ContactStates"](
            header=self._header(stamp_ns, ODOM_FRAME), names=list(r.feet), in_contact=r.contacts[i].copy(),
            points=[self._vector(p, "geometry_msgs/msg/Point") for p in r.foot_positions[i]],
            forces=[self._vector(f) for f in r.contact_forces[i]])

    def odometry(self, i: int, stamp_ns: int) -> Any:  # noqa: ANN401  (a message of the bag's typestore: rosbags builds the message classes at run time)
        r, t = self.run, self.types
        pose = t["geometry_msgs/msg/Pose"](position=self._vector(r.position[i], "geometry_msgs/msg/Point"),
                                           orientation=self._quaternion(r.quaternion[i]))
        twist = t["geometry_msgs/msg/Twist"](linear=self._vector(r.linear_velocity[i]),
                                             angular=self._vector(r.angular_velocity[i]))
        return t["nav_msgs/msg/Odometry"](
            header=self._header(stamp_ns, ODOM_FRAME), child_frame_id=r.base_frame,
            pose=t["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=self.zero36),
            twist=t["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=self.zero36))


def write_synthetic_bag(run: SyntheticRun, path: str | Path, storage: str = "mcap", duplicate: bool = True,
                        out_of_order: bool = True, epoch: float = DEFAULT_EPOCH) -> dict[str, int]:
    """Write ``run`` to the new bag directory ``path`` (module doc); returns the message count per topic."""
    epoch_ns = seconds_to_ns(epoch)
    stamps = epoch_ns + np.round(run.t * NS).astype(np.int64)
    faults = run.faults
    records: list[tuple[int, int, str, int]] = []  # (bag time, sequence, topic, sample)
    builders = ("/imu/data", "/joint_states", "/contacts", "/ground_truth/odometry")
    for i in range(len(run.t)):
        late = int(faults.delay[i]) if faults is not None and out_of_order else 0
        bag_ns = int(stamps[min(i + late, len(stamps) - 1)]) + (1 if late else 0)
        copies = 2 if faults is not None and duplicate and faults.duplicated[i] else 1
        for topic in builders:
            if topic == "/imu/data" and faults is not None and faults.imu_dropped[i]:
                continue
            for _ in range(copies):
                records.append((bag_ns, len(records), topic, i))
    records.sort()
    counts = dict.fromkeys(TOPICS, 0)
    with BagWriter(path, storage=storage) as bag:
        for topic, (msgtype, qos) in TOPICS.items():
            bag.add_topic(topic, msgtype, qos=qos)
        messages = _Messages(run, bag.typestore.types)
        build = {"/imu/data": messages.imu, "/joint_states": messages.joint_state,
                 "/contacts": messages.contacts, "/ground_truth/odometry": messages.odometry}
        for bag_ns, _, topic, i in records:
            bag.write(topic, bag_ns, build[topic](i, int(stamps[i])))
            counts[topic] += 1
    return counts


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m kinodyn_tools.estimation.synthetic_bag",
        description="Synthesise a trotting walk of a legged robot (exact kinematics, noisy IMU and "
                    "encoders) and write it as a rosbag2 bag of the state estimator's inputs and the ground "
                    "truth.")
    parser.add_argument("--urdf", required=True, type=Path, help="robot URDF (floating base)")
    parser.add_argument("--imu-frame", required=True, help="URDF link of the IMU")
    parser.add_argument("--feet", required=True, nargs="+",
                        help="foot links (each with >= 3 joints to the base)")
    parser.add_argument("--output", required=True, type=Path, help="bag directory to create (must not exist)")
    parser.add_argument("--faults", action="store_true",
                        help="add dropouts, spikes, NaN readings, contact flicker, duplicated and late "
                             "messages")
    parser.add_argument("--duration", type=float, default=36.0, help="s (default 36)")
    parser.add_argument("--rate", type=float, default=500.0,
                        help="sample rate of every topic, Hz (default 500)")
    parser.add_argument("--speed", type=float, default=0.45, help="walking speed, m/s (default 0.45)")
    parser.add_argument("--seed", type=int, default=0, help="noise seed (the fault seed is seed + 1)")
    parser.add_argument("--standing-joints", type=float, nargs="+",
                        help="nominal stance, one angle per joint in URDF model order (default: mid-limits)")
    parser.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    parser.add_argument("--epoch", type=float, default=DEFAULT_EPOCH, help="stamp of t = 0, s since 1970")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.output.exists():
        print(f"error: {args.output} exists; give a new directory for the bag", file=sys.stderr)
        return 2
    try:
        model = kd.Model.from_urdf(args.urdf, floating_base=True)
        joints = None if args.standing_joints is None else np.array(args.standing_joints)
        if joints is not None and len(joints) != len(model.joint_names):
            raise ValueError(f"--standing-joints has {len(joints)} values; the model has "
                             f"{len(model.joint_names)} joints: {', '.join(model.joint_names)}")
        run = trotting_walk(model, args.imu_frame, args.feet, duration=args.duration, rate=args.rate,
                            seed=args.seed, speed=args.speed, standing_joints=joints)
        if args.faults:
            run = inject_faults(run, seed=args.seed + 1)
    except (ValueError, KeyError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = write_synthetic_bag(run, args.output, storage=args.storage, epoch=args.epoch)
    print(f"wrote {args.output}: {run.t[-1]:.1f} s, {run.path_length:.1f} m walked; "
          + ", ".join(f"{topic} {n}" for topic, n in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
