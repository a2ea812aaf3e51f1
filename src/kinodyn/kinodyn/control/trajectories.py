"""Reference trajectories with analytic derivatives, and tracking metrics, for the closed-loop examples.

``Figure8``: the lemniscate of Gerono in the plane of two orthonormal directions ``u``, ``w``:
``p(t) = c + A sin(W t) u + (A / 2) sin(2 W t) w`` with ``W = 2 pi f``; it crosses itself at ``c`` (t = 0)
and spans ``2 A`` along ``u`` and ``A`` along ``w``. Velocity and acceleration are its exact derivatives,
the feed-forward of the task laws (Robot Dynamics lecture notes (ETH), (3.90)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control._inputs import MATRIX_NDIM
from kinodyn.spatial.rotations import as_vector

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass(frozen=True, slots=True)
class PointReference:
    """Position, velocity and acceleration of a point at one instant (world axes)."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


@dataclass(frozen=True)
class Figure8:
    """Figure-8 of amplitude ``A`` [m] (half-width along ``u``) at ``frequency`` [Hz] (module doc)."""

    center: ArrayLike
    amplitude: float = 0.1
    frequency: float = 0.5
    u: ArrayLike = (1.0, 0.0, 0.0)
    w: ArrayLike = (0.0, 1.0, 0.0)
    _basis: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", as_vector(self.center, 3, "center"))
        if not (math.isfinite(self.amplitude) and self.amplitude > 0.0):
            raise ValueError(f"amplitude must be finite and > 0 [m], got {self.amplitude}")
        if not (math.isfinite(self.frequency) and self.frequency > 0.0):
            raise ValueError(f"frequency must be finite and > 0 [Hz], got {self.frequency}")
        basis = np.column_stack([as_vector(self.u, 3, "u"), as_vector(self.w, 3, "w")])
        if not np.allclose(basis.T @ basis, np.eye(2), rtol=0.0, atol=1e-9):
            raise ValueError(f"u and w must be orthonormal, got u={self.u!r}, w={self.w!r}")
        object.__setattr__(self, "_basis", basis)

    def sample(self, t: float) -> PointReference:
        """The reference at time ``t`` [s]."""
        W = 2.0 * math.pi * self.frequency
        A = self.amplitude
        s1, c1, s2, c2 = math.sin(W * t), math.cos(W * t), math.sin(2 * W * t), math.cos(2 * W * t)
        B = self._basis
        return PointReference(
            position=self.center + B @ [A * s1, 0.5 * A * s2],
            velocity=B @ [A * W * c1, A * W * c2],
            acceleration=B @ [-A * W * W * s1, -2.0 * A * W * W * s2],
        )


def rms(errors: ArrayLike) -> float:
    """Root mean square of the Euclidean norms of the rows of ``errors`` (N, d): ``sqrt(mean |e_k|^2)``."""
    e = np.asarray(errors, dtype=float)
    if e.ndim != MATRIX_NDIM or e.shape[0] == 0:
        raise ValueError(f"errors must be a non-empty (N, d) array, got shape {e.shape}")
    return float(np.sqrt(np.mean(np.sum(e * e, axis=1))))
