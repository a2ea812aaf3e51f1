"""Inverse dynamics by the recursive Newton-Euler algorithm (Modern Robotics, §8.3.2, (8.50)-(8.54); Robot
Dynamics lecture notes (ETH), §3.5).

The recursion runs in the body-frame form of ``kinodyn.dynamics.bodies``: every twist, acceleration and
wrench of body i in body i's frame, so each body's inertia is constant. Gravity enters as the universe's
acceleration ``A_0 = [-g; 0]``.

- forward pass, root to leaves: ``V_i = X_i V_p + S_i qd_i``, ``A_i = X_i A_p + S_i qdd_i + V_i x S_i qd_i``
  (``X_i``: the parent-to-child motion transform ``[Ad_{T_i,p}]``; Modern Robotics, (8.50)-(8.52)), and the
  wrench the body's motion needs, ``F_i = I_i A_i + V_i x* I_i V_i - f_ext,i`` (Modern Robotics, (8.40);
  Robot Dynamics lecture notes (ETH), §3.3.1, (3.25));
- backward pass, leaves to root: ``tau_i = S_i^T F_i`` and ``F_p += X_i^T F_i`` (Modern Robotics, (8.53),
  (8.54)).

A mimic joint moves with ``multiplier * qd`` of its master and adds ``multiplier * S^T F`` to the master's
entry.

``rnea_local`` is this recursion written with the spatial algebra of ``kinodyn.spatial.compiled``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit, prange
from numpy import empty, ndarray

from kinodyn.dynamics._inputs import NO_EXTERNAL_WRENCHES, external_wrenches, run_batch
from kinodyn.dynamics.bodies import LocalBodies, local_bodies_in
from kinodyn.dynamics.parallel import chunk_bounds
from kinodyn.inputs import F64, vector
from kinodyn.kernel import IN1, IN2, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.kernel_data import JOINT_FREEFLYER, JOINT_PRISMATIC, JOINT_REVOLUTE, ModelArrays, unpack
from kinodyn.kinematics.forward import joint_displacement
from kinodyn.linalg import NO_WORK, rows_view, work_block
from kinodyn.spatial.compiled import (
    Vec3,
    Vec6,
    add3,
    add6,
    body_wrench,
    crm,
    force_to_parent,
    inline,
    mat3_at,
    mat3_mul,
    mat3_vec,
    motion_to_child,
    set_mat3,
    set_vec3,
    set_vec6,
    sub6,
    vec3_at,
    vec6_at,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import ArrayLike

    from kinodyn.data import Data
    from kinodyn.model import Model

NO_WRENCHES = np.zeros((0, 6))  # a global array: numba freezes it into the compiled kernels


@inline
def joint_motion(joint_type: int, joint_axis: np.ndarray, i: int, scale: float, v: np.ndarray, a: np.ndarray,
                 iv: int) -> tuple[Vec6, Vec6]:
    """``(S_i qd_i, S_i qdd_i)`` in body i's axes for ``qd = scale v[iv:iv + nv_i]``, ``qdd = scale
    a[iv:iv + nv_i]``: revolute ``S = [0; n]``, prismatic ``[n; 0]``, free flyer the identity (``scale``: the
    mimic multiplier)."""
    if joint_type == JOINT_FREEFLYER:
        return ((scale * v[iv], scale * v[iv + 1], scale * v[iv + 2], scale * v[iv + 3], scale * v[iv + 4],
                 scale * v[iv + 5]),
                (scale * a[iv], scale * a[iv + 1], scale * a[iv + 2], scale * a[iv + 3], scale * a[iv + 4],
                 scale * a[iv + 5]))
    n0, n1, n2 = joint_axis[i, 0], joint_axis[i, 1], joint_axis[i, 2]
    if joint_type == JOINT_REVOLUTE:
        s, d = scale * v[iv], scale * a[iv]
        return (0.0, 0.0, 0.0, s * n0, s * n1, s * n2), (0.0, 0.0, 0.0, d * n0, d * n1, d * n2)
    if joint_type == JOINT_PRISMATIC:
        s, d = scale * v[iv], scale * a[iv]
        return (s * n0, s * n1, s * n2, 0.0, 0.0, 0.0), (d * n0, d * n1, d * n2, 0.0, 0.0, 0.0)
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@inline
def add_joint_force(joint_type: int, n: Vec3, scale: float, F: Vec6, iv: int, tau: np.ndarray) -> None:
    """``tau[iv:iv + nv_i] += scale S_i^T F`` (body axes, the columns of ``joint_motion``; ``n``: the joint
    axis). The axis comes as scalars: the model's axis array as an argument here would cost the backward
    pass reference-count updates per body."""
    if joint_type == JOINT_FREEFLYER:
        f0, f1, f2, n0, n1, n2 = F
        tau[iv] += scale * f0
        tau[iv + 1] += scale * f1
        tau[iv + 2] += scale * f2
        tau[iv + 3] += scale * n0
        tau[iv + 4] += scale * n1
        tau[iv + 5] += scale * n2
    elif joint_type == JOINT_REVOLUTE:
        tau[iv] += scale * (n[0] * F[3] + n[1] * F[4] + n[2] * F[5])
    elif joint_type == JOINT_PRISMATIC:
        tau[iv] += scale * (n[0] * F[0] + n[1] * F[1] + n[2] * F[2])


@inline
def rnea_local(md: ModelArrays, L: LocalBodies, q: np.ndarray, v: np.ndarray, a: np.ndarray, fext: np.ndarray,
               spatial: np.ndarray, tau: np.ndarray) -> None:
    """``tau = M a + b + g - J^T f_ext`` by the body-frame recursion (module docstring).

    ``L``, ``spatial``: from ``rnea_scratch`` (the placements ``E``, ``p`` are filled here at
    ``q``); ``spatial`` (3 nb + 2, 6): rows ``[0, nb)`` the twists, ``[nb, 2 nb)`` the accelerations,
    ``[2 nb, 3 nb)`` the wrenches. ``fext``: (0, 6) for none, else (nb, 6) body-frame wrenches about the body
    origins (the frame of the recursion, so they enter unchanged). 6-vectors are tuples of scalars, and
    arrays are indexed element by element (a per-body slice costs reference-count updates).
    """
    nb = md.nbodies
    parent, joint_type, joint_axis, idx_v, idx_q = md.parent, md.joint_type, md.joint_axis, md.idx_v, md.idx_q
    multiplier, offset, mass, gravity = md.joint_multiplier, md.joint_offset, md.mass, md.gravity
    R, t = md.joint_rotation, md.joint_translation
    E, p, h, inertia = L.E, L.p, L.h, L.inertia
    V, A, F = 0, nb, 2 * nb  # first rows of the twists, accelerations and wrenches in ``spatial``
    set_vec6(spatial, V, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    set_vec6(spatial, A, (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0))
    with_fext = fext.shape[0] > 0
    for i in range(1, nb):
        # body i in its parent: E_i = R_i L(q), p_i = t_i + R_i l(q) (Robot Dynamics lecture notes (ETH),
        # §2.8.3, (2.137)), kept for the backward pass
        l00, l01, l02, l10, l11, l12, l20, l21, l22, lx, ly, lz = joint_displacement(
            joint_type, joint_axis, multiplier, offset, idx_q, i, q)
        Ri = mat3_at(R, i)
        Ei = mat3_mul(Ri, (l00, l01, l02, l10, l11, l12, l20, l21, l22))
        oi = add3(vec3_at(t, i), mat3_vec(Ri, (lx, ly, lz)))
        set_mat3(E, i, Ei)
        set_vec3(p, i, oi)
        jt, iv, m, k = joint_type[i], idx_v[i], multiplier[i], parent[i]
        s, d = joint_motion(jt, joint_axis, i, m, v, a, iv)  # S_i qd_i, S_i qdd_i
        Vi = add6(motion_to_child(Ei, oi, vec6_at(spatial, V + k)), s)
        Ai = add6(add6(motion_to_child(Ei, oi, vec6_at(spatial, A + k)), d), crm(Vi, s))
        Fi = body_wrench(mass[i], vec3_at(h, i), mat3_at(inertia, i), Vi, Ai)
        if with_fext:
            Fi = sub6(Fi, vec6_at(fext, i))
        set_vec6(spatial, V + i, Vi)
        set_vec6(spatial, A + i, Ai)
        set_vec6(spatial, F + i, Fi)
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    for i in range(nb - 1, 0, -1):
        Fi = vec6_at(spatial, F + i)
        add_joint_force(joint_type[i], vec3_at(joint_axis, i), multiplier[i], Fi, idx_v[i], tau)
        k = parent[i]
        if k > 0:
            Fk = add6(vec6_at(spatial, F + k), force_to_parent(mat3_at(E, i), vec3_at(p, i), Fi))
            set_vec6(spatial, F + k, Fk)


@inline
def rnea_work_size(nb: int, nv: int) -> int:
    """Entries of ``rnea_scratch``'s block."""
    return 42 * nb + 12 + nv


