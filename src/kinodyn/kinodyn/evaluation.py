"""One evaluation of the robot per control tick, as Pinocchio's ``Data`` / ``computeAllTerms``.

``Evaluator(model, frames).evaluate(q, v)`` returns an ``Evaluation``: everything a control tick reads at
``(q, v)`` (mass matrix, nonlinear effects, gravity torques, the placements, Jacobians and ``Jdot v`` of
the frames asked for, centre of mass, its Jacobian and ``Jcom_dot v``, the centroidal momentum matrix and
``Adot_G v``). Robot Dynamics lecture notes (ETH) §3.9 (3.80) (``wdot = J qdd + Jdot qd``) and §3.5; Robot
Dynamics Essential §3.7 (96).

Jacobians are ``local_world_aligned`` (velocity of the frame origin and angular velocity, world axes),
``bias_accelerations`` the matching classical accelerations at ``qdd = 0``. One compiled kernel computes
everything from one shared kinematics pass: the body placements, joint columns and world inertias
(``kinodyn.dynamics.bodies.world_bodies``), then the twists ``V_i = V_p + S_i qd_i`` and the accelerations
at ``qdd = 0``, ``A_i = A_p + V_p x S_i qd_i`` (``dS_i/dt = V_i x S_i``, Modern Robotics, Def. 8.3, (8.37)),
all in world axes at the world origin (``kinodyn.dynamics.bodies``). From them:

- ``M``: the CRBA on the composite inertias (``kinodyn.dynamics.crba.crba_composites``; Modern Robotics,
  §8.4, (8.57));
- ``h = C v + g``: the RNEA at ``qdd = 0`` in world form, body wrench ``I_i A_i + V_i x* I_i V_i``
  (Modern Robotics, (8.40), with the world inertia's rate ``V x* I - I V x``), summed up the tree and
  projected, ``tau_j = S_j^T F_j`` (Modern Robotics, (8.49)); gravity ``g_j = S_j^T Ic_j [-g; 0]`` on the
  composites (Robot Dynamics lecture notes (ETH), §3.5, (3.45));
- frames: ``T_world_f = T_world_b T_b_f``; ``local_world_aligned`` Jacobian columns
  ``[s_v + s_w x o; s_w]`` of the joints on the frame's support, ``o`` the frame origin (Robot
  Dynamics lecture notes (ETH), §2.8.5, (2.166)); classical ``Jdot v = [a_O + dw x o + w x v_o; dw]`` from the
  body's ``(V, A)`` (Robot Dynamics lecture notes (ETH), §2.7, ``a_P = a_B + Psi x r_BP + Omega x (Omega x
  r_BP)``);
- centroidal: ``A_G`` (``kinodyn.dynamics.centroidal.centroidal_composites``; Robot Dynamics Essential,
  §3.5, (96)), the CoM ``c = hc_0 / m``, ``J_com = A_G[0:3] / m`` (``p = m dc/dt``), and from the total
  momentum rate at ``qdd = 0`` without gravity ``(dp, dL_O) = sum_i F_i``: ``Jcom_dot v = dp / m`` and
  ``Adot_G v = [dp; dL_O - c x dp]`` (``h_G = L_O - c x p``, ``dc/dt x p = 0``).

The outputs, and copies of q and v, are views of one float64 block laid out by ``kinodyn.data.Layout``
(``evaluation_slots``): a fresh block per evaluation, or with ``data`` the block of a ``kinodyn.data.Data``,
whose ``evaluation`` the call returns (overwritten by the next call; nothing allocated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit
from numpy import empty, ndarray
from numpy.lib.stride_tricks import as_strided

from kinodyn.dynamics.bodies import body_wrench, joint_nv, joint_twist, subtree_inertias_into, world_bodies
from kinodyn.dynamics.centroidal import centroidal_composites
from kinodyn.dynamics.crba import crba_composites
from kinodyn.inputs import F64
from kinodyn.kernel import IN1, KF, KI, OUT1, Kernel
from kinodyn.kernel_data import JOINT_FREEFLYER, unpack
from kinodyn.kinematics.center_of_mass import check_mass
from kinodyn.layout import Layout
from kinodyn.linalg import NO_WORK, matrices_view, rows_view, work_block
from kinodyn.spatial.compiled import inline

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from kinodyn.data import Data
    from kinodyn.model import Model

OK = 0
Q_NOT_FINITE = 1
V_NOT_FINITE = 2
ZERO_QUATERNION = 3

EVALUATION_FIELDS = ("mass_matrix", "nonlinear_effects", "gravity_torques", "placements", "jacobians",
                     "bias_accelerations", "com", "com_jacobian", "com_bias_acceleration",
                     "centroidal_matrix", "centroidal_bias", "q", "v")
"""The slots of an evaluation, in the order ``evaluate_kernel`` reads their offsets."""
(MASS_MATRIX, NONLINEAR_EFFECTS, GRAVITY_TORQUES, PLACEMENTS, JACOBIANS, BIAS_ACCELERATIONS, COM,
 COM_JACOBIAN, COM_BIAS_ACCELERATION, CENTROIDAL_MATRIX, CENTROIDAL_BIAS, Q_COPY,
 V_COPY) = range(len(EVALUATION_FIELDS))


def evaluation_slots(nq: int, nv: int, k: int) -> list[tuple[str, tuple[int, ...]]]:
    """``(name, shape)`` of every ``EVALUATION_FIELDS`` slot for ``k`` frames (``kinodyn.layout.Layout``)."""
    shapes: tuple[tuple[int, ...], ...] = ((nv, nv), (nv,), (nv,), (k, 4, 4), (k, 6, nv), (k, 6), (3,),
                                           (3, nv), (3,), (6, nv), (6,), (nq,), (nv,))
    return list(zip(EVALUATION_FIELDS, shapes, strict=True))


@inline
def _check_inputs(q: np.ndarray, v: np.ndarray, iq_base: int) -> int:
    """``OK``, or the first problem: a non-finite entry of q or v, or a zero quaternion of the free flyer
    whose position starts at ``q[iq_base]`` (``iq_base < 0``: none)."""
    for k in range(q.shape[0]):
        if not math.isfinite(q[k]):
            return Q_NOT_FINITE
    for k in range(v.shape[0]):
        if not math.isfinite(v[k]):
            return V_NOT_FINITE
    if iq_base >= 0 and (q[iq_base + 3] * q[iq_base + 3] + q[iq_base + 4] * q[iq_base + 4]
                         + q[iq_base + 5] * q[iq_base + 5] + q[iq_base + 6] * q[iq_base + 6]) == 0.0:
        return ZERO_QUATERNION
    return OK


@inline
def evaluation_work_size(nb: int, nv: int) -> int:
    """Entries of ``evaluate_kernel``'s work block."""
    return 91 * nb + 36


