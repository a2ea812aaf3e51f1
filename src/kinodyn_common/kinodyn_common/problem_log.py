"""Report each distinct input problem once, not once per message; keep a node alive through bad messages."""

from __future__ import annotations

import functools
import inspect
import time
from typing import TYPE_CHECKING, Protocol

import rclpy
from rclpy.impl.implementation_singleton import rclpy_implementation

if TYPE_CHECKING:
    from collections.abc import Callable, Hashable


class ProblemLogger(Protocol):
    """Where the problems go: rclpy's logger, or a test's recording one."""

    def warning(self, message: str, /) -> object: ...

    def error(self, message: str, /) -> object: ...


class DistinctProblemLog:
    """Logs the first time a problem (identified by ``key``) occurs, then at most once per ``period``
    seconds for that key, with the number of occurrences that were not reported in between."""

    def __init__(self, logger: ProblemLogger, period: float = 10.0) -> None:
        self._logger = logger
        self._period = period
        self._last: dict[Hashable, float] = {}
        self._silenced: dict[Hashable, int] = {}

    # Each severity is logged from its own line: rclpy's logger keys its per-call-site context on the calling
    # line and raises "Logger severity cannot be changed between calls" when one line logs at two severities.
    def warn(self, key: Hashable, message: str) -> None:
        text = self._due(key, message)
        if text is not None:
            self._logger.warning(text)

    def error(self, key: Hashable, message: str) -> None:
        text = self._due(key, message)
        if text is not None:
            self._logger.error(text)

    def _due(self, key: Hashable, message: str) -> str | None:
        """The line to log now for ``key``, or None while it is throttled."""
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self._period:
            self._silenced[key] = self._silenced.get(key, 0) + 1
            return None
        silenced = self._silenced.pop(key, 0)
        suffix = f" ({silenced} more since the last report)" if silenced else ""
        self._last[key] = now
        return message + suffix


def problem_key(context: str, exc: BaseException) -> Hashable:
    """The throttle key of ``exc`` met in ``context``: its ``key`` attribute (an InputError, the one
    rejected-input error, carries one naming the cause), else its type; never its text (it may quote received
    values)."""
    key = getattr(exc, "key", None)
    return (context, type(exc).__name__) if key is None else (context, key)


INPUT_ERRORS = (ValueError, KeyError)
"""What the conversions, the input bounds and the kinodyn core raise for unusable input (InputError and
JointStateError are ValueErrors; unknown frame names are KeyErrors)."""


def dropping_bad_messages(
    problems: DistinctProblemLog, what: str, callback: Callable[..., object]
) -> Callable[..., None]:
    """A subscription (or timer) callback running ``callback(*args)`` that drops a message it cannot use
    instead of letting the exception end the node: an ``INPUT_ERRORS`` is one warning per cause
    ("ignoring <what>: ..."), any other failure of the algorithm on that message one error per exception
    type. Both are throttled by ``problems``. A publish failing because Ctrl-C shut the context down
    propagates, as run_node expects."""

    @functools.wraps(callback)  # its signature: an executor passes a timer's TimerInfo only if it takes one
    def guarded(*args: object) -> None:
        try:
            callback(*args)
        except INPUT_ERRORS as exc:
            problems.warn(problem_key(what, exc), f"ignoring {what}: {error_text(exc)}")
        except Exception as exc:
            if isinstance(exc, rclpy_implementation.RCLError) and not rclpy.ok():
                raise  # Ctrl-C shut the context down while the callback was publishing
            problems.error(
                problem_key(what, exc),
                f"dropped {what}: processing it failed with {type(exc).__name__}: {exc}; the node goes on",
            )

    # computed once: rclpy's EventsExecutor inspects a timer callback's signature on every call
    guarded.__signature__ = inspect.signature(callback)  # type: ignore[attr-defined]
    return guarded


def error_text(exc: BaseException) -> str:
    """The message of ``exc`` (a ``KeyError`` would otherwise be shown in quotes)."""
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
