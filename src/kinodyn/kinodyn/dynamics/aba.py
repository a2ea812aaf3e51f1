"""Forward dynamics: the articulated-body algorithm (solves Seed 001 §8.5, (8.81), in O(n))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn._kernels import dyn_aba as _k
from kinodyn._kernels.dyn_parallel import chunk_count
from kinodyn._kernels.entry import IN1, IN2, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.dynamics._inputs import external_wrenches, rows, vector

if TYPE_CHECKING:
    from kinodyn.model import Model

_ABA = Kernel(_k.aba, KI, KF, IN1, IN1, IN1, IN2, OUT1)
_FORWARD_DYNAMICS_CHOLESKY = Kernel(_k.forward_dynamics_cholesky, KI, KF, IN1, IN1, IN1, IN2, OUT1)
_ABA_BATCH = Kernel(_k.aba_batch, KI, KF, IN2, IN2, IN2, INT, OUT2)


def aba(model: Model, q: Any, v: Any, tau: Any, f_ext: Any = None) -> np.ndarray:
    """Accelerations ``qdd = M^-1 (tau - b - g + sum_i J_i^T f_ext,i)``; ``f_ext`` as in ``rnea``.

    Models with mimic joints are solved through ``M`` (CRBA) and a Cholesky factorisation
    (Seed 001 §8.5), as the articulated-body recursion needs independent joint coordinates.
    """
    nv = model.nv
    out = np.empty(nv)
    ki, kf = model.kernel_data
    kernel = _FORWARD_DYNAMICS_CHOLESKY if model.mimic_joint_names else _ABA
    kernel.call(ki, kf, vector(q, model.nq, "q"), vector(v, nv, "v"), vector(tau, nv, "tau"),
           external_wrenches(model, f_ext), out)
    return out


def aba_batch(model: Model, Q: Any, V: Any, TAU: Any) -> np.ndarray:
    """(N, nv): ``aba(Q[k], V[k], TAU[k])`` for each row, in one compiled loop (no external wrenches)."""
    if model.mimic_joint_names:
        raise ValueError(f"aba_batch needs a model without mimic joints; {model.name!r} has "
                         f"{list(model.mimic_joint_names)} (use aba row by row)")
    Q = rows(Q, model.nq, "Q")
    V = rows(V, model.nv, "V", Q.shape[0])
    TAU = rows(TAU, model.nv, "TAU", Q.shape[0])
    out = np.empty((Q.shape[0], model.nv))
    ki, kf = model.kernel_data
    _ABA_BATCH.call(ki, kf, Q, V, TAU, chunk_count(Q.shape[0]), out)
    return out
