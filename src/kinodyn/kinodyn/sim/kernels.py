"""Compiled hot path of the simulator: the state derivative with every force, and one integrator step.

``acceleration`` evaluates ``qdd = M^-1 (tau - tau_joint(qd) - b - g + sum J_c^T f_c + sum J_e^T w_e)``
(Robot Dynamics lecture notes (ETH) §3.7, (3.54) with external forces) by the articulated-body algorithm
(``kinodyn.dynamics.aba``), or by CRBA + Cholesky for models with mimic joints. The forces are:

- joint damping and regularised Coulomb friction,
  ``tau_joint = damping qd + friction qd / sqrt(qd^2 + friction_velocity^2)``, explicit, or for the joints
  whose damper the step cannot resolve explicitly implicit (at the end of the step, linearised; ``step``);
- soft ground contact of each sphere against the plane z = 0 (Robot Dynamics lecture notes (ETH) §3.7.1,
  (3.57): the
  spring-damper ``k (r_c0 - r_c) - d dr_c`` towards the first-touch point r_c0, made unilateral and
  bounded by the Coulomb cone): penetration ``delta = radius - z_centre``,
  ground reaction on the robot at the lowest point p of the sphere ``f_n = max(0, k delta - d v_pz)``,
  tangential ``f_t = kt (p0 - p)_t - dt v_pt`` projected onto the disc ``|f_t| <= mu f_n``
  (``v_p``: velocity of the body point at p; ``p0``: the first-touch point, see ``update_anchors``);
- external wrenches ``[f; tau]`` in world axes at a point fixed in a body (pushes).

All spatial quantities are in world axes about the world origin (``kinodyn.dynamics.bodies``), so a force f
at p is the wrench ``[f; p x f]``.

Integrators (tau held over the step): RK4 on (q, v), the position stages taken on the configuration
manifold with ``integrate`` (free-flyer base: SE(3) exponential, with the Runge-Kutta-Munthe-Kaas
correction that keeps fourth order when the body twist rotates with the body), and semi-implicit
(symplectic) Euler ``v+ = v + dt a(q, v)``, ``q+ = q (+) dt v+``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kinodyn.dynamics.aba import forward_dynamics_world
from kinodyn.dynamics.bodies import WorldBodies, velocities, world_bodies
from kinodyn.kernel_data import ModelArrays, unpack
from kinodyn.kinematics.configuration import integrate_kernel
from kinodyn.spatial.compiled import add_motion_cross

# Indices into the ``params`` array of the kernels.
STIFFNESS, DAMPING, FRICTION, TANGENTIAL_STIFFNESS, TANGENTIAL_DAMPING, JOINT_FRICTION_VELOCITY = range(6)
N_PARAMS = 6
RK4_WEIGHTS = (1.0, 2.0, 2.0, 1.0)  # of the stages' rates in the step
RK4_NEXT_STAGE = (0.5, 0.5, 1.0)  # where the next stage is taken, as a fraction of dt


@njit(cache=True)
def contact_forces(W: WorldBodies, V: np.ndarray, sphere_body: np.ndarray, sphere_offset: np.ndarray,
                   sphere_radius: np.ndarray, params: np.ndarray, anchors: np.ndarray, forces: np.ndarray,
                   points: np.ndarray) -> None:
    """Ground reaction ``forces[s]`` (world) at the lowest point ``points[s]`` of each sphere (module doc).

    ``V``: world twists of the bodies. ``anchors[s] = (x0, y0, touching)``: the first-touch point of
    the tangential spring, valid when ``touching == 1``. Spheres above the ground get zero force.
    """
    k, d, mu = params[STIFFNESS], params[DAMPING], params[FRICTION]
    kt, dt_ = params[TANGENTIAL_STIFFNESS], params[TANGENTIAL_DAMPING]
    for s in range(sphere_body.shape[0]):
        b = sphere_body[s]
        C = W.C[b]
        o = sphere_offset[s]
        for a in range(3):
            points[s, a] = C[a, 0] * o[0] + C[a, 1] * o[1] + C[a, 2] * o[2] + W.r[b, a]
        points[s, 2] -= sphere_radius[s]
        depth = -points[s, 2]
        if depth <= 0.0:
            forces[s, :] = 0.0
            continue
        p0, p1, p2 = points[s, 0], points[s, 1], points[s, 2]
        w0, w1, w2 = V[b, 3], V[b, 4], V[b, 5]
        vx = V[b, 0] + w1 * p2 - w2 * p1
        vy = V[b, 1] + w2 * p0 - w0 * p2
        vz = V[b, 2] + w0 * p1 - w1 * p0
        fn = k * depth - d * vz
        fn = max(fn, 0.0)
        fx = -dt_ * vx
        fy = -dt_ * vy
        if anchors[s, 2] == 1.0:
            fx += kt * (anchors[s, 0] - p0)
            fy += kt * (anchors[s, 1] - p1)
        norm = math.sqrt(fx * fx + fy * fy)
        cap = mu * fn
        if norm > cap:
            fx *= cap / norm
            fy *= cap / norm
        forces[s, 0] = fx
        forces[s, 1] = fy
        forces[s, 2] = fn


@njit(cache=True)
def update_anchors(points: np.ndarray, params: np.ndarray, forces: np.ndarray, anchors: np.ndarray) -> None:
    """First-touch points at the end of a step: set on touchdown, cleared on lift-off, and dragged along
    while sliding so that the spring force ``kt |p - p0|`` stays within ``mu f_n`` (Robot Dynamics lecture
    notes (ETH) (3.57))."""
    kt, mu = params[TANGENTIAL_STIFFNESS], params[FRICTION]
    for s in range(points.shape[0]):
        if points[s, 2] >= 0.0:
            anchors[s, 2] = 0.0
            continue
        if anchors[s, 2] != 1.0:
            anchors[s, 0] = points[s, 0]
            anchors[s, 1] = points[s, 1]
            anchors[s, 2] = 1.0
            continue
        ex = points[s, 0] - anchors[s, 0]
        ey = points[s, 1] - anchors[s, 1]
        stretch = math.sqrt(ex * ex + ey * ey)
        limit = mu * forces[s, 2] / kt if kt > 0.0 else 0.0
        if stretch > limit:
            scale = limit / stretch
            anchors[s, 0] = points[s, 0] - scale * ex
            anchors[s, 1] = points[s, 1] - scale * ey


@njit(cache=True)
def _add_point_force(f: np.ndarray, p: np.ndarray, out: np.ndarray) -> None:
    """``out += [f; p x f]``: a force f at the world point p as a wrench about the world origin."""
    out[0] += f[0]
    out[1] += f[1]
    out[2] += f[2]
    out[3] += p[1] * f[2] - p[2] * f[1]
    out[4] += p[2] * f[0] - p[0] * f[2]
    out[5] += p[0] * f[1] - p[1] * f[0]


@njit(cache=True)
def _world_to_body(W: WorldBodies, fw: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = [C^T f; C^T (n_O - r x f)]``: world wrenches about the origin as body-frame wrenches
    about the body origin (the inverse of ``kinodyn.spatial.compiled.force_to_parent`` at the body's world
    placement)."""
    out[0, :] = 0.0
    for i in range(1, fw.shape[0]):
        C = W.C[i]
        r = W.r[i]
        f0, f1, f2 = fw[i, 0], fw[i, 1], fw[i, 2]
        n0 = fw[i, 3] - (r[1] * f2 - r[2] * f1)
        n1 = fw[i, 4] - (r[2] * f0 - r[0] * f2)
        n2 = fw[i, 5] - (r[0] * f1 - r[1] * f0)
        for a in range(3):
            out[i, a] = C[0, a] * f0 + C[1, a] * f1 + C[2, a] * f2
            out[i, 3 + a] = C[0, a] * n0 + C[1, a] * n1 + C[2, a] * n2


