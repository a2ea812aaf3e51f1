"""The whole-body QP's relaxation (kinodyn.control.wbc.Relaxation, docs/wbc.md) as locomotion parameters:
``relaxation``, ``relaxation_weight``, ``relaxation_bound``, validated, applied at construction and live."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from kinodyn.control.locomotion import LocomotionController, LocomotionParameters
from kinodyn.control.wbc import Relaxation

import kinodyn as kd

from .test_controller import FEET, NOMINAL, URDFS, standing

THROWN_BASE = np.array([0.5, 1.0, -0.2, -5.0, 1.0, 0.2])  # m/s, rad/s: the robot hit hard, spinning


@pytest.fixture(scope="module")
def model() -> kd.Model:
    return kd.Model.from_urdf(URDFS / "quadruped.urdf", floating_base=True)


@pytest.mark.parametrize(("field", "value"), [
    ("relaxation_weight", 0.0), ("relaxation_weight", float("nan")), ("relaxation_bound", -1.0),
    ("relaxation_bound", float("inf")), ("relaxation", 1), ("relaxation", "true")])
def test_relaxation_parameters_are_checked(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"locomotion parameter {field} must be"):
        LocomotionParameters(**{field: value})  # type: ignore[arg-type]


def test_relaxation_applies_at_construction_and_live(model: kd.Model) -> None:
    """Four feet down while the base tumbles and the legs swing at tens of rad/s: the hard level has no
    solution. Built with ``relaxation`` false the tick fails; switched on live (with its weight and bound) the
    next tick is answered relaxed, its torques within the effort limits."""
    q = standing(model)
    v = np.concatenate((THROWN_BASE, np.random.default_rng(1).normal(scale=50.0, size=model.nv - 6)))
    ctl = LocomotionController(model, FEET, NOMINAL, LocomotionParameters(relaxation=False))
    assert ctl.wbc.relaxation == Relaxation(enabled=False)
    failed = ctl.update(q, v, 0.0)
    assert not failed.ok
    assert failed.status == "infeasible"
    ctl.set_parameters(replace(ctl.params, relaxation=True, relaxation_weight=1e5, relaxation_bound=5.0))
    assert ctl.wbc.relaxation == Relaxation(True, 1e5, 5.0)
    relaxed = ctl.update(q, v, 0.002)
    assert relaxed.status == "relaxed", relaxed.message
    assert relaxed.tau is not None
    assert np.all(np.isfinite(relaxed.tau))
    assert np.all(np.abs(relaxed.tau) <= model.effort_limit[6:])
    assert ctl.wbc.relaxed_ticks == 1
