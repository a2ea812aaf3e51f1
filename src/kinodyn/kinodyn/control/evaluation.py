"""One evaluation of the robot per control tick, as Pinocchio's ``Data`` / ``computeAllTerms``.

``Evaluator(model, frames).evaluate(q, v)`` returns an ``Evaluation``: everything a control tick reads at
``(q, v)`` (mass matrix, nonlinear effects, gravity torques, the placements, Jacobians and ``Jdot v`` of
the frames asked for, centre of mass, its Jacobian and ``Jcom_dot v``, the centroidal momentum matrix and
``Adot_G v``). Robot Dynamics lecture notes (ETH) §3.9 (3.80) (``wdot = J qdd + Jdot qd``) and §3.5; Robot
Dynamics Essential §3.7 (96).

Jacobians are ``local_world_aligned`` (velocity of the frame origin and angular velocity, world axes),
``bias_accelerations`` the matching classical accelerations at ``qdd = 0``. One compiled kernel computes
everything from one shared kinematics pass (``kinodyn._kernels.evaluation``, where the formulas are cited).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy import empty, ndarray

from kinodyn._kernels import evaluation as _k
from kinodyn._kernels.entry import IN1, KF, KI, OUT1, Kernel
from kinodyn.dynamics._inputs import F64
from kinodyn.kinematics import center_of_mass
from kinodyn.model import Model


@dataclass(frozen=True, eq=False)
class Evaluation:
    """The robot at one ``(q, v)``; see the module doc. Arrays are fresh per evaluation."""

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
        return self.placements[self.frame_index(frame)]

    def jacobian(self, frame: str) -> np.ndarray:
        return self.jacobians[self.frame_index(frame)]

    def bias_acceleration(self, frame: str) -> np.ndarray:
        return self.bias_accelerations[self.frame_index(frame)]


class Evaluator:
    """Evaluates ``model`` at ``(q, v)`` for a fixed list of frames (names or ids), in one compiled pass.

    The model must have mass on its moving bodies (the CoM, ``A_G`` and the dynamics need it): otherwise
    ``ValueError`` at construction, as ``kinodyn.kinematics.center_of_mass``. ``evaluate`` raises
    ``ValueError`` for q or v of the wrong size, with a non-finite entry, or a zero base quaternion, so
    every array of an ``Evaluation`` is finite. Each evaluation's arrays (``q``, ``v`` copied) are views
    of one fresh block: nothing is shared between evaluations or with the caller.
    """

    def __init__(self, model: Model, frames: Sequence[str | int] = ()) -> None:
        center_of_mass._check_mass(model)
        self.model = model
        ids = list(dict.fromkeys(model.frame_id(f) for f in frames))
        self.frames: tuple[str, ...] = tuple(model.frame_names[i] for i in ids)
        self.total_mass = float(model.mass[1:].sum())
        self._ids = np.array(ids, dtype=np.int64)
        self._ids.flags.writeable = False
        k, nv = len(ids), model.nv
        self._layout = _k.block_layout(model.nq, nv, k)
        self._shapes = ((nv, nv), (k, 4, 4), (k, 6, nv), (k, 6), (3, nv), (6, nv))

    def evaluate(self, q: Any, v: Any) -> Evaluation:
        """Everything in ``Evaluation`` at ``(q, v)``; see the class doc for the errors."""
        m = self.model
        if type(q) is not ndarray or q.dtype is not F64 or q.shape != m._q_shape:  # the common case inline
            q = m.check_q(q)
        if type(v) is not ndarray or v.dtype is not F64 or v.shape != m._v_shape:
            v = m.check_v(v)
        o_M, o_h, o_g, o_T, o_J, o_b, o_c, o_Jc, o_bc, o_A, o_Ab, o_q, o_v, size = self._layout
        s_M, s_T, s_J, s_b, s_Jc, s_A = self._shapes
        out = empty(size)
        ki, kf = m.kernel_data
        status = _EVALUATE.call(ki, kf, q, v, self._ids, out)
        if status:
            raise ValueError(_PROBLEMS[status])
        ev = _new(Evaluation)  # every field set here, as the frozen dataclass __init__ would (a tick cost)
        ev.__dict__.update(
            q=out[o_q:o_v], v=out[o_v:size], frames=self.frames,
            mass_matrix=out[o_M:o_h].reshape(s_M), nonlinear_effects=out[o_h:o_g],
            gravity_torques=out[o_g:o_T],
            placements=out[o_T:o_J].reshape(s_T), jacobians=out[o_J:o_b].reshape(s_J),
            bias_accelerations=out[o_b:o_c].reshape(s_b),
            com=out[o_c:o_Jc], com_jacobian=out[o_Jc:o_bc].reshape(s_Jc), com_bias_acceleration=out[o_bc:o_A],
            centroidal_matrix=out[o_A:o_Ab].reshape(s_A), centroidal_bias=out[o_Ab:o_q],
            total_mass=self.total_mass,
        )
        return ev


_new = object.__new__
_EVALUATE = Kernel(_k.evaluate, KI, KF, IN1, IN1, KI, OUT1)
_PROBLEMS = {
    _k.Q_NOT_FINITE: "q has a non-finite entry (NaN or inf); pass a finite configuration",
    _k.V_NOT_FINITE: "v has a non-finite entry (NaN or inf); pass a finite velocity",
    _k.ZERO_QUATERNION: "q's base quaternion (q[3:7]) is zero; pass a unit quaternion (x, y, z, w)",
}
