"""Install TSID, the test-only anchor of the whole-body controller cross-check, in its own environment.

Why a script: `tsid` 1.10.0 (Python bindings, wheels per CPython version) requires `libtsid==1.10.0`, the C++
library alone (cmeel prefix, no Python module, so independent of the Python version), whose PyPI wheels are
nevertheless tagged `cp314-cp314-manylinux_2_28_<arch>` only, and whose sdist does not build: pip finds no
installable libtsid for CPython 3.10-3.13. This script downloads the pinned libtsid wheel, checks its sha256
against the hash pinned below, rewrites its tag to `py3-none-manylinux_2_28_<arch>` (the `Tag:` line of
`*.dist-info/WHEEL`, that file's RECORD entry and the file name; nothing else changes) and installs it with
`eiquadprog` and `tsid` at the versions pinned below.

Why its own environment (`.venv/tsid`, used through bench/tsid_quadruped.py's worker process): the tsid 1.10.0
wheels are compiled against Pinocchio 4.0.0 and Pinocchio's `Model` changed layout in 4.1.0, so with the
project's pin 4.1.0 (requirements/constraints.txt) TSID's RobotWrapper raises MemoryError or aborts in
`~ModelTpl` (free(): invalid pointer). The anchor environment holds pin/libpinocchio 4.0.0, tsid and numpy;
everything else at the project's pins.

    python scripts/install_tsid.py [--venv .venv/tsid] [--constraints requirements/constraints.txt]

Called by scripts/setup.sh. Does nothing when the environment already builds a floating-base RobotWrapper.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import platform
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

TSID_VERSION = "1.10.0"
EIQUADPROG_VERSION = "1.3.2"
PINOCCHIO_VERSION = "4.0.0"  # the tsid 1.10.0 wheels' build-time Pinocchio (ABI: Model's layout)
# sha256 of the libtsid 1.10.0 wheels on PyPI, by machine (checked on download).
LIBTSID_WHEELS = {
    "x86_64": ("libtsid-1.10.0-0-cp314-cp314-manylinux_2_28_x86_64.whl",
               "4ca43338d79c120feba69ed168511ddeff08a1e9ea623fd18eadc6ca76df4ff8"),
    "aarch64": ("libtsid-1.10.0-0-cp314-cp314-manylinux_2_28_aarch64.whl",
                "0cbe7c86320845b7fe0cfc2470bccd897af1c080f95386880ddfbbb3920110ef"),
}
ROOT = Path(__file__).resolve().parents[1]


def log(message: str) -> None:
    print(f"[install_tsid] {message}", flush=True)


# A floating-base RobotWrapper copies a pinocchio Model: the check that fails on an ABI mismatch.
CHECK = f"""
import importlib.metadata as md, pinocchio as pin, tsid
assert md.version("tsid") == md.version("libtsid") == "{TSID_VERSION}", "tsid/libtsid version"
model = pin.buildSampleModelHumanoid()
assert tsid.RobotWrapper(model, tsid.FLOATING_BASE_SYSTEM, False).na == model.nv - 6
"""


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def works(python: Path) -> bool:
    """``python`` has tsid and libtsid at the pinned version and builds a floating-base RobotWrapper."""
    if not python.exists():
        return False
    return subprocess.run([str(python), "-c", CHECK], capture_output=True, check=False).returncode == 0


def pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *args], check=True)


def anchor_constraints(constraints: Path, dest: Path) -> Path:
    """The project's constraints with pin and libpinocchio at PINOCCHIO_VERSION."""
    lines = [line for line in constraints.read_text().splitlines()
             if not line.startswith(("pin==", "libpinocchio=="))]
    out = dest / "constraints-tsid.txt"
    pins = [f"pin=={PINOCCHIO_VERSION}", f"libpinocchio=={PINOCCHIO_VERSION}"]
    out.write_text("\n".join([*lines, *pins]) + "\n")
    return out


