"""conversions.checked_pose (and checked_pose_array, its seven numbers as one array): the one check of a
received pose, with kinodyn.spatial's unit-norm tolerance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Point, Pose, Quaternion
from kinodyn.spatial.rotations import UNIT_NORM_TOLERANCE, as_unit_quaternion, quat_normalize
from kinodyn_common.conversions import (
    MAX_TRANSLATION,
    InputError,
    checked_pose,
    checked_pose_array,
    pose_to_matrix,
)
from scipy.spatial.transform import Rotation


def test_a_quaternion_within_the_tolerance_is_normalized_and_the_pose_kept() -> None:
    xyzw = np.array([0.1, -0.2, 0.3, 0.9])
    xyzw *= (1.0 + 0.9 * UNIT_NORM_TOLERANCE) / np.linalg.norm(xyzw)
    pose = checked_pose([1.0, -2.0, 3.0], xyzw, "test pose")
    assert pose[:3].tolist() == [1.0, -2.0, 3.0]
    assert np.linalg.norm(pose[3:]) == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(pose[3:], xyzw / np.linalg.norm(xyzw), rtol=0, atol=1e-15)


OFF_UNIT = 1.0 + 1.1 * UNIT_NORM_TOLERANCE


@pytest.mark.parametrize(("translation", "xyzw", "kind", "text"), [
    ([0.0, math.nan, 0.0], [0, 0, 0, 1], "non_finite_pose", "has a non-finite translation or rotation"),
    ([0.0, 0.0, 0.0], [0, 0, math.inf, 1], "non_finite_pose", r"0.0, inf, 1.0\] is not finite"),
    ([2 * MAX_TRANSLATION, 0, 0], [0, 0, 0, 1], "translation_too_large", r"exceeds 1e\+09 m in magnitude"),
    ([0.0, 0.0, 0.0], [0, 0, 0, OFF_UNIT], "non_unit_quaternion", "not a unit quaternion"),
    ([0.0, 0.0, 0.0], [0, 0, 0, 0], "non_unit_quaternion", "not a unit quaternion"),
])
def test_a_pose_that_is_not_one_is_an_input_error_naming_its_cause(
        translation: list[float], xyzw: list[float], kind: str, text: str) -> None:
    with pytest.raises(InputError, match=rf"^test pose .*{text}") as caught:
        checked_pose(translation, xyzw, "test pose")
    assert caught.value.key == (kind, ())
    row = np.array([*translation, *xyzw], float)
    with pytest.raises(InputError, match=rf"^test pose .*{text}") as caught:
        checked_pose_array(row, "test pose")
    assert caught.value.key == (kind, ())


def test_a_pose_message_goes_through_the_same_check_and_gives_the_same_rotation() -> None:
    xyzw = np.array([0.3, 0.1, -0.4, 0.5])
    xyzw /= np.linalg.norm(xyzw)
    x, y, z, w = xyzw.tolist()
    T = pose_to_matrix(Pose(position=Point(x=1.0, y=2.0, z=3.0), orientation=Quaternion(x=x, y=y, z=z, w=w)))
    np.testing.assert_allclose(T[:3, :3], Rotation.from_quat(xyzw).as_matrix(), atol=1e-14)  # a second source
    np.testing.assert_array_equal(T[:3, 3], [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match=r"^Pose rotation is not a unit quaternion"):
        pose_to_matrix(Pose(orientation=Quaternion(x=0.0, y=0.0, z=0.0, w=1.0 + 2 * UNIT_NORM_TOLERANCE)))


def test_an_accepted_pose_is_kinodyn_spatials_normalization_bit_for_bit() -> None:
    """Random poses within the tolerance, signed zeros and the tolerance's edge: the same numbers as
    ``quat_normalize`` of the quaternion ``as_unit_quaternion`` accepts (kinodyn.spatial's route)."""
    rng = np.random.default_rng(3)
    for k in range(2000):
        translation = rng.normal(scale=10.0 ** rng.integers(-3, 9), size=3)
        xyzw = rng.normal(size=4)
        xyzw *= (1.0 + rng.uniform(-0.99, 0.99) * UNIT_NORM_TOLERANCE) / np.linalg.norm(xyzw)
        if k % 7 == 0:
            translation[k % 3], xyzw[k % 4] = -0.0, -0.0
            xyzw *= (1.0 + rng.uniform(-0.99, 0.99) * UNIT_NORM_TOLERANCE) / np.linalg.norm(xyzw)
        pose = checked_pose(translation, xyzw, "test pose")
        expected = quat_normalize(as_unit_quaternion(xyzw))
        assert pose[:3].tobytes() == translation.tobytes()
        assert pose[3:].tobytes() == expected.tobytes()
        row = np.r_[translation, xyzw]  # the seven numbers as one array: the same pose, the row untouched
        assert checked_pose_array(row, "test pose").tobytes() == pose.tobytes()
        assert row[3:].tobytes() == xyzw.tobytes()
