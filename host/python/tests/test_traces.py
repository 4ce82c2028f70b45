"""Traces (TRACES.md) between the hosts: what the Rust CLI records with --trace replays
in Python to the same calls and result; an edited trace replays in Python to the same
different decision as `render-store replay --json`; what Python records replays in Rust;
the replay rules on traces written by hand."""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Optional

import pytest

import render_store as rs
from conftest import HERE, configmap, write_objects

APP = "ns/app"
TIMES = ["2024-05-01T08:00:00Z", "2024-05-01T09:00:00Z", "2024-05-01T10:00:00Z", "2024-05-01T11:00:00Z"]
ZERO_REF = "sha256:" + "0" * 64


@pytest.fixture
def populated(cli, tmp_path):
    """A file:// store written by the Rust CLI: four renders, recorded an hour apart."""
    root = tmp_path / "store"
    refs = []
    for n in range(4):
        files = write_objects(tmp_path / f"r{n}", [configmap(f"cm-{n}"), configmap("common")])
        refs.append(cli.text("put", APP, *files, store=root).strip())
        cli.run("record", APP, refs[-1], "--synced-at", TIMES[n], "--summary", f"sync {n}", store=root)
    return root, refs


def file_store(root: Path, runtime: Optional[rs.Runtime] = None) -> rs.RenderStore:
    """The file:// store at `root`, opened by the Rust library as the CLI opens it."""
    store = rs.open(f"file://{root}?create_dir=true", runtime)
    assert store is not None
    return store


def traced(cli, root: Path, tmp_path: Path, name: str, *args: str) -> str:
    """Runs a CLI store operation with --trace and returns the trace's text."""
    path = tmp_path / f"{name}.jsonl"
    cli.run(*args, "--trace", str(path), store=root, check=False)
    return path.read_text(encoding="utf-8")


def lines(text: str):
    return [json.loads(l) for l in text.splitlines() if l.strip()]


def rust_replay(cli, tmp_path: Path, text: str, name: str = "replayed"):
    path = tmp_path / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    out = cli.run("--json", "replay", str(path), check=False)
    report = json.loads(out.stdout)
    assert (out.returncode == 0) == report["matches"], out.stderr
    return report


def rust_replay_text(cli, tmp_path: Path, text: str, name: str = "replayed-text") -> str:
    """What `render-store replay FILE` prints: the report for people."""
    path = tmp_path / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    out = cli.run("replay", str(path), check=False)
    assert out.returncode in (0, 1), out.stderr
    return out.stdout.decode("utf-8")


def assert_same_replay(cli, tmp_path, text: str):
    """Python's replay and the Rust CLI's agree on matches, the first difference and the
    result, the whole JSON report and the report text, byte for byte; returns Python's."""
    py = rs.replay(text)
    rust = rust_replay(cli, tmp_path, text)
    assert py.matches == rust["matches"]
    assert py.first_difference == rust["firstDifference"]
    assert py.result == rust["result"]
    assert py.report == rust
    assert py.text == rust_replay_text(cli, tmp_path, text)
    return py


