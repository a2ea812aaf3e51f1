"""``model.create_data()``: the algorithms called with a Data write into its arrays, take their compiled
scratch from ``data.work``, allocate nothing, and give the bits of the calls without a Data."""

from __future__ import annotations

import importlib
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.dynamics._inputs import NO_EXTERNAL_WRENCHES
from kinodyn.evaluation import EVALUATION_FIELDS, Evaluator
from kinodyn.layout import Layout

import kinodyn as kd

from .urdf_text import MIMIC_URDF

if TYPE_CHECKING:
    from collections.abc import Callable

    from kinodyn.data import Data

URDF = Path(__file__).resolve().parents[3] / "urdf"
FOOT = "LF_FOOT"


@pytest.fixture(scope="module", params=["quadruped", "arm7", "mimic"])
def model(request: pytest.FixtureRequest) -> kd.Model:
    if request.param == "quadruped":
        return kd.Model.from_urdf(URDF / "quadruped.urdf", floating_base=True)
    if request.param == "arm7":
        return kd.Model.from_urdf(URDF / "arm7.urdf")
    return kd.Model.from_urdf(MIMIC_URDF, floating_base=True)


def calls(model: kd.Model, data: Data | None) -> dict[str, Callable[[], np.ndarray]]:
    """``{name: call with data=data}`` at one random state."""
    rng = np.random.default_rng(11)
    q, v, a = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    f_ext = rng.normal(size=(model.nbodies, 6))
    frame = model.frame_names[-1]
    return {
        "rnea": lambda: model.rnea(q, v, a, data=data),
        "rnea f_ext": lambda: model.rnea(q, v, a, f_ext, data=data),
        "nonlinear_effects": lambda: model.nonlinear_effects(q, v, data=data),
        "gravity_torques": lambda: model.gravity_torques(q, data=data),
        "mass_matrix": lambda: model.mass_matrix(q, data=data),
        "aba": lambda: model.aba(q, v, a, data=data),
        "centroidal_momentum_matrix": lambda: model.centroidal_momentum_matrix(q, data=data),
        "com": lambda: model.com(q, data=data),
        "frame_placement": lambda: model.frame_placement(q, frame, data=data),
        "frame_placements": lambda: model.frame_placements(q, data=data),
        "frame_jacobian": lambda: model.frame_jacobian(q, frame, "world", data=data),
    }


def field(model: kd.Model, data: Data, name: str) -> np.ndarray:
    """The Data's array the call ``name`` of ``calls`` writes."""
    fields: dict[str, np.ndarray] = {"rnea": data.tau, "rnea f_ext": data.tau, "nonlinear_effects": data.nle,
              "gravity_torques": data.g,
              "mass_matrix": data.M, "aba": data.ddq, "centroidal_momentum_matrix": data.Ag, "com": data.com,
              "frame_placement": data.oMf_rows[model.nframes - 1], "frame_placements": data.oMf,
              "frame_jacobian": data.J}
    return fields[name]


def test_results_are_the_datas_arrays_bit_for_bit(model: kd.Model) -> None:
    data = model.create_data()
    without = calls(model, None)
    for name, call in calls(model, data).items():
        expected = without[name]()
        data.work[:] = np.nan  # the scratch's previous content must not matter
        got = call()
        assert got is field(model, data, name), name
        assert np.shares_memory(got, data.block), name
        assert got.tobytes() == expected.tobytes(), name
        assert call() is got, name  # the same array on every call


def test_kernels_take_their_scratch_from_the_data(model: kd.Model) -> None:
    data = model.create_data()
    for name, call in calls(model, data).items():
        if name in ("frame_placement", "frame_jacobian"):
            continue  # placement and Jacobian of one frame walk up its support on registers, no scratch
        data.work[:] = np.nan
        call()
        assert np.isfinite(data.work).any(), f"{name} did not write into data.work"


def peak_bytes(table: list[Callable[[], object]]) -> int:
    """Peak of the memory traced while running every call of ``table`` 20 times (transients included)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for _ in range(20):
            for call in table:
                call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_calls_with_a_data_allocate_nothing(model: kd.Model) -> None:
    """Beyond what numba's own call of a compiled function passes (its argument tuple: the floor of every
    call), nothing is traced with a Data; a result array is without one."""
    data = model.create_data()
    with_data, without = calls(model, data), calls(model, None)
    for table in (with_data, without):
        del table["rnea f_ext"]  # the wrench array is the caller's, converted per call
    ki, kf = model.kernel_data
    q, zeros = model.neutral(), np.zeros(model.nv)
    rnea_module = importlib.import_module("kinodyn.dynamics.rnea")
    rnea_kernel = rnea_module._RNEA_DATA  # noqa: SLF001  (the compiled call alone; eight arguments, the most)

    def compiled_only() -> None:
        rnea_kernel.call(ki, kf, q, zeros, zeros, NO_EXTERNAL_WRENCHES, data.work, data.tau)

    for call in (compiled_only, *with_data.values(), *without.values()):
        call()  # compiled and warm
    floor = peak_bytes([compiled_only])
    assert peak_bytes(list(without.values())) >= floor + 8 * model.nv  # a fresh result array is seen
    for name, call in with_data.items():
        assert peak_bytes([call]) <= floor, name


def test_an_evaluation_into_a_data(model: kd.Model) -> None:
    frames = [model.frame_names[-1], model.frame_names[1]]
    evaluator = Evaluator(model, frames)
    data = evaluator.create_data()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v = model.random_configuration(rng), rng.normal(size=model.nv)
        fresh = evaluator.evaluate(q, v)
        data.work[:] = np.nan
        into = evaluator.evaluate(q, v, data)
        assert into is data.evaluation
        for name in EVALUATION_FIELDS:
            assert getattr(into, name).tobytes() == getattr(fresh, name).tobytes(), name
            assert np.shares_memory(getattr(into, name), data.block), name
        assert into.mass_matrix is data.M
        assert into.nonlinear_effects is data.nle
        assert into.centroidal_matrix is data.Ag
        assert into.frames == fresh.frames == evaluator.frames
    # the separate algorithms write the same arrays
    np.testing.assert_array_equal(model.mass_matrix(q, data=data), fresh.mass_matrix)


def test_a_data_is_refused_by_another_model_or_frame_list(model: kd.Model) -> None:
    other = kd.Model.from_urdf(URDF / "planar_2link.urdf")
    data = other.create_data()
    with pytest.raises(ValueError, match="create_data"):
        model.rnea(model.neutral(), np.zeros(model.nv), np.zeros(model.nv), data=data)
    with pytest.raises(ValueError, match="create_data"):
        model.frame_placement(model.neutral(), 0, data=data)
    evaluator = Evaluator(model, [model.frame_names[-1]])
    with pytest.raises(ValueError, match=r"evaluator\.create_data"):
        evaluator.evaluate(model.neutral(), np.zeros(model.nv), model.create_data())


def test_layout_slots_tile_the_block() -> None:
    layout = Layout([("a", (2, 3)), ("b", (4,)), ("c", (0, 6)), ("d", (1,))])
    assert list(layout.offsets) == [0, 6, 10, 10, 11]
    assert layout.size == 11
    block = np.arange(11.0)
    views = layout.views(block)
    assert views["a"].shape == (2, 3)
    assert views["d"][0] == 10.0
    assert views["b"].tolist() == [6.0, 7.0, 8.0, 9.0]
    with pytest.raises(ValueError, match="distinct"):
        Layout([("a", (1,)), ("a", (2,))])
    with pytest.raises(ValueError, match="shape"):
        layout.views(np.zeros(10))
