"""``Simulator``: a torque-level rigid-body simulation of a ``kinodyn.Model`` (no ROS).

One ``step(tau)`` advances ``dt`` seconds with the joint torques held over the step:

1. actuator saturation: ``tau`` is clipped to ``±effort_limit`` (URDF ``<limit effort>``);
2. the integrator (``kernels.step``: RK4 or semi-implicit Euler) with forward dynamics by the
   articulated-body algorithm under joint damping and regularised Coulomb friction (URDF
   ``<dynamics damping friction>``; a joint whose damper is too stiff for the explicit step on its
   inertia gets it implicitly, named in a warning: ``_check_joint_dampers``), soft ground contact forces
   (``contact.ContactModel``, its gains scaled by the model's total mass: ``contact_gains``) and the
   active pushes (``apply_wrench``);
3. one-sided velocity constraints at the end of the step, as perfectly inelastic impulses
   (``impulse.inelastic_impulse``, Robot Dynamics lecture notes (ETH) §3.7.3): hard ground contacts
   (``kind="hard"``) and
   joint position limits (a joint past its limit and moving outwards is stopped, and its position
   is set back onto the limit). Velocity limits are not enforced (a controller's concern).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.sim import kernels
from kinodyn.sim.collision import sphere_arrays
from kinodyn.sim.contact import ContactModel
from kinodyn.sim.impulse import inelastic_impulse
from kinodyn.sim.imu import ImuNoise, ImuSensor

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.model import Model

INTEGRATORS = ("rk4", "semi_implicit_euler")
# |lambda dt| up to which each integrator's step is stable for a real negative eigenvalue lambda (a damper on
# an inertia, lambda = -c / I): RK4's stability region reaches -2.785 on the real axis, explicit Euler's -2
DAMPING_STABILITY = {"rk4": 2.78, "semi_implicit_euler": 2.0}
# c dt / I beyond which a joint's damper is integrated implicitly: a margin below both bounds for the
# inertia's change with the configuration after the check; below it the explicit step keeps its order
IMPLICIT_DAMPING_RATIO = 1.0
# a mass matrix whose eigenvalues spread beyond this is singular to working precision (published robots'
# spread up to about 1e7; a body with no rotational inertia on a hinge through its centre gives 1e17 and more)
SINGULAR_CONDITION = 1e12
POINT_INERTIA = 1e-12  # kg m^2: a body whose rotational inertia entries are all below this is a point
NO_CONTACT = ContactModel(spheres=())


def check_step_options(dt: float, integrator: str) -> None:
    """Raise ``ValueError`` unless ``dt`` is finite and > 0 and ``integrator`` one of ``INTEGRATORS``."""
    if integrator not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    if not (np.isfinite(dt) and dt > 0.0):
        raise ValueError(f"dt must be finite and > 0, got {dt}")


def generalized_forces(model: Model, tau: ArrayLike) -> np.ndarray:
    """``tau`` as finite generalized forces (nv,): joint efforts (n_joints,) get zero base forces in front."""
    try:
        tau = np.asarray(tau, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"tau must be an array of numbers [N m or N], got {tau!r:.80}") from None
    nv, first = model.nv, 6 if model.floating_base else 0
    if tau.shape == (nv - first,) and first:
        tau = np.concatenate([np.zeros(first), tau])
    elif tau.shape != (nv,):
        raise ValueError(f"tau must have shape ({nv - first},) (joints) or ({nv},) (generalized forces), "
                         f"got {tau.shape}")
    if not kernels.all_finite(tau):
        raise ValueError("tau must be finite")
    return tau


def push_steps(wrench: ArrayLike, duration: float, dt: float) -> tuple[np.ndarray, int]:
    """``(wrench, steps)`` of a push: 6 finite numbers, held ``round(duration / dt)`` steps (at least one)."""
    w = np.asarray(wrench, dtype=np.float64)
    if w.shape != (6,) or not np.all(np.isfinite(w)):
        raise ValueError(f"wrench must be 6 finite numbers [f; tau], got {wrench!r}")
    if not (np.isfinite(duration) and duration > 0.0):
        raise ValueError(f"push duration must be finite and > 0, got {duration}")
    return w, max(1, round(duration / dt))


class Simulator:
    """Simulated world of one robot on the ground plane z = 0 (see the module doc).

    ``Simulator(model, dt=1e-3, integrator="rk4", contact=None, joint_limits=True,
    joint_friction_velocity=0.1, implicit_damping_ratio=1)``; ``joint_friction_velocity`` [rad/s or m/s]
    regularises the joints' Coulomb friction, ``friction qd / sqrt(qd^2 + joint_friction_velocity^2)``;
    a joint whose damper has ``c dt / I`` beyond ``implicit_damping_ratio`` gets it implicitly
    (``_check_joint_dampers``; ``math.inf``: every damper explicit, as ``trajopt.RobotDynamics`` takes them).
    """

    def __init__(self, model: Model, dt: float = 1e-3, integrator: str = "rk4",
                 contact: ContactModel | None = None, joint_limits: bool = True,
                 joint_friction_velocity: float = 0.1,
                 implicit_damping_ratio: float = IMPLICIT_DAMPING_RATIO) -> None:
        check_step_options(dt, integrator)
        if not (np.isfinite(joint_friction_velocity) and joint_friction_velocity > 0.0):
            raise ValueError(f"joint_friction_velocity must be finite and > 0, got {joint_friction_velocity}")
        if not implicit_damping_ratio > 0.0:  # (inf: every damper explicit)
            raise ValueError(f"implicit_damping_ratio must be > 0 (inf: none implicit), got "
                             f"{implicit_damping_ratio}")
        self.implicit_damping_ratio = float(implicit_damping_ratio)
        self.model = model
        self.dt = float(dt)
        self.integrator = integrator
        self.contact = contact or NO_CONTACT
        self.joint_limits = joint_limits
        self._rk4 = integrator == "rk4"
        self._first_v = 6 if model.floating_base else 0
        self._first_q = 7 if model.floating_base else 0
        mass = float(model.mass.sum())
        self.contact_gains = self.contact.gains(mass)  # the contact's constants for this robot
        self._params = self.contact.params(joint_friction_velocity, mass)
        self._spheres = sphere_arrays(model, self.contact.spheres)
        self._sphere_frames = [model.frame_id(s.link) for s in self.contact.spheres]
        self._effort = np.concatenate([np.full(self._first_v, np.inf), model.effort_limit[self._first_v:]])
        self._negative_effort = -self._effort
        self._damping = np.ascontiguousarray(model.damping, dtype=np.float64)
        self._friction = np.ascontiguousarray(model.friction, dtype=np.float64)
        # each joint's damper, its friction's slope at rest included: c = damping + friction / velocity
        self._joint_dampers = self._damping + self._friction / joint_friction_velocity
        self._joint_friction_velocity = float(joint_friction_velocity)
        self._implicit_joints = np.empty(0, dtype=np.int64)  # velocity indices of the implicit dampers
        self._diverging: set[int] = set()  # explicit dampers beyond the integrator (named once)
        self._lower = model.lower_limit[self._first_q:]
        self._upper = model.upper_limit[self._first_q:]
        finite = np.isfinite(self._lower).any() or np.isfinite(self._upper).any()
        self._has_limits = joint_limits and bool(finite)
        self._mimic = bool(model.mimic_joint_names)
        self._pushes: list[tuple[int, np.ndarray, np.ndarray, int]] = []
        self._push_arrays = (np.empty(0, dtype=np.int64), np.empty((0, 3)), np.empty((0, 6)))
        ns = len(self.contact.spheres)
        self._anchors = np.zeros((ns, 3))
        self._data = model.create_data()  # the step's dynamics scratch (its work block), allocated once
        self.contact_forces = np.zeros((ns, 3))
        self.contact_points = np.zeros((ns, 3))
        self._q_next = np.empty(model.nq)
        self._v_next = np.empty(model.nv)
        self.imus: list[ImuSensor] = []
        self.applied_torque = np.zeros(model.nv)  # generalized forces of the last step, after saturation
        self.reset()

    # --- state -------------------------------------------------------------------------------
    def reset(self, q: ArrayLike | None = None, v: ArrayLike | None = None, t: float = 0.0) -> None:
        """Set the state (default: ``model.neutral()``, zero velocity) and time; drops active pushes."""
        self.q = self.model.check_q(self.model.neutral() if q is None else q).copy()
        self.v = self.model.check_v(np.zeros(self.model.nv) if v is None else v).copy()
        if not (np.all(np.isfinite(self.q)) and np.all(np.isfinite(self.v))):
            raise ValueError("reset: q and v must be finite")
        if self.model.floating_base:
            self.q[3:7] /= np.linalg.norm(self.q[3:7])
        self.t = float(t)
        self._pushes = []
        self._update_push_arrays()
        self._anchors[:] = 0.0
        self._update_contact_state()
        for imu in self.imus:
            imu.reset(self.q, self.v, self.dt)
        mass_matrix = self._checked_mass_matrix()
        self._check_joint_dampers(mass_matrix)

    def _checked_mass_matrix(self) -> np.ndarray:
        """The mass matrix at ``q``; ``ValueError`` naming the bodies without rotational inertia when it is
        singular to working precision (its eigenvalues spread beyond ``1 / SINGULAR_CONDITION``: a force on
        such a body gives no acceleration, and the step's impulses fail on it)."""
        M = self.model.mass_matrix(self.q)
        eigenvalues = np.linalg.eigvalsh(M)
        if eigenvalues[0] > eigenvalues[-1] / SINGULAR_CONDITION:
            return M
        bare = [name for name, inertia in zip(self.model.body_names[1:], self.model.inertia[1:], strict=True)
                if np.abs(inertia).max() <= POINT_INERTIA]
        what = (f"moving bodies without rotational inertia: {', '.join(bare)}" if bare else
                "a moving body without inertia about its joint's axis")
        raise ValueError(f"the mass matrix at this configuration is singular ({what}): give those links an "
                         "<inertial> with a rotational inertia, or simulate them repaired "
                         "(create_backend(..., balance_inertia=True))")

    def _check_joint_dampers(self, mass_matrix: np.ndarray) -> None:
        """Integrate implicitly (``kernels.step``) the damper of every joint whose damper ``c`` (URDF damping
        plus its friction's slope at rest) on its inertia at this configuration, ``1 / (M^-1)_ii``, gives
        ``c dt / inertia`` above ``implicit_damping_ratio`` (explicitly its velocity would grow every step
        beyond ``DAMPING_STABILITY``), with one warning naming it: the step is first order in that damper.
        A joint once implicit stays so. A damper left explicit beyond ``DAMPING_STABILITY`` (a ratio set
        above it) is named in a warning too: the simulation will diverge."""
        damped = np.flatnonzero(self._joint_dampers[self._first_v:] > 0.0) + self._first_v
        damped = np.setdiff1d(damped, self._implicit_joints)
        if damped.size == 0:
            return
        inertia = 1.0 / np.diag(np.linalg.inv(mass_matrix))[damped]
        ratio = self._joint_dampers[damped] * self.dt / inertia
        bound, limit = DAMPING_STABILITY[self.integrator], self.implicit_damping_ratio
        for i, own, r in zip(damped.tolist(), inertia.tolist(), ratio.tolist(), strict=True):
            if r <= min(limit, bound) or i in self._diverging:
                continue
            name = self.model.joint_names[i - self._first_v]
            c, v0 = float(self._joint_dampers[i]), self._joint_friction_velocity
            damper = (f"joint {name!r}: its damper c = damping {self._damping[i]:g} + friction "
                      f"{self._friction[i]:g} / joint_friction_velocity {v0:g} = {c:.3g} on its inertia "
                      f"here, {own:.3g} (kg m^2, or kg), gives c dt / inertia = {r:.3g}")
            if r > limit:
                warnings.warn(f"{damper}, beyond implicit_damping_ratio {limit:g} ({self.integrator} "
                              f"diverges beyond {bound}): its damper is integrated implicitly, first order "
                              f"in dt; for the explicit step use dt <= {limit * own / c:.2g} s",
                              RuntimeWarning, stacklevel=3)
                self._implicit_joints = np.union1d(self._implicit_joints, [i]).astype(np.int64)
            else:
                self._diverging.add(i)
                warnings.warn(f"{damper}, beyond what {self.integrator} resolves ({bound}): the simulation "
                              f"will diverge; use dt <= {bound * own / c:.2g} s or a lower "
                              "implicit_damping_ratio", RuntimeWarning, stacklevel=3)

    def add_imu(self, frame: str, noise: ImuNoise | None = None, rng: np.random.Generator | int | None = None
                ) -> ImuSensor:
        """An IMU on ``frame``, updated after every step (``imu.reading``)."""
        imu = ImuSensor(self.model, frame, noise, rng)
        imu.reset(self.q, self.v, self.dt)
        self.imus.append(imu)
        return imu

    # --- inputs ------------------------------------------------------------------------------
    def apply_wrench(self, link: str, wrench: ArrayLike, duration: float) -> None:
        """Apply ``wrench = [f; tau]`` (world axes, about the origin of URDF link ``link``) during the next
        ``round(duration / dt)`` steps (at least one): a push of impulse ``f * steps * dt``."""
        frame = self.model.frame_id(link)
        w, steps = push_steps(wrench, duration, self.dt)
        body = int(self.model.frame_body[frame])
        self._pushes.append((body, self.model.frame_translation[frame].copy(), w, steps))
        self._update_push_arrays()

    def _update_push_arrays(self) -> None:
        n = len(self._pushes)
        body = np.array([p[0] for p in self._pushes], dtype=np.int64)
        offset = np.array([p[1] for p in self._pushes]).reshape(n, 3)
        wrench = np.array([p[2] for p in self._pushes]).reshape(n, 6)
        self._push_arrays = (body, offset, wrench)

    def _generalized_torque(self, tau: ArrayLike) -> np.ndarray:
        generalized = generalized_forces(self.model, tau)
        # as np.clip, cheaper
        result: np.ndarray = np.minimum(np.maximum(generalized, self._negative_effort), self._effort)
        return result

    # --- stepping ----------------------------------------------------------------------------
    def step(self, tau: ArrayLike) -> None:
        """Advance ``dt`` with the joint torques ``tau`` ((n_joints,) or (nv,)) held over the step."""
        tau = self._generalized_torque(tau)
        self.applied_torque = tau
        ki, kf = self.model.kernel_data
        body, offset, radius = self._spheres
        push_body, push_offset, push_wrench = self._push_arrays
        try:
            kernels.step(ki, kf, self.q, self.v, tau, self.dt, self._rk4, self.model.floating_base,
                         self._damping, self._friction, self._implicit_joints, self._params, self._anchors,
                         body, offset, radius, push_body, push_offset, push_wrench, self._mimic,
                         self._data.work, self._q_next, self._v_next, self.contact_forces,
                         self.contact_points)
        except (ArithmeticError, ValueError) as exc:  # the dynamics of a state blown up by the step
            raise self._diverged("the dynamics failed inside the step", exc) from exc
        self.q, self._q_next = self._q_next, self.q
        self.v, self._v_next = self._v_next, self.v
        if not (kernels.all_finite(self.q) and kernels.all_finite(self.v)):
            raise FloatingPointError(f"simulation diverged at t = {self.t:.6f} s (non-finite state); "
                                     "lower dt, or the contact stiffness / damping / friction regularisation")
        self.t += self.dt
        if self._pushes:
            self._pushes = [(b, o, w, n - 1) for b, o, w, n in self._pushes if n > 1]
            self._update_push_arrays()
        try:
            self._apply_impulses()
        except (ArithmeticError, ValueError) as exc:
            raise self._diverged("the contact and joint-limit impulses failed", exc) from exc
        for imu in self.imus:
            imu.update(self.q, self.v, self.dt)

    def _diverged(self, what: str, exc: Exception) -> FloatingPointError:
        return FloatingPointError(f"simulation diverged at t = {self.t:.6f} s ({what}: {exc}); lower dt, the "
                                  "pushes or torques, or the contact stiffness")

    def _apply_impulses(self) -> None:
        """Inelastic impulses of the hard contacts and the joint limits (module doc, item 3)."""
        rows = []
        joints = self.q[self._first_q:]
        if self._has_limits and kernels.outside_limits(joints, self._lower, self._upper):
            above = joints > self._upper
            for k in np.flatnonzero(above | (joints < self._lower)):
                row = np.zeros(self.model.nv)
                row[self._first_v + k] = -1.0 if above[k] else 1.0
                rows.append(row)
            np.clip(joints, self._lower, self._upper, out=joints)
        if self.contact.kind == "hard" and self.contact.spheres:
            rows += self._penetrating_contact_rows()
        if rows:
            dv, _ = inelastic_impulse(self.model.mass_matrix(self.q), np.array(rows), self.v)
            self.v += dv
            self._update_contact_state()

    def _penetrating_contact_rows(self) -> list[np.ndarray]:
        """Normal rows ``e_z^T J_p`` of the contact points below the ground (Robot Dynamics lecture notes
        (ETH) (2.154))."""
        rows = []
        for s in np.flatnonzero(self.contact_points[:, 2] < 0.0):
            frame = self._sphere_frames[s]
            J = self.model.frame_jacobian(self.q, frame, "local_world_aligned")
            d = self.contact_points[s] - self.model.frame_placement(self.q, frame)[:3, 3]
            # v_p = v_o + w x d = J_lin u - d x (J_ang u):  z row = J_lin[2] - (d x J_ang)[2]
            rows.append(J[2] - (d[0] * J[4] - d[1] * J[3]))
        return rows

    def _update_contact_state(self) -> None:
        """``contact_forces`` (each sphere's soft-contact ground reaction on the robot, world axes, N; zero
        when not touching; hard impulses not included) and ``contact_points`` (lowest points) at the state."""
        if len(self.contact.spheres):
            ki, kf = self.model.kernel_data
            body, offset, radius = self._spheres
            kernels.contact_state(ki, kf, self.q, self.v, self._params, self._anchors, body, offset, radius,
                                  self.contact_forces, self.contact_points)

    @property
    def in_contact(self) -> np.ndarray:
        """Per contact sphere: True when it touches or penetrates the ground."""
        return self.contact_points[:, 2] <= 0.0
