"""External wrenches and batch rows of the dynamics functions (the generic checks: ``kinodyn.inputs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.dynamics.parallel import chunk_count
from kinodyn.inputs import rows, vector

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import ArrayLike

    from kinodyn.kernel import Kernel
    from kinodyn.model import Model

NO_EXTERNAL_WRENCHES = np.zeros((0, 6))
NO_EXTERNAL_WRENCHES.flags.writeable = False


def external_wrenches(model: Model, f_ext: ArrayLike | Mapping[str, ArrayLike] | None) -> np.ndarray:
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


def run_batch(model: Model, Q: ArrayLike, V: ArrayLike, X: ArrayLike, x_name: str, threaded: Kernel,
              serial: Kernel) -> np.ndarray:
    """(N, nv) from a batch kernel pair over rows ``(Q[k], V[k], X[k])``: ``threaded`` (``chunks`` contiguous
    chunks of rows, one per numba thread, ``kinodyn.dynamics.parallel``; ``numba.set_num_threads`` limits
    the threads, ``NUMBA_NUM_THREADS`` caps them at start-up) when numba has more than one thread and there
    is more than one row, else ``serial`` (rows ``[0, N)``, no thread pool started)."""
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