def test_every_cli_trace_replays_in_python(cli, populated, tmp_path):
    root, refs = populated
    new = write_objects(tmp_path / "new", [configmap("brand-new"), configmap("common")])
    bad = write_objects(tmp_path / "bad", [configmap("fine"), b'{"x": [1, 2,]}'])
    runs = {
        "put-new": ["put", APP, *new],
        "put-existing": ["put", APP, *write_objects(tmp_path / "again", [configmap("cm-0"), configmap("common")])],
        "put-invalid": ["put", APP, *bad],
        "get": ["get", APP, refs[1]],
        "get-missing": ["get", APP, ZERO_REF],
        "get-bad-ref": ["get", APP, "sha256:nope"],
        "history": ["history", APP],
        "record-new": ["record", APP, refs[0], "--synced-at", "2024-05-02T00:00:00.000000001Z", "--summary", "é"],
        "record-duplicate": ["record", APP, refs[3], "--synced-at", "2024-05-03T00:00:00Z"],
        "gc-dry-run": ["gc", APP, "--keep", "2", "--dry-run"],
        "gc-off": ["gc", APP, "--keep", "0"],
        "gc": ["gc", APP, "--keep", "2", "--protect", refs[0]],
        "gc-no-grace": ["gc", APP, "--keep", "2", "--grace", "0"],
        "history-after-gc": ["history", APP],
        "delete-release": ["delete-release", APP],
        # A release with a render and no entry (with no key at all the CLI refuses).
        "put-other": ["put", "ns/other", *new],
        "history-empty": ["history", "ns/other"],
    }
    operations = set()
    for name, args in runs.items():
        text = traced(cli, root, tmp_path, name, *args)
        recorded = lines(text)
        operations.add(recorded[0]["operation"])
        result = rs.replay(text)
        assert result.matches, (name, result.first_difference)
        assert result.first_difference is None
        assert result.result == recorded[-1]["result"], name
        assert rust_replay(cli, tmp_path, text, f"{name}-replay") == result.report
        # The report for people, as `render-store replay` prints it, byte for byte.
        assert rust_replay_text(cli, tmp_path, text, f"{name}-text") == result.text, name
    assert operations == {"put-render", "get-render", "list-history", "record-history", "gc", "delete-release"}
    # Version 2: the CLI's GC records its `now` and grace period (default 10 minutes);
    # the first spared the young unreferenced blobs, the second deleted them.
    gc, no_grace = (lines((tmp_path / f"{n}.jsonl").read_text(encoding="utf-8")) for n in ("gc", "gc-no-grace"))
    assert gc[0]["version"] == 6 and gc[0]["arguments"]["graceSeconds"] == 600
    assert set(gc[0]["arguments"]["now"]) == {"seconds", "nanoseconds"}
    spared = gc[-1]["result"]["ok"]["recentRenders"]
    assert f"ns/app/renders/{refs[1]}" in spared and gc[-1]["result"]["ok"]["deleteRenders"] == []
    # (without --protect, refs[0], whose entry the first GC deleted, goes too)
    assert no_grace[-1]["result"]["ok"]["deleteRenders"] == sorted(spared + [f"ns/app/renders/{refs[0]}"])
    assert no_grace[-1]["result"]["ok"]["recentRenders"] == []
    # exists answers a size; a listing, each object's size and modification time.
    existing = lines((tmp_path / "put-existing.jsonl").read_text(encoding="utf-8"))
    assert existing[1]["call"] == "exists" and existing[1]["answer"]["ok"] > 0
    assert sorted(gc[1]["answer"]["ok"][0]) == ["key", "modified", "size"]


def test_the_recorded_results_are_what_python_computes(cli, populated, tmp_path, runtime):
    root, refs = populated
    text = traced(cli, root, tmp_path, "gc", "gc", APP, "--keep", "2", "--dry-run")
    t = lines(text)[0]["arguments"]["now"]
    plan = file_store(root).gc(APP, 2, dry_run=True, now=rs.SyncTime(t["seconds"], t["nanoseconds"]))
    assert plan.recent_renders == [f"ns/app/renders/{r}" for r in sorted(refs[:2])]
    assert lines(text)[-1]["result"] == {"ok": plan.to_json()}
    text = traced(cli, root, tmp_path, "get", "get", APP, refs[2])
    render = base64.b64decode(lines(text)[-1]["result"]["ok"]["render"])
    assert render == file_store(root).get_render(APP, refs[2])


def listed(key: str, seconds: int = 0) -> dict:
    """A listing entry as a trace holds it (written at `seconds`)."""
    return {"key": key, "size": 10, "modified": {"seconds": seconds, "nanoseconds": 0}}


def edit_first_listing(text: str, suffix: str, extra: str) -> str:
    out = lines(text)
    for line in out[1:-1]:
        if line["call"] == "list" and line["key"].endswith(suffix):
            line["answer"]["ok"] = sorted(line["answer"]["ok"] + [listed(extra)], key=lambda o: o["key"])
            break
    else:
        raise AssertionError(f"no listing of {suffix}")
    return "".join(json.dumps(l) + "\n" for l in out)


