#!/usr/bin/env bash
# README test command: set everything up (idempotent), then lint, type-check and run every test.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k rnea` or `bash scripts/test.sh -m "not system"`.
# Test files run in KINODYN_TEST_JOBS parallel pytest-xdist workers (default: the number of cores, at most 2;
# each worker has its own ROS domain, test/conftest.py); KINODYN_TEST_JOBS=0 runs them in this process.
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
echo "[test] mypy (mypy.ini: src/kinodyn, src/kinodyn_control)"
mypy
echo "[test] pytest"
jobs=${KINODYN_TEST_JOBS:-$(( $(nproc) < 2 ? $(nproc) : 2 ))}
exec python -m pytest -n "$jobs" --dist loadfile "$@"
