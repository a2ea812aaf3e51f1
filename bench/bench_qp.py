"""QP backend benchmark on WBC-shaped dense problems: picks kinodyn.control.qp.DEFAULT_SOLVER by measurement.

Each case is a control-loop-like sequence: one random strictly convex QP (H = J'J + 1e-4 I from a
task Jacobian J, dense equalities, two-sided inequality rows with some tight around a feasible point so
several are active, optional variable bounds) drifting slightly every tick, solved warm-started from the
previous tick by one solver object, as the whole-body controller does. Prints per solver the median and
p99 time of ``solve`` (warm, and cold on the same problems), the largest KKT residual over all ticks, and
the ratio of medians to the fastest. The tables go to the ``bench_qp`` section of bench/RESULTS.md
(bench/results.py).

    python bench/bench_qp.py [--ticks 300] [--seed 0] [--no-record]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from kinodyn.control.qp import QP, SOLVERS, kkt_residuals, make_solver
from results import add_record_flag, markdown_header, markdown_row, record, shown

# (label, n variables, equalities, inequality rows, variable bounds): the shapes of the whole-body
# controller's QPs.
CASES = (
    ("quadruped [qdd; f], 4 point contacts", 30, 18, 52, True),
    ("quadruped [qdd; f; tau]", 42, 30, 56, True),
    ("arm7-like, no equalities", 12, 0, 40, True),
    ("biped surface contacts [qdd; f]", 36, 24, 60, False),
)


def problem_sequence(
    rng: np.random.Generator, n: int, neq: int, nin: int, bounds: bool, ticks: int
) -> list[QP]:
    """``ticks`` QPs of one shape whose data drift by ~1e-3 per tick around a random feasible problem."""
    J = rng.standard_normal((n + 6, n))
    A = rng.standard_normal((neq, n))
    C = rng.standard_normal((nin, n))
    x_feasible = rng.standard_normal(n)
    margins = np.where(rng.random(nin) < 0.5, 0.05, 1.0) * rng.uniform(0.5, 1.5, nin)
    target = x_feasible + 3.0 * rng.standard_normal(n)
    out = []
    for k in range(ticks):
        phase = 1e-3 * k
        Jk = J + 0.05 * np.sin(phase * 7.0) * np.roll(J, 1, axis=1)
        H = Jk.T @ Jk + 1e-4 * np.eye(n)
        xk = x_feasible + 0.05 * np.sin(phase * np.arange(1, n + 1))
        Ck = C + 0.01 * np.cos(phase * 3.0) * np.roll(C, 1, axis=0)
        low, high = Ck @ xk - margins, Ck @ xk + margins
        low[::4] = -np.inf
        out.append(
            QP(
                H,
                -H @ (target + 0.1 * np.sin(phase * 5.0)),
                A=A if neq else None,
                b=A @ xk if neq else None,
                C=Ck,
                l=low,
                u=high,
                lb=xk - 1.0 if bounds else None,
                ub=xk + 1.0 if bounds else None,
            )
        )
    return out


def run(solver_name: str, problems: list[QP], warm: bool) -> tuple[np.ndarray, float, int]:
    """Per-solve times (s), largest KKT residual, number of failed solves."""
    solver = make_solver(solver_name)
    times, worst, failures, previous = [], 0.0, 0, None
    for qp in problems:
        t0 = time.perf_counter()
        result = solver.solve(qp, warm_start=previous if warm else None)
        times.append(time.perf_counter() - t0)
        if result.ok:
            worst = max(worst, kkt_residuals(qp, result).max)
            previous = result
        else:
            failures += 1
    return np.array(times), worst, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    add_record_flag(parser)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    overall: dict[str, list[float]] = {name: [] for name in SOLVERS}
    lines = [f"{args.ticks} ticks per case, seed {args.seed}; times per solve in us; ratio: warm median over "
             "the fastest solver's.", "",
             markdown_header("case (variables, equalities, inequality rows, bounds)", "solver", "warm median",
                             "warm p99", "cold median", "cold p99", "max KKT residual", "failed", "ratio")]
    print("\n".join(lines), flush=True)
    for label, n, neq, nin, bounds in CASES:
        problems = problem_sequence(rng, n, neq, nin, bounds, args.ticks)
        for name in SOLVERS:  # one untimed pass loads and warms each backend
            run(name, problems[:5], warm=True)
        rows = {name: (run(name, problems, warm=True), run(name, problems, warm=False)) for name in SOLVERS}
        fastest = min(np.median(w[0]) for w, _ in rows.values())
        case = f"{label} ({n}, {neq}, {nin}, {'yes' if bounds else 'no'})"
        for name, ((warm_t, warm_res, warm_fail), (cold_t, cold_res, cold_fail)) in rows.items():
            ratio = np.median(warm_t) / fastest
            overall[name].append(ratio)
            shown(lines, markdown_row(
                case, name, f"{np.median(warm_t) * 1e6:.1f}", f"{np.percentile(warm_t, 99) * 1e6:.1f}",
                f"{np.median(cold_t) * 1e6:.1f}", f"{np.percentile(cold_t, 99) * 1e6:.1f}",
                f"{max(warm_res, cold_res):.2e}", warm_fail + cold_fail, f"{ratio:.2f}"))
    summary = ["", "Warm-median ratio to the fastest, geometric mean over the cases:", "",
               markdown_header("solver", "ratio"),
               *(markdown_row(name, f"{float(np.exp(np.mean(np.log(ratios)))):.2f}")
                 for name, ratios in overall.items())]
    print("\n".join(summary))
    record("bench_qp", "\n".join(lines + summary), no_record=args.no_record)


if __name__ == "__main__":
    main()
