"""The weighted WholeBodyController against TSID (stack-of-tasks, test-only) on one QP.

The quadruped stands on four point contacts with CoM, base orientation and posture tasks. TSID 1.10.0 runs
in its own environment (bench/tsid_quadruped.py, ``TsidProcess``: its wheels are built against Pinocchio
4.0.0, the project pins 4.1.0); that module's docstring states what TSID poses, read from its sources.
kinodyn poses the same problem (``tq.kinodyn_controller``; docs/wbc-vs-tsid.md):

- TSID's point contacts with ``useLocalFrame(False)`` (its default puts ``J_c``, ``f`` and the cone in the
  foot's own axes): forces in world axes, ``J qdd = -Jdot v`` with the classical drift, as kinodyn's;
- TSID's friction rows ``|f . t_i| <= mu_T f . n`` (``t_1 = e_y``, ``t_2 = -e_x`` for ``n = e_z``) are
  kinodyn's 4-facet pyramid inscribed in the cone of ``mu = sqrt(2) mu_T`` (facets along ``+-e_x, +-e_y``,
  ``t . f <= mu cos(pi/4) n . f``): the same rows, ``f_min <= n . f <= f_max`` the same bounds;
- TSID's force regularisation (``addRigidContact(contact, w)``: ``w |diag(1, 1, 1e-3) f|^2``) is a
  ``ContactForceTask`` per foot with per-row weights ``w (1, 1, 1e-6)`` and ``f_ref = 0``;
- TSID regularises internally: eiquadprog-fast adds ``1e-8`` to the Hessian's diagonal, the cost
  ``1/2 sum w_k |A_k x - b_k|^2 + 1/2 1e-8 |x|^2``. kinodyn minimises ``sum w_k |A_k x - b_k|^2 + eps |z|^2``
  over ``x = x_0 + Z z`` (``x_0`` the minimum-norm solution of the equalities, orthogonal to the orthonormal
  ``Z``, so ``|z|^2 = |x|^2 - |x_0|^2``): with ``regularization=1e-8`` the two costs differ by a factor 2
  and a constant, the same minimiser. So the comparison is of TSID's regularised problem, as posed;
- TSID's base orientation rows are in the base frame (``R^T`` times kinodyn's world rows, isotropic
  gains: the same squared residual); its CoM and posture rows are kinodyn's;
- TSID's problem has no torque or joint limits: kinodyn gets ``JointLimits`` with infinite bounds.

``test_tsid_poses_the_described_qp`` checks that description against TSID's own QP data (its H, g, equality
and inequality rows rebuilt from kinodyn's evaluation and tasks); ``test_same_solution_as_tsid`` checks
qdd, forces and tau to 1e-6 over standing states, several with friction facets and the minimal normal
force active (asserted, so the comparison covers active inequalities).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.control.wbc import VariableLayout
from kinodyn.evaluation import Evaluator

import kinodyn as kd

if TYPE_CHECKING:
    from collections.abc import Iterator

    from kinodyn.control.wbc.controller import WBCResult

ROOT = Path(__file__).resolve().parents[4]
_spec = importlib.util.spec_from_file_location("tsid_quadruped", ROOT / "bench" / "tsid_quadruped.py")
assert _spec is not None
assert _spec.loader is not None
tq = importlib.util.module_from_spec(_spec)
sys.modules["tsid_quadruped"] = tq
_spec.loader.exec_module(tq)

PROBLEM = tq.StandingProblem()
STATES = [(tq.standing_configuration(), np.zeros(18)),
          *tq.random_standing_states(12, np.random.default_rng(0))]


def assert_same_solution(result: WBCResult, theirs: dict[str, np.ndarray], atol: float) -> None:
    """kinodyn's ``result`` solved, and its qdd, foot forces and tau are TSID's (``theirs``) to ``atol``."""
    assert result.ok, result.message
    assert result.qdd is not None  # a solved tick has qdd and tau
    assert result.tau is not None
    forces = np.array([result.forces[foot] for foot in tq.FEET])
    np.testing.assert_allclose(result.qdd, theirs["qdd"], rtol=0.0, atol=atol)
    np.testing.assert_allclose(forces, theirs["forces"], rtol=0.0, atol=atol)
    np.testing.assert_allclose(result.tau, theirs["tau"], rtol=0.0, atol=atol)


@pytest.fixture(scope="module")
def model() -> kd.Model:
    return kd.Model.from_urdf(tq.URDF, floating_base=True)


@pytest.fixture(scope="module")
def tsid(model: kd.Model) -> Iterator[tq.TsidProcess]:
    with tq.TsidProcess(PROBLEM, model.joint_names) as process:
        yield process


def test_com_reference_agrees(model: kd.Model, tsid: tq.TsidProcess) -> None:
    """TSID's CoM reference (Pinocchio's CoM of q_ref) is kinodyn's: both controllers track one target."""
    np.testing.assert_allclose(tsid.com_ref, model.com(PROBLEM.q_ref), rtol=0.0, atol=1e-12)