@inline
def rnea_scratch(md: ModelArrays, work: np.ndarray) -> tuple[LocalBodies, np.ndarray, np.ndarray]:
    """``(L, spatial, zeros)`` for ``rnea_local`` as views of one block (``linalg.work_block``: the Data's
    work, or allocated): ``LocalBodies``, the (3 nb + 2, 6) scratch and a zero vector of nv entries."""
    return rnea_scratch_in(md, work_block(work, rnea_work_size(md.nbodies, md.nv)))


@inline
def rnea_scratch_in(md: ModelArrays, block: np.ndarray) -> tuple[LocalBodies, np.ndarray, np.ndarray]:
    """``rnea_scratch`` as views of ``block`` (``rnea_work_size`` entries)."""
    nb = md.nbodies
    zeros = block[42 * nb + 12:]
    for k in range(md.nv):
        zeros[k] = 0.0
    return local_bodies_in(md, block), rows_view(block, 24 * nb, 3 * nb + 2, 6), zeros


@njit(cache=True)
def rnea_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray, fext: np.ndarray,
                tau: np.ndarray) -> None:
    """``tau = M(q) a + b(q, v) + g(q) - sum J_i^T f_ext,i`` (Modern Robotics, §8.3.2; Robot Dynamics lecture
    notes (ETH), §3.5, (3.54)), the scratch allocated here.

    The calls without a Data run this kernel, ``rnea_data_kernel`` the calls with one: a scratch that is
    always a fresh allocation compiles to faster code than one that may also be a Data's block."""
    md = unpack(ki, kf)
    L, spatial, _ = rnea_scratch_in(md, np.empty(rnea_work_size(md.nbodies, md.nv)))
    rnea_local(md, L, q, v, a, fext, spatial, tau)


