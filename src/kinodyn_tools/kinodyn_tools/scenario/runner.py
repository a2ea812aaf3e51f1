"""Runs a scenario (kinodyn_tools.scenario.steps) against a live closed-loop graph in simulated time.

The runner is one rclpy node in the caller's process. It records the simulator's ground-truth odometry and
contacts, the estimator's odometry and the wbc's diagnostics, and drives the steps on the simulated clock
(the stamp of the newest ground-truth odometry): the wbc's ``locomotion_mode`` through its
``set_parameters`` service, ``cmd_vel`` (geometry_msgs/TwistStamped, stamp 0: taken as received, every
``cmd_period`` s of simulated time) and pushes through the simulator's ``~/push``. The scenario starts at
the estimator's first odometry (the wbc controls from then on). docs/closed-loop.md.

The odometry and contacts (each at the control rate) are taken serialized and read into numpy
(kinodyn_common.raw_messages; bytes that are not a message of the type are one throttled line, the message
dropped), by rclpy's EventsExecutor.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, TwistStamped, Vector3, Wrench
from kinodyn.spatial.rotations import euler_to_matrix, matrix_to_quat
from kinodyn_common.node_runner import make_executor
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.raw_messages import ContactStatesReader, ContactStatesView, OdometryReader, OdometryView
from kinodyn_common.stamps import NS
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.context import Context
from rclpy.node import Node
from rclpy.qos import QoSProfile

from kinodyn_interfaces.msg import ContactStates
from kinodyn_interfaces.srv import Push
from kinodyn_tools.scenario.metrics import BaseSeries, Recording, ScenarioResult, scenario_result

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rclpy.client import Client

    from kinodyn_tools.scenario.steps import Step

QUADRUPED_FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")


@dataclass(frozen=True)
class Topics:
    """Where the graph's parts are (config/quadruped_wbc.yaml's names)."""

    truth: str = "/quadruped_system/odometry"
    contacts: str = "/quadruped_system/contacts"
    push: str = "/quadruped_system/push"
    estimate: str = "/odometry/filtered"
    cmd_vel: str = "/wbc/cmd_vel"
    base_pose: str = "/wbc/base_pose"
    wbc_parameters: str = "/wbc/set_parameters"
    diagnostics: str = "/diagnostics"
    wbc_name: str = "wbc"  # the wbc's DiagnosticStatus name


def _stamp(msg: Any) -> float:  # noqa: ANN401  (any stamped rclpy message: no common base class)
    seconds: float = msg.header.stamp.sec + msg.header.stamp.nanosec / NS
    return seconds


def _append(series: BaseSeries, msg: OdometryView) -> None:
    x, y, z, qx, qy, qz, qw = msg.pose.tolist()
    vx, vy, vz, wx, wy, wz = msg.twist.tolist()
    series.t.append(_stamp(msg))
    series.position.append((x, y, z))
    series.quaternion.append((qx, qy, qz, qw))
    series.linear.append((vx, vy, vz))
    series.angular.append((wx, wy, wz))


class ScenarioRunner:
    """Subscribes at construction (create it before starting the graph: discovery then has time to match)."""

    def __init__(self, feet: Sequence[str] = QUADRUPED_FEET, topics: Topics = Topics(),
                 name: str = "scenario_runner", cmd_period: float = 0.02) -> None:
        self.topics, self.feet, self.cmd_period = topics, set(feet), cmd_period
        self.rec = Recording()
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node(name, context=self.context)
        qos = QoSProfile(depth=1000)
        n = self.node
        problems = DistinctProblemLog(n.get_logger())
        for topic, series in ((topics.truth, self.rec.truth), (topics.estimate, self.rec.estimate)):
            reader = OdometryReader()
            n.create_subscription(Odometry, topic, dropping_bad_messages(
                problems, f"{topic} message", lambda raw, r=reader, s=series: _append(s, r.read(raw))),
                qos, raw=True)
        contacts = ContactStatesReader()
        n.create_subscription(ContactStates, topics.contacts, dropping_bad_messages(
            problems, f"{topics.contacts} message", lambda raw: self._on_contacts(contacts.read(raw))),
            qos, raw=True)
        n.create_subscription(DiagnosticArray, topics.diagnostics, self._on_diagnostics, qos)
        self._cmd_vel = n.create_publisher(TwistStamped, topics.cmd_vel, 10)
        self._base_pose = n.create_publisher(PoseStamped, topics.base_pose, 10)
        self._parameters: Client[SetParameters.Request, SetParameters.Response] = n.create_client(
            SetParameters, topics.wbc_parameters)
        self._push: Client[Push.Request, Push.Response] = n.create_client(Push, topics.push)
        self._pending: list[tuple[str, Any]] = []  # (what, future) of service calls not answered yet
        self.executor = make_executor([n])
        self.executor.add_node(n)

    def _on_contacts(self, msg: ContactStatesView) -> None:
        t = _stamp(msg)
        self.rec.body_contacts.extend((t, name) for name, on in zip(msg.names, msg.in_contact, strict=False)
                                      if on and name not in self.feet)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name.partition(":")[0] == self.topics.wbc_name:  # "<node>: <task>"
                self.rec.diagnostics.append((_stamp(msg), {kv.key: kv.value for kv in status.values}))

    def now(self) -> float:
        """Simulated time: the newest ground-truth stamp (0 before the first)."""
        return self.rec.truth.t[-1] if self.rec.truth.t else 0.0

    def spin_until(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        """Spin until ``done()``; RuntimeError naming ``what`` after ``timeout`` wall seconds without
        simulated time advancing (the graph stalled or died)."""
        last, deadline = self.now(), time.monotonic() + timeout
        while not done():
            self.executor.spin_once(timeout_sec=0.01)
            self._check_answers()
            if self.now() != last:
                last, deadline = self.now(), time.monotonic() + timeout
            elif time.monotonic() > deadline:
                raise RuntimeError(f"{what}: simulated time stuck at {last:.3f} s for {timeout} s of wall "
                                   "time (is the graph running?)")

    def _check_answers(self) -> None:
        for item in [p for p in self._pending if p[1].done()]:
            self._pending.remove(item)
            what, future = item
            answer = future.result()
            ok, reason = ((answer.success, answer.message) if isinstance(answer, Push.Response) else
                          (answer.results[0].successful, answer.results[0].reason))
            if not ok:
                self.rec.refusals.append(f"{what} refused: {reason}")

    def _publish_cmd(self, step: Step) -> None:
        """``cmd_vel`` stamped 0, which the wbc takes as received (on its own clock): the graph's simulated
        time may run ahead of the newest stamp this runner has taken (the in-process graph in lockstep runs as
        fast as it can), and a stamp from the runner's view would then be stale there."""
        msg = TwistStamped()
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z = step.cmd_vel
        self._cmd_vel.publish(msg)

    def _publish_base_pose(self, offsets: tuple[float, ...]) -> None:
        msg = PoseStamped()
        t = round(self.now() * NS)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t, NS)
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = offsets[:3]
        roll, pitch, yaw = offsets[3:]
        q = matrix_to_quat(euler_to_matrix((yaw, pitch, roll), "zyx"))  # kinodyn quaternions: x y z w
        o = msg.pose.orientation
        o.x, o.y, o.z, o.w = (float(c) for c in q)
        self._base_pose.publish(msg)

    def _start(self, step: Step) -> None:
        if step.mode is not None:
            value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=step.mode)
            request = SetParameters.Request(parameters=[Parameter(name="locomotion_mode", value=value)])
            self._pending.append((f"{step.name}: locomotion_mode {step.mode}",
                                  self._parameters.call_async(request)))
        if step.base_pose is not None:
            self._publish_base_pose(step.base_pose)
        if step.push is not None:
            request = Push.Request(link=step.push_link, wrench=Wrench(force=Vector3(
                x=step.push[0], y=step.push[1], z=step.push[2])), duration=step.push_duration)
            self._pending.append((f"{step.name}: push {step.push} N", self._push.call_async(request)))

    def run(self, steps: Sequence[Step], backend: str = "", start_timeout: float = 180.0,
            stall_timeout: float = 30.0, progress: Callable[[str], Any] | None = None) -> ScenarioResult:
        """Run ``steps`` from the estimator's first odometry and the first ground truth on (the steps'
        clock, ``now``); their figures (scenario.metrics)."""
        wall = time.monotonic()
        self.spin_until(lambda: bool(self.rec.estimate.t) and bool(self.rec.truth.t)
                        and self._parameters.service_is_ready() and self._push.service_is_ready(),
                        start_timeout, "waiting for the graph")
        for step in steps:
            start = self.now()
            if progress is not None:
                progress(f"t = {start:7.2f} s: {step.name}")
            self._start(step)
            next_cmd = start
            while self.now() < start + step.duration:
                if self.now() >= next_cmd:
                    self._publish_cmd(step)
                    next_cmd = self.now() + self.cmd_period
                end = min(next_cmd, start + step.duration)

                def reached(end: float = end) -> bool:
                    return self.now() >= end

                self.spin_until(reached, stall_timeout, f"step {step.name!r}")
            self.rec.windows.append((step, start, self.now()))
        self.spin_until(lambda: not self._pending, stall_timeout, "the last service answers")
        last = self.now()  # the diagnostics of the last window
        self.spin_until(lambda: bool(self.rec.diagnostics) and self.rec.diagnostics[-1][0] >= last,
                        stall_timeout, "the wbc's last diagnostics")
        return scenario_result(self.rec, backend, time.monotonic() - wall)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def run_scenario(steps: Sequence[Step], backend: str = "", start: Callable[[], Any] | None = None,
                 feet: Sequence[str] = QUADRUPED_FEET, topics: Topics = Topics(),
                 progress: Callable[[str], Any] | None = None,
                 start_timeout: float = 180.0) -> ScenarioResult:
    """Subscribe, call ``start()`` (e.g. start the graph: ``kinodyn_tools.scenario.graph.start_graph``), run
    ``steps``; the figures. ``backend`` only labels the result."""
    runner = ScenarioRunner(feet, topics)
    try:
        if start is not None:
            start()
        return runner.run(steps, backend, start_timeout=start_timeout, progress=progress)
    finally:
        runner.close()
