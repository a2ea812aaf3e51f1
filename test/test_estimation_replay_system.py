"""Replay equality: the live `state_estimator` node fed a bag by `kinodyn bag play`
publishes the same /odometry/filtered as `kinodyn estimate` writes for that bag, to 1e-12.

The bag is a 3 s synthetic trot (kinodyn_tools.estimation.synthetic_bag) with every topic offered reliable,
and
the node subscribes reliable with a deep queue, so no message is lost on the way (a lost message would change
every later estimate; losses are what the node's own fault tests are about). Both sides run the default
parameters: the feet come from the first contacts message, the IMU frame from the Imu header.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.sim.collision import collision_spheres
from kinodyn_control.estimation.pipeline import EstimatorParameters
from kinodyn_tools.bags.reader import read_messages
from kinodyn_tools.estimation import synthetic_bag
from kinodyn_tools.estimation.offline import Topics, estimate_bag, load_model
from nav_msgs.msg import Odometry
from rclpy.qos import QoSProfile, ReliabilityPolicy

from test.conftest import PYTHON, wait_for
from test.ros_listener import Listener
from test.test_offline_estimation import URDF, accuracy_bench

if TYPE_CHECKING:
    from pathlib import Path

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

INPUTS = ["/imu/data", "/joint_states", "/contacts"]
DEPTH = 20000


def _values(msg: Odometry) -> np.ndarray:
    """Every number of an Odometry, stamp first."""
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    v, w = msg.twist.twist.linear, msg.twist.twist.angular
    return np.concatenate([[msg.header.stamp.sec, msg.header.stamp.nanosec, p.x, p.y, p.z, q.x, q.y, q.z, q.w,
                            v.x, v.y, v.z, w.x, w.y, w.z], msg.pose.covariance, msg.twist.covariance])


def test_live_node_fed_by_bag_play_equals_kinodyn_estimate(spawn: ProcessSpawner, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(synthetic_bag.TOPICS, "/imu/data", ("sensor_msgs/msg/Imu", "default"))  # reliable
    bag = tmp_path / "bag"
    synthetic_bag.write_synthetic_bag(accuracy_bench.synthesize(3.0, seed=5), bag)
    estimate_bag(bag, load_model(URDF), EstimatorParameters(), tmp_path / "offline", Topics(),
                 spheres=collision_spheres(URDF))  # as the node and `kinodyn estimate` read the URDF
    expected = [_values(m) for _, _, _, m in read_messages(tmp_path / "offline", ["/odometry/filtered"])]
    assert len(expected) > 900  # 2.5 s of 500 Hz estimates after the 0.5 s initialisation

    node = spawn([PYTHON, "-m", "kinodyn_ros.nodes.state_estimator", "--ros-args",
                  "-p", f"robot_description_file:={URDF}", "-p", "qos_reliable:=true",
                  "-p", f"qos_depth:={DEPTH}",
                  # a stalled machine must not make a topic look silent (the bag's gaps are < 0.25 s)
                  "-p", "stream_timeout:=5.0",
                  # the bag's stamps are synthetic epoch time (DEFAULT_EPOCH), years behind this node's system
                  # clock: another clock domain by the default max_stamp_lag. Played without /clock (its first
                  # messages would race the first /clock), so the bound is lifted: this test is about replay
                  # equality; the stamp bounds have their own tests (test_state_estimator_system.py)
                  "-p", "max_stamp_lag:=1e10"], "state_estimator")
    listener = Listener("replay_listener")
    received: list[Odometry] = []
    try:
        listener.node.create_subscription(Odometry, "/odometry/filtered", received.append,
                                          QoSProfile(depth=DEPTH, reliability=ReliabilityPolicy.RELIABLE))
        assert listener.spin_until(lambda: listener.node.count_publishers("/odometry/filtered") > 0, 60.0), \
            node.log_path.read_text()
        player = spawn([PYTHON, "-m", "kinodyn_tools.launcher.cli", "bag", "play", str(bag), "--topics",
                        *INPUTS, "--wait-for-subscribers", "30"], "bag_play")
        listener.spin_until(lambda: len(received) >= len(expected) and player.poll() is not None, 180.0)
        assert wait_for(lambda: player.poll() is not None, 30.0)
        listener.spin_for(1.0)  # anything published late would show as an extra message
    finally:
        listener.close()
    assert player.returncode == 0, player.log_path.read_text()
    assert len(received) == len(expected), (len(received), len(expected), node.log_path.read_text()[-3000:])
    np.testing.assert_allclose(np.array([_values(m) for m in received]), np.array(expected), rtol=0.0,
                               atol=1e-12)
