"""The package on the Rust host library: stores opened from URLs, Python buckets served
through the C ABI's callbacks, errors from a Python bucket, and one store called from
many threads at once."""

from __future__ import annotations

import gc
import threading
import uuid
import weakref
from pathlib import Path
from typing import Callable, List, Optional

import pytest

import render_store as rs
from conftest import s3_store

CM = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s"},"data":{"k":"%s"}}'


def objects(name: str, value: str = "v") -> List[bytes]:
    return [CM % (name.encode(), value.encode())]


def test_an_empty_url_is_no_store_and_a_bad_one_an_error_of_kind_url(tmp_path: Path) -> None:
    assert rs.open("") is None
    assert rs.open("   ") is None
    for url, needle in [
        ("ftp://x", "ftp"),
        ("file://relative/path", "file:///"),
        (f"file://{tmp_path}/missing", "create_dir=true"),
        ("s3://bucket?colour=red", "colour"),
    ]:
        with pytest.raises(rs.RenderStoreError) as e:
            rs.open(url)
        assert e.value.kind == "url", (url, e.value)
        assert needle in str(e.value), (url, str(e.value))


def test_a_mem_store_and_a_file_store_from_urls(tmp_path: Path) -> None:
    for url in ["mem://", f"file://{tmp_path}/store?create_dir=true"]:
        with rs.open(url) as store:
            assert store is not None
            ref = store.put_render("ns/app", objects("a"))
            assert ref == rs.render_ref(objects("a"))
            assert store.record_history("ns/app", render_ref=ref, synced_at="2026-01-01T00:00:00Z")
            assert [e.render_ref for e in store.list_history("ns/app")] == [ref]
            keys = [o.key for o in store.bucket.list("ns/app/")]
            assert keys[0].startswith("ns/app/history/") and keys[1] == f"ns/app/renders/{ref}"
    # A closed store says so instead of crashing.
    with pytest.raises(ValueError, match="closed"):
        store.list_history("ns/app")


def test_a_dropped_store_is_freed_at_once_and_its_bucket_keeps_it_open(tmp_path: Path) -> None:
    # No reference cycle: the store goes with its last reference, not at the next
    # garbage collection, and its native store with it.
    gc.disable()
    try:
        for url in ("mem://", tmp_path.as_uri()):
            store = rs.open(url)
            assert store is not None
            store.put_render("ns/app", [b'{"kind":"ConfigMap"}'])
            gone = weakref.ref(store)
            del store
            assert gone() is None, url
        # A bucket taken from a store keeps that store open while it is used.
        bucket = rs.open("mem://").bucket  # type: ignore[union-attr]
        bucket.put("ns/app/a", b"1")
        assert bucket.get("ns/app/a") == b"1"
    finally:
        gc.enable()


def test_the_s3_store_of_the_emulator() -> None:
    store = s3_store()
    release = f"py/{uuid.uuid4().hex[:12]}"
    ref = store.put_render(release, objects("s3"))
    store.record_history(release, render_ref=ref, synced_at="2026-01-01T00:00:00Z", summary="s3")
    assert store.get_render(release, ref) == rs.canonical(objects("s3"))
    assert [e.summary for e in store.list_history(release)] == ["s3"]
    assert store.delete_release(release) == 2
    assert store.bucket.list(f"{release}/") == []


class Raising(rs.MemoryBucket):
    """A bucket whose `call` raises `error` for keys under `where`."""

    def __init__(self, call: str, error: BaseException, where: str = ""):
        super().__init__()
        self.call, self.error, self.where = call, error, where

    def _maybe(self, call: str, key: str) -> None:
        if call == self.call and key.startswith(self.where):
            raise self.error

    def get(self, key: str) -> bytes:
        self._maybe("get", key)
        return super().get(key)

    def put(self, key: str, value: bytes) -> None:
        self._maybe("put", key)
        super().put(key, value)

    def exists(self, key: str) -> Optional[int]:
        self._maybe("exists", key)
        return super().exists(key)

    def list(self, prefix: str) -> List[rs.ObjectMeta]:
        self._maybe("list", prefix)
        return super().list(prefix)


@pytest.mark.parametrize("call", ["put", "exists", "list"])
def test_an_exception_in_a_python_bucket_fails_that_call(call: str) -> None:
    bucket = Raising(call, ZeroDivisionError("the disk divided by zero"))
    store = rs.RenderStore(bucket)
    with pytest.raises(rs.RenderStoreError) as e:
        if call == "list":
            store.list_history("ns/app")
        else:
            store.put_render("ns/app", objects("a"))
    assert e.value.kind == "bucket", e.value
    # The call, its key and the exception's words reach the error.
    assert f'{call} "ns/app/' in str(e.value) and "the disk divided by zero" in str(e.value), str(e.value)
    if call != "list":
        assert bucket.blobs == {}, "nothing is stored when a call failed"


def test_a_denied_or_failed_bucket_error_keeps_its_words_and_gc_deletes_nothing() -> None:
    bucket = rs.MemoryBucket()
    store = rs.RenderStore(bucket)
    ref = store.put_render("ns/app", objects("a"))
    store.record_history("ns/app", render_ref=ref, synced_at="2026-01-01T00:00:00Z")
    before = dict(bucket.blobs)
    failing = Raising("list", rs.Failed("the backend is down"), where="ns/app/history")
    failing.blobs = dict(before)
    with pytest.raises(rs.RenderStoreError) as e:
        rs.RenderStore(failing).gc("ns/app", 1, grace_seconds=0)
    assert "the backend is down" in str(e.value)
    assert failing.blobs == before, "GC stops when a listing fails"
    denied = Raising("put", rs.Denied("this bucket is read-only"))
    with pytest.raises(rs.RenderStoreError) as e:
        rs.RenderStore(denied).put_render("ns/app", objects("b"))
    assert "this bucket is read-only" in str(e.value)


