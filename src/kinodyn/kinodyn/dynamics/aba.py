"""Forward dynamics: articulated-body algorithm (world-frame form), and the mass-matrix route for
models with mimic joints.

ABA: three passes over the tree. (1) twists ``V_i``, velocity-product accelerations
``c_i = V_i x S_i qd_i`` and the rigid-body bias wrenches ``pA_i = V_i x* I_i V_i - f_ext,i``;
(2) leaves to root, articulated inertias ``IA_i`` and bias ``pA_i``: ``U = IA S``, ``D = S^T U``,
``u = tau - S^T pA``, and the parent receives ``IA - U D^-1 U^T`` and
``pA + (IA - U D^-1 U^T) c + U D^-1 u``; (3) root to leaves,
``qdd = D^-1 (u - U^T (A_p + c))``, ``A_i = A_p + c + S qdd`` with ``A_0 = [-g; 0]``.
All quantities in world axes (``kinodyn.dynamics.bodies``), so no transforms between bodies. This solves
Modern Robotics, §8.5, (8.81) (``M qdd = tau - h - J^T F``) in O(n) by the recursive elimination of
Modern Robotics, §8.3's twist-wrench recursion; the texts give only the mass-matrix route (§8.5), used
here for mimic joints, whose coupled coordinates the recursion cannot eliminate body by body.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit, prange
from numpy import empty, ndarray
from numpy.lib.stride_tricks import as_strided

from kinodyn.dynamics._inputs import NO_EXTERNAL_WRENCHES, external_wrenches, run_batch
from kinodyn.dynamics.bodies import (
    WorldBodies,
    allocate_world_bodies,
    fill_world_bodies,
    joint_nv,
    joint_twist,
    world_bodies,
    world_bodies_in,
)
from kinodyn.dynamics.crba import crba_world
from kinodyn.dynamics.parallel import chunk_bounds
from kinodyn.dynamics.rnea import rnea_local, rnea_scratch, rnea_work_size
from kinodyn.inputs import F64, vector
from kinodyn.kernel import BOOL, IN1, IN2, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.kernel_data import JOINT_FREEFLYER, JOINT_NONE, ModelArrays, unpack
from kinodyn.linalg import NO_WORK, cholesky_solve, rows_view, work_block
from kinodyn.spatial.compiled import (
    add6,
    crf,
    crm,
    force_to_parent,
    inertia_mul,
    inline,
    mat3_at,
    rigid_inertia_matrix,
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

NO_ARMATURE = np.empty(0)  # the joints' own inertias alone


@inline
def allocate_aba_scratch(nb: int, work: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scratch of ``aba_world_into`` for ``nb`` bodies in one block (``linalg.work_block``): (5 nb, 6) rows
    and (3 nb, 6, 6) blocks."""
    return aba_scratch_in(nb, work_block(work, 138 * nb))


