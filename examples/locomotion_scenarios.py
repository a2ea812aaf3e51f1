"""Closed-loop locomotion without ROS: a physics backend of ``kinodyn.sim``
(``"kinodyn"``: kinodyn's simulator, or ``"mujoco"``: MuJoCo's dynamics and contact solver on the same URDF,
through the ``PhysicsBackend`` protocol) under the ``LocomotionController``.

Shared by ``quadruped_trot.py`` (prints the figures) and ``src/kinodyn/test/control/locomotion/
test_closed_loop.py`` / ``test_closed_loop_mujoco.py`` (assert them). The controller reads the backend's true
state, runs every ``steps_per_tick`` simulator steps, and its torque is held in between (zero-order hold); a
failed solve stops the scenario with ``ControlError``. Simulated time only. Nothing here is tuned to one
robot or one engine: the controller gets the feet, the nominal posture and ``LocomotionParameters`` (gains as
error-dynamics frequencies, lengths as fractions of the leg length); the same code drives the quadruped and
the hexapod on either backend. Each robot stands on a ground scaled to its size (``sim.ContactModel``'s
``length``: its leg length), on both backends alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from kinodyn.control.locomotion import (
    LocomotionController,
    LocomotionOutput,
    LocomotionParameters,
    leg_length,
)
from kinodyn.spatial import quat_to_matrix
from wbc_scenarios import (
    FEET,
    FRICTION_MARGIN,
    NOMINAL_JOINTS,
    QUADRUPED_URDF,
    WHOLE_STEPS_TOLERANCE,
    ControlError,
)

import kinodyn as kd
from kinodyn import sim

HEXAPOD_URDF = Path(__file__).resolve().parents[1] / "src/kinodyn/test/estimation/hexapod.urdf"
HEXAPOD_FEET = tuple(f"{leg}_foot" for leg in ("LF", "LM", "LH", "RF", "RM", "RH"))
HEXAPOD_FOOT_RADIUS = 0.02  # m: the test URDF's feet are bare frames; the simulator gets a sphere at each
# yaw, hip, knee per leg (left legs first): femur 0.4 rad above horizontal, tibia vertical (the right legs'
# joints turn the other way about the same x axis)
HEXAPOD_NOMINAL = np.concatenate([np.tile([0.0, 0.4, -0.4], 3), np.tile([0.0, -0.4, 0.4], 3)])

Command = Callable[[float], np.ndarray]


@dataclass
class Legged:
    """A legged robot standing in the simulator under the ``LocomotionController``."""

    model: kd.Model
    sim: sim.PhysicsBackend
    controller: LocomotionController
    feet: tuple[str, ...]
    q0: np.ndarray
    steps_per_tick: int
    nominal_height: float  # m, base above the ground in the nominal stance

    @classmethod
    def build(cls, urdf: Path, feet: tuple[str, ...], joints: np.ndarray,
              spheres: tuple[sim.ContactSphere, ...], params: LocomotionParameters | None = None,
              control_hz: float = 500.0, sim_dt: float = 1e-3, backend: str = "kinodyn",
              balance_inertia: bool = False, scaled_ground: bool = True) -> Legged:
        """``backend``: ``"kinodyn"`` or ``"mujoco"`` (``sim.create_backend``), the same contact spheres;
        ``balance_inertia``: the simulated robot's non-physical inertias repaired (``create_backend``), the
        controller's model as the URDF gives it; ``scaled_ground``: the contact's defaults scaled to the
        robot's leg length (``sim.ContactModel.length``; False: the quadruped's ground, per kg only)."""
        model = kd.Model.from_urdf(urdf, floating_base=True)
        bare = feet_without_spheres(feet, spheres)
        if bare:
            raise ValueError(f"feet {', '.join(bare)} have no contact sphere: give each a "
                             f"sim.ContactSphere (a URDF's collision meshes are not contact geometry)")
        q0 = model.neutral()
        q0[7:] = joints
        q0[2] = -min(_sphere_bottom(model, q0, s) for s in spheres if s.link in feet)  # feet on the ground
        contact = sim.ContactModel(spheres, length=leg_length(model, q0, feet) if scaled_ground else None)
        simulator = sim.create_backend(backend, urdf, model, dt=sim_dt, integrator="rk4", contact=contact,
                                       balance_inertia=balance_inertia)
        simulator.reset(q0)
        steps = round(1.0 / (sim_dt * control_hz))
        if steps < 1 or abs(steps * sim_dt * control_hz - 1.0) > WHOLE_STEPS_TOLERANCE:
            raise ValueError(f"the control period 1/{control_hz} s must be whole simulator steps of "
                             f"{sim_dt} s")
        params = params or LocomotionParameters(friction=FRICTION_MARGIN * contact.friction,
                                                pd_horizon=steps * sim_dt)
        controller = LocomotionController(model, feet, joints, params)
        return cls(model, simulator, controller, feet, q0, steps, float(q0[2]))

    @classmethod
    def quadruped(cls, params: LocomotionParameters | None = None, **kw: Any) -> Legged:  # noqa: ANN401  (build's keywords)
        spheres = sim.collision_spheres(QUADRUPED_URDF)
        return cls.build(QUADRUPED_URDF, FEET, NOMINAL_JOINTS, spheres, params, **kw)

    @classmethod
    def hexapod(cls, params: LocomotionParameters | None = None, **kw: Any) -> Legged:  # noqa: ANN401  (build's keywords)
        """The test hexapod, tripod gait, with the quadruped's settings (its legs are under half as long:
        the step height and the foothold reach scale with them)."""
        spheres = tuple(sim.ContactSphere(f, (0.0, 0.0, 0.0), HEXAPOD_FOOT_RADIUS) for f in HEXAPOD_FEET)
        return cls.build(HEXAPOD_URDF, HEXAPOD_FEET, HEXAPOD_NOMINAL, spheres, params, **kw)


def feet_without_spheres(feet: tuple[str, ...], spheres: tuple[sim.ContactSphere, ...]) -> list[str]:
    """The feet no contact sphere is on (a URDF's collision meshes are not contact geometry)."""
    return [foot for foot in feet if all(sphere.link != foot for sphere in spheres)]


def _sphere_bottom(model: kd.Model, q: np.ndarray, sphere: sim.ContactSphere) -> float:
    """Height of the lowest point of ``sphere`` at ``q`` (its centre, in its link's frame, may be off the
    frame's origin)."""
    X = model.frame_placement(q, sphere.link)
    return float(X[2, :3] @ np.asarray(sphere.center) + X[2, 3]) - sphere.radius


@dataclass
class Trace:
    """Per tick (after its held torque): time, heading-frame base velocity (vx, vy), world yaw rate, base
    position and yaw, base height and tilt, the lowest non-foot frame origin's height, the mode and the
    solve time."""

    t: list[float] = field(default_factory=list)
    velocity: list[np.ndarray] = field(default_factory=list)  # vx, vy (heading frame), wz (world)
    position: list[np.ndarray] = field(default_factory=list)  # x, y, yaw
    height: list[float] = field(default_factory=list)
    tilt: list[float] = field(default_factory=list)  # rad, the base z axis from vertical
    lowest_body: list[float] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    solve_time: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the answers' messages other than "solved" (a fallback)
    relaxed: list[str] = field(default_factory=list)  # the relaxed answers' messages (hard level infeasible)

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.array(v) for k, v in self.__dict__.items()}