@njit(cache=True)
def rnea_data_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                     fext: np.ndarray, work: np.ndarray, tau: np.ndarray) -> None:
    """``rnea_kernel`` with the scratch in ``work`` (a Data's)."""
    md = unpack(ki, kf)
    L, spatial, _ = rnea_scratch(md, work)
    rnea_local(md, L, q, v, a, fext, spatial, tau)


@njit(cache=True)
def nonlinear_effects_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, work: np.ndarray,
                             out: np.ndarray) -> None:
    """``out = b(q, v) + g(q)``: RNEA with ``a = 0`` (Modern Robotics, §8.5, h from the RNEA at zero
    acceleration)."""
    md = unpack(ki, kf)
    L, spatial, zeros = rnea_scratch(md, work)
    rnea_local(md, L, q, v, zeros, NO_WRENCHES, spatial, out)


@njit(cache=True)
def gravity_torques_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, work: np.ndarray,
                           out: np.ndarray) -> None:
    """``out = g(q)``: RNEA with ``v = a = 0`` (Robot Dynamics lecture notes (ETH), §3.5, (3.45))."""
    md = unpack(ki, kf)
    L, spatial, zeros = rnea_scratch(md, work)
    rnea_local(md, L, q, zeros, zeros, NO_WRENCHES, spatial, out)


@njit(cache=True)
def rnea_rows(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, V: np.ndarray, A: np.ndarray, out: np.ndarray,
               start: int, stop: int) -> None:
    """``out[k] = rnea(Q[k], V[k], A[k])`` for ``start <= k < stop``, with one set of scratch arrays."""
    md = unpack(ki, kf)
    L, spatial, _ = rnea_scratch(md, np.empty(0))
    for k in range(start, stop):
        rnea_local(md, L, Q[k], V[k], A[k], NO_WRENCHES, spatial, out[k])


