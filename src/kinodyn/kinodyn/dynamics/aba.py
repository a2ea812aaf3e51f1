"""Forward dynamics: the articulated-body algorithm (solves Modern Robotics, §8.5, (8.81), in O(n))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy import empty, ndarray

from kinodyn._kernels import dyn_aba as _k
from kinodyn._kernels.entry import IN1, IN2, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.dynamics._inputs import F64, NO_EXTERNAL_WRENCHES, external_wrenches, run_batch, vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_ABA = Kernel(_k.aba, KI, KF, IN1, IN1, IN1, IN2, OUT1)
_FORWARD_DYNAMICS_CHOLESKY = Kernel(_k.forward_dynamics_cholesky, KI, KF, IN1, IN1, IN1, IN2, OUT1)
_ABA_BATCH = Kernel(_k.aba_batch, KI, KF, IN2, IN2, IN2, INT, OUT2)
_ABA_ROWS = Kernel(_k.aba_rows, KI, KF, IN2, IN2, IN2, OUT2, INT, INT)


def aba(model: Model, q: Any, v: Any, tau: Any, f_ext: Any = None) -> np.ndarray:
    """Accelerations ``qdd = M^-1 (tau - b - g + sum_i J_i^T f_ext,i)``; ``f_ext`` as in ``rnea``.

    Models with mimic joints are solved through ``M`` (CRBA) and a Cholesky factorisation
    (Modern Robotics, §8.5), as the articulated-body recursion needs independent joint coordinates.
    """
    nv = model.nv
    shape = model._v_shape
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = vector(q, model.nq, "q")
    if type(v) is not ndarray or v.dtype is not F64 or v.shape != shape:
        v = vector(v, nv, "v")
    if type(tau) is not ndarray or tau.dtype is not F64 or tau.shape != shape:
        tau = vector(tau, nv, "tau")
    out = empty(nv)
    ki, kf = model.kernel_data
    kernel = _FORWARD_DYNAMICS_CHOLESKY if model.mimic_joint_names else _ABA
    fext = NO_EXTERNAL_WRENCHES if f_ext is None else external_wrenches(model, f_ext)
    kernel.call(ki, kf, q, v, tau, fext, out)
    return out


def aba_batch(model: Model, Q: Any, V: Any, TAU: Any) -> np.ndarray:
    """(N, nv): ``aba(Q[k], V[k], TAU[k])`` for each row (no external wrenches), equal to the row-by-row
    results.

    Runs compiled, in contiguous chunks of rows on numba's threads (one chunk per thread;
    ``numba.set_num_threads`` limits them, ``NUMBA_NUM_THREADS`` caps them at start-up); with one
    thread (or one row) it runs serially without starting the thread pool.
    """
    if model.mimic_joint_names:
        raise ValueError(f"aba_batch needs a model without mimic joints; {model.name!r} has "
                         f"{list(model.mimic_joint_names)} (use aba row by row)")
    return run_batch(model, Q, V, TAU, "TAU", _ABA_BATCH, _ABA_ROWS)
