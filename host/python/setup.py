"""The wheel build puts the render-store host library inside the package.

``librender_store_capi.so`` (the C ABI of the Rust host, with the WebAssembly component
inside it) is never kept in the source tree: the build copies it into the wheel's
``render_store/`` folder from ``RENDER_STORE_LIBRARY`` when set (a library
``cargo build -p render-store-capi`` wrote), else builds it with
``cargo build --release -p render-store-capi`` from the checkout this folder belongs to.
Debug information is stripped from the copy when ``strip`` is there.

The wheel is not pure: its tag says what the library needs. On Linux it is
``manylinux_2_N_<arch>``, N the newest glibc symbol version the library links (read
from the library itself), as the manylinux rule (PEP 600) asks; elsewhere the plain
platform tag. Everything else about the package is in pyproject.toml.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
LIBRARY = "librender_store_capi.so"


def _library() -> Path:
    given = os.environ.get("RENDER_STORE_LIBRARY")
    if given:
        return Path(given)
    root = HERE.parents[1]
    if not (root / "Cargo.toml").is_file() or not (root / "host" / "capi").is_dir():
        raise SystemExit(
            "convoy-render-store: no library to package: build from the render-store checkout "
            "(host/python/) or set RENDER_STORE_LIBRARY to the library "
            "`cargo build -p render-store-capi` writes")
    cargo = os.environ.get("CARGO", "cargo")
    subprocess.run([cargo, "build", "--quiet", "--release", "--manifest-path", str(root / "Cargo.toml"),
                    "--package", "render-store-capi"], check=True)
    target = subprocess.run([cargo, "metadata", "--format-version", "1", "--no-deps", "--manifest-path",
                             str(root / "Cargo.toml")], check=True, capture_output=True, text=True).stdout
    import json
    return Path(json.loads(target)["target_directory"]) / "release" / LIBRARY


def _glibc_minor(binary: bytes) -> int:
    """The newest ``GLIBC_2.N`` version the library's symbols need."""
    found = [int(m) for m in re.findall(rb"GLIBC_2\.(\d+)(?:\.\d+)?\x00", binary)]
    return max(found, default=17)


class BuildWithLibrary(build_py):
    def run(self) -> None:
        # A build folder left by an earlier build may hold files this one no longer has.
        shutil.rmtree(Path(self.build_lib) / "render_store", ignore_errors=True)
        super().run()
        source = _library()
        if not source.is_file():
            raise SystemExit(f"convoy-render-store: {source} is not a file")
        target = Path(self.build_lib) / "render_store" / LIBRARY
        target.parent.mkdir(parents=True, exist_ok=True)
        if shutil.which("strip"):
            subprocess.run(["strip", "--strip-debug", "-o", str(target), str(source)], check=True)
        else:
            shutil.copyfile(source, target)
        with open(target, "rb") as f:
            if f.read(4) != b"\x7fELF":
                raise SystemExit(f"convoy-render-store: {source} is not a shared library")


class BinaryDistribution(Distribution):
    """A distribution with a platform's binary inside (the library), so the wheel is
    not pure."""

    def has_ext_modules(self) -> bool:
        return True


class PlatformWheel(bdist_wheel):
    def get_tag(self) -> tuple:
        machine = platform.machine().lower()
        if sys.platform.startswith("linux"):
            library = Path(self.bdist_dir or "", "render_store", LIBRARY)
            found = list(Path(self.bdist_dir or ".").rglob(LIBRARY)) if not library.is_file() else [library]
            minor = _glibc_minor(found[0].read_bytes()) if found else 17
            plat = f"manylinux_2_{minor}_{machine}"
        else:
            plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        # One library for every Python 3: ctypes, no extension module.
        return ("py3", "none", plat)


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel})
