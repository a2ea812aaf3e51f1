"""``MujocoSimulator``: the physics-backend protocol (``backend.PhysicsBackend``) on MuJoCo.

The robot is MuJoCo's own import of the URDF (its URDF parser, through ``mujoco.MjSpec``): link frames,
inertias as written (``balanceinertia`` and ``inertiafromgeom`` off, no fusing of fixed joints, so every
URDF link is a MuJoCo body; inertias MuJoCo would refuse are refused first, naming each link and the repair
``create_backend(..., balance_inertia=True)``, ``inertia.py``), joint ranges, ``<dynamics damping friction>``
as joint damping and friction loss, ``<limit effort>`` as the joint's actuator force range, clamping one motor
actuator per joint. Then:

- a floating base is a free joint on the root link's body (kinodyn's ``floating_base``);
- the contact geometry is the ``ContactModel``'s spheres (the URDF's collision spheres) and the plane
  z = 0, nothing else collides (other collision shapes and visuals are dropped); MuJoCo's soft-constraint
  contact solver with an elliptic friction cone (the Coulomb disc of kinodyn's model) of coefficient
  ``friction``, and ``solref = (-k / m_c, -d / m_c)``: MuJoCo's direct stiffness and damping per unit mass
  (MuJoCo documentation, "Solver parameters"), from the contact's stiffness k and damping d for this robot
  (``ContactModel.gains`` of the model's total mass m, as kinodyn's backend uses them) with ``m_c = m / n``
  for n spheres (the load of each when it stands on all of them), so per-kg gains give
  ``solref = (-n k_per_kg, -n d_per_kg)`` whatever the mass; MuJoCo's default ``solimp``, its width (the
  penetration over which the impedance rises, 1 mm) scaled by ``length / REFERENCE_LENGTH`` when the
  ``ContactModel`` is scaled to the robot's legs, as its sinkage is. MuJoCo's
  friction has no tangential spring: the ``tangential_*`` parameters of ``ContactModel`` are kinodyn's
  alone. Only ``kind="soft"`` (MuJoCo's solver) is accepted;
- integrators: ``rk4`` is MuJoCo's RK4, ``semi_implicit_euler`` its Euler (velocity first, joint damping
  implicit);
- pushes are ``xfrc_applied`` on the link's body (a wrench about its centre of mass, recomputed every step
  from the link-origin wrench);
- the IMU is ``imu.ImuSensor`` on the converted state: the same kinematics and noise model as kinodyn's.

State conversion (``to_mujoco`` / ``from_mujoco``): MuJoCo's free joint stores ``(x, y, z, qw, qx, qy,
qz)`` and the velocity ``(world linear velocity of the body origin, angular velocity in the body frame)``;
kinodyn's ``q`` has the quaternion ``(x, y, z, w)`` and ``v`` the linear velocity in the base frame:
``v_lin = C^T v_world``.

``contact_forces`` / ``in_contact`` come from a ``mj_forward`` at the current state with the last inputs
(the constraint forces MuJoCo's next step starts from), computed when first read after a step; the
solver's warm start is restored afterwards, so reading them does not change the trajectory.
"""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from kinodyn.sim.contact import REFERENCE_LENGTH
from kinodyn.sim.imu import ImuNoise, ImuSensor
from kinodyn.sim.inertia import inertia_repairs
from kinodyn.sim.simulator import NO_CONTACT, check_step_options, generalized_forces, push_steps
from kinodyn.urdf import ParsedURDF, read_urdf
from kinodyn.urdf.document import EXTENSION_ELEMENTS

if TYPE_CHECKING:
    from pathlib import Path

    from numpy.typing import ArrayLike

    from kinodyn.model import Model
    from kinodyn.sim.contact import ContactModel

MUJOCO_INTEGRATORS = {"rk4": mujoco.mjtIntegrator.mjINT_RK4,
                      "semi_implicit_euler": mujoco.mjtIntegrator.mjINT_EULER}