@pytest.mark.parametrize("dry_run", [False, True])
def test_gc_trace_with_one_more_listed_entry(cli, populated, tmp_path, dry_run):
    root, refs = populated
    args = ["gc", APP, "--keep", "2"] + (["--dry-run"] if dry_run else [])
    text = traced(cli, root, tmp_path, "gc", *args)
    assert rs.replay(text).matches
    old_key = f"ns/app/history/19991231T235959.000000000Z-{refs[3]}"
    edited = edit_first_listing(text, "/history/", old_key)
    py = assert_same_replay(cli, tmp_path, edited)
    assert not py.matches
    assert old_key in py.result["ok"]["deleteHistory"]
    original = lines(text)[-1]["result"]["ok"]
    assert py.result["ok"]["deleteHistory"] == sorted(original["deleteHistory"] + [old_key])
    if dry_run:
        # Only the two listings, given as recorded: the calls agree, the result does not.
        assert py.first_difference is None
    else:
        # The first call that differs is the batch deleting the listed entry first.
        d = py.first_difference
        assert d["replayed"]["call"] == "delete-many" and d["replayed"]["keys"][0] == old_key
        assert d["replayed"]["keys"][1:] == d["recorded"]["keys"]
        assert d["replayed"]["answer"] == {"ok": [{"ok": None}] * len(d["replayed"]["keys"])}


def test_gc_trace_with_one_more_listed_render(cli, populated, tmp_path):
    root, _ = populated
    text = traced(cli, root, tmp_path, "gc", "gc", APP, "--keep", "2")
    orphan = f"ns/app/renders/{ZERO_REF}"
    edited = edit_first_listing(text, "/renders/", orphan)
    py = assert_same_replay(cli, tmp_path, edited)
    assert not py.matches and orphan in py.result["ok"]["deleteRenders"]


@pytest.mark.parametrize("dry_run", [False, True])
def test_gc_trace_without_its_protected_ref(cli, populated, tmp_path, dry_run):
    root, refs = populated
    args = ["gc", APP, "--keep", "2", "--protect", refs[0], "--grace", "0"] + (["--dry-run"] if dry_run else [])
    text = traced(cli, root, tmp_path, "gc", *args)
    recorded = lines(text)
    assert f"ns/app/renders/{refs[0]}" in recorded[-1]["result"]["ok"]["keepRenders"]
    recorded[0]["arguments"]["protected"] = []
    edited = "".join(json.dumps(l) + "\n" for l in recorded)
    py = assert_same_replay(cli, tmp_path, edited)
    assert not py.matches
    assert f"ns/app/renders/{refs[0]}" in py.result["ok"]["deleteRenders"]
    if not dry_run:
        # The batch of the renders now holds that one too, in key order.
        deleted = py.result["ok"]["deleteRenders"]
        assert py.first_difference["replayed"] == {
            "call": "delete-many", "keys": deleted, "answer": {"ok": [{"ok": None}] * len(deleted)}}


def test_edited_blob_replays_to_corrupt(cli, populated, tmp_path):
    root, refs = populated
    recorded = lines(traced(cli, root, tmp_path, "get", "get", APP, refs[1]))
    recorded[1]["answer"]["ok"] = base64.b64encode(b'{"tampered":true}\n').decode()
    edited = "".join(json.dumps(l) + "\n" for l in recorded)
    py = assert_same_replay(cli, tmp_path, edited)
    assert py.first_difference is None and py.result["error"]["kind"] == "corrupt"


def py_record(store, op, args):
    """Records one store call of this host: its trace's result and the trace text."""
    a = dict(args)
    calls = {
        "put-render": lambda: store.put_render(APP, a["objects"]),
        "get-render": lambda: store.get_render(APP, a["render_ref"]),
        "has-history-ref": lambda: store.has_history_ref(APP, a["render_ref"]),
        "record-history": lambda: store.record_history(APP, a["entry"]),
        "list-history": lambda: store.list_history(APP),
        "gc": lambda: store.gc(APP, a["keep"], a.get("protected", ()), a.get("dry_run", False),
                               now=a.get("now"), grace_seconds=a.get("grace_seconds", store.runtime.gc_grace_seconds)),
        "delete-release": lambda: store.delete_release(APP),
    }
    text = rs.record(calls[op]).trace
    return lines(text)[-1]["result"], text


