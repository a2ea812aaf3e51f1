"""The numba cache serves a kernel compiled through one import path to the other (kinodyn/_numba_cache.py):
``scripts/setup.sh`` warms up through ``src/kinodyn``, the nodes import colcon's ``build/kinodyn``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SETUP_PATH = ROOT / "src" / "kinodyn"  # PYTHONPATH of setup.sh's warm-up
NODES_PATH = ROOT / "build" / "kinodyn"  # what colcon's symlink install puts on the nodes' sys.path

PROBE = """
import json, numpy as np
import kinodyn
from kinodyn.kinematics import forward
from kinodyn.warmup import WARMUP_URDF
model = kinodyn.Model.from_urdf(WARMUP_URDF)
model.frame_placement(model.neutral(), "tip")
stats = forward.frame_placement_kernel.stats
print(json.dumps({"file": kinodyn.__file__, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


def _probe(import_root: Path, cache_dir: Path) -> dict:
    """Import kinodyn from ``import_root`` in a fresh interpreter, place a frame; which file, cache stats."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(import_root))
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd="/", capture_output=True, text=True,
                         check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kernel_compiled_through_setup_path_loads_through_nodes_path(tmp_path: Path) -> None:
    assert (NODES_PATH / "kinodyn").resolve() == (SETUP_PATH / "kinodyn").resolve(), "run scripts/setup.sh"
    warm = _probe(SETUP_PATH, tmp_path)
    assert warm["file"].startswith(str(SETUP_PATH))
    assert warm["misses"] >= 1
    assert warm["hits"] == 0
    node = _probe(NODES_PATH, tmp_path)
    assert node["file"].startswith(str(NODES_PATH))  # really the other path
    assert node["misses"] == 0
    assert node["hits"] >= 1
