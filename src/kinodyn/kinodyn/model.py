"""``Model``: the kinematic tree of a URDF as immutable flat arrays (docs/core-model-layout.md).

Algorithms are free functions taking ``(model, q, ...)`` in ``kinodyn.kinematics`` and
``kinodyn.dynamics``; the methods here are those functions bound to the model.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Any

import numpy as np

from kinodyn import dynamics as _dynamics
from kinodyn._kernels.common import (
    INT_HEADER,
    JOINT_FREEFLYER,
    JOINT_NONE,
    JOINT_PRISMATIC,
    JOINT_REVOLUTE,
)
from kinodyn.dynamics._inputs import F64
from kinodyn.kinematics import center_of_mass as _com
from kinodyn.kinematics import configuration as _configuration
from kinodyn.kinematics import forward as _forward
from kinodyn.kinematics import jacobians as _jacobians
from kinodyn.urdf import parse_urdf

__all__ = ["JOINT_FREEFLYER", "JOINT_NONE", "JOINT_PRISMATIC", "JOINT_REVOLUTE", "Model"]

# Sampling ranges random_configuration uses where a limit is infinite.
UNBOUNDED_ANGLE_RANGE = math.pi  # rad, revolute / continuous: [-pi, pi]
UNBOUNDED_TRANSLATION_RANGE = 1.0  # m, prismatic and free-flyer position: [-1, 1]


def _pack(fields: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(ki, kf)``: the arrays kernels read through ``kinodyn._kernels.common.unpack``."""
    nb, nf = fields["nbodies"], len(fields["frame_names"])
    ki = np.concatenate([
        np.array([nb, nf, fields["nq"], fields["nv"]], dtype=np.int64),
        fields["parent"], fields["joint_type"], fields["idx_q"], fields["idx_v"], fields["frame_body"],
    ]).astype(np.int64)
    assert ki.shape == (INT_HEADER + 4 * nb + nf,)
    kf = np.concatenate([
        np.ravel(fields[name]) for name in (
            "joint_axis", "joint_rotation", "joint_translation", "joint_multiplier", "joint_offset",
            "mass", "body_com", "inertia", "frame_rotation", "frame_translation", "gravity",
        )
    ]).astype(np.float64)
    ki.flags.writeable = False
    kf.flags.writeable = False
    return ki, kf


