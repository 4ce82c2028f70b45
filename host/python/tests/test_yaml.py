"""YAML streams through the Python host: every Go vector of
tests/vectors/yaml-render-ref.json (read as tests/e2e/yaml.rs reads it), the four
real streams of tests/real-renders and the real-world corpus of tests/yaml-corpus
give what Go gives; a stream that is not a render is an ``invalid-yaml``
RenderStoreError naming its document, line, column and stage."""

from __future__ import annotations

import base64
import json

import pytest

import render_store as rs
from conftest import HERE

REPO = HERE / ".." / ".." / ".."
VECTORS = json.loads((REPO / "tests" / "vectors" / "yaml-render-ref.json").read_text(encoding="utf-8"))
REAL = json.loads((REPO / "tests" / "real-renders" / "expected.json").read_text(encoding="utf-8"))["renders"]


def stream_of(case) -> bytes:
    return case["yaml"].encode("utf-8") if "yaml" in case else base64.b64decode(case["yaml_b64"])


def test_the_vector_file_holds_the_cases_the_rust_test_reads():
    assert len(VECTORS) == 291
    assert any("outcomes" in c for c in VECTORS) and any("yaml_b64" in c for c in VECTORS)
    assert any("error_document_index" in c for c in VECTORS)


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_yaml_vector(runtime, case):
    stream = stream_of(case)
    # A nondeterministic case (Go's result depends on map order) lists each outcome Go
    # can give; the component always gives one of them.
    outcomes = case.get("outcomes", [case])
    try:
        objects = runtime.yaml_objects(stream)
    except rs.RenderStoreError as e:
        assert e.kind == "invalid-yaml", e
        assert e.document in [o["error_document_index"] for o in outcomes if "error_document_index" in o], e
        if "error_stage" in case:
            assert e.stage == case["error_stage"]
        assert e.line >= 1 and e.column >= 1 and e.message
        # The one-call forms fail alike.
        for f in (runtime.yaml_canonical, runtime.yaml_render_ref):
            with pytest.raises(rs.RenderStoreError) as again:
                f(stream)
            assert (again.value.kind, again.value.document, again.value.line) == ("invalid-yaml", e.document, e.line)
        return
    ref = runtime.yaml_render_ref(stream)
    match = [o for o in outcomes if o.get("renderRef") == ref]
    assert match, f"renderRef {ref} is none of Go's"
    assert [o.decode("utf-8") for o in objects] == match[0]["objects"]
    assert runtime.yaml_canonical(stream) == match[0]["canonical"].encode("utf-8")
    assert runtime.render_ref(objects) == ref


@pytest.mark.parametrize("render", REAL, ids=[r["name"] for r in REAL])
def test_real_stream(runtime, render):
    stream = (REPO / "tests" / "real-renders" / render["yaml"]).read_bytes()
    assert runtime.yaml_render_ref(stream) == render["renderRef"]
    objects = runtime.yaml_objects(stream)
    assert len(objects) == render["objects"]
    assert runtime.render_ref(objects) == render["renderRef"]
    assert len(runtime.yaml_canonical(stream)) == render["canonical_bytes"]


def test_four_real_streams():
    assert len(REAL) == 5


def test_real_world_corpus(runtime):
    """tests/yaml-corpus/: streams from public repositories, each with Go's outcome."""
    corpus = REPO / "tests" / "yaml-corpus"
    files = json.loads((corpus / "corpus.json").read_text(encoding="utf-8"))["files"]
    assert len(files) >= 2000
    failures = []
    for f in files:
        stream = (corpus / f["file"]).read_bytes()
        try:
            got = runtime.yaml_render_ref(stream)
        except rs.RenderStoreError as e:
            assert e.kind == "invalid-yaml", e
            got = f"document {e.document} {e.stage}"
        want = f.get("renderRef") or f"document {f['error_document_index']} {f['error_stage']}"
        if got != want:
            failures.append(f"{f['file']}: {got}, Go {want}")
    assert failures == []


def test_a_bad_stream_names_its_document_line_column_and_stage(runtime):
    # Two `---` in a row make no empty document: `kind: B` is document 1.
    with pytest.raises(rs.RenderStoreError) as e:
        rs.yaml_objects("kind: A\n---\n---\nkind: B\n  bad: indent\n")
    assert (e.value.kind, e.value.stage, e.value.document, e.value.line) == ("invalid-yaml", "yaml", 1, 5)
    assert e.value.column == 6
    assert str(e.value).startswith("invalid YAML stream: document 1 (line 5, column 6): ")
    assert e.value.message in str(e.value)
    # A skipped `null` document still counts: the sequence is document 2.
    with pytest.raises(rs.RenderStoreError) as e:
        rs.yaml_render_ref(b"kind: A\n---\nnull\n---\n- a\n- b\n")
    assert (e.value.kind, e.value.stage, e.value.document) == ("invalid-yaml", "object", 2)
    # An empty stream is the empty render; the module-level functions use the runtime.
    assert rs.yaml_objects(b"") == []
    assert rs.yaml_render_ref("") == runtime.render_ref([])
    assert rs.yaml_canonical("kind: A\n") == b'{"kind":"A"}\n'
