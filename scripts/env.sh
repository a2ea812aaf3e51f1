# Source this file (`source scripts/env.sh`) to use the built workspace in the current shell:
# the virtual environment, the ROS 2 environment (wheels or native) and the colcon install space.
_kd_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
source "$_kd_root/.venv/bin/activate"
if [ -z "${ROS_DISTRO:-}" ]; then
  export AMENT_PREFIX_PATH="$_kd_root/.venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
fi
# shellcheck disable=SC1091
source "$_kd_root/install/setup.bash"
export PATH="$_kd_root/install/kinodyn_tools/lib/kinodyn_tools:$PATH"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$_kd_root/.venv/numba-cache}"
unset _kd_root