def record_hash(data: bytes) -> str:
    """A RECORD entry's hash (PEP 376 / the wheel spec): urlsafe base64 of the sha256, no padding."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def retag(wheel: Path, tag: str, dest: Path) -> Path:
    """A copy of ``wheel`` tagged ``tag``: new Tag line in WHEEL, WHEEL's RECORD entry and file name."""
    name, version, build = wheel.name.split("-")[:3]
    out = dest / f"{name}-{version}-{build}-{tag}.whl"
    dist_info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(wheel) as src:
        entries = {info.filename: src.read(info) for info in src.infolist()}
    wheel_lines = entries[f"{dist_info}/WHEEL"].decode().splitlines()
    tags = [line for line in wheel_lines if line.startswith("Tag:")]
    if not tags:
        raise SystemExit(f"{wheel.name}: no Tag line in {dist_info}/WHEEL; the pinned wheel has changed?")
    body = [line for line in wheel_lines if not line.startswith("Tag:")]
    body.insert(wheel_lines.index(tags[0]), f"Tag: {tag}")
    new_wheel = ("\n".join(body) + "\n").encode()
    entries[f"{dist_info}/WHEEL"] = new_wheel
    record = entries[f"{dist_info}/RECORD"].decode().splitlines()
    entry = f"{dist_info}/WHEEL,"
    record = [f"{entry}{record_hash(new_wheel)},{len(new_wheel)}" if line.startswith(entry) else line
              for line in record]
    entries[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for filename, data in entries.items():
            dst.writestr(filename, data)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=ROOT / ".venv" / "tsid")
    parser.add_argument("--constraints", type=Path, default=ROOT / "requirements" / "constraints.txt")
    args = parser.parse_args()
    python = venv_python(args.venv)
    if works(python):
        log(f"tsid {TSID_VERSION} (Pinocchio {PINOCCHIO_VERSION}) ready in {args.venv}")
        return 0
    machine = platform.machine()
    if sys.platform != "linux" or machine not in LIBTSID_WHEELS:
        log(f"no pinned libtsid wheel for {sys.platform}/{machine} (pinned: linux {sorted(LIBTSID_WHEELS)}); "
            "the TSID cross-check and bench need tsid 1.10.0 with Pinocchio 4.0.0 in that environment")
        return 1
    if not python.exists():
        log(f"creating the anchor environment {args.venv}")
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(args.venv)], check=True)
    filename, sha256 = LIBTSID_WHEELS[machine]
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        log(f"downloading {filename}")
        pip(python, "download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", "3.14",
            "--platform", f"manylinux_2_28_{machine}", "--dest", str(tmpdir), f"libtsid=={TSID_VERSION}")
        wheel = tmpdir / filename
        if not wheel.exists():
            log(f"pip downloaded {[p.name for p in tmpdir.iterdir()]}, not {filename}")
            return 1
        actual = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if actual != sha256:
            log(f"{filename}: sha256 {actual} differs from the pinned {sha256}; refusing to install it")
            return 1
        retagged = retag(wheel, f"py3-none-manylinux_2_28_{machine}", tmpdir)
        log(f"installing {retagged.name}, eiquadprog {EIQUADPROG_VERSION}, tsid {TSID_VERSION}, "
            f"pin {PINOCCHIO_VERSION}, numpy into {args.venv}")
        pip(python, "install", "--quiet", "--only-binary=:all:",
            "-c", str(anchor_constraints(args.constraints, tmpdir)), str(retagged), "numpy",
            f"pin=={PINOCCHIO_VERSION}", f"eiquadprog=={EIQUADPROG_VERSION}", f"tsid=={TSID_VERSION}")
    if not works(python):
        subprocess.run([str(python), "-c", CHECK], check=False)  # shows the traceback
        log(f"{args.venv}: tsid is installed but does not build a RobotWrapper (traceback above)")
        return 1
    log(f"tsid {TSID_VERSION} (Pinocchio {PINOCCHIO_VERSION}) installed in {args.venv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