def _body_frames(robot: Legged) -> list[int]:
    """Frames that must never reach the ground: every frame except the feet (and the root 'universe')."""
    feet = set(robot.feet)
    return [k for k, name in enumerate(robot.model.frame_names) if name not in feet]


def run(robot: Legged, until: float, command: Command | None = None, trace: Trace | None = None,
        mode: str | None = None) -> Trace:
    """Step the closed loop until simulated time ``until`` with ``command(t)`` (heading-frame twist)."""
    trace = trace if trace is not None else Trace()
    if mode is not None:
        robot.controller.request_mode(mode)
    s, model, body = robot.sim, robot.model, _body_frames(robot)
    zero = np.zeros(3)
    while s.t < until - 1e-9:
        out: LocomotionOutput = robot.controller.update(s.q, s.v, s.t, command(s.t) if command else zero)
        if not out.ok or out.tau is None:
            raise ControlError(f"the locomotion controller failed at t = {s.t:.4f} s in mode {out.mode}: "
                               f"{out.status} ({out.message})")
        for _ in range(robot.steps_per_tick):
            s.step(out.tau)
        C = quat_to_matrix(s.q[3:7])
        yaw = math.atan2(C[1, 0], C[0, 0])
        v_world, w_world = C @ s.v[:3], C @ s.v[3:6]
        c, sn = math.cos(yaw), math.sin(yaw)
        trace.t.append(s.t)
        trace.velocity.append(np.array([c * v_world[0] + sn * v_world[1], -sn * v_world[0] + c * v_world[1],
                                        w_world[2]]))
        trace.position.append(np.array([s.q[0], s.q[1], yaw]))
        trace.height.append(float(s.q[2]))
        trace.tilt.append(math.acos(min(1.0, C[2, 2])))
        trace.lowest_body.append(min(float(model.frame_placement(s.q, k)[2, 3]) for k in body))
        trace.modes.append(out.mode)
        trace.solve_time.append(out.solve_time)
        if out.status == "relaxed":
            trace.relaxed.append(f"t = {s.t:.3f} s: {out.message}")
        elif out.message != "solved":
            trace.notes.append(f"t = {s.t:.3f} s: {out.message}")
    return trace


