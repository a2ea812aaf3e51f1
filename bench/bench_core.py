"""Core benchmark: kinodyn's public API against Pinocchio, in one process, on the same inputs.

Prints per-call median times of FK (end-effector frame placement), frame Jacobian, RNEA, CRBA, ABA,
NLE and a control tick (FK + Jacobian + CRBA + NLE) with the ratio kinodyn / Pinocchio; the batch
FK / RNEA / ABA throughput at N = 1000 against a Python loop over Pinocchio; and the first-call
compile time (fresh NUMBA_CACHE_DIR) against a warm cache. The tables go to the ``bench_core`` section of
bench/RESULTS.md (bench/results.py).

    python bench/bench_core.py [--no-compile] [--no-record]

Ratios are medians of per-round ratios with kinodyn and Pinocchio rounds interleaved (the machine
may be loaded by other processes: compare ratios from one run).
"""

from __future__ import annotations

import argparse
import os

# kinodyn's threaded batch kernels wait passively (kinodyn/dynamics/parallel.py); pinocchio, imported
# first here, loads OpenMP before kinodyn could set it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import pinocchio as pin

import kinodyn as kd
from kinodyn import dynamics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from typing import TYPE_CHECKING

from results import add_record_flag, markdown_header, markdown_row, record, shown

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
BATCH = 1000


def robots() -> list[tuple[str, Path, bool, str]]:
    """(label, URDF, floating base, end-effector frame)."""
    arm = ROOT / "urdf" / "arm7.urdf"
    out = [("arm7 (7 DoF, fixed)", arm, False, "ee_link")] if arm.exists() else [
        ("panda (fixed)", ROBOTS / "panda_description" / "urdf" / "panda.urdf", False, "panda_hand")]
    quadruped = ROOT / "urdf" / "quadruped.urdf"
    if quadruped.exists():
        out.append(("quadruped (12 DoF, floating)", quadruped, True, "LF_FOOT"))
    solo = ROBOTS / "solo_description" / "robots" / "solo12.urdf"
    out.append(("solo12 (12 DoF, floating)", solo, True, "FL_FOOT"))
    return out


