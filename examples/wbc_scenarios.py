"""Closed-loop whole-body control without ROS: ``kinodyn.sim`` under the
``WholeBodyController``, scenario by scenario, each returning the figures it is judged on.

Shared by ``quadruped_wbc.py`` (prints the figures) and ``src/kinodyn/test/control/test_wbc_closed_loop.py``
(asserts them). Simulated time only. The controller runs every ``steps_per_tick`` simulator steps and its
torque is held in between (zero-order hold); a failed solve stops the scenario with ``ControlError``.

Gains come from the error dynamics they promise, not from tuning: a task's PD law makes its error a unit-mass
oscillator, ``kp = omega^2`` and ``kd = 2 D omega`` (Robot Dynamics lecture notes (ETH), §3.8 (3.78)-(3.79)),
with critical damping ``D = 1``. The base and the CoM get the notes' own 3 Hz starting point (kp ~ 355, kd ~
38): six times the 0.5 Hz sway, and three times below the robot's bounce on its soft feet (``sqrt(4 k / m)`` =
9.2 Hz for the 36 kg quadruped on four 3e4 N/m springs), which the controller's rigid-contact model does not
know. A swing foot is lighter and faster (5 Hz); the posture only settles the null space (1 Hz).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kinodyn.control.joint_space import gains_from_frequency
from kinodyn.control.trajectories import Figure8, rms
from kinodyn.control.wbc import PointContact, WBCResult, WholeBodyController
from kinodyn.control.wbc.tasks import ComTask, FrameTask, PostureTask
from kinodyn.spatial import homogeneous_transform, so3_log
from kinodyn.spatial.rotations import matrix_to_euler
from wbc_references import min_jerk, sinusoid, zyx_orientation

import kinodyn as kd
from kinodyn import sim

URDFS = Path(__file__).resolve().parents[1] / "urdf"
WHOLE_STEPS_TOLERANCE = 1e-9  # a control period this close to whole simulator steps is whole
QUADRUPED_URDF = URDFS / "quadruped.urdf"
NOMINAL_JOINTS = np.array([0.0, 0.6, -1.2, 0.0, -0.6, 1.2, 0.0, 0.6, -1.2, 0.0, -0.6, 1.2])  # urdf/README.md
FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")
BASE = "base_link"

BASE_HZ, SWING_HZ, POSTURE_HZ = 3.0, 5.0, 1.0
POSTURE_WEIGHT = 1e-4  # residual scaled 1/100 of the base / CoM tasks' (weight 1): it settles the null space
FRICTION_MARGIN = 0.75  # the controller's mu is this fraction of the simulated ground's


def pd_gains(frequency_hz: float) -> tuple[float, float]:
    """Critically damped ``(kp, kd)`` of natural frequency ``frequency_hz`` (module doc)."""
    return gains_from_frequency(2.0 * math.pi * frequency_hz)


class ControlError(RuntimeError):
    """The controller returned no torque (a failed or infeasible solve)."""


class ClosedLoop:
    """``sim`` under ``wbc`` at ``control_hz`` (an integer number of simulator steps per tick)."""

    def __init__(self, simulator: sim.Simulator, wbc: WholeBodyController, control_hz: float) -> None:
        steps = simulator.dt * control_hz
        self.steps_per_tick = round(1.0 / steps)
        if self.steps_per_tick < 1 or abs(self.steps_per_tick * steps - 1.0) > WHOLE_STEPS_TOLERANCE:
            raise ValueError(f"the control period 1/{control_hz} s must be a whole number of simulator steps "
                             f"of {simulator.dt} s")
        self.sim, self.wbc = simulator, wbc

    @property
    def period(self) -> float:
        return self.steps_per_tick * self.sim.dt

    def tick(self) -> WBCResult:
        """One controller update at the simulator's state, then its torque held over the control period."""
        result = self.wbc.update(self.sim.q, self.sim.v, self.sim.t)
        if not result.ok:
            raise ControlError(f"the whole-body controller failed at t = {self.sim.t:.4f} s: {result.status} "
                               f"({result.message})")
        for _ in range(self.steps_per_tick):
            self.sim.step(result.tau)
        return result


