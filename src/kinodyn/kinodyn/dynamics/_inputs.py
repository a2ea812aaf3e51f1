"""Input checks and conversions shared by the dynamics functions (cheap: they run on every call).

The public functions test the common case inline before calling these: ``type(x) is ndarray``,
``x.dtype is F64`` (numpy's float64 dtype singleton: an identity test, where ``x.dtype != np.float64``
converts the type object on every call) and the shape; anything else goes through ``vector``, which
converts and raises the same errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kinodyn.dynamics.parallel import chunk_count

if TYPE_CHECKING:
    from kinodyn._kernels.entry import Kernel
    from kinodyn.model import Model

F64 = np.dtype(np.float64)
NO_EXTERNAL_WRENCHES = np.zeros((0, 6))
NO_EXTERNAL_WRENCHES.flags.writeable = False


def real_array(x: Any, name: str) -> np.ndarray:
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


def vector(x: Any, n: int, name: str) -> np.ndarray:
    """``x`` as a float64 array of shape (n,); ``ValueError`` naming the expected shape otherwise."""
    if type(x) is not np.ndarray or x.dtype is not F64:
        x = real_array(x, name)
    if x.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {x.shape}")
    return x


def rows(X: Any, n: int, name: str, count: int | None = None) -> np.ndarray:
    """``X`` as a C-contiguous float64 (N, n) array (N = ``count`` when given)."""
    X = np.ascontiguousarray(real_array(X, name))
    if X.ndim != 2 or X.shape[1] != n or (count is not None and X.shape[0] != count):
        expected = f"({'N' if count is None else count}, {n})"
        raise ValueError(f"{name} must have shape {expected}, got {X.shape}")
    return X


def external_wrenches(model: Model, f_ext: Any) -> np.ndarray:
    """Body-frame wrenches (nbodies, 6) for the kernels, from ``f_ext`` as the dynamics functions take it.

    - ``None``: no external wrench.
    - array (nbodies, 6): row i is the wrench ``[f; tau]`` acting on body i, in body i's frame about
      its origin (Pinocchio's ``fext``, one entry per joint). Row 0 (the universe) has no effect.
    - dict ``{link name: wrench (6,)}``: the wrench acting on that link, in the link's frame about
      the link origin; links merged into a body by fixed joints are moved to the body frame:
      ``f_b = C f``, ``tau_b = C tau + r x f_b`` with ``(C, r)`` the link placement in the body.
    """
    if f_ext is None:
        return NO_EXTERNAL_WRENCHES
    nb = model.nbodies
    if isinstance(f_ext, dict):
        out = np.zeros((nb, 6))
        for link, wrench in f_ext.items():
            frame = model.frame_id(link)
            w = vector(wrench, 6, f"f_ext[{link!r}]")
            C = model.frame_rotation[frame]
            f = C @ w[:3]
            body = model.frame_body[frame]
            out[body, :3] += f
            out[body, 3:] += C @ w[3:] + np.cross(model.frame_translation[frame], f)
        return out
    f_ext = np.ascontiguousarray(f_ext, dtype=np.float64)
    if f_ext.shape != (nb, 6):
        raise ValueError(f"f_ext must be None, a dict {{link name: wrench (6,)}} or an array of shape "
                         f"({nb}, 6) (one body-frame wrench per body, row 0 = universe), got {f_ext.shape}")
    return f_ext


def run_batch(model: Model, Q: Any, V: Any, X: Any, x_name: str, threaded: Kernel,
              serial: Kernel) -> np.ndarray:
    """(N, nv) from a batch kernel pair over rows ``(Q[k], V[k], X[k])``: ``threaded`` (``chunks`` contiguous
    chunks of rows on numba's threads, ``kinodyn.dynamics.parallel``) when numba has more than one
    thread and there is more than one row, else ``serial`` (rows ``[0, N)``, no thread pool started)."""
    Q = rows(Q, model.nq, "Q")
    n = Q.shape[0]
    V = rows(V, model.nv, "V", n)
    X = rows(X, model.nv, x_name, n)
    out = np.empty((n, model.nv))
    ki, kf = model.kernel_data
    chunks = chunk_count(n)
    if chunks > 1:
        threaded.call(ki, kf, Q, V, X, chunks, out)
    else:
        serial.call(ki, kf, Q, V, X, out, 0, n)
    return out
