"""Partial derivatives of the forward dynamics of a fixed-base model, from the inverse dynamics.

Forward dynamics ``a = FD(q, v, tau)`` solves ``ID(q, v, a) = M(q) a + b(q, v) + g(q) = tau`` (Robot
Dynamics Essential
§3.5.4, (79)). Differentiating that identity at ``a = FD(q, v, tau)`` gives

    dFD/dq = -M^-1 dID/dq,    dFD/dv = -M^-1 dID/dv,    dFD/dtau = M^-1.

``dID/dq`` and ``dID/dv`` are central differences of the RNEA (``kinodyn.dynamics.rnea_batch``, all rows
of a trajectory in one call). ``ID`` is quadratic in ``v``, so central differences in ``v`` have no
truncation error whatever the step: they take ``max(1, |v_j|)``, which keeps the rounding error at about
eps |tau|. In ``q`` the truncation error is O(h^2) with ``h = eps^(1/3) max(1, |q_j|)``, about 1e-10
relative. The tests check both against Pinocchio's ``computeABADerivatives``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.dynamics import rnea_batch

if TYPE_CHECKING:
    from kinodyn.model import Model

STEP_Q = float(np.finfo(np.float64).eps) ** (1.0 / 3.0)  # relative step of the central differences in q
STEP_V = 1.0  # relative step in v (exact for any step: ID is quadratic in v)


@dataclass(frozen=True)
class ForwardDynamicsDerivatives:
    """Accelerations and their partial derivatives at N states; arrays (N, nv) and (N, nv, nv)."""

    a: np.ndarray
    da_dq: np.ndarray
    da_dv: np.ndarray
    da_dtau: np.ndarray  # = M^-1


def check_fixed_base(model: Model) -> None:
    """``ValueError`` unless ``model`` has a fixed base (then ``nq == nv`` and ``q`` is a vector space)."""
    if model.floating_base or model.nq != model.nv:
        raise ValueError(f"trajectory optimisation needs a fixed-base model with nq == nv; {model!r} has "
                         f"{'a floating base' if model.floating_base else f'nq={model.nq}, nv={model.nv}'}")


def forward_dynamics_derivatives(model: Model, Q: np.ndarray, V: np.ndarray,
                                 TAU: np.ndarray) -> ForwardDynamicsDerivatives:
    """``FD`` and its derivatives at the rows of ``Q``, ``V``, ``TAU`` (N, nv): generalized forces ``TAU``
    (everything but the rigid-body terms: joint friction belongs in ``TAU``), no external wrenches."""
    check_fixed_base(model)
    Q, V, TAU = (np.atleast_2d(np.asarray(x, dtype=np.float64)) for x in (Q, V, TAU))
    n, nv = Q.shape[0], model.nv
    for name, x in (("Q", Q), ("V", V), ("TAU", TAU)):
        if x.shape != (n, nv):
            raise ValueError(f"{name} must have shape ({n}, {nv}), got {x.shape}")
    M = np.stack([model.mass_matrix(q) for q in Q])
    bias = rnea_batch(model, Q, V, np.zeros_like(Q))
    a = np.linalg.solve(M, (TAU - bias)[..., None])[..., 0]
    hq = STEP_Q * np.maximum(1.0, np.abs(Q))  # (n, nv)
    hv = STEP_V * np.maximum(1.0, np.abs(V))
    eye = np.eye(nv)
    dq = hq[:, :, None] * eye  # row j of dq[k]: the step of coordinate j
    dv = hv[:, :, None] * eye
    # rows per state: q + dq_j, q - dq_j, then v + dv_j, v - dv_j (j = 0..nv-1), acceleration a
    Qp = np.concatenate([Q[:, None] + dq, Q[:, None] - dq, np.repeat(Q[:, None], 2 * nv, axis=1)], axis=1)
    Vp = np.concatenate([np.repeat(V[:, None], 2 * nv, axis=1), V[:, None] + dv, V[:, None] - dv], axis=1)
    Ap = np.repeat(a[:, None], 4 * nv, axis=1)
    tau = rnea_batch(model, Qp.reshape(-1, nv), Vp.reshape(-1, nv), Ap.reshape(-1, nv)).reshape(n, 4 * nv, nv)
    did_dq = ((tau[:, :nv] - tau[:, nv:2 * nv]) / (2.0 * hq[:, :, None])).transpose(0, 2, 1)
    did_dv = ((tau[:, 2 * nv:3 * nv] - tau[:, 3 * nv:]) / (2.0 * hv[:, :, None])).transpose(0, 2, 1)
    Minv = np.linalg.inv(M)
    Minv = 0.5 * (Minv + Minv.transpose(0, 2, 1))
    return ForwardDynamicsDerivatives(a=a, da_dq=-Minv @ did_dq, da_dv=-Minv @ did_dv, da_dtau=Minv)