def test_python_traces_replay_in_rust(cli, runtime, tmp_path):
    bucket = rs.MemoryBucket()
    store = rs.RenderStore(bucket, runtime)
    refs = [store.put_render(APP, [configmap(f"p{n}")]) for n in range(3)]
    for n, ref in enumerate(refs):
        store.record_history(APP, render_ref=ref, synced_at=TIMES[n], summary=f"py {n}")
    ops = [
        ("put-render", dict(objects=[configmap("p9"), configmap("p0")])),
        ("put-render", dict(objects=[b"[]"])),
        ("get-render", dict(render_ref=refs[1])),
        ("has-history-ref", dict(render_ref=refs[2])),
        ("has-history-ref", dict(render_ref=ZERO_REF)),
        ("record-history", dict(entry=rs.NewEntry(refs[0], rs.SyncTime(1_800_000_000, 7), "ü"))),
        ("list-history", {}),
        ("gc", dict(keep=1, protected=[refs[0], ""], dry_run=True)),
        ("gc", dict(keep=1, protected=[refs[0]])),
        ("gc", dict(keep=1, protected=[], grace_seconds=0, now=rs.SyncTime(1_900_000_000, 5))),
        ("delete-release", {}),
    ]
    for n, (op, args) in enumerate(ops):
        result, text = py_record(store, op, args)
        assert lines(text)[-1] == {"result": result}
        report = rust_replay(cli, tmp_path, text, f"py-{n}")
        assert report["matches"], (op, report["firstDifference"])
        assert report["result"] == result
        mine = rs.replay(text)
        assert mine.matches and mine.report == report
        assert rust_replay_text(cli, tmp_path, text, f"py-{n}-text") == mine.text, op
    assert bucket.blobs == {}


# Traces written by hand, per TRACES.md.

HEADER = {"format": "render-store-trace", "version": 2}
#: A GC's `now` and grace period in a hand-written trace.
NO_GRACE = {"now": {"seconds": 1_714_608_000, "nanoseconds": 0}, "graceSeconds": 0}


def trace_text(operation: str, arguments: dict, calls: list, result: dict) -> str:
    args = {"release": {"namespace": "ns", "name": "app"}, **arguments}
    out = [{**HEADER, "operation": operation, "arguments": args}, *calls, {"result": result}]
    return "".join(json.dumps(l) + "\n" for l in out)


def test_a_read_the_trace_never_saw_fails(cli, runtime, tmp_path):
    ref = runtime.render_ref([b"{}"])
    text = trace_text("get-render", {"renderRef": ref}, [], {"ok": {"render": base64.b64encode(b"{}\n").decode()}})
    py = assert_same_replay(cli, tmp_path, text)
    assert not py.matches
    assert py.first_difference == {
        "position": 1, "recorded": None,
        "replayed": {"call": "get", "key": f"ns/app/renders/{ref}",
                     "answer": {"error": {"kind": "failed", "message": "not in the trace"}}}}
    assert py.result["error"]["kind"] == "bucket" and "not in the trace" in py.result["error"]["message"]


def test_writes_are_answered_as_recorded_or_ok(cli, runtime, tmp_path):
    objects = [b'{"b":2,"a":1}']
    ref = runtime.render_ref(objects)
    key = f"ns/app/renders/{ref}"
    value = base64.b64encode(runtime.canonical(objects)).decode()
    exists = {"call": "exists", "key": key, "answer": {"ok": None}}
    failed_put = {"call": "put", "key": key, "value": value,
                  "answer": {"error": {"kind": "failed", "message": "put: disk full"}}}
    args = {"objects": [base64.b64encode(o).decode() for o in objects]}
    # The recorded failure is given again, and the error it led to is reproduced.
    first = rs.replay(trace_text("put-render", args, [exists, failed_put], {"ok": {"renderRef": ref}}))
    assert first.result["error"]["kind"] == "bucket" and "disk full" in first.result["error"]["message"]
    assert first.first_difference is None and not first.matches
    # Without the put line the write is answered ok (and not performed: nothing to perform it on).
    text = trace_text("put-render", args, [exists], {"ok": {"renderRef": ref}})
    py = assert_same_replay(cli, tmp_path, text)
    assert py.result == {"ok": {"renderRef": ref}}
    assert py.first_difference == {"position": 2, "recorded": None,
                                   "replayed": {"call": "put", "key": key, "value": value, "answer": {"ok": None}}}