@inline
def aba_scratch_in(nb: int, block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``allocate_aba_scratch`` as views of ``block`` (138 nb entries)."""
    return (rows_view(block, 0, 5 * nb, 6),
            as_strided(block[30 * nb:], shape=(3 * nb, 6, 6), strides=(288, 48, 8)))


@inline
def aba_world(md: ModelArrays, W: WorldBodies, v: np.ndarray, tau: np.ndarray, fext: np.ndarray,
              armature: np.ndarray, work: np.ndarray, qdd: np.ndarray) -> None:
    """``qdd = (M + diag(armature))^-1 (tau - b - g + J^T f_ext)`` at the placements ``W`` (no mimic
    joints; ``armature``: (nv,), or empty for none), the scratch in ``work[:138 nb]``."""
    X, B = allocate_aba_scratch(md.nbodies, work)
    aba_world_into(md, W, v, tau, fext, armature, X, B, qdd)


@inline
def aba_world_into(md: ModelArrays, W: WorldBodies, v: np.ndarray, tau: np.ndarray, fext: np.ndarray,  # noqa: PLR0912, PLR0915  (one compiled pass on scalar locals)
                   armature: np.ndarray, X: np.ndarray, B: np.ndarray, qdd: np.ndarray) -> None:
    """``aba_world`` with the scratch ``X, B = allocate_aba_scratch(nb)``.

    ``armature`` (an inertia added to a 1-dof joint's own coordinate, e.g. a rotor's reflected inertia)
    enters as ``D = S^T U + armature``: the recursion then solves ``M + diag(armature)`` (Featherstone,
    Rigid Body Dynamics Algorithms, §7.3's joint-space inertia of the articulated body); the free flyer's
    entries are not read.

    Rows of ``X``: ``[0, nb)`` twists V, ``[nb, 2 nb)`` velocity-product accelerations c,
    ``[2 nb, 3 nb)`` bias wrenches pA, ``[3 nb, 4 nb)`` ``u = tau - S^T pA``, ``[4 nb, 5 nb)``
    accelerations. Blocks of ``B``: ``[0, nb)`` articulated inertias IA, ``[nb, 2 nb)`` ``U = IA S``,
    ``B[2 nb + i, 0, 0] = 1 / D`` of a 1-dof joint, ``B[2 nb + i]`` the lower triangle of the free flyer's
    ``D = S^T IA S``. Arrays are indexed element by element (no per-body slices: each costs
    reference-count updates). The free flyer is the root's joint (``urdf.parse_urdf``), so its
    D is only needed in the last pass and is solved there by Cholesky, never inverted.
    """
    nb = md.nbodies
    parent, joint_type, idx_v, mass, gravity = md.parent, md.joint_type, md.idx_v, md.mass, md.gravity
    C, r, S, h, inertia = W.C, W.r, W.S, W.h, W.inertia
    cC, cP, cU, cA = nb, 2 * nb, 3 * nb, 4 * nb  # first rows of c, pA, u, acc in X (V at 0)
    bU, bD = nb, 2 * nb  # first blocks of U and D in B (IA at 0)
    with_fext = fext.shape[0] > 0
    with_armature = armature.shape[0] > 0
    for k in range(6):
        X[0, k] = 0.0
    # pass 1, root to leaves: V_i = V_p + S qd, c_i = V_i x S qd, IA_i = I_i, pA_i = V_i x* I_i V_i - f_ext
    for i in range(1, nb):
        pi = parent[i]
        s = joint_twist(S, i, v, idx_v[i], joint_nv(joint_type[i]), 1.0)  # S qd
        Vi = add6(vec6_at(X, pi), s)
        set_vec6(X, i, Vi)
        set_vec6(X, cC + i, crm(Vi, s))
        m, hi, Ii = mass[i], vec3_at(h, i), mat3_at(inertia, i)
        rigid_inertia_matrix(m, hi, Ii, B, i)
        pA = crf(Vi, inertia_mul(m, hi, Ii, Vi))
        if with_fext:  # body-frame wrench about the body origin -> world axes about the world origin
            pA = sub6(pA, force_to_parent(mat3_at(C, i), vec3_at(r, i), vec6_at(fext, i)))
        set_vec6(X, cP + i, pA)
    # pass 2, leaves to root: U = IA S, D = S^T U, u = tau - S^T pA; the parent receives
    # Ia = IA - U D^-1 U^T and pA + Ia c + U D^-1 u = pA + IA c + U D^-1 (u - U^T c)
    for i in range(nb - 1, 0, -1):
        jt = joint_type[i]
        iv = idx_v[i]
        pi = parent[i]
        if jt == JOINT_FREEFLYER:
            if pi != 0:
                raise ValueError("a free-flyer joint must connect the root body to the universe")
            for c in range(6):
                for a in range(6):
                    x = 0.0
                    for k in range(6):
                        x += B[i, a, k] * S[i, k, c]
                    B[bU + i, a, c] = x
                x = tau[iv + c]
                for k in range(6):
                    x -= S[i, k, c] * X[cP + i, k]
                X[cU + i, c] = x
            for a in range(6):
                for c in range(a + 1):  # the lower triangle: all that cholesky_solve reads
                    x = 0.0
                    for k in range(6):
                        x += S[i, k, a] * B[bU + i, k, c]
                    B[bD + i, a, c] = x
            continue
        if jt == JOINT_NONE:
            dinv = 0.0
            for a in range(6):
                B[bU + i, a, 0] = 0.0
            X[cU + i, 0] = 0.0
        else:
            s0, s1, s2, s3, s4, s5 = S[i, 0, 0], S[i, 1, 0], S[i, 2, 0], S[i, 3, 0], S[i, 4, 0], S[i, 5, 0]
            d = armature[iv] if with_armature else 0.0
            x = tau[iv]
            for a in range(6):
                y = (B[i, a, 0] * s0 + B[i, a, 1] * s1 + B[i, a, 2] * s2 + B[i, a, 3] * s3 + B[i, a, 4] * s4
                     + B[i, a, 5] * s5)
                B[bU + i, a, 0] = y
                d += S[i, a, 0] * y
                x -= S[i, a, 0] * X[cP + i, a]
            dinv = 1.0 / d
            B[bD + i, 0, 0] = dinv
            X[cU + i, 0] = x
        if pi == 0:
            continue
        # scalar copies: the stores into the parent's rows below would force reloads of array entries
        c0, c1, c2 = X[cC + i, 0], X[cC + i, 1], X[cC + i, 2]
        c3, c4, c5 = X[cC + i, 3], X[cC + i, 4], X[cC + i, 5]
        u0, u1, u2 = B[bU + i, 0, 0], B[bU + i, 1, 0], B[bU + i, 2, 0]
        u3, u4, u5 = B[bU + i, 3, 0], B[bU + i, 4, 0], B[bU + i, 5, 0]
        gain = (X[cU + i, 0] - (u0 * c0 + u1 * c1 + u2 * c2 + u3 * c3 + u4 * c4 + u5 * c5)) * dinv
        e0, e1, e2, e3, e4, e5 = u0 * dinv, u1 * dinv, u2 * dinv, u3 * dinv, u4 * dinv, u5 * dinv
        for a in range(6):
            ua = B[bU + i, a, 0]
            i0, i1, i2, i3, i4, i5 = B[i, a, 0], B[i, a, 1], B[i, a, 2], B[i, a, 3], B[i, a, 4], B[i, a, 5]
            B[pi, a, 0] += i0 - ua * e0
            B[pi, a, 1] += i1 - ua * e1
            B[pi, a, 2] += i2 - ua * e2
            B[pi, a, 3] += i3 - ua * e3
            B[pi, a, 4] += i4 - ua * e4
            B[pi, a, 5] += i5 - ua * e5
            X[cP + pi, a] += (X[cP + i, a] + (i0 * c0 + i1 * c1 + i2 * c2 + i3 * c3 + i4 * c4 + i5 * c5)
                              + ua * gain)
    # pass 3, root to leaves: qdd = D^-1 (u - U^T (A_p + c)), A_i = A_p + c + S qdd, A_0 = [-g; 0]
    for k in range(3):
        X[cA, k] = -gravity[k]
        X[cA, 3 + k] = 0.0
    for i in range(1, nb):
        jt = joint_type[i]
        iv = idx_v[i]
        pi = parent[i]
        a0 = X[cA + pi, 0] + X[cC + i, 0]
        a1 = X[cA + pi, 1] + X[cC + i, 1]
        a2 = X[cA + pi, 2] + X[cC + i, 2]
        a3 = X[cA + pi, 3] + X[cC + i, 3]
        a4 = X[cA + pi, 4] + X[cC + i, 4]
        a5 = X[cA + pi, 5] + X[cC + i, 5]
        if jt == JOINT_FREEFLYER:
            for c in range(6):
                qdd[iv + c] = X[cU + i, c] - (B[bU + i, 0, c] * a0 + B[bU + i, 1, c] * a1
                                              + B[bU + i, 2, c] * a2 + B[bU + i, 3, c] * a3
                                              + B[bU + i, 4, c] * a4 + B[bU + i, 5, c] * a5)
            cholesky_solve(B[bD + i], qdd[iv:iv + 6], 6)
            a0, a1, a2, a3, a4, a5 = add6((a0, a1, a2, a3, a4, a5), joint_twist(S, i, qdd, iv, 6, 1.0))
        elif jt != JOINT_NONE:
            x = (X[cU + i, 0] - (B[bU + i, 0, 0] * a0 + B[bU + i, 1, 0] * a1 + B[bU + i, 2, 0] * a2
                                 + B[bU + i, 3, 0] * a3 + B[bU + i, 4, 0] * a4 + B[bU + i, 5, 0] * a5)
                 ) * B[bD + i, 0, 0]
            qdd[iv] = x
            a0 += S[i, 0, 0] * x
            a1 += S[i, 1, 0] * x
            a2 += S[i, 2, 0] * x
            a3 += S[i, 3, 0] * x
            a4 += S[i, 4, 0] * x
            a5 += S[i, 5, 0] * x
        j = cA + i
        X[j, 0], X[j, 1], X[j, 2], X[j, 3], X[j, 4], X[j, 5] = a0, a1, a2, a3, a4, a5


@inline
def aba_work_size(nb: int, nv: int) -> int:
    """Entries of the work block of ``forward_dynamics_kernel``: the bodies, then
    ``forward_dynamics_world``'s scratch."""
    return 60 * nb + max(138 * nb, nv * nv + max(13 * nb + 36, rnea_work_size(nb, nv)))


@inline
def forward_dynamics_world(md: ModelArrays, W: WorldBodies, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
                           fext: np.ndarray, armature: np.ndarray, use_cholesky: bool, work: np.ndarray,
                           qdd: np.ndarray) -> None:
    """``qdd = (M + diag(armature))^-1 (tau - h + J^T f_ext)`` at the placements ``W`` (``armature``: (nv,),
    or empty for none): the articulated-body algorithm, or with ``use_cholesky`` (models with mimic joints)
    the CRBA, the RNEA at zero acceleration and a Cholesky solve (Modern Robotics, §8.5, (8.81) and the
    recipe after it). Scratch in ``work`` (``linalg.work_block``)."""
    if not use_cholesky:
        aba_world(md, W, v, tau, fext, armature, work, qdd)
        return
    nv = md.nv
    M = rows_view(work_block(work, nv * nv), 0, nv, nv)
    rest = work[nv * nv:]  # the CRBA's scratch, then (once M is built) the RNEA's
    crba_world(md, W, M, rest)
    for k in range(armature.shape[0]):
        M[k, k] += armature[k]
    L, spatial, zeros = rnea_scratch(md, rest)
    rnea_local(md, L, q, v, zeros, fext, spatial, qdd)
    for k in range(nv):
        qdd[k] = tau[k] - qdd[k]
    cholesky_solve(M, qdd, nv)


@njit(cache=True)
def aba_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
               fext: np.ndarray, out: np.ndarray) -> None:
    """``out = qdd`` by the articulated-body algorithm (models without mimic joints), the scratch allocated
    here (the calls without a Data: see ``rnea.rnea_kernel``; the others run ``forward_dynamics_kernel``)."""
    md = unpack(ki, kf)
    nb = md.nbodies
    W = world_bodies_in(nb, np.empty(60 * nb))
    fill_world_bodies(md, q, W)
    X, B = aba_scratch_in(nb, np.empty(138 * nb))
    aba_world_into(md, W, v, tau, fext, NO_ARMATURE, X, B, out)


@njit(cache=True)
def forward_dynamics_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
                            fext: np.ndarray, use_cholesky: bool, work: np.ndarray, out: np.ndarray) -> None:
    """``out = qdd`` by ``forward_dynamics_world`` (the articulated-body algorithm, or with ``use_cholesky``
    through the mass matrix), the scratch in ``work`` (a Data's, or allocated)."""
    md = unpack(ki, kf)
    W = world_bodies(md, q, work)
    forward_dynamics_world(md, W, q, v, tau, fext, NO_ARMATURE, use_cholesky, work[60 * md.nbodies:], out)