@njit(cache=True, parallel=True)
def rnea_batch_kernel(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, V: np.ndarray, A: np.ndarray,
                      chunks: int, out: np.ndarray) -> None:
    """``out[k] = rnea(Q[k], V[k], A[k])`` for every row (no external wrenches), in ``chunks``
    contiguous chunks of rows on numba's threads (``kinodyn.dynamics.parallel``)."""
    n = Q.shape[0]
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        rnea_rows(ki, kf, Q, V, A, out, start, stop)


_RNEA = Kernel(rnea_kernel, KI, KF, IN1, IN1, IN1, IN2, OUT1)
_RNEA_DATA = Kernel(rnea_data_kernel, KI, KF, IN1, IN1, IN1, IN2, OUT1, OUT1)
_NONLINEAR_EFFECTS = Kernel(nonlinear_effects_kernel, KI, KF, IN1, IN1, OUT1, OUT1)
_GRAVITY_TORQUES = Kernel(gravity_torques_kernel, KI, KF, IN1, OUT1, OUT1)
_RNEA_BATCH = Kernel(rnea_batch_kernel, KI, KF, IN2, IN2, IN2, INT, OUT2)
_RNEA_ROWS = Kernel(rnea_rows, KI, KF, IN2, IN2, IN2, OUT2, INT, INT)


def rnea(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike,
         f_ext: ArrayLike | Mapping[str, ArrayLike] | None = None, data: Data | None = None) -> np.ndarray:
    """Joint efforts ``tau = M(q) a + b(q, v) + g(q) - sum_i J_i^T f_ext,i`` (Robot Dynamics lecture notes
    (ETH), §3.7, (3.54)).

    ``f_ext``: wrenches acting on the robot, ``None``, an (nbodies, 6) array of body-frame wrenches
    ``[f; tau]`` about each body origin, or ``{link name: wrench in the link frame}`` (see
    ``kinodyn.dynamics._inputs.external_wrenches``). Floating base: the first six entries are the
    base wrench (base frame) that the motion needs. With ``data``: into and as ``data.tau``.
    """
    nv = model.nv
    shape = model.v_shape
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != shape:
        v = vector(v, nv, "v")
    if type(a) is not ndarray or a.dtype is not F64 or a.shape != shape:
        a = vector(a, nv, "a")
    ki, kf = model.kernel_data
    fext = NO_EXTERNAL_WRENCHES if f_ext is None else external_wrenches(model, f_ext)
    if data is None:
        tau = empty(nv)
        _RNEA.call(ki, kf, q, v, a, fext, tau)
        return tau
    tau = data.of(model).tau
    _RNEA_DATA.call(ki, kf, q, v, a, fext, data.work, tau)
    return tau


def nonlinear_effects(model: Model, q: ArrayLike, v: ArrayLike, data: Data | None = None) -> np.ndarray:
    """``b(q, v) + g(q)``: Coriolis, centrifugal and gravity terms (RNEA with zero acceleration); with
    ``data``: into and as ``data.nle``."""
    nv = model.nv
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != model.v_shape:
        v = vector(v, nv, "v")
    if data is None:
        out, work = empty(nv), NO_WORK
    else:
        out, work = data.of(model).nle, data.work
    ki, kf = model.kernel_data
    _NONLINEAR_EFFECTS.call(ki, kf, q, v, work, out)
    return out


def gravity_torques(model: Model, q: ArrayLike, data: Data | None = None) -> np.ndarray:
    """``g(q)``: efforts that hold the robot still against gravity (Robot Dynamics lecture notes (ETH), §3.5,
    (3.45)); with ``data``: into and as ``data.g``."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    if data is None:
        out, work = empty(model.nv), NO_WORK
    else:
        out, work = data.of(model).g, data.work
    ki, kf = model.kernel_data
    _GRAVITY_TORQUES.call(ki, kf, q, work, out)
    return out


def rnea_batch(model: Model, Q: ArrayLike, V: ArrayLike, A: ArrayLike) -> np.ndarray:
    """(N, nv): ``rnea(Q[k], V[k], A[k])`` for each row (no external wrenches), equal to the row-by-row
    results, computed on numba's threads as ``kinodyn.dynamics._inputs.run_batch`` describes."""
    return run_batch(model, Q, V, A, "A", _RNEA_BATCH, _RNEA_ROWS)
