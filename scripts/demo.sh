#!/usr/bin/env bash
# README main command: set everything up (idempotent), then run the demo (docs/demo.md): `kinodyn demo`, the
# simulated quadruped in closed loop through a ~30 s scenario with the browser view, a bag and a report in
# runs/<timestamp>/, and a summary table at the end.
#   KINODYN_DEMO=<name>       quadruped (default), quadruped_rt (the same loop in one process, estimator and
#                             wbc as controllers in control_node), quadruped_mpc (the wbc driven by the
#                             centroidal MPC), or any graph of config/ (e.g. quadruped_mock, arm7_wbc,
#                             planar_demo), run as `kinodyn up` until Ctrl-C
#   KINODYN_DEMO_HEADLESS=1   no browser view (CI)
#   KINODYN_DEMO_SHORT=1      the short scenario (a few simulated seconds)
#   KINODYN_DEMO_SECONDS=<s>  a plain graph: stop it after that many seconds
#   KINODYN_DEMO_RUNS=<dir>   where the run directories go (default runs/ in the checkout)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$ROOT/scripts/setup.sh"
set +u
# shellcheck disable=SC1091
source "$ROOT/scripts/env.sh"
set -u
cd "$ROOT"
args=(demo "${KINODYN_DEMO:-quadruped}")
[ "${KINODYN_DEMO_HEADLESS:-0}" = 1 ] && args+=(--headless)
[ "${KINODYN_DEMO_SHORT:-0}" = 1 ] && args+=(--short)
[ -n "${KINODYN_DEMO_SECONDS:-}" ] && args+=(--seconds "$KINODYN_DEMO_SECONDS")
[ -n "${KINODYN_DEMO_RUNS:-}" ] && args+=(--runs-dir "$KINODYN_DEMO_RUNS")
exec kinodyn "${args[@]}"
