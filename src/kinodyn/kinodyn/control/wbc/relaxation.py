"""The whole-body QP's answer when its hard level is infeasible: the same tick re-solved with the constraints
that can give way made soft, in a fixed order, by heavily penalised slack variables.

Not in the texts: the usual practice of field whole-body controllers (a hard level that cannot hold is not
a reason to stop commanding the robot). The equations of motion (the rows eliminated exactly) and the
friction cones with the unilateral force bounds stay hard in every stage; the output torque is clipped to
the effort limits as at every tick (``assembly.torques``). The stages, each tried only when the one before
is infeasible too (``STAGES``):

1. the joint acceleration bounds (the joint position and velocity limits over the look-ahead horizon and the
   acceleration cap, ``limits.py``) give way;
2. and the torque limits;
3. and the contacts' no-motion equalities ``J_c qdd + Jdot_c v = a_c``: only the unactuated rows of the
   equations of motion are eliminated, the contact rows become soft rows.

A soft row ``l <= c^T z <= u`` becomes ``l <= c^T z - d s <= u`` with ``weight * scale * s^2`` added to the
cost; ``d`` is the row's own limit (the effort, the acceleration cap, the gravity acceleration for contact
rows), so ``s`` is the violation as a fraction of it, and ``scale`` is the largest diagonal entry of the
level's cost Hessian (at least 1): the slacks cost ``weight`` times more than any task direction does. In
every stage but the last the slacks are bounded, ``|s| <= bound``: a stage that needs a larger violation has
no solution and the next one is tried. The last stage's slacks are only penalised, so it is feasible by
construction: its hard rows are the unactuated equations of motion, the friction cones and the normal-force
bounds, which the point with each contact's force at its lower normal bound along the normal and
``qdd = M^-1 (J_c^T f - h)`` satisfies (the soft rows take any value). Without contacts the last stage is the
second one, whose hard rows are the equations of motion alone.

Every row of the relaxed QP (hard and soft) is divided by its Euclidean norm before the solve: the joint rows
(slack coefficient the acceleration cap), torque rows (entries of ``M``, slack coefficient the effort) and
contact rows differ by orders of magnitude, and the slacks' weight makes the Hessian ill-conditioned; an
active-set solver on the unscaled rows cycles or fails numerically on feasible stages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kinodyn.control.wbc.assembly import EQUALITY_TOLERANCE, RANK_TOLERANCE

JOINT_LIMITS, TORQUE_LIMITS, CONTACT_MOTION = "joint limits", "torque limits", "contact motion"
STAGES: tuple[tuple[str, ...], ...] = ((JOINT_LIMITS,), (JOINT_LIMITS, TORQUE_LIMITS),
                                       (JOINT_LIMITS, TORQUE_LIMITS, CONTACT_MOTION))
UNITS = {JOINT_LIMITS: "rad/s^2", TORQUE_LIMITS: "N m", CONTACT_MOTION: "m/s^2"}
DEFAULT_WEIGHT = 1.0e6
DEFAULT_BOUND = 10.0
ACTIVE_SLACK = 1e-9  # a slack (fraction of its row's limit) above this counts as giving way


@dataclass(frozen=True)
class Relaxation:
    """How an infeasible hard level is answered (module doc). ``enabled``: False keeps the failure.
    ``weight``: the slacks' penalty relative to the level's largest cost curvature (> 0). ``bound``: the
    largest slack, as a fraction of each row's limit (> 0), in every stage but the last (unbounded)."""

    enabled: bool = True
    weight: float = DEFAULT_WEIGHT
    bound: float = DEFAULT_BOUND

    def __post_init__(self) -> None:
        if not (math.isfinite(self.weight) and self.weight > 0.0):
            raise ValueError(f"relaxation weight must be finite and > 0, got {self.weight}")
        if not (math.isfinite(self.bound) and self.bound > 0.0):
            raise ValueError(f"relaxation bound must be finite and > 0, got {self.bound}")


