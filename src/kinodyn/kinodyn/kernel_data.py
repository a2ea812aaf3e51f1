"""The model as the two flat arrays compiled kernels read: ``Model.kernel_data = (ki, kf)``.

``pack(model)`` builds them (layout: docs/core-model-layout.md, "Kernel data"); a kernel starts with
``md = unpack(ki, kf)``, a ``ModelArrays`` named tuple of views whose fields carry the Model attribute
names (``md.parent``, ``md.joint_rotation``, ...).

Performance rule: reading ``md.<field>`` or passing ``md`` to a function costs reference-count
updates of its arrays (~100 ns per access in a loop). Read the fields into locals once, before
per-body loops, and pass arrays (not ``md``) to functions called per body.
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.linalg import matrices_view, rows_view

if TYPE_CHECKING:
    from kinodyn.model import Model

JOINT_NONE = 0
JOINT_REVOLUTE = 1
JOINT_PRISMATIC = 2
JOINT_FREEFLYER = 3

INT_HEADER = 4  # ki[0:4] = nbodies, nframes, nq, nv

ModelArrays = namedtuple(
    "ModelArrays",
    [
        "nbodies", "nframes", "nq", "nv",
        "parent", "joint_type", "idx_q", "idx_v", "frame_body",
        "joint_axis", "joint_rotation", "joint_translation", "joint_multiplier", "joint_offset",
        "mass", "body_com", "inertia", "frame_rotation", "frame_translation", "gravity",
    ],
)


PACKED_FLOAT_FIELDS = ("joint_axis", "joint_rotation", "joint_translation", "joint_multiplier",
                       "joint_offset", "mass", "body_com", "inertia", "frame_rotation", "frame_translation",
                       "gravity")


def pack(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """``(ki, kf)``: the read-only arrays kernels read through ``unpack``."""
    nb, nf = model.nbodies, len(model.frame_names)
    ki = np.concatenate([
        np.array([nb, nf, model.nq, model.nv], dtype=np.int64),
        model.parent, model.joint_type, model.idx_q, model.idx_v, model.frame_body,
    ]).astype(np.int64)
    if ki.shape != (INT_HEADER + 4 * nb + nf,):
        raise ValueError(f"model arrays of inconsistent lengths: {ki.shape[0]} packed integers for {nb} "
                         f"bodies and {nf} frames")
    kf = np.concatenate([np.ravel(getattr(model, name)) for name in PACKED_FLOAT_FIELDS]).astype(np.float64)
    ki.flags.writeable = False
    kf.flags.writeable = False
    return ki, kf


@njit(cache=True, inline="always")
def _segment(a: np.ndarray, o: int, n: int) -> tuple[np.ndarray, int]:
    """``(a[o:o + n], o + n)``: a field of ``n`` entries at offset ``o``, and the offset after it."""
    return a[o:o + n], o + n


@njit(cache=True, inline="always")
def unpack(ki: np.ndarray, kf: np.ndarray) -> ModelArrays:
    """Views of the packed model arrays (layout: docs/core-model-layout.md, "Kernel data")."""
    nb = ki[0]
    nf = ki[1]
    parent, o = _segment(ki, INT_HEADER, nb)
    joint_type, o = _segment(ki, o, nb)
    idx_q, o = _segment(ki, o, nb)
    idx_v, o = _segment(ki, o, nb)
    frame_body, _ = _segment(ki, o, nf)
    joint_axis, o = rows_view(kf, 0, nb, 3), 3 * nb
    joint_rotation, o = matrices_view(kf, o, nb), o + 9 * nb
    joint_translation, o = rows_view(kf, o, nb, 3), o + 3 * nb
    joint_multiplier, o = _segment(kf, o, nb)
    joint_offset, o = _segment(kf, o, nb)
    mass, o = _segment(kf, o, nb)
    body_com, o = rows_view(kf, o, nb, 3), o + 3 * nb
    inertia, o = matrices_view(kf, o, nb), o + 9 * nb
    frame_rotation, o = matrices_view(kf, o, nf), o + 9 * nf
    frame_translation, o = rows_view(kf, o, nf, 3), o + 3 * nf
    gravity = kf[o:o + 3]
    return ModelArrays(
        nb, nf, ki[2], ki[3],
        parent, joint_type, idx_q, idx_v, frame_body,
        joint_axis, joint_rotation, joint_translation, joint_multiplier, joint_offset,
        mass, body_com, inertia, frame_rotation, frame_translation, gravity,
    )