def test_answers_are_used_in_order_then_the_last_again(cli, runtime, tmp_path):
    """The replay bucket (in the component) answers a read with the first unused
    recorded answer of the same call on the same key, then the last again; a write with
    its recorded answer; another call on a recorded key is not in the trace."""
    # (sorted: GC deletes blobs in key order)
    refs = sorted(runtime.render_ref([configmap(f"o{n}")]) for n in range(3))
    hist = [f"ns/app/history/2024050{n + 1}T000000.000000000Z-{r}" for n, r in enumerate(refs)]
    renders = [f"ns/app/renders/{r}" for r in refs]
    list_history = {"call": "list", "key": "ns/app/history/", "answer": {"ok": [listed(k) for k in hist]}}
    deletes = [{"call": "delete", "key": k, "answer": {"ok": None}} for k in hist[:2]]
    list_renders = {"call": "list", "key": "ns/app/renders/", "answer": {"ok": [listed(k) for k in renders]}}
    args = {"keep": 1, "protected": [], "dryRun": False, **NO_GRACE}
    plan = {"deleteHistory": hist[:2], "keepHistory": hist[2:], "deleteRenders": renders[:2],
            "keepRenders": renders[2:], "ignored": [], "recentRenders": []}
    # One history listing recorded: GC's second listing gets it again, so the entries
    # it deleted still count and their renders are kept.
    once = assert_same_replay(cli, tmp_path, trace_text("gc", args, [list_history, *deletes, list_renders], {"ok": plan}))
    assert not once.matches
    assert once.first_difference == {"position": 4, "recorded": list_renders, "replayed": list_history}
    assert once.result["ok"]["keepHistory"] == hist and once.result["ok"]["deleteRenders"] == []
    # The second listing recorded too: used second, and the trace replays as recorded.
    second = {**list_history, "answer": {"ok": [listed(hist[2])]}}
    renders_deleted = [{"call": "delete", "key": k, "answer": {"ok": None}} for k in renders[:2]]
    full = [list_history, *deletes, second, list_renders, *renders_deleted]
    assert assert_same_replay(cli, tmp_path, trace_text("gc", args, full, {"ok": plan})).matches
    # A recorded failing delete is given again: the GC fails at it.
    denied = {**deletes[0], "answer": {"error": {"kind": "denied", "message": "no"}}}
    failed = assert_same_replay(cli, tmp_path, trace_text("gc", args, [list_history, denied], {"ok": plan}))
    assert failed.result["error"]["kind"] == "bucket" and "no" in failed.result["error"]["message"]
    # An `exists` of the render's key recorded, a `get` made: not in the trace.
    exists = {"call": "exists", "key": renders[0], "answer": {"ok": 7}}
    got = assert_same_replay(cli, tmp_path, trace_text("get-render", {"renderRef": refs[0]}, [exists],
                                                       {"error": {"kind": "not-found", "message": "x"}}))
    assert got.first_difference["replayed"]["answer"] == {"error": {"kind": "failed", "message": "not in the trace"}}


def test_gc_listings_are_answered_first_unused_then_last(cli, runtime, tmp_path):
    refs = [runtime.render_ref([configmap(f"g{n}")]) for n in range(3)]
    hist = [f"ns/app/history/2024050{n + 1}T000000.000000000Z-{r}" for n, r in enumerate(refs)]
    renders = [f"ns/app/renders/{r}" for r in refs]
    calls = [
        {"call": "list", "key": "ns/app/history/", "answer": {"ok": [listed(k) for k in hist]}},
        {"call": "list", "key": "ns/app/renders/", "answer": {"ok": [listed(k) for k in renders]}},
    ]
    text = trace_text("gc", {"keep": 1, "protected": [], "dryRun": False, **NO_GRACE}, calls,
                      {"ok": {"deleteHistory": [], "keepHistory": [], "deleteRenders": [], "keepRenders": [],
                              "ignored": [], "recentRenders": []}})
    py = assert_same_replay(cli, tmp_path, text)
    assert not py.matches
    assert py.result["ok"]["deleteHistory"] == hist[:2]


