"""Inverse dynamics by the recursive Newton-Euler algorithm (Seed 001 §8.3.2, (8.50)-(8.54))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn._kernels import dyn_rnea as _k
from kinodyn._kernels.dyn_parallel import chunk_count
from kinodyn._kernels.entry import IN1, IN2, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.dynamics._inputs import external_wrenches, rows, vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_RNEA = Kernel(_k.rnea, KI, KF, IN1, IN1, IN1, IN2, OUT1)
_NONLINEAR_EFFECTS = Kernel(_k.nonlinear_effects, KI, KF, IN1, IN1, OUT1)
_GRAVITY_TORQUES = Kernel(_k.gravity_torques, KI, KF, IN1, OUT1)
_RNEA_BATCH = Kernel(_k.rnea_batch, KI, KF, IN2, IN2, IN2, INT, OUT2)


def rnea(model: Model, q: Any, v: Any, a: Any, f_ext: Any = None) -> np.ndarray:
    """Joint efforts ``tau = M(q) a + b(q, v) + g(q) - sum_i J_i^T f_ext,i`` (Seed 000 §3.7, (3.54)).

    ``f_ext``: wrenches acting on the robot, ``None``, an (nbodies, 6) array of body-frame wrenches
    ``[f; tau]`` about each body origin, or ``{link name: wrench in the link frame}`` (see
    ``kinodyn.dynamics._inputs.external_wrenches``). Floating base: the first six entries are the
    base wrench (base frame) that the motion needs.
    """
    nv = model.nv
    tau = np.empty(nv)
    ki, kf = model.kernel_data
    _RNEA.call(ki, kf, vector(q, model.nq, "q"), vector(v, nv, "v"), vector(a, nv, "a"),
            external_wrenches(model, f_ext), tau)
    return tau


def nonlinear_effects(model: Model, q: Any, v: Any) -> np.ndarray:
    """``b(q, v) + g(q)``: Coriolis, centrifugal and gravity terms (RNEA with zero acceleration)."""
    out = np.empty(model.nv)
    ki, kf = model.kernel_data
    _NONLINEAR_EFFECTS.call(ki, kf, vector(q, model.nq, "q"), vector(v, model.nv, "v"), out)
    return out


def gravity_torques(model: Model, q: Any) -> np.ndarray:
    """``g(q)``: efforts that hold the robot still against gravity (Seed 000 §3.5, (3.45))."""
    out = np.empty(model.nv)
    ki, kf = model.kernel_data
    _GRAVITY_TORQUES.call(ki, kf, vector(q, model.nq, "q"), out)
    return out


def rnea_batch(model: Model, Q: Any, V: Any, A: Any) -> np.ndarray:
    """(N, nv): ``rnea(Q[k], V[k], A[k])`` for each row, in one compiled loop (no external wrenches)."""
    Q = rows(Q, model.nq, "Q")
    V = rows(V, model.nv, "V", Q.shape[0])
    A = rows(A, model.nv, "A", Q.shape[0])
    out = np.empty((Q.shape[0], model.nv))
    ki, kf = model.kernel_data
    _RNEA_BATCH.call(ki, kf, Q, V, A, chunk_count(Q.shape[0]), out)
    return out
