#!/usr/bin/env bash
# README test command: set everything up (idempotent), then lint, type-check and run every test.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k rnea` or `bash scripts/test.sh -m "not system"`.
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
exec python -m pytest "$@"
