"""The trusted-caller path of the task setters (``checked=False``): the same task state as the checked
setters, bit for bit, arrays never shared with a caller, and the checked setters still refusing bad input.

Second source: a twin task given the same values through the checked setters (``set_reference`` of the
whole pose for ``FrameTask``), compared entry by entry and through its rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.wbc.layout import VariableLayout
from kinodyn.control.wbc.tasks import ComTask, FrameTask
from kinodyn.evaluation import Evaluator
from kinodyn.model import Model
from scipy.spatial.transform import Rotation

URDF = Path(__file__).resolve().parents[4] / "urdf"


@pytest.fixture(scope="module")
def quadruped() -> Model:
    return Model.from_urdf(URDF / "quadruped.urdf", floating_base=True)


def layout_of(model: Model) -> VariableLayout:
    return VariableLayout.build(model.nv, [("LF_FOOT", 3)], model.nv - 6, torque_variables=True)


def frame_state(task: FrameTask) -> list[np.ndarray]:
    assert task.pose is not None
    return [task.pose, task.twist, task.acceleration, task._rotation]  # noqa: SLF001  (the task's cached rotation)


def assert_same_frame_state(a: FrameTask, b: FrameTask, model: Model, q: np.ndarray, v: np.ndarray) -> None:
    for x, y in zip(frame_state(a), frame_state(b), strict=True):
        np.testing.assert_array_equal(x, y)
        assert x.dtype == y.dtype == np.float64
        assert x.flags.c_contiguous
        assert y.flags.c_contiguous
    ev = Evaluator(model, a.frames).evaluate(q, v)
    ra, rb = a.rows(ev, layout_of(model)), b.rows(ev, layout_of(model))
    np.testing.assert_array_equal(ra.A, rb.A)
    np.testing.assert_array_equal(ra.b, rb.b)


def test_frame_task_unchecked_setters_give_the_state_of_the_checked_ones(quadruped: Model) -> None:
    rng = np.random.default_rng(4)
    q, v = quadruped.random_configuration(rng), rng.normal(size=quadruped.nv)
    fast, checked = FrameTask(quadruped, "LF_FOOT", 30.0, 5.0), FrameTask(quadruped, "LF_FOOT", 30.0, 5.0)
    with pytest.raises(RuntimeError, match="no reference"):
        fast.set_position_reference((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), checked=False)
    start = np.eye(4)
    start[:3, 3] = rng.normal(size=3)
    fast.set_reference(start, rng.normal(size=6), rng.normal(size=6))
    for _ in range(3):  # unchecked ticks, then a checked call in between: its values are copied in
        C = Rotation.from_rotvec(rng.uniform(-1.5, 1.5, 3)).as_matrix()
        p, w = rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
        fast.set_position_reference(p[0], p[1], p[2], checked=False)
        fast.set_orientation_reference(C, w[0], w[1], checked=False)
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = C, p[0]
        checked.set_reference(pose, np.r_[p[1], w[0]], np.r_[p[2], w[1]])
        assert_same_frame_state(fast, checked, quadruped, q, v)
        p2 = rng.normal(size=(3, 3))
        fast.set_position_reference(p2[0], p2[1], p2[2])  # checked: a fresh pose
        fast.set_position_reference(p2[0], p2[1], p2[2], checked=False)  # the same values again
        checked.set_position_reference(p2[0], p2[1], p2[2])
        assert_same_frame_state(fast, checked, quadruped, q, v)


def test_frame_task_unchecked_setters_share_no_array_with_a_caller(quadruped: Model) -> None:
    task = FrameTask(quadruped, "LF_FOOT", 30.0, 5.0)
    pose, twist, acceleration = np.eye(4), np.arange(6.0), np.arange(6.0) + 10.0
    task.set_reference(pose, twist, acceleration)
    C = Rotation.from_rotvec([0.1, -0.2, 0.3]).as_matrix()
    task.set_orientation_reference(C, np.ones(3), np.ones(3))  # (the checked path may keep C itself)
    kept = [x.copy() for x in (pose, twist, acceleration, C)]
    position, rates = np.array([1.0, 2.0, 3.0]), np.array([[4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    task.set_position_reference(position, rates[0], rates[1], checked=False)
    task.set_orientation_reference(C.T.copy(), rates[0], rates[1], checked=False)
    for caller, before in zip((pose, twist, acceleration, C), kept, strict=True):
        np.testing.assert_array_equal(caller, before)  # the in-place writes went to the task's own arrays
    state = [x.copy() for x in frame_state(task)]
    position[:], rates[:] = np.nan, np.nan  # the caller reuses its arrays
    for x, before in zip(frame_state(task), state, strict=True):
        np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(task._rotation, C.T)  # noqa: SLF001  (the task's cached rotation)


def test_frame_task_checked_setters_still_refuse_bad_input(quadruped: Model) -> None:
    task = FrameTask(quadruped, "LF_FOOT", 30.0, 5.0)
    task.set_reference(np.eye(4))
    task.set_position_reference((1.0, 2.0, 3.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), checked=False)
    state = [x.copy() for x in frame_state(task)]
    zeros = np.zeros(3)
    with pytest.raises(ValueError, match="position"):
        task.set_position_reference((0.0, np.nan, 0.0), zeros, zeros)
    with pytest.raises(ValueError, match="shape"):
        task.set_position_reference(np.zeros(4), zeros, zeros)
    with pytest.raises(ValueError, match="finite"):
        task.set_position_reference(zeros, (0.0, np.inf, 0.0), zeros)
    with pytest.raises(ValueError, match="finite"):
        task.set_orientation_reference(np.eye(3), zeros, np.zeros(2))
    with pytest.raises(ValueError, match="not a rotation matrix"):
        task.set_orientation_reference(np.diag([1.0, 1.0, -1.0]), zeros, zeros)
    for x, before in zip(frame_state(task), state, strict=True):
        np.testing.assert_array_equal(x, before)  # a refusal changes nothing


def test_com_task_unchecked_setter_gives_the_state_of_the_checked_one(quadruped: Model) -> None:
    rng = np.random.default_rng(9)
    q, v = quadruped.random_configuration(rng), rng.normal(size=quadruped.nv)
    fast, checked = ComTask(40.0, 8.0, mask=[True, True, False]), ComTask(40.0, 8.0, mask=[True, True, False])
    caller = rng.normal(size=(3, 3))
    fast.set_reference(caller[0], caller[1], caller[2])  # checked: may keep the caller's arrays
    kept = caller.copy()
    ev = Evaluator(quadruped, ()).evaluate(q, v)
    for _ in range(3):
        values = rng.normal(size=(3, 3))
        fast.set_reference(tuple(values[0].tolist()), values[1], values[2], checked=False)
        checked.set_reference(values[0].copy(), values[1].copy(), values[2].copy())
        values[:] = np.nan  # the caller reuses its array: the unchecked path kept copies
        for x, y in zip((fast.position, fast.velocity, fast.acceleration),
                        (checked.position, checked.velocity, checked.acceleration), strict=True):
            assert x is not None
            assert y is not None
            assert x.dtype == np.float64
            assert x.flags.c_contiguous
            np.testing.assert_array_equal(x, y)
        ra, rb = fast.rows(ev, layout_of(quadruped)), checked.rows(ev, layout_of(quadruped))
        np.testing.assert_array_equal(ra.A, rb.A)
        np.testing.assert_array_equal(ra.b, rb.b)
    np.testing.assert_array_equal(caller, kept)  # the in-place writes went to the task's own arrays
    zeros = np.zeros(3)
    with pytest.raises(ValueError, match="CoM position"):
        fast.set_reference((0.0, np.nan, 0.0), zeros, zeros)
    with pytest.raises(ValueError, match="CoM velocity"):
        fast.set_reference(zeros, np.zeros(2), zeros)
    with pytest.raises(ValueError, match="CoM acceleration"):
        fast.set_reference(zeros, zeros, (np.inf, 0.0, 0.0))
