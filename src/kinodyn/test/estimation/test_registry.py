"""The filter seam: a filter is one module plus ``@register_filter``; the estimator runs any registered one.

``kinodyn.estimation.complementary`` is a third filter in its own module; one line registers it here, the
estimator's compiled event loop runs it without naming it, and its parameters reach it through
``EstimatorSettings``. The fixture unregisters it after these tests, so no other test sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.estimation import ErrorStateEKF, InvariantEKF, LeggedEstimator, complementary
from kinodyn.estimation.eskf import EskfParameters
from kinodyn.estimation.filter import GateParameters
from kinodyn.estimation.registry import FILTERS, FilterKernels, filter_class, register_filter
from kinodyn.estimation.settings import EstimatorSettings
from kinodyn.estimation.synthetic import trotting_walk

from .robots import QUADRUPED_FEET, QUADRUPED_IMU, QUADRUPED_STANDING_JOINTS, quadruped_offset_imu_model

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import ModuleType


@pytest.fixture(scope="module")
def toy() -> Iterator[ModuleType]:
    """kinodyn.estimation.complementary, its filter registered by its one line, unregistered afterwards."""
    register_filter("complementary")(complementary.ComplementaryFilter)
    yield complementary
    FILTERS.pop("complementary")


def test_the_built_in_filters_and_the_third_are_registered(toy: ModuleType) -> None:
    assert filter_class("eskf") is ErrorStateEKF
    assert filter_class("invariant") is InvariantEKF
    assert FILTERS["complementary"] is toy.ComplementaryFilter
    with pytest.raises(ValueError, match="filter must be one of complementary, eskf, invariant, got 'ukf'"):
        filter_class("ukf")


def test_registration_refuses_a_taken_name_and_an_incomplete_filter() -> None:
    with pytest.raises(ValueError, match="taken by"):
        register_filter("eskf")(InvariantEKF)

    class NoKernels:
        @dataclass(frozen=True)
        class Parameters(GateParameters):
            pass

    with pytest.raises(ValueError, match="KERNELS must be a FilterKernels"):
        register_filter("incomplete")(NoKernels)

    class WrongState(NoKernels):
        KERNELS = FilterKernels(tuple, None, None, None)

    with pytest.raises(ValueError, match=r"NamedTuple whose first field is core \(a FilterArrays\)"):
        register_filter("incomplete")(WrongState)
    assert "incomplete" not in FILTERS


def test_settings_own_the_filter_parameters(toy: ModuleType) -> None:
    ComplementaryParameters = toy.ComplementaryParameters
    assert EstimatorSettings().filter_parameters == EskfParameters()
    assert EstimatorSettings(filter="complementary").filter_parameters == ComplementaryParameters()
    with pytest.raises(ValueError, match="must be a ComplementaryParameters"):
        EstimatorSettings(filter="complementary", filter_parameters=EskfParameters())
    with pytest.raises(ValueError, match="position_gain must be in"):
        ComplementaryParameters(position_gain=0.0)
    with pytest.raises(ValueError, match=r"gate_probability must be in \(0, 1\)"):
        EskfParameters(gate_probability=1.0)


def test_the_estimator_runs_a_registered_third_filter(toy: ModuleType) -> None:
    """The complementary filter through LeggedEstimator on a clean synthetic trot: it initialises, gets an
    estimate at every IMU sample after that, appends the stance feet, tracks the base, and its gains reach it
    (two gains give two trajectories)."""
    model = quadruped_offset_imu_model()
    run = trotting_walk(model, QUADRUPED_IMU, QUADRUPED_FEET, duration=2.5, seed=1,
                        standing_joints=QUADRUPED_STANDING_JOINTS)
    errors, tracks = {}, {}
    for gain in (0.02, 0.5):
        estimator = LeggedEstimator(model, QUADRUPED_IMU, QUADRUPED_FEET, filter="complementary",
                                    filter_parameters=toy.ComplementaryParameters(position_gain=gain),
                                    init_duration=0.3)
        estimates, feet_seen = [], set()
        for k, t in enumerate(run.t):
            estimate = estimator.add_imu(t, run.imu_angular_velocity[k], run.imu_linear_acceleration[k])
            if estimate is not None:
                estimates.append((k, estimate.position))
            estimator.add_contacts(t, dict(zip(QUADRUPED_FEET, run.contacts[k].tolist(), strict=True)))
            report = estimator.add_joint_state(t, run.joint_positions[k], run.joint_velocities[k],
                                               run.joint_efforts[k])
            if report is not None:
                feet_seen.update(report.added)
        assert isinstance(estimator.filter, toy.ComplementaryFilter)
        assert estimator.filter.parameters.position_gain == gain
        first = estimates[0][0]
        assert run.t[first] < 0.5
        assert len(estimates) == len(run.t) - first
        assert feet_seen == set(QUADRUPED_FEET)
        assert estimator.counters["updates"] > 0
        positions = np.array([p for _, p in estimates])
        assert np.isfinite(positions).all()
        truth = run.position[[k for k, _ in estimates]]
        errors[gain] = float(np.abs(positions - truth - (positions[0] - truth[0])).max())
        tracks[gain] = positions
    assert max(errors.values()) < 0.01  # m over the walk, from the start of the estimates
    assert np.abs(tracks[0.5] - tracks[0.02]).max() > 1e-6
