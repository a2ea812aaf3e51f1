"""Legged filters by name, and the compiled operations the estimator's event loop calls on a filter's state.

A filter is one module and one registration line: its class (a ``LeggedFilter`` implementing
``LeggedFilter``) with a ``Parameters`` dataclass (its own settings with defaults and validation; the
constructor takes ``noise``, ``gravity`` and those fields by name) and ``KERNELS``, then
``@register_filter("name")`` on the class. ``KERNELS`` names the filter's compiled state, a NamedTuple type
whose instances ``kernel_state()`` returns (its first field ``core``, a ``filter.FilterArrays``: the IMU
rotation C_WI, position and velocity in the world, the biases ``[b_a, b_g]``, the feet in contact (K x 3,
world), the ``15 + 3K`` covariance ordered ``[p, v, theta, b_a, b_g, d_1..d_K]`` with position and velocity
errors in world axes, the per-foot chi-square gate), and its three kernels (``numba.njit``):

- ``propagate(state, angular_velocity, linear_acceleration, dt, accelerometer_variance, gyroscope_variance)``:
  one IMU step with the raw readings held over ``dt`` (``LeggedFilter.propagate``);
- ``correct(state, positions, covariances, accepted, nis_feet) -> nis``: the kinematic update of every foot in
  the state, in state order (IMU-frame positions (K x 3) and covariances (K x 3 x 3)); ``accepted`` and
  ``nis_feet`` per foot; the NIS of the applied stacked innovation (nan if none);
- ``navigation_covariance(state, out)``: the 15x15 covariance of ``[dp, dv, dtheta, db_a, db_g]`` in the ESKF
  convention (local ``dtheta``), what the estimate's covariances are mapped from.

The event loop (kinodyn.estimation.loop) calls them through ``propagate``, ``correct`` and
``navigation_covariance`` below, which numba resolves by the type of the state when it compiles the loop for
that filter: no filter is named in the loop.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from numba import types
from numba.extending import overload

from kinodyn.estimation.filter import LeggedFilter

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    from numba.core.dispatcher import Dispatcher

    from kinodyn.estimation.filter import KernelState



@dataclass(frozen=True)
class FilterKernels:
    """A filter's compiled state type and kernels (module doc)."""

    state: type
    propagate: Dispatcher
    correct: Dispatcher
    navigation_covariance: Dispatcher


FILTERS: dict[str, type[LeggedFilter]] = {}
"""Registered filter classes by name (``register_filter``)."""
F = TypeVar("F", bound=type[LeggedFilter])


def propagate(state: KernelState, angular_velocity: np.ndarray, linear_acceleration: np.ndarray, dt: float,
              accelerometer_variance: float, gyroscope_variance: float) -> None:
    """Compiled code only: the ``propagate`` kernel of the filter whose state ``state`` is."""
    raise TypeError("registry.propagate is resolved by numba in compiled code; call the filter's method")


def correct(state: KernelState, positions: np.ndarray, covariances: np.ndarray, accepted: np.ndarray,
            nis_feet: np.ndarray) -> float:
    """Compiled code only: the ``correct`` kernel of the filter whose state ``state`` is."""
    raise TypeError("registry.correct is resolved by numba in compiled code; call the filter's method")


def navigation_covariance(state: KernelState, out: np.ndarray) -> None:
    """Compiled code only: the ``navigation_covariance`` kernel of the filter whose state ``state`` is."""
    raise TypeError("registry.navigation_covariance is resolved by numba in compiled code; call the filter's "
                    "method")


def _dispatch(kernels: FilterKernels) -> None:
    """Resolve the three generic operations to ``kernels`` for states of type ``kernels.state``."""
    state_class = kernels.state

    def mine(state: types.Type) -> bool:
        named = isinstance(state, types.BaseNamedTuple)
        return named and getattr(state, "instance_class", None) is state_class

    # numba's overload requires a typing function (called with numba types) and its implementation (compiled
    # for values) to declare the same parameters, annotations included: Any in both.
    @overload(propagate)
    def _propagate(state: Any, angular_velocity: Any, linear_acceleration: Any, dt: Any,  # noqa: ANN401
                   accelerometer_variance: Any, gyroscope_variance: Any) -> Callable[..., None] | None:  # noqa: ANN401
        if not mine(state):
            return None
        kernel = kernels.propagate

        def impl(state: Any, angular_velocity: Any, linear_acceleration: Any, dt: Any,  # noqa: ANN401
                 accelerometer_variance: Any, gyroscope_variance: Any) -> None:  # noqa: ANN401
            kernel(state, angular_velocity, linear_acceleration, dt, accelerometer_variance,
                   gyroscope_variance)

        return impl

    @overload(correct)
    def _correct(state: Any, positions: Any, covariances: Any, accepted: Any,  # noqa: ANN401
                 nis_feet: Any) -> Callable[..., float] | None:  # noqa: ANN401
        if not mine(state):
            return None
        kernel = kernels.correct

        def impl(state: Any, positions: Any, covariances: Any, accepted: Any,  # noqa: ANN401
                 nis_feet: Any) -> float:  # noqa: ANN401
            nis: float = kernel(state, positions, covariances, accepted, nis_feet)
            return nis

        return impl

    @overload(navigation_covariance)
    def _navigation_covariance(state: Any, out: Any) -> Callable[..., None] | None:  # noqa: ANN401
        if not mine(state):
            return None
        kernel = kernels.navigation_covariance

        def impl(state: Any, out: Any) -> None:  # noqa: ANN401
            kernel(state, out)

        return impl


def register_filter(name: str) -> Callable[[F], F]:
    """Class decorator: register the filter under ``name`` (module doc). ValueError for a name taken by
    another class, a class without a ``Parameters`` dataclass or ``KERNELS``, or a state lacking the
    common fields."""

    def register(cls: F) -> F:
        if not name or not name.isidentifier():
            raise ValueError(f"filter name must be a non-empty identifier, got {name!r}")
        known = FILTERS.get(name)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise ValueError(f"filter name {name!r} is taken by {known.__module__}.{known.__qualname__}")
        parameters = getattr(cls, "Parameters", None)
        if parameters is None or not dataclasses.is_dataclass(parameters):
            raise ValueError(f"filter {name!r}: {cls.__qualname__}.Parameters must be a dataclass")
        kernels = getattr(cls, "KERNELS", None)
        if not isinstance(kernels, FilterKernels):
            raise ValueError(f"filter {name!r}: {cls.__qualname__}.KERNELS must be a FilterKernels")
        if kernels.state.__module__ == "__main__":
            raise ValueError(f"filter {name!r}: define its compiled state in an importable module, not in "
                             "__main__ (the loop's on-disk cache names the state's type by its module)")
        if tuple(getattr(kernels.state, "_fields", ()))[:1] != ("core",):
            raise ValueError(f"filter {name!r}: its compiled state must be a NamedTuple whose first field is "
                             "core (a FilterArrays)")
        if known is None or known.KERNELS.state is not kernels.state:
            _dispatch(kernels)
        FILTERS[name] = cls
        return cls

    return register


def filter_class(name: str) -> type[LeggedFilter]:
    """The filter registered as ``name``; ValueError listing the registered ones otherwise."""
    try:
        return FILTERS[name]
    except KeyError:
        raise ValueError(f"filter must be one of {', '.join(sorted(FILTERS))}, got {name!r}") from None
