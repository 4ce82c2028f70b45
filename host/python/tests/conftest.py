"""Fixtures of the Python package's tests: the Rust CLI (RENDER_STORE_BIN) and the
runtime of the installed package's own component."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List, Optional, Sequence

import pytest

import render_store as rs

HERE = Path(__file__).resolve().parent
DEFAULT_BIN = HERE / ".." / ".." / ".." / "target" / "debug" / "render-store"


def cli_path() -> Path:
    path = Path(os.environ.get("RENDER_STORE_BIN") or DEFAULT_BIN).resolve()
    if not path.is_file():
        pytest.exit(f"no render-store CLI at {path}: build it or set RENDER_STORE_BIN", returncode=2)
    return path


class Cli:
    """The Rust CLI on a file:// store."""

    def __init__(self, path: Path):
        self.path = path

    def run(self, *args: str, store: Optional[Path] = None, check: bool = True,
            env: Optional[dict] = None) -> subprocess.CompletedProcess:
        cmd: List[str] = [str(self.path)]
        if store is not None:
            cmd += ["--render-store-url", f"file://{store}?create_dir=true"]
        cmd += list(args)
        full_env = {k: v for k, v in os.environ.items() if k != "RENDER_STORE_URL"}
        full_env.update(env or {})
        # Standard input is empty: with no FILE, `ref`, `canonical` and `put` read it.
        out = subprocess.run(cmd, capture_output=True, env=full_env, timeout=120, stdin=subprocess.DEVNULL)
        if check and out.returncode != 0:
            raise AssertionError(f"{cmd} failed ({out.returncode}): {out.stderr.decode(errors='replace')}")
        return out

    def json(self, *args: str, store: Optional[Path] = None) -> object:
        return json.loads(self.run("--json", *args, store=store).stdout)

    def text(self, *args: str, store: Optional[Path] = None) -> str:
        return self.run(*args, store=store).stdout.decode()


@pytest.fixture(scope="session")
def cli() -> Cli:
    return Cli(cli_path())


@pytest.fixture(scope="session")
def runtime() -> rs.Runtime:
    """The component inside the installed package (no RENDER_STORE_WASM: run.sh unsets it)."""
    assert not os.environ.get("RENDER_STORE_WASM"), "the tests run the packaged component"
    runtime = rs.Runtime()
    rs.set_default_runtime(runtime)
    return runtime


def write_objects(folder: Path, objects: Sequence[bytes], stem: str = "obj") -> List[str]:
    """Each object in its own file, for the CLI; the paths in render order."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, o in enumerate(objects):
        p = folder / f"{stem}-{i}.json"
        p.write_bytes(o)
        paths.append(str(p))
    return paths


def files_under(root: Path) -> dict:
    """Every regular file under root: its key (relative path) and bytes."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def configmap(name: str, data: Optional[dict] = None, namespace: str = "") -> bytes:
    """A ConfigMap's JSON, keys unsorted so canonicalization has work to do."""
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    obj = {"metadata": meta, "kind": "ConfigMap", "data": data or {"n": name}, "apiVersion": "v1"}
    return json.dumps(obj, indent=1).encode()
