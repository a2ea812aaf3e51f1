"""The interface every legged state filter implements, and the values it exchanges (Robot Dynamics Essential,
§5.3).

Conventions (docs/estimation.md, "Conventions"; /work/notes/est-design.md): the filters estimate the IMU
frame: ``position``/``velocity`` of its origin in the world (odom) frame, ``rotation`` = ``C_WI`` (IMU to
world), accelerometer and gyroscope biases in the IMU frame, and one world position per foot in contact.
Quaternions, when used, are Hamilton and stored (x, y, z, w).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

import numba
import numpy as np

from kinodyn.estimation.consistency import gate as chi_square_gate
from kinodyn.estimation.layout import NAV
from kinodyn.estimation.noise import NoiseParameters
from kinodyn.kernel import Kernel
from kinodyn.spatial.rotations import as_rotation_matrix, as_vector

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numba.core.dispatcher import Dispatcher
    from numpy.typing import ArrayLike

    from kinodyn.estimation.registry import FilterKernels
    from kinodyn.spatial.rotations import FloatArray

NOT_POSITIVE_DEFINITE = (
    "update_contacts: innovation covariance not positive definite (a foot covariance that is not positive "
    "semi-definite, or encoder_noise and foot_random_walk both 0); not applied"
)
"""Why ``update_contacts`` refused an update (ValueError, state untouched)."""


def _finite_array(name: str, value: object, shape: tuple[int, ...]) -> FloatArray:
    """``value`` as a float64 array of ``shape`` with finite entries, else ValueError naming ``name``."""
    array = np.array(value, dtype=np.float64)
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} has non-finite entries: {array.tolist()}")
    array.setflags(write=False)
    return array


def checked_input_variance(value: tuple[float, float]) -> tuple[float, float]:
    """``propagate``'s ``input_variance`` as two finite floats >= 0 (accelerometer, gyroscope), else
    ValueError."""
    accelerometer, gyroscope = (float(x) for x in value)
    if not (0.0 <= accelerometer < math.inf and 0.0 <= gyroscope < math.inf):
        raise ValueError(f"input_variance must be two finite variances >= 0, got {value!r}")
    return accelerometer, gyroscope


def initial_covariance(noise: NoiseParameters, covariance: object = None) -> FloatArray:
    """The 15x15 initial covariance of ``[dp, dv, dtheta(local), db_a, db_g]`` (ESKF convention) for
    ``LeggedFilter.initialize``: ``covariance`` checked (finite, symmetric, positive semi-definite), or, if
    None, the diagonal of ``noise.initial_*`` standard deviations."""
    if covariance is None:
        std = np.repeat([noise.initial_position, noise.initial_velocity, noise.initial_orientation,
                         noise.initial_accelerometer_bias, noise.initial_gyroscope_bias], 3)
        return np.diag(std**2)
    P = np.array(_finite_array("covariance", covariance, (NAV, NAV)))
    scale = max(float(np.abs(P).max()), np.finfo(float).tiny)
    if float(np.abs(P - P.T).max()) > 1e-9 * scale:
        raise ValueError("covariance must be symmetric (initial covariance of [dp, dv, dtheta, db_a, db_g])")
    if float(np.linalg.eigvalsh(P).min()) < -1e-9 * scale:
        raise ValueError("covariance must be positive semi-definite (initial covariance of [dp, dv, dtheta, "
                         "db_a, db_g])")
    result: FloatArray = 0.5 * (P + P.T)
    return result


class FilterArrays(NamedTuple):
    """The field ``core`` every filter's compiled state starts with (registry module doc): the filter's
    arrays, worked on in place, and its per-foot chi-square gate."""

    C: np.ndarray
    p: np.ndarray
    v: np.ndarray
    biases: np.ndarray
    feet: np.ndarray
    P: np.ndarray
    gate: float


class KernelState(Protocol):
    """A filter's compiled state: a NamedTuple whose first field is ``core`` (registry module doc)."""

    @property
    def core(self) -> FilterArrays: ...


_ENTRIES: dict[tuple[Dispatcher, type], Kernel] = {}


