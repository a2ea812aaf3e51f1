"""Validation of control-law inputs: gains, axis masks and poses, each refused with one clear message."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.spatial import homogeneous_transform

MATRIX_NDIM = 2

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def gain(value: ArrayLike, dim: int, name: str) -> np.ndarray:
    """A scalar or a ``dim`` vector of finite non-negative numbers, as a ``dim`` vector."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(dim, float(arr))
    if arr.shape != (dim,) or not np.all(np.isfinite(arr)) or np.any(arr < 0.0):
        raise ValueError(f"{name} must be a finite number >= 0 or {dim} of them, got {value!r}")
    return arr


def selection(mask: ArrayLike, dim: int, name: str) -> np.ndarray:
    """``mask`` as ``dim`` booleans with at least one True; ``ValueError`` otherwise."""
    arr = np.asarray(mask)
    if arr.shape != (dim,) or arr.dtype != np.bool_ or not arr.any():
        raise ValueError(f"{name} must be {dim} booleans with at least one True, got {mask!r}")
    return arr


def as_pose(pose: ArrayLike, name: str = "pose") -> np.ndarray:
    """``pose`` as a 4x4 homogeneous transform (finite, rotation block, last row [0, 0, 0, 1])."""
    T = np.asarray(pose, dtype=float)
    if T.shape != (4, 4):
        raise ValueError(f"{name} must be a 4x4 homogeneous transform, got shape {T.shape}")
    if not np.array_equal(T[3], [0.0, 0.0, 0.0, 1.0]):
        raise ValueError(f"the last row of {name} must be [0, 0, 0, 1], got {T[3].tolist()}")
    return homogeneous_transform(T[:3, :3], T[:3, 3])