@njit(cache=True)
def acceleration(md: ModelArrays, q: np.ndarray, v: np.ndarray, tau: np.ndarray, first_joint_v: int,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                 joint_damping: np.ndarray, joint_friction: np.ndarray, implicit: np.ndarray,
                 implicit_step: float, armature: np.ndarray, params: np.ndarray, anchors: np.ndarray,
                 sphere_body: np.ndarray, sphere_offset: np.ndarray, sphere_radius: np.ndarray,
                 push_body: np.ndarray, push_offset: np.ndarray, push_wrench: np.ndarray,
                 use_cholesky: bool, work: np.ndarray, qdd: np.ndarray, forces: np.ndarray) -> None:
    """``qdd`` under every force of the module doc; ``forces`` receives the contact forces (world). The
    bodies and the forward dynamics' scratch are in ``work`` (``linalg.work_block``;
    ``dynamics.aba.aba_work_size``).

    The dampers of the joints ``implicit`` (their velocity indices) act at ``qd + implicit_step qdd``,
    linearised: their slope ``c = damping + friction e^2 / (qd^2 + e^2)^(3/2)`` times ``implicit_step``
    joins the joint's inertia (an armature; written into ``armature``, (nv,) zeros, or empty when
    ``implicit`` is), so ``(M + implicit_step C) qdd = rest - tau_joint(qd)``."""
    nb = md.nbodies
    W = world_bodies(md, q, work)
    fw = np.zeros((nb, 6))
    ns = sphere_body.shape[0]
    if ns > 0:
        V = np.empty((nb, 6))
        velocities(md, W, v, V)
        points = np.empty((ns, 3))
        contact_forces(W, V, sphere_body, sphere_offset, sphere_radius, params, anchors, forces, points)
        for s in range(ns):
            _add_point_force(forces[s], points[s], fw[sphere_body[s]])
    p = np.empty(3)
    for e in range(push_body.shape[0]):
        b = push_body[e]
        C = W.C[b]
        o = push_offset[e]
        for a in range(3):
            p[a] = C[a, 0] * o[0] + C[a, 1] * o[1] + C[a, 2] * o[2] + W.r[b, a]
        _add_point_force(push_wrench[e, 0:3], p, fw[b])
        for a in range(3):
            fw[b, 3 + a] += push_wrench[e, 3 + a]
    fext = np.empty((nb, 6))
    _world_to_body(W, fw, fext)
    tau_net = tau.copy()
    eps2 = params[JOINT_FRICTION_VELOCITY] ** 2
    for k in range(first_joint_v, md.nv):
        qd = v[k]
        tau_net[k] -= joint_damping[k] * qd + joint_friction[k] * qd / math.sqrt(qd * qd + eps2)
    for k in implicit:
        qd2 = v[k] * v[k] + eps2
        armature[k] = implicit_step * (joint_damping[k] + joint_friction[k] * eps2 / (qd2 * math.sqrt(qd2)))
    forward_dynamics_world(md, W, q, v, tau_net, fext, armature, use_cholesky, work[60 * nb:], qdd)


