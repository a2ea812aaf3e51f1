"""Forward kinematics: frame placements ``T_world_frame(q)`` (Robot Dynamics lecture notes (ETH), §2.8.3,
(2.137)-(2.138))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy import ndarray

from kinodyn._kernels import kinematics as _k
from kinodyn._kernels.entry import IN1, IN2, INT, KF, KI, OUT2, OUT3, Kernel
from kinodyn.dynamics._inputs import F64

if TYPE_CHECKING:
    from kinodyn.model import Model

_FRAME_PLACEMENT = Kernel(_k.frame_placement, KI, KF, IN1, INT, OUT2)
_FRAME_PLACEMENTS = Kernel(_k.frame_placements, KI, KF, IN1, OUT3)
_FRAME_PLACEMENT_BATCH = Kernel(_k.frame_placement_batch, KI, KF, IN2, INT, OUT3)


def frame_placement(model: Model, q: Any, frame: str | int) -> np.ndarray:
    """4x4 homogeneous transform world <- frame at configuration ``q``.

    The common inputs (a float64 array, a known frame) are tested inline: this is the hottest call.
    """
    if type(q) is not ndarray or q.dtype is not F64 or q.shape != model._q_shape:
        q = model.check_q(q)
    try:
        fid = model._frame_ids[frame]
    except (KeyError, TypeError):
        fid = model.frame_id(frame)  # raises, naming close frames
    out = np.empty((4, 4))
    ki, kf = model.kernel_data
    _FRAME_PLACEMENT.call(ki, kf, q, fid, out)
    return out


def frame_placements(model: Model, q: Any) -> np.ndarray:
    """(nframes, 4, 4): world <- frame for every frame, in ``model.frame_names`` order."""
    out = np.empty((model.nframes, 4, 4))
    ki, kf = model.kernel_data
    _FRAME_PLACEMENTS.call(ki, kf, model.check_q(q), out)
    return out


def frame_placements_batch(model: Model, Q: Any, frame: str | int) -> np.ndarray:
    """(N, 4, 4): world <- frame for each row of ``Q`` (N x nq), in one compiled loop."""
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[1] != model.nq:
        raise ValueError(f"Q must have shape (N, {model.nq}), got {Q.shape}")
    out = np.empty((Q.shape[0], 4, 4))
    ki, kf = model.kernel_data
    _FRAME_PLACEMENT_BATCH.call(ki, kf, Q, model.frame_id(frame), out)
    return out