# --- scenarios -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StandUpFigures:
    sit_height: float  # m, base height reached sitting
    final_height_error: float  # m, |z - nominal| at the end
    max_overshoot: float  # m, above the nominal height during the stand-up
    max_tilt: float  # rad, base roll/pitch over the run
    max_slip: float  # m, horizontal foot displacement over the run


def stand_up(robot: Legged, settle: float = 0.5) -> StandUpFigures:
    """Sit down from the nominal stance, then stand up: ``transition_time`` each, ``settle`` s after each."""
    p = robot.controller.params
    feet0 = _feet(robot)
    trace = run(robot, p.transition_time + settle, mode="sit")
    sit_height = trace.height[-1]
    start = len(trace.t)
    run(robot, robot.sim.t + p.transition_time + settle, trace=trace, mode="stand")
    heights = np.array(trace.height[start:])
    return StandUpFigures(sit_height, abs(heights[-1] - robot.nominal_height),
                          max(0.0, float(heights.max() - robot.nominal_height)), max(trace.tilt),
                          float(np.linalg.norm(_feet(robot)[:, :2] - feet0[:, :2], axis=1).max()))


@dataclass(frozen=True)
class TrotFigures:
    command: np.ndarray  # vx, vy, wz
    settle: float  # s after the trot started left out of the RMSE
    rmse_linear: float  # m/s, sqrt(mean |v_xy - v_cmd|^2), heading frame
    rmse_yaw_rate: float  # rad/s
    mean_velocity: np.ndarray  # vx, vy, wz over the measured window
    drift: float  # m, horizontal base displacement over the measured window (in-place trot)
    yaw_drift: float  # rad
    min_height_ratio: float  # min base height / nominal
    lowest_body: float  # m, the lowest non-foot frame origin
    solve_time_median: float  # s
    solve_time_p99: float


def trot(robot: Legged, command: np.ndarray, duration: float = 3.0, settle: float = 1.0) -> TrotFigures:
    """Trot for ``duration`` s with a constant ``command`` (reached through the controller's acceleration
    limits); the figures over the time after ``settle`` s."""
    trace = run(robot, robot.sim.t + duration, lambda _t: command, mode="trot")
    return _trot_figures(robot, trace, np.asarray(command, dtype=float), settle)


def _trot_figures(robot: Legged, trace: Trace, command: np.ndarray, settle: float) -> TrotFigures:
    a = trace.arrays()
    late = a["t"] >= a["t"][0] + settle - 1e-9
    error = a["velocity"][late] - command
    position = a["position"][late]
    solve = a["solve_time"]
    return TrotFigures(command, settle, float(np.sqrt(np.mean(np.sum(error[:, :2] ** 2, axis=1)))),
                       float(np.sqrt(np.mean(error[:, 2] ** 2))), a["velocity"][late].mean(axis=0),
                       float(np.linalg.norm(position[-1, :2] - position[0, :2])),
                       float(abs(position[-1, 2] - position[0, 2])),
                       float(a["height"].min() / robot.nominal_height), float(a["lowest_body"].min()),
                       float(np.median(solve)), float(np.percentile(solve, 99)))


@dataclass(frozen=True)
class PushFigures:
    force: float  # N, lateral (+y, world), on the base
    duration: float  # s
    mode: str  # "trot" or "stand": what the robot did while pushed
    min_height_ratio: float  # min base height / nominal after the push
    lowest_body: float  # m, the lowest non-foot frame origin after the push
    max_offset: float  # m, largest horizontal base displacement from where the push started
    final_speed: float  # m/s, horizontal base speed at the end
    notes: tuple[str, ...]  # from the push on: the QP answers' messages other than "solved" (a fallback's)
    relaxed: tuple[str, ...] = ()  # from the push on: the relaxed answers' messages