@njit(cache=True)
def evaluate_kernel(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, v: np.ndarray, frames: np.ndarray,
                    offsets: np.ndarray, work: np.ndarray, out: np.ndarray) -> int:
    """Fills ``out`` (slots at ``offsets``, ``evaluation_slots`` order) at ``(q, v)`` for the frame ids
    ``frames``; returns ``OK`` or, with ``out`` untouched, the input problem code. The model must have mass
    on its moving bodies. Scratch: ``work[:evaluation_work_size]`` (``linalg.work_block``)."""
    md = unpack(ki, kf)
    floating = md.nbodies > 1 and md.joint_type[1] == JOINT_FREEFLYER  # the free flyer is the root's joint
    status = _check_inputs(q, v, md.idx_q[1] if floating else -1)
    if status != OK:
        return status
    nb, nv, k = md.nbodies, md.nv, frames.shape[0]
    o = offsets
    M = rows_view(out, o[MASS_MATRIX], nv, nv)
    h = out[o[NONLINEAR_EFFECTS]:o[NONLINEAR_EFFECTS + 1]]
    g = out[o[GRAVITY_TORQUES]:o[GRAVITY_TORQUES + 1]]
    T = as_strided(out[o[PLACEMENTS]:o[PLACEMENTS + 1]], shape=(k, 4, 4), strides=(128, 32, 8))
    J = as_strided(out[o[JACOBIANS]:o[JACOBIANS + 1]], shape=(k, 6, nv), strides=(48 * nv, 8 * nv, 8))
    bias = rows_view(out, o[BIAS_ACCELERATIONS], k, 6)
    com = out[o[COM]:o[COM + 1]]
    J_com = rows_view(out, o[COM_JACOBIAN], 3, nv)
    com_bias = out[o[COM_BIAS_ACCELERATION]:o[COM_BIAS_ACCELERATION + 1]]
    A_G = rows_view(out, o[CENTROIDAL_MATRIX], 6, nv)
    A_G_bias = out[o[CENTROIDAL_BIAS]:o[CENTROIDAL_BIAS + 1]]
    for a in range(q.shape[0]):
        out[o[Q_COPY] + a] = q[a]
    for a in range(nv):
        out[o[V_COPY] + a] = v[a]

    W = world_bodies(md, q, work)
    block = work_block(work[60 * nb:], 31 * nb + 36)
    mc, hc, Ic = block[0:nb], rows_view(block, nb, nb, 3), matrices_view(block, 4 * nb, nb)
    V = rows_view(block, 13 * nb, nb, 6)
    A = rows_view(block, 19 * nb, nb, 6)
    F = rows_view(block, 25 * nb, nb, 6)
    subtree_inertias_into(md, W, mc, hc, Ic)
    crba_composites(md, W, mc, hc, Ic, rows_view(block, 31 * nb, 6, 6), M)
    centroidal_composites(md, W, mc, hc, Ic, A_G)
    _motion_and_wrenches(md.parent, md.joint_type, md.idx_v, md.joint_multiplier, md.mass, W.S, W.h,
                         W.inertia, v, V, A, F)
    _joint_forces(md.parent, md.joint_type, md.idx_v, md.joint_multiplier, md.gravity, W.S, mc, hc, F, h, g)
    total = mc[0]
    c0, c1, c2 = hc[0, 0] / total, hc[0, 1] / total, hc[0, 2] / total
    com[0], com[1], com[2] = c0, c1, c2
    for a in range(3):
        for col in range(nv):
            J_com[a, col] = A_G[a, col] / total
    p0, p1, p2 = F[0, 0], F[0, 1], F[0, 2]
    com_bias[0], com_bias[1], com_bias[2] = p0 / total, p1 / total, p2 / total
    A_G_bias[0], A_G_bias[1], A_G_bias[2] = p0, p1, p2
    A_G_bias[3] = F[0, 3] - (c1 * p2 - c2 * p1)
    A_G_bias[4] = F[0, 4] - (c2 * p0 - c0 * p2)
    A_G_bias[5] = F[0, 5] - (c0 * p1 - c1 * p0)
    for n in range(k):
        _frame_terms(md.parent, md.joint_type, md.idx_v, md.joint_multiplier, md.frame_body,
                     md.frame_rotation, md.frame_translation, W.C, W.r, W.S, V, A, frames[n], T[n], J[n],
                     bias[n])
    return OK


