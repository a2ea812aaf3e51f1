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
def unpack(ki: np.ndarray, kf: np.ndarray) -> ModelArrays:
    """Views of the packed model arrays (layout: docs/core-model-layout.md, "Kernel data")."""
    nb = ki[0]
    nf = ki[1]
    o = INT_HEADER
    parent = ki[o:o + nb]
    o += nb
    joint_type = ki[o:o + nb]
    o += nb
    idx_q = ki[o:o + nb]
    o += nb
    idx_v = ki[o:o + nb]
    o += nb
    frame_body = ki[o:o + nf]
    o = 0
    joint_axis = rows_view(kf, o, nb, 3)
    o += 3 * nb
    joint_rotation = matrices_view(kf, o, nb)
    o += 9 * nb
    joint_translation = rows_view(kf, o, nb, 3)
    o += 3 * nb
    joint_multiplier = kf[o:o + nb]
    o += nb
    joint_offset = kf[o:o + nb]
    o += nb
    mass = kf[o:o + nb]
    o += nb
    body_com = rows_view(kf, o, nb, 3)
    o += 3 * nb
    inertia = matrices_view(kf, o, nb)
    o += 9 * nb
    frame_rotation = matrices_view(kf, o, nf)
    o += 9 * nf
    frame_translation = rows_view(kf, o, nf, 3)
    o += 3 * nf
    gravity = kf[o:o + 3]
    return ModelArrays(
        nb, nf, ki[2], ki[3],
        parent, joint_type, idx_q, idx_v, frame_body,
        joint_axis, joint_rotation, joint_translation, joint_multiplier, joint_offset,
        mass, body_com, inertia, frame_rotation, frame_translation, gravity,
    )