def standing_configuration(model: kd.Model, joints: np.ndarray, foot_radius: float) -> np.ndarray:
    """``q`` with the given joints, the base level and as high as puts the lowest foot sphere on z = 0."""
    q = model.neutral()
    q[7:] = joints
    q[2] = foot_radius - min(model.frame_placement(q, foot)[2, 3] for foot in FEET)
    return q


@dataclass
class Quadruped:
    """The quadruped standing in the simulator under the WBC: CoM over the feet (x, y), base height and
    orientation (a ``FrameTask`` masked to ``[z rx ry rz]``), posture; point contacts at the four feet."""

    model: kd.Model
    loop: ClosedLoop
    com: ComTask
    base: FrameTask
    posture: PostureTask
    q0: np.ndarray

    @classmethod
    def build(cls, control_hz: float = 500.0, sim_dt: float = 1e-3, mode: str = "weighted") -> Quadruped:
        model = kd.Model.from_urdf(QUADRUPED_URDF, floating_base=True)
        contact = sim.ContactModel(sim.collision_spheres(QUADRUPED_URDF))
        simulator = sim.Simulator(model, dt=sim_dt, integrator="rk4", contact=contact)
        q0 = standing_configuration(model, NOMINAL_JOINTS, contact.spheres[0].radius)
        simulator.reset(q0)
        mu = FRICTION_MARGIN * contact.friction
        contacts = [PointContact(foot, mu=mu) for foot in FEET]
        wbc = WholeBodyController(model, contacts, mode=mode)
        kp, kd_ = pd_gains(BASE_HZ)
        com = ComTask(kp, kd_, mask=(True, True, False))
        com.set_reference(model.com(q0))
        base = FrameTask(model, BASE, kp, kd_, mask=(False, False, True, True, True, True))
        base.set_reference(model.frame_placement(q0, BASE))
        posture = PostureTask(model, NOMINAL_JOINTS, *pd_gains(POSTURE_HZ), weight=POSTURE_WEIGHT)
        wbc.add_task(com, level=1)
        wbc.add_task(base, level=1)
        wbc.add_task(posture, level=2)  # the level counts in hierarchical mode, the weight in weighted mode
        return cls(model, ClosedLoop(simulator, wbc, control_hz), com, base, posture, q0)

    @property
    def sim(self) -> sim.Simulator:
        return self.loop.sim

    def feet(self) -> np.ndarray:
        """(4, 3) positions of the foot frames, world."""
        return np.array([self.model.frame_placement(self.sim.q, foot)[:3, 3] for foot in FEET])

    def base_pose(self) -> np.ndarray:
        return self.model.frame_placement(self.sim.q, BASE)


def _horizontal_slip(feet: np.ndarray, feet0: np.ndarray) -> np.ndarray:
    """Per foot, the horizontal distance from its start."""
    return np.linalg.norm(feet[:, :2] - feet0[:, :2], axis=1)


# --- standing ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StandFigures:
    duration: float
    max_height_error: float  # m, |z_base - z_base(0)| over the run
    max_com_error: float  # m, horizontal
    max_slip: float  # m
    final_speed: float  # max |v| at the end


def stand(robot: Quadruped, duration: float = 10.0) -> StandFigures:
    """Stand still for ``duration`` s with the references of the start."""
    z0, com0, feet0 = robot.q0[2], robot.com.position[:2], robot.feet()
    height = com = slip = 0.0
    while robot.sim.t < duration - 1e-9:
        robot.loop.tick()
        height = max(height, abs(robot.sim.q[2] - z0))
        com = max(com, float(np.linalg.norm(robot.model.com(robot.sim.q)[:2] - com0)))
        slip = max(slip, float(_horizontal_slip(robot.feet(), feet0).max()))
    return StandFigures(robot.sim.t, height, com, slip, float(np.abs(robot.sim.v).max()))


# --- base sway ---------------------------------------------------------------------------------------