class Model:
    """Kinematic tree, inertias, limits and frames of a robot; immutable once built.

    Build with ``Model.from_urdf``. Attributes are those of docs/core-model-layout.md
    (``nq``, ``nv``, ``joint_names``, ``frame_names``, ``parent``, ``joint_type``, ...), plus
    ``kernel_data = (ki, kf)`` for compiled kernels.
    """

    nq: int
    nv: int
    nbodies: int
    floating_base: bool
    joint_names: tuple[str, ...]
    frame_names: tuple[str, ...]
    kernel_data: tuple[np.ndarray, np.ndarray]

    def __init__(self, fields: dict[str, Any]) -> None:
        for name, value in fields.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "nframes", len(self.frame_names))
        object.__setattr__(self, "kernel_data", _pack(fields))
        ids: dict[Any, int] = {name: i for i, name in enumerate(self.frame_names)}
        ids.update({i: i for i in range(self.nframes)})
        object.__setattr__(self, "_frame_ids", ids)
        object.__setattr__(self, "_q_shape", (self.nq,))
        object.__setattr__(self, "_v_shape", (self.nv,))
        object.__setattr__(self, "_sampling_bounds", self._finite_bounds())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Model is immutable; cannot set {name!r} (build another with Model.from_urdf)")

    def __repr__(self) -> str:
        base = "floating" if self.floating_base else "fixed"
        return f"Model({self.name!r}, {base} base, nq={self.nq}, nv={self.nv}, frames={self.nframes})"

    @classmethod
    def from_urdf(cls, source: str | Path, floating_base: bool = False) -> Model:
        """Build from a URDF file path or XML string; ``floating_base`` adds a free flyer at the root.

        Raises ``kinodyn.urdf.URDFError`` (a ``ValueError``) for malformed files.
        """
        return cls(parse_urdf(source, floating_base=floating_base))

    # --- names and inputs -------------------------------------------------------------------
    def frame_id(self, frame: str | int) -> int:
        """Index of a frame given by name or index; ``KeyError`` listing close names otherwise."""
        try:
            return self._frame_ids[frame]
        except (KeyError, TypeError):
            close = difflib.get_close_matches(str(frame), self.frame_names, n=5)
            raise KeyError(f"unknown frame {frame!r}; close names: {close} "
                           f"(valid: a URDF link name or an index in [0, {self.nframes}))") from None

    def joint_id(self, name: str) -> int:
        """Index of a movable (non-mimic) joint in ``joint_names``; ``KeyError`` listing close names."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            close = difflib.get_close_matches(str(name), self.joint_names, n=5)
            raise KeyError(f"unknown joint {name!r}; close names: {close}") from None

    def check_q(self, q: Any) -> np.ndarray:
        """``q`` as a float64 array of shape (nq,); ``ValueError`` naming both shapes otherwise.

        Runs on every call of every algorithm: the common case (a native float64 array of the
        right shape) costs three identity/shape tests (``F64`` is numpy's dtype singleton).
        """
        if type(q) is not np.ndarray or q.dtype is not F64:
            q = np.asarray(q, dtype=np.float64)
        if q.shape != self._q_shape:
            raise ValueError(f"q must have shape ({self.nq},), got {q.shape}")
        return q

    def check_v(self, v: Any, name: str = "v") -> np.ndarray:
        """``v`` (or another velocity-space vector called ``name``) as float64 of shape (nv,)."""
        if type(v) is not np.ndarray or v.dtype is not F64:
            v = np.asarray(v, dtype=np.float64)
        if v.shape != self._v_shape:
            raise ValueError(f"{name} must have shape ({self.nv},), got {v.shape}")
        return v

    # --- configurations ---------------------------------------------------------------------
    def neutral(self) -> np.ndarray:
        """Zero joint positions; identity base orientation (quaternion (0, 0, 0, 1)) at the origin."""
        q = np.zeros(self.nq)
        if self.floating_base:
            q[6] = 1.0
        return q

    def random_configuration(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Uniform within the joint limits; infinite limits are replaced by +-``UNBOUNDED_ANGLE_RANGE``
        (revolute, continuous) or +-``UNBOUNDED_TRANSLATION_RANGE`` (prismatic, base position);
        the base orientation is a uniformly random unit quaternion."""
        rng = np.random.default_rng(rng)
        lower, upper = self._sampling_bounds
        q = rng.uniform(lower, upper)
        if self.floating_base:
            quat = rng.normal(size=4)
            q[3:7] = quat / np.linalg.norm(quat)
        return q

    def _finite_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lower = np.array(self.lower_limit)
        upper = np.array(self.upper_limit)
        substitute = np.full(self.nq, UNBOUNDED_TRANSLATION_RANGE)
        first = 7 if self.floating_base else 0
        for k, body in enumerate(self.joint_body):
            if self.joint_type[body] == JOINT_REVOLUTE:
                substitute[first + k] = UNBOUNDED_ANGLE_RANGE
        lower = np.where(np.isfinite(lower), lower, -substitute)
        upper = np.where(np.isfinite(upper), upper, substitute)
        if self.floating_base:
            lower[3:7], upper[3:7] = -1.0, 1.0  # replaced by a random unit quaternion
        return lower, upper

    # --- kinematics (kinodyn.kinematics) ------------------------------------------------------
    frame_placement = _forward.frame_placement
    frame_placements = _forward.frame_placements
    frame_placements_batch = _forward.frame_placements_batch
    frame_jacobian = _jacobians.frame_jacobian
    frame_bias_acceleration = _jacobians.frame_bias_acceleration
    manipulability = _jacobians.manipulability
    com = _com.com
    com_jacobian = _com.com_jacobian
    integrate = _configuration.integrate
    difference = _configuration.difference

    # --- dynamics (kinodyn.dynamics) ------------------------------------------------------------
    rnea = _dynamics.rnea
    mass_matrix = _dynamics.mass_matrix
    nonlinear_effects = _dynamics.nonlinear_effects
    gravity_torques = _dynamics.gravity_torques
    coriolis_matrix = _dynamics.coriolis_matrix
    aba = _dynamics.aba
    centroidal_momentum_matrix = _dynamics.centroidal_momentum_matrix
    kinetic_energy = _dynamics.kinetic_energy
    potential_energy = _dynamics.potential_energy