@pytest.mark.parametrize("k", range(4))
def test_tsid_poses_the_described_qp(model: kd.Model, tsid: tq.TsidProcess, k: int) -> None:
    """TSID's QP (``min 1/2 x^T H x + g^T x``, ``CE x + ce0 = 0``, ``CI x + ci0 >= 0``) is as described."""
    q, v = STATES[k]
    qp = tsid.qp(q, v)
    contacts, tasks = tq.kinodyn_problem(model, PROBLEM, tsid.com_ref)
    ev = Evaluator(model, [*tq.FEET, "base_link"]).evaluate(q, v)
    layout = VariableLayout.build(model.nv, [(foot, 3) for foot in tq.FEET], model.nv - 6)
    n = layout.size
    H = tq.HESSIAN_REGULARIZATION * np.eye(n)
    g = np.zeros(n)
    for task in tasks:
        rows = task.rows(ev, layout)
        H += rows.A.T @ (task.weight[:, None] * rows.A)
        g -= rows.A.T @ (task.weight * rows.b)
    np.testing.assert_allclose(qp["H"], H, rtol=0.0, atol=1e-9 * np.abs(H).max())
    np.testing.assert_allclose(qp["g"], g, rtol=0.0, atol=1e-9 * max(1.0, np.abs(g).max()))

    Jc = np.vstack([ev.jacobian(foot)[:3] for foot in tq.FEET])
    CE = np.zeros((6 + 12, n))
    CE[:6, layout.qdd] = ev.mass_matrix[:6]
    CE[:6, layout.forces] = -Jc.T[:6]
    CE[6:, layout.qdd] = Jc
    drift = [ev.bias_acceleration(foot)[:3] for foot in tq.FEET]
    ce0 = np.concatenate([ev.nonlinear_effects[:6], *drift])
    np.testing.assert_allclose(qp["CE"], CE, rtol=0.0, atol=1e-9 * np.abs(CE).max())
    np.testing.assert_allclose(qp["ce0"], ce0, rtol=0.0, atol=1e-9 * max(1.0, np.abs(ce0).max()))

    # Inequalities as sets of rows [c, c0] meaning c x + c0 >= 0; TSID's infinite sides are +-1e10.
    ours = []
    for contact in contacts:
        D, lower, upper = contact.force_inequalities(ev, contact.f_max)
        block = np.zeros((D.shape[0], n))
        block[:, layout.force(contact.name)] = D
        ours += [np.r_[row, -lo] for row, lo in zip(block, lower, strict=True) if np.isfinite(lo)]
        ours += [np.r_[-row, hi] for row, hi in zip(block, upper, strict=True) if np.isfinite(hi)]
    theirs = [np.r_[row, c0] for row, c0 in zip(qp["CI"], qp["ci0"], strict=True) if abs(c0) < 1e9]
    assert len(theirs) == len(ours) == 4 * (4 + 2)
    np.testing.assert_allclose(np.array(sorted(map(tuple, theirs))), np.array(sorted(map(tuple, ours))),
                               rtol=0.0, atol=1e-12 * PROBLEM.f_max)


def test_same_solution_as_tsid(model: kd.Model, tsid: tq.TsidProcess) -> None:
    """qdd, forces and tau agree to 1e-6 on every state; active friction facets and f_min are covered."""
    wbc = tq.kinodyn_controller(model, PROBLEM, tsid.com_ref)
    active_facets = active_minimum = 0
    for q, v in STATES:
        theirs = tsid.solve(q, v)
        result = wbc.update(q, v)
        assert_same_solution(result, theirs, 1e-6)
        F = theirs["forces"]
        slack = PROBLEM.mu * F[:, 2:] - np.abs(F[:, :2])
        active_facets += int(np.count_nonzero(slack < 1e-7))
        active_minimum += int(np.count_nonzero(F[:, 2] - PROBLEM.f_min < 1e-7))
    assert active_facets >= 10, (active_facets, active_minimum)
    assert active_minimum >= 3, (active_facets, active_minimum)


def test_same_solution_as_tsid_with_contact_gains(model: kd.Model) -> None:
    """TSID's ContactPoint Kp/Kd (reference: the foot at q_ref) and kinodyn's PointContact kp/kd (anchor: the
    foot at the first tick, taken at q_ref): qdd, forces and tau agree to 1e-7 on every state."""
    problem = dataclasses.replace(PROBLEM, contact_kp=50.0, contact_kd=2.0 * np.sqrt(50.0))
    with tq.TsidProcess(problem, model.joint_names) as tsid:
        wbc = tq.kinodyn_controller(model, problem, tsid.com_ref)
        plain = tq.kinodyn_controller(model, PROBLEM, tsid.com_ref)  # no gains: the feedback's effect
        assert wbc.update(np.asarray(problem.q_ref), np.zeros(model.nv)).ok  # the anchors, at q_ref
        moved = 0.0
        for q, v in STATES[1:]:
            theirs = tsid.solve(q, v)
            moved = max(moved, float(np.abs(plain.update(q, v).qdd - theirs["qdd"]).max()))
            result = wbc.update(q, v)
            assert_same_solution(result, theirs, 1e-7)
        assert moved > 0.1  # the gains change the answer: the agreement is not that of gain-free rows
