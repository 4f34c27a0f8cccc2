"""The installed package's native libraries hold the platform floor (scripts/native-floor.sh):
glibc 2.34 and the old libgcc_s versions, libstdc++ linked in, nothing exported but PyInit_ or
the C API. `make dist` checks the wheel the same way; this catches a rise at `make test`."""
from __future__ import annotations

import pathlib
import subprocess

import weighted

REPO = pathlib.Path(__file__).resolve().parents[2]
CHECK = REPO / "scripts" / "check-native-libs.sh"
PACKAGE = pathlib.Path(weighted.__file__).parent


def check(*args: str) -> str:
    r = subprocess.run(["bash", str(CHECK), *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_modules_need_no_newer_glibc_than_the_floor():
    modules = sorted(str(p) for p in PACKAGE.glob("_*.so"))
    assert any("_weighted" in m for m in modules), modules
    out = check("--allow", "libweighted.so.2", "--exports", "^PyInit_", *modules)
    for m in modules:  # each one was read, not skipped
        assert pathlib.Path(m).name in out


def test_the_library_beside_them_needs_no_newer_glibc_than_the_floor():
    out = check("--exports", "^wt_", str(PACKAGE / "libweighted.so.2"))
    assert "libweighted.so.2" in out
