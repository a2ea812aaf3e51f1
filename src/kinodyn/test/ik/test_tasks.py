"""Frame-task errors and Jacobians: relative-rotation log, finite differences, Robot Dynamics lecture notes
(ETH), Ex. 2.9.1 Jacobian."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.ik import FrameTask, TaskStack
from kinodyn.ik.tasks import rotation_error
from kinodyn.spatial import so3_exp, so3_log
from scipy.spatial.transform import Rotation

if TYPE_CHECKING:
    from kinodyn.model import Model


def test_rotation_error_matches_spatial_log_and_scipy() -> None:
    rng = np.random.default_rng(11)
    rotations = list(Rotation.random(200, random_state=rng).as_matrix())
    # Angles near 0 and near pi exercise both branches of the log.
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    rotations += [so3_exp(angle * axis) for angle in (0.0, 1e-9, 1e-4, np.pi / 2, np.pi - 1e-6, np.pi - 1e-9)]
    for C_target, C in itertools.pairwise(rotations):
        expected = so3_log(C_target @ C.T)
        np.testing.assert_allclose(rotation_error(C_target, C), expected, atol=1e-12)
        scipy_vector = Rotation.from_matrix(C_target @ C.T).as_rotvec()
        if np.linalg.norm(scipy_vector) < np.pi - 1e-6:  # at pi, phi and -phi are the same rotation
            np.testing.assert_allclose(rotation_error(C_target, C), scipy_vector, atol=1e-9)
    # Direction convention (Robot Dynamics lecture notes (ETH), (2.236)): rotating C by exp(Δφ) on the left
    # reaches the target.
    C, C_target = rotations[0], rotations[1]
    np.testing.assert_allclose(so3_exp(rotation_error(C_target, C)) @ C, C_target, atol=1e-12)


def test_planar_arm_position_jacobian_is_example_2_9_1(planar3: Model) -> None:
    q_t = np.array([np.pi / 6, np.pi / 3, np.pi / 3])
    task = FrameTask(planar3, "ee", np.zeros(3), kind="position")
    J = task.jacobian(planar3, q_t)
    printed = 0.5 * np.array([[0.0, -np.sqrt(3), -np.sqrt(3)], [-4.0, -3.0, -1.0]])  # (2.211)
    np.testing.assert_allclose(J[[0, 2]], printed, atol=1e-14)
    # Ex. 2.8.5: (x, z) = (2, 1) at q_t (z includes the base offset l0 = 1).
    np.testing.assert_allclose(-task.error(planar3, q_t), [2.0, 0.0, 1.0], atol=1e-14)


@pytest.mark.parametrize("kind", ["pose", "position", "orientation"])
def test_task_jacobian_is_minus_derivative_of_error_at_the_target(arm7: Model, kind: str) -> None:
    """At q with target = FK(q): d(Δx)/dq = -J (the log's Jacobian is the identity at Δφ = 0)."""
    rng = np.random.default_rng(12)
    q = arm7.random_configuration(rng)
    task = FrameTask(arm7, "ee_link", arm7.frame_placement(q, "ee_link"), kind=kind)
    J = task.jacobian(arm7, q)
    h = 1e-6
    numeric = np.column_stack([(task.error(arm7, q + h * e) - task.error(arm7, q - h * e)) / (2 * h)
                               for e in np.eye(arm7.nq)])
    np.testing.assert_allclose(numeric, -J, atol=1e-8)
    assert J.shape == (task.rows.stop - task.rows.start, arm7.nv)


def test_stack_weights_and_columns(arm7: Model) -> None:
    rng = np.random.default_rng(13)
    q = arm7.random_configuration(rng)
    target = arm7.frame_placement(arm7.random_configuration(rng), "ee_link")
    pose = FrameTask(arm7, "ee_link", target, position_weight=4.0, orientation_weight=0.25)
    elbow = FrameTask(arm7, "link4", target[:3, 3], kind="position")
    stack = TaskStack(arm7, [pose, elbow], columns=[0, 2, 5])
    ev = stack.evaluate(q)
    scale = np.sqrt([4.0] * 3 + [0.25] * 3 + [1.0] * 3)
    expected_error = np.concatenate([pose.error(arm7, q), elbow.error(arm7, q)]) * scale
    expected_jacobian = np.vstack([pose.jacobian(arm7, q), elbow.jacobian(arm7, q)])[:, [0, 2, 5]]
    expected_jacobian *= scale[:, None]
    np.testing.assert_allclose(ev.error, expected_error, atol=1e-15)
    np.testing.assert_allclose(ev.jacobian, expected_jacobian, atol=1e-15)
    # Unweighted errors against FK from the model and the spatial log.
    T = arm7.frame_placement(q, "ee_link")
    assert ev.position_errors[0] == pytest.approx(np.linalg.norm(target[:3, 3] - T[:3, 3]), abs=1e-14)
    angle = np.linalg.norm(so3_log(target[:3, :3] @ T[:3, :3].T))
    assert ev.orientation_errors[0] == pytest.approx(angle, abs=1e-12)
    assert ev.orientation_errors[1] == 0.0  # a position task leaves the orientation free


def test_task_rejects_bad_targets(arm7: Model) -> None:
    with pytest.raises(ValueError, match="task kind"):
        FrameTask(arm7, "ee_link", np.eye(4), kind="twist")
    with pytest.raises(ValueError, match="must be a 4x4 pose"):
        FrameTask(arm7, "ee_link", np.zeros(3), kind="pose")
    scaled = np.eye(4)
    scaled[:3, :3] *= 2.0
    with pytest.raises(ValueError, match="not orthonormal"):
        FrameTask(arm7, "ee_link", scaled)
    with pytest.raises(ValueError, match=r"not homogeneous: its bottom row is \[1.0, 0.0, 0.0, 1.0\]"):
        FrameTask(arm7, "ee_link", np.vstack([np.eye(4)[:3], [1.0, 0.0, 0.0, 1.0]]))
    with pytest.raises(ValueError, match="must be an array of numbers, got 'home'"):
        FrameTask(arm7, "ee_link", "home")
    nan_pose = np.eye(4)
    nan_pose[0, 3] = np.nan
    with pytest.raises(ValueError, match="must be finite") as refused:
        FrameTask(arm7, "ee_link", nan_pose)
    assert "\n" not in str(refused.value)  # one line
    with pytest.raises(KeyError, match="unknown frame"):
        FrameTask(arm7, "ee_lnk", np.eye(4))
