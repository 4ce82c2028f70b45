"""Every golden vector (tests/vectors/render-ref.json) through the Python host, read as
tests/e2e/vectors.rs reads it, and against the Rust CLI's `ref` and `canonical`; and every
GC decision of tests/vectors/gc-plan.json through ``plan_gc``."""

from __future__ import annotations

import base64
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import render_store as rs
from conftest import HERE, write_objects

VECTORS = HERE / ".." / ".." / ".." / "tests" / "vectors" / "render-ref.json"


def load_cases():
    cases = []
    for c in json.loads(VECTORS.read_text(encoding="utf-8")):
        if "objects" in c:
            objects = [t.encode("utf-8") for t in c["objects"]]
        else:
            objects = [base64.b64decode(t) for t in c["objects_b64"]]
        if "error" in c:
            expected = ("error", c["error_object_index"])
        else:
            expected = ("ok", c["canonical"].encode("utf-8"), c["renderRef"])
        cases.append(pytest.param(objects, expected, id=c["name"]))
    return cases


CASES = load_cases()


def test_there_are_vectors_of_both_kinds():
    assert len(CASES) >= 100
    kinds = {p.values[1][0] for p in CASES}
    assert kinds == {"ok", "error"}


@pytest.mark.parametrize("objects,expected", CASES)
def test_vector_through_the_python_host(runtime, objects, expected):
    if expected[0] == "ok":
        _, want_canonical, want_ref = expected
        assert runtime.canonical(objects) == want_canonical
        assert runtime.render_ref(objects) == want_ref
        # The renderRef is the hash of the canonical bytes, by the component's own hash.
        assert want_ref == "sha256:" + runtime.sha256_hex(want_canonical)
    else:
        _, index = expected
        for f in (runtime.canonical, runtime.render_ref):
            with pytest.raises(rs.RenderStoreError) as e:
                f(objects)
            assert e.value.kind == "invalid-object"
            assert e.value.index == index
            assert e.value.message


def _cli_outcome(cli, folder: Path, objects):
    """What `render-store ref` and `canonical` say of a render: (ref, canonical) or the
    index of the invalid object both name."""
    files = write_objects(folder, objects)
    # Each file is one JSON object, whatever its first byte (`auto` reads one that does
    # not start with `{` as YAML); no file at all: the empty standard input, the empty render.
    args = ["--format", "json", *files] if files else ["--allow-empty"]
    ref = cli.run("ref", *args, check=False)
    canonical = cli.run("canonical", *args, check=False)
    if ref.returncode == 0 and canonical.returncode == 0:
        return ("ok", canonical.stdout, ref.stdout.decode().strip())
    indexes = set()
    for out in (ref, canonical):
        m = re.search(rb"object (\d+) of the render is invalid", out.stderr)
        indexes.add(int(m.group(1)) if m and out.returncode != 0 else None)
    return ("error", indexes.pop() if len(indexes) == 1 else indexes)


def test_every_vector_agrees_with_the_rust_cli(runtime, cli, tmp_path):
    def python_outcome(objects):
        try:
            return ("ok", runtime.canonical(objects), runtime.render_ref(objects))
        except rs.RenderStoreError as e:
            assert e.kind == "invalid-object"
            return ("error", e.index)

    renders = [(p.id, p.values[0]) for p in CASES]
    with ThreadPoolExecutor(max_workers=4) as pool:
        rust = list(pool.map(lambda item: _cli_outcome(cli, tmp_path / item[0], item[1]), renders))
    differences = []
    for (name, objects), from_rust in zip(renders, rust):
        from_python = python_outcome(objects)
        if from_python != from_rust:
            differences.append(f"{name}: python {from_python!r:.200} rust {from_rust!r:.200}")
    assert not differences, "\n".join(differences)


GC_PLANS = json.loads((VECTORS.parent / "gc-plan.json").read_text(encoding="utf-8"))["cases"]


def test_there_are_gc_plan_cases():
    assert len(GC_PLANS) >= 10


@pytest.mark.parametrize("case", GC_PLANS, ids=[c["name"] for c in GC_PLANS])
def test_gc_plan_vector(runtime, case):
    release = (case["release"]["namespace"], case["release"]["name"])
    now = rs.SyncTime(case["now"]["seconds"], case["now"]["nanoseconds"])
    args = (release, case["keep"], case["history"], case["renders"], case["protected"])
    if "error" in case["want"]:
        with pytest.raises(rs.RenderStoreError) as e:
            runtime.plan_gc(*args, now=now)
        assert e.value.kind == case["want"]["error"]
        return
    assert runtime.plan_gc(*args, now=now).to_json() == case["want"]
    # The module-level function is the same decision.
    assert rs.plan_gc(*args, now=now).to_json() == case["want"]


CHECKS = json.loads((VECTORS.parent / "check-objects.json").read_text(encoding="utf-8"))["cases"]


def test_there_are_check_objects_cases():
    assert len(CHECKS) >= 10


@pytest.mark.parametrize("case", CHECKS, ids=[c["name"] for c in CHECKS])
def test_check_objects_vector(runtime, case):
    objects = [o.encode("utf-8") for o in case["objects"]]
    if case["want"] == "ok":
        runtime.check_objects(objects)
        rs.check_objects(objects)
        return
    with pytest.raises(rs.RenderStoreError) as e:
        runtime.check_objects(objects)
    assert e.value.kind == "invalid-object"
    assert e.value.index == case["want"]["index"]
    assert case["want"]["message"] in e.value.message