SWAY_AMPLITUDE = np.array([0.15, 0.15, 0.15, 0.03])  # yaw, pitch, roll [rad]; height [m]
SWAY_HZ = 0.5


@dataclass(frozen=True)
class SwayFigures:
    duration: float
    settle: float  # s left out of the RMS (the start, where the reference starts at full velocity)
    rms_angles: np.ndarray  # rad, roll, pitch, yaw
    rms_height: float  # m
    max_angles: np.ndarray  # rad, over the whole run
    max_height: float
    max_slip: float


def sway_reference(t: float, z0: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The base's sway: yaw, pitch, roll and height sinusoids about the start (level, ``z0``), all zero at
    t = 0 so the reference starts where the robot stands (its velocity steps there). Pose (4x4), twist (6,)
    and acceleration (6,) in the world."""
    s = sinusoid(t, SWAY_AMPLITUDE, SWAY_HZ)
    orientation = zyx_orientation(type(s)(s.value[:3], s.rate[:3], s.acceleration[:3]))
    pose = homogeneous_transform(orientation.rotation, [0.0, 0.0, z0 + s.value[3]])
    twist = np.r_[0.0, 0.0, s.rate[3], orientation.angular_velocity]
    acceleration = np.r_[0.0, 0.0, s.acceleration[3], orientation.angular_acceleration]
    return pose, twist, acceleration


def sway(robot: Quadruped, duration: float = 6.0, settle: float = 1.0 / SWAY_HZ) -> SwayFigures:
    """Track the base sway for ``duration`` s; RMS errors after ``settle`` s."""
    z0, feet0 = robot.q0[2], robot.feet()
    angle_errors, height_errors, slip = [], [], 0.0
    while robot.sim.t < duration - 1e-9:
        robot.base.set_reference(*sway_reference(robot.sim.t, z0))
        robot.loop.tick()
        pose, (ref, *_) = robot.base_pose(), sway_reference(robot.sim.t, z0)
        angle_errors.append(_roll_pitch_yaw(pose[:3, :3]) - _roll_pitch_yaw(ref[:3, :3]))
        height_errors.append(pose[2, 3] - ref[2, 3])
        slip = max(slip, float(_horizontal_slip(robot.feet(), feet0).max()))
    angles, heights = np.array(angle_errors), np.array(height_errors)
    late = np.arange(len(heights)) * robot.loop.period >= settle - 1e-9
    return SwayFigures(robot.sim.t, settle, _rms(angles[late]), float(_rms(heights[late])),
                       np.abs(angles).max(axis=0), float(np.abs(heights).max()), slip)


def _roll_pitch_yaw(C: np.ndarray) -> np.ndarray:
    yaw, pitch, roll = matrix_to_euler(C, "zyx")
    return np.array([roll, pitch, yaw])


def _rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(np.square(x), axis=0))


# --- three legs ---------------------------------------------------------------------------------------

LIFTED = "LF_FOOT"
JUMP_FLOOR = 0.05  # of the joint's effort limit: the torque below which a relative change means nothing


@dataclass(frozen=True)
class ThreeLegFigures:
    support_margin: float  # m, CoM (horizontal) inside the support triangle when the foot lets go
    switch_times: tuple[float, float]  # s, ramp start and contact release
    torque_jumps: tuple[float, float]  # relative torque jump at those two ticks (``torque_jump``)
    max_tick_jump: float  # the largest relative jump between any two ticks of the run
    force_fall_time: float  # s, the commanded normal force of the foot from 90 % to 10 % of its switch value
    lift: float  # m, height the foot reached above its standing position
    max_height_error: float  # m, base height
    max_slip: float  # m, stance feet


def torque_jump(before: np.ndarray, after: np.ndarray, effort: np.ndarray) -> float:
    """``max_i |tau_i(t+) - tau_i(t-)| / max(|tau_i(t-)|, JUMP_FLOOR effort_i)`` over the joints."""
    return float(np.max(np.abs(after - before) / np.maximum(np.abs(before), JUMP_FLOOR * effort)))


def three_legs(robot: Quadruped, shift: float = 1.5, ramp: float = 0.25, lift: float = 0.05,
               lift_time: float = 1.0, hold: float = 1.0) -> ThreeLegFigures:
    """Shift the CoM to the centroid of the other three feet (min-jerk, ``shift`` s); then ramp ``LIFTED``'s
    force to zero over ``ramp`` s, a frame task following the foot meanwhile (it asks nothing while the
    contact holds the foot); once the controller has released the contact, lift the foot by ``lift`` m from
    where it is (min-jerk, ``lift_time`` s) and hold for ``hold`` s."""
    model, wbc, sim_ = robot.model, robot.loop.wbc, robot.sim
    feet0, z0 = robot.feet(), robot.q0[2]
    lifted = FEET.index(LIFTED)
    stance = [k for k in range(len(FEET)) if k != lifted]
    com0 = robot.com.position.copy()
    com_goal = np.r_[feet0[stance, :2].mean(axis=0), com0[2]]
    swing = FrameTask(model, LIFTED, *pd_gains(SWING_HZ), mask=(True,) * 3 + (False,) * 3, name="swing")
    switch = released = lift_start = None
    margin = math.nan
    taus, normal_forces, height, slip = [], [], 0.0, 0.0
    while released is None or sim_.t < released + lift_time + hold - 1e-9:
        t = sim_.t
        c = min_jerk(t, com0, com_goal, shift)
        robot.com.set_reference(c.value, c.rate, c.acceleration)
        if switch is None and t >= shift - 1e-9:
            switch = len(taus)
            wbc.add_task(swing, level=1)
            wbc.set_contact_active(LIFTED, False, ramp=ramp)
        if lift_start is not None:
            f = min_jerk(t - released, lift_start, lift_start + np.array([0.0, 0.0, lift]), lift_time)
            swing.set_reference(homogeneous_transform(np.eye(3), f.value), np.r_[f.rate, np.zeros(3)],
                                np.r_[f.acceleration, np.zeros(3)])
        elif switch is not None:
            swing.set_reference(model.frame_placement(sim_.q, LIFTED))
        result = robot.loop.tick()
        if switch is not None and released is None:
            if LIFTED in result.forces:
                normal_forces.append(result.forces[LIFTED][2])
            else:
                released, release_tick = sim_.t, len(taus)
                lift_start = model.frame_placement(sim_.q, LIFTED)[:3, 3]
                margin = _support_margin(model.com(sim_.q)[:2], feet0[stance, :2])
        taus.append(result.tau)
        height = max(height, abs(sim_.q[2] - z0))
        slip = max(slip, float(_horizontal_slip(robot.feet()[stance], feet0[stance]).max()))
    effort = model.effort_limit[6:]
    jumps = [torque_jump(before, after, effort) for before, after in itertools.pairwise(taus)]
    fn = np.array(normal_forces)
    fall = (np.argmax(fn < 0.1 * fn[0]) - np.argmax(fn < 0.9 * fn[0])) * robot.loop.period
    return ThreeLegFigures(margin, (switch * robot.loop.period, release_tick * robot.loop.period),
                           (jumps[switch - 1], jumps[release_tick - 1]), max(jumps), float(fall),
                           float(robot.feet()[lifted, 2] - feet0[lifted, 2]), height, slip)


def _support_margin(point: np.ndarray, corners: np.ndarray) -> float:
    """Signed distance of ``point`` to the nearest edge of the convex polygon ``corners``, positive inside."""
    centre = corners.mean(axis=0)
    order = np.argsort(np.arctan2(*(corners - centre).T[::-1]))
    ring = corners[order]
    distances = []
    for a, b in zip(ring, np.roll(ring, -1, axis=0), strict=True):
        edge = b - a
        distances.append((edge[0] * (point - a)[1] - edge[1] * (point - a)[0]) / np.linalg.norm(edge))
    return float(min(distances))


# --- lateral push ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PushFigures:
    force: float  # N, lateral (+y), on base_link
    duration: float  # s
    max_slip: float  # m
    max_base_offset: float  # m, horizontal displacement of the base
    final_com_error: float  # m, horizontal, at the end


def push(robot: Quadruped, force: float = 60.0, duration: float = 0.2, start: float = 0.5,
         total: float = 3.0) -> PushFigures:
    """Stand, take a lateral push of ``force`` N on the base for ``duration`` s at ``start``, recover."""
    feet0, base0, com0 = robot.feet(), robot.q0[:2], robot.com.position[:2]
    slip = offset = 0.0
    pushed = False
    while robot.sim.t < total - 1e-9:
        if not pushed and robot.sim.t >= start - 1e-9:
            robot.sim.apply_wrench(BASE, [0.0, force, 0.0, 0.0, 0.0, 0.0], duration)
            pushed = True
        robot.loop.tick()
        slip = max(slip, float(_horizontal_slip(robot.feet(), feet0).max()))
        offset = max(offset, float(np.linalg.norm(robot.sim.q[:2] - base0)))
    com_error = float(np.linalg.norm(robot.model.com(robot.sim.q)[:2] - com0))
    return PushFigures(force, duration, slip, offset, com_error)


# --- arm7 figure-8 ---------------------------------------------------------------------------------------

ARM7_URDF = URDFS / "arm7.urdf"
ARM7_READY = np.array([0.0, -0.25, 0.0, -0.75, 0.0, 0.5, 0.25]) * math.pi  # urdf/README.md nominal
EE = "ee_link"
EE_HZ = 5.0  # an arm's end effector: ten times the figure-8, five times its second harmonic


@dataclass(frozen=True)
class Figure8Figures:
    duration: float
    settle: float  # s left out of the RMS (the reference starts at full speed)
    rms_position: float  # m, |p - p_ref|
    max_position: float  # m, over the whole run
    rms_orientation: float  # rad, |log(C_ref C^T)|


def arm7_figure8(control_hz: float = 500.0, sim_dt: float = 1e-3, mode: str = "weighted",
                 duration: float = 6.0, settle: float = 2.0) -> Figure8Figures:
    """arm7 (fixed base, no contacts) draws ``Figure8`` (0.1 m, 0.5 Hz, in the vertical y-z plane, as
    ``arm_figure8_osc.py`` does) about its ready-pose end effector with a 6-D ``FrameTask`` (orientation
    held) over a ``PostureTask``. The controller does not model the URDF's joint friction and damping."""
    model = kd.Model.from_urdf(ARM7_URDF)
    simulator = sim.Simulator(model, dt=sim_dt, integrator="rk4")
    simulator.reset(ARM7_READY)
    wbc = WholeBodyController(model, mode=mode)
    ee = FrameTask(model, EE, *pd_gains(EE_HZ))
    wbc.add_task(ee, level=1)
    wbc.add_task(PostureTask(model, ARM7_READY, *pd_gains(POSTURE_HZ), weight=POSTURE_WEIGHT), level=2)
    loop = ClosedLoop(simulator, wbc, control_hz)
    start = model.frame_placement(ARM7_READY, EE)
    figure = Figure8(center=start[:3, 3], u=(0.0, 1.0, 0.0), w=(0.0, 0.0, 1.0))
    position_errors, orientation_errors = [], []
    while simulator.t < duration - 1e-9:
        r = figure.sample(simulator.t)
        ee.set_reference(homogeneous_transform(start[:3, :3], r.position), np.r_[r.velocity, np.zeros(3)],
                         np.r_[r.acceleration, np.zeros(3)])
        loop.tick()
        T = model.frame_placement(simulator.q, EE)
        position_errors.append(T[:3, 3] - figure.sample(simulator.t).position)
        orientation_errors.append(so3_log(start[:3, :3] @ T[:3, :3].T))
    late = np.arange(len(position_errors)) * loop.period >= settle - 1e-9
    position, orientation = np.array(position_errors), np.array(orientation_errors)
    worst = float(np.linalg.norm(position, axis=1).max())
    return Figure8Figures(simulator.t, settle, rms(position[late]), worst, rms(orientation[late]))