@njit(cache=True)
def _dexp_inv_right(u: np.ndarray, xi: np.ndarray, out: np.ndarray) -> None:
    """``out[:6] = xi + [u, xi] / 2 + [u, [u, xi]] / 12``: the rate of u with ``q(t) = q0 exp(u(t))`` for
    the body twist ``xi = [v; w]`` (inverse of the SE(3) exponential's differential, truncated after
    the terms RK4 needs; Munthe-Kaas's RKMK method). ``[a, b] = [w_a x v_b + v_a x w_b; w_a x w_b]``."""
    first = np.zeros(6)
    second = np.zeros(6)
    add_motion_cross(u[0:6], xi[0:6], 1.0, first)
    add_motion_cross(u[0:6], first, 1.0, second)
    for k in range(6):
        out[k] = xi[k] + 0.5 * first[k] + second[k] / 12.0


@njit(cache=True)
def step(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, tau: np.ndarray, dt: float, rk4: bool,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
         floating: bool, joint_damping: np.ndarray, joint_friction: np.ndarray, implicit: np.ndarray,
         params: np.ndarray, anchors: np.ndarray, sphere_body: np.ndarray, sphere_offset: np.ndarray,
         sphere_radius: np.ndarray, push_body: np.ndarray, push_offset: np.ndarray, push_wrench: np.ndarray,
         use_cholesky: bool, work: np.ndarray, q_out: np.ndarray, v_out: np.ndarray, forces: np.ndarray,
         points: np.ndarray) -> None:
    """One step of RK4 (``rk4``) or semi-implicit Euler from ``(q, v)`` to ``(q_out, v_out)``.

    RK4 (Runge-Kutta-Munthe-Kaas on the free flyer): stages ``q_i = q (+) u_i``, ``v_i = v + c_i dt a_{i-1}``
    with ``u_i = c_i dt k_{i-1}``, ``c = (0, 1/2, 1/2, 1)``, ``k_i = dexp^-1(u_i) v_i`` (``= v_i`` on
    joints), ``a_i = qdd(q_i, v_i)``; ``q+ = q (+) dt (k_1 + 2 k_2 + 2 k_3 + k_4) / 6``,
    ``v+ = v + dt (a_1 + 2 a_2 + 2 a_3 + a_4) / 6``. On a fixed base this is classical RK4.
    The dampers of the joints ``implicit`` are taken at ``qd + dt qdd`` in every stage (``acceleration``):
    on a damper alone, ``lambda = -c / I``, each stage then sees ``-c / (I + c dt)``, whose
    ``|lambda dt| < 1`` is within both integrators' stability for any c (backward Euler in the damper,
    linearised; first order in it). The contact anchors are held over the step and updated at its end;
    ``forces``, ``points``: the contact forces and points at ``(q_out, v_out)``. ``work``: the dynamics'
    scratch, a ``kinodyn.data.Data``'s work block (or empty: allocated per stage).
    """
    md = unpack(ki, kf)
    nv = md.nv
    first = 6 if floating else 0
    a = np.empty(nv)
    armature = np.zeros(nv if implicit.shape[0] > 0 else 0)
    if rk4:
        k_sum = np.zeros(nv)
        a_sum = np.zeros(nv)
        ki_ = np.empty(nv)
        u = np.zeros(nv)
        vi = v.copy()
        qi = q.copy()
        for stage in range(4):
            weight = RK4_WEIGHTS[stage]
            acceleration(md, qi, vi, tau, first, joint_damping, joint_friction, implicit, dt, armature,
                         params, anchors, sphere_body, sphere_offset, sphere_radius, push_body, push_offset,
                         push_wrench, use_cholesky, work, a, forces)
            ki_[:] = vi
            if floating and stage > 0:
                _dexp_inv_right(u, vi, ki_)
            for k in range(nv):
                k_sum[k] += weight * ki_[k]
                a_sum[k] += weight * a[k]
            if stage == len(RK4_WEIGHTS) - 1:
                break
            h = RK4_NEXT_STAGE[stage] * dt
            for k in range(nv):
                u[k] = h * ki_[k]
                vi[k] = v[k] + h * a[k]
            integrate_kernel(q, u, 1.0, floating, qi)
        for k in range(nv):
            k_sum[k] *= 1.0 / 6.0
            v_out[k] = v[k] + dt * a_sum[k] / 6.0
        integrate_kernel(q, k_sum, dt, floating, q_out)
    else:
        acceleration(md, q, v, tau, first, joint_damping, joint_friction, implicit, dt, armature, params,
                     anchors, sphere_body, sphere_offset, sphere_radius, push_body, push_offset, push_wrench,
                     use_cholesky, work, a, forces)
        for k in range(nv):
            v_out[k] = v[k] + dt * a[k]
        integrate_kernel(q, v_out, dt, floating, q_out)
    if sphere_body.shape[0] > 0:
        contact_state(ki, kf, q_out, v_out, params, anchors, sphere_body, sphere_offset, sphere_radius,
                      forces, points)
        update_anchors(points, params, forces, anchors)


