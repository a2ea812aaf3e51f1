"""Per-tick evaluation benchmark: ``Evaluator.evaluate`` (one compiled pass) against the separate calls.

For the quadruped (floating base; 4 feet + base frames) and arm7 (end effector), median per-call time of

- ``Evaluator.evaluate``: M, h, g, the frames' placements, Jacobians and Jdot v (local_world_aligned),
  CoM, J_com, Jcom_dot v, A_G and Adot_G v, into fresh arrays and into a ``kinodyn.data.Data`` (nothing
  allocated); and its compiled kernel alone (no Python around it);
- (a) kinodyn's separate calls for the same quantities: ``frame_placement``, ``frame_jacobian`` and
  ``frame_bias_acceleration`` per frame, ``mass_matrix``, ``nonlinear_effects``, ``gravity_torques``,
  ``com``, ``com_jacobian``, ``centroidal_momentum_matrix`` (Jcom_dot v and Adot_G v have no separate
  call: the separate route does less work);
- (b) Pinocchio: ``computeAllTerms`` (M, nle, g, CoM, J_com, A_G; joint Jacobians; accelerations at
  a = 0), ``updateFramePlacements``, per frame ``getFrameJacobian`` and ``getFrameClassicalAcceleration``
  (LOCAL_WORLD_ALIGNED), ``dccrba`` (dAg) and ``dAg v``, ``Jcom_dot v = (dAg v)[:3] / m``;

with the ratios. Both routes are first checked to agree with the evaluation (1e-9). The table goes to the
``bench_evaluation`` section of bench/RESULTS.md (bench/results.py).

    python bench/bench_evaluation.py [--no-record]
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin
from bench_core import ROOT, paired_median_ns
from kinodyn.evaluation import Evaluator
from kinodyn.linalg import NO_WORK
from results import add_record_flag, markdown_header, markdown_row, record, shown

import kinodyn as kd
from kinodyn import evaluation

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

CASES = [
    ("quadruped (floating)", ROOT / "urdf" / "quadruped.urdf", True,
     ["LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT", "base_link"]),
    ("arm7 (fixed)", ROOT / "urdf" / "arm7.urdf", False, ["ee_link"]),
]
LWA = pin.LOCAL_WORLD_ALIGNED


def routes(path: Path, floating: bool, frames: list[str]) -> dict[str, Callable[[], object]]:
    """The four callables at one random state, after checking that their results agree."""
    m = kd.Model.from_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(str(path), *((pin.JointModelFreeFlyer(),) if floating else ()))
    pd = pm.createData()
    assert list(pm.names)[1 + floating:] == list(m.joint_names), "the benchmark maps q and v one to one"
    rng = np.random.default_rng(0)
    q, v = m.random_configuration(rng), rng.normal(size=m.nv)
    if floating:
        q[3:7] /= np.linalg.norm(q[3:7])
    fids = [pm.getFrameId(f) for f in frames]
    evaluator = Evaluator(m, frames)
    mass = evaluator.total_mass
    ki, kf = m.kernel_data
    block = np.empty(evaluator.layout.size)
    offsets = evaluator.layout.offsets
    data = evaluator.create_data()

    def kernel() -> object:
        # the compiled kernel alone, without the Python around it: what this section times
        return evaluation._EVALUATE.call(ki, kf, q, v, evaluator._ids, offsets, NO_WORK, block)  # noqa: SLF001

    def separate() -> dict[str, np.ndarray]:
        out = {}
        for f in frames:
            out[f"placement {f}"] = m.frame_placement(q, f)
            out[f"jacobian {f}"] = m.frame_jacobian(q, f, "local_world_aligned")
            out[f"bias {f}"] = m.frame_bias_acceleration(q, v, f, "local_world_aligned")
        out.update(mass_matrix=m.mass_matrix(q), nonlinear_effects=m.nonlinear_effects(q, v),
                   gravity_torques=m.gravity_torques(q), com=m.com(q), com_jacobian=m.com_jacobian(q),
                   centroidal_matrix=m.centroidal_momentum_matrix(q))
        return out

    def pinocchio() -> dict[str, np.ndarray]:
        pin.computeAllTerms(pm, pd, q, v)
        pin.updateFramePlacements(pm, pd)
        out = {}
        for f, fid in zip(frames, fids, strict=True):
            out[f"placement {f}"] = pd.oMf[fid].homogeneous
            out[f"jacobian {f}"] = pin.getFrameJacobian(pm, pd, fid, LWA)
            out[f"bias {f}"] = pin.getFrameClassicalAcceleration(pm, pd, fid, LWA).vector
        centroidal_bias = pin.dccrba(pm, pd, q, v) @ v
        out.update(mass_matrix=pd.M, nonlinear_effects=pd.nle, gravity_torques=pd.g, com=pd.com[0],
                   com_jacobian=pd.Jcom, com_bias_acceleration=centroidal_bias[:3] / mass,
                   centroidal_matrix=pd.Ag, centroidal_bias=centroidal_bias)
        return out

    ev = evaluator.evaluate(q, v)
    for route in (separate, pinocchio):
        for key, value in route().items():
            field, _, frame = key.partition(" ")
            accessor = {"placement": ev.placement, "jacobian": ev.jacobian, "bias": ev.bias_acceleration}
            want = accessor[field](frame) if frame else getattr(ev, field)
            np.testing.assert_allclose(value, want, rtol=0.0, atol=1e-9 * max(1.0, float(np.abs(want).max())),
                                       err_msg=f"{route.__name__}: {key}")
    return {"evaluate": lambda: evaluator.evaluate(q, v),
            "evaluate into a Data": lambda: evaluator.evaluate(q, v, data),
            "kernel": kernel, "separate": separate, "pinocchio": pinocchio}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_flag(parser)
    args = parser.parse_args()
    lines: list[str] = []
    shown(lines, "Median per call; ratio: the median of the per-round ratios (< 1: the first route is "
          "faster).\n")
    shown(lines, markdown_header("robot", "route", "median [us]", "vs it [us]", "ratio"))
    for label, path, floating, frames in CASES:
        r = routes(path, floating, frames)
        rows = [
            ("Evaluator.evaluate vs its kernel alone", "evaluate", "kernel"),
            ("Evaluator.evaluate into a Data vs without", "evaluate into a Data", "evaluate"),
            ("Evaluator.evaluate vs (a) separate calls", "evaluate", "separate"),
            ("Evaluator.evaluate vs (b) Pinocchio", "evaluate", "pinocchio"),
            ("kernel alone vs (b) Pinocchio", "kernel", "pinocchio"),
        ]
        for name, ours, theirs in rows:
            t_ours, t_theirs, ratio = paired_median_ns(r[ours], r[theirs])
            shown(lines, markdown_row(label, name, f"{t_ours / 1e3:.2f}", f"{t_theirs / 1e3:.2f}",
                                      f"{ratio:.2f}"))
    record("bench_evaluation", "\n".join(lines), no_record=args.no_record)


if __name__ == "__main__":
    main()