COMPILER = {"fusestatic": "false", "balanceinertia": "false", "inertiafromgeom": "false",
            "discardvisual": "true", "angle": "radian"}
DIVERGENCE_WARNINGS = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
                       mujoco.mjtWarning.mjWARN_BADQACC)
TORSIONAL_FRICTION, ROLLING_FRICTION = 0.005, 1e-4  # MuJoCo's defaults (unused with condim 3)
SOLIMP_WIDTH = 2  # index of the width in MuJoCo's solimp (dmin, dmax, width, midpoint, power)
_last_warning = [""]  # MuJoCo's last warning text


def _keep_warning(text: str) -> None:
    """MuJoCo's warning handler: keep the text for the divergence error, instead of MuJoCo's default of
    printing it and appending it to MUJOCO_LOG.TXT in the working directory."""
    _last_warning[0] = text.strip()


if mujoco.get_mju_user_warning() is None:  # a handler the user installed stays
    mujoco.set_mju_user_warning(_keep_warning)


def rotate(quat_wxyz: np.ndarray, r: np.ndarray, inverse: bool = False) -> np.ndarray:
    """``C r`` (or ``C^T r``) for the rotation of the unit quaternion ``(w, x, y, z)`` (MuJoCo's
    ``mju_rotVecQuat``)."""
    out = np.empty(3)
    mujoco.mju_rotVecQuat(out, np.ascontiguousarray(r, dtype=np.float64),
                          quat_wxyz * (1.0, -1.0, -1.0, -1.0) if inverse else quat_wxyz)
    return out