def _mean_ns(fn: Callable[[], object], repeats: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(repeats):
        fn()
    return (time.perf_counter_ns() - t0) / repeats


def paired_median_ns(ours: Callable[[], object], theirs: Callable[[], object], repeats: int = 1000,
                     rounds: int = 31) -> tuple[float, float, float]:
    """Medians over rounds of the mean per-call time of ``repeats`` calls, kinodyn and Pinocchio rounds
    interleaved so that load from other processes hits both; and the median of the per-round ratios."""
    for fn in (ours, theirs):
        _mean_ns(fn, max(1, repeats // 10))
    t_ours, t_theirs = [], []
    for _ in range(rounds):
        t_ours.append(_mean_ns(ours, repeats))
        t_theirs.append(_mean_ns(theirs, repeats))
    ratios = [a / b for a, b in zip(t_ours, t_theirs, strict=True)]
    return statistics.median(t_ours), statistics.median(t_theirs), statistics.median(ratios)


class Pinocchio:
    """Pinocchio's model of the URDF and the permutation from kinodyn's q/v to Pinocchio's."""

    def __init__(self, m: kd.Model, path: Path, floating: bool, frame: str) -> None:
        if m.mimic_joint_names:
            raise ValueError("the benchmark maps coordinates one to one; use a model without mimic joints")
        self.pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else \
            pin.buildModelFromUrdf(str(path))
        self.pd = self.pm.createData()
        base_q, base_v = (7, 6) if floating else (0, 0)
        self.iq = np.arange(self.pm.nq)
        self.iv = np.arange(self.pm.nv)
        for k, name in enumerate(m.joint_names):
            joint = self.pm.joints[self.pm.getJointId(name)]
            assert joint.nq == 1, f"{name}: continuous joints need (cos, sin) in Pinocchio"
            self.iq[joint.idx_q], self.iv[joint.idx_v] = base_q + k, base_v + k
        self.fid = self.pm.getFrameId(frame)

    def q(self, q: np.ndarray) -> np.ndarray:
        return q[self.iq]

    def v(self, v: np.ndarray) -> np.ndarray:
        return v[self.iv]


def per_call_table() -> list[str]:
    lines: list[str] = []
    shown(lines, "Per call, median of the per-round ratios kinodyn / Pinocchio (< 1: kinodyn is faster).\n")
    shown(lines, markdown_header("robot", "quantity", "kinodyn [us]", "Pinocchio [us]", "ratio"))
    for robot in robots():
        per_call_rows(lines, *robot)
    return lines


def per_call_rows(lines: list[str], label: str, path: Path, floating: bool, frame: str) -> None:
    m = kd.Model.from_urdf(path, floating_base=floating)
    p = Pinocchio(m, path, floating, frame)
    pm, pd, fid = p.pm, p.pd, p.fid
    rng = np.random.default_rng(0)
    q, v, a = m.random_configuration(rng), rng.normal(size=m.nv), rng.normal(size=m.nv)
    qp, vp, ap = p.q(q), p.v(v), p.v(a)
    world = pin.LOCAL_WORLD_ALIGNED

    def pin_fk() -> object:
        pin.forwardKinematics(pm, pd, qp)
        return pin.updateFramePlacement(pm, pd, fid)

    def kd_tick() -> object:
        return (m.frame_placement(q, frame), m.frame_jacobian(q, frame, "local_world_aligned"),
                m.mass_matrix(q), m.nonlinear_effects(q, v))

    def pin_tick() -> object:
        return (pin_fk(), pin.computeFrameJacobian(pm, pd, qp, fid, world), pin.crba(pm, pd, qp),
                pin.nonLinearEffects(pm, pd, qp, vp))

    cases = {
        "FK": (lambda: m.frame_placement(q, frame), pin_fk),
        "Jacobian": (lambda: m.frame_jacobian(q, frame, "local_world_aligned"),
                     lambda: pin.computeFrameJacobian(pm, pd, qp, fid, world)),
        "RNEA": (lambda: m.rnea(q, v, a), lambda: pin.rnea(pm, pd, qp, vp, ap)),
        "CRBA": (lambda: m.mass_matrix(q), lambda: pin.crba(pm, pd, qp)),
        "ABA": (lambda: m.aba(q, v, a), lambda: pin.aba(pm, pd, qp, vp, ap)),
        "NLE": (lambda: m.nonlinear_effects(q, v), lambda: pin.nonLinearEffects(pm, pd, qp, vp)),
        "control tick": (kd_tick, pin_tick),
    }
    for name, (ours, theirs) in cases.items():
        t_ours, t_pin, ratio = paired_median_ns(ours, theirs)
        shown(lines, markdown_row(label, name, f"{t_ours / 1e3:.2f}", f"{t_pin / 1e3:.2f}", f"{ratio:.2f}"))


def batch_table() -> list[str]:
    threads = numba.get_num_threads()
    lines: list[str] = []
    print()
    shown(lines, f"Batch throughput, N = {BATCH} (ratio > 1: kinodyn's compiled batch is faster); RNEA and "
          f"ABA on {threads} numba thread(s), OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}.\n")
    shown(lines, markdown_header("robot", "quantity", "kinodyn [states/s]", "Pinocchio loop [states/s]",
                                 "ratio"))
    for robot in robots():
        batch_rows(lines, *robot)
    if threads > 1:  # the layer is chosen on the first threaded call
        shown(lines, f"\nnumba threading layer: {numba.threading_layer()}")
    return lines


def batch_rows(lines: list[str], label: str, path: Path, floating: bool, frame: str) -> None:
    m = kd.Model.from_urdf(path, floating_base=floating)
    p = Pinocchio(m, path, floating, frame)
    pm, pd, fid = p.pm, p.pd, p.fid
    rng = np.random.default_rng(1)
    Q = np.array([m.random_configuration(rng) for _ in range(BATCH)])
    V, A = rng.normal(size=(BATCH, m.nv)), rng.normal(size=(BATCH, m.nv))
    QP, VP, AP = Q[:, p.iq], V[:, p.iv], A[:, p.iv]

    def pin_fk_loop() -> object:
        out = []
        for qp in QP:
            pin.forwardKinematics(pm, pd, qp)
            out.append(pin.updateFramePlacement(pm, pd, fid).homogeneous)
        return out

    cases = {
        "FK": (lambda: m.frame_placements_batch(Q, frame), pin_fk_loop),
        "RNEA": (lambda: dynamics.rnea_batch(m, Q, V, A),
                 lambda: [pin.rnea(pm, pd, *x) for x in zip(QP, VP, AP, strict=True)]),
        "ABA": (lambda: dynamics.aba_batch(m, Q, V, A),
                lambda: [pin.aba(pm, pd, *x) for x in zip(QP, VP, AP, strict=True)]),
    }
    for name, (ours, theirs) in cases.items():
        t_ours, t_pin, ratio = paired_median_ns(ours, theirs, repeats=2, rounds=15)
        shown(lines, markdown_row(label, name, f"{BATCH / t_ours * 1e9:.3g}", f"{BATCH / t_pin * 1e9:.3g}",
                                  f"{1.0 / ratio:.2f}"))


FIRST_CALLS = """
import time
t0 = time.perf_counter()
import numpy as np, kinodyn as kd
m = kd.Model.from_urdf({path!r}, floating_base=True)
q, v = m.neutral(), np.zeros(m.nv)
m.frame_placement(q, {frame!r}); m.frame_jacobian(q, {frame!r}, "world")
m.rnea(q, v, v); m.mass_matrix(q); m.aba(q, v, v); m.nonlinear_effects(q, v); m.gravity_torques(q)
m.coriolis_matrix(q, v); m.centroidal_momentum_matrix(q); m.kinetic_energy(q, v); m.potential_energy(q)
print(time.perf_counter() - t0)
"""


def compile_times() -> str:
    label, path, _, frame = robots()[-1]
    code = FIRST_CALLS.format(path=str(path), frame=frame)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        run = [sys.executable, "-c", code]
        cold = float(subprocess.run(run, env=env, check=True, capture_output=True, text=True).stdout)
        warm = float(subprocess.run(run, env=env, check=True, capture_output=True, text=True).stdout)
    line = (f"Import + first call of FK, Jacobian and every dynamics function ({label}), fresh process: "
            f"empty NUMBA_CACHE_DIR {cold:.2f} s, warm cache {warm:.2f} s.")
    print("\n" + line)
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-compile", action="store_true", help="skip the first-call timing")
    add_record_flag(parser)
    args = parser.parse_args()
    parts = ["\n".join(per_call_table()), "\n".join(batch_table())]
    if not args.no_compile:
        parts.append(compile_times())
    record("bench_core", "\n\n".join(parts), no_record=args.no_record)


if __name__ == "__main__":
    main()
