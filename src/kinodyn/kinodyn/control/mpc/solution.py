"""What a solve answers: ``MpcStatus``, a backend's ``BackendResult`` and the caller's ``MpcSolution``;
``finish`` runs a solve given in parts (a generator, ``CentroidalMpc.solve_parts``) to its answer."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from kinodyn.control.qp import QPStatus

if TYPE_CHECKING:
    from collections.abc import Generator

    import numpy as np

T = TypeVar("T")


def finish(steps: Generator[None, None, T]) -> T:
    """Run the steps of a solve (each ``yield`` a point where it can be paused) and return its answer."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            answer: T = done.value  # (StopIteration.value is typed Any)
            return answer


class MpcStatus(enum.Enum):
    """Outcome of a solve; only SOLVED carries forces and states."""

    SOLVED = "solved"
    INFEASIBLE = "infeasible"
    MAX_ITERATIONS = "max_iterations"  # the iteration or time limit of the solver was reached
    INACCURATE = "inaccurate"  # the solver stopped short of its tolerances
    NUMERICAL_ERROR = "numerical_error"
    INVALID_INPUT = "invalid_input"  # a wrong shape or a non-finite number in the inputs

    @classmethod
    def from_qp(cls, status: QPStatus) -> MpcStatus:
        """The MPC's name of a QP solver's status (unbounded and non-convex cannot arise from a valid
        problem: numerical errors)."""
        return {QPStatus.SOLVED: cls.SOLVED, QPStatus.INFEASIBLE: cls.INFEASIBLE,
                QPStatus.MAX_ITERATIONS: cls.MAX_ITERATIONS,
                QPStatus.INACCURATE: cls.INACCURATE}.get(status, cls.NUMERICAL_ERROR)


@dataclass(frozen=True)
class BackendResult:
    """A solver's answer: ``forces`` (N, n_feet, 3) in units of the weight and ``states`` (N, 12) for
    ``x_1 .. x_N``, both None unless SOLVED."""

    status: MpcStatus
    message: str
    iterations: int
    forces: np.ndarray | None = None
    states: np.ndarray | None = None


@dataclass(frozen=True)
class MpcSolution:
    """One solve's answer. ``forces`` (N, n_feet, 3) [N, world, ground on robot] of the feet in ``feet`` order
    at each step (``forces[0]``: to apply now); ``states`` (N + 1, 12), the predicted SRB states from the
    measured one; ``base_positions`` (N + 1, 3), the base origin along them; ``times`` (N + 1,) [s] from
    now. All three None unless ``ok``. ``solve_time`` [s]: wall time of ``solve`` (checks, build, solve;
    of its parts only when given in parts, ``CentroidalMpc.solve_parts``)."""

    status: MpcStatus
    message: str
    solver: str
    feet: tuple[str, ...]
    times: np.ndarray
    forces: np.ndarray | None
    states: np.ndarray | None
    base_positions: np.ndarray | None
    iterations: int
    solve_time: float

    @property
    def ok(self) -> bool:
        return self.status is MpcStatus.SOLVED
