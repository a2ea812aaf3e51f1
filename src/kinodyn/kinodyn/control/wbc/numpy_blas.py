"""numpy's own BLAS and LAPACK, called from compiled code exactly as numpy calls them.

The whole-body QP's answer depends on the last bit of its data (its internal-force directions are weighted
about 1e-11), so a product computed in another order than numpy's would change it. These functions make
the calls numpy makes, with the same arguments, into the same library (the OpenBLAS numpy is linked
against, found among the process's mapped libraries): the same numbers, without a Python call per product.

- ``dot(x, y)``: ``x @ y`` of two 1-D vectors (numpy's ``dot``: ``0.0 + ddot``);
- ``matvec(A, x, out)``: ``np.matmul(A, x, out=out)`` (numpy's ``gemv``, matmul.c.src; its ``dot`` for one
  row) for a 2-D ``A`` with one unit stride;
- ``matmat(A, B, out)``: ``np.matmul(A, B, out=out)`` (``gemm``, or ``syrk`` and the copied triangle for a
  matrix times its own transpose) for 2-D operands with one unit stride each and a C-contiguous ``out``;
- ``geqrf``, ``orgqr``, ``gesv``: LAPACK's, on Fortran-ordered work arrays, with the work sizes numpy's
  ``_umath_linalg`` (``qr_r_raw``, ``qr_complete``, ``solve1``) asks for (``lwork_geqrf``, ``lwork_orgqr``).

Integers are the library's 64-bit ones (numpy's wheels use an ILP64 OpenBLAS). ``ints`` arguments are an
int64 scratch array of at least 8 entries (LAPACK takes its integers by address).
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import numpy as np
import numpy.linalg  # (loads the BLAS library into the process)
from numba import njit, types

from kinodyn.kernel import address, element_address

_ROW_MAJOR, _COL_MAJOR, _NO_TRANS, _TRANS, _UPPER = 101, 102, 111, 112, 121
_CBLAS = ("cblas_ddot", "cblas_dgemv", "cblas_dgemm", "cblas_dsyrk")
_LAPACK = ("dgeqrf", "dorgqr", "dgesv")
FLOAT64_BYTES = 8


def _numpy_blas() -> tuple[ctypes.CDLL, dict[str, str]]:
    """The OpenBLAS mapped into this process by numpy and the names of the routines used here (numpy's
    wheels: ``scipy_cblas_dgemm64_``, ``scipy_dgeqrf_64_``)."""
    with open("/proc/self/maps") as maps:
        mapped = {line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line}
    numpy_dir = str(Path(np.__file__).resolve().parent.parent)  # numpy's wheel: site-packages/numpy.libs
    paths = sorted(mapped, key=lambda path: (not path.startswith(numpy_dir), path))  # numpy's own first
    for path in paths:
        lib = ctypes.CDLL(path)
        for prefix, cblas_suffix, lapack_suffix in (("scipy_", "64_", "_64_"), ("", "64_", "_64_")):
            names = {n: f"{prefix}{n}{cblas_suffix}" for n in _CBLAS}
            names |= {n: f"{prefix}{n}{lapack_suffix}" for n in _LAPACK}
            if all(hasattr(lib, name) for name in names.values()):
                return lib, names
    raise ImportError("kinodyn's whole-body controller calls numpy's ILP64 OpenBLAS (numpy's wheels from "
                      f"PyPI); none was found among the libraries numpy loaded ({paths or 'no OpenBLAS'}): "
                      "install numpy from its wheel (pip install numpy)")


_LIB, _NAMES = _numpy_blas()
for _name in _NAMES.values():
    llvm.add_symbol(_name, ctypes.cast(getattr(_LIB, _name), ctypes.c_void_p).value)

_I32, _I64, _F64, _P = types.int32, types.int64, types.float64, types.voidptr
# Any: numba's ExternalFunction has no static type
_dgemv: Any = types.ExternalFunction(_NAMES["cblas_dgemv"], types.void(
    _I32, _I32, _I64, _I64, _F64, _P, _I64, _P, _I64, _F64, _P, _I64))
_ddot: Any = types.ExternalFunction(_NAMES["cblas_ddot"], types.float64(_I64, _P, _I64, _P, _I64))
_dgemm: Any = types.ExternalFunction(_NAMES["cblas_dgemm"], types.void(
    _I32, _I32, _I32, _I64, _I64, _I64, _F64, _P, _I64, _P, _I64, _F64, _P, _I64))
_dsyrk: Any = types.ExternalFunction(_NAMES["cblas_dsyrk"], types.void(
    _I32, _I32, _I32, _I64, _I64, _F64, _P, _I64, _F64, _P, _I64))
_dgeqrf: Any = types.ExternalFunction(_NAMES["dgeqrf"], types.void(_P, _P, _P, _P, _P, _P, _P, _P))
_dorgqr: Any = types.ExternalFunction(_NAMES["dorgqr"], types.void(_P, _P, _P, _P, _P, _P, _P, _P, _P))
_dgesv: Any = types.ExternalFunction(_NAMES["dgesv"], types.void(_P, _P, _P, _P, _P, _P, _P, _P))


@njit(cache=True, inline="always")
def _blasable(stride1: int, stride2: int, d2: int) -> bool:
    """matmul.c.src's ``is_blasable2d`` for float64 (byte strides, the second dimension ``d2``)."""
    return stride2 == FLOAT64_BYTES and stride1 % FLOAT64_BYTES == 0 and stride1 // FLOAT64_BYTES >= d2


