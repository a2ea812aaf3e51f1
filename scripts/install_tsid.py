"""Install TSID, the test-only anchor of the whole-body controller cross-check, into the running Python.

Why this script: `tsid` 1.10.0 (Python bindings, wheels per CPython version) requires `libtsid==1.10.0`,
the C++ library alone (cmeel prefix, no Python module, so independent of the Python version), whose PyPI
wheels are nevertheless tagged `cp314-cp314-manylinux_2_28_<arch>` only, and whose sdist does not build.
pip therefore finds no installable libtsid for CPython 3.10-3.13. This script downloads the pinned libtsid
wheel, checks its sha256 against the hash pinned below, rewrites its tag to `py3-none-manylinux_2_28_<arch>`
(the `Tag:` line of `*.dist-info/WHEEL`, that file's RECORD entry and the file name; nothing else changes),
and installs it with `eiquadprog` and `tsid` at the versions pinned in requirements/constraints.txt.

    python scripts/install_tsid.py [--constraints requirements/constraints.txt]

Called by scripts/setup.sh after the test requirements. Does nothing when tsid and libtsid 1.10.0 are
already installed and `import tsid` works.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.metadata
import platform
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

TSID_VERSION = "1.10.0"
EIQUADPROG_VERSION = "1.3.2"
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


def installed() -> bool:
    """tsid and libtsid at the pinned version, and the bindings import."""
    try:
        versions = {importlib.metadata.version(name) for name in ("tsid", "libtsid")}
    except importlib.metadata.PackageNotFoundError:
        return False
    if versions != {TSID_VERSION}:
        return False
    return subprocess.run([sys.executable, "-c", "import tsid; tsid.SolverHQuadProgFast"],
                          capture_output=True).returncode == 0


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], check=True)


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
    parser.add_argument("--constraints", type=Path, default=ROOT / "requirements" / "constraints.txt")
    args = parser.parse_args()
    if installed():
        log(f"tsid {TSID_VERSION} already installed")
        return 0
    machine = platform.machine()
    if sys.platform != "linux" or machine not in LIBTSID_WHEELS:
        log(f"no pinned libtsid wheel for {sys.platform}/{machine} (pinned: linux {sorted(LIBTSID_WHEELS)}); "
            "install tsid by hand (conda-forge or robotpkg) to run the TSID cross-check")
        return 1
    filename, sha256 = LIBTSID_WHEELS[machine]
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        log(f"downloading {filename}")
        pip("download", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", "3.14",
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
        log(f"installing {retagged.name}, eiquadprog {EIQUADPROG_VERSION}, tsid {TSID_VERSION}")
        pip("install", "--quiet", "--only-binary=:all:", "-c", str(args.constraints), str(retagged),
            f"eiquadprog=={EIQUADPROG_VERSION}", f"tsid=={TSID_VERSION}")
    if not installed():
        log("tsid was installed but `import tsid` fails; see the error above")
        return 1
    log(f"tsid {TSID_VERSION} installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
