"""The public functions call compiled kernels through ``kinodyn.kernel.Kernel`` (no type dispatch).

The entry points unbox their arguments without checking them, so every input form a user may pass
(lists, integer arrays, strided views, read-only arrays) must reach them converted, and give the
result of the plain float64 array bit for bit.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.kernel import Kernel

import kinodyn as kd

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

# kinodyn.dynamics re-exports the functions under the module names
rnea_module = importlib.import_module("kinodyn.dynamics.rnea")
aba_module = importlib.import_module("kinodyn.dynamics.aba")
QUADRUPED = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"


@pytest.fixture(scope="module")
def model() -> kd.Model:
    return kd.Model.from_urdf(QUADRUPED, floating_base=True)


def variants(x: np.ndarray) -> list[ArrayLike]:
    """``x`` as a list, a strided view, a read-only array and a Fortran-ordered copy."""
    strided = np.repeat(x, 2)[::2]
    assert not strided.flags.c_contiguous or x.size == 1
    readonly = x.copy()
    readonly.flags.writeable = False
    return [list(x), strided, readonly, np.asfortranarray(x)]


def test_every_input_form_gives_the_float64_result(model: kd.Model) -> None:
    rng = np.random.default_rng(3)
    q, v, a = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    calls: dict[str, Callable[[ArrayLike, ArrayLike, ArrayLike], np.ndarray | float]] = {
        "frame_placement": lambda q, v, a: model.frame_placement(q, "LF_FOOT"),
        "frame_jacobian": lambda q, v, a: model.frame_jacobian(q, "LF_FOOT", "local"),
        "frame_bias_acceleration": lambda q, v, a: model.frame_bias_acceleration(q, v, "LF_FOOT", "world"),
        "com": lambda q, v, a: model.com(q),
        "integrate": lambda q, v, a: model.integrate(q, v, 0.1),
        "rnea": model.rnea,
        "aba": model.aba,
        "mass_matrix": lambda q, v, a: model.mass_matrix(q),
        "nonlinear_effects": lambda q, v, a: model.nonlinear_effects(q, v),
        "kinetic_energy": lambda q, v, a: model.kinetic_energy(q, v),
    }
    for name, call in calls.items():
        expected = call(q, v, a)
        for qx, vx, ax in zip(variants(q), variants(v), variants(a), strict=True):
            np.testing.assert_array_equal(call(qx, vx, ax), expected, err_msg=name)


def test_integer_inputs_are_converted() -> None:
    arm = kd.Model.from_urdf(QUADRUPED.parent / "arm7.urdf")
    ints = np.arange(arm.nq) % 2
    assert ints.dtype == np.int64
    np.testing.assert_array_equal(arm.rnea(ints, ints, ints), arm.rnea(*(ints.astype(float),) * 3))


def test_kernel_calls_the_compiled_entry_point(model: kd.Model) -> None:
    model.rnea(model.neutral(), np.zeros(model.nv), np.zeros(model.nv))
    kernel = rnea_module._RNEA  # noqa: SLF001  (the module's kernel entry, what this test inspects)
    assert isinstance(kernel, Kernel)
    overload = kernel._dispatcher.overloads[kernel._argtypes]  # noqa: SLF001  (its compiled overload)
    assert kernel.call is overload.entry_point  # type: ignore[attr-defined]  # (numba's CompileResult is untyped)
    batch = aba_module._ABA_BATCH  # noqa: SLF001  (the module's kernel entry, what this test inspects)
    Q = np.array([model.neutral()] * 2)
    out = aba_module.aba_batch(model, Q, np.zeros((2, model.nv)), np.zeros((2, model.nv)))
    assert batch.call is batch._dispatcher.overloads[batch._argtypes].entry_point  # noqa: SLF001  (its compiled overload)
    np.testing.assert_array_equal(out[0], model.aba(model.neutral(), np.zeros(model.nv), np.zeros(model.nv)))
