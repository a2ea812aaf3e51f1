"""Shared fixtures for the system tests: an isolated DDS domain per test run and process cleanup.

Every test run gets its own ROS_DOMAIN_ID (one that no other test run on the machine holds) and discovery
restricted to localhost, set in os.environ before any node starts, so child processes inherit it. `spawn`
starts a process in its own session and stops it (SIGINT, then SIGTERM, then SIGKILL) at teardown, pass or
fail.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

REPO = Path(__file__).resolve().parents[1]


_DOMAIN_LOCKS: list = []  # the open lock file of this run's domain (the lock lasts as long as this process)


def _claim_domain_id() -> int:
    """A domain in 1..100 (Fast DDS ports stay below 65535 up to 232) that no other test run on this machine
    holds, from the process id on: each run holds an exclusive lock on one file per domain in the temporary
    directory, released by the OS when the run ends. Two runs that shared a domain saw each other's nodes (a
    wall-clock joint state in the middle of a lockstep run)."""
    start = os.getpid() % 100
    for k in range(100):
        domain = 1 + (start + k) % 100
        lock = (Path(tempfile.gettempdir()) / f"kinodyn-test-ros-domain-{domain}.lock").open("w")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        _DOMAIN_LOCKS.append(lock)
        return domain
    raise RuntimeError("every ROS domain 1..100 is held by another test run on this machine; wait for them "
                       "to end or set ROS_DOMAIN_ID")


# A claimed domain is marked with the claiming process: a pytest-xdist worker inherits its controller's
# environment and claims its own, so parallel workers never share a domain. A user's ROS_DOMAIN_ID is kept.
_inherited_claim = os.environ.get("KINODYN_TEST_DOMAIN_OWNER", str(os.getpid())) != str(os.getpid())
if "ROS_DOMAIN_ID" not in os.environ or _inherited_claim:
    os.environ["ROS_DOMAIN_ID"] = str(_claim_domain_id())
    os.environ["KINODYN_TEST_DOMAIN_OWNER"] = str(os.getpid())
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
os.environ.setdefault("PYTHONUNBUFFERED", "1")


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """Stop a process group gently (SIGINT), then firmly (SIGTERM, SIGKILL)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            continue


class ProcessSpawner:
    """Starts processes for one test and guarantees they are stopped afterwards."""

    def __init__(self, log_dir: Path) -> None:
        self._log_dir = log_dir
        self.processes: list[subprocess.Popen[bytes]] = []

    def __call__(self, args: list[str], name: str, **kwargs: Any) -> subprocess.Popen[bytes]:  # noqa: ANN401  (Popen's keyword arguments)
        log_path = self._log_dir / f"{name}.log"
        log = log_path.open("w")
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=REPO, **kwargs
        )
        proc.log_path = log_path  # type: ignore[attr-defined]
        self.processes.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in reversed(self.processes):
            stop_process(proc)


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[ProcessSpawner]:
    spawner = ProcessSpawner(tmp_path)
    try:
        yield spawner
    finally:
        spawner.stop_all()


def wait_for(predicate: Callable[[], object], timeout: float, interval: float = 0.05) -> bool:
    """Poll `predicate` until it returns true or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


PYTHON = sys.executable


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The system tests live under test/: scripts/test.sh runs them from there alone (collecting the unit
    tests too would only import them). A test marked ``system`` elsewhere is refused rather than left out."""
    here = Path(__file__).resolve().parent
    outside = [item.nodeid for item in items
               if item.get_closest_marker("system") and not Path(item.path).resolve().is_relative_to(here)]
    if outside:
        raise pytest.UsageError(f"tests marked system belong under {here}: {outside}")
