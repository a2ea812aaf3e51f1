"""InputError, the one rejected-input error: its throttle key names the cause, never a received value, so a
stream of distinct bad values is one throttled line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kinodyn_common.conversions import InputError, JointStateError
from kinodyn_common.problem_log import DistinctProblemLog, problem_key

if TYPE_CHECKING:
    from conftest import RecordingLogger


def test_the_key_is_the_kind_and_a_detail_from_a_fixed_set() -> None:
    error = InputError("limits", "out of limits: joint 'a' at 7.3 rad", "position")
    assert error.key == ("limits", "position")
    assert error.kind == "limits"
    assert str(error) == "out of limits: joint 'a' at 7.3 rad"
    assert InputError("empty", "no joint").key == ("empty", ())
    assert isinstance(error, ValueError)  # caught with the other input errors (problem_log.INPUT_ERRORS)
    assert JointStateError("length_mismatch", "2 values for 3 names", "velocity").key == ("length_mismatch",
                                                                                          "velocity")


def test_distinct_values_of_one_cause_are_throttled_as_one(logger: RecordingLogger) -> None:
    problems = DistinctProblemLog(logger)
    for value in (7.3, 8.1, 9.4):
        error = InputError("limits", f"out of limits: {value} rad", "position")
        problems.warn(problem_key("command", error), f"rejected: {error}")
    other = InputError("limits", "out of limits: 50 rad/s", "velocity")
    problems.warn(problem_key("command", other), f"rejected: {other}")
    assert logger.lines == [("warning", "rejected: out of limits: 7.3 rad"),
                            ("warning", "rejected: out of limits: 50 rad/s")]
    assert problem_key("command", ZeroDivisionError("x")) == ("command", "ZeroDivisionError")
