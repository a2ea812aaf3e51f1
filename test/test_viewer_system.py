"""The viewer node in a running graph, looked at in headless Chromium.

The graph: control_node simulating the quadruped (config/quadruped_sim.yaml's parameters, nothing commands it,
so it stands on its PD controller at zero command or sinks: either is fine here), state_publisher turning the
simulator's true odometry and the joint states into /tf, state_estimator (IMU, kinematics, the simulator's
contacts) publishing odometry/filtered, the viewer, and a second viewer whose /tf is remapped away and
whose input topics are empty: the empty scene, same camera, no robot. Chromium (Debian's package, through the
DevTools protocol) loads both pages;
the robot must be drawn where it stands (the centre region differs from the empty scene, and holds the body's
blue), and neither page may log an error. The test also checks the MarkerArray and that every topic the RViz
config (config/kinodyn.rviz) shows exists in the running graph with the type the display reads.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
import shutil
import socket
import tempfile
import time
import urllib.request
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import yaml
from PIL import Image
from visualization_msgs.msg import MarkerArray
from websockets.sync.client import connect

from test.conftest import REPO, wait_for
from test.ros_listener import Listener

if TYPE_CHECKING:
    from pathlib import Path

    from test.conftest import ProcessSpawner

pytestmark = pytest.mark.system

URDF = "$(find-pkg-share kinodyn_bringup)/urdf/quadruped_sim.urdf"
KINODYN = REPO / "install" / "kinodyn_tools" / "lib" / "kinodyn_tools" / "kinodyn"
WINDOW = (1280, 800)
RVIZ_TYPES = {
    "rviz_default_plugins/RobotModel": "std_msgs/msg/String",
    "rviz_default_plugins/Odometry": "nav_msgs/msg/Odometry",
    "rviz_default_plugins/MarkerArray": "visualization_msgs/msg/MarkerArray",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graph(viewer_port: int, empty_port: int) -> dict[str, Any]:
    sim = yaml.safe_load((REPO / "config" / "quadruped_sim.yaml").read_text())["nodes"][0]
    # Base paths of two points: the two screenshots are taken one after the other, and a path grown in
    # between (the uncontrolled robot's estimate drifts up, drawn in blue) must not pass for the body's blue.
    # The empty scene subscribes nothing: a fresh clone under load drew 893-975 pixels of the estimated path
    # there. Paths and overlays are tested in test_viewer_scene/_render.
    viewer = {"robot_description_file": URDF, "use_sim_time": True, "host": "127.0.0.1",
              "trajectory_length": 2}
    nothing = {f"{what}_topic": "" for what in ("joint_states", "odometry", "true_odometry", "contacts",
                                                 "footholds")}
    return {
        "nodes": [
            sim,
            {
                "name": "state_publisher",
                "package": "kinodyn_ros",
                "executable": "state_publisher",
                "parameters": {
                    "robot_description_file": URDF,
                    "use_sim_time": True,
                    "odometry_topic": "/quadruped_system/odometry",
                },
            },
            {
                "name": "state_estimator",
                "package": "kinodyn_ros",
                "executable": "state_estimator",
                "parameters": {
                    "robot_description_file": URDF,
                    "use_sim_time": True,
                    "contact_source": "message",
                },
                "remappings": {
                    "imu/data": "/imu_sensor_broadcaster/imu",
                    "contacts": "/quadruped_system/contacts",
                    "/tf": "/estimator_tf",
                },
            },  # state_publisher draws the true base
            {
                "name": "viewer",
                "package": "kinodyn_tools",
                "executable": "viewer",
                "parameters": {**viewer, "port": viewer_port},
            },
            {
                "name": "empty_viewer",
                "package": "kinodyn_tools",
                "executable": "viewer",
                "parameters": {**viewer, **nothing, "port": empty_port},
                "remappings": {"/tf": "/no_tf", "/tf_static": "/no_tf_static"},
            },
        ]
    }


class Page:
    """One Chromium tab through the DevTools protocol: navigate, evaluate, screenshot, and every console
    message, exception and log entry it produced."""

    def __init__(self, devtools: str) -> None:
        targets = json.load(urllib.request.urlopen(f"http://{devtools}/json/list", timeout=10))
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        self._ws = connect(url, max_size=None, open_timeout=10)
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=WINDOW[0],
            height=WINDOW[1],
            deviceScaleFactor=1,
            mobile=False,
        )

    def call(self, method: str, **params: object) -> dict[str, Any]:
        i = next(self._ids)
        self._ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv(timeout=60))
            if message.get("id") == i:
                assert "error" not in message, message
                return message["result"]
            self.events.append(message)

    def evaluate(self, expression: str) -> Any:  # noqa: ANN401  (the page's JSON value)
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self) -> np.ndarray:
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(np.int16)

    def errors(self) -> list[str]:
        """Uncaught exceptions, console.error calls and error-level log entries."""
        found = []
        for e in self.events:
            params = e.get("params", {})
            if e.get("method") == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:500])
            elif e.get("method") == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                found.append(json.dumps(params["args"])[:500])
            elif e.get("method") == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"]["text"][:500])
        return found

    def close(self) -> None:
        self._ws.close()


def start_chromium(spawn: ProcessSpawner, tmp_path: Path) -> str:
    """Headless Chromium with a DevTools endpoint; returns its host:port."""
    binary = shutil.which("chromium")
    assert binary, "chromium is not installed: run scripts/setup.sh (it installs Debian's chromium as root)"
    proc = spawn(
        [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-port=0",
            f"--user-data-dir={tempfile.mkdtemp(dir=tmp_path)}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            "about:blank",
        ],
        "chromium",
    )
    found: list[str] = []

    def listening() -> bool:
        found.extend(re.findall(r"DevTools listening on ws://([^/\s]+)/", proc.log_path.read_text()))
        return bool(found)

    assert wait_for(listening, timeout=30), proc.log_path.read_text()
    return found[0]


def settled_screenshot(page: Page, url: str, path: Path) -> np.ndarray:
    """Load ``url``, wait for the viewer's panel (the websocket is connected), then take screenshots until two
    in a row agree (software WebGL on loaded cores takes a while); the last one is saved to ``path``."""
    page.call("Page.navigate", url=url)
    assert wait_for(
        lambda: page.evaluate("document.body.innerText.includes('Follow the robot')") is True,
        timeout=60,
        interval=0.5,
    ), f"{url}: the viewer's panel never appeared"
    previous = page.screenshot()
    for _ in range(30):
        time.sleep(1.0)
        shot = page.screenshot()
        if np.mean(np.abs(shot - previous)) < 0.2:
            break
        previous = shot
    Image.fromarray(shot.astype(np.uint8)).save(path)
    return shot


def test_viewer_draws_the_robot_in_chromium_and_its_markers(spawn: ProcessSpawner, tmp_path: Path) -> None:
    viewer_port, empty_port = free_port(), free_port()
    graph_file = tmp_path / "viewer_graph.yaml"
    graph_file.write_text(yaml.safe_dump(graph(viewer_port, empty_port), sort_keys=False))
    launcher = spawn([str(KINODYN), "up", str(graph_file), "--timeout", "240"], "launcher")
    urls = [f"http://localhost:{port}" for port in (viewer_port, empty_port)]
    assert wait_for(lambda: all(u in launcher.log_path.read_text() for u in urls), timeout=90), (
        launcher.log_path.read_text()
    )

    listener = Listener("viewer_probe")
    try:
        arrays: list[MarkerArray] = []
        listener.node.create_subscription(MarkerArray, "/viewer/markers", arrays.append, 10)
        # the CoM marker (id 4) needs /tf, /tf_static and joint_states: the robot is known
        assert listener.spin_until(lambda: any(4 in {m.id for m in a.markers} for a in arrays), timeout=60), (
            launcher.log_path.read_text()
        )
        markers = {m.id: m for m in arrays[-1].markers[1:]}
        assert markers[4].header.frame_id == "world"
        com = markers[4].pose.position
        assert -1.0 < com.x < 1.0  # at the robot, near the start
        assert -1.0 < com.y < 1.0
        assert 0.0 < com.z < 0.8

        topics = dict(listener.node.get_topic_names_and_types())
        rviz = yaml.safe_load((REPO / "config" / "kinodyn.rviz").read_text())
        displays = rviz["Visualization Manager"]["Displays"]
        shown = [
            (d["Class"], d["Description Topic" if "Description Topic" in d else "Topic"]["Value"])
            for d in displays
            if d["Class"] in RVIZ_TYPES
        ]
        assert len(shown) == 4
        assert listener.spin_until(
            lambda: all(t in dict(listener.node.get_topic_names_and_types()) for _, t in shown), timeout=30
        ), topics
        topics = dict(listener.node.get_topic_names_and_types())
        for display, topic in shown:
            assert RVIZ_TYPES[display] in topics[topic], (display, topic, topics[topic])
        assert rviz["Visualization Manager"]["Global Options"]["Fixed Frame"] == "odom"
    finally:
        listener.close()

    devtools = start_chromium(spawn, tmp_path)
    page = Page(devtools)
    try:
        robot = settled_screenshot(page, urls[0], tmp_path / "viewer.png")
        empty = settled_screenshot(page, urls[1], tmp_path / "empty.png")
        errors = page.errors()
    finally:
        page.close()
    assert errors == [], errors
    h, w = WINDOW[1], WINDOW[0]
    centre = (slice(h // 2 - 150, h // 2 + 150), slice(w // 2 - 200, w // 2 + 200))
    changed = np.max(np.abs(robot[centre] - empty[centre]), axis=2) > 40
    assert changed.mean() > 0.02, f"the robot is not drawn where it stands: {tmp_path / 'viewer.png'}"

    def body_blue(image: np.ndarray) -> int:
        """Pixels of the body's slate blue (geometry.BODY_COLOR, shaded); the grey grid has a few too."""
        r, g, b = (image[centre][..., i] for i in range(3))
        return int(((b > r + 60) & (b > g + 20)).sum())

    assert body_blue(robot) > 1000, (body_blue(robot), body_blue(empty))
    assert body_blue(robot) > 10 * body_blue(empty), (body_blue(robot), body_blue(empty))
