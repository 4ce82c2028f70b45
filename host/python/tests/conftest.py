"""Fixtures of the Python package's tests: the Rust CLI (RENDER_STORE_BIN) and a runtime
of the Rust host library the package calls (the one the installed wheel carries, or the
one RENDER_STORE_LIBRARY names), with the component inside it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import pytest

import render_store as rs

HERE = Path(__file__).resolve().parent
DEFAULT_BIN = HERE / ".." / ".." / ".." / "target" / "debug" / "render-store"


def cli_path() -> Path:
    path = Path(os.environ.get("RENDER_STORE_BIN") or DEFAULT_BIN).resolve()
    if not path.is_file():
        pytest.exit(f"no render-store CLI at {path}: build it or set RENDER_STORE_BIN", returncode=2)
    return path


#: What the CLI's environment goes without: variables that would stand in for a test's
#: own flags (a store URL, or RENDER_STORE_SHOW_SECRETS unmasking every diff).
FLAG_VARIABLES = ("RENDER_STORE_URL", "RENDER_STORE_SHOW_SECRETS")


class Cli:
    """The Rust CLI on a file:// store: the same folder bucket as ``rs.open("file://...")``."""

    def __init__(self, path: Path):
        self.path = path

    def run(self, *args: str, store: Optional[Path] = None, check: bool = True,
            env: Optional[dict] = None) -> subprocess.CompletedProcess:
        cmd: List[str] = [str(self.path)]
        if store is not None:
            cmd += ["--render-store-url", f"file://{store}?create_dir=true"]
        cmd += list(args)
        full_env = {k: v for k, v in os.environ.items() if k not in FLAG_VARIABLES}
        # The hosts' test objects are not all named as Kubernetes objects; the CLI's
        # input rule is the Rust suite's (tests/e2e/operator.rs).
        full_env["RENDER_STORE_VALIDATE"] = "false"
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


def s3_store() -> rs.RenderStore:
    """The store on the S3 emulator (``RENDER_STORE_TEST_S3_URL``, which run.sh sets):
    a failure when CI asked for the emulators, a skip otherwise."""
    url = os.environ.get("RENDER_STORE_TEST_S3_URL")
    if not url:
        if os.environ.get("CI") or os.environ.get("RENDER_STORE_REQUIRE_EMULATORS"):
            pytest.fail("RENDER_STORE_TEST_S3_URL is not set: host/python/run.sh starts the emulator")
        pytest.skip("no S3 emulator (host/python/run.sh starts one)")
    store = rs.open(url)
    assert store is not None
    return store


@pytest.fixture(scope="session")
def cli() -> Cli:
    return Cli(cli_path())


@pytest.fixture(scope="session")
def runtime() -> rs.Runtime:
    """The library's default limits, made the default runtime of the module-level
    functions. The component is the one built into the library: no other can be given."""
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


#: Every Secret value in :func:`secret_renders`, by what it is.
SECRET_VALUES = {
    "password_before": "aHVudGVyMg==",
    "password_after": "czNjcjN0IQ==",
    "user": "YWRtaW4=",
    "token_before": "old-token",
    "token_after": "s3cr3t!",
    "applied_before": "b2xkLXRva2Vu",
    "applied_after": "bmV3LXRva2Vu",
    "applied_data": "c2FtZQ==",
    "tls": "dW50b3VjaGVk",
}


def secret_renders() -> Tuple[List[bytes], List[bytes]]:
    """Two renders of release prod/db with Secrets in them (old, new): ``db`` changes a
    ``data`` value (password), keeps one (user) and changes a ``stringData`` one
    (token); ``applied`` changes only inside its last-applied-configuration annotation;
    ``tls`` is the same in both; the ConfigMap ``settings`` changes too, and is never
    masked."""
    v = SECRET_VALUES

    def meta(name: str) -> dict:
        return {"name": name, "namespace": "prod"}

    def db(password: str, token: str) -> dict:
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta("db"),
                "data": {"password": password, "user": v["user"]}, "stringData": {"token": token}}

    def applied(password: str) -> dict:
        # kubectl's annotation holds the whole Secret as applied, as compact JSON text.
        last = json.dumps({"apiVersion": "v1", "data": {"password": password}, "kind": "Secret",
                           "metadata": meta("applied")}, separators=(",", ":"))
        return {"apiVersion": "v1", "kind": "Secret",
                "metadata": {**meta("applied"),
                             "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last}},
                "data": {"password": v["applied_data"]}}

    tls = {"apiVersion": "v1", "kind": "Secret", "metadata": meta("tls"), "data": {"tls.key": v["tls"]}}

    def settings(mode: str) -> dict:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("settings"), "data": {"mode": mode}}

    def render(objects: List[dict]) -> List[bytes]:
        return [json.dumps(o).encode() for o in objects]

    return (render([db(v["password_before"], v["token_before"]), applied(v["applied_before"]), tls,
                    settings("blue")]),
            render([db(v["password_after"], v["token_after"]), applied(v["applied_after"]), tls,
                    settings("green")]))


def diff_as_cli_prints(diff: rs.RenderDiff) -> dict:
    """A diff as ``render-store --json diff`` prints it (render_store::json_view)."""
    def object_id(i: rs.ObjectId) -> dict:
        return {"apiVersion": i.api_version, "kind": i.kind, "namespace": i.namespace, "name": i.name}

    return {
        "added": [{**object_id(o.id), "text": o.text} for o in diff.added],
        "removed": [{**object_id(o.id), "text": o.text} for o in diff.removed],
        "changed": [{**object_id(c.id), "diff": c.lines} for c in diff.changed],
        "unchanged": diff.unchanged,
    }
