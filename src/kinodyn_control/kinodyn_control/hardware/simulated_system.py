"""``kinodyn_control/SimulatedSystem``: the robot simulated by ``kinodyn.sim``, stepped in the control loop.

The physics is a ``kinodyn.sim.PhysicsBackend``: kinodyn's own simulator or MuJoCo (param ``backend``); this
component holds no backend-specific code.

As gazebo_ros2_control and mujoco_ros2_control do, the physics runs in the controller manager's process and
is built from the robot description the controller manager was given (``HardwareInfo.urdf``): the
URDF's kinematics, inertias, limits, damping/friction and collision spheres. ``write`` applies the joints'
``effort`` commands and advances the simulation, ``read`` copies the joint states (``position``,
``velocity``, ``effort`` = the torque applied after saturation) and the IMU state interfaces of every
``<sensor>`` with the 10 IMU interfaces (on the link named by the sensor's ``frame_id`` param) into the state
interfaces. Replacing ``kinodyn_control/GenericSystem`` by ``kinodyn_control/SimulatedSystem`` in a
``<plugin>`` is all it takes.

Fixed or floating base follows the Gazebo/URDF convention: the robot is fixed to the world when the URDF's
root link is named ``world`` (a ``world`` link with a joint to the robot's base); otherwise its root link
floats on a free-flyer joint. A ``world`` link that is not the root is an error.

Hardware ``<param>`` (all optional):

- ``floating_base`` (true/false): overrides the convention above;
- ``backend`` (a registered physics backend, ``kinodyn.sim.backend_names()``: ``kinodyn``, ``mujoco``;
  default ``kinodyn``): the physics engine (``kinodyn.sim.create_backend``; docs/simulator.md). The params
  must be within its declared capabilities (``kinodyn.sim.backend_capabilities``): ``integrator`` one of its
  integrators, ``contact`` one of its contact kinds or ``none``, and the ``contact_tangential_*`` params
  (kinodyn's stiction spring) only on a backend with tangential contact; so with ``mujoco`` (MuJoCo's contact
  solver) ``contact`` is ``soft`` or ``none`` and the ``contact_tangential_*`` params are refused;
- ``balance_inertia`` (true/false; default false): repair the URDF's non-physical link inertias (triangle
  inequality, near-zero masses) as MuJoCo's ``balanceinertia`` does, one warning per repaired link, on either
  backend; without it the mujoco backend refuses them, naming each link (``kinodyn.sim.create_backend``);
- ``dt`` (0.001 s), ``integrator`` (``rk4`` | ``semi_implicit_euler``; default ``rk4``);
- ``max_steps_per_cycle`` (10): under ``control_node`` every ``write`` advances one control period
  ``round((1 / update_rate) / dt)`` steps (``prepare_control_period``): the controllers keep their rate in
  simulated time and a late loop makes the simulation fall behind real time, as Gazebo does. Called without
  that (a program driving the component itself), ``write`` advances ``round(period / dt)`` steps of the
  measured period, at least one and at most this many.
  With the controller manager in lockstep (control_node parameter ``lockstep``, docs/simulator.md) every
  ``write`` advances exactly ``1 / update_rate`` of simulated time instead, in ``(1 / update_rate) / dt``
  steps, which must be a whole number (``prepare_lockstep``);
- ``contact`` (``soft`` | ``hard`` | ``none``; default ``soft``), ``contact_friction`` and the spring and
  damper constants ``contact_stiffness``, ``contact_damping``, ``contact_tangential_stiffness``,
  ``contact_tangential_damping`` (absolute), each or its ``_per_kg`` sibling (times the robot's total mass,
  the default; ``kinodyn.sim.ContactModel``); contact points are the URDF's collision spheres against the
  plane z = 0;
- ``contact_spheres`` ("link:radius ...", e.g. "FL_FOOT:0.02 FR_FOOT:0.02"): more contact spheres, each
  centred at a link's (or frame's) origin, for a URDF whose feet collide as meshes (which are not contact
  geometry here). A floating robot with contact on and no contact sphere at all (it would fall through the
  ground) is refused, naming this param;
- ``initial_base_position`` ("x y z"; default: x = y = 0 and the lowest contact sphere touching the ground);
- ``accelerometer_noise_density``, ``accelerometer_random_walk``, ``gyroscope_noise_density``,
  ``gyroscope_random_walk`` (0: noiseless; ``kinodyn.sim.ImuNoise``), ``imu_seed`` (0);
- ``ros_interface`` (true): publish ``/clock``, ``~/odometry``, ``~/contacts`` and serve ``~/reset`` and
  ``~/push`` through a node named after the component (``sim_ros.SimulatorRosInterface``);
- ``max_push_force`` (20 robot weights, 20 m 9.81 N), ``max_push_torque`` (the same number in N m: a 1 m
  lever), ``max_push_duration`` (10 s): larger pushes are refused (``request_push``).

Any failure of the physics in a ``write`` (an exception from the step, a non-finite state) returns ERROR with
``last_error`` saying what failed, so the controller manager puts the component through ``on_error``.

Initial joint positions are the ``initial_value`` of each joint's ``position`` state interface (0 if unset).
``reset`` and ``push`` requests (from any thread) are applied at the next ``write``.
"""

