"""Kinematics against Pinocchio (test-only reference) on the Panda, Solo-12 and the project's URDFs.

Pinocchio's models are built with mimic joints as independent joints and continuous joints as
(cos, sin); the helpers below map kinodyn's q, v and Jacobian columns onto them.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from .pinocchio_pair import CASES, Pair, pair_fixture

STATES = 50
REFERENCES = {"world": pin.WORLD, "local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


def close(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


pair = pair_fixture(CASES)


def states(pair: Pair) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    return [(pair.m.random_configuration(rng), rng.normal(size=pair.m.nv)) for _ in range(STATES)]


def test_frame_placements_jacobians_and_bias(pair: Pair) -> None:
    m, pm, pd = pair.m, pair.pm, pair.pd
    for q, v in states(pair):
        qp, vp = pair.q(q), pair.G @ v
        pin.forwardKinematics(pm, pd, qp, vp, np.zeros(pm.nv))
        pin.updateFramePlacements(pm, pd)
        pin.computeJointJacobians(pm, pd, qp)
        placements = m.frame_placements(q)
        for f, name in enumerate(m.frame_names):
            fid = pm.getFrameId(name, pin.BODY)
            close(placements[f], pd.oMf[fid].homogeneous)
            close(m.frame_placement(q, name), pd.oMf[fid].homogeneous)
            for ref, pref in REFERENCES.items():
                close(m.frame_jacobian(q, name, ref), pin.getFrameJacobian(pm, pd, fid, pref) @ pair.G)
                drift = (
                    pin.getFrameClassicalAcceleration
                    if ref == "local_world_aligned"
                    else pin.getFrameAcceleration
                )
                expected = drift(pm, pd, fid, pref)
                close(m.frame_bias_acceleration(q, v, name, ref), expected.vector)


def test_com_and_com_jacobian(pair: Pair) -> None:
    for q, _ in states(pair):
        qp = pair.q(q)
        close(pair.m.com(q), pin.centerOfMass(pair.pm, pair.pd, qp))
        close(pair.m.com_jacobian(q), pin.jacobianCenterOfMass(pair.pm, pair.pd, qp) @ pair.G)


def test_integrate_and_difference(pair: Pair) -> None:
    for q, v in states(pair):
        q1 = pair.m.integrate(q, v, 0.7)
        close(pair.q(q1), pin.integrate(pair.pm, pair.q(q), 0.7 * (pair.G @ v)))
        close(pair.G @ pair.m.difference(q, q1), pin.difference(pair.pm, pair.q(q), pair.q(q1)))


def test_manipulability_is_yoshikawa_measure(pair: Pair) -> None:
    name = pair.m.frame_names[-1]
    fid = pair.pm.getFrameId(name, pin.BODY)
    for q, _ in states(pair)[:10]:
        J = pin.computeFrameJacobian(pair.pm, pair.pd, pair.q(q), fid, pin.LOCAL_WORLD_ALIGNED) @ pair.G
        expected = np.sqrt(max(np.linalg.det(J @ J.T), 0.0)) if J.shape[1] >= 6 else 0.0
        np.testing.assert_allclose(pair.m.manipulability(q, name), expected, rtol=1e-7, atol=1e-12)