def test_a_hand_written_gc_trace_with_a_grace_period(cli, runtime, tmp_path):
    refs = [runtime.render_ref([configmap(f"g{n}")]) for n in range(3)]
    hist = [f"ns/app/history/2024050{n + 1}T000000.000000000Z-{r}" for n, r in enumerate(refs)]
    renders = [f"ns/app/renders/{r}" for r in refs]
    hour_ago = NO_GRACE["now"]["seconds"] - 3600
    calls = [
        {"call": "list", "key": "ns/app/history/", "answer": {"ok": [listed(k) for k in hist]}},
        {"call": "delete", "key": hist[0], "answer": {"ok": None}},
        {"call": "delete", "key": hist[1], "answer": {"ok": None}},
        {"call": "list", "key": "ns/app/history/", "answer": {"ok": [listed(hist[2])]}},
        {"call": "list", "key": "ns/app/renders/", "answer": {"ok": [listed(k, hour_ago) for k in renders]}},
    ]
    plan = {"deleteHistory": hist[:2], "keepHistory": hist[2:], "deleteRenders": [], "keepRenders": renders[2:],
            "ignored": [], "recentRenders": renders[:2]}
    # A day of grace: the two unreferenced blobs, an hour old, are spared; the trace
    # says so and replays as recorded in both hosts.
    graced = trace_text("gc", {"keep": 1, "protected": [], "dryRun": False, **NO_GRACE, "graceSeconds": 86400},
                        calls, {"ok": plan})
    g = assert_same_replay(cli, tmp_path, graced)
    assert g.matches and g.result == {"ok": plan}
    # The same trace with half an hour of grace: both blobs are deleted, two calls more.
    short = graced.replace('"graceSeconds": 86400', '"graceSeconds": 1800')
    h = assert_same_replay(cli, tmp_path, short)
    assert not h.matches and h.result["ok"]["deleteRenders"] == renders[:2] and h.result["ok"]["recentRenders"] == []
    assert h.first_difference == {"position": 6, "recorded": None,
                                  "replayed": {"call": "delete", "key": renders[0], "answer": {"ok": None}}}


@pytest.mark.parametrize("mangle,message", [
    (lambda t: t.replace('"version": 2', '"version": 1'),
     "trace line 1: trace version 1 is not supported: this build reads versions 2 to 6"),
    (lambda t: t.replace('"version": 2', '"version": 3').replace('"call": "list"', '"call": "delete-many"'),
     'a delete-many has "keys", not "key"'),
    (lambda t: t.replace('"ok": []', '"ok": ["ns/app/history/x"]'), "an object of a listing must be a JSON object"),
    (lambda t: t.replace('"ok": []', '"ok": [{"key": "k", "size": 1}]'), "modified"),
    (lambda t: t.replace('"ok": []', '"ok": [{"key": "k", "size": -1, "modified": {"seconds": 0, "nanoseconds": 0}}]'),
     '"size" must be'),
    (lambda t: t.replace('"ok": []', '"ok": [{"key": "k", "size": 1, "modified": {"seconds": 0, "nanoseconds": 1000000000}}]'),
     '"nanoseconds" must be an integer below 1000000000'),
    (lambda t: t.replace('"render-store-trace"', '"other"'), "not a render-store trace"),
    (lambda t: t.replace('"call": "list"', '"call": "rename"'), "unknown call"),
    (lambda t: t.replace('"list-history"', '"compact"'), "unknown operation"),
    (lambda t: t.splitlines()[0], "result line is missing"),
    (lambda t: "", "empty"),
])
def test_a_bad_trace_is_refused(mangle, message):
    text = trace_text("list-history", {}, [{"call": "list", "key": "ns/app/history/", "answer": {"ok": []}}],
                      {"ok": {"entries": []}})
    assert rs.replay(text).matches
    with pytest.raises(rs.TraceError, match=re.escape(message)):
        rs.replay(mangle(text))