@inline
def _motion_and_wrenches(parent: np.ndarray, joint_type: np.ndarray, idx_v: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                         multiplier: np.ndarray, mass: np.ndarray, S: np.ndarray, hw: np.ndarray,
                         inertia: np.ndarray, v: np.ndarray, V: np.ndarray, A: np.ndarray,
                         F: np.ndarray) -> None:
    """Twists ``V``, accelerations ``A`` at ``qdd = 0`` and wrenches ``F`` summed over each subtree
    (``F[0]``: all moving bodies), from the joint columns ``S`` and world inertias ``(mass, hw, inertia)``.

    ``F_i = I_i A_i + V_i x* (I_i V_i)``, with ``I V = [m v + w x h; I_O w + h x v]``
    (``kinodyn.spatial.compiled.inertia_mul``).
    """
    nb = parent.shape[0]
    for a in range(6):
        V[0, a] = 0.0
        A[0, a] = 0.0
        F[0, a] = 0.0
    for i in range(1, nb):
        p = parent[i]
        n = joint_nv(joint_type[i])
        iv = idx_v[i]
        m = multiplier[i]
        s0, s1, s2, s3, s4, s5 = joint_twist(S, i, v, iv, n, m)
        u0, u1, u2, y0, y1, y2 = V[p, 0], V[p, 1], V[p, 2], V[p, 3], V[p, 4], V[p, 5]
        # A_i = A_p + V_p x (S qd)
        a0 = A[p, 0] + y1 * s2 - y2 * s1 + u1 * s5 - u2 * s4
        a1 = A[p, 1] + y2 * s0 - y0 * s2 + u2 * s3 - u0 * s5
        a2 = A[p, 2] + y0 * s1 - y1 * s0 + u0 * s4 - u1 * s3
        b0 = A[p, 3] + y1 * s5 - y2 * s4
        b1 = A[p, 4] + y2 * s3 - y0 * s5
        b2 = A[p, 5] + y0 * s4 - y1 * s3
        v0, v1, v2, w0, w1, w2 = u0 + s0, u1 + s1, u2 + s2, y0 + s3, y1 + s4, y2 + s5
        V[i, 0], V[i, 1], V[i, 2], V[i, 3], V[i, 4], V[i, 5] = v0, v1, v2, w0, w1, w2
        A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5] = a0, a1, a2, b0, b1, b2
        F[i, 0], F[i, 1], F[i, 2], F[i, 3], F[i, 4], F[i, 5] = body_wrench(
            mass[i], hw, inertia, i, v0, v1, v2, w0, w1, w2, a0, a1, a2, b0, b1, b2)
    for i in range(nb - 1, 0, -1):
        p = parent[i]
        for a in range(6):
            F[p, a] += F[i, a]


