"""The Python package itself: every operation on the in-memory bucket, the logic
exports, the error mapping, bucket failures and their wording, and the sandbox's
limits, through the Rust host library's C ABI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import render_store as rs
from conftest import configmap, write_objects

APP = rs.Release("ns", "app")


class Recording(rs.MemoryBucket):
    """A memory bucket that remembers every call."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def get(self, key):
        self.calls.append(("get", key))
        return super().get(key)

    def put(self, key, value):
        self.calls.append(("put", key))
        super().put(key, value)

    def exists(self, key):
        self.calls.append(("exists", key))
        return super().exists(key)

    def list(self, prefix):
        self.calls.append(("list", prefix))
        return super().list(prefix)

    def delete(self, key):
        self.calls.append(("delete", key))
        super().delete(key)


def test_every_operation_on_the_memory_bucket(runtime):
    bucket = Recording()
    store = rs.RenderStore(bucket, runtime)
    renders = [[configmap(f"cm-{n}"), configmap("common", {"v": str(n // 2)})] for n in range(4)]
    refs = [store.put_render(APP, r) for r in renders]
    assert refs == [runtime.render_ref(r) for r in renders]
    assert bucket.calls[:2] == [("exists", f"ns/app/renders/{refs[0]}"), ("put", f"ns/app/renders/{refs[0]}")]
    bucket.calls.clear()
    assert store.put_render(APP, renders[0]) == refs[0]
    assert bucket.calls == [("exists", f"ns/app/renders/{refs[0]}")]  # already there: no put

    for n, ref in enumerate(refs):
        assert store.get_render(APP, ref) == runtime.canonical(renders[n])
        assert not store.has_history_ref(APP, ref)
        assert store.record_history(APP, rs.NewEntry(ref, rs.SyncTime(1_700_000_000 + 60 * n, n), f"#{n}"))
        assert store.has_history_ref(APP, ref)
    assert not store.record_history(APP, render_ref=refs[1], synced_at="2030-01-01T00:00:00Z")

    history = store.list_history(APP)
    assert [e.render_ref for e in history] == refs
    assert [e.summary for e in history] == ["#0", "#1", "#2", "#3"]
    assert history[2].synced_at == rs.SyncTime(1_700_000_120, 2)
    assert history[2].key == runtime.history_key(APP, rs.SyncTime(1_700_000_120, 2), refs[2])

    # Without a grace period: the blobs just written may go.
    dry = store.gc(APP, keep=2, protected=[refs[0]], dry_run=True, grace_seconds=0)
    assert dry.delete_history == [e.key for e in history[:2]]
    assert dry.delete_renders == [f"ns/app/renders/{refs[1]}"]
    assert sorted(dry.keep_renders) == sorted(f"ns/app/renders/{r}" for r in (refs[0], refs[2], refs[3]))
    assert len(bucket.blobs) == 8  # a dry run deletes nothing
    assert dry.recent_renders == []
    assert store.gc(APP, keep=2, protected=[refs[0]], grace_seconds=0) == dry
    assert len(bucket.blobs) == 5
    assert store.gc(APP, keep=0) == rs.GcPlan([], [], [], [], [], [])

    bucket.put("ns/app/renders/not-a-ref", b"junk")
    assert store.gc(APP, keep=1, dry_run=True).ignored == ["ns/app/renders/not-a-ref"]
    assert store.delete_release(APP) == 6
    assert bucket.blobs == {}
    assert store.list_history(APP) == []


def test_the_logic_exports(runtime):
    ref = runtime.render_ref([b'{"a":1}'])
    runtime.validate_render_ref(ref)
    assert runtime.release_prefix(APP) == "ns/app/"
    assert runtime.render_key("ns/app", ref) == f"ns/app/renders/{ref}"
    t = rs.SyncTime(1_700_000_000, 123_456_789)
    key = runtime.history_key(APP, t, ref)
    assert key == f"ns/app/history/20231114T221320.123456789Z-{ref}"
    assert runtime.parse_key(APP, key) == ("history", rs.HistoryKey(t, ref))
    assert runtime.parse_key(APP, f"ns/app/renders/{ref}") == ("render", ref)
    assert runtime.parse_key(APP, "ns/other/renders/x") is None
    assert runtime.format_synced_at(t) == "2023-11-14T22:13:20.123456789Z"
    assert runtime.parse_synced_at("2023-11-15T00:13:20.123456789+02:00") == t
    plan = runtime.plan_gc(APP, 1, [key], [f"ns/app/renders/{ref}", "ns/app/renders/zzz"], [])
    assert plan.keep_history == [key] and plan.ignored == ["ns/app/renders/zzz"]
    old = runtime.canonical([configmap("a", {"x": "1"}), configmap("b")])
    new = runtime.canonical([configmap("a", {"x": "2"}), configmap("c")])
    diff = runtime.diff_renders(old, new)
    assert [o.id.name for o in diff.added] == ["c"] and [o.id.name for o in diff.removed] == ["b"]
    # Added and removed objects whole, in the diff's form.
    assert "name: c" in diff.added[0].text and "name: b" in diff.removed[0].text
    assert diff.changed[0].id == rs.ObjectId("v1", "ConfigMap", "", "a")
    assert any(line.startswith("-") and "x: '1'" in line for line in diff.changed[0].lines)
    as_json = runtime.diff_renders(old, new, "json")
    assert any(line.startswith("-") and '"1"' in line for line in as_json.changed[0].lines)
    with pytest.raises(rs.RenderStoreError):
        runtime.diff_renders(old, new, "toml")
    # Each hunk says where its change is; a whole context shows the object whole.
    assert diff.changed[0].lines[0].endswith("@@ data.x"), diff.changed[0].lines
    wide = lambda k: runtime.canonical([configmap("a", {c: ("x" if c == k else c) for c in "abcdefghij"})])
    heads = lambda d: [line for line in d.changed[0].lines if line.startswith("@@")]
    short = runtime.diff_renders(wide("a"), wide("j"))
    whole = runtime.diff_renders(wide("a"), wide("j"), context=0xFFFFFFFF)
    assert [h.split(" @@ ")[1] for h in heads(short)] == ["data.a", "data.j"]
    assert [h.split(" @@ ")[1] for h in heads(whole)] == ["data.a", "data.j"]
    assert len(whole.changed[0].lines) > len(short.changed[0].lines)
    with pytest.raises(TypeError):
        runtime.diff_renders(old, new, context=-1)
    assert diff.unchanged == 0
    shown = runtime.show_objects(old)
    assert [o.id.name for o in shown] == ["a", "b"]
    assert "x: '1'\n" in shown[0].text
    with pytest.raises(rs.RenderStoreError):
        runtime.show_objects(b"[1]\n")
    # The module-level functions use the same library.
    assert rs.render_ref([b'{"a":1}']) == ref
    assert rs.canonical([b'{"b":1, "a":1}']) == b'{"a":1,"b":1}\n'
    assert rs.plan_gc(APP, 1, [key], [], []).keep_history == [key]


def test_each_error_kind(runtime):
    store = rs.RenderStore(rs.MemoryBucket(), runtime)
    cases = []
    with pytest.raises(rs.RenderStoreError) as e:
        store.put_render(rs.Release("Not_A_Label", "app"), [b"{}"])
    cases.append(e.value)
    with pytest.raises(rs.RenderStoreError) as e:
        runtime.render_ref([b"{}", b"{}", b'{"a" 1}'])
    cases.append(e.value)
    with pytest.raises(rs.RenderStoreError) as e:
        store.get_render(APP, "sha256:" + "1" * 64)
    cases.append(e.value)
    ref = store.put_render(APP, [b"{}"])
    store.bucket.blobs[f"ns/app/renders/{ref}"] = b'{"changed":1}\n'
    with pytest.raises(rs.RenderStoreError) as e:
        store.get_render(APP, ref)
    cases.append(e.value)
    assert [c.kind for c in cases] == ["invalid-input", "invalid-object", "not-found", "corrupt"]
    assert cases[1].index == 2 and cases[1].to_json()["index"] == 2
    assert all(c.message for c in cases)
    assert cases[0].to_json() == {"kind": "invalid-input", "message": cases[0].message}


def test_invalid_input_makes_no_bucket_call(runtime):
    bucket = Recording()
    store = rs.RenderStore(bucket, runtime)
    for call in [lambda: store.put_render(rs.Release("ns", "App"), [b"{}"]),
                 lambda: store.get_render(APP, "sha256:short"),
                 lambda: store.record_history(APP, render_ref="nope", synced_at=rs.SyncTime(0)),
                 lambda: store.gc(rs.Release("", "app"), keep=1),
                 lambda: store.delete_release(rs.Release("ns", "a/b"))]:
        with pytest.raises(rs.RenderStoreError) as e:
            call()
        assert e.value.kind == "invalid-input"
    assert bucket.calls == []


class Exploding:
    """A bucket whose every call raises `error`."""

    def __init__(self, error):
        self.error = error

    def _raise(self, *_):
        raise self.error

    get = put = exists = list = delete = _raise


@pytest.mark.parametrize("error,text", [
    (OSError("disk on fire"), "disk on fire"),
    (rs.Failed("backend says no"), "backend says no"),
    (rs.Denied("read-only bucket"), "read-only bucket"),
    (KeyError("weird"), "weird"),
])
def test_a_bucket_that_raises_is_the_bucket_error(runtime, error, text):
    store = rs.RenderStore(Exploding(error), runtime)
    ops = [lambda: store.put_render(APP, [b"{}"]),
           lambda: store.get_render(APP, "sha256:" + "2" * 64),
           lambda: store.has_history_ref(APP, "sha256:" + "2" * 64),
           lambda: store.list_history(APP),
           lambda: store.gc(APP, keep=1),
           lambda: store.delete_release(APP)]
    for op in ops:
        with pytest.raises(rs.RenderStoreError) as e:
            op()
        assert e.value.kind == "bucket"
        assert text in e.value.message and "ns/app/" in e.value.message


def test_a_python_exception_is_worded_like_a_rust_backend_failure(runtime):
    store = rs.RenderStore(Exploding(OSError("boom")), runtime)
    recorded = rs.record(lambda: store.list_history(APP))
    assert recorded.error is not None and recorded.error.kind == "bucket"
    assert json.loads(recorded.trace.splitlines()[1]) == {
        "call": "list", "key": "ns/app/history/",
        "answer": {"error": {"kind": "failed", "message": 'list "ns/app/history/": boom'}}}


def test_every_key_an_operation_reaches_lies_in_its_release(runtime):
    bucket = Recording()
    bucket.blobs["ns/other/renders/x"] = b"not ours"
    store = rs.RenderStore(bucket, runtime)
    ref = store.put_render(APP, [b"{}"])
    store.record_history(APP, render_ref=ref, synced_at="2024-01-01T00:00:00Z")
    store.list_history(APP)
    store.gc(APP, keep=1)
    store.delete_release(APP)
    assert bucket.calls and all(key.startswith("ns/app/") for _, key in bucket.calls)
    assert bucket.blobs == {"ns/other/renders/x": b"not ours"}


def test_the_memory_cap_stops_one_call_only(runtime):
    small = rs.Runtime(memory_bytes=2 << 20)
    with pytest.raises(rs.RenderStoreError) as e:
        small.canonical([b'{"d":"' + b"x" * (4 << 20) + b'"}'])
    assert e.value.kind == "memory-cap"
    assert "memory cap" in e.value.message and str(2 << 20) in e.value.message
    assert small.render_ref([b"{}"]).startswith("sha256:")


class Answering(rs.MemoryBucket):
    """A memory bucket whose exists and list answer what they are told to."""

    def __init__(self, exists=None, listed=None):
        super().__init__()
        self.exists_answer, self.list_answer = exists, listed

    def exists(self, key):
        return self.exists_answer

    def list(self, prefix):
        return self.list_answer


@pytest.mark.parametrize("bucket,text", [
    (Answering(exists=True), "not a size or None"),
    (Answering(exists=-1), "not a size or None"),
    (Answering(exists="12"), "not a size or None"),
    (Answering(listed=["ns/app/history/x"]), "not an ObjectMeta"),
    (Answering(listed=[rs.ObjectMeta("ns/app/history/x", -1, rs.SyncTime(0))]), "not an ObjectMeta"),
    (Answering(listed=[rs.ObjectMeta("ns/app/history/x", 1, rs.SyncTime(0, 10**9))]), "not an ObjectMeta"),
    (Answering(listed=[rs.ObjectMeta("ns/app/history/x", 1, rs.SyncTime(-1 << 63, -1))]), "not an ObjectMeta"),
    (Answering(exists=1 << 64), "not a size or None"),
])
def test_a_bucket_answer_of_the_wrong_type_is_failed(runtime, bucket, text):
    store = rs.RenderStore(bucket, runtime)
    call = (lambda: store.put_render(APP, [b"{}"])) if bucket.list_answer is None else (lambda: store.list_history(APP))
    with pytest.raises(rs.RenderStoreError) as e:
        call()
    assert e.value.kind == "bucket" and text in e.value.message


class Unprintable(Exception):
    """An exception whose text cannot be read."""

    def __str__(self):
        raise RuntimeError("no text")


class Unsized(list):
    """A list whose length cannot be read."""

    def __len__(self):
        raise RuntimeError("length on fire")


class Opaque:
    """An object whose text cannot be read."""

    def __str__(self):
        raise RuntimeError("no text")


class Keyless:
    """A listing entry whose key cannot be read."""

    size, modified = 1, rs.SyncTime(0)

    @property
    def key(self):
        raise RuntimeError("key on fire")


class Muffled(rs.Denied):
    """A Denied whose message cannot be read."""

    @property
    def message(self):
        raise RuntimeError("message on fire")

    @message.setter
    def message(self, _):
        pass


class Unreadable(rs.MemoryBucket):
    """A memory bucket whose list or delete_many answer what they are told to, or raise it."""

    def __init__(self, listed=None, raised=None, deleted=None):
        super().__init__()
        self.listed, self.raised, self.deleted = listed, raised, deleted

    def list(self, prefix):
        if self.raised is not None:
            raise self.raised
        return super().list(prefix) if self.listed is None else self.listed

    def delete_many(self, keys):
        return self.deleted(keys)


HISTORY = 'list ns/app/history/: list "ns/app/history/": '


@pytest.mark.parametrize("bucket,call,want", [
    (Unreadable(listed=[Keyless()]), "list_history", HISTORY + "key on fire"),
    (Unreadable(raised=Unprintable()), "list_history", HISTORY + "an object of type Unprintable, whose text cannot be read"),
    (Unreadable(raised=Muffled("x")), "list_history", HISTORY + "the bucket's answer could not be read: message on fire"),
    (Unreadable(raised=rs.Denied(7)), "list_history",
     HISTORY + "the bucket's answer could not be read: Denied with a message of type int, not str"),
    (Unreadable(deleted=lambda keys: Unsized([None] * len(keys))), "delete_release",
     r'.*: delete-many "ns/app/renders/sha256:[0-9a-f]{64}": the bucket\'s answer could not be read: length on fire'),
    (Unreadable(deleted=lambda keys: [Opaque() for _ in keys]), "delete_release",
     r'.*: delete-many "ns/app/renders/sha256:[0-9a-f]{64}": the bucket\'s answer could not be read: '
     r'the bucket\'s delete_many answered Opaque for "ns/app/renders/sha256:[0-9a-f]{64}", not None or a BucketError'),
    (Unreadable(deleted=lambda keys: [Muffled("x") for _ in keys]), "delete_release",
     r'.*: delete-many "ns/app/renders/sha256:[0-9a-f]{64}": the bucket\'s answer could not be read: message on fire'),
], ids=["a key property", "an exception's text", "a Denied's message", "a message not a str",
        "a delete_many answer's length", "a delete_many entry's type", "a delete_many entry's message"])
def test_a_bucket_answer_that_cannot_be_read_is_failed_not_raised_through(runtime, bucket, call, want):
    store = rs.RenderStore(bucket, runtime)
    ref = store.put_render(APP, [configmap("a")])
    with pytest.raises(rs.RenderStoreError) as e:
        getattr(store, call)(APP)
    assert e.value.kind == "bucket"
    if want.startswith("list "):
        assert e.value.message == want
    else:
        assert re.fullmatch(want, e.value.message, re.S), e.value.message
    assert e.value.message in str(e.value)
    # Nothing was lost to it, and the same runtime serves the next call.
    assert store.get_render(APP, ref) == runtime.canonical([configmap("a")])
    assert runtime.render_ref([b"{}"]).startswith("sha256:")


def test_gc_spares_a_blob_younger_than_the_grace_period(runtime):
    t0 = 1_700_000_000
    clock = [rs.SyncTime(t0)]
    bucket = Recording()
    bucket.clock = lambda: clock[0]
    store = rs.RenderStore(bucket, runtime)
    old = store.put_render(APP, [configmap("old")])
    clock[0] = rs.SyncTime(t0 + 500, 1)
    young = store.put_render(APP, [configmap("young")])
    live = store.put_render(APP, [configmap("live")])
    store.record_history(APP, render_ref=live, synced_at=rs.SyncTime(t0))
    key = lambda ref: f"ns/app/renders/{ref}"  # noqa: E731

    # At t0 + 1000 with 10 minutes of grace: `old` (1000 s) goes, `young` (500 s) stays.
    bucket.calls.clear()
    dry = store.gc(APP, 1, dry_run=True, now=rs.SyncTime(t0 + 1000), grace_seconds=600)
    assert bucket.calls == [("list", "ns/app/history/"), ("list", "ns/app/renders/")]
    assert (dry.delete_renders, dry.keep_renders, dry.recent_renders) == ([key(old)], [key(live)], [key(young)])
    # plan-gc has no modification times: no grace period, `young` would go.
    planned = runtime.plan_gc(APP, 1, [o.key for o in bucket.list("ns/app/history/")],
                              [o.key for o in bucket.list("ns/app/renders/")])
    assert planned.recent_renders == [] and planned.delete_renders == sorted([key(old), key(young)])
    bucket.calls.clear()
    assert store.gc(APP, 1, now=rs.SyncTime(t0 + 1000), grace_seconds=600) == dry
    assert [c for c in bucket.calls if c[0] == "delete"] == [("delete", key(old))]
    assert store.get_render(APP, young) == runtime.canonical([configmap("young")])

    # To the nanosecond: younger than 600 s is spared, 600 s is not; a blob modified
    # after `now` (a skewed clock) is spared too.
    at = lambda s, n=0: store.gc(APP, 1, dry_run=True, now=rs.SyncTime(s, n), grace_seconds=600)  # noqa: E731
    assert at(t0 + 1100, 0).recent_renders == [key(young)]
    assert at(t0 + 1100, 1).delete_renders == [key(young)]
    assert at(t0 + 400).recent_renders == [key(young)]

    # Grace 0: every unreferenced blob goes, whatever its age.
    bucket.calls.clear()
    plan = store.gc(APP, 1, now=rs.SyncTime(t0 + 500, 1), grace_seconds=0)
    assert (plan.delete_renders, plan.recent_renders) == ([key(young)], [])
    assert [c for c in bucket.calls if c[0] == "delete"] == [("delete", key(young))]
    assert sorted(bucket.blobs) == sorted([key(live), *(k for k in bucket.blobs if "/history/" in k)])
    with pytest.raises(TypeError):
        store.gc(APP, 1, grace_seconds=-1)


def test_the_package_computes_what_the_cli_computes(cli, runtime, tmp_path):
    # The library the package loads and the Rust CLI run the same rules: the CLI's
    # `ref` of a render is the package's renderRef, and the package is typed.
    objects = [configmap("b", {"z": "1", "a": "2"}), configmap("a")]
    files = write_objects(tmp_path / "render", objects)
    assert cli.text("ref", *files).strip() == runtime.render_ref(objects) == rs.render_ref(objects)
    assert (Path(rs.__file__).parent / "py.typed").is_file()


def test_history_pages_read_only_their_entries_newest_first(runtime):
    bucket = Recording()
    store = rs.RenderStore(bucket, runtime)
    refs = [store.put_render(APP, [configmap(f"cm{i}")]) for i in range(3)]
    for i, ref in enumerate(refs):
        store.record_history(APP, render_ref=ref, synced_at=f"2026-01-01T00:00:0{i}Z", summary=f"v{i}")
    bucket.calls.clear()
    page = store.list_history_page(APP, 2)
    assert [e.summary for e in page.entries] == ["v2", "v1"]
    assert [c for c, _ in bucket.calls].count("get") == 2
    assert page.next_before == page.entries[1].key
    last = store.list_history_page(APP, 2, page.next_before)
    assert [e.summary for e in last.entries] == ["v0"] and last.next_before is None
    assert store.list_history_page(APP, 10).entries == list(reversed(store.list_history(APP)))
    with pytest.raises(rs.RenderStoreError) as e:
        store.list_history_page(APP, 1, "ns/app/renders/x")
    assert e.value.kind == "invalid-input"
    with pytest.raises(TypeError):
        store.list_history_page(APP, 0)


class Batching(rs.MemoryBucket):
    """A memory bucket with a batch delete that records each batch, and keys it cannot
    delete."""

    def __init__(self, undeletable=()):
        super().__init__()
        self.batches = []
        self.undeletable = set(undeletable)

    def delete(self, key):
        raise AssertionError("a bucket with delete_many gets no single delete")

    def delete_many(self, keys):
        self.batches.append(list(keys))
        answers = []
        for key in keys:
            if key in self.undeletable:
                answers.append(rs.Failed(f"delete {key}: access denied"))
            else:
                super().delete(key)
                answers.append(None)
        return answers


def test_gc_and_delete_release_use_delete_many_1000_keys_a_call(runtime):
    bucket = Batching()
    store = rs.RenderStore(bucket, runtime)
    live = store.put_render(APP, [configmap("live")])
    store.record_history(APP, rs.NewEntry(live, rs.SyncTime(1_700_000_000, 0), ""))
    for i in range(1, 2501):
        bucket.put(f"ns/app/renders/sha256:{i:064x}", b"")
    plan = store.gc(APP, keep=1, grace_seconds=0)
    assert len(plan.delete_renders) == 2500
    assert [len(b) for b in bucket.batches] == [1000, 1000, 500]  # not 2,500 deletes
    assert [k for b in bucket.batches for k in b] == plan.delete_renders
    assert len(bucket.blobs) == 2

    bucket.batches.clear()
    for i in range(1200):
        bucket.put(f"ns/app/x/{i:04}", b"")
    assert store.delete_release(APP) == 1202
    assert [len(b) for b in bucket.batches] == [1, 1000, 201]  # the entry alone, first
    keys = [k for b in bucket.batches for k in b]
    assert keys == sorted(keys)
    assert bucket.blobs == {}


def test_a_failed_batch_names_every_key_and_stops(runtime):
    failing = {"ns/app/k/0003", "ns/app/k/0900"}
    bucket = Batching(failing)
    for i in range(1500):
        bucket.put(f"ns/app/k/{i:04}", b"")
    with pytest.raises(rs.RenderStoreError) as e:
        rs.RenderStore(bucket, runtime).delete_release(APP)
    assert e.value.kind == "bucket"
    assert "2 of 1000 keys could not be deleted" in e.value.message
    for key in failing:
        assert f"{key}: delete {key}: access denied" in e.value.message
    assert len(bucket.batches) == 1  # none after the failed one
    assert len(bucket.blobs) == 2 + 500


def test_a_delete_many_answer_is_read_key_by_key(runtime):
    # An absent key is deleted (NotFound is no failure of a delete); a key the batch
    # could not delete fails the operation, naming it.
    bucket = Batching()
    bucket.put("ns/app/a", b"")
    bucket.put("ns/app/b", b"")
    bucket.delete_many = lambda keys: [None if k == "ns/app/a" else rs.NotFound(k) for k in keys]
    assert rs.RenderStore(bucket, runtime).delete_release(APP) == 2
    bucket.delete_many = lambda keys: [rs.Denied(f"{k} is read-only") if k == "ns/app/b" else None for k in keys]
    with pytest.raises(rs.RenderStoreError) as e:
        rs.RenderStore(bucket, runtime).delete_release(APP)
    assert e.value.kind == "bucket"
    assert "1 of 2 keys could not be deleted: ns/app/b: denied: ns/app/b is read-only" in e.value.message
    # A batch that answers the wrong number of entries fails as a whole.
    bucket.delete_many = lambda keys: []
    with pytest.raises(rs.RenderStoreError) as e:
        rs.RenderStore(bucket, runtime).delete_release(APP)
    assert e.value.kind == "bucket" and "answered 0 entries for 2 keys" in e.value.message
    # A batch that raises is that call's failure.
    bucket.delete_many = Exploding(OSError("batch on fire"))._raise
    with pytest.raises(rs.RenderStoreError) as e:
        rs.RenderStore(bucket, runtime).delete_release(APP)
    assert e.value.kind == "bucket" and 'delete-many "ns/app/a": batch on fire' in e.value.message
    # A bucket without delete_many is asked a key at a time.
    single = Recording()
    single.put("ns/app/x", b"")
    single.put("ns/app/y", b"")
    assert rs.RenderStore(single, runtime).delete_release(APP) == 2
    assert [c for c in single.calls if c[0] == "delete"] == [("delete", "ns/app/x"), ("delete", "ns/app/y")]
    assert single.blobs == {}


def test_bytes_reach_the_bucket_as_the_component_wrote_them(runtime):
    """Objects go in as bytes, UTF-8 or not (an invalid byte inside a string becomes
    U+FFFD, as in Go); the bucket gets the canonical bytes and reads them back the same.
    Text and bytes give the same answers."""
    good = b'{"b":1,"a":"\xc3\xa9"}'
    bad = b'{"b":1,"a":"\xff"}'
    assert runtime.canonical([good]) == b'{"a":"\xc3\xa9","b":1}\n'
    assert runtime.canonical([bad]) == b'{"a":"\xef\xbf\xbd","b":1}\n'
    assert runtime.canonical([good, bad]) == b'{"a":"\xc3\xa9","b":1}\n{"a":"\xef\xbf\xbd","b":1}\n'
    assert runtime.canonical([good.decode()]) == runtime.canonical([good])
    assert runtime.yaml_canonical("a: 1\n") == runtime.yaml_canonical(b"a: 1\n") == b'{"a":1}\n'
    for objects in ([good], [bad]):
        bucket = Recording()
        store = rs.RenderStore(bucket, runtime)
        ref = store.put_render(APP, objects)
        want = runtime.canonical(objects)
        assert isinstance(want, bytes)
        assert bucket.blobs[f"ns/app/renders/{ref}"] == want
        assert store.get_render(APP, ref) == want