@pytest.mark.parametrize("edit", [
    lambda a: a.pop("now"),
    lambda a: a.pop("graceSeconds"),
    lambda a: a.update(graceSeconds=-1),
    lambda a: a.update(now={"seconds": 0, "nanoseconds": 1_000_000_000}),
])
def test_a_gc_trace_needs_its_now_and_grace_period(cli, tmp_path, edit):
    args = {"keep": 1, "protected": [], "dryRun": True, **NO_GRACE}
    edit(args)
    text = trace_text("gc", args, [], {"ok": {}})
    with pytest.raises(rs.TraceError, match="trace line 1: "):
        rs.replay(text)
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    rust = cli.run("replay", str(path), check=False)
    assert rust.returncode != 0 and "trace line 1: " in rust.stderr.decode()


def test_both_hosts_write_the_same_trace_of_the_same_operation(cli, populated, tmp_path, runtime):
    """The same operation on two copies of one store: the Rust CLI's trace and Python's
    are the same text, byte for byte."""
    import shutil

    root, refs = populated
    new = [configmap("same-trace", {"ü": "✓"}), configmap("common")]
    new_files = write_objects(tmp_path / "same", new)
    runs = [
        (["put", APP, *new_files], "put-render", dict(objects=new)),
        (["get", APP, refs[2]], "get-render", dict(render_ref=refs[2])),
        (["history", APP], "list-history", {}),
        (["record", APP, refs[0], "--synced-at", "2024-06-01T00:00:00.25Z", "--summary", "again ✓"],
         "record-history", dict(entry=rs.NewEntry(refs[0], rs.SyncTime(1_717_200_000, 250_000_000), "again ✓"))),
        (["gc", APP, "--keep", "1", "--protect", refs[1], "--dry-run"], "gc", dict(keep=1, protected=[refs[1]], dry_run=True)),
        (["gc", APP, "--keep", "2"], "gc", dict(keep=2)),
        (["gc", APP, "--keep", "1", "--grace", "0"], "gc", dict(keep=1)),
        (["delete-release", APP], "delete-release", {}),
    ]
    python_root = tmp_path / "python-copy"
    shutil.copytree(root, python_root)
    store = file_store(python_root, runtime)
    for n, (args, operation, py_args) in enumerate(runs):
        from_rust = traced(cli, root, tmp_path, f"same-{n}", *args)
        # The bucket's clock is the file system's: each copy's files get the times the
        # Rust side's have; a GC runs at the `now` and grace period the CLI recorded.
        copy_mtimes(root, python_root)
        if operation == "gc":
            recorded = lines(from_rust)[0]["arguments"]
            t = recorded["now"]
            py_args = dict(py_args, now=rs.SyncTime(t["seconds"], t["nanoseconds"]),
                           grace_seconds=recorded["graceSeconds"])
        _, from_python = py_record(store, operation, py_args)
        assert from_python == from_rust, operation
        # The CLI keeps the release index after a record and a GC that deleted
        # something, as a controller does (CONTRACT.md §3): so does this side.
        if operation == "record-history":
            store.index_release(APP)
        elif operation == "gc" and not py_args.get("dry_run"):
            store.index_release(APP, read_missing=False)
        # The next CLI run may delete the files whose times the next copy would take.
        copy_mtimes(root, python_root)
    assert [o.key for o in store.bucket.list("")] == cli.json("ls", store=root)


