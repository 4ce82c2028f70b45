"""The wheel build puts the render-store component inside the package.

`render_store.wasm` is never kept in the source tree: the build writes it into the
wheel's `render_store/` folder, from `RENDER_STORE_WASM` when set (a component written by
`render-store component --out FILE.wasm`), else by running that command through cargo
from the checkout this folder belongs to (which builds the CLI when needed). Everything
else about the package is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# The first bytes of a WebAssembly component (magic, then version 0x0d and layer 1), as
# opposed to a core module (version 1, layer 0).
COMPONENT_HEADER = b"\x00asm\x0d\x00\x01\x00"


class BuildWithComponent(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "render_store" / "render_store.wasm"
        target.parent.mkdir(parents=True, exist_ok=True)
        given = os.environ.get("RENDER_STORE_WASM")
        if given:
            shutil.copyfile(given, target)
        else:
            root = HERE.parents[1]
            if not (root / "Cargo.toml").is_file() or not (root / "guest").is_dir():
                raise SystemExit(
                    "convoy-render-store: no component to package: build from the render-store "
                    "checkout (host/python/) or set RENDER_STORE_WASM to a component written by "
                    "`render-store component --out FILE.wasm`")
            cargo = os.environ.get("CARGO", "cargo")
            subprocess.run(
                [cargo, "run", "--quiet", "--manifest-path", str(root / "Cargo.toml"),
                 "--package", "render-store-cli", "--bin", "render-store", "--",
                 "component", "--out", str(target)],
                check=True, stdout=subprocess.DEVNULL)
        with open(target, "rb") as f:
            if f.read(len(COMPONENT_HEADER)) != COMPONENT_HEADER:
                raise SystemExit(f"convoy-render-store: {target} is not a WebAssembly component")


setup(cmdclass={"build_py": BuildWithComponent})
