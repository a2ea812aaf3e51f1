"""``rnea_batch`` and ``aba_batch`` against the row-by-row functions, serial and on numba's threads:
batch sizes not divisible by the thread count, one row and none (the chunked parallel path,
``kinodyn.dynamics.parallel``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numba
import numpy as np
import pytest

import kinodyn as kd
from kinodyn import dynamics

if TYPE_CHECKING:
    from collections.abc import Iterator

URDFS = Path(__file__).resolve().parents[4] / "urdf"
CASES = {"arm7": (URDFS / "arm7.urdf", False), "quadruped": (URDFS / "quadruped.urdf", True)}
THREADS = sorted({1, min(2, numba.config.NUMBA_NUM_THREADS), min(3, numba.config.NUMBA_NUM_THREADS)})


@pytest.fixture(scope="module", params=sorted(CASES))
def model(request: pytest.FixtureRequest) -> kd.Model:
    path, floating = CASES[request.param]
    return kd.Model.from_urdf(path, floating_base=floating)


@pytest.fixture(params=THREADS)
def threads(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = numba.get_num_threads()
    numba.set_num_threads(request.param)
    yield request.param
    numba.set_num_threads(previous)


def states(model: kd.Model, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    Q = np.array([model.random_configuration(rng) for _ in range(n)]).reshape(n, model.nq)
    return Q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


def close_rows(batch: np.ndarray, rows: list[np.ndarray], nv: int) -> None:
    expected = np.array(rows).reshape(len(rows), nv)
    assert batch.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(batch, expected, rtol=1e-12, atol=1e-12 * scale)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 101])
def test_rnea_batch_equals_row_by_row(model: kd.Model, threads: int, n: int) -> None:
    Q, V, A = states(model, n)
    close_rows(dynamics.rnea_batch(model, Q, V, A),
               [dynamics.rnea(model, q, v, a) for q, v, a in zip(Q, V, A, strict=True)], model.nv)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 101])
def test_aba_batch_equals_row_by_row(model: kd.Model, threads: int, n: int) -> None:
    Q, V, TAU = states(model, n)
    close_rows(dynamics.aba_batch(model, Q, V, TAU),
               [dynamics.aba(model, q, v, tau) for q, v, tau in zip(Q, V, TAU, strict=True)], model.nv)


def test_batches_leave_inputs_unchanged_and_aba_batch_inverts_rnea_batch(model: kd.Model) -> None:
    Q, V, A = states(model, 9)
    copies = Q.copy(), V.copy(), A.copy()
    tau = dynamics.rnea_batch(model, Q, V, A)
    qdd = dynamics.aba_batch(model, Q, V, tau)
    for original, copy in zip((Q, V, A), copies, strict=True):
        np.testing.assert_array_equal(original, copy)
    np.testing.assert_allclose(qdd, A, rtol=1e-9, atol=1e-9)  # ABA inverts RNEA row by row
