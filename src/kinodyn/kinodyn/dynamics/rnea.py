"""Inverse dynamics by the recursive Newton-Euler algorithm (Modern Robotics, §8.3.2, (8.50)-(8.54))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy import empty, ndarray

from kinodyn._kernels import dyn_rnea as _k
from kinodyn._kernels.entry import IN1, IN2, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.dynamics._inputs import F64, NO_EXTERNAL_WRENCHES, external_wrenches, run_batch, vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_RNEA = Kernel(_k.rnea, KI, KF, IN1, IN1, IN1, IN2, OUT1)
_NONLINEAR_EFFECTS = Kernel(_k.nonlinear_effects, KI, KF, IN1, IN1, OUT1)
_GRAVITY_TORQUES = Kernel(_k.gravity_torques, KI, KF, IN1, OUT1)
_RNEA_BATCH = Kernel(_k.rnea_batch, KI, KF, IN2, IN2, IN2, INT, OUT2)
_RNEA_ROWS = Kernel(_k.rnea_rows, KI, KF, IN2, IN2, IN2, OUT2, INT, INT)


def rnea(model: Model, q: Any, v: Any, a: Any, f_ext: Any = None) -> np.ndarray:
    """Joint efforts ``tau = M(q) a + b(q, v) + g(q) - sum_i J_i^T f_ext,i`` (Robot Dynamics lecture notes
    (ETH), §3.7, (3.54)).

    ``f_ext``: wrenches acting on the robot, ``None``, an (nbodies, 6) array of body-frame wrenches
    ``[f; tau]`` about each body origin, or ``{link name: wrench in the link frame}`` (see
    ``kinodyn.dynamics._inputs.external_wrenches``). Floating base: the first six entries are the
    base wrench (base frame) that the motion needs.
    """
    nv = model.nv
    shape = model._v_shape
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != shape:
        v = vector(v, nv, "v")
    if type(a) is not ndarray or a.dtype is not F64 or a.shape != shape:
        a = vector(a, nv, "a")
    tau = empty(nv)
    ki, kf = model.kernel_data
    fext = NO_EXTERNAL_WRENCHES if f_ext is None else external_wrenches(model, f_ext)
    _RNEA.call(ki, kf, q, v, a, fext, tau)
    return tau


def nonlinear_effects(model: Model, q: Any, v: Any) -> np.ndarray:
    """``b(q, v) + g(q)``: Coriolis, centrifugal and gravity terms (RNEA with zero acceleration)."""
    nv = model.nv
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != model._v_shape:
        v = vector(v, nv, "v")
    out = empty(nv)
    ki, kf = model.kernel_data
    _NONLINEAR_EFFECTS.call(ki, kf, q, v, out)
    return out


def gravity_torques(model: Model, q: Any) -> np.ndarray:
    """``g(q)``: efforts that hold the robot still against gravity (Robot Dynamics lecture notes (ETH), §3.5,
    (3.45))."""
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    out = empty(model.nv)
    ki, kf = model.kernel_data
    _GRAVITY_TORQUES.call(ki, kf, q, out)
    return out


def rnea_batch(model: Model, Q: Any, V: Any, A: Any) -> np.ndarray:
    """(N, nv): ``rnea(Q[k], V[k], A[k])`` for each row (no external wrenches), equal to the row-by-row
    results.

    Runs compiled, in contiguous chunks of rows on numba's threads (one chunk per thread;
    ``numba.set_num_threads`` limits them, ``NUMBA_NUM_THREADS`` caps them at start-up); with one
    thread (or one row) it runs serially without starting the thread pool.
    """
    return run_batch(model, Q, V, A, "A", _RNEA_BATCH, _RNEA_ROWS)
