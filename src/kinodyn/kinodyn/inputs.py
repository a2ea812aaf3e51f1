"""Input checks and conversions of the public functions (cheap: they run on every call).

The public functions test the common case inline before calling these: ``type(x) is ndarray``,
``x.dtype is F64`` (numpy's float64 dtype singleton: an identity test, where ``x.dtype != np.float64``
converts the type object on every call) and the shape; anything else goes through ``vector``, which
converts and raises the same errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

F64 = np.dtype(np.float64)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def real_array(x: ArrayLike, name: str) -> np.ndarray:
    """``x`` as a float64 array; ``ValueError`` naming ``name`` unless it holds real numbers.

    The slow path of every input check: numpy alone would turn a string into its own message that
    names no argument, and drop the imaginary part of a complex number without a word.
    """
    try:
        array = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} must be an array of real numbers: {exc}") from None
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be an array of real numbers, got {type(x).__name__} with dtype "
                         f"{array.dtype}")
    return array.astype(np.float64, copy=False)


def vector(x: ArrayLike, n: int, name: str) -> np.ndarray:
    """``x`` as a float64 array of shape (n,); ``ValueError`` naming the expected shape otherwise."""
    if type(x) is not np.ndarray or x.dtype is not F64:
        x = real_array(x, name)
    if x.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {x.shape}")
    return x


def rows(X: ArrayLike, n: int, name: str, count: int | None = None) -> np.ndarray:
    """``X`` as a C-contiguous float64 (N, n) array (N = ``count`` when given)."""
    X = np.ascontiguousarray(real_array(X, name))
    if X.shape[1:] != (n,) or (count is not None and X.shape[0] != count):  # (N, n): two dimensions
        expected = f"({'N' if count is None else count}, {n})"
        raise ValueError(f"{name} must have shape {expected}, got {X.shape}")
    return X