@njit(cache=True)
def dot(x: np.ndarray, y: np.ndarray) -> float:
    """``x @ y`` of two 1-D vectors of one size (at least 1): numpy's dot, ``0.0 + ddot``."""
    result: float = 0.0 + _ddot(x.size, address(x), x.strides[0] // 8, address(y), y.strides[0] // 8)
    return result


@njit(cache=True)
def matvec(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``np.matmul(A, x, out=out)`` (``A`` 2-D with one unit stride, ``out`` contiguous): numpy's gemv, or
    for one row its dot (``0.0 + ddot``), for one column or an empty dimension its plain loop."""
    m, n = A.shape
    s_m, s_n = A.strides
    if m == 0:
        return
    if n == 0 or (n == 1 and m > 1):
        for i in range(m):
            out[i] = 0.0 + A[i, 0] * x[0] if n else 0.0
        return
    if m == 1:
        out[0] = 0.0 + _ddot(n, address(A), s_n // 8, address(x), x.strides[0] // 8)
        return
    if _blasable(s_m, s_n, n):
        order, lda = _COL_MAJOR, s_m // 8
    else:
        order, lda = _ROW_MAJOR, s_n // 8
    _dgemv(order, _TRANS, n, m, 1.0, address(A), lda, address(x), x.strides[0] // 8, 0.0, address(out), 1)


@njit(cache=True)
def matmat(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    """``np.matmul(A, B, out=out)`` for ``A`` (m, n), ``B`` (n, p), neither dimension 1: numpy's gemm, or
    its syrk and copied triangle when ``B`` is ``A``'s own transpose (operands with one unit stride each,
    ``out`` C-contiguous)."""
    m, n = A.shape
    p = B.shape[1]
    s1_m, s1_n = A.strides
    s2_n, s2_p = B.strides
    ldc = out.strides[0] // 8
    if _blasable(s1_m, s1_n, n):
        trans1, lda = _NO_TRANS, s1_m // 8
    else:
        trans1, lda = _TRANS, s1_n // 8
    if _blasable(s2_n, s2_p, p):
        trans2, ldb = _NO_TRANS, s2_n // 8
    else:
        trans2, ldb = _TRANS, s2_p // 8
    if (A.ctypes.data == B.ctypes.data and m == p and s1_m == s2_p and s1_n == s2_n and trans1 != trans2):
        _dsyrk(_ROW_MAJOR, _UPPER, trans1, p, n, 1.0, address(A), lda if trans1 == _NO_TRANS else ldb, 0.0,
               address(out), ldc)
        for i in range(p):
            for j in range(i + 1, p):
                out[j, i] = out[i, j]
    else:
        _dgemm(_ROW_MAJOR, trans1, trans2, m, p, n, 1.0, address(A), lda, address(B), ldb, 0.0,
               address(out), ldc)


@njit(cache=True)
def geqrf(m: int, n: int, a: np.ndarray, tau: np.ndarray, work: np.ndarray, lwork: int,
          ints: np.ndarray) -> int:
    """LAPACK ``dgeqrf`` on the (m, n) column-major ``a`` (flat, leading dimension m); its ``info``."""
    ints[0], ints[1], ints[2], ints[3] = m, n, max(1, m), lwork
    _dgeqrf(element_address(ints, 0), element_address(ints, 1), address(a), element_address(ints, 2),
            address(tau), address(work), element_address(ints, 3), element_address(ints, 4))
    result: int = ints[4]
    return result


@njit(cache=True)
def orgqr(m: int, n: int, k: int, q: np.ndarray, tau: np.ndarray, work: np.ndarray, lwork: int,
          ints: np.ndarray) -> int:
    """LAPACK ``dorgqr``: the (m, n) column-major ``q`` (leading dimension m) from ``k`` reflectors."""
    ints[0], ints[1], ints[2], ints[3], ints[4] = m, n, k, max(1, m), lwork
    _dorgqr(element_address(ints, 0), element_address(ints, 1), element_address(ints, 2), address(q),
            element_address(ints, 3), address(tau), address(work), element_address(ints, 4),
            element_address(ints, 5))
    result: int = ints[5]
    return result


@njit(cache=True)
def gesv(n: int, a: np.ndarray, b: np.ndarray, pivots: np.ndarray, ints: np.ndarray) -> int:
    """LAPACK ``dgesv`` for one right-hand side: ``b`` <- the solution of the column-major (n, n) ``a``."""
    ints[0], ints[1], ints[2], ints[3] = n, 1, max(1, n), max(1, n)
    _dgesv(element_address(ints, 0), element_address(ints, 1), address(a), element_address(ints, 2),
           address(pivots), address(b), element_address(ints, 3), element_address(ints, 4))
    result: int = ints[4]
    return result


@njit(cache=True)
def _query(m: int, n: int, k: int, ints: np.ndarray) -> tuple[float, float]:
    """The work sizes ``dgeqrf`` (m, n) and ``dorgqr`` (m, m, k) ask for (``lwork = -1``)."""
    one, work = np.zeros(max(m * max(n, m), 1)), np.zeros(1)
    tau = np.zeros(max(k, 1))
    geqrf(m, n, one, tau, work, -1, ints)
    first = work[0]
    orgqr(m, m, k, one, tau, work, -1, ints)
    return first, work[0]


def lwork_geqrf(m: int, n: int) -> int:
    """``qr_r_raw``'s work size for an (m, n) matrix: ``max(1, n, query)``."""
    return max(1, n, int(_query(m, n, min(m, n), np.zeros(8, dtype=np.int64))[0]))


def lwork_orgqr(m: int, n: int) -> int:
    """``qr_complete``'s work size for an (m, n) matrix (Q is m x m): ``max(1, n, query)``."""
    return max(1, n, int(_query(m, n, min(m, n), np.zeros(8, dtype=np.int64))[1]))
