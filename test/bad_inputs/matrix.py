"""Categories, cases, outcome classifiers and the printed matrix of the bad-input campaign.

A case names the surface it enters by, the input, and the category it must land in. The category is never
written by hand: a classifier derives it from what happened (an exception and where it was raised, a value
and whether it is finite, a service answer, a node's new log lines and whether it is alive, a process's exit
code and output). The categories:

- clear error: refused, with one line that names what was wrong (one of the case's ``names``);
- documented: accepted and handled as a cited sentence of docs/ says (the sentence is checked to exist);
- silent accept: accepted without a word and without a cited document (a bug);
- unhelpful error: refused, but the one line does not name the bad input (e.g. a deep algorithm's message);
- crash/hang: a bare exception (numpy, LinAlgError, KeyError from library code, a traceback), a process that
  died or a call that never returned;
- unsafe: a non-finite or wrong value reached a command interface, a published message or a service answer
  marked success.
"""

from __future__ import annotations

import re
import signal
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from types import FrameType

REPO = Path(__file__).resolve().parents[2]
ROS_LIB = REPO / "install" / "kinodyn_ros" / "lib" / "kinodyn_ros"
CONTROL_NODE = REPO / "install" / "kinodyn_control" / "lib" / "kinodyn_control" / "control_node"

CLEAR, DOCUMENTED, SILENT, UNHELPFUL, CRASH, UNSAFE = (
    "clear error",
    "documented",
    "silent accept",
    "unhelpful error",
    "crash/hang",
    "unsafe",
)
CATEGORIES = (CLEAR, DOCUMENTED, SILENT, UNHELPFUL, CRASH, UNSAFE)
FORBIDDEN = (CRASH, UNSAFE)
SURFACES = (
    "core API",
    "URDF",
    "simulator/physics",
    "node parameter",
    "topic message",
    "service request",
    "control_node",
    "launcher",
    "time stamp",
    "plausibility",
    "bag file",
    "device",
    "viewer/report",
    "solver",
)

BARE_TYPES = (
    AttributeError,
    IndexError,
    ZeroDivisionError,
    NameError,
    AssertionError,
    RecursionError,
    UnicodeError,
    np.linalg.LinAlgError,
    MemoryError,
    SystemError,
)
"""Exception types that are a crash wherever they are raised: they explain an implementation detail."""


@dataclass(frozen=True)
class Doc:
    """A sentence of a document under the repository; ``holds`` checks it is there (whitespace-normalised)."""

    path: str
    phrase: str

    def holds(self) -> bool:
        text = (REPO / self.path).read_text() if (REPO / self.path).is_file() else ""
        return _squash(self.phrase) in _squash(text)


def _squash(text: str) -> str:
    return " ".join(text.split()).replace("`", "")


@dataclass(frozen=True)
class Case:
    """One bad input. ``payload`` is what the surface's runner sends (a callable, a message, a request, a
    file); ``names``: words one of which a clear message contains; ``cause``: node cases sharing a cause
    share one throttled log line (a node reports a cause at most every 10 s)."""

    surface: str
    name: str
    given: str
    expected: str
    payload: Any = None
    names: tuple[str, ...] = ()
    doc: Doc | None = None
    cause: str = ""
    returns_finite: bool | None = None  # what the cited document says the result is (None: either)

    def __post_init__(self) -> None:
        assert self.surface in SURFACES, (self.surface, self.expected)
        assert self.expected in CATEGORIES, (self.surface, self.expected)
        assert self.expected != DOCUMENTED or self.doc is not None, f"{self.name}: documented needs a doc"


@dataclass(frozen=True)
class Outcome:
    category: str
    detail: str


@dataclass(frozen=True)
class Result:
    case: Case
    outcome: Outcome

    @property
    def ok(self) -> bool:
        return self.outcome.category == self.case.expected


def names_it(text: str, names: Sequence[str]) -> bool:
    """``text`` mentions one of ``names`` (case-insensitive); no names: any non-empty text does."""
    low = text.lower()
    return bool(text.strip()) and (not names or any(n.lower() in low for n in names))


def accepted(case: Case, detail: str) -> Outcome:
    """An input taken without refusal: documented if the case cites a sentence that exists, else silent."""
    if case.doc is not None and case.doc.holds():
        return Outcome(DOCUMENTED, f"{detail} (as {case.doc.path} says)")
    missing = f" (cited sentence missing from {case.doc.path})" if case.doc else ""
    return Outcome(SILENT, detail + missing)