@inline
def _joint_forces(parent: np.ndarray, joint_type: np.ndarray, idx_v: np.ndarray, multiplier: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                  gravity: np.ndarray, S: np.ndarray, mc: np.ndarray, hc: np.ndarray, F: np.ndarray,
                  h: np.ndarray, g: np.ndarray) -> None:
    """``g_j = m_j S_j^T [-mc_j g; hc_j x (-g)]`` and ``h_j = m_j S_j^T F_j + g_j`` for every joint column
    (``m_j``: the mimic multiplier; a mimic joint adds to its master's entry)."""
    for col in range(h.shape[0]):
        h[col] = 0.0
        g[col] = 0.0
    e0, e1, e2 = -gravity[0], -gravity[1], -gravity[2]
    for j in range(1, parent.shape[0]):
        n = joint_nv(joint_type[j])
        if n == 0:
            continue
        m = mc[j]
        k0, k1, k2 = hc[j, 0], hc[j, 1], hc[j, 2]
        x0, x1, x2 = m * e0, m * e1, m * e2
        x3, x4, x5 = k1 * e2 - k2 * e1, k2 * e0 - k0 * e2, k0 * e1 - k1 * e0
        f0, f1, f2, f3, f4, f5 = F[j, 0], F[j, 1], F[j, 2], F[j, 3], F[j, 4], F[j, 5]
        iv = idx_v[j]
        scale = multiplier[j]
        for c in range(n):
            s0, s1, s2, s3, s4, s5 = S[j, 0, c], S[j, 1, c], S[j, 2, c], S[j, 3, c], S[j, 4, c], S[j, 5, c]
            gc = scale * (s0 * x0 + s1 * x1 + s2 * x2 + s3 * x3 + s4 * x4 + s5 * x5)
            g[iv + c] += gc
            h[iv + c] += scale * (s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5) + gc


