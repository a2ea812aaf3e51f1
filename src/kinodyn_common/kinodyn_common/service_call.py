"""Service callbacks that answer a bad request with ``success = false`` and a message instead of failing, and
never answer ``success = true`` with a non-finite number."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

from kinodyn_common.finite import non_finite_field
from kinodyn_common.problem_log import INPUT_ERRORS, DistinctProblemLog, error_text, problem_key

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["answering_bad_requests", "error_text"]


class _Response(Protocol):
    """A service response with the ``success`` and ``message`` fields these callbacks answer with."""

    success: bool
    message: str


RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT", bound=_Response)


def _failed(response: ResponseT, message: str) -> ResponseT:
    response = type(response)()  # nothing half-filled
    response.success = False
    response.message = message
    return response


def answering_bad_requests(
    service: str, problems: DistinctProblemLog, handle: Callable[[RequestT, ResponseT], ResponseT]
) -> Callable[[RequestT, ResponseT], ResponseT]:
    """A service callback running ``handle(request, response)``, which sets ``success`` itself.

    The answer is ``success = false``, ``message = "<service>: <reason>"`` and every other field empty when
    ``handle`` raises an ``INPUT_ERRORS`` (a bad request: one warning per cause), raises anything else (a
    failure of the algorithm: one error per exception type), or answers with a non-finite number (the
    request is beyond what the model can evaluate: one error). Logs are throttled by ``problems``;
    the node keeps serving.
    """

    def callback(request: RequestT, response: ResponseT) -> ResponseT:
        try:
            answer = handle(request, response)
        except INPUT_ERRORS as exc:
            failed = _failed(response, f"{service}: {error_text(exc)}")
            problems.warn(problem_key(service, exc), f"bad request answered: {failed.message}")
            return failed
        except Exception as exc:  # noqa: BLE001  (any failure of the algorithm is answered; the node keeps serving)
            failed = _failed(response, f"{service}: computing the answer failed: {type(exc).__name__}: {exc}")
            problems.error(problem_key(service, exc), f"request answered with failure: {failed.message}")
            return failed
        field = non_finite_field(answer)
        if field is None:
            return answer
        failed = _failed(
            response,
            f"{service}: the result is not finite ({field}); the request's values are beyond what the model "
            "can evaluate",
        )
        problems.error((service, "non_finite_result"), f"request answered with failure: {failed.message}")
        return failed

    return callback