def push(robot: Legged, force: float = 120.0, duration: float = 0.2, before: float = 1.0, after: float = 2.0,
         mode: str = "trot") -> PushFigures:
    """Trot in place (``mode="trot"``) or stand for ``before`` s, push the base laterally with ``force`` N for
    ``duration`` s, go on for ``after`` s."""
    run(robot, robot.sim.t + before, mode=mode)
    base = robot.model.body_names[1]
    robot.sim.apply_wrench(base, [0.0, force, 0.0, 0.0, 0.0, 0.0], duration)
    start = robot.sim.q[:2].copy()
    trace = run(robot, robot.sim.t + duration + after)
    a = trace.arrays()
    return PushFigures(force, duration, mode, float(a["height"].min() / robot.nominal_height),
                       float(a["lowest_body"].min()),
                       float(np.linalg.norm(a["position"][:, :2] - start, axis=1).max()),
                       float(np.linalg.norm(a["velocity"][-1, :2])), tuple(trace.notes), tuple(trace.relaxed))


@dataclass(frozen=True)
class RandomRunFigures:
    seconds: float  # simulated, trotting (after ``settle`` s of standing)
    commands: np.ndarray  # (k, 4): start time, vx, vy, wz of each command
    fell_at: float | None  # s: base below 60 % of its nominal height, a body point on the ground, or a failed
    # solve; None when it never happened
    reason: str  # why it fell ("" when it did not)
    failure: str  # the failed solve's message ("" when every tick was solved)
    fallbacks: int  # ticks answered by the fallback solver
    rmse_linear: float  # m/s, heading-frame velocity against the command, each one's first second left out
    rmse_yaw_rate: float  # rad/s
    min_height_ratio: float  # min base height / nominal
    lowest_body: float  # m
    relaxed: int = 0  # ticks answered relaxed (the hard level infeasible)


def random_commands(seconds: float, limits: tuple[float, float, float], seed: int = 0) -> np.ndarray:
    """A seeded sequence of commands ``(start time, vx, vy, wz)``, each held 2-4 s (uniform), every component
    uniform within ``+-limits``."""
    rng = np.random.default_rng(seed)
    rows, t = [], 0.0
    while t < seconds:
        rows.append([t, *(rng.uniform(-1.0, 1.0, 3) * np.asarray(limits))])
        t += rng.uniform(2.0, 4.0)
    return np.array(rows)


def random_run(robot: Legged, seconds: float = 60.0, seed: int = 0, limits: tuple[float, float, float] | None
               = None, settle: float = 1.0) -> RandomRunFigures:
    """Stand ``settle`` s, then trot ``seconds`` s on ``random_commands`` within ``limits`` (default: the
    controller's ``max_forward_velocity``, ``max_lateral_velocity``, ``max_yaw_rate``); stops at a fall."""
    p = robot.controller.params
    limits = limits or (p.max_forward_velocity, p.max_lateral_velocity, p.max_yaw_rate)
    commands = random_commands(seconds, limits, seed)
    run(robot, settle, mode="stand")
    t0 = robot.sim.t

    def command(t: float) -> np.ndarray:
        return commands[np.searchsorted(commands[:, 0], t - t0, side="right") - 1, 1:]

    trace, fell_at, reason, failure = Trace(), None, "", ""
    try:
        while robot.sim.t < t0 + seconds - 1e-9 and fell_at is None:
            run(robot, min(robot.sim.t + 0.5, t0 + seconds), command, trace, mode="trot")
            a = trace.arrays()
            low = np.flatnonzero((a["height"] < 0.6 * robot.nominal_height) | (a["lowest_body"] <= 0.0))
            if low.size:
                fell_at, reason = float(a["t"][low[0]]), "base below 60 % or a body point on the ground"
    except ControlError as exc:
        fell_at, reason = robot.sim.t, str(exc)
        failure = reason
    a = trace.arrays()
    wanted = np.array([command(t) for t in a["t"]])
    started = commands[np.searchsorted(commands[:, 0], a["t"] - t0, side="right") - 1, 0] + t0
    steady = a["t"] >= started + 1.0
    error = a["velocity"][steady] - wanted[steady]
    return RandomRunFigures(seconds, commands, fell_at, reason, failure, len(trace.notes),
                            float(np.sqrt(np.mean(np.sum(error[:, :2] ** 2, axis=1)))),
                            float(np.sqrt(np.mean(error[:, 2] ** 2))),
                            float(a["height"].min() / robot.nominal_height), float(a["lowest_body"].min()),
                            len(trace.relaxed))


def _feet(robot: Legged) -> np.ndarray:
    return np.array([robot.model.frame_placement(robot.sim.q, f)[:3, 3] for f in robot.feet])