def refused(case: Case, line: str) -> Outcome:
    """A refusal with ``line``: clear if it is one line naming the input, else unhelpful."""
    line = line.strip()
    if "\n" not in line and names_it(line, case.names):
        return Outcome(CLEAR, line[:300])
    return Outcome(UNHELPFUL, f"does not name {list(case.names)}: {line[:300]!r}")


# --- in process ---------------------------------------------------------------------------------------------
def non_finite_in(value: object, path: str = "result") -> str | None:
    """The path of the first non-finite number in ``value`` (arrays, numbers, sequences, dataclass-like
    objects with a ``__dict__`` or ``__slots__``), or None."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        return None
    if isinstance(value, (int, float, np.number, np.ndarray)):
        a = np.asarray(value)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            return path
        return None
    if isinstance(value, dict):
        items: Iterable[tuple[str, Any]] = ((f"{path}[{k!r}]", v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        fields = getattr(value, "__dict__", None) or {
            s: getattr(value, s, None) for s in getattr(type(value), "__slots__", ())
        }
        items = ((f"{path}.{k}", v) for k, v in fields.items() if not k.startswith("_"))
    for sub_path, sub in items:
        if (found := non_finite_in(sub, sub_path)) is not None:
            return found
    return None


def classify_exception(case: Case, exc: BaseException) -> Outcome:
    """kinodyn's own refusal (raised in a ``kinodyn*`` module, a ValueError/KeyError/TypeError/... with a
    message) or a crash (a bare type, raised in numpy/scipy/the standard library, or without a message)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "?") if tb is not None else "?"
    if module == "?" and tb is not None and "/kinodyn/" in tb.tb_frame.f_code.co_filename:
        module = "kinodyn (compiled kernel)"
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    where = f"{type(exc).__name__} in {module}:{tb.tb_lineno if tb is not None else '?'}"
    if isinstance(exc, BARE_TYPES) or not module.startswith("kinodyn") or not text.strip():
        return Outcome(CRASH, f"bare {where}: {text[:200]}")
    return refused(case, text)


