"""The README's main command, `bash scripts/demo.sh`, headless with the short scenario.

It runs the quadruped closed loop (config/quadruped_wbc.yaml) through stand up, a sway (roll and a lower base
on the wbc's ~/base_pose), trot forward at 0.3 m/s and stop. The test checks the progress lines (one per step,
in order, simulated time increasing), the true base rolling during the sway, the summary
table (no fall, the trot's measured velocity near its command, estimator drift and WBC tick figures), the bag
(the graph's topics on simulated time, the commanded 0.3 m/s in it), the report page (self-contained, with its
figures) and that every process the demo started has ended.
"""

from __future__ import annotations

import math
import os
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kinodyn_tools.bags import read_messages

from test.conftest import REPO

if TYPE_CHECKING:
    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system


def tagged_processes(tag: str) -> list[int]:
    """Live processes whose environment holds KINODYN_DEMO_TEST_TAG=tag: the demo and what it started."""
    needle = f"KINODYN_DEMO_TEST_TAG={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_demo_runs_the_short_scenario_headless(spawn: ProcessSpawner, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    env = dict(os.environ, KINODYN_DEMO_HEADLESS="1", KINODYN_DEMO_SHORT="1",
               KINODYN_DEMO_RUNS=str(tmp_path / "runs"), KINODYN_DEMO_TEST_TAG=tag)
    demo = spawn(["bash", str(REPO / "scripts" / "demo.sh")], "demo", env=env)
    code = demo.wait(timeout=1200)  # setup.sh included: it recompiles the kernels after a change to the core
    log = Path(demo.log_path).read_text()
    assert code == 0, log[-4000:]
    assert tagged_processes(tag) == [], "processes of the demo still running"

    # progress: one line per step, in the scenario's order, simulated time increasing
    steps = re.findall(r"^\[scenario\] t = +([0-9.]+) s: (.+)$", log, re.M)
    assert [name for _, name in steps] == ["stand up", "sway", "trot forward", "stop"], log[-4000:]
    times = [float(t) for t, _ in steps]
    assert times[0] > 0
    assert times[1] - times[0] == pytest.approx(1.5, abs=0.05)
    assert times[2] - times[1] == pytest.approx(1.0, abs=0.05)
    assert times[3] - times[2] == pytest.approx(2.5, abs=0.05)
    assert "browser view" not in log, "headless: no viewer expected"
    assert "[viewer]" not in log, "headless: no viewer expected"

    (run,) = list((tmp_path / "runs").iterdir())  # tmp_path also holds the spawned processes' logs
    summary = (run / "summary.txt").read_text()
    assert summary in log.replace("\r", "")
    _check_summary(summary, times)
    _check_bag(run / "bag")

    # the report: one self-contained page with its figures
    page = (run / "report.html").read_text()
    assert page.count("<svg") >= 4
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"https?:", page)
    assert "velocity" in page.lower()
    assert "estimate" in page.lower()


def _check_summary(summary: str, times: list[float]) -> None:
    """The summary: no falls, the whole run's times, the trot's tracking, the drift and the wbc's ticks."""
    assert "falls: none" in summary
    # the whole run, start-up included: simulated time to past the last step's end, the first step's start
    whole = re.search(r"^whole run: ([0-9.]+) s simulated \(([0-9.]+) s before the first step\) in "
                      r"([0-9.]+) s wall \(([0-9.]+) s before the first step, start-up included\)$",
                      summary, re.M)
    assert whole, summary
    simulated, sim_first, wall, wall_first = (float(x) for x in whole.groups())
    assert sim_first == pytest.approx(times[0], abs=0.01), summary
    assert simulated >= times[3] + 1.5 - 0.01, summary
    assert 0 < wall_first < wall, summary
    trot = re.search(r"^trot forward +[0-9.]+ +\+0\.30 \+0\.00 \+0\.00 +([+-][0-9.]+) ([+-][0-9.]+) "
                     r"([+-][0-9.]+) +([0-9.]+)", summary, re.M)
    assert trot, summary
    vx, vy, wz, rmse = (float(x) for x in trot.groups())
    assert abs(vx - 0.3) < 0.1, summary
    assert abs(vy) < 0.1, summary
    assert abs(wz) < 0.2, summary
    assert rmse < 0.15, summary
    assert re.search(r"^estimator drift: [0-9.]+ % of [0-9.]+ m", summary, re.M), summary
    tick = re.search(r"^wbc tick latency: median ([0-9.]+) ms, p99 ([0-9.]+) ms, max [0-9.]+ ms over "
                     r"(\d+) ticks", summary, re.M)
    assert tick, summary
    assert 0 < float(tick[1]) <= float(tick[2]), summary
    assert int(tick[3]) > 1000, summary


def _check_bag(bag: Path) -> None:
    """The bag: the graph's topics on simulated time, the command in it, the sway, the frames."""
    counts: dict[str, int] = {}
    commanded = []
    roll: list[tuple[int, float]] = []  # (bag time, true base roll)
    poses: list[int] = []  # bag times of the wbc's base poses: the sway's, then the return to nominal
    transforms: dict[tuple[str, str, int, int], int] = {}  # (parent, child, stamp) -> times on /tf
    frames: set[tuple[str, str, str]] = set()
    for topic, _type, t_ns, message in read_messages(bag):
        counts[topic] = counts.get(topic, 0) + 1
        if topic == "/wbc/cmd_vel":
            commanded.append(message.twist.linear.x)
            # simulated time: seconds to minutes (the robot holds its posture until the estimator's first
            # odometry, longer on a loaded machine), never the wall clock's ~1.8e18 ns since 1970
            assert t_ns < 3600e9, "bag time is simulated time, not the wall clock"
        if topic == "/tf":  # every transform once per stamp: one publisher each (tf2's TF_REPEATED_DATA)
            for t in message.transforms:
                key = (t.header.frame_id, t.child_frame_id, t.header.stamp.sec, t.header.stamp.nanosec)
                transforms[key] = transforms.get(key, 0) + 1
        if topic in ("/quadruped_system/odometry", "/odometry/filtered"):
            frames.add((topic, message.header.frame_id, message.child_frame_id))
        if topic == "/wbc/base_pose":
            poses.append(t_ns)
        if topic == "/quadruped_system/odometry":
            o = message.pose.pose.orientation
            roll.append((t_ns, math.atan2(2.0 * (o.w * o.x + o.y * o.z), 1.0 - 2.0 * (o.x ** 2 + o.y ** 2))))
    for topic in ("/joint_states", "/odometry/filtered", "/quadruped_system/odometry", "/contact_schedule",
                  "/leg_pd_controller/commands", "/diagnostics", "/tf"):
        assert counts.get(topic, 0) >= (5 if topic == "/diagnostics" else 100), (topic, counts)
    assert max(commanded) == pytest.approx(0.3)
    assert len(poses) >= 2, counts  # the sway's pose and the return to nominal
    # the sway as the graph saw it: from the pose's arrival to the return's, both on the recorder's clock (the
    # runner's steps start on its own view of simulated time, which a loaded machine delays)
    sway_roll = [r for t, r in roll if poses[0] <= t <= poses[1]]
    assert max(sway_roll) > 0.1, "the base rolls towards the 0.15 rad the sway asks"
    # frames: ground truth in the simulator's world, the estimate in odom; odom -> base_link once per stamp
    assert frames == {("/quadruped_system/odometry", "world", "base_link"),
                      ("/odometry/filtered", "odom", "base_link")}, frames
    assert sum(1 for parent, child, *_ in transforms if (parent, child) == ("odom", "base_link")) >= 100
    assert [key for key, n in transforms.items() if n > 1] == []