@dataclass(frozen=True)
class SoftRows:
    """Rows ``low <= R z <= high`` that may give way, each with its limit ``scale`` and its ``kind``."""

    R: np.ndarray
    low: np.ndarray
    high: np.ndarray
    scale: np.ndarray
    kinds: tuple[str, ...]  # one per row


def soft_qp(H: np.ndarray, g: np.ndarray, C: np.ndarray, low: np.ndarray, high: np.ndarray,
            soft: SoftRows, weight: float, bound: float,
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(H, g, C, l, u)`` of the QP over ``[z; s]``: the cost ``1/2 z'Hz + g'z + 1/2 w |s|^2``, the hard
    rows ``low <= C z <= high`` and the soft rows with their slacks, each row scaled to unit norm, and the
    slacks' bounds ``|s| <= bound`` (no such rows when ``bound`` is infinite: the last stage; module doc)."""
    nz, ns = H.shape[0], soft.R.shape[0]
    H_soft = np.zeros((nz + ns, nz + ns))
    H_soft[:nz, :nz] = H
    scale = max(1.0, float(np.abs(np.diagonal(H)).max(initial=0.0)))
    H_soft[nz:, nz:] = np.diag(np.full(ns, weight * scale))
    g_soft = np.concatenate((g, np.zeros(ns)))
    n_hard = C.shape[0]
    boxed = ns if math.isfinite(bound) else 0
    rows = np.zeros((n_hard + ns + boxed, nz + ns))
    rows[:n_hard, :nz] = C
    rows[n_hard:n_hard + ns, :nz] = soft.R
    rows[n_hard:n_hard + ns, nz:] = -np.diag(soft.scale)
    rows[n_hard + ns:, nz:] = np.eye(ns)[:boxed]
    box = np.full(boxed, bound)
    lower, upper = np.concatenate((low, soft.low, -box)), np.concatenate((high, soft.high, box))
    norms = np.linalg.norm(rows, axis=1)
    norms[norms == 0.0] = 1.0  # (a row z cannot move keeps its bounds as they are)
    return H_soft, g_soft, rows / norms[:, None], lower / norms, upper / norms


def violations(soft: SoftRows, slack: np.ndarray) -> dict[str, tuple[int, float]]:
    """Per kind that gave way: the number of its rows that did and the largest violation (``|s| d``, in the
    rows' units, ``UNITS``)."""
    found: dict[str, tuple[int, float]] = {}
    for kind, s, d in zip(soft.kinds, np.abs(slack), soft.scale, strict=True):
        if s > ACTIVE_SLACK:
            count, worst = found.get(kind, (0, 0.0))
            found[kind] = (count + 1, max(worst, float(s * d)))
    return found


def describe(stage: tuple[str, ...], given: dict[str, tuple[int, float]]) -> str:
    """The relaxed tick's message: the stage, what gave way and by how much."""
    parts = [f"{kind} by up to {worst:.3g} {UNITS[kind]} on {count} row{'s' * (count > 1)}"
             for kind, (count, worst) in given.items()]
    text = f"relaxed ({', '.join(stage)} soft): " + ("; ".join(parts) or "no row past its limit")
    if TORQUE_LIMITS in given:
        text += " (the output torque clipped to the effort limits)"
    return text


def eliminate(E: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The minimum-norm solution of ``E x = e`` and an orthonormal basis of the null space of ``E`` (SVD with
    ``assembly``'s rank tolerance); ``None`` when the rows are inconsistent."""
    U, s, Vt = np.linalg.svd(E)
    rank = int(np.count_nonzero(s > RANK_TOLERANCE * max(float(s[0]) if s.size else 0.0, 1.0)))
    x = Vt[:rank].T @ ((U[:, :rank].T @ e) / s[:rank])
    worst = float(np.abs(E @ x - e).max(initial=0.0))
    if worst > EQUALITY_TOLERANCE * (1.0 + float(np.abs(e).max(initial=0.0))):
        return None
    return x, Vt[rank:].T