class _TimeoutError(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _TimeoutError


def classify_call(case: Case, timeout: int = 60) -> Outcome:
    """Run ``case.payload()`` (a hang is a call still running after ``timeout`` s) and classify it: an
    exception (``classify_exception``), a non-finite result (silent unless documented), or an accepted
    finite result (documented if cited, else silent; with ``names``, only with exactly one kinodyn warning
    naming one of them)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
            warnings.simplefilter("always")
            value = case.payload()
    except _TimeoutError:
        return Outcome(CRASH, f"no return within {timeout} s")
    except Exception as exc:  # noqa: BLE001  (the point: every exception is classified, none escapes)
        return classify_exception(case, exc)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    own = [str(w.message) for w in caught if type(w.message).__module__.startswith("kinodyn")]
    said = f"; warned: {own[0][:200]}" if own else ""
    where = non_finite_in(value)
    if case.returns_finite is not None and (where is None) != case.returns_finite:
        got = "a finite result" if where is None else f"non-finite {where}"
        return Outcome(SILENT, f"returned {got}, not what {case.doc.path if case.doc else 'the case'} says")
    if where is not None:
        return accepted(case, f"returned non-finite {where}{said}")
    if case.names and not (len(own) == 1 and names_it(own[0], case.names)):
        return Outcome(SILENT, f"accepted without one warning naming {list(case.names)}; warned: {own}")
    return accepted(case, f"accepted, finite result{said}")


# --- nodes and processes ------------------------------------------------------------------------------------
LEVEL = re.compile(r"\[(WARN|ERROR|FATAL)\]|^\S+: error: ")  # a node's log level, or argparse's error


def problem_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if LEVEL.search(line)]


@dataclass
class NodeObservation:
    """What one topic or service case did to a running node."""

    alive: bool
    new_log: str
    non_finite: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    reply: Any = None  # (success, message, values) for a service; None for a topic (or no answer)
    answered: bool = True


def _node_crash(seen: NodeObservation) -> Outcome | None:
    """A crash: the node died, logged a traceback or never answered; None otherwise."""
    if not seen.alive:
        return Outcome(CRASH, "the node died: " + " | ".join(seen.new_log.splitlines()[-3:]))
    if "Traceback" in seen.new_log:
        return Outcome(CRASH, "traceback: " + " | ".join(seen.new_log.splitlines()[-2:]))
    if not seen.answered:
        return Outcome(CRASH, "the service never answered")
    return None


def classify_node(case: Case, seen: NodeObservation, causes_logged: set[str]) -> Outcome:
    """Crash (dead, traceback, no answer), unsafe (a non-finite or wrong output, or success with a non-finite
    value), then the refusal: the service's message, else the node's new warning/error line, else (the
    cause's line is throttled) an earlier case of the same cause that was logged."""
    crash = _node_crash(seen)
    if crash is not None:
        return crash
    if seen.non_finite or seen.wrong:
        return Outcome(UNSAFE, "; ".join(seen.non_finite + seen.wrong)[:300])
    if seen.reply is not None:
        success, message, values = seen.reply
        if success and (where := non_finite_in(values, "answer")) is not None:
            return Outcome(UNSAFE, f"success=true with non-finite {where}")
        return accepted(case, f"success=true: {message[:120]!r}") if success else refused(case, message)
    lines = problem_lines(seen.new_log)
    if lines:
        outcome = refused(case, lines[0].split("]: ", 1)[-1])
        if outcome.category == CLEAR and case.cause:
            causes_logged.add(case.cause)
        return outcome
    if case.cause and case.cause in causes_logged:
        return Outcome(CLEAR, f"dropped; its cause {case.cause!r} was logged by an earlier case (throttled)")
    return accepted(case, "no warning or error line")


def classify_exit(case: Case, code: int | None, output: str, waited: float) -> Outcome:
    """A process given a bad input: exit code non-zero with one error line naming the input is a clear
    error; a traceback is a crash; still running after ``waited`` s (``code`` None) means it was accepted
    (with ``names``: only with exactly one warning line naming one of them)."""
    if "Traceback" in output:
        return Outcome(CRASH, "traceback: " + " | ".join(output.strip().splitlines()[-2:])[:300])
    if code is None:
        lines = problem_lines(output)
        if case.names and not (len(lines) == 1 and names_it(lines[0], case.names)):
            return Outcome(
                SILENT,
                f"still running after {waited:.0f} s without one warning naming {list(case.names)}: {lines}",
            )
        return accepted(
            case, f"still running after {waited:.0f} s" + (f"; said: {lines[0][-200:]}" if lines else "")
        )
    if code == 0:
        return accepted(case, "exit code 0")
    if code < 0:
        return Outcome(CRASH, f"killed by signal {-code}: {output.strip()[-200:]}")
    lines = problem_lines(output) or [line for line in output.splitlines() if line.strip()]
    if len(problem_lines(output)) > 1:
        return Outcome(
            UNHELPFUL,
            f"exit {code} with {len(problem_lines(output))} error lines: "
            + " | ".join(problem_lines(output))[:300],
        )
    return refused(case, lines[0] if lines else "") if lines else Outcome(CRASH, f"exit {code}, no message")


# --- report -------------------------------------------------------------------------------------------------
def render(results: Sequence[Result]) -> str:
    """The matrix: counts per surface and category, totals, then every case not in its expected category."""
    counts = Counter((r.case.surface, r.outcome.category) for r in results)
    surfaces = [s for s in SURFACES if any(r.case.surface == s for r in results)]
    width = max(len(s) for s in [*surfaces, "total"])
    head = f"{'surface':<{width}} | " + " | ".join(CATEGORIES) + " | cases"
    rows = [head, "-" * len(head)]
    for surface in [*surfaces, "total"]:
        cells = [
            sum(n for (s, c), n in counts.items() if c == cat and surface in (s, "total"))
            for cat in CATEGORIES
        ]
        rows.append(
            f"{surface:<{width}} | "
            + " | ".join(f"{n:>{len(cat)}}" for n, cat in zip(cells, CATEGORIES, strict=True))
            + f" | {sum(cells):>5}"
        )
    off = [r for r in results if not r.ok]
    rows.append(
        f"\n{len(results)} cases, {len(results) - len(off)} in their expected category, {len(off)} not:"
    )
    rows += [
        f"  [{r.case.surface}] {r.case.name}: expected {r.case.expected}, got {r.outcome.category}: "
        f"{r.outcome.detail}"
        for r in off
    ]
    return "\n".join(rows)


def table_rows(results: Sequence[Result]) -> str:
    """One Markdown table row per case: surface, name, input, expected, outcome, what was seen."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")[:160]

    return "".join(
        f"| {r.case.surface} | {r.case.name} | {cell(r.case.given)} | {r.case.expected} | "
        f"{r.outcome.category}{'' if r.ok else ' (!)'} | {cell(r.outcome.detail)} |\n"
        for r in results
    )


def run_in_process(cases: Sequence[Case], runner: Callable[[Case], Outcome] = classify_call) -> list[Result]:
    return [Result(case, runner(case)) for case in cases]