def to_mujoco(q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A free joint's ``(qpos (7,), qvel (6,))`` from kinodyn's base ``q[:7]``, ``v[:6]``."""
    qpos = np.concatenate([q[:3], q[6:7], q[3:6]])
    return qpos, np.concatenate([rotate(qpos[3:7], v[:3]), v[3:6]])


def from_mujoco(qpos: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kinodyn's base ``(q[:7], v[:6])`` from a free joint's ``qpos (7,)``, ``qvel (6,)``."""
    q = np.concatenate([qpos[:3], qpos[4:7], qpos[3:4]])
    return q, np.concatenate([rotate(qpos[3:7], qvel[:3], inverse=True), qvel[3:6]])


def urdf_for_mujoco(parsed: ParsedURDF) -> str:
    """The URDF's kinematics and inertias only (no extension elements, visuals or collisions), with the
    ``<mujoco><compiler>`` options of the module doc."""
    root = copy.deepcopy(parsed.root)
    for element in list(root):
        if element.tag in (*EXTENSION_ELEMENTS, "mujoco"):
            root.remove(element)
    for link in root.iter("link"):
        for element in list(link):
            if element.tag in ("visual", "collision"):
                link.remove(element)
    ET.SubElement(root, "mujoco").append(ET.Element("compiler", COMPILER))
    return ET.tostring(root, encoding="unicode")


class MujocoSimulator:
    """The robot of ``model`` (built from ``urdf``) simulated by MuJoCo on the ground plane (module doc)."""

    def __init__(self, model: Model, urdf: str | Path | ParsedURDF, dt: float = 1e-3,
                 integrator: str = "rk4", contact: ContactModel | None = None,
                 joint_limits: bool = True) -> None:
        check_step_options(dt, integrator)
        self.contact = contact or NO_CONTACT
        if self.contact.spheres and self.contact.kind != "soft":
            raise ValueError(f"contact kind {self.contact.kind!r} is kinodyn's impulse model; the mujoco "
                             "backend uses MuJoCo's contact solver: use kind 'soft'")
        self.contact_gains = self.contact.gains(float(model.mass.sum()))  # the contact's constants
        if self.contact.spheres and not self.contact_gains.stiffness > 0.0:
            raise ValueError("the mujoco backend needs a contact stiffness > 0")
        if model.mimic_joint_names:
            raise ValueError(f"the mujoco backend does not simulate mimic joints "
                             f"({', '.join(model.mimic_joint_names)}); use the kinodyn backend")
        self._model = model
        self.dt = float(dt)
        self.integrator = integrator
        parsed = read_urdf(urdf)
        if model.floating_base and parsed.root_link == "world":
            raise ValueError("a floating base needs a root link other than 'world' (the fixed world)")
        repairs = inertia_repairs(parsed, model.floating_base)
        if repairs:
            links = "; ".join(f"link {r.link!r} ({r.what})" for r in repairs)
            raise ValueError(f"MuJoCo refuses the non-physical inertias of {links}: pass "
                             "balance_inertia=True to create_backend (SimulatedSystem param "
                             "balance_inertia) to repair them as MuJoCo's balanceinertia does")
        try:
            spec = mujoco.MjSpec.from_string(urdf_for_mujoco(parsed))
            self._build(spec, parsed.root_link, joint_limits)
            self.mj = spec.compile()
        except ValueError as exc:
            raise ValueError(f"MuJoCo could not load the URDF: {exc}") from None
        self.mj.opt.timestep = self.dt
        self.mj.opt.integrator = MUJOCO_INTEGRATORS[integrator]
        self.mj.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
        self.mj.opt.gravity[:] = model.gravity
        mass = float(self.mj.body_mass.sum())
        if not np.isclose(mass, model.mass.sum(), rtol=1e-9, atol=1e-12) or self.mj.nv != model.nv:
            raise ValueError(f"MuJoCo's import of the URDF differs from kinodyn's: mass {mass} vs "
                             f"{model.mass.sum()} kg, nv {self.mj.nv} vs {model.nv}")
        self.data = mujoco.MjData(self.mj)
        self._first_q, self._first_v = (7, 6) if model.floating_base else (0, 0)
        names = model.joint_names
        self._qadr = np.array([self.mj.joint(n).qposadr[0] for n in names], dtype=np.int64)
        self._vadr = np.array([self.mj.joint(n).dofadr[0] for n in names], dtype=np.int64)
        self._actuator = np.array([self.mj.actuator(n).id for n in names], dtype=np.int64)
        spheres = range(len(self.contact.spheres))
        self._sphere_geom = np.array([self.mj.geom(f"contact_{k}").id for k in spheres], dtype=np.int64)
        self._sphere_of_geom = {int(g): k for k, g in enumerate(self._sphere_geom)}
        self._radius = np.array([s.radius for s in self.contact.spheres])
        self._pushes: list[tuple[int, np.ndarray, int]] = []
        self._force6 = np.zeros(6)
        self.imus: list[ImuSensor] = []
        self.reset()

    def _build(self, spec: mujoco.MjSpec, root_link: str, joint_limits: bool) -> None:
        """Free joint, actuators, joint limits, contact spheres and ground on MuJoCo's import (module doc)."""
        model = self._model
        if model.floating_base:
            spec.body(root_link).add_freejoint()
        for name in model.joint_names:
            spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
            if not joint_limits:
                spec.joint(name).limited = mujoco.mjtLimited.mjLIMITED_FALSE
        c, gains = self.contact, self.contact_gains
        if not c.spheres:
            return
        m_c = float(model.mass.sum()) / len(c.spheres)
        surface = {"friction": [c.friction, TORSIONAL_FRICTION, ROLLING_FRICTION], "condim": 3,
                   "solref": [-gains.stiffness / m_c, -gains.damping / m_c]}
        if c.length is not None:  # the impedance's transition depth scaled with the sinkage (module doc)
            solimp = np.array(spec.default.geom.solimp)
            solimp[SOLIMP_WIDTH] *= c.length / REFERENCE_LENGTH
            surface["solimp"] = solimp.tolist()
        spec.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 1.0],
                                contype=0, conaffinity=1, **surface)
        for k, sphere in enumerate(c.spheres):
            body = spec.worldbody if sphere.link == "world" else spec.body(sphere.link)
            body.add_geom(name=f"contact_{k}", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[sphere.radius, 0, 0],
                          pos=list(sphere.center), contype=1, conaffinity=0, **surface)

    # --- state ---------------------------------------------------------------------------------------------
    @property
    def model(self) -> Model:
        return self._model

    @property
    def t(self) -> float:
        return float(self.data.time)

    @property
    def q(self) -> np.ndarray:
        """Configuration in kinodyn's convention (read-only; ``reset`` sets it)."""
        return self._q

    @property
    def v(self) -> np.ndarray:
        """Velocity in kinodyn's convention (read-only; ``reset`` sets it)."""
        return self._v

    @property
    def applied_torque(self) -> np.ndarray:
        """Generalized forces of the last step (nv,): the base part as given, the joints after MuJoCo's
        actuator force range (the URDF effort limit)."""
        return self._applied

    def reset(self, q: ArrayLike | None = None, v: ArrayLike | None = None, t: float = 0.0) -> None:
        """Set the state (default: ``model.neutral()``, zero velocity) and time; drops active pushes."""
        model = self._model
        q0 = model.check_q(model.neutral() if q is None else q).copy()
        v0 = model.check_v(np.zeros(model.nv) if v is None else v).copy()
        if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(v0)) and np.isfinite(t)):
            raise ValueError("reset: q, v and t must be finite")
        if model.floating_base:
            q0[3:7] /= np.linalg.norm(q0[3:7])
        mujoco.mj_resetData(self.mj, self.data)
        self._write_state(q0, v0)
        self.data.time = float(t)
        self._pushes = []
        self._applied = np.zeros(model.nv)
        self._read_state()
        self._warnings = self._warning_count()
        for imu in self.imus:
            imu.reset(self._q, self._v, self.dt)

    def _write_state(self, q: np.ndarray, v: np.ndarray) -> None:
        d = self.data
        if self._model.floating_base:
            d.qpos[:7], d.qvel[:6] = to_mujoco(q, v)
        d.qpos[self._qadr] = q[self._first_q:]
        d.qvel[self._vadr] = v[self._first_v:]

    def _read_state(self) -> None:
        d = self.data
        q, v = np.empty(self._model.nq), np.empty(self._model.nv)
        if self._model.floating_base:
            q[:7], v[:6] = from_mujoco(d.qpos[:7], d.qvel[:6])
        q[self._first_q:] = d.qpos[self._qadr]
        v[self._first_v:] = d.qvel[self._vadr]
        self._q, self._v = q, v
        self._contacts_stale = True  # contact outputs are computed when read (_update_contacts)

    def add_imu(self, frame: str, noise: ImuNoise | None = None,
                rng: np.random.Generator | int | None = None) -> ImuSensor:
        """An IMU on ``frame`` (kinodyn's ``ImuSensor`` on the converted state), updated after every step."""
        imu = ImuSensor(self._model, frame, noise, rng)
        imu.reset(self._q, self._v, self.dt)
        self.imus.append(imu)
        return imu

    # --- inputs --------------------------------------------------------------------------------------------
    def apply_wrench(self, link: str, wrench: ArrayLike, duration: float) -> None:
        """Apply ``wrench = [f; tau]`` (world axes, about the origin of URDF link ``link``) during the next
        ``round(duration / dt)`` steps (at least one)."""
        self._model.frame_id(link)  # KeyError listing close names for an unknown link
        w, steps = push_steps(wrench, duration, self.dt)
        self._pushes.append((self.mj.body(link).id, w, steps))

    def _apply_pushes(self) -> None:
        """``xfrc_applied`` of the active pushes: each wrench moved from the link origin to the body's
        centre of mass at the current state, ``tau_c = tau + (p_origin - p_com) x f``."""
        d = self.data
        d.xfrc_applied[:] = 0.0
        if not self._pushes:
            return
        mujoco.mj_kinematics(self.mj, d)
        for body, w, _ in self._pushes:
            d.xfrc_applied[body, :3] += w[:3]
            d.xfrc_applied[body, 3:] += w[3:] + np.cross(d.xpos[body] - d.xipos[body], w[:3])

    # --- stepping ------------------------------------------------------------------------------------------
    def step(self, tau: ArrayLike) -> None:
        """Advance ``dt`` with the joint torques ``tau`` ((n_joints,) or (nv,)) held over the step."""
        tau = generalized_forces(self._model, tau)
        d = self.data
        d.ctrl[self._actuator] = tau[self._first_v:]
        if self._model.floating_base:  # base forces and torques in the base frame -> the free joint's
            d.qfrc_applied[:3] = rotate(d.qpos[3:7], tau[:3])
            d.qfrc_applied[3:6] = tau[3:6]
        self._apply_pushes()
        mujoco.mj_step(self.mj, d)
        warnings = self._warning_count()
        self._read_state()
        if warnings != self._warnings or not (np.isfinite(self._q).all() and np.isfinite(self._v).all()):
            names = [w.name for w, a, b in zip(DIVERGENCE_WARNINGS, warnings, self._warnings, strict=True)
                     if a != b]
            self._warnings = warnings
            cause = f"{', '.join(names)}: {_last_warning[0]}" if names else "a non-finite state"
            raise FloatingPointError(f"simulation diverged at t = {self.t:.6f} s (MuJoCo: {cause}); lower "
                                     "dt, the pushes or torques, or the contact stiffness")
        self._applied = np.concatenate([tau[:self._first_v], d.qfrc_actuator[self._vadr]])
        if self._pushes:
            self._pushes = [(b, w, n - 1) for b, w, n in self._pushes if n > 1]
        for imu in self.imus:
            imu.update(self._q, self._v, self.dt)

    def _warning_count(self) -> tuple[int, ...]:
        return tuple(int(self.data.warning[w].number) for w in DIVERGENCE_WARNINGS)

    # --- contacts ------------------------------------------------------------------------------------------
    def _update_contacts(self) -> None:
        """``contact_points`` (each sphere's lowest point), ``in_contact`` and ``contact_forces`` (ground
        reaction on the robot, world axes) from MuJoCo's forward dynamics at the current state."""
        if not self._contacts_stale:
            return
        d = self.data
        warm = d.qacc_warmstart.copy()
        self._apply_pushes()
        mujoco.mj_forward(self.mj, d)
        d.qacc_warmstart[:] = warm
        ns = len(self.contact.spheres)
        self._points: np.ndarray = d.geom_xpos[self._sphere_geom].copy()  # (mujoco's data is untyped)
        self._points[:, 2] -= self._radius
        self._in_contact = np.zeros(ns, dtype=bool)
        self._forces = np.zeros((ns, 3))
        for i in range(d.ncon):
            c = d.contact[i]
            k = self._sphere_of_geom.get(int(c.geom2), self._sphere_of_geom.get(int(c.geom1)))
            if k is None or c.exclude:
                continue
            mujoco.mj_contactForce(self.mj, d, i, self._force6)
            force = c.frame.reshape(3, 3).T @ self._force6[:3]  # on geom2, from geom1
            self._forces[k] += force if int(c.geom2) == self._sphere_geom[k] else -force
            self._in_contact[k] = True
        self._contacts_stale = False

    @property
    def contact_points(self) -> np.ndarray:
        self._update_contacts()
        return self._points

    @property
    def contact_forces(self) -> np.ndarray:
        self._update_contacts()
        return self._forces

    @property
    def in_contact(self) -> np.ndarray:
        self._update_contacts()
        return self._in_contact