@inline
def _frame_terms(parent: np.ndarray, joint_type: np.ndarray, idx_v: np.ndarray, multiplier: np.ndarray,  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
                 frame_body: np.ndarray, frame_rotation: np.ndarray, frame_translation: np.ndarray,
                 C: np.ndarray, r: np.ndarray, S: np.ndarray, V: np.ndarray, A: np.ndarray, frame: int,
                 T: np.ndarray, J: np.ndarray, bias: np.ndarray) -> None:
    """Placement ``T`` (4x4), ``local_world_aligned`` Jacobian ``J`` (6 x nv) and classical ``Jdot v``
    ``bias`` (6,) of ``frame`` from the body placements ``(C, r)``, columns ``S`` and ``(V, A)``."""
    b = frame_body[frame]
    for a in range(3):
        t = r[b, a]
        for e in range(3):
            T[a, e] = (C[b, a, 0] * frame_rotation[frame, 0, e] + C[b, a, 1] * frame_rotation[frame, 1, e]
                       + C[b, a, 2] * frame_rotation[frame, 2, e])
            t += C[b, a, e] * frame_translation[frame, e]
        T[a, 3] = t
        T[3, a] = 0.0
    T[3, 3] = 1.0
    o0, o1, o2 = T[0, 3], T[1, 3], T[2, 3]
    for a in range(6):
        for col in range(J.shape[1]):
            J[a, col] = 0.0
    i = b
    while i > 0:
        iv = idx_v[i]
        m = multiplier[i]
        for c in range(joint_nv(joint_type[i])):
            s0, s1, s2 = m * S[i, 0, c], m * S[i, 1, c], m * S[i, 2, c]
            s3, s4, s5 = m * S[i, 3, c], m * S[i, 4, c], m * S[i, 5, c]
            J[0, iv + c] += s0 + s4 * o2 - s5 * o1
            J[1, iv + c] += s1 + s5 * o0 - s3 * o2
            J[2, iv + c] += s2 + s3 * o1 - s4 * o0
            J[3, iv + c] += s3
            J[4, iv + c] += s4
            J[5, iv + c] += s5
        i = parent[i]
    w0, w1, w2 = V[b, 3], V[b, 4], V[b, 5]
    d0, d1, d2 = A[b, 3], A[b, 4], A[b, 5]
    u0 = V[b, 0] + w1 * o2 - w2 * o1  # velocity of the frame origin
    u1 = V[b, 1] + w2 * o0 - w0 * o2
    u2 = V[b, 2] + w0 * o1 - w1 * o0
    bias[0] = A[b, 0] + d1 * o2 - d2 * o1 + w1 * u2 - w2 * u1
    bias[1] = A[b, 1] + d2 * o0 - d0 * o2 + w2 * u0 - w0 * u2
    bias[2] = A[b, 2] + d0 * o1 - d1 * o0 + w0 * u1 - w1 * u0
    bias[3], bias[4], bias[5] = d0, d1, d2


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The robot at one ``(q, v)``; see the module doc. Arrays are fresh per evaluation, or a Data's."""

    q: np.ndarray
    v: np.ndarray
    frames: tuple[str, ...]
    mass_matrix: np.ndarray  # (nv, nv)
    nonlinear_effects: np.ndarray  # (nv,) C v + g
    gravity_torques: np.ndarray  # (nv,)
    placements: np.ndarray  # (k, 4, 4) world <- frame
    jacobians: np.ndarray  # (k, 6, nv) local_world_aligned
    bias_accelerations: np.ndarray  # (k, 6) Jdot v, classical, local_world_aligned
    com: np.ndarray  # (3,)
    com_jacobian: np.ndarray  # (3, nv)
    com_bias_acceleration: np.ndarray  # (3,) Jcom_dot v
    centroidal_matrix: np.ndarray  # (6, nv) A_G, about the CoM, world axes, [linear; angular]
    centroidal_bias: np.ndarray  # (6,) Adot_G v
    total_mass: float

    def frame_index(self, frame: str) -> int:
        """Row of ``frame`` in the per-frame arrays; ``KeyError`` naming the evaluated frames."""
        try:
            return self.frames.index(frame)
        except ValueError:
            raise KeyError(f"frame {frame!r} was not evaluated; evaluated frames: {list(self.frames)}"
                           ) from None

    def placement(self, frame: str) -> np.ndarray:
        row: np.ndarray = self.placements[self.frame_index(frame)]
        return row

    def jacobian(self, frame: str) -> np.ndarray:
        row: np.ndarray = self.jacobians[self.frame_index(frame)]
        return row

    def bias_acceleration(self, frame: str) -> np.ndarray:
        row: np.ndarray = self.bias_accelerations[self.frame_index(frame)]
        return row