from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
from kinodyn_common.conversions import InputError

import kinodyn as kd
from kinodyn import sim
from kinodyn_control.hardware.component import System
from kinodyn_control.hardware.types import (
    EFFORT,
    IMU_INTERFACES,
    POSITION,
    VELOCITY,
    CallbackReturn,
    ReturnType,
)

if TYPE_CHECKING:
    from kinodyn.urdf import ParsedURDF

    from kinodyn_control.hardware.description import HardwareInfo

CONTACT_PARAMS = {f"contact_{field}": field for field in (
    "stiffness", "damping", "friction", "tangential_stiffness", "tangential_damping", "stiffness_per_kg",
    "damping_per_kg", "tangential_stiffness_per_kg", "tangential_damping_per_kg", "length")}
NOISE_PARAMS = ("accelerometer_noise_density", "accelerometer_random_walk", "gyroscope_noise_density",
                "gyroscope_random_walk")
PUSH_PARAMS = ("max_push_force", "max_push_torque", "max_push_duration")
PUSH_WEIGHTS = 20.0  # default max_push_force: 20 robot weights (m * 9.81 N); max_push_torque: that times 1 m
MAX_PUSH_DURATION = 10.0  # s, default
TANGENTIAL_PARAMS = tuple(key for key in CONTACT_PARAMS if key.startswith("contact_tangential_"))
KNOWN_PARAMS = ("backend", "floating_base", "dt", "integrator", "max_steps_per_cycle", "contact",
                "contact_spheres", "balance_inertia", "initial_base_position", "imu_seed", "ros_interface",
                *CONTACT_PARAMS, *NOISE_PARAMS, *PUSH_PARAMS)
WORLD_LINK = "world"


def _bool(params: dict[str, str], key: str, default: bool) -> bool:
    text = params.get(key, str(default)).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"param {key} must be true or false, got {params[key]!r}")
    return text == "true"


def fixed_to_world(urdf: ParsedURDF) -> bool:
    """True when the URDF's root link is ``world`` (Gazebo's convention for a robot fixed to the world)."""
    if urdf.root_link != WORLD_LINK and any(link.name == WORLD_LINK for link in urdf.links):
        raise ValueError(f"the URDF has a link named '{WORLD_LINK}' that is not its root "
                         f"({urdf.root_link!r}); "
                         f"'{WORLD_LINK}' is reserved for the fixed world a robot is attached to")
    return urdf.root_link == WORLD_LINK


