#!/usr/bin/env bash
# README test command: set everything up (idempotent), then lint, type-check and run every test.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k rnea` or `bash scripts/test.sh -m "not system"`.
# Without arguments: the tests that start no process run in KINODYN_TEST_JOBS pytest-xdist workers (default: the
# number of cores, at most 2), then the system tests (ROS nodes over DDS) one at a time: they judge simulated
# time, but two of them side by side on two cores starve each other's nodes of CPU. With arguments: one pytest run in this process.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
set +u
# shellcheck disable=SC1091
source "$ROOT/scripts/env.sh"
set -u
cd "$ROOT"
echo "[test] ruff check"
ruff check .
echo "[test] mypy --strict (mypy.ini: every package)"
mypy
if [ "$#" -gt 0 ]; then
  echo "[test] pytest $*"
  exec python -m pytest "$@"
fi
jobs=${KINODYN_TEST_JOBS:-$(( $(nproc) < 2 ? $(nproc) : 2 ))}
echo "[test] pytest -m 'not system' in $jobs worker(s)"
unit=0
python -m pytest -n "$jobs" --dist loadfile -m "not system" --durations=15 || unit=$?
echo "[test] pytest -m system (one at a time)"
python -m pytest -m system --durations=15 test || exit $?  # every system test is under test/ (test/conftest.py)
exit "$unit"
