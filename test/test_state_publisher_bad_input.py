"""state_publisher on bad input: one clear log line each, no traceback, no crash.

A missing or malformed URDF ends the process with exit code 1 and exactly one error line. A JointState
with unknown names, a NaN or absurd (1e300) position or mismatched lengths gives exactly one warning line per
distinct problem (sent three times each), publishes nothing for it, and the node keeps publishing correct /tf
afterwards.
"""

from __future__ import annotations

import math
import subprocess
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn_ros.nodes.state_publisher import TF_QOS
from sensor_msgs.msg import JointState

from test.conftest import REPO, wait_for  # pytest --import-mode=importlib names it so
from test.ros_listener import Listener, transforms_by_child
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

STATE_PUBLISHER = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros" / "state_publisher"
PLANAR = REPO / "urdf" / "planar_2link.urdf"


@pytest.fixture
def listener() -> Iterator[Listener]:
    node = Listener("bad_input_test")
    try:
        yield node
    finally:
        node.close()


@pytest.mark.parametrize(
    ("case", "urdf_text", "expected"),
    [
        ("missing_file", None, "cannot read robot_description_file"),
        (
            "malformed_xml",
            "<robot name='x'><link name='a'/>",
            "is not a usable URDF: URDF is not well-formed XML",
        ),
        ("two_roots", "<robot name='x'><link name='a'/><link name='b'/></robot>", "URDF has 2 root links"),
        ("no_urdf", "", "no URDF given"),
    ],
)
def test_bad_urdf_exits_with_one_error_line(
    spawn: ProcessSpawner, tmp_path: Path, case: str, urdf_text: str | None, expected: str
) -> None:
    path = tmp_path / f"{case}.urdf"
    if urdf_text:
        path.write_text(urdf_text)
    parameters = [] if urdf_text == "" else ["-p", f"robot_description_file:={path}"]
    proc = spawn([str(STATE_PUBLISHER), "--ros-args", *parameters], f"state_publisher_{case}")
    try:
        code = proc.wait(timeout=120)  # a Python node's start-up on a loaded machine included
    except subprocess.TimeoutExpired:
        pytest.fail(f"state_publisher did not exit on a bad URDF ({case})")
    log = proc.log_path.read_text()
    errors = [line for line in log.splitlines() if "[ERROR]" in line]
    assert code == 1, log
    assert len(errors) == 1, log
    assert expected in errors[0], log
    assert "Traceback" not in log


def test_bad_joint_states_warn_once_each_and_node_keeps_publishing(
    spawn: ProcessSpawner, listener: Listener,
) -> None:
    proc = spawn(
        [str(STATE_PUBLISHER), "--ros-args", "-p", f"robot_description_file:={PLANAR}"], "state_publisher"
    )
    assert wait_for(lambda: "URDF from" in proc.log_path.read_text(), 120), proc.log_path.read_text()
    dynamics: list[TFMessage] = []
    listener.node.create_subscription(TFMessage, "/tf", dynamics.append, TF_QOS)
    publisher = listener.node.create_publisher(JointState, "joint_states", 10)
    assert listener.spin_until(lambda: publisher.get_subscription_count() > 0, 60)

    def warnings() -> list[str]:
        return [line for line in proc.log_path.read_text().splitlines() if "[WARN]" in line]

    def stamps() -> set[int]:
        return {transforms_by_child(m)["link1"][2][0] for m in dynamics}

    bad_messages = [
        (JointState(name=["joint1", "elbow"], position=[0.1, 0.2]), "unknown joints 'elbow'"),
        (
            JointState(name=["joint1", "joint2"], position=[math.nan, 0.2]),
            "non-finite positions for 'joint1'",
        ),
        (JointState(name=["joint1", "joint2"], position=[0.1]), "2 names but 1 positions"),
        # another length mismatch is another cause: its own warning
        (JointState(name=["joint1", "joint2"], position=[0.1, 0.2], effort=[0.0]), "2 names but 1 effort"),
        # finite but absurd: refused with the joint's range
        (JointState(name=["joint1", "joint2"], position=[1e300, 0.2]), "joint1 = 1e+300 not in [-3.24159"),
    ]
    for k, (bad, expected) in enumerate(bad_messages):
        sent = 0

        def bad_warned(message: JointState = bad, cause: str = expected, first: int = 100 + 10 * k) -> bool:
            """Send the bad message again (a first one may go before the node's subscription matched this
            publisher) until its warning is in the log; the repeats must not warn again (below)."""
            nonlocal sent
            message.header.stamp.sec = first + sent % 10
            sent += 1
            publisher.publish(message)
            return any(cause in line for line in warnings())

        assert listener.spin_until(bad_warned, 10), warnings()
        good_angle = 0.1 * (k + 1)
        good = JointState(name=["joint1", "joint2"], position=[good_angle, -good_angle])
        good.header.stamp.sec = 200 + k

        def good_received(message: JointState = good) -> bool:
            publisher.publish(message)
            return message.header.stamp.sec in stamps()

        assert listener.spin_until(good_received, 10), f"no /tf for the good message after {expected!r}"
        tf = next(
            transforms_by_child(m) for m in dynamics if transforms_by_child(m)["link1"][2][0] == 200 + k
        )
        c, s = math.cos(good_angle), math.sin(good_angle)
        np.testing.assert_allclose(
            tf["link1"][1][:3, :3], [[c, 0, s], [0, 1, 0], [-s, 0, c]], rtol=0, atol=1e-15
        )
        np.testing.assert_allclose(
            tf["link2"][1][:3, :3], [[c, 0, -s], [0, 1, 0], [s, 0, c]], rtol=0, atol=1e-15
        )

    assert proc.poll() is None, "state_publisher died on bad joint_states"
    assert stamps() == {200 + k for k in range(len(bad_messages))}, "a bad message was turned into /tf"
    lines = warnings()
    assert len(lines) == len(bad_messages), lines
    for line, (_, expected) in zip(lines, bad_messages, strict=True):
        assert expected in line
        assert "ignoring joint_states message" in line
    assert "Traceback" not in proc.log_path.read_text()
