"""The wheel build puts the render-store host library inside the package.

``librender_store_capi.so`` (the C ABI of the Rust host, with the WebAssembly component
inside it) is never kept in the source tree: the build copies it into the wheel's
``render_store/`` folder from ``RENDER_STORE_LIBRARY`` when set (a library
``cargo build -p render-store-capi`` wrote), else builds it with
``cargo build --release -p render-store-capi`` from the checkout this folder belongs to,
or from the Rust sources an sdist carries under ``rust/`` (``python -m build --sdist``
puts the three crates of the library there, so the sdist builds wherever cargo does).
Debug information is stripped from the copy when ``strip`` is there.

The wheel is not pure: its tag says what the library needs. On Linux it is
``manylinux_2_N_<arch>``, N the newest glibc symbol version the library links (read
from the library itself), as the manylinux rule (PEP 600) asks; elsewhere the plain
platform tag. Everything else about the package is in pyproject.toml.
"""

from __future__ import annotations

import json
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
from setuptools.command.sdist import sdist

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools before 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
LIBRARY = "librender_store_capi.so"


#: What the sdist carries of the Rust workspace (under ``rust/``) to build the library:
#: the three crates the C library is made of, the WIT, and the files they embed.
RUST_SOURCES = ["Cargo.lock", "rust-toolchain.toml", "wit", "guest/Cargo.toml", "guest/src",
                "host/render-store", "host/capi/Cargo.toml", "host/capi/cbindgen.toml",
                "host/capi/include", "host/capi/src", "tests/conformance/bucket.json",
                "tests/vectors/messages.json"]
RUST_MEMBERS = ["guest", "host/render-store", "host/capi"]


def _rust_root() -> Path:
    """The Rust workspace: the checkout this folder is in, or ``rust/`` of an sdist."""
    packed = HERE / "rust"
    return packed if (packed / "Cargo.toml").is_file() else HERE.parents[1]


def _without_dev_dependencies(manifest: str) -> str:
    """A crate manifest without its ``[dev-dependencies]`` table: they name crates of
    the workspace the sdist does not carry (the CLI), and a build needs none of them."""
    out, skipping = [], False
    for line in manifest.splitlines(keepends=True):
        if line.startswith("["):
            skipping = line.strip() == "[dev-dependencies]"
        if not skipping:
            out.append(line)
    return "".join(out)


class SdistWithRust(sdist):
    """An sdist that builds anywhere cargo does: the Rust sources of the library under
    ``rust/``, in a workspace of the three crates it is made of."""

    def make_release_tree(self, base_dir: str, files: list) -> None:
        super().make_release_tree(base_dir, files)
        root, into = HERE.parents[1], Path(base_dir) / "rust"
        for name in RUST_SOURCES:
            source = root / name
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("target", "tests"))
            else:
                shutil.copyfile(source, target)
        workspace = (root / "Cargo.toml").read_text()
        workspace = re.sub(r"members = \[[^\]]*\]", "members = " + repr(RUST_MEMBERS).replace("'", '"'),
                           workspace, count=1)
        (into / "Cargo.toml").write_text(workspace)
        for crate in ("host/render-store", "host/capi"):
            manifest = into / crate / "Cargo.toml"
            manifest.write_text(_without_dev_dependencies(manifest.read_text()))


def _library() -> Path:
    given = os.environ.get("RENDER_STORE_LIBRARY")
    if given:
        return Path(given)
    root = _rust_root()
    if not (root / "Cargo.toml").is_file() or not (root / "host" / "capi").is_dir():
        raise SystemExit(
            "convoy-render-store: no library to package: build from the render-store checkout "
            "(host/python/) or set RENDER_STORE_LIBRARY to the library "
            "`cargo build -p render-store-capi` writes")
    cargo = os.environ.get("CARGO", "cargo")
    # RENDER_STORE_CARGO_PROFILE=dev builds the debug library (quicker to build).
    profile = os.environ.get("RENDER_STORE_CARGO_PROFILE", "release")
    subprocess.run([cargo, "build", "--quiet", "--profile", profile, "--manifest-path",
                    str(root / "Cargo.toml"), "--package", "render-store-capi"], check=True)
    target = subprocess.run([cargo, "metadata", "--format-version", "1", "--no-deps", "--manifest-path",
                             str(root / "Cargo.toml")], check=True, capture_output=True, text=True).stdout
    folder = "debug" if profile == "dev" else profile
    return Path(json.loads(target)["target_directory"]) / folder / LIBRARY


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


setup(distclass=BinaryDistribution,
      cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel, "sdist": SdistWithRust})
