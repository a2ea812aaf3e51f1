"""Forward kinematics: frame placements ``T_world_frame(q)`` (Seed 000 §2.8.3, (2.137)-(2.138))."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn._kernels import kinematics as _k

if TYPE_CHECKING:
    from kinodyn.model import Model


def frame_placement(model: Model, q: Any, frame: str | int) -> np.ndarray:
    """4x4 homogeneous transform world <- frame at configuration ``q``."""
    q = model.check_q(q)
    out = np.empty((4, 4))
    ki, kf = model.kernel_data
    _k.frame_placement(ki, kf, q, model.frame_id(frame), out)
    return out


def frame_placements(model: Model, q: Any) -> np.ndarray:
    """(nframes, 4, 4): world <- frame for every frame, in ``model.frame_names`` order."""
    q = model.check_q(q)
    out = np.empty((model.nframes, 4, 4))
    ki, kf = model.kernel_data
    _k.frame_placements(ki, kf, q, out)
    return out


def frame_placements_batch(model: Model, Q: Any, frame: str | int) -> np.ndarray:
    """(N, 4, 4): world <- frame for each row of ``Q`` (N x nq), in one compiled loop."""
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[1] != model.nq:
        raise ValueError(f"Q must have shape (N, {model.nq}), got {Q.shape}")
    out = np.empty((Q.shape[0], 4, 4))
    ki, kf = model.kernel_data
    _k.frame_placement_batch(ki, kf, Q, model.frame_id(frame), out)
    return out
