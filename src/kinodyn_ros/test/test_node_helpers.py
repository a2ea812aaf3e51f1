"""Pure helpers of the kinematics and dynamics nodes: request defaults, velocity limits, bad requests."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import numpy as np
import pytest
from kinodyn.ik import solve_ik
from kinodyn_common.problem_log import DistinctProblemLog
from kinodyn_common.service_call import answering_bad_requests, error_text
from kinodyn_ros.nodes.kinematics import mid_range, request_tolerance, velocity_limited_step
from rclpy.logging import get_logger

from kinodyn import Model
from kinodyn_interfaces.srv import GravityCompensation

if TYPE_CHECKING:
    from conftest import RecordingLogger


def test_request_tolerance_zero_means_the_default() -> None:
    assert request_tolerance(0.0, 1e-6, "position_tolerance") == 1e-6
    assert request_tolerance(1e-3, 1e-6, "position_tolerance") == 1e-3


@pytest.mark.parametrize("value", [-1e-3, math.nan, math.inf])
def test_request_tolerance_rejects_negative_and_non_finite(value: float) -> None:
    with pytest.raises(ValueError, match="timeout must be positive"):
        request_tolerance(value, 1.0, "timeout")


def test_velocity_limited_step_keeps_direction_and_the_worst_joint_at_its_limit() -> None:
    limit = np.array([2.0, 1.0, np.inf])
    qdot = np.array([1.0, -4.0, 100.0])
    scaled = velocity_limited_step(qdot, limit)
    np.testing.assert_allclose(scaled, qdot / 4.0, rtol=0, atol=0)  # joint 2 is 4 times over its limit
    assert np.all(np.abs(scaled) <= limit)
    slow = np.array([0.5, 0.5, 5.0])
    np.testing.assert_array_equal(velocity_limited_step(slow, limit), slow)


def test_mid_range_is_solve_ik_s_default_seed() -> None:
    middle = mid_range(np.array([-1.0, -np.inf, 0.0]), np.array([3.0, np.inf, 2.0]))
    np.testing.assert_array_equal(middle, [1.0, 0.0, 1.0])
    model = Model.from_urdf(Path(__file__).resolve().parents[3] / "urdf" / "arm7.urdf")
    target = model.frame_placement(model.random_configuration(0), "ee_link")
    default = solve_ik(model, "ee_link", target, max_iterations=2, restarts=0)
    seed = mid_range(model.lower_limit, model.upper_limit)
    seeded = solve_ik(model, "ee_link", target, seed, max_iterations=2, restarts=0)
    np.testing.assert_array_equal(seeded.q, default.q)  # the same start: the same iterates


def test_error_text_drops_the_quotes_of_key_errors() -> None:
    assert error_text(KeyError("unknown frame 'x'")) == "unknown frame 'x'"
    assert error_text(ValueError("bad")) == "bad"


def test_bad_request_becomes_an_empty_failed_response_and_the_next_request_is_served() -> None:
    def handle(request: GravityCompensation.Request, response: GravityCompensation.Response
               ) -> GravityCompensation.Response:
        if not request.joint_state.name:
            response.name = ["half", "filled"]
            raise KeyError("unknown joint ''")
        response.name, response.effort, response.success = ["j"], [1.0], True
        return response

    callback = answering_bad_requests("gravity_compensation", DistinctProblemLog(get_logger("test")), handle)
    bad = callback(GravityCompensation.Request(), GravityCompensation.Response())
    assert not bad.success
    assert bad.message == "gravity_compensation: unknown joint ''"
    assert list(bad.name) == []
    assert list(bad.effort) == []
    good = GravityCompensation.Request()
    good.joint_state.name = ["j"]
    served = callback(good, GravityCompensation.Response())
    assert served.success
    assert list(served.effort) == [1.0]
    assert served.message == ""


def test_a_failing_algorithm_is_answered_with_failure_and_one_error_per_exception_type(
    logger: RecordingLogger,
) -> None:
    def handle(request: GravityCompensation.Request, response: GravityCompensation.Response) -> NoReturn:
        raise RuntimeError("a bug")

    callback = answering_bad_requests("x", DistinctProblemLog(logger), handle)
    for _ in range(3):
        answer = callback(GravityCompensation.Request(), GravityCompensation.Response())
        assert not answer.success
        assert answer.message == "x: computing the answer failed: RuntimeError: a bug"
    assert logger.lines == [("error", "request answered with failure: x: computing the answer failed: "
                             "RuntimeError: a bug")]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_result_is_never_answered_as_success(bad: float, logger: RecordingLogger) -> None:
    def handle(request: GravityCompensation.Request, response: GravityCompensation.Response
               ) -> GravityCompensation.Response:
        response.name, response.effort, response.success = ["a", "b"], [1.0, bad], True
        return response

    answer = answering_bad_requests("gravity", DistinctProblemLog(logger), handle)(
        GravityCompensation.Request(), GravityCompensation.Response()
    )
    assert not answer.success
    assert list(answer.effort) == []
    assert list(answer.name) == []
    assert answer.message.startswith("gravity: the result is not finite (effort[1])")
    assert [level for level, _ in logger.lines] == ["error"]