def on_threads(count: int, work: Callable[[int], None]) -> None:
    """Runs ``work(n)`` on ``count`` threads at once (n from 0) and fails with what any of
    them raised, on this thread."""
    errors: List[BaseException] = []
    start = threading.Barrier(count)

    def run(n: int) -> None:
        try:
            start.wait()
            work(n)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_eight_threads_call_one_store_at_once() -> None:
    bucket = rs.MemoryBucket()
    store = rs.RenderStore(bucket)

    def work(n: int) -> None:
        release = f"ns/app{n}"
        for i in range(10):
            ref = store.put_render(release, objects(f"o{n}", str(i)))
            store.record_history(release, render_ref=ref,
                                 synced_at=rs.SyncTime(1_767_225_600 + i, 0))
            assert store.get_render(release, ref) == rs.canonical(objects(f"o{n}", str(i)))
        plan = store.gc(release, 3, grace_seconds=0)
        assert len(plan.keep_history) == 3 and len(plan.delete_history) == 7

    on_threads(8, work)
    for n in range(8):
        assert len(store.list_history(f"ns/app{n}")) == 3


def test_large_results_are_copies_whatever_the_sizes_and_threads() -> None:
    # Results from 64 KiB to 8 MiB are copied out through a buffer each thread keeps:
    # each must stay what it was when later, smaller and larger calls reuse that buffer,
    # on this thread and on others at once.
    from render_store import _lib

    store = rs.open("mem://")
    assert store is not None
    sizes = [_lib._SCRATCH_FROM - 200, _lib._SCRATCH_FROM + 10, 300_000, 100_000,
             _lib._SCRATCH_UP_TO + 10]
    renders = {}
    for i, size in enumerate(sizes):
        objs = objects(f"s{i}", chr(ord("a") + i) * size)
        renders[store.put_render("ns/app", objs)] = rs.canonical(objs)
    got = {ref: store.get_render("ns/app", ref) for ref in renders}
    assert got == renders

    def work(n: int) -> None:
        for ref in (list(renders) if n % 2 else list(renders)[::-1]):
            assert store.get_render("ns/app", ref) == renders[ref]

    on_threads(4, work)
    assert got == renders


def test_a_text_result_with_a_nul_inside_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # Text buffers are read up to the NUL the library puts after them; one with a NUL
    # inside is read by its length instead. The buffer here is Python's, so the
    # library's free is replaced by a recorder.
    import ctypes
    from render_store import _lib

    freed = []
    monkeypatch.setattr(_lib, "lib", type("Lib", (), {"rs_buf_free": staticmethod(freed.append)}))
    memory = ctypes.create_string_buffer(b"ab\0cd\xc3\xa9")
    buf = _lib.Buf()
    buf.data = ctypes.cast(memory, ctypes.POINTER(ctypes.c_uint8))
    buf.len = 7
    assert _lib.take_text(buf) == "ab\0cd\u00e9"
    buf.len = 2
    assert _lib.take_text(buf) == "ab"
    assert len(freed) == 2


def test_a_python_store_is_read_by_the_cli_and_the_reverse(cli, tmp_path: Path) -> None:
    root = tmp_path / "store"
    with rs.open(f"file://{root}?create_dir=true") as store:
        ref = store.put_render("ns/app", objects("py"))
        store.record_history("ns/app", render_ref=ref, synced_at="2026-01-01T00:00:00Z", summary="python")
    header, row = cli.text("history", "ns/app", "-o", "wide", store=root).splitlines()
    assert header.split() == ["ENTRY", "SYNCED", "AGE", "RENDER", "SIZE", "SUMMARY"]
    place, synced, _age, render_ref, _size, summary = row.split()
    assert (place, synced, render_ref, summary) == ("@0", "2026-01-01T00:00:00Z", ref, "python")
    (tmp_path / "cli.json").write_bytes(objects("cli")[0])
    cli_ref = cli.text("put", "ns/app", str(tmp_path / "cli.json"), store=root).strip()
    cli.run("record", "ns/app", cli_ref, "--summary", "cli", "--synced-at", "2026-01-02T00:00:00Z", store=root)
    with rs.open(f"file://{root}") as store:
        assert [e.summary for e in store.list_history("ns/app")] == ["python", "cli"]
        assert store.get_render("ns/app", cli_ref) == rs.canonical(objects("cli"))


def test_the_controller_rules_come_from_the_host() -> None:
    assert rs.effective_keep_history(None) == 10
    assert rs.effective_keep_history(0) == 0
    assert rs.effective_keep_history(-3) == 0
    assert rs.effective_keep_history(4) == 4
    assert rs.history_count(None, 4) == 0
    with rs.open("mem://") as store:
        assert rs.history_count(store, None) == 10
    a, b = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    assert rs.protected_refs(b, a, None, b, "") == [a, b]


def test_a_history_is_summarized_from_its_keys_alone() -> None:
    bucket = rs.MemoryBucket()
    store = rs.RenderStore(bucket)
    refs = [store.put_render("ns/app", objects(f"s{i}")) for i in range(3)]
    for i, ref in enumerate(refs):
        store.record_history("ns/app", render_ref=ref, synced_at=rs.SyncTime(1_767_225_600 + i, 5))
    keys = [o.key for o in store.bucket.list("ns/app/history/")] + ["ns/app/history/notes.txt"]
    summary = rs.summarize_history("ns/app", keys)
    assert summary.entries == 3
    assert summary.newest == rs.HistoryKey(rs.SyncTime(1_767_225_602, 5), refs[2])
    assert rs.summarize_history("ns/app", []) == rs.HistorySummary(0, None)
