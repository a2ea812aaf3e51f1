"""Service callbacks that answer a bad request with ``success = false`` and a message instead of failing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kinodyn_ros.problem_log import DistinctProblemLog

BAD_REQUEST_ERRORS = (ValueError, KeyError)
"""What the conversions and the kinodyn core raise for unusable input: unknown joint or frame names
(``KeyError`` from ``Model.frame_id``), NaN, wrong lengths, non-unit quaternions (``ValueError``, which
includes ``JointStateError`` and ``URDFError``)."""


def error_text(exc: BaseException) -> str:
    """The message of ``exc`` (a ``KeyError`` would otherwise be shown in quotes)."""
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)


def answering_bad_requests(
    service: str, problems: DistinctProblemLog, handle: Callable[[Any, Any], Any]
) -> Callable[[Any, Any], Any]:
    """A service callback running ``handle(request, response)``; a ``BAD_REQUEST_ERRORS`` it raises
    becomes ``success = false`` with ``message = "<service>: <error>"`` and one warning per distinct
    message and every other field empty, so the node keeps serving. ``handle`` sets ``success`` itself."""

    def callback(request: Any, response: Any) -> Any:
        try:
            return handle(request, response)
        except BAD_REQUEST_ERRORS as exc:
            response = type(response)()  # nothing half-filled
            response.success = False
            response.message = f"{service}: {error_text(exc)}"
            problems.warn((service, response.message), f"bad request answered: {response.message}")
            return response

    return callback