def copy_mtimes(source: Path, target: Path) -> None:
    """Gives every file under `target` the modification time of its twin under `source`."""
    for folder, _, files in os.walk(target):
        for name in files:
            twin = source / Path(folder).relative_to(target) / name
            if twin.exists():
                st = twin.stat()
                os.utime(Path(folder) / name, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_version_3_gc_trace_deletes_in_batches_and_names_a_failed_key(cli, runtime, tmp_path):
    """Version 3 traces hold batch deletes, answered per key, and list renders/ after
    the second history listing, as that build did; the hand-written traces above are
    version 2 (one delete a key). Both still replay as recorded."""
    refs = sorted(runtime.render_ref([configmap(f"b{n}")]) for n in range(3))
    hist = [f"ns/app/history/2024050{n + 1}T000000.000000000Z-{r}" for n, r in enumerate(refs)]
    renders = [f"ns/app/renders/{r}" for r in refs]
    batch = {"call": "delete-many", "keys": hist[:2], "answer": {"ok": [{"ok": None}, {"ok": None}]}}
    calls = [
        {"call": "list", "key": "ns/app/history/", "answer": {"ok": [listed(k) for k in hist]}},
        batch,
        {"call": "list", "key": "ns/app/history/", "answer": {"ok": [listed(hist[2])]}},
        {"call": "list", "key": "ns/app/renders/", "answer": {"ok": [listed(k) for k in renders]}},
        {"call": "delete-many", "keys": renders[:2], "answer": {"ok": [{"ok": None}, {"ok": None}]}},
    ]
    plan = {"deleteHistory": hist[:2], "keepHistory": hist[2:], "deleteRenders": renders[:2],
            "keepRenders": renders[2:], "ignored": [], "recentRenders": []}
    args = {"keep": 1, "protected": [], "dryRun": False, **NO_GRACE}
    text = trace_text("gc", args, calls, {"ok": plan}).replace('"version": 2', '"version": 3')
    assert assert_same_replay(cli, tmp_path, text).matches
    failing = {**batch, "answer": {"ok": [{"ok": None}, {"error": {"kind": "failed", "message": "busy"}}]}}
    text = trace_text("gc", args, calls[:1] + [failing], {"ok": plan}).replace('"version": 2', '"version": 3')
    py = assert_same_replay(cli, tmp_path, text)
    assert py.result == {"error": {"kind": "bucket", "message":
                                   f"delete-many: 1 of 2 keys could not be deleted: {hist[1]}: busy"}}
    assert py.first_difference is None  # no call after the failed batch


def test_the_gc_conformance_trace_replays_as_recorded(cli, tmp_path):
    """tests/vectors/traces/gc-skipped-entries.jsonl: a GC over ten planted far-future
    entries, an entry of a replica whose clock ran ahead and an entry whose render is
    missing. It replays as recorded here and in the Rust CLI, to the same report, and
    no real entry was pushed out (CONTRACT.md §5)."""
    path = HERE / ".." / ".." / ".." / "tests" / "vectors" / "traces" / "gc-skipped-entries.jsonl"
    text = path.read_text(encoding="utf-8")
    py = assert_same_replay(cli, tmp_path, text)
    assert py.matches, py.text
    plan = py.result["ok"]
    counts = [len(plan[k]) for k in ("deleteHistory", "keepHistory", "futureHistory", "danglingHistory")]
    assert counts == [1, 16, 11, 1]
    assert set(plan["futureHistory"]) | set(plan["danglingHistory"]) <= set(plan["keepHistory"])


def test_the_authenticated_record_trace_replays_with_its_keyring(tmp_path: Path) -> None:
    """tests/vectors/traces/record-authenticated.jsonl: a record-history with encryption
    required over an entry a writer of the bucket planted. It replays with the keyring
    it was recorded with (k1: 32 bytes of ``1``), and not with another key of that id."""
    path = HERE / ".." / ".." / ".." / "tests" / "vectors" / "traces" / "record-authenticated.jsonl"
    text = path.read_text(encoding="utf-8")
    keys = tmp_path / "keys"
    keys.write_text(f"k1 {base64.b64encode(b'1' * 32).decode()}\n")
    os.chmod(keys, 0o600)
    report = rs.replay(text, encryption_keys=keys)
    assert report.matches, report.text
    assert report.result == {"ok": {"added": True}}
    keys.write_text(f"k1 {base64.b64encode(b'2' * 32).decode()}\n")
    assert not rs.replay(text, encryption_keys=keys).matches