@numba.njit(cache=True, inline="always")
def symmetric_part_into(M: np.ndarray, out: np.ndarray) -> None:
    """``out = (M + M^T) / 2`` (square, same size), each pair computed once: the filters' covariance after an
    update."""
    n = M.shape[0]
    for i in range(n):
        for j in range(i, n):
            s = 0.5 * (M[i, j] + M[j, i])
            out[i, j] = s
            out[j, i] = s


@numba.njit(cache=True)
def navigation_block(state: KernelState, out: np.ndarray) -> None:
    """The ``navigation_covariance`` kernel (registry module doc) of a filter whose error is the ESKF
    convention: the first 15x15 block of P."""
    out[:, :] = state.core.P[:NAV, :NAV]


def call_kernel(kernel: Dispatcher, state: KernelState, *args: object) -> Any:  # noqa: ANN401  (the step's result: numba's are untyped)
    """``kernel(state, *args)`` (a filter's compiled step, from Python) through one entry compiled for the
    argument types of its first call per state type: numba's dispatch types a NamedTuple state field by field
    on every call, which costs far more than the step. The filters call it with fixed types (C-contiguous
    float64 arrays they build, Python floats)."""
    key = (kernel, type(state))
    entry = _ENTRIES.get(key)
    if entry is None:
        types = (numba.typeof(arg) for arg in (state, *args))  # type: ignore[no-untyped-call]  # numba is unannotated
        entry = _ENTRIES[key] = Kernel(kernel, *types)
    return entry.call(state, *args)


@dataclass(frozen=True)
class GateParameters:
    """The settings every registered filter has: ``gate_probability``, the probability of the per-foot 3-dof
    chi-square gate of the kinematic update, in (0, 1). A filter's ``Parameters`` extends it."""

    gate_probability: float = 0.9999

    def __post_init__(self) -> None:
        value = self.gate_probability
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value < 1.0:
            raise ValueError(f"parameter gate_probability must be in (0, 1), got {value!r}")
        object.__setattr__(self, "gate_probability", float(value))


@dataclass(frozen=True)
class FootMeasurement:
    """One foot's position in the IMU frame from forward kinematics of the measured joints, with its
    covariance (encoder noise through the leg Jacobian); the stance relation (115) in the IMU frame."""

    name: str
    position: FloatArray
    covariance: FloatArray

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("FootMeasurement.name must be a non-empty foot link name")
        position = _finite_array(f"foot {self.name!r} position", self.position, (3,))
        covariance = _finite_array(f"foot {self.name!r} covariance", self.covariance, (3, 3))
        (a, b, c), (b2, d, e), (c2, e2, f) = covariance.tolist()
        scale = max(abs(a), abs(d), abs(f))
        tolerance = 1e-12 * scale
        if abs(b - b2) > tolerance or abs(c - c2) > tolerance or abs(e - e2) > tolerance:
            raise ValueError(f"foot {self.name!r} covariance is not symmetric: {covariance.tolist()}")
        # positive semi-definite <=> every principal minor of order k >= 0 (to rounding, scale^k)
        determinant = a * (d * f - e * e) - b * (b * f - c * e) + c * (b * e - c * d)
        if (
            min(a, d, f) < -tolerance
            or min(a * d - b * b, a * f - c * c, d * f - e * e) < -tolerance * scale
            or determinant < -tolerance * scale * scale
        ):
            raise ValueError(
                f"foot {self.name!r} covariance is not positive semi-definite: {covariance.tolist()}"
            )
        object.__setattr__(self, "position", position)
        object.__setattr__(self, "covariance", covariance)

    @classmethod
    def computed(cls, name: str, position: FloatArray, covariance: FloatArray) -> FootMeasurement:
        """A measurement from values kinodyn computed itself (``LegKinematics``: finite joints through the
        compiled leg FK, covariance ``J sigma^2 J^T`` symmetric by construction), stored read-only without the
        input checks of ``__init__`` (they cost more than the FK in the 500 Hz loop). Only for such values:
        anything else goes through ``FootMeasurement(...)``."""
        measurement = object.__new__(cls)
        object.__setattr__(measurement, "name", name)
        object.__setattr__(measurement, "position", position)
        object.__setattr__(measurement, "covariance", covariance)
        return measurement


