"""QP backend benchmark on WBC-shaped dense problems: picks kinodyn.control.qp.DEFAULT_SOLVER by measurement.

Each case is a control-loop-like sequence: one random strictly convex QP (H = J'J + 1e-4 I from a
task Jacobian J, dense equalities, two-sided inequality rows with some tight around a feasible point so
several are active, optional variable bounds) drifting slightly every tick, solved warm-started from the
previous tick by one solver object, as the whole-body controller does. Prints per solver the median and
p99 time of ``solve`` (warm, and cold on the same problems), the largest KKT residual over all ticks, and
the ratio of medians to the fastest.

    python bench/bench_qp.py [--ticks 300] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from kinodyn.control.qp import QP, SOLVERS, kkt_residuals, make_solver

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
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    overall: dict[str, list[float]] = {name: [] for name in SOLVERS}
    for label, n, neq, nin, bounds in CASES:
        problems = problem_sequence(rng, n, neq, nin, bounds, args.ticks)
        for name in SOLVERS:  # one untimed pass loads and warms each backend
            run(name, problems[:5], warm=True)
        rows = {name: (run(name, problems, warm=True), run(name, problems, warm=False)) for name in SOLVERS}
        fastest = min(np.median(w[0]) for w, _ in rows.values())
        print(
            f"\n{label}: n={n}, equalities={neq}, inequality rows={nin}, bounds={bounds}, {args.ticks} ticks"
        )
        print(
            f"  {'solver':10s} {'warm median':>12s} {'warm p99':>10s} {'cold median':>12s} {'cold p99':>10s}"
            f" {'max KKT res':>12s} {'failed':>7s} {'ratio':>6s}"
        )
        for name, ((warm_t, warm_res, warm_fail), (cold_t, cold_res, cold_fail)) in rows.items():
            ratio = np.median(warm_t) / fastest
            overall[name].append(ratio)
            print(
                f"  {name:10s} {np.median(warm_t) * 1e6:10.1f}us {np.percentile(warm_t, 99) * 1e6:8.1f}us"
                f" {np.median(cold_t) * 1e6:10.1f}us {np.percentile(cold_t, 99) * 1e6:8.1f}us"
                f" {max(warm_res, cold_res):12.2e} {warm_fail + cold_fail:7d} {ratio:6.2f}"
            )
    print("\nwarm-median ratio to the fastest, geometric mean over the cases:")
    for name, ratios in overall.items():
        print(f"  {name:10s} {float(np.exp(np.mean(np.log(ratios)))):6.2f}")


if __name__ == "__main__":
    main()