@njit(cache=True)
def aba_rows(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, V: np.ndarray, TAU: np.ndarray, out: np.ndarray,
              start: int, stop: int) -> None:
    """``out[k] = aba(Q[k], V[k], TAU[k])`` for ``start <= k < stop``, with one set of scratch arrays."""
    md = unpack(ki, kf)
    none = np.empty((0, 6))
    W = allocate_world_bodies(md.nbodies, np.empty(0))
    X, B = allocate_aba_scratch(md.nbodies, np.empty(0))
    for k in range(start, stop):
        fill_world_bodies(md, Q[k], W)
        aba_world_into(md, W, V[k], TAU[k], none, NO_ARMATURE, X, B, out[k])


@njit(cache=True, parallel=True)
def aba_batch_kernel(ki: np.ndarray, kf: np.ndarray, Q: np.ndarray, V: np.ndarray, TAU: np.ndarray,
                     chunks: int, out: np.ndarray) -> None:
    """``out[k] = aba(Q[k], V[k], TAU[k])`` for every row (no external wrenches, no mimic joints), in
    ``chunks`` contiguous chunks of rows on numba's threads (``kinodyn.dynamics.parallel``)."""
    n = Q.shape[0]
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        aba_rows(ki, kf, Q, V, TAU, out, start, stop)


