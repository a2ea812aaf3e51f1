#!/usr/bin/env bash
# README main command: set everything up (idempotent), then run the demo node graph until Ctrl-C.
# KINODYN_DEMO=<graph> picks another graph file in config/ (default: planar_demo);
# KINODYN_DEMO_SECONDS=<s> stops it after that many seconds.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
set +u
# shellcheck disable=SC1091
source "$ROOT/scripts/env.sh"
set -u
cd "$ROOT"
args=(up "config/${KINODYN_DEMO:-planar_demo}.yaml")
[ -n "${KINODYN_DEMO_SECONDS:-}" ] && args+=(--timeout "$KINODYN_DEMO_SECONDS")
exec kinodyn "${args[@]}"