def extra_spheres(text: str) -> tuple[sim.ContactSphere, ...]:
    """The spheres of param ``contact_spheres``: whitespace-separated ``link:radius``, each centred at the
    link's origin; ``ValueError`` naming a malformed entry or a radius that is not finite and > 0."""
    spheres = []
    for entry in text.split():
        link, colon, radius = entry.rpartition(":")
        try:
            value = float(radius) if colon and link else math.nan
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"param contact_spheres: {entry!r} is not link:radius with a finite radius > 0 "
                             f"(m), e.g. 'FL_FOOT:0.02 FR_FOOT:0.02'")
        spheres.append(sim.ContactSphere(link, (0.0, 0.0, 0.0), value))
    return tuple(spheres)


def _float(params: dict[str, str], key: str, default: float) -> float:
    try:
        return float(params.get(key, default))
    except ValueError:
        raise ValueError(f"param {key} must be a number, got {params[key]!r}") from None


def _positive(params: dict[str, str], key: str) -> float:
    value = _float(params, key, math.nan)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"param {key} must be a finite number > 0, got {params[key]!r}")
    return value


class SimulatedSystem(System):
    def __init__(self) -> None:
        super().__init__()
        self.simulator: sim.PhysicsBackend | None = None
        self.imus: list[tuple[str, sim.ImuSensor]] = []
        self.lock = threading.Lock()
        self._requests: list[tuple[str, Any]] = []
        self._ros: Any = None
        self.on_step: list[Any] = []  # callbacks f(simulator) after every write, in the control thread

    # --- on_init: parameters --------------------------------------------------------------------------------
    def on_init(self, info: HardwareInfo) -> CallbackReturn:
        p = info.params
        try:
            unknown = sorted(set(p) - set(KNOWN_PARAMS))
            if unknown:
                raise ValueError(f"unknown params {unknown}; known: {', '.join(KNOWN_PARAMS)} (the "
                                 "physics comes from the robot description; lockstep is a control_node "
                                 "parameter)")
            self.floating_base = (_bool(p, "floating_base", True) if "floating_base" in p
                                  else not fixed_to_world(info.urdf))
            self.backend = p.get("backend", sim.DEFAULT_BACKEND)
            if self.backend not in sim.backend_names():
                raise ValueError(f"param backend must be one of {', '.join(sim.backend_names())}, "
                                 f"got {self.backend!r}")
            capabilities = sim.backend_capabilities(self.backend)
            self.dt = _float(p, "dt", 1e-3)
            self.integrator = p.get("integrator", "rk4")
            if self.integrator not in capabilities.integrators:
                raise ValueError(f"param integrator must be one of {capabilities.integrators} on backend "
                                 f"{self.backend}, got {self.integrator!r}")
            self.lockstep_steps = 0  # steps per write in lockstep (prepare_lockstep); 0: follow the period
            self.cycle_steps = 0  # steps per write under a wall-clock loop (prepare_control_period)
            self.max_steps = int(_float(p, "max_steps_per_cycle", 10))
            if self.max_steps < 1:
                raise ValueError(f"param max_steps_per_cycle must be >= 1, got {p['max_steps_per_cycle']!r}")
            self.contact_kind = p.get("contact", "soft")
            if self.contact_kind not in ("soft", "hard", "none"):
                raise ValueError(f"param contact must be soft, hard or none, got {self.contact_kind!r}")
            self.contact_params = {field: _float(p, key, 0.0)
                                   for key, field in CONTACT_PARAMS.items() if key in p}
            sim.ContactModel((), kind="soft", **self.contact_params)  # ValueError: a bad or doubly given one
            kinds = (*capabilities.contact_kinds, "none")
            if self.contact_kind not in kinds:
                raise ValueError(f"backend {self.backend} ({capabilities.description}) takes contact "
                                 f"{' or '.join(kinds)}, got {self.contact_kind!r}")
            refused = [key for key in TANGENTIAL_PARAMS if key in p]
            if refused and not capabilities.tangential_contact:
                raise ValueError(f"backend {self.backend} ({capabilities.description}) has no tangential "
                                 f"contact spring: {', '.join(refused)} (kinodyn's stiction) do not apply")
            self.extra_spheres = extra_spheres(p.get("contact_spheres", ""))
            self.noise = sim.ImuNoise(**{key: _float(p, key, 0.0) for key in NOISE_PARAMS})
            self.imu_seed = int(_float(p, "imu_seed", 0))
            self.ros_interface = _bool(p, "ros_interface", True)
            self.balance_inertia = _bool(p, "balance_inertia", False)
            position = p.get("initial_base_position")
            self.push_params = {key: _positive(p, key) for key in PUSH_PARAMS if key in p}
            self.initial_base_position = None if position is None else np.array(
                [float(x) for x in position.split()])
            if self.initial_base_position is not None and self.initial_base_position.shape != (3,):
                raise ValueError(f"param initial_base_position must be 'x y z', got {position!r}")
            for joint in info.joints:
                if [c.name for c in joint.command_interfaces] not in ([EFFORT], []):
                    raise ValueError(f"joint {joint.name}: the simulator takes effort commands only, got "
                                     f"{[c.name for c in joint.command_interfaces]}")
            for sensor in info.sensors:
                if tuple(s.name for s in sensor.state_interfaces) != IMU_INTERFACES:
                    raise ValueError(f"sensor {sensor.name}: only IMUs are simulated; list the 10 IMU state "
                                     f"interfaces {', '.join(IMU_INTERFACES)}")
                if "frame_id" not in sensor.params:
                    raise ValueError(f"sensor {sensor.name}: add <param name=\"frame_id\">link</param>")
        except ValueError as exc:
            self.last_error = f"SimulatedSystem '{info.name}': {exc}"
            return CallbackReturn.ERROR
        return CallbackReturn.SUCCESS

    # --- lifecycle ------------------------------------------------------------------------------------------
    def on_configure(self) -> CallbackReturn:
        assert self.info is not None
        urdf = self.info.urdf
        try:
            model = kd.Model.from_urdf(urdf, floating_base=self.floating_base)
            contact = None
            if self.contact_kind != "none":
                spheres = sim.collision_spheres(urdf) + self.extra_spheres
                for sphere in self.extra_spheres:
                    try:
                        model.frame_id(sphere.link)
                    except KeyError as exc:
                        raise ValueError(f"param contact_spheres: {exc.args[0]}") from None
                if model.floating_base and not spheres:
                    raise ValueError("the robot floats and has no contact sphere: it would fall through the "
                                     "ground (contact points are the URDF's <collision> spheres; meshes are "
                                     "not contact geometry here): give its feet spheres with param "
                                     "contact_spheres ('link:radius ...'), or set param contact to none")
                contact = sim.ContactModel(spheres, kind=self.contact_kind, **self.contact_params)
            self.simulator = sim.create_backend(self.backend, urdf, model, dt=self.dt,
                                                integrator=self.integrator, contact=contact,
                                                balance_inertia=self.balance_inertia)
            self._joint_index = [model.joint_id(j.name) for j in self.info.joints]
            self.initial_q = self._initial_configuration(model)
            self.simulator.reset(self.initial_q)
            self.imus = [(s.name, self.simulator.add_imu(s.params["frame_id"], self.noise, self.imu_seed + k))
                         for k, s in enumerate(self.info.sensors)]
        except (ValueError, KeyError, ImportError) as exc:  # ImportError: a backend's engine not installed
            self.last_error = f"SimulatedSystem '{self.info.name}': {exc}"
            return CallbackReturn.FAILURE
        self.applied = np.zeros(model.nv)
        self._bind_slots(model)
        weight = float(model.mass.sum()) * 9.81
        self.max_push = (self.push_params.get("max_push_force", PUSH_WEIGHTS * weight),
                         self.push_params.get("max_push_torque", PUSH_WEIGHTS * weight * 1.0),
                         self.push_params.get("max_push_duration", MAX_PUSH_DURATION))
        self._copy_states()
        if self.ros_interface and self._ros is None:
            from kinodyn_control.hardware.sim_ros import SimulatorRosInterface  # noqa: PLC0415  (rclpy only when asked)

            self._ros = SimulatorRosInterface(self)
        return CallbackReturn.SUCCESS

    def _bind_slots(self, model: kd.Model) -> None:
        """Where each joint state comes from in ``(q, v, applied torque)`` and goes to in the state table,
        where each IMU reading goes, and which ``tau`` entry each joint's effort command drives (bound once:
        the cycle copies arrays through these indices)."""
        assert self.info is not None
        first_q, first_v = (7, 6) if model.floating_base else (0, 0)
        origin = {POSITION: first_q, VELOCITY: model.nq + first_v, EFFORT: model.nq + model.nv + first_v}
        sources, slots, targets, commands = [], [], [], []
        for joint, k in zip(self.info.joints, self._joint_index, strict=True):
            for interface, start in origin.items():
                name = f"{joint.name}/{interface}"
                if name in self.states:
                    sources.append(start + k)
                    slots.append(self.states.index[name])
            if f"{joint.name}/{EFFORT}" in self.commands:
                targets.append(first_v + k)
                commands.append(self.commands.index[f"{joint.name}/{EFFORT}"])
        self._state_sources = np.array(sources, dtype=np.intp)
        self._state_slots = np.array(slots, dtype=np.intp)
        self._tau_targets = np.array(targets, dtype=np.intp)
        self._effort_commands = np.array(commands, dtype=np.intp)
        self._imu_slots = [np.array([self.states.index[f"{sensor}/{i}"] for i in IMU_INTERFACES],
                                    dtype=np.intp) for sensor, _ in self.imus]

    def _initial_configuration(self, model: kd.Model) -> np.ndarray:
        assert self.info is not None
        q = model.neutral()
        first = 7 if model.floating_base else 0
        for joint, k in zip(self.info.joints, self._joint_index, strict=True):
            for state in joint.state_interfaces:
                if state.name == POSITION and not math.isnan(state.initial_value):
                    q[first + k] = state.initial_value
        if model.floating_base and self.initial_base_position is not None:
            q[:3] = self.initial_base_position
        elif model.floating_base and self.simulator is not None and self.simulator.contact.spheres:
            self.simulator.reset(q)  # base at the origin: lift it until the lowest sphere touches z = 0
            q[2] = -self.simulator.contact_points[:, 2].min()
        return q

    def release(self) -> None:
        """Shut down the simulator's ROS interface (sim_ros), if one was started."""
        if self._ros is not None:
            self._ros.shutdown()
            self._ros = None

    # --- requests from other threads ------------------------------------------------------------------------
    def request_reset(self) -> None:
        """Back to the initial state (joints and base as configured, zero velocity) at the next ``write``."""
        with self.lock:
            self._requests.append(("reset", None))

    def request_push(self, link: str, wrench: np.ndarray, duration: float) -> None:
        """Apply ``wrench`` (world axes, about the link origin) on ``link`` for ``duration`` s from the next
        ``write``. Raises InputError (its ``kind`` names the cause) for an unknown link, a non-finite value, a
        duration <= 0, or a force, torque or duration above ``max_push_force`` / ``_torque`` / ``_duration``
        (pushes that large break the simulation rather than test the robot)."""
        assert self.simulator is not None
        try:
            self.simulator.model.frame_id(link)
        except KeyError as exc:
            raise InputError("link", str(exc.args[0]) if exc.args else f"no link {link!r}") from None
        w = np.asarray(wrench, dtype=np.float64)
        if w.shape != (6,) or not np.all(np.isfinite(w)) or not (math.isfinite(duration) and duration > 0.0):
            raise InputError("non-finite", "push needs a finite wrench and a finite duration > 0")
        asked = (float(np.linalg.norm(w[:3])), float(np.linalg.norm(w[3:])), float(duration))
        for value, limit, key, unit in zip(asked, self.max_push, PUSH_PARAMS, ("N", "N m", "s"), strict=True):
            if value > limit:
                raise InputError(key, f"push {key[9:]} {value:g} {unit} is above {key} = {limit:g} "
                                            f"{unit} (default: {PUSH_WEIGHTS:g} robot weights, times 1 m for "
                                            f"the torque, {MAX_PUSH_DURATION:g} s); set the hardware param "
                                            f"{key} to allow it")
        with self.lock:
            self._requests.append(("push", (link, w, duration)))

    def prepare_control_period(self, period: float) -> ReturnType:
        """From now on every ``write`` advances ``round(period / dt)`` steps (at least one), whatever the
        measured period: the controllers keep their rate in simulated time and a late loop makes the
        simulation fall behind real time (holding one command over the many steps of a late cycle shook a
        stiffly PD-controlled robot off its feet on a loaded machine)."""
        self.cycle_steps = max(1, round(period / self.dt))
        return ReturnType.OK

    def prepare_lockstep(self, period: float) -> ReturnType:
        """From now on every ``write`` advances exactly ``period`` (a whole number of ``dt`` steps)."""
        steps = round(period / self.dt)
        if steps < 1 or abs(steps * self.dt - period) > 1e-9 * period:
            self.last_error = (f"lockstep needs the control period 1/update_rate = {period} s to be a whole "
                               f"number of physics steps dt = {self.dt} s; change update_rate or the dt")
            return ReturnType.ERROR
        self.lockstep_steps = steps
        return ReturnType.OK

    # --- cyclic ---------------------------------------------------------------------------------------------
    def read(self, time: float, period: float) -> ReturnType:
        with self.lock:
            self._copy_states()
        return ReturnType.OK

    def write(self, time: float, period: float) -> ReturnType:
        assert self.info is not None
        assert self.simulator is not None
        s = self.simulator
        problem = self.unusable_commands()
        if problem:
            self.last_error = f"unusable effort command(s): {problem}"
            return ReturnType.ERROR
        tau = np.zeros(s.model.nv)
        commanded = self.commands.values[self._effort_commands]
        tau[self._tau_targets] = np.where(np.isnan(commanded), 0.0, commanded)  # no command yet: limp
        measured = min(self.max_steps, max(1, round(period / s.dt)))
        steps = self.lockstep_steps or self.cycle_steps or measured
        with self.lock:
            for kind, args in self._requests:
                if kind == "reset":
                    s.reset(self.initial_q, t=s.t)  # simulated time (/clock) keeps running forwards
                else:
                    s.apply_wrench(*args)
            self._requests.clear()
            try:
                with np.errstate(all="ignore"):  # a failed step raises (a non-finite state too)
                    for _ in range(steps):
                        s.step(tau)
            except Exception as exc:  # noqa: BLE001  any failure of the physics: the simulated state is no longer valid
                self.last_error = (f"the physics failed at t = {s.t:.6f} s ({type(exc).__name__}: {exc}); "
                                   "the simulated robot has no valid state any more")
                return ReturnType.ERROR
            self.applied = s.applied_torque.copy()
        for callback in self.on_step:
            callback(s)
        return ReturnType.OK

    def _copy_states(self) -> None:
        assert self.simulator is not None
        s = self.simulator
        values = self.states.values
        values[self._state_slots] = np.concatenate((s.q, s.v, self.applied))[self._state_sources]
        for slots, (_, imu) in zip(self._imu_slots, self.imus, strict=True):
            r = imu.reading
            assert r is not None  # add_imu resets the sensor, which takes the first reading
            values[slots] = np.concatenate((r.orientation, r.angular_velocity, r.linear_acceleration))