@njit(cache=True)
def contact_state(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, params: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                  anchors: np.ndarray, sphere_body: np.ndarray, sphere_offset: np.ndarray,
                  sphere_radius: np.ndarray, forces: np.ndarray, points: np.ndarray) -> None:
    """Soft-contact forces and lowest points of the spheres at ``(q, v)`` (as ``contact_forces``)."""
    md = unpack(ki, kf)
    W = world_bodies(md, q, np.empty(0))
    V = np.empty((md.nbodies, 6))
    velocities(md, W, v, V)
    contact_forces(W, V, sphere_body, sphere_offset, sphere_radius, params, anchors, forces, points)


@njit(cache=True)
def all_finite(x: np.ndarray) -> bool:
    """True when every entry of the 1-D array ``x`` is finite."""
    for k in range(x.shape[0]):  # noqa: SIM110 (a loop: numba compiles no generator in all())
        if not math.isfinite(x[k]):
            return False
    return True


@njit(cache=True)
def outside_limits(joints: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> bool:
    """True when a joint position is above its ``upper`` or below its ``lower`` limit."""
    for k in range(joints.shape[0]):  # noqa: SIM110 (a loop: numba compiles no generator in any())
        if joints[k] > upper[k] or joints[k] < lower[k]:
            return True
    return False
