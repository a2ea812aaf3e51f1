"""Inverse dynamics by the recursive Newton-Euler algorithm (Seed 001 §8.3.2, (8.50)-(8.54))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn._kernels import dyn_rnea as _k
from kinodyn.dynamics._inputs import external_wrenches, rows, vector

if TYPE_CHECKING:
    from kinodyn.model import Model


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
    _k.rnea(ki, kf, vector(q, model.nq, "q"), vector(v, nv, "v"), vector(a, nv, "a"),
            external_wrenches(model, f_ext), tau)
    return tau


def nonlinear_effects(model: Model, q: Any, v: Any) -> np.ndarray:
    """``b(q, v) + g(q)``: Coriolis, centrifugal and gravity terms (RNEA with zero acceleration)."""
    out = np.empty(model.nv)
    ki, kf = model.kernel_data
    _k.nonlinear_effects(ki, kf, vector(q, model.nq, "q"), vector(v, model.nv, "v"), out)
    return out


def gravity_torques(model: Model, q: Any) -> np.ndarray:
    """``g(q)``: efforts that hold the robot still against gravity (Seed 000 §3.5, (3.45))."""
    out = np.empty(model.nv)
    ki, kf = model.kernel_data
    _k.gravity_torques(ki, kf, vector(q, model.nq, "q"), out)
    return out


def rnea_batch(model: Model, Q: Any, V: Any, A: Any) -> np.ndarray:
    """(N, nv): ``rnea(Q[k], V[k], A[k])`` for each row, in one compiled loop (no external wrenches)."""
    Q = rows(Q, model.nq, "Q")
    V = rows(V, model.nv, "V", Q.shape[0])
    A = rows(A, model.nv, "A", Q.shape[0])
    out = np.empty((Q.shape[0], model.nv))
    ki, kf = model.kernel_data
    _k.rnea_batch(ki, kf, Q, V, A, out)
    return out