@dataclass(frozen=True)
class UpdateReport:
    """What one ``update_contacts`` call did: feet applied, gated out, appended and marginalised, and the
    normalised innovation squared ``nu^T S^-1 nu`` of the applied stacked innovation (nan if none)."""

    used: tuple[str, ...]
    rejected: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    nis: float
    dof: int


class CopiedArray:
    """A read-only attribute of a filter: a copy of its array ``name`` (``part`` of it), so the caller cannot
    change the state."""

    def __init__(self, name: str, part: slice = slice(None)) -> None:
        self.name = name
        self.part = part

    def __get__(self, instance: object, owner: type | None = None) -> FloatArray:
        result: FloatArray = getattr(instance, self.name)[self.part].copy()
        return result


class LeggedFilter:
    """A filter over the IMU navigation state, its biases and the feet in contact (Robot Dynamics Essential,
    §5.2-§5.3): the base class of every filter the estimator runs (kinodyn.estimation.registry).

    ``propagate`` takes the raw IMU readings (IMU frame) held over ``dt`` and, optionally, the variances
    ``input_variance = (accelerometer, gyroscope)`` ((m/s^2)^2, (rad/s)^2) of an unknown error of those
    readings that stays constant over the step (a reading held beyond its period: the estimator's gap noise),
    which enters the process noise like the white noise does: ``variance * dt^2`` on the velocity and the
    angle, through the filter's own input map; ``update_contacts`` takes exactly the feet in contact now:
    new ones are appended (``d = p + C r`` with the covariance propagated from P and the measurement
    covariance, no information gain), feet in the state that are not given are marginalised, the others are
    corrected by the stance relation with a per-foot chi-square gate.

    The nominal state it keeps, and reads out as copies: IMU position ``_p``, velocity ``_v`` (world),
    rotation ``_C`` (C_WI), ``_biases`` = [b_a, b_g] (IMU frame), feet ``_feet`` (K x 3, world) named
    ``_names``, covariance ``_P`` in the filter's own error convention, state order. A registered subclass
    declares its ``Parameters`` dataclass (``GateParameters`` and its own settings; ``parameters`` holds an
    instance) and ``KERNELS`` (its compiled state and steps, through which ``propagate``, the correction of
    ``update_contacts`` and ``navigation_covariance`` run), and implements ``_start``, ``_sync``, ``_append``
    and ``nees``.
    """

    _p: FloatArray
    _v: FloatArray
    _C: FloatArray
    _biases: FloatArray
    _feet: FloatArray
    _names: list[str]
    _P: FloatArray
    _initialized: bool
    _state: KernelState  # the subclass's, over the arrays above (its _sync builds it when one is replaced)

    Parameters: ClassVar[type[GateParameters]]  # the registered subclass's settings
    KERNELS: ClassVar[FilterKernels]  # of the registered subclass
    parameters: GateParameters
    noise: NoiseParameters
    gate: float  # the per-foot chi-square gate of the kinematic update

    position = CopiedArray("_p")
    velocity = CopiedArray("_v")
    rotation = CopiedArray("_C")
    accelerometer_bias = CopiedArray("_biases", slice(0, 3))
    gyroscope_bias = CopiedArray("_biases", slice(3, 6))
    covariance = CopiedArray("_P")  # the full error covariance, 15 + 3K square, the filter's own convention

    def _configure(self, parameters: GateParameters, noise: NoiseParameters | None, gravity: float
                   ) -> FloatArray:
        """Set ``parameters``, ``noise`` (None: the defaults) and ``gate``, the chi-square gate of
        ``parameters.gate_probability`` (3 dof); return the gravity vector ``[0, 0, -gravity]`` (ValueError
        unless ``gravity`` is finite and > 0 m/s^2). The constructor's first step."""
        if not (math.isfinite(gravity) and gravity > 0.0):
            raise ValueError(f"gravity must be finite and > 0 (m/s^2), got {gravity!r}")
        self.parameters = parameters
        self.noise = NoiseParameters() if noise is None else noise
        self.gate = chi_square_gate(3, parameters.gate_probability)
        return np.array([0.0, 0.0, -float(gravity)])

    def _start_uninitialized(self) -> None:
        """The constructor's last step: the state at rest at the origin with the default covariance, not yet
        ``initialized``."""
        self.initialize(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
        self._initialized = False

    def _core(self) -> FilterArrays:
        """The ``core`` of the compiled state, over the current arrays."""
        return FilterArrays(self._C, self._p, self._v, self._biases, self._feet, self._P, self.gate)

    def kernel_state(self) -> KernelState:
        """The compiled state over the filter's arrays (registry module doc)."""
        return self._state

    @property
    def initialized(self) -> bool:
        """True once ``initialize`` has run."""
        return self._initialized

    @property
    def feet(self) -> tuple[str, ...]:
        """The feet in the state, in state order."""
        return tuple(self._names)

    def _require_initialized(self) -> None:
        if not self._initialized:
            raise RuntimeError(
                f"{type(self).__name__}: call initialize() before propagate() or update_contacts()"
            )

    def initialize(
        self,
        rotation: ArrayLike,
        position: ArrayLike,
        velocity: ArrayLike,
        accelerometer_bias: ArrayLike,
        gyroscope_bias: ArrayLike,
        covariance: ArrayLike | None = None,
    ) -> None:
        """Start from this nominal state, no feet, with the 15x15 ``covariance`` of ``[dp, dv, dtheta(local),
        db_a, db_g]`` in the ESKF convention (``initial_covariance``; None: the diagonal of
        ``noise.initial_*``), which ``_start`` takes to the filter's own."""
        P = initial_covariance(self.noise, covariance)
        C = np.array(as_rotation_matrix(rotation))  # copies: the caller keeps its arrays
        p, v, b_a, b_g = (np.array(as_vector(value, 3, name)) for name, value in (
            ("position", position), ("velocity", velocity), ("accelerometer_bias", accelerometer_bias),
            ("gyroscope_bias", gyroscope_bias)))
        self._C, self._p, self._v, self._biases = C, p, v, np.concatenate([b_a, b_g])
        self._names = []
        self._feet = np.zeros((0, 3))
        self._start(P)
        self._initialized = True
        self._sync()

    def propagate(
        self,
        angular_velocity: ArrayLike,
        linear_acceleration: ArrayLike,
        dt: float,
        input_variance: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        """One IMU step with the raw readings (IMU frame) held over ``dt`` > 0 s and the ``input_variance``
        (class doc), by the filter's compiled ``propagate``."""
        self._require_initialized()
        # fresh contiguous writable copies: one compiled signature whatever the caller passes
        w_m = np.array(as_vector(angular_velocity, 3, "angular_velocity"))
        a_m = np.array(as_vector(linear_acceleration, 3, "linear_acceleration"))
        if not (math.isfinite(dt) and dt > 0.0):
            raise ValueError(f"dt must be finite and > 0 (s), got {dt!r}")
        accelerometer, gyroscope = checked_input_variance(input_variance)
        call_kernel(self.KERNELS.propagate, self._state, w_m, a_m, float(dt), accelerometer, gyroscope)

    def update_contacts(self, feet: Sequence[FootMeasurement]) -> UpdateReport:
        """Apply the contact set ``feet`` (exactly the feet in contact now): marginalise the feet that lifted
        off (``_remove``), correct the ones in the state with a per-foot chi-square gate (``_correct``, the
        filter's own kinematic update), then append the ones that touched down (``_append``, no information
        gain)."""
        self._require_initialized()
        given = {foot.name: foot for foot in feet}
        if len(given) != len(feet):
            raise ValueError(f"update_contacts: duplicate foot names in {[foot.name for foot in feet]}")
        removed = tuple(name for name in self._names if name not in given)
        if removed:
            self._remove(removed)
        measured = [given[name] for name in self._names]
        used: tuple[str, ...] = ()
        rejected: tuple[str, ...] = ()
        nis = float("nan")
        if measured:
            accepted = np.zeros(len(measured), dtype=np.bool_)
            try:
                nis = self._correct(
                    np.array([foot.position for foot in measured]),
                    np.array([foot.covariance for foot in measured]),
                    accepted,
                )
            except np.linalg.LinAlgError as exc:  # raised before the kernel writes anything
                raise ValueError(NOT_POSITIVE_DEFINITE) from exc
            used = tuple(foot.name for foot, ok in zip(measured, accepted, strict=True) if ok)
            rejected = tuple(foot.name for foot, ok in zip(measured, accepted, strict=True) if not ok)
        added = tuple(foot.name for foot in feet if foot.name not in self._names)
        for name in added:
            self._append(given[name])
        return UpdateReport(used, rejected, added, removed, nis, 3 * len(used))

    def _correct(self, positions: FloatArray, covariances: FloatArray, accepted: np.ndarray) -> float:
        """Correct with the measurements of every foot in the state, in state order, by the filter's compiled
        ``correct`` (registry module doc); set ``accepted`` per foot; return the NIS of the applied stacked
        innovation."""
        return float(call_kernel(self.KERNELS.correct, self.kernel_state(),
                                 np.ascontiguousarray(positions, dtype=np.float64),
                                 np.ascontiguousarray(covariances, dtype=np.float64), accepted,
                                 np.empty(len(accepted))))

    def navigation_covariance(self) -> FloatArray:
        """15x15 covariance of ``[dp, dv, dtheta, db_a, db_g]`` in the ESKF convention (world dp, dv; local
        dtheta, ``C_true = C Exp(dtheta)``), by the filter's compiled ``navigation_covariance``."""
        out = np.empty((NAV, NAV))
        call_kernel(self.KERNELS.navigation_covariance, self.kernel_state(), out)
        return out

    def _start(self, covariance: FloatArray) -> None:
        """``initialize``'s step of the filter's own: ``_P`` from the 15x15 ``covariance`` in the ESKF
        convention, and whatever else the filter derives from the new nominal state."""
        raise NotImplementedError

    def _sync(self) -> None:
        """Build ``_state`` over the current arrays (after any of them was replaced)."""
        raise NotImplementedError

    def _remove(self, names: Sequence[str]) -> None:
        """Marginalise the feet ``names``: drop their state and their rows and columns of P (the same in any
        error convention of this layout: Hartley et al. 2020 §5.4 for the invariant EKF)."""
        keep = [i for i, name in enumerate(self._names) if name not in names]
        index = np.concatenate([np.arange(NAV)] + [NAV + 3 * i + np.arange(3) for i in keep])
        self._P = np.ascontiguousarray(self._P[np.ix_(index, index)])
        self._feet = np.ascontiguousarray(self._feet[keep])
        self._names = [self._names[i] for i in keep]
        self._sync()

    def _append(self, foot: FootMeasurement) -> None:
        """Augment the state with a foot that touched down, without information gain."""
        raise NotImplementedError

    def foot_position(self, name: str) -> FloatArray:
        """World position of the foot ``name``; KeyError naming the feet in the state otherwise."""
        if name not in self._names:
            raise KeyError(f"foot {name!r} is not in the state (feet in contact: {self._names})")
        result: FloatArray = self._feet[self._names.index(name)].copy()
        return result

    def nees(self, position: ArrayLike, velocity: ArrayLike, rotation: ArrayLike) -> float:
        """9-dof normalised estimation error squared of ``[p, v, theta]`` against the truth, in the filter's
        own error convention."""
        raise NotImplementedError


@dataclass(frozen=True)
class NavigationState:
    """A snapshot of a filter's navigation state and its 15x15 covariance (``navigation_covariance``)."""

    rotation: FloatArray
    position: FloatArray
    velocity: FloatArray
    accelerometer_bias: FloatArray
    gyroscope_bias: FloatArray
    covariance: FloatArray

    @classmethod
    def of(cls, legged_filter: LeggedFilter) -> NavigationState:
        """Copy the current state of ``legged_filter``."""
        return cls(
            rotation=np.array(legged_filter.rotation),
            position=np.array(legged_filter.position),
            velocity=np.array(legged_filter.velocity),
            accelerometer_bias=np.array(legged_filter.accelerometer_bias),
            gyroscope_bias=np.array(legged_filter.gyroscope_bias),
            covariance=np.array(legged_filter.navigation_covariance()),
        )
