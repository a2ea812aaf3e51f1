"""``Evaluator`` (one compiled pass per (q, v)) against Pinocchio and against kinodyn's separate calls.

Pinocchio (test-only) on the project's robots and robots from example-robot-data, fixed and floating
base, every frame of each model: M, nle, g (``crba``, ``nonLinearEffects``,
``computeGeneralizedGravity``), placements, LOCAL_WORLD_ALIGNED frame Jacobians,
``getFrameClassicalAcceleration`` at a = 0, ``centerOfMass`` and its acceleration at a = 0
(``Jcom_dot v``), ``jacobianCenterOfMass``, ``ccrba`` (A_G) and ``dccrba`` (``Adot_G v = dAg v``).
Pinocchio takes mimic joints as independent joints: ``G`` maps kinodyn's v to Pinocchio's, so
``M = G^T M_pin G``, ``h = G^T h_pin(G v)``, ``J = J_pin G`` (see test_dynamics_vs_pinocchio.py).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest
from kinodyn.evaluation import Evaluation, Evaluator

import kinodyn as kd
from kinodyn import dynamics

from .pinocchio_pair import PROJECT_URDFS, ROBOTS, Pair, pair_fixture

CASES = [
    (PROJECT_URDFS / "arm7.urdf", False),
    (PROJECT_URDFS / "quadruped.urdf", True),
    (PROJECT_URDFS / "planar_2link.urdf", False),
    (PROJECT_URDFS / "planar_2link.urdf", True),
    (ROBOTS / "panda_description" / "urdf" / "panda.urdf", False),  # a mimic joint
    (ROBOTS / "ur_description" / "urdf" / "ur5_robot.urdf", False),
    (ROBOTS / "solo_description" / "robots" / "solo12.urdf", True),
    (ROBOTS / "anymal_c_simple_description" / "urdf" / "anymal.urdf", True),
    (ROBOTS / "talos_data" / "robots" / "talos_reduced.urdf", True),
]
STATES = 20
# Talos' fixed joints carry <mimic> tags, which the parser ignores with a warning
pytestmark = pytest.mark.filterwarnings("ignore::kinodyn.urdf.errors.URDFWarning")
QUADRUPED_FEET = ("LF_FOOT", "LH_FOOT", "RF_FOOT", "RH_FOOT")


def close(actual: np.ndarray, expected: np.ndarray, tol: float = 1e-12) -> None:
    """Agreement to ``tol`` relative to the largest entry of ``expected`` (at least 1)."""
    expected = np.asarray(expected)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=0.0, atol=tol * scale)


pair = pair_fixture(CASES)


def states(m: kd.Model, seed: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random states; q is scaled off the unit quaternion (the kernels normalise it)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(STATES):
        q = m.random_configuration(rng)
        if m.floating_base:
            q[3:7] *= rng.uniform(0.5, 2.0)
        out.append((q, rng.normal(size=m.nv)))
    return out


def all_frames(m: kd.Model) -> list[str | int]:
    """Every frame of ``m``, alternately by name and by id."""
    return [name if f % 2 else f for f, name in enumerate(m.frame_names)]


def test_matches_pinocchio(pair: Pair) -> None:
    m, pm, pd, G = pair.m, pair.pm, pair.pd, pair.G
    evaluator = Evaluator(m, all_frames(m))
    assert evaluator.frames == m.frame_names
    frame_ids = [pm.getFrameId(name, pin.BODY) for name in m.frame_names]
    for q, v in states(m):
        ev = evaluator.evaluate(q, v)
        qp, vp, zero = pair.q(q), G @ v, np.zeros(pm.nv)
        M = pin.crba(pm, pd, qp)
        close(ev.mass_matrix, G.T @ (np.triu(M) + np.triu(M, 1).T) @ G)
        close(ev.nonlinear_effects, G.T @ pin.nonLinearEffects(pm, pd, qp, vp))
        close(ev.gravity_torques, G.T @ pin.computeGeneralizedGravity(pm, pd, qp))
        pin.forwardKinematics(pm, pd, qp, vp, zero)
        pin.updateFramePlacements(pm, pd)
        pin.computeJointJacobians(pm, pd, qp)
        for f, fid in enumerate(frame_ids):
            close(ev.placements[f], pd.oMf[fid].homogeneous)
            close(ev.jacobians[f], pin.getFrameJacobian(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED) @ G)
            close(ev.bias_accelerations[f],
                  pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED).vector)
        close(ev.com, pin.centerOfMass(pm, pd, qp, vp, zero))
        close(ev.com_bias_acceleration, pd.acom[0])
        close(ev.com_jacobian, pin.jacobianCenterOfMass(pm, pd, qp) @ G)
        close(ev.centroidal_matrix, pin.ccrba(pm, pd, qp, vp) @ G)
        close(ev.centroidal_bias, pin.dccrba(pm, pd, qp, vp) @ vp)
        assert ev.total_mass == pytest.approx(pd.mass[0], rel=1e-14)  # the moving bodies, after centerOfMass


def test_matches_the_separate_kinodyn_calls(pair: Pair) -> None:
    m = pair.m
    evaluator = Evaluator(m, all_frames(m))
    for q, v in states(m, seed=6):
        ev = evaluator.evaluate(q, v)
        np.testing.assert_array_equal(ev.q, q)
        np.testing.assert_array_equal(ev.v, v)
        separate = {
            "mass_matrix": dynamics.mass_matrix(m, q),
            "nonlinear_effects": dynamics.nonlinear_effects(m, q, v),
            "gravity_torques": dynamics.gravity_torques(m, q),
            "com": m.com(q),
            "com_jacobian": m.com_jacobian(q),
            "centroidal_matrix": dynamics.centroidal_momentum_matrix(m, q),
        }
        for field, expected in separate.items():
            close(getattr(ev, field), expected, 1e-13)
        for name in m.frame_names:
            close(ev.placement(name), m.frame_placement(q, name), 1e-13)
            close(ev.jacobian(name), m.frame_jacobian(q, name, "local_world_aligned"), 1e-13)
            close(ev.bias_acceleration(name),
                  m.frame_bias_acceleration(q, v, name, "local_world_aligned"), 1e-13)


@pytest.fixture(scope="module")
def quadruped() -> kd.Model:
    return kd.Model.from_urdf(PROJECT_URDFS / "quadruped.urdf", floating_base=True)


def test_jcom_dot_v_and_adot_v_are_the_time_derivatives_along_the_motion(quadruped: kd.Model) -> None:
    """Central differences of ``J_com v`` and ``A_G v`` along ``q(t) = q ⊕ t v`` (constant v, so qdd = 0)."""
    m = quadruped
    evaluator = Evaluator(m)
    q, v = states(m, seed=8)[0]
    dt = 1e-5
    ahead, behind = (evaluator.evaluate(m.integrate(q, v, s * dt), v) for s in (1.0, -1.0))
    ev = evaluator.evaluate(q, v)
    close(ev.com_bias_acceleration, (ahead.com_jacobian @ v - behind.com_jacobian @ v) / (2 * dt), 1e-7)
    close(ev.centroidal_bias, (ahead.centroidal_matrix @ v - behind.centroidal_matrix @ v) / (2 * dt), 1e-7)


def test_frames_by_name_or_id_once_each_and_the_accessors(quadruped: kd.Model) -> None:
    m = quadruped
    base = m.frame_id("base_link")
    evaluator = Evaluator(m, [*QUADRUPED_FEET, base, "LF_FOOT", base])
    assert evaluator.frames == (*QUADRUPED_FEET, "base_link")
    q, v = states(m)[0]
    ev = evaluator.evaluate(q, v)
    assert ev.placements.shape == (5, 4, 4)
    assert ev.jacobians.shape == (5, 6, m.nv)
    assert ev.bias_accelerations.shape == (5, 6)
    assert ev.frame_index("RF_FOOT") == 2
    np.testing.assert_array_equal(ev.jacobian("base_link"), ev.jacobians[4])
    np.testing.assert_array_equal(ev.placement("LH_FOOT"), ev.placements[1])
    np.testing.assert_array_equal(ev.bias_acceleration("RH_FOOT"), ev.bias_accelerations[3])
    with pytest.raises(KeyError, match=r"LF_HIP.*evaluated frames"):
        ev.jacobian("LF_HIP")
    with pytest.raises(KeyError, match="unknown frame"):
        Evaluator(m, ["no_such_link"])


def test_no_frames(quadruped: kd.Model) -> None:
    m = quadruped
    q, v = states(m)[0]
    ev = Evaluator(m).evaluate(q, v)
    assert ev.frames == ()
    assert ev.placements.shape == (0, 4, 4)
    assert ev.jacobians.shape == (0, 6, m.nv)
    close(ev.mass_matrix, dynamics.mass_matrix(m, q), 1e-13)


def test_each_evaluation_has_its_own_arrays(quadruped: kd.Model) -> None:
    m = quadruped
    evaluator = Evaluator(m, QUADRUPED_FEET)
    (q0, v0), (q1, v1) = states(m)[:2]
    q, v = q0.copy(), v0.copy()
    first = evaluator.evaluate(q, v)
    names = [f.name for f in dataclasses.fields(Evaluation)]
    arrays = [name for name in names if isinstance(getattr(first, name), np.ndarray)]
    assert len(arrays) == 13
    kept = {field: getattr(first, field).copy() for field in arrays}
    q[:], v[:] = q1, v1
    second = evaluator.evaluate(q, v)
    for field, value in kept.items():
        np.testing.assert_array_equal(getattr(first, field), value)
        assert not np.shares_memory(getattr(first, field), getattr(second, field))
    assert not np.array_equal(first.mass_matrix, second.mass_matrix)


@pytest.mark.parametrize(("which", "index", "value", "message"), [
    ("q", 8, np.nan, "q has a non-finite entry"),
    ("q", 0, np.inf, "q has a non-finite entry"),
    ("v", 3, -np.inf, "v has a non-finite entry"),
    ("v", 17, np.nan, "v has a non-finite entry"),
])
def test_non_finite_input_is_refused(quadruped: kd.Model, which: str, index: int, value: float,
                                     message: str) -> None:
    q, v = states(quadruped)[0]
    {"q": q, "v": v}[which][index] = value
    with pytest.raises(ValueError, match=message):
        Evaluator(quadruped, QUADRUPED_FEET).evaluate(q, v)


def test_lists_and_strided_inputs_give_the_float64_result(quadruped: kd.Model) -> None:
    evaluator = Evaluator(quadruped, QUADRUPED_FEET)
    q, v = states(quadruped)[0]
    expected = evaluator.evaluate(q, v)
    strided_q, strided_v = np.repeat(q, 2)[::2], np.repeat(v, 2)[::2]
    for ev in (evaluator.evaluate(list(q), list(v)), evaluator.evaluate(strided_q, strided_v)):
        for field in ("q", "v", "mass_matrix", "nonlinear_effects", "jacobians", "centroidal_bias"):
            np.testing.assert_array_equal(getattr(ev, field), getattr(expected, field))


def test_zero_quaternion_and_wrong_sizes_are_refused(quadruped: kd.Model) -> None:
    evaluator = Evaluator(quadruped, QUADRUPED_FEET)
    q, v = states(quadruped)[0]
    q[3:7] = 0.0
    with pytest.raises(ValueError, match=r"quaternion .* is zero"):
        evaluator.evaluate(q, v)
    with pytest.raises(ValueError, match="q must have shape"):
        evaluator.evaluate(np.zeros(quadruped.nq - 1), v)
    with pytest.raises(ValueError, match="v must have shape"):
        evaluator.evaluate(quadruped.neutral(), np.zeros(quadruped.nv + 1))


def test_model_without_moving_mass_is_refused_at_construction() -> None:
    urdf = """<robot name="massless">
      <link name="base"><inertial><mass value="3"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>
      </inertial></link><link name="tip"/>
      <joint name="j" type="revolute"><parent link="base"/><child link="tip"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""
    with pytest.raises(ValueError, match="no mass on its moving bodies"):
        Evaluator(kd.Model.from_urdf(urdf), ["tip"])
