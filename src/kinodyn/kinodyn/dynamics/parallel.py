"""Splitting a batch of N states into contiguous chunks, one per numba thread.

A batch kernel takes the chunk count (``chunk_count(n)``, computed in Python: numba's thread
count read inside a kernel would keep it out of the on-disk cache), runs
``for c in prange(chunks)`` and handles rows ``chunk_bounds(n, chunks, c)`` of chunk c with
scratch arrays allocated once per chunk. ``numba.set_num_threads`` limits the threads used;
the environment variable ``NUMBA_NUM_THREADS`` caps them at start-up.
"""

from __future__ import annotations

import os

from numba import get_num_threads

from kinodyn.spatial.compiled import inline

# GNU OpenMP's default spinning wait stalls threaded batch calls by milliseconds whenever another process
# holds a core; waiting passively costs a few percent on an idle machine. libgomp reads the variable
# when it loads (numba loads it at the first threaded call), so this takes effect unless the user set it or
# another library (pinocchio, for one) loaded OpenMP first.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def chunk_count(n: int) -> int:
    """Number of chunks for n rows: numba's thread count, at most n (0 for an empty batch)."""
    return min(get_num_threads(), n)


@inline
def chunk_bounds(n: int, chunks: int, c: int) -> tuple[int, int]:
    """Rows ``[start, stop)`` of chunk c of ``chunks`` near-equal contiguous chunks of n rows."""
    return c * n // chunks, (c + 1) * n // chunks
