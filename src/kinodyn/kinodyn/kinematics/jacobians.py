"""Frame Jacobians, their time derivative times v, and manipulability.

Geometric Jacobian ``[J_P; J_R]`` (Robot Dynamics lecture notes (ETH), §2.8.5, (2.151)-(2.167); floating base
§2.10.3, (2.248)-(2.252)) in Pinocchio's three references (docs/conventions.md):

- ``"world"``: spatial twist, linear part = velocity of the body point at the world origin;
- ``"local"``: body twist of the frame, in frame axes;
- ``"local_world_aligned"``: velocity of the frame origin and angular velocity, in world axes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy import ndarray

from kinodyn._kernels import kinematics as _k
from kinodyn._kernels.entry import IN1, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.dynamics._inputs import F64

if TYPE_CHECKING:
    from kinodyn.model import Model

REFERENCES = {"world": _k.WORLD, "local": _k.LOCAL, "local_world_aligned": _k.LOCAL_WORLD_ALIGNED}

_FRAME_JACOBIAN = Kernel(_k.frame_jacobian, KI, KF, IN1, INT, INT, OUT2)
_FRAME_BIAS_ACCELERATION = Kernel(_k.frame_bias_acceleration, KI, KF, IN1, IN1, INT, INT, OUT1)


def _reference_id(reference: str) -> int:
    try:
        return REFERENCES[reference]
    except (KeyError, TypeError):
        raise ValueError(f"reference must be one of {sorted(REFERENCES)}, got {reference!r}") from None


def frame_jacobian(model: Model, q: Any, frame: str | int,
                   reference: str = "local_world_aligned") -> np.ndarray:
    """6 x nv geometric Jacobian of ``frame`` in ``reference``: ``twist = J v``.

    The common inputs are tested inline, as in ``frame_placement``.
    """
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = model.check_q(q)
    try:
        fid = model._frame_ids[frame]
    except (KeyError, TypeError):
        fid = model.frame_id(frame)  # raises, naming close frames
    out = np.empty((6, model.nv))
    ki, kf = model.kernel_data
    _FRAME_JACOBIAN.call(ki, kf, q, fid, _reference_id(reference), out)
    return out


def frame_bias_acceleration(model: Model, q: Any, v: Any, frame: str | int,
                            reference: str = "local_world_aligned") -> np.ndarray:
    """``(dJ/dt) v`` (6,) of ``frame`` in ``reference``: the frame acceleration when ``qdd = 0``.

    ``"world"`` / ``"local"``: spatial acceleration (Pinocchio ``getFrameAcceleration``);
    ``"local_world_aligned"``: classical acceleration of the frame origin and angular
    acceleration, in world axes (Pinocchio ``getFrameClassicalAcceleration``).
    """
    q = model.check_q(q)
    v = model.check_v(v)
    out = np.empty(6)
    ki, kf = model.kernel_data
    _FRAME_BIAS_ACCELERATION.call(ki, kf, q, v, model.frame_id(frame), _reference_id(reference), out)
    return out


def manipulability(model: Model, q: Any, frame: str | int) -> float:
    """Yoshikawa's measure ``sqrt(det(J J^T))`` of the frame's 6 x nv Jacobian.

    The value is the same in the three references (they differ by a left factor of determinant
    1); it is computed as the product of the six singular values of the ``"world"`` Jacobian and
    is 0 when nv < 6.
    """
    J = frame_jacobian(model, q, frame, "world")
    if J.shape[1] < 6:
        return 0.0
    return float(np.prod(np.linalg.svd(J, compute_uv=False)))
