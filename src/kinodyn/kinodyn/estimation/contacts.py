"""Contact detection from joint efforts (Robot Dynamics Essential, §5.3 "Contact detection": an F/T threshold
on f_z, here with the force estimated from the joint torques, and hysteresis against chattering).

The leg rows of the floating-base dynamics ``M qdd + h = S^T tau + sum_k J_k^T f_k`` (Robot Dynamics lecture
notes (ETH), §3.7, (3.54); ground reactions ``f_k`` on the robot, docs/conventions.md) with the accelerations
neglected give, for the foot ``k`` at the end of a leg whose joints no other foot shares,
``J_leg^T f = h_leg - tau_leg``: ``f = -(J_leg^T)^+ (tau_leg - h_leg)`` (least squares for legs of more
or fewer than 3 joints). ``h`` is evaluated at the estimated base orientation and velocity, so gravity and
the base motion's Coriolis and centrifugal terms are taken out of the measured efforts; the neglected
``M_leg qdd`` is the leg's inertial load, small against the weight it carries in stance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.estimation.legs import FREE_FLYER_NQ, FREE_FLYER_NV, check_floating, find_leg
from kinodyn.evaluation import Evaluator

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kinodyn.model import Model
    from kinodyn.spatial.rotations import FloatArray

SQUARE_LEG = 3  # joints of a leg whose foot-position Jacobian is square
SINGULAR_DETERMINANT = 1e-9  # m^3: below it a 3-joint leg is solved by least squares (stretched leg)


class ContactDetector:
    """Contact state of each foot from the joint efforts, with hysteresis on the world-z ground reaction:
    a foot goes in contact when ``f_z > on_threshold`` and out of contact when ``f_z < off_threshold``
    (newtons, ``on_threshold > off_threshold``); every foot starts out of contact.

    ``update(q, v, efforts)``: ``q`` (nq) and ``v`` (nv) of the floating-base model with the estimated base
    orientation and twist (the base position does not matter), ``efforts`` in ``model.joint_names`` order.
    A foot whose leg has a non-finite joint position, velocity or effort keeps its previous state.
    ``forces`` holds the last estimated world-frame ground reaction per foot (nan where not computed).
    """

    def __init__(self, model: Model, feet: Sequence[str], on_threshold: float, off_threshold: float) -> None:
        check_floating(model)
        if not (np.isfinite(on_threshold) and np.isfinite(off_threshold) and on_threshold > off_threshold):
            raise ValueError(f"contact thresholds must be finite with on_threshold > off_threshold, got on "
                             f"{on_threshold!r} N, off {off_threshold!r} N")
        legs = [find_leg(model, foot) for foot in feet]
        shared = {j for leg in legs for j in leg.joints if sum(j in other.joints for other in legs) > 1}
        if shared:
            names = [model.joint_names[j] for j in sorted(shared)]
            raise ValueError(f"feet {list(feet)} share the joints {names}: detection from efforts needs one "
                             "foot per leg")
        self.model = model
        self.feet = tuple(feet)
        self.on_threshold = float(on_threshold)
        self.off_threshold = float(off_threshold)
        self._legs = [np.array(leg.joints) for leg in legs]
        self._evaluator = Evaluator(model, self.feet)
        self._data = self._evaluator.create_data()  # the evaluation of every update, allocated once
        self.contacts = dict.fromkeys(self.feet, False)
        self.forces = {foot: np.full(3, np.nan) for foot in self.feet}

    def update(self, q: FloatArray, v: FloatArray, efforts: FloatArray) -> dict[str, bool]:
        """The contact state after this sample (see the class doc); a new dict."""
        m = self.model
        q = np.array(q, dtype=np.float64)
        v = np.array(v, dtype=np.float64)
        efforts = np.asarray(efforts, dtype=np.float64)
        if q.shape != (m.nq,) or v.shape != (m.nv,) or efforts.shape != (m.nv - FREE_FLYER_NV,):
            raise ValueError(f"q, v, efforts must have shapes ({m.nq},), ({m.nv},), "
                             f"({m.nv - FREE_FLYER_NV},); got {q.shape}, {v.shape}, {efforts.shape}")
        if not (np.all(np.isfinite(q[:FREE_FLYER_NQ])) and np.all(np.isfinite(v[:FREE_FLYER_NV]))):
            raise ValueError("the base part of q and v must be finite (the estimated base state)")
        joints_q, joints_v = q[FREE_FLYER_NQ:], v[FREE_FLYER_NV:]
        finite = np.isfinite(joints_q) & np.isfinite(joints_v) & np.isfinite(efforts)
        joints_q[~finite] = 0.0
        joints_v[~finite] = 0.0
        evaluation = self._evaluator.evaluate(q, v, self._data)
        h = evaluation.nonlinear_effects[FREE_FLYER_NV:]
        for k, (foot, joints) in enumerate(zip(self.feet, self._legs, strict=True)):
            if not finite[joints].all():
                self.forces[foot] = np.full(3, np.nan)
                continue
            J_T = evaluation.jacobians[k][:3, FREE_FLYER_NV + joints].T
            rhs = h[joints] - efforts[joints]
            square = len(joints) == SQUARE_LEG and abs(np.linalg.det(J_T)) > SINGULAR_DETERMINANT
            force = np.linalg.solve(J_T, rhs) if square else np.linalg.lstsq(J_T, rhs, rcond=None)[0]
            self.forces[foot] = force
            if self.contacts[foot]:
                self.contacts[foot] = bool(force[2] >= self.off_threshold)
            else:
                self.contacts[foot] = bool(force[2] > self.on_threshold)
        return dict(self.contacts)