class Evaluator:
    """Evaluates ``model`` at ``(q, v)`` for a fixed list of frames (names or ids), in one compiled pass.

    The model must have mass on its moving bodies (the CoM, ``A_G`` and the dynamics need it): otherwise
    ``ValueError`` at construction, as ``kinodyn.kinematics.center_of_mass``. ``evaluate`` raises
    ``ValueError`` for q or v of the wrong size, with a non-finite entry, or a zero base quaternion, so
    every array of an ``Evaluation`` is finite.
    """

    def __init__(self, model: Model, frames: Sequence[str | int] = ()) -> None:
        check_mass(model)
        self.model = model
        ids = frame_ids(model, frames)
        self.frames: tuple[str, ...] = tuple(model.frame_names[i] for i in ids)
        self.total_mass = model.total_mass
        self._ids = np.array(ids, dtype=np.int64)
        self._ids.flags.writeable = False
        self.layout = Layout(evaluation_slots(model.nq, model.nv, len(ids)))
        offsets, shapes = self.layout.offsets, self.layout.shapes
        self._slices = tuple((int(offsets[k]), int(offsets[k + 1]), shapes[k]) for k in range(len(shapes)))

    def create_data(self) -> Data:
        """A ``Data`` of the model for this evaluator's frames (``evaluate(q, v, data)``)."""
        return self.model.create_data(self.frames)

    def evaluate(self, q: ArrayLike, v: ArrayLike, data: Data | None = None) -> Evaluation:
        """Everything in ``Evaluation`` at ``(q, v)``; see the class doc for the errors.

        Without ``data`` the arrays (``q``, ``v`` copied) are views of one fresh block: nothing is shared
        between evaluations or with the caller. With ``data`` (from ``create_data``, the same frames) the
        result is ``data.evaluation``, whose arrays are the Data's (``data.M`` is its mass matrix, ...),
        overwritten by the next call; nothing is allocated.
        """
        m = self.model
        if type(q) is not ndarray or q.dtype is not F64 or q.shape != m.q_shape:  # the common case inline
            q = m.check_q(q)
        if type(v) is not ndarray or v.dtype is not F64 or v.shape != m.v_shape:
            v = m.check_v(v)
        ki, kf = m.kernel_data
        if data is not None:
            if data.of(m).frames != self.frames:
                raise ValueError(f"data was created for the frames {list(data.frames)}, this evaluator "
                                 f"evaluates {list(self.frames)}: use evaluator.create_data()")
            status = _EVALUATE.call(ki, kf, q, v, self._ids, data.layout.offsets, data.work, data.block)
            if status:
                raise ValueError(_PROBLEMS[status])
            return data.evaluation
        out = empty(self.layout.size)
        status = _EVALUATE.call(ki, kf, q, v, self._ids, self.layout.offsets, NO_WORK, out)
        if status:
            raise ValueError(_PROBLEMS[status])
        (s_M, e_M, sh_M), (s_h, e_h, _), (s_g, e_g, _), (s_T, e_T, sh_T), (s_J, e_J, sh_J), \
            (s_b, e_b, sh_b), (s_c, e_c, _), (s_Jc, e_Jc, sh_Jc), (s_bc, e_bc, _), (s_A, e_A, sh_A), \
            (s_Ab, e_Ab, _), (s_q, e_q, _), (s_v, e_v, _) = self._slices
        ev = _new(Evaluation)  # every field set here, as the frozen dataclass __init__ would (a tick cost)
        ev.__dict__.update(
            q=out[s_q:e_q], v=out[s_v:e_v], frames=self.frames,
            mass_matrix=out[s_M:e_M].reshape(sh_M), nonlinear_effects=out[s_h:e_h],
            gravity_torques=out[s_g:e_g],
            placements=out[s_T:e_T].reshape(sh_T), jacobians=out[s_J:e_J].reshape(sh_J),
            bias_accelerations=out[s_b:e_b].reshape(sh_b),
            com=out[s_c:e_c], com_jacobian=out[s_Jc:e_Jc].reshape(sh_Jc),
            com_bias_acceleration=out[s_bc:e_bc],
            centroidal_matrix=out[s_A:e_A].reshape(sh_A), centroidal_bias=out[s_Ab:e_Ab],
            total_mass=self.total_mass,
        )
        return ev


def frame_ids(model: Model, frames: Sequence[str | int]) -> list[int]:
    """Ids of ``frames`` (names or ids) in order, repeats dropped; ``KeyError`` for an unknown frame."""
    return list(dict.fromkeys(model.frame_id(f) for f in frames))


_new = object.__new__
_EVALUATE = Kernel(evaluate_kernel, KI, KF, IN1, IN1, KI, KI, OUT1, OUT1)
_PROBLEMS = {
    Q_NOT_FINITE: "q has a non-finite entry (NaN or inf); pass a finite configuration",
    V_NOT_FINITE: "v has a non-finite entry (NaN or inf); pass a finite velocity",
    ZERO_QUATERNION: "q's base quaternion (q[3:7]) is zero; pass a unit quaternion (x, y, z, w)",
}
