"""QP solvers behind one small interface: DAQP (dense), OSQP (sparse).

    solver = make_solver("daqp")                 # or "osqp"; options per backend
    result = solver.solve(QP(H, g, A=A, b=b, C=C, l=l, u=u, lb=lb, ub=ub), warm_start=previous)
    result.ok, result.status, result.x, result.iterations

DEFAULT_SOLVER is the fastest at equal accuracy on WBC-shaped dense problems, measured by bench/bench_qp.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kinodyn.control.qp.daqp_solver import DaqpSolver
from kinodyn.control.qp.osqp_solver import OsqpSolver
from kinodyn.control.qp.problem import QP, KKTResiduals, QPResult, QPStatus, kkt_residuals
from kinodyn.control.qp.solver import QPSolver

if TYPE_CHECKING:
    from collections.abc import Callable

# Each backend takes its own keyword options: the table promises only "keywords in, a QPSolver out".
_BACKENDS: dict[str, Callable[..., QPSolver]] = {cls.name: cls for cls in (DaqpSolver, OsqpSolver)}
SOLVERS: tuple[str, ...] = tuple(_BACKENDS)
DEFAULT_SOLVER = "daqp"


def make_solver(name: str = DEFAULT_SOLVER, **options: float | int | bool) -> QPSolver:
    """A new solver object of backend ``name`` (one of SOLVERS) with the backend's keyword options."""
    try:
        backend = _BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown QP solver {name!r}: choose one of {', '.join(SOLVERS)}") from None
    return backend(**options)


__all__ = [
    "DEFAULT_SOLVER",
    "QP",
    "SOLVERS",
    "DaqpSolver",
    "KKTResiduals",
    "OsqpSolver",
    "QPResult",
    "QPSolver",
    "QPStatus",
    "kkt_residuals",
    "make_solver",
]