_ABA = Kernel(aba_kernel, KI, KF, IN1, IN1, IN1, IN2, OUT1)
_FORWARD_DYNAMICS = Kernel(forward_dynamics_kernel, KI, KF, IN1, IN1, IN1, IN2, BOOL, OUT1, OUT1)
_ABA_BATCH = Kernel(aba_batch_kernel, KI, KF, IN2, IN2, IN2, INT, OUT2)
_ABA_ROWS = Kernel(aba_rows, KI, KF, IN2, IN2, IN2, OUT2, INT, INT)


def aba(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike,
        f_ext: ArrayLike | Mapping[str, ArrayLike] | None = None, data: Data | None = None) -> np.ndarray:
    """Accelerations ``qdd = M^-1 (tau - b - g + sum_i J_i^T f_ext,i)``; ``f_ext`` as in ``rnea``; with
    ``data``: into and as ``data.ddq``.

    Models with mimic joints are solved through ``M`` (CRBA) and a Cholesky factorisation
    (Modern Robotics, §8.5), as the articulated-body recursion needs independent joint coordinates.
    """
    nv = model.nv
    shape = model.v_shape
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model.q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != shape:
        v = vector(v, nv, "v")
    if type(tau) is not ndarray or tau.dtype is not F64 or tau.shape != shape:
        tau = vector(tau, nv, "tau")
    ki, kf = model.kernel_data
    fext = NO_EXTERNAL_WRENCHES if f_ext is None else external_wrenches(model, f_ext)
    if data is None and not model.mimic_joint_names:
        out = empty(nv)
        _ABA.call(ki, kf, q, v, tau, fext, out)
    else:
        out, work = (empty(nv), NO_WORK) if data is None else (data.of(model).ddq, data.work)
        _FORWARD_DYNAMICS.call(ki, kf, q, v, tau, fext, bool(model.mimic_joint_names), work, out)
    return out


def aba_batch(model: Model, Q: ArrayLike, V: ArrayLike, TAU: ArrayLike) -> np.ndarray:
    """(N, nv): ``aba(Q[k], V[k], TAU[k])`` for each row (no external wrenches), equal to the row-by-row
    results, computed on numba's threads as ``kinodyn.dynamics._inputs.run_batch`` describes."""
    if model.mimic_joint_names:
        raise ValueError(f"aba_batch needs a model without mimic joints; {model.name!r} has "
                         f"{list(model.mimic_joint_names)} (use aba row by row)")
    return run_batch(model, Q, V, TAU, "TAU", _ABA_BATCH, _ABA_ROWS)
