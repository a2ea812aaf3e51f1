"""``Model``: the kinematic tree of a URDF as immutable flat arrays (docs/core-model-layout.md).

Algorithms are free functions taking ``(model, q, ...)`` in ``kinodyn.kinematics`` and
``kinodyn.dynamics``; the methods here are those functions bound to the model. ``create_data`` gives the
``kinodyn.data.Data`` the algorithms write into when passed as ``data=`` (Pinocchio's Model/Data split).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kinodyn import dynamics as _dynamics
from kinodyn.data import Data
from kinodyn.inputs import F64, real_array
from kinodyn.kernel_data import JOINT_FREEFLYER, JOINT_NONE, JOINT_PRISMATIC, JOINT_REVOLUTE, pack
from kinodyn.kinematics import center_of_mass as _com
from kinodyn.kinematics import configuration as _configuration
from kinodyn.kinematics import forward as _forward
from kinodyn.kinematics import jacobians as _jacobians
from kinodyn.urdf import ParsedURDF, model_fields, read_urdf

__all__ = ["JOINT_FREEFLYER", "JOINT_NONE", "JOINT_PRISMATIC", "JOINT_REVOLUTE", "Model"]

# Sampling ranges random_configuration uses where a limit is infinite.
UNBOUNDED_ANGLE_RANGE = math.pi  # rad, revolute / continuous: [-pi, pi]
UNBOUNDED_TRANSLATION_RANGE = 1.0  # m, prismatic and free-flyer position: [-1, 1]

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from numpy.typing import ArrayLike


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Model:
    """Kinematic tree, inertias, limits and frames of a robot; immutable once built.

    Build with ``Model.from_urdf``. The fields are those of docs/core-model-layout.md (read-only numpy
    arrays), plus ``nframes``, ``total_mass``, ``frame_ids`` (name or index -> index), ``q_shape``,
    ``v_shape`` and ``kernel_data = (ki, kf)`` for compiled kernels.
    """

    name: str
    nbodies: int
    body_names: tuple[str, ...]
    parent: np.ndarray  # int64 (nb,)
    joint_type: np.ndarray  # int64 (nb,)
    joint_axis: np.ndarray  # (nb, 3)
    joint_rotation: np.ndarray  # (nb, 3, 3)
    joint_translation: np.ndarray  # (nb, 3)
    idx_q: np.ndarray  # int64 (nb,)
    idx_v: np.ndarray  # int64 (nb,)
    nq_joint: np.ndarray  # int64 (nb,)
    nv_joint: np.ndarray  # int64 (nb,)
    joint_multiplier: np.ndarray  # (nb,)
    joint_offset: np.ndarray  # (nb,)
    mass: np.ndarray  # (nb,)
    body_com: np.ndarray  # (nb, 3)
    inertia: np.ndarray  # (nb, 3, 3)
    gravity: np.ndarray  # (3,)
    nq: int
    nv: int
    floating_base: bool
    joint_names: tuple[str, ...]
    joint_body: np.ndarray  # int64, one per joint name
    mimic_joint_names: tuple[str, ...]
    mimic_body: np.ndarray  # int64, one per mimic joint name
    lower_limit: np.ndarray  # (nq,)
    upper_limit: np.ndarray  # (nq,)
    velocity_limit: np.ndarray  # (nv,)
    effort_limit: np.ndarray  # (nv,)
    damping: np.ndarray  # (nv,)
    friction: np.ndarray  # (nv,)
    frame_names: tuple[str, ...]
    frame_body: np.ndarray  # int64 (nf,)
    frame_rotation: np.ndarray  # (nf, 3, 3)
    frame_translation: np.ndarray  # (nf, 3)
    nframes: int = field(init=False)
    total_mass: float = field(init=False)  # of the moving bodies (the universe, body 0, excluded)
    kernel_data: tuple[np.ndarray, np.ndarray] = field(init=False)
    frame_ids: dict[str | int, int] = field(init=False)  # the frame index of each name and index
    q_shape: tuple[int] = field(init=False)  # (nq,)
    v_shape: tuple[int] = field(init=False)  # (nv,)
    _sampling_bounds: tuple[np.ndarray, np.ndarray] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "nframes", len(self.frame_names))
        object.__setattr__(self, "total_mass", float(self.mass[1:].sum()))
        object.__setattr__(self, "kernel_data", pack(self))
        ids: dict[str | int, int] = {name: i for i, name in enumerate(self.frame_names)}
        ids.update({i: i for i in range(self.nframes)})
        object.__setattr__(self, "frame_ids", ids)
        object.__setattr__(self, "q_shape", (self.nq,))
        object.__setattr__(self, "v_shape", (self.nv,))
        object.__setattr__(self, "_sampling_bounds", self._finite_bounds())

    def __repr__(self) -> str:
        base = "floating" if self.floating_base else "fixed"
        return f"Model({self.name!r}, {base} base, nq={self.nq}, nv={self.nv}, frames={self.nframes})"

    @classmethod
    def from_urdf(cls, source: str | Path | ParsedURDF, floating_base: bool = False) -> Model:
        """Build from a URDF file path, XML string or ``kinodyn.urdf.read_urdf`` result; ``floating_base``
        adds a free flyer at the root.

        Raises ``kinodyn.urdf.URDFError`` (a ``ValueError``) for malformed files (``read_urdf``).
        """
        if not isinstance(floating_base, (bool, np.bool_)):
            raise ValueError(f"floating_base must be True or False, got {floating_base!r} "
                             f"({type(floating_base).__name__})")
        return cls(**model_fields(read_urdf(source), floating_base=bool(floating_base)))

    # --- names and inputs -------------------------------------------------------------------
    def frame_id(self, frame: str | int) -> int:
        """Index of a frame given by name or index; ``KeyError`` listing close names otherwise."""
        try:
            return self.frame_ids[frame]
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

    def check_q(self, q: ArrayLike) -> np.ndarray:
        """``q`` as a float64 array of shape (nq,); ``ValueError`` naming both shapes otherwise.

        Runs on every call of every algorithm: the common case (a native float64 array of the
        right shape) costs three identity/shape tests (``F64`` is numpy's dtype singleton).
        """
        if type(q) is not np.ndarray or q.dtype is not F64:
            q = real_array(q, "q")
        if q.shape != self.q_shape:
            raise ValueError(f"q must have shape ({self.nq},), got {q.shape}")
        return q

    def check_v(self, v: ArrayLike, name: str = "v") -> np.ndarray:
        """``v`` (or another velocity-space vector called ``name``) as float64 of shape (nv,)."""
        if type(v) is not np.ndarray or v.dtype is not F64:
            v = real_array(v, name)
        if v.shape != self.v_shape:
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
        try:
            rng = np.random.default_rng(rng)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"rng must be a numpy Generator, a non-negative int seed or None, got "
                             f"{rng!r}: {exc}") from None
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

    # --- data (kinodyn.data) ---------------------------------------------------------------------
    def create_data(self, frames: Sequence[str | int] = ()) -> Data:
        """A ``Data``: the buffers and results of one configuration of this model, reused across calls.

        Pass it as ``data=`` to the algorithms (``model.rnea(q, v, a, data=data)``), which then write into
        and return its arrays and allocate nothing; ``frames`` are those a per-tick evaluation into it
        reads (``kinodyn.evaluation.Evaluator``).
        """
        return Data(self, frames)

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
